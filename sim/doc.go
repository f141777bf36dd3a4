// Package sim simulates one LLM serving deployment serving one workload, on a deterministic
// virtual clock in milliseconds, and reports DynoSim-compatible metrics.
//
// Start with config.Config (the prediction YAML, dynosim-spec.md §3) and config.Decode or config.LoadFile, which parse
// it strictly, apply --set overrides and defaults, and validate every field. BuildWorkload turns
// the traffic section into sessions and requests (package traffic); Run simulates them against the
// engine section and returns a Result whose Summary is prediction.json; RequestRecords gives
// requests.jsonl.
//
// Run composes the subpackages: per worker role a pool of logical workers, each made of
// attention-DP rank schedulers (package engine: vLLM-style continuous batching over a KV block
// pool with prefix caching), priced by a forward-pass time model (package timing) and fed by a
// router (package router). In disaggregated mode a prefill pool hands each request's KV to a
// decode pool after a modeled transfer. Package metrics turns the finished requests into the
// summary.
//
// Invariants, each with a test: every request ends in exactly one terminal state; completed
// requests emit exactly their (clipped) output tokens; no KV block is held once no request is
// live; the virtual clock never goes backwards; the same config gives the same result.
package sim
