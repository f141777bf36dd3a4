// Package calibrate compares servesweep's `default` timing model with measured GPU deployments
// and fits its efficiency factors.
//
// Start with Validate: it reads rows of a measured-deployments CSV (ReadCSV, the format of
// measured_dense_calibration.csv), turns each into a config.Config (PlanRow: the row's model, GPU,
// precision and worker shape under a synthetic ISL/OSL closed-loop load), runs it with sim.Run
// and reports predicted against measured mean TTFT and mean TPOT per row, per (model, system,
// backend) group and overall. Fit tunes timing.Efficiency and the front-end TTFT share on the
// same rows by coordinate descent; the fitted numbers live in timing.CalibratedEfficiency and
// CalibratedFrontendMs with their provenance.
//
// How a benchmark is emulated (Validate): the measured means come from a closed-loop client that
// sends BenchmarkRequestsPerConcurrency × concurrency requests, the first `concurrency` of them
// at once. A row is therefore simulated twice: a burst run of one wave starting together, and a
// steady-state run whose first wave is spread over one burst-wave lifetime (requests of equal
// length otherwise stay in lock-step waves in a deterministic simulator) and left out. The
// predicted means weight the burst wave by 1/BenchmarkRequestsPerConcurrency.
package calibrate
