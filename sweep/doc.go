// Package sweep runs the points of a sweep: an errgroup worker pool of in-process simulations
// with a concurrency limit, cancellation, a per-point timeout, failure and panic isolation,
// resume from the journal, and progress reporting. It formats no output file: rows and the
// journal belong to package results, points to package grid.
//
// Start with Run. Durability: every finished point is appended to the journal
// (results.Journal, points.jsonl) and synced before the next is reported, so a killed sweep
// (Ctrl-C, SIGTERM or kill -9) loses only the points in flight; rerunning with the same output
// directory skips the finished ones. Determinism: each point is a pure function of its config
// (workloads are shared read-only), and Run returns rows in point order, so any worker count
// gives the same rows apart from the host-time columns.
package sweep
