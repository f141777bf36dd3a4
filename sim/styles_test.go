package sim

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/servesweep/servesweep/sim/config"
	"github.com/servesweep/servesweep/sim/metrics"
)

// The seed's configs run on every backend's scheduler style, aggregated and disaggregated, with
// sessions that reuse prefixes and a KV pool small enough to force preemption or retraction:
// every request completes with its whole output, no KV block leaks (CheckInvariants checks the
// pools after every pass), and a second run gives the same result.
func TestSeedConfigsOnEveryBackend(t *testing.T) {
	session := "traffic.source={type: synthetic-session, new_input_tokens_per_turn: 512, output_tokens_per_turn: 64, " +
		"session: {turns: 3, shared_prefix_ratio: 0.5, prefix_groups: 4, inter_turn_delay_ms: 50}}"
	cases := []struct {
		backend string
		sets    []string
	}{
		{"sglang", nil},
		{"trtllm", nil},
		{"trtllm", []string{"scheduler.capacity_policy=max_utilization"}},
		{"sglang", []string{"scheduler.prefill_decode_interval=4"}},
		{"vllm", nil},
	}
	for _, tc := range cases {
		for _, seed := range []string{seedSynthetic, seedDisaggregated} {
			name := fmt.Sprintf("%s %v %s", tc.backend, tc.sets, seed)
			t.Run(name, func(t *testing.T) {
				sets := []string{"engine.backend=" + tc.backend, session, "traffic.stop={sessions: 40}",
					"traffic.load={type: concurrency, concurrency: 24}"}
				roles := []string{"aggregated"}
				if seed == seedDisaggregated {
					roles = []string{"prefill", "decode"}
				}
				for _, r := range roles {
					p := "engine.workers." + r + "."
					// 700 blocks of 16 tokens (the block size every backend accepts): room for
					// about 11,200 tokens against 24 sessions of up to 1,728 tokens.
					sets = append(sets, p+"kv_cache={block_size: 16, prefix_caching: true, capacity: {type: fixed, blocks: 700}}")
					for _, s := range tc.sets {
						sets = append(sets, p+s)
					}
				}
				cfg := mustLoad(t, seed, sets...)
				res := mustRun(t, cfg)
				if res.Summary.CompletedRequests != 120 {
					t.Errorf("completed %d of 120", res.Summary.CompletedRequests)
				}
				if res.LeakedBlocks != 0 {
					t.Errorf("%d KV blocks leaked", res.LeakedBlocks)
				}
				again, err := Run(context.Background(), mustLoad(t, seed, sets...), Options{})
				if err != nil {
					t.Fatal(err)
				}
				a, b := *res.Summary, *again.Summary
				for _, s := range []*metrics.Summary{&a, &b} { // host time and what derives from it
					s.WallTimeMs, s.ProcessedTokensPerS, s.ProcessedOutputTokensPerS = 0, 0, 0
				}
				if !reflect.DeepEqual(a, b) {
					t.Error("a second run differs")
				}
			})
		}
	}
}

// The styles differ where they should on the same load: TensorRT-LLM's guaranteed_no_evict never
// preempts where max_utilization and vLLM do; SGLang retracts.
func TestStylesDifferUnderKVPressure(t *testing.T) {
	preemptions := func(backend string, sets ...string) int64 {
		cfg := testConfig(600, 300, 60, 30, 160)
		cfg.Engine.Backend = backend
		cfg.Engine.Workers.Aggregated.Scheduler.CapacityPolicy = config.CapacityGuaranteedNoEvict
		for _, s := range sets {
			if s == "max_utilization" {
				cfg.Engine.Workers.Aggregated.Scheduler.CapacityPolicy = config.CapacityMaxUtilization
			}
		}
		return mustRun(t, cfg).Summary.Preemptions
	}
	if n := preemptions("trtllm"); n != 0 {
		t.Errorf("trtllm guaranteed_no_evict preempted %d times", n)
	}
	for _, c := range []struct {
		backend string
		sets    []string
	}{{"trtllm", []string{"max_utilization"}}, {"vllm", nil}, {"sglang", nil}} {
		if n := preemptions(c.backend, c.sets...); n == 0 {
			t.Errorf("%s %v: no preemption on a pool of 160 blocks for 30 × 900 tokens", c.backend, c.sets)
		}
	}
}

// SGLang's receive interval holds new requests back while a rank decodes, never drops work:
// with scheduler.recv_interval 20 (fixed timing, 8 ms decode passes, outputs of 50-100 tokens
// so that completions, and the closed loop's arrivals, fall between polls), every request
// still completes with the same output tokens (checked against the run without it), no KV
// block is left held (the run checks its pool after every pass), and the mean TTFT rises by
// about 7/8 × 9.5 decode passes of 8 ms = 67 ms: a request arriving at a uniform point of the
// interval waits 0-19 passes for the poll (9.5 on average), and the first wave, 8 of the 64,
// reaches an idle rank and is taken in at once (63 ms measured).
func TestSGLangRecvIntervalDelaysFirstTokens(t *testing.T) {
	run := func(interval int) *Result {
		cfg := testConfig(200, 100, 64, 8, 4000)
		cfg.Traffic.Source.OutputTokensDist = &config.Distribution{Distribution: config.DistUniform, Min: 50, Max: 100}
		cfg.Engine.Backend = "sglang"
		cfg.Engine.Workers.Aggregated.Scheduler.RecvInterval = interval
		return mustRun(t, cfg)
	}
	base, held := run(0), run(20)
	if held.Summary.CompletedRequests != 64 || base.Summary.CompletedRequests != 64 ||
		held.Summary.TotalOutputTokens != base.Summary.TotalOutputTokens || held.LeakedBlocks != 0 {
		t.Fatalf("recv_interval 20: %d requests and %d output tokens completed, %d blocks leaked; without: %d and %d",
			held.Summary.CompletedRequests, held.Summary.TotalOutputTokens, held.LeakedBlocks,
			base.Summary.CompletedRequests, base.Summary.TotalOutputTokens)
	}
	extra := held.Summary.TTFT.Mean - base.Summary.TTFT.Mean
	if extra < 45 || extra > 90 {
		t.Errorf("mean TTFT %.1f ms with recv_interval 20, %.1f without: %.1f ms more, want about 67 (45-90)",
			held.Summary.TTFT.Mean, base.Summary.TTFT.Mean, extra)
	}
}

// SGLang's page size 1 runs in blocks of 16 tokens: the pool of 1,000 one-token pages is 62
// blocks, and the rank's KV in tokens is 992.
func TestSGLangPagesRegroupIntoBlocks(t *testing.T) {
	cfg := testConfig(100, 10, 4, 4, 1000)
	cfg.Engine.Backend = "sglang"
	cfg.Engine.Workers.Aggregated.KVCache.BlockSize = 1
	d := &deployment{cfg: cfg}
	blocks, bs, err := d.rankBlocks(config.RoleAggregated, cfg.Engine.Workers.Aggregated)
	if err != nil || blocks != 62 || bs != 16 {
		t.Errorf("rankBlocks = %d blocks of %d, %v; want 62 of 16", blocks, bs, err)
	}
	for _, c := range []struct{ page, want int }{{1, 16}, {3, 18}, {16, 16}, {32, 32}, {5, 20}} {
		cfg.Engine.Workers.Aggregated.KVCache.BlockSize = c.page
		if got := rankBlockSize("sglang", cfg.Engine.Workers.Aggregated); got != c.want {
			t.Errorf("page %d: block %d, want %d", c.page, got, c.want)
		}
	}
	mustRun(t, cfg)
	cfg.Engine.Workers.Aggregated.KVCache.Capacity.Blocks = 3 // 15 tokens < one block
	cfg.Engine.Workers.Aggregated.KVCache.BlockSize = 5
	if _, err := Run(context.Background(), cfg, Options{}); err == nil {
		t.Error("a pool smaller than one block accepted")
	}
}

// A request stopped short of its requested output is counted: context_length 120 with prompts
// of 100 leaves room for 20 of the 50 requested tokens, so 4 requests are truncated by 30 tokens
// each. A small prefill pool does not shorten the output (the decode pool holds it): prefill
// pools of 8 blocks of 16 = 128 tokens hold the prompts of 100, and all 50 tokens come out.
func TestTruncatedRequestsAreCounted(t *testing.T) {
	cfg := testConfig(100, 50, 4, 2, 1000)
	cfg.Engine.ContextLength = 120
	s := mustRun(t, cfg).Summary
	if s.CompletedRequests != 4 || s.TruncatedRequests != 4 || s.TruncatedOutputTokens != 120 || s.TotalOutputTokens != 80 {
		t.Errorf("completed %d, truncated %d by %d tokens, output %d; want 4, 4, 120, 80",
			s.CompletedRequests, s.TruncatedRequests, s.TruncatedOutputTokens, s.TotalOutputTokens)
	}
	if m := s.Map(); m["truncated_requests"] != int64(4) || m["truncated_output_tokens"] != int64(120) {
		t.Errorf("prediction.json keys: %v, %v", m["truncated_requests"], m["truncated_output_tokens"])
	}
	for _, backend := range []string{"vllm", "sglang", "trtllm"} {
		d := disaggConfig(100, 50, 4, 2, 1, 1, 1000, 100)
		d.Engine.Backend = backend
		d.Engine.Workers.Prefill.KVCache.Capacity.Blocks = 8
		d.Engine.Workers.Prefill.Scheduler.CapacityPolicy = config.CapacityGuaranteedNoEvict
		d.Engine.Workers.Decode.Scheduler.CapacityPolicy = config.CapacityGuaranteedNoEvict
		s := mustRun(t, d).Summary
		if s.CompletedRequests != 4 || s.TruncatedRequests != 0 || s.TotalOutputTokens != 200 {
			t.Errorf("%s disaggregated: completed %d, truncated %d, output %d; want 4, 0, 200", backend, s.CompletedRequests, s.TruncatedRequests, s.TotalOutputTokens)
		}
	}
}

// What a scheduler style cannot run is a config error naming the field: an SGLang page larger
// than the chunked-prefill budget 8192 / attention_data, a TensorRT-LLM token budget below a block.
func TestStyleLimitsAreConfigErrors(t *testing.T) {
	for _, c := range []struct {
		backend        string
		block, dp, mbt int
		path           string
	}{
		{"sglang", 64, 129, 8192, "engine.workers.aggregated.kv_cache.block_size"},
		{"sglang", 16384, 1, 8192, "engine.workers.aggregated.kv_cache.block_size"},
		{"trtllm", 32, 1, 16, "engine.workers.aggregated.scheduler.max_batched_tokens"},
	} {
		cfg := testConfig(100, 10, 4, 4, 100000)
		cfg.Engine.Backend = c.backend
		role := cfg.Engine.Workers.Aggregated
		role.KVCache.BlockSize, role.Parallelism.AttentionData, role.Scheduler.MaxBatchedTokens = c.block, c.dp, c.mbt
		var ce *config.Error
		if err := Check(cfg, nil); !errors.As(err, &ce) || ce.Path != c.path {
			t.Errorf("%+v: Check = %v, want a config error on %s", c, err, c.path)
		}
		if _, err := Run(context.Background(), cfg, Options{}); !errors.As(err, &ce) || ce.Path != c.path {
			t.Errorf("%+v: Run = %v, want a config error on %s", c, err, c.path)
		}
	}
	// At the limit it runs: 8192 / 128 = 64-token budget, 64-token pages. (1,000 blocks: enough
	// for 4 requests, and 128 ranks' pools of 100,000 took 12 s under -race.)
	cfg := testConfig(100, 10, 4, 4, 1000)
	cfg.Engine.Backend = "sglang"
	cfg.Engine.Workers.Aggregated.KVCache.BlockSize, cfg.Engine.Workers.Aggregated.Parallelism.AttentionData = 64, 128
	mustRun(t, cfg)
}

// SGLang cuts a chunk to whole pages when the page-rounded rest of a prompt exceeds the chunk
// budget: a 1,000-token prompt under chunked_prefill_size 1,000 with pages of 64 tokens (its
// rest rounds to 1,024) is prefilled as 960 tokens, then 40, in two 30 ms prefill passes
// (fixed timing), its first token with the second at 60 ms. Before, the rest was charged 1,024
// against the budget of 1,000 at every pass and the run stopped as stuck.
func TestSGLangChunkCutToWholePages(t *testing.T) {
	cfg := testConfig(1000, 8, 1, 1, 1000)
	cfg.Engine.Backend = config.BackendSGLang
	w := cfg.Engine.Workers.Aggregated
	w.KVCache.BlockSize, w.Scheduler.ChunkedPrefillSize = 64, 1000
	res := mustRun(t, cfg)
	r := res.Requests[0]
	if res.Summary.CompletedRequests != 1 || r.FirstTokenMs != 60 {
		t.Fatalf("completed %d, first token at %v ms: want 1 and 60 (chunks of 960 and 40 tokens)", res.Summary.CompletedRequests, r.FirstTokenMs)
	}
}
