// Package engine is one rank scheduler of a serving worker over a KV block pool with chained-hash
// prefix caching (engine-internals.md §1.2–1.3, §2), in one of three styles (Style): vLLM's
// continuous batching (running requests first, then FCFS admission with head-of-line blocking,
// chunked prefill, LIFO preemption with recompute), TensorRT-LLM's (the same order, block-aligned
// context chunks, the guaranteed_no_evict capacity policy) and SGLang's (prefill-first passes,
// conservative admission, retraction). It knows nothing about routing or other workers.
//
// Start with Engine (Schedule forms a pass and prices it; Complete ends it) and BlockPool.
// Requests live in a dense []Request shared with the caller and are referred to by index.
package engine
