// Package examples holds servesweep's runnable configs: prediction YAMLs for `servesweep predict`
// and sweep specs for `servesweep sweep`. It embeds the default sweep spec, which `servesweep
// sweep` runs when no -c is given. chat-trace.jsonl, the Mooncake-format trace the examples
// replay, is a file of the repository written by tracegen (not embedded: no embedded config reads
// it).
package examples

//go:generate go run ./tracegen -o chat-trace.jsonl

import _ "embed"

// DefaultSweepName is the path of the built-in sweep spec in the repository; error messages
// about the embedded spec name it.
const DefaultSweepName = "examples/default-sweep.yaml"

// DefaultSweep returns the built-in sweep spec (examples/default-sweep.yaml): Llama-3.1-8B on up
// to 8 GPUs, H100 against H200, BF16 against FP8 weights, aggregated against disaggregated, TP and
// replicas, round_robin against kv_router, each deployment's capacity within an SLA (each
// request's TTFT <= 500 ms and mean inter-token gap <= 50 ms for 99 % of requests, and the run's
// p99 over every inter-token gap <= 50 ms) and its cost per million output tokens at example
// prices.
func DefaultSweep() []byte { return []byte(defaultSweep) }

//go:embed default-sweep.yaml
var defaultSweep string
