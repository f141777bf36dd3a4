package main

import "github.com/spf13/cobra"

// helpExamples are the Examples sections of the commands' help, by command name. Each line that
// starts with "servesweep" runs as shown from the repository root, in order
// (TestHelpExamplesRun runs them, with /tmp/ redirected to a temporary directory); a line that
// reads ../shared/data needs the project's measured data beside the repository.
var helpExamples = map[string]string{
	"predict": `  # The seed's synthetic workload: 100 requests on two Llama-3.1-8B workers on H200 (its fixed KV
  # pool, polynomial timing and single request length draw notes on stderr that say what they mean)
  servesweep predict --stack dynamo -c examples/synthetic.yaml --output-dir /tmp/servesweep-predict --overwrite
  # The same on four workers behind the KV-aware router, as one JSON object
  servesweep predict --stack dynamo -c examples/synthetic.yaml --set router.policy=kv_router \
    --set engine.workers.aggregated.parallelism.replicas=4 --output-dir /tmp/servesweep-kv --overwrite --format json`,

	"sweep": `  # The built-in sweep's grid (examples/default-sweep.yaml) without simulating it
  servesweep sweep --dry-run
  # A small grid: examples/sweep-small.yaml's three concurrencies × two GPUs × two tensor-parallel
  # sizes (12 points), each timed from its GPU and the model
  servesweep sweep -c examples/sweep-small.yaml --set 'engine.hardware={choices: [h100_sxm, h200_sxm]}' \
    --set 'engine.workers.aggregated.parallelism.tensor={choices: [1, 2]}' --output-dir /tmp/servesweep-tp
  # Then: the rows as CSV, and the front's first recommendation as a vLLM launch script
  servesweep rows --results /tmp/servesweep-tp --front --columns point_id,hardware,agg_tensor,output_throughput_per_gpu_tok_s
  servesweep export -c /tmp/servesweep-tp/recommendations/0001.yaml --target vllm --output-dir /tmp/servesweep-tp-vllm --overwrite`,

	"merge": `  # Two shards of one sweep into one directory (on two machines, or one after the other), then merged
  servesweep sweep -c examples/sweep-small.yaml --shard 0/2 --output-dir /tmp/servesweep-sharded
  servesweep sweep -c examples/sweep-small.yaml --shard 1/2 --output-dir /tmp/servesweep-sharded
  servesweep merge --results /tmp/servesweep-sharded`,

	"report": `  # examples/sweep-small.yaml's three concurrencies
  servesweep sweep -c examples/sweep-small.yaml --output-dir /tmp/servesweep-load
  # The same rows ranked by throughput against p99 end-to-end latency, into another directory
  servesweep report --results /tmp/servesweep-load --output-dir /tmp/servesweep-load-e2e \
    --objective max:output_throughput_tok_s --objective min:p99_e2e_latency_ms`,

	"validate": `  # Score a deployment against an AIPerf run of it (the repository's test run at concurrency 8;
  # the seed's polynomial timing is warned of: it scores that curve, not servesweep's timing model)
  servesweep validate --aiperf sim/calibrate/aiperf/testdata/runs/c8 -c examples/synthetic.yaml
  # The config that simulates line 2 of a measured-deployments CSV (the project's ../shared/data)
  servesweep validate --measured ../shared/data/silicon/measured_dense_calibration.csv --explain 2`,

	"export": `  # The seed's workload and workers, with the KV pool derived from the GPU's memory (its fixed pool of
  # 32,768 blocks, 256 GiB a GPU, is more than an H200 holds: export refuses it)
  servesweep export -c examples/synthetic.yaml --set 'engine.workers.aggregated.kv_cache.capacity={type: default, memory_fraction: 0.9}' \
    --target vllm --output-dir /tmp/servesweep-export-vllm --overwrite
  servesweep export -c examples/synthetic.yaml --set 'engine.workers.aggregated.kv_cache.capacity={type: default, memory_fraction: 0.9}' \
    --target dynamo --name llama-8b --output-dir /tmp/servesweep-export-dynamo --overwrite`,

	"version": `  servesweep version
  servesweep --version`,

	"list": `  servesweep list models
  servesweep list hardware --format json
  servesweep list metrics
  servesweep list fields`,

	"rows": `  servesweep sweep -c examples/sweep-small.yaml --output-dir /tmp/servesweep-load
  servesweep rows --results /tmp/servesweep-load --columns point_id,load_concurrency,output_throughput_tok_s,p99_ttft_ms
  servesweep rows --results /tmp/servesweep-load --front --format jsonl`,
}

// addExamples sets the Example of each of root's commands that helpExamples has one for.
func addExamples(root *cobra.Command) {
	for _, c := range root.Commands() {
		if ex, ok := helpExamples[c.Name()]; ok {
			c.Example = ex
		}
	}
}
