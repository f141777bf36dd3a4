package sim

import (
	"context"
	"testing"
)

// speedConfig is the reference simulator's speed workload (engine-internals.md §9.1): synthetic
// ISL 1024 / OSL 128, concurrency 64, max_batched_tokens 8192, max_sequences 256, KV capacity
// 1,048,576 tokens (16,384 blocks of 64), polynomial timing, one worker.
func speedConfig(requests int) *Config {
	cfg := testConfig(1024, 128, requests, 64, 16384)
	role := cfg.Engine.Workers.Aggregated
	role.KVCache.BlockSize = 64
	role.Timing = Timing{Type: TimingPolynomial}
	return cfg
}

// BenchmarkSpeedWorkload runs the reference speed workload with 131,072 requests per iteration and
// reports simulated requests and output tokens per host second. The workload (and its block
// hashes) is built once outside the timed loop, as a sweep shares it between points.
func BenchmarkSpeedWorkload(b *testing.B) {
	const requests = 131072
	cfg := speedConfig(requests)
	wl, err := BuildWorkload(cfg)
	if err != nil {
		b.Fatal(err)
	}
	wl.BlockHashes(64)
	b.ReportAllocs()
	b.ResetTimer()
	var out int64
	for i := 0; i < b.N; i++ {
		res, err := Run(context.Background(), cfg, Options{Workload: wl})
		if err != nil {
			b.Fatal(err)
		}
		if res.Summary.CompletedRequests != requests {
			b.Fatalf("completed %d", res.Summary.CompletedRequests)
		}
		out += res.Summary.TotalOutputTokens
	}
	sec := b.Elapsed().Seconds()
	b.ReportMetric(float64(requests*b.N)/sec, "requests/s")
	b.ReportMetric(float64(out)/sec, "output_tokens/s")
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
