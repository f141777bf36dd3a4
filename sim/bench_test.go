package sim

import (
	"context"
	"os"
	"testing"

	"github.com/servesweep/servesweep/sim/config"
)

// speedConfig is the reference simulator's speed workload (engine-internals.md §9.1): synthetic
// ISL 1024 / OSL 128, concurrency 64, max_batched_tokens 8192, max_sequences 256, KV capacity
// 1,048,576 tokens (16,384 blocks of 64), polynomial timing, one worker.
func speedConfig(requests int) *config.Config {
	cfg := testConfig(1024, 128, requests, 64, 16384)
	role := cfg.Engine.Workers.Aggregated
	role.KVCache.BlockSize = 64
	role.Timing = config.Timing{Type: config.TimingPolynomial}
	return cfg
}

// BenchmarkSpeedWorkload runs the reference speed workload with 131,072 requests per iteration and
// reports simulated requests and output tokens per host second. The workload (and its block
// hashes) is built once outside the timed loop, as a sweep shares it between points.
func BenchmarkSpeedWorkload(b *testing.B) {
	const requests = 131072
	benchRun(b, speedConfig(requests), requests)
}

// BenchmarkSpeedWorkloadBackends is the speed workload on each backend's scheduler style with its
// default KV block size (SGLang's page size 1 runs in 16-token blocks), same pool in tokens.
func BenchmarkSpeedWorkloadBackends(b *testing.B) {
	const requests = 131072
	for _, c := range []struct {
		backend   string
		blockSize int
	}{{"vllm", 64}, {"trtllm", 32}, {"sglang", 1}} {
		b.Run(c.backend, func(b *testing.B) {
			cfg := speedConfig(requests)
			cfg.Engine.Backend = c.backend
			role := cfg.Engine.Workers.Aggregated
			role.Scheduler.CapacityPolicy = config.CapacityGuaranteedNoEvict
			role.KVCache.BlockSize = c.blockSize
			role.KVCache.Capacity.Blocks = 16384 * 64 / c.blockSize
			benchRun(b, cfg, requests)
		})
	}
}

// BenchmarkSpeedWorkloadCold is BenchmarkSpeedWorkload including workload construction and block
// hashing, as a one-off `servesweep predict` pays it.
func BenchmarkSpeedWorkloadCold(b *testing.B) {
	const requests = 131072
	cfg := speedConfig(requests)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := Run(context.Background(), cfg, Options{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(requests*b.N)/b.Elapsed().Seconds(), "requests/s")
}

// BenchmarkDisaggregated is the reference's pd-vllm case (engine-internals.md §9.1): the speed
// workload with 32,768 requests on 1 prefill and 2 decode workers, KV transfer at 400 GB/s,
// destination_missing.
func BenchmarkDisaggregated(b *testing.B) {
	const requests = 32768
	cfg := speedConfig(requests)
	agg := cfg.Engine.Workers.Aggregated
	pre, dec := *agg, *agg
	pre.Scheduler.MaxSequences = 1
	dec.Parallelism.Replicas = 2
	cfg.Engine.Mode = config.ModeDisaggregated
	cfg.Engine.Workers = config.Workers{Prefill: &pre, Decode: &dec}
	cfg.Engine.KVTransfer = &config.KVTransfer{BytesPerToken: 131072, BandwidthGBps: f64(400), TimingMode: "destination_missing"}
	benchRun(b, cfg, requests)
}

// BenchmarkKVRouterTrace replays the Mooncake conversation trace (12,031 requests, one hour) on 4
// aggregated workers with kv_router, as the seed's routing comparison does.
func BenchmarkKVRouterTrace(b *testing.B) {
	const trace = "../../shared/data/traces/mooncake_conversation_trace.jsonl"
	if _, err := os.Stat(trace); err != nil {
		b.Skipf("Mooncake trace not available at %s: %v", trace, err)
	}
	cfg := testConfig(0, 0, 0, 1, 32768)
	cfg.Traffic = config.Traffic{
		Source: config.Source{Type: config.SourceTrace, Format: "mooncake", Paths: []string{trace}, BlockSize: 512},
		Load:   config.Load{Type: config.LoadTraceTimestamps, Speedup: 1},
		Stop:   config.Stop{MaxVirtualTimeSeconds: 3600},
	}
	cfg.Engine.ContextLength = 8192
	role := cfg.Engine.Workers.Aggregated
	role.Parallelism.Replicas = 4
	role.KVCache.BlockSize = 64
	role.Timing = config.Timing{Type: config.TimingPolynomial}
	cfg.Router.Policy = config.PolicyKVRouter
	benchRun(b, cfg, 0)
}

// benchRun times Run on a prebuilt workload and reports requests and output tokens per host second.
func benchRun(b *testing.B, cfg *config.Config, want int) {
	wl, err := BuildWorkload(cfg)
	if err != nil {
		b.Fatal(err)
	}
	for _, r := range cfg.Engine.Mode.Roles() {
		wl.Blocks(rankBlockSize(cfg.Engine.Backend, cfg.Engine.Workers.Role(r)), cfg.Engine.ContextLength)
	}
	b.ReportAllocs()
	b.ResetTimer()
	var reqs, out int64
	for i := 0; i < b.N; i++ {
		res, err := Run(context.Background(), cfg, Options{Workload: wl})
		if err != nil {
			b.Fatal(err)
		}
		if want > 0 && res.Summary.CompletedRequests != int64(want) {
			b.Fatalf("completed %d, want %d", res.Summary.CompletedRequests, want)
		}
		reqs += res.Summary.NumRequests
		out += res.Summary.TotalOutputTokens
		res.Release() // as a sweep worker does between points
	}
	sec := b.Elapsed().Seconds()
	b.ReportMetric(float64(reqs)/sec, "requests/s")
	b.ReportMetric(float64(out)/sec, "output_tokens/s")
}

// BenchmarkTraceReplay is examples/trace-replay.yaml: the Mooncake conversation trace (12,031
// requests, prompts of about 12k tokens) on 4 aggregated workers with kv_router and roofline
// timing, context length 131,072, KV capacity from the GPU's memory. The workload is built once.
func BenchmarkTraceReplay(b *testing.B) {
	const trace = "../../shared/data/traces/mooncake_conversation_trace.jsonl"
	if _, err := os.Stat(trace); err != nil {
		b.Skipf("Mooncake trace not available at %s: %v", trace, err)
	}
	cfg, err := config.LoadFile("../examples/trace-replay.yaml", []string{"traffic.source.paths=[" + trace + "]"})
	if err != nil {
		b.Fatal(err)
	}
	benchRun(b, cfg, 12031)
}
