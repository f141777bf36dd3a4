// Package engine is one rank scheduler of a serving worker: a vLLM-style continuous-batching
// scheduler (running requests first, then FCFS admission with head-of-line blocking, chunked
// prefill, LIFO preemption with recompute) over a KV block pool with chained-hash prefix caching
// (engine-internals.md §1.2, §2). It knows nothing about routing or other workers.
//
// Start with Engine (Schedule forms a pass and prices it; Complete ends it) and BlockPool.
// Requests live in a dense []Request shared with the caller and are referred to by index.
package engine
