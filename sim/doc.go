// Package sim simulates one LLM serving deployment serving one workload, on a deterministic
// virtual clock in milliseconds, and reports DynoSim-compatible metrics.
//
// The input is a config.Config (package sim/config parses, defaults and validates the prediction
// YAML). BuildWorkload turns its traffic section into sessions and requests (package traffic);
// Run simulates them against the engine section and returns a Result whose Summary is
// prediction.json; RequestRecords gives requests.jsonl.
//
// Run composes the subpackages. Each worker role (aggregated, or prefill and decode) is a set of
// logical workers, each made of attention-DP rank schedulers (package engine: vLLM-style
// continuous batching over a KV block pool with prefix caching), priced by a forward-pass time
// model (package timing) and fed by a Router (package router). In disaggregated mode the prefill
// role hands each request's KV to the decode role after a modeled transfer. Package metrics turns
// the finished requests into the summary. The files follow the concepts: run.go (Run, Result),
// loop.go (the event loop, arrivals, dispatch, passes), events.go (the event queue), roles.go
// (worker roles and their routers), disagg.go (hand-off and KV transfer), workload.go (traffic to
// requests), deployment.go (model, GPU, timing and KV capacity of a role), records.go
// (requests.jsonl).
//
// Invariants, each with a test: every request ends in exactly one terminal state; completed
// requests emit exactly their (clipped) output tokens; no KV block is held once no request is
// live; the virtual clock never goes backwards; the same config gives the same result.
package sim
