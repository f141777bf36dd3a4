// Package examples holds servesweep's runnable configs: prediction YAMLs for `servesweep predict`
// and sweep specs for `servesweep sweep`. It embeds the default sweep spec, which `servesweep
// sweep` runs when no -c is given.
package examples

import _ "embed"

// DefaultSweepName is the path of the built-in sweep spec in the repository; error messages
// about the embedded spec name it.
const DefaultSweepName = "examples/default-sweep.yaml"

// DefaultSweep returns the built-in sweep spec (examples/default-sweep.yaml): Llama-3.1-8B on up
// to 8 H200 GPUs, a prefix-heavy synthetic-session workload, aggregated vs disaggregated, TP
// 1/2/4/8, replicas within the budget, round_robin vs kv_router.
func DefaultSweep() []byte { return []byte(defaultSweep) }

//go:embed default-sweep.yaml
var defaultSweep string
