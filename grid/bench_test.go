package grid

import (
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/servesweep/servesweep/results"
)

// cpuTime is the process's user + system CPU time so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// scaleSpec is the grid of issue 43: Llama-3.1-8B, replicas 1–100 × max_sequences 1–1,000 (range
// domains, 100,000 points), fixed timing, 2 requests a point, a budget of 100 GPUs.
const scaleSpec = `traffic:
  source: {type: synthetic, input_tokens: 128, output_tokens: 16}
  load: {type: concurrency, concurrency: 4}
  stop: {requests: 2}
engine:
  mode: aggregated
  model: meta-llama/Meta-Llama-3.1-8B-Instruct
  hardware: h200_sxm
  context_length: 8192
  workers:
    aggregated:
      parallelism: {replicas: {range: {min: 1, max: 100, step: 1}}, tensor: 1}
      scheduler: {max_batched_tokens: 8192, max_sequences: {range: {min: 1, max: 1000, step: 1}}}
      kv_cache: {block_size: 16, capacity: {type: fixed, blocks: 10000}}
      timing: {type: fixed, prefill_ms: 10, decode_ms: 5}
router:
  policy: round_robin
optimization:
  target: pareto
  objectives:
    - {metric: output_throughput_tok_s, direction: maximize}
    - {metric: p99_ttft_ms, direction: minimize}
  constraints: {max_candidate_gpus: 100}
`

func parseScaleSpec(b *testing.B, sets ...string) *Spec {
	b.Helper()
	s, err := Parse([]byte(scaleSpec), "scale.yaml", sets, nil, results.CheckMetric)
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// BenchmarkExpand expands the 100,000-point grid of scaleSpec, and the 1,000,000-point grid of
// max_sequences 1 to 10,000 (parse included, no point's YAML written) and hashes it, as
// `servesweep sweep --dry-run` does; reports points/s and the process's CPU seconds per expansion
// (every core's, the collector's included).
func BenchmarkExpand(b *testing.B) {
	for _, n := range []int{100_000, 1_000_000} {
		var sets []string
		if n == 1_000_000 {
			sets = []string{"engine.workers.aggregated.scheduler.max_sequences={range: {min: 1, max: 10000, step: 1}}"}
		}
		b.Run("points="+strconv.Itoa(n), func(b *testing.B) {
			cpu := cpuTime(b)
			for range b.N {
				x, err := parseScaleSpec(b, sets...).ExpandLazy()
				if err != nil {
					b.Fatal(err)
				}
				if len(x.Points) != n {
					b.Fatalf("%d points, want %d", len(x.Points), n)
				}
				_ = x.SpecHash()
			}
			b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "points/s")
			b.ReportMetric((cpuTime(b)-cpu).Seconds()/float64(b.N), "cpu-s/op")
		})
	}
}

// BenchmarkShard selects one shard of scaleSpec's grid as `servesweep sweep --shard I/N` does:
// parse, expand, the shard's points and their YAML, the spec hash and every shard's size.
// Reports the grid's points/s and the process's CPU seconds per shard.
func BenchmarkShard(b *testing.B) {
	for _, count := range []int{20, 1000} {
		b.Run("of="+strconv.Itoa(count), func(b *testing.B) {
			cpu := cpuTime(b)
			for range b.N {
				x, err := parseScaleSpec(b).ExpandLazy()
				if err != nil {
					b.Fatal(err)
				}
				points := x.ShardPoints(Shard{Index: 1, Count: count})
				if len(points) == 0 {
					b.Fatal("empty shard")
				}
				if err := x.Materialize(points); err != nil {
					b.Fatal(err)
				}
				_, _ = x.SpecHash(), x.ShardSizes(count)
			}
			b.ReportMetric(float64(100_000*b.N)/b.Elapsed().Seconds(), "points/s")
			b.ReportMetric((cpuTime(b)-cpu).Seconds()/float64(b.N), "cpu-s/op")
		})
	}
}
