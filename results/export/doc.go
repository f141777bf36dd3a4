// Package export turns one concrete prediction config (a recommendation of servesweep sweep, or
// any config servesweep predict runs) into what it takes to run that deployment for real and to
// measure it the way it was simulated:
//
//   - for vLLM, SGLang and TensorRT-LLM, a launch script with one command per worker role whose
//     flags carry the simulated choices (parallel sizes, batch limits, KV block size, prefix
//     caching, chunked prefill, KV-cache and weight precision, context length); TensorRT-LLM's
//     choices that have no trtllm-serve flag go to an LLM-API options YAML per role;
//   - for Dynamo, a Kubernetes manifest (a DynamoGraphDeployment) of the aggregated or
//     disaggregated graph: the frontend with its router mode and the worker roles with their
//     replicas, GPU counts and engine arguments;
//   - for every target, aiperf.sh: the `aiperf profile` command that replays the simulated
//     workload (synthetic lengths, sessions, mixture or trace; load type and intensity; request
//     count).
//
// A choice a target cannot express is an error (a config.Errors naming the field and what the
// target accepts), never dropped. Versions.go says which engine versions the flag names follow.
// Start reading at Export.
package export
