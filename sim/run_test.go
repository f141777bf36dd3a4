package sim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/servesweep/servesweep/sim/config"
	"github.com/servesweep/servesweep/sim/engine"
	"github.com/servesweep/servesweep/sim/traffic"
)

func f64(v float64) *float64 { return &v }

// testConfig is a small aggregated deployment with fixed timing (prefill 30 ms, decode 8 ms per
// pass), block size 16 and the given KV capacity, serving synthetic ISL/OSL requests.
func testConfig(isl, osl, requests, concurrency, blocks int) *config.Config {
	return &config.Config{
		File: "test.yaml",
		Traffic: config.Traffic{
			Source: config.Source{Type: config.SourceSynthetic, InputTokens: isl, OutputTokens: osl},
			Load:   config.Load{Type: config.LoadConcurrency, Concurrency: concurrency},
			Stop:   config.Stop{Requests: requests},
		},
		Engine: config.Engine{
			Mode: config.ModeAggregated, Model: "test-model", Hardware: "h200_sxm", Backend: "vllm", ContextLength: 100000,
			Workers: config.Workers{Aggregated: &config.WorkerRole{
				Parallelism: config.Parallelism{Replicas: 1, Tensor: 1, Pipeline: 1, AttentionData: 1, MoeTensor: 1, MoeExpert: 1},
				Scheduler:   config.Scheduler{MaxBatchedTokens: 8192, MaxSequences: 256},
				KVCache:     config.KVCache{BlockSize: 16, PrefixCaching: true, Capacity: config.KVCapacity{Type: config.CapacityFixed, Blocks: blocks}},
				Timing:      config.Timing{Type: config.TimingFixed, PrefillMs: f64(30), DecodeMs: f64(8)},
			}},
		},
		Router:  config.Router{Policy: config.PolicyRoundRobin, PrefillLoadModel: config.PrefillLoadModel{Type: "none"}},
		Planner: config.Planner{Policy: "disabled"},
	}
}

// The seed's configuration files, as shipped in examples/.
const (
	seedSynthetic     = "../examples/synthetic.yaml"
	seedDisaggregated = "../examples/disaggregated.yaml"
)

// mustLoad decodes the config file at path with the --set overrides sets, failing the test on
// any error.
func mustLoad(t *testing.T, path string, sets ...string) *config.Config {
	t.Helper()
	c, err := config.LoadFile(path, sets)
	if err != nil {
		t.Fatalf("LoadFile: %v", err)
	}
	return c
}

func mustRun(t *testing.T, cfg *config.Config) *Result {
	t.Helper()
	return mustRunWith(t, cfg, Options{CheckInvariants: true})
}

// mustRunWith is mustRun with the options opt.
func mustRunWith(t *testing.T, cfg *config.Config, opt Options) *Result {
	t.Helper()
	res, err := Run(context.Background(), cfg, opt)
	if err != nil {
		t.Fatal(err)
	}
	checkConservation(t, res)
	return res
}

// checkConservation asserts the run invariants: every request ended in exactly one terminal state,
// completed requests emitted exactly their (clipped) output, and no KV block is still held.
func checkConservation(t *testing.T, res *Result) {
	t.Helper()
	var out int64
	for i := range res.Requests {
		r := &res.Requests[i]
		switch r.Status {
		case engine.Completed:
			if r.Generated != r.MaxOutput {
				t.Errorf("request %d completed with %d tokens, want %d", i, r.Generated, r.MaxOutput)
			}
			out += int64(r.Generated)
		case engine.Rejected:
			if r.Generated != 0 {
				t.Errorf("rejected request %d emitted %d tokens", i, r.Generated)
			}
		default:
			t.Errorf("request %d ended in non-terminal status %v", i, r.Status)
		}
		if len(r.Blocks) != 0 {
			t.Errorf("request %d still holds %d KV blocks", i, len(r.Blocks))
		}
	}
	if s := res.Summary; s.NumRequests != s.CompletedRequests+s.RejectedRequests+s.UnfinishedRequests {
		t.Errorf("offered %d != completed %d + rejected %d + unfinished %d", s.NumRequests, s.CompletedRequests, s.RejectedRequests, s.UnfinishedRequests)
	}
	if out != res.Summary.TotalOutputTokens {
		t.Errorf("output tokens: requests emitted %d, summary says %d", out, res.Summary.TotalOutputTokens)
	}
	if res.LeakedBlocks != 0 {
		t.Errorf("%d KV blocks leaked", res.LeakedBlocks)
	}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// One request, fixed timing: the prefill pass costs prefill 30 + decode 8 (the request emits its
// first token in that pass), then each decode pass costs 8.
func TestOneRequestFixedTiming(t *testing.T) {
	res := mustRun(t, testConfig(100, 4, 1, 1, 100))
	s := res.Summary
	if s.CompletedRequests != 1 || s.TotalOutputTokens != 4 || s.TotalInputTokens != 100 {
		t.Fatalf("counts: %+v", s)
	}
	for name, got := range map[string]float64{
		"ttft": s.TTFT.Mean, "ttst": s.TTST.Mean, "e2e": s.E2E.Mean, "tpot": s.TPOT.Mean,
		"itl mean": s.ITL.Mean, "itl p99": s.ITL.P99, "itl max": s.ITL.Max, "duration": s.DurationMs,
	} {
		want := map[string]float64{"ttft": 38, "ttst": 8, "e2e": 62, "tpot": 8, "itl mean": 8, "itl p99": 8, "itl max": 8, "duration": 62}[name]
		if !near(got, want) {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	if !near(s.OutputTokenThroughputPerUser.Mean, 125) {
		t.Errorf("per-user throughput = %v, want 1000/8 = 125", s.OutputTokenThroughputPerUser.Mean)
	}
	if !near(s.RequestThroughputRPS, 1/0.062) {
		t.Errorf("request throughput = %v", s.RequestThroughputRPS)
	}
	if !near(s.DecodeWorkerSeconds, 0.062) || !near(s.GPUHours, 0.062/3600) {
		t.Errorf("worker seconds %v, gpu hours %v", s.DecodeWorkerSeconds, s.GPUHours)
	}
}

// Two requests arriving together on one worker share one pass: the prefill pass carries both
// prompts (30 + 8), then they decode together.
func TestTwoRequestsBatchTogether(t *testing.T) {
	res := mustRun(t, testConfig(100, 3, 2, 2, 100))
	s := res.Summary
	if !near(s.TTFT.Max, 38) || !near(s.E2E.Max, 54) || s.ITL.Mean != 8 {
		t.Fatalf("ttft max %v e2e max %v itl %v", s.TTFT.Max, s.E2E.Max, s.ITL.Mean)
	}
	// 2 requests × 2 gaps of 8 ms each, all from pass runs.
	if n := len(res.Requests[0].ClosedRuns()) + len(res.Requests[1].ClosedRuns()); n != 2 {
		t.Errorf("pass runs = %d, want 2", n)
	}
}

// Requests still decoding when a run stops give no ITL sample: with 2 of 4 requests completed
// (49 gaps of 8 ms each) and 2 cut off mid-decode at 600 ms, ITL has exactly 98 samples.
func TestUnfinishedRequestsGiveNoITLSamples(t *testing.T) {
	cfg := testConfig(100, 50, 4, 2, 1000)
	cfg.Traffic.Stop.MaxVirtualTimeSeconds = 0.6
	res, err := Run(context.Background(), cfg, Options{CheckInvariants: true})
	if err != nil {
		t.Fatal(err)
	}
	s := res.Summary
	if s.CompletedRequests != 2 || s.UnfinishedRequests != 2 {
		t.Fatalf("completed %d unfinished %d, want 2 and 2", s.CompletedRequests, s.UnfinishedRequests)
	}
	if s.ITL.Samples != 98 || s.ITL.Mean != 8 || s.OutputTokenThroughputPerUser.Samples != 98 {
		t.Errorf("ITL %+v, per-user %+v: want 98 samples of 8 ms", s.ITL, s.OutputTokenThroughputPerUser)
	}
}

// Sessions of one prefix group share floor(0.5 × 100) = 50 prompt tokens: with 16-token blocks,
// three full blocks (48 tokens) are reusable by the second session.
func TestSharedPrefixReuse(t *testing.T) {
	cfg := testConfig(0, 0, 0, 1, 1000)
	cfg.Traffic.Source = config.Source{Type: config.SourceSyntheticSession, NewInputTokensPerTurn: 100, OutputTokensPerTurn: 10,
		Session: &config.SessionShape{Turns: 2, SharedPrefixRatio: 0.5, PrefixGroups: 1}}
	cfg.Traffic.Stop = config.Stop{Sessions: 2}
	res := mustRun(t, cfg)
	// Session 0: turn 0 reuses nothing; turn 1 (prompt 100+10+100 = 210) reuses the KV of turn 0's
	// prompt and output: 110 tokens known → 6 full blocks = 96 tokens.
	// Session 1: turn 0 reuses the group prefix, 3 blocks = 48; turn 1 reuses 96 like session 0.
	want := []int32{0, 96, 48, 96}
	for i, w := range want {
		if got := res.Requests[i].ReusedTokens; got != w {
			t.Errorf("request %d reused %d tokens, want %d", i, got, w)
		}
	}
	total := 2 * (100 + 210)
	if got, want := res.Summary.PrefixCacheReusedRatio, float64(0+96+48+96)/float64(total); !near(got, want) {
		t.Errorf("reuse ratio %v, want %v", got, want)
	}
}

// A pool too small for all running requests forces LIFO preemption; every request still
// completes with all its tokens and no block leaks. Block size 16, 12 blocks, 4 requests of 40
// prompt and 40 output tokens (distinct content), prefill pass 30 + 8 ms, decode pass 8 ms.
//
// Pass 1 (0 ms, 38 ms long) admits all four: ceil(40/16) = 3 blocks each, 12, the pool is full.
// Pass k ≥ 2 starts at 38 + 8(k−2) ms and brings each request to 40 + (k−1) computed tokens.
//   - Pass 10 (102 ms): 49 tokens need a 4th block. Request 0 finds none free and preempts the
//     last admitted, request 3 (9 tokens emitted, its 3 full blocks cached); requests 0, 1, 2
//     each evict one of them. Request 3 (49 known) would need 4 blocks: it waits.
//   - Pass 26 (230 ms): 65 tokens need a 5th block: request 2 (25 emitted) is preempted; its
//     4 full blocks are cached, requests 0 and 1 evict its last two. Request 2 (65 known) would
//     reuse its own 2 first blocks, 32 tokens, and need 5 − 2 = 3 more plus the 2 inactive hits,
//     5 > 2 available: it waits.
//   - Requests 0 and 1 never need a 6th block (79 tokens at most) and complete in pass 40
//     (ending 38 + 39·8 = 350 ms), releasing 10 blocks.
//   - Pass 41 (350 ms) re-admits request 2 (32 cached tokens, all its own: recovered, not reused;
//     33 recomputed, 5 blocks) and request 3 (nothing cached any more, 49 recomputed, 4 blocks).
//
// No further preemption: 5 + 5 blocks at most. 2 preemptions in all.
func TestKVExhaustionPreempts(t *testing.T) {
	res := mustRun(t, testConfig(40, 40, 4, 4, 12))
	if res.Summary.Preemptions != 2 {
		t.Errorf("preemptions %d, want 2", res.Summary.Preemptions)
	}
	want := []struct {
		preemptions int32
		history     []engine.Admission
	}{
		{0, []engine.Admission{{AtMs: 0}}},
		{0, []engine.Admission{{AtMs: 0}}},
		{1, []engine.Admission{{AtMs: 0}, {AtMs: 350, RecoveredTokens: 32}}},
		{1, []engine.Admission{{AtMs: 0}, {AtMs: 350}}},
	}
	for i, w := range want {
		r := &res.Requests[i]
		if r.Preemptions != w.preemptions || fmt.Sprint(r.History) != fmt.Sprint(w.history) {
			t.Errorf("request %d: %d preemptions, admissions %+v; want %d, %+v", i, r.Preemptions, r.History, w.preemptions, w.history)
		}
	}
	// Request 3 emitted its 9th token at the end of pass 9 (102 ms) and its 10th at the end of
	// pass 41 (388 ms); request 2 its 25th at 230 ms and its 26th at 388 ms. Request 2 then
	// needs 14 more passes (500 ms), request 3 30 more (628 ms).
	for _, w := range []struct {
		req      int
		gap, end float64
	}{{2, 388 - 230, 500}, {3, 388 - 102, 628}} {
		r := &res.Requests[w.req]
		if len(r.Gaps()) != 1 || r.Gaps()[0] != w.gap || r.TerminalMs != w.end {
			t.Errorf("request %d: gaps %v, done at %v; want [%v], %v", w.req, r.Gaps(), r.TerminalMs, w.gap, w.end)
		}
	}
	if s := res.Summary; s.CompletedRequests != 4 || s.TotalOutputTokens != 160 || s.DurationMs != 628 || s.TotalRecoveredTokens != 32 {
		t.Fatalf("completed %d, output %d, duration %v, recovered %d; want 4, 160, 628, 32",
			s.CompletedRequests, s.TotalOutputTokens, s.DurationMs, s.TotalRecoveredTokens)
	}
}

// context_length: a prompt at or above the limit is rejected (counted, not completed); a prompt
// below it generates until prompt + output reaches the limit.
func TestContextLength(t *testing.T) {
	cfg := testConfig(100, 50, 1, 1, 100)
	cfg.Engine.ContextLength = 100
	res := mustRun(t, cfg)
	if s := res.Summary; s.NumRequests != 1 || s.CompletedRequests != 0 || s.NumTTFTSamples != 0 {
		t.Fatalf("prompt == limit: num %d completed %d", s.NumRequests, s.CompletedRequests)
	}
	if res.Requests[0].Status != engine.Rejected {
		t.Fatalf("status %v, want rejected", res.Requests[0].Status)
	}
	cfg.Engine.ContextLength = 120
	res = mustRun(t, cfg)
	if s := res.Summary; s.CompletedRequests != 1 || s.TotalOutputTokens != 20 {
		t.Fatalf("truncation: completed %d output %d, want 1 and 20", s.CompletedRequests, s.TotalOutputTokens)
	}
	if r := res.Requests[0]; r.RequestedOutput != 50 || r.Generated != 20 {
		t.Fatalf("requested %d generated %d", r.RequestedOutput, r.Generated)
	}
}

// The same config gives byte-identical prediction JSON (wall-clock keys aside).
func TestDeterministic(t *testing.T) {
	cfg := testConfig(0, 0, 0, 8, 400)
	cfg.Traffic.Source = config.Source{Type: config.SourceSyntheticSession, NewInputTokensPerTurn: 200, OutputTokensPerTurn: 30,
		Session: &config.SessionShape{Turns: 3, SharedPrefixRatio: 0.5, PrefixGroups: 3, InterTurnDelayMs: 5}}
	cfg.Traffic.Stop = config.Stop{Sessions: 20}
	cfg.Engine.Workers.Aggregated.Parallelism.Replicas = 2
	cfg.Engine.Workers.Aggregated.Timing = config.Timing{Type: config.TimingPolynomial}
	enc := func() string {
		res := mustRun(t, cfg)
		m := res.Summary.Map()
		for _, k := range []string{"wall_time_ms", "processed_tokens_per_s", "processed_output_tokens_per_s"} {
			delete(m, k)
		}
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	a, b := enc(), enc()
	if a != b {
		t.Fatalf("two runs differ:\n%s\n%s", a, b)
	}
}

// Blocks only one request holds skip the prefix cache's hash index until their request drops its
// KV, and are cached as counted, unmatchable entries once it completes (engine.BlockPool), and
// the shared ones are looked up by dense id in slices
// (blockmap.Table), and a small run's pass ends queue apart from the event heap
// (runState.passEnds). None may change a single output: every scenario below, under KV pressure
// (preemptions, retractions) and with prefix sharing, gives the same records and summary as when
// every registration goes through the index, as when every index hashes its keys, as when
// every pass end goes through the event heap, and as when no pass is formed by a steady decode
// run (engine.Engine's steady.go).
func TestUniqueBlocksSkipIndexSameOutput(t *testing.T) {
	sessions := config.Source{Type: config.SourceSyntheticSession, NewInputTokensPerTurn: 40, OutputTokensPerTurn: 12,
		Session: &config.SessionShape{Turns: 3, SharedPrefixRatio: 0.5, PrefixGroups: 3, InterTurnDelayMs: 5}}
	cases := map[string]func() *config.Config{
		"vllm preemptions": func() *config.Config { return testConfig(100, 60, 80, 16, 120) },
		"sessions kv_router": func() *config.Config {
			cfg := testConfig(0, 0, 0, 12, 90)
			cfg.Traffic.Source, cfg.Traffic.Stop = sessions, config.Stop{Sessions: 30}
			cfg.Engine.Workers.Aggregated.Parallelism.Replicas = 2
			cfg.Router.Policy = config.PolicyKVRouter
			return cfg
		},
		"sglang retractions": func() *config.Config {
			cfg := testConfig(0, 0, 0, 12, 90)
			cfg.Traffic.Source, cfg.Traffic.Stop = sessions, config.Stop{Sessions: 30}
			cfg.Engine.Backend = config.BackendSGLang
			return cfg
		},
		"trtllm": func() *config.Config {
			cfg := testConfig(100, 60, 80, 16, 120)
			cfg.Engine.Backend = config.BackendTRTLLM
			return cfg
		},
		"disaggregated": func() *config.Config {
			cfg := disaggConfig(300, 50, 60, 12, 2, 3, 131072, 50)
			cfg.Engine.Workers.Decode.KVCache.Capacity.Blocks = 60
			return cfg
		},
		// Sessions that share prefixes, disaggregated with a router per role: both roles' keys
		// (given at dispatch when compact), decode-side reservations that reuse them.
		"disaggregated sessions kv_router": func() *config.Config {
			cfg := disaggConfig(0, 0, 0, 12, 2, 2, 131072, 50)
			cfg.Traffic.Source, cfg.Traffic.Stop = sessions, config.Stop{Sessions: 30}
			cfg.Engine.Workers.Decode.KVCache.Capacity.Blocks = 60
			cfg.Router.Policy = config.PolicyKVRouter
			return cfg
		},
		// Fixed pass times: pass ends, planner ticks and arrivals fall on the same instants.
		"planner": func() *config.Config {
			return plannerConfig(56, 1, 5, 0.5, []config.LoadPhase{{UntilSeconds: 3, RequestsPerSecond: 2}, {UntilSeconds: 100, RequestsPerSecond: 20}})
		},
		// The planner scaling workers that decode: steady decode runs on workers added and drained.
		"planner decoding": func() *config.Config {
			cfg := plannerConfig(80, 1, 5, 0.5, []config.LoadPhase{{UntilSeconds: 2, RequestsPerSecond: 2}, {UntilSeconds: 100, RequestsPerSecond: 12}})
			cfg.Traffic.Source.OutputTokens = 60
			cfg.Engine.Workers.Aggregated.Scheduler.MaxSequences = 8
			return cfg
		},
	}
	for name, mk := range cases {
		lazy := mustRun(t, mk())
		steady := lazy.steadyPasses
		switch {
		case steady == 0 && name != "planner": // the planner case has no decode step
			t.Errorf("%s: no steady decode pass: the case does not exercise steady runs", name)
		}
		if lazy.Summary.Preemptions == 0 && name != "sessions kv_router" && name != "trtllm" && !strings.HasPrefix(name, "planner") &&
			name != "disaggregated sessions kv_router" { // TensorRT-LLM never preempts
			t.Errorf("%s: no preemption: the case does not exercise dropped KV", name)
		}
		if strings.Contains(name, "sessions") && lazy.Summary.PrefixCacheReusedRatio == 0 {
			t.Errorf("%s: no prefix reuse: the case does not exercise shared keys", name)
		}
		// Each variant switches one mechanism to its reference (or its alternative) for one run.
		variants := []struct {
			what string
			set  func(o *Options)
		}{
			{"unique blocks skip the hash index", func(o *Options) { o.reference.allBlocksShared = true }},
			{"every key index hashes", func(o *Options) { o.reference.hashAllKeys = true }},
			{"pass ends queue in the event heap", func(o *Options) { o.reference.heapPasses = true }},
			{"shared block keys are rebuilt at dispatch (compact BlockSet)", func(o *Options) {
				wl, err := BuildWorkload(mk())
				if err != nil {
					t.Fatal(err)
				}
				wl.MaterializedKeysLimit = -1
				o.Workload = wl
			}},
			{"every key index is a ring", func(o *Options) { o.reference.ringAllKeys = true }},
			{"every pass is formed on the general path (no steady decode runs)", func(o *Options) { o.reference.generalPasses = true }},
		}
		a, _ := json.Marshal(RequestRecords(lazy))
		for _, v := range variants {
			opt := Options{CheckInvariants: true}
			v.set(&opt)
			other := mustRunWith(t, mk(), opt)
			b, _ := json.Marshal(RequestRecords(other))
			if string(a) != string(b) || lazy.Summary.TTFT != other.Summary.TTFT || lazy.Summary.ITL != other.Summary.ITL ||
				lazy.Summary.Preemptions != other.Summary.Preemptions ||
				lazy.Summary.PrefixCacheReusedRatio != other.Summary.PrefixCacheReusedRatio {
				t.Errorf("%s: outputs differ when %s", name, v.what)
			}
		}
	}
}

// Release hands a Result's request arrays to later runs: a run on a released array (larger, of
// another mode and with preemptions) gives exactly what a run on fresh arrays gives, and the
// released Result no longer exposes its requests.
func TestReleasedRequestsReuseSameOutput(t *testing.T) {
	small := func() *config.Config { return testConfig(100, 60, 80, 16, 120) }
	fresh := mustRun(t, small())
	want, _ := json.Marshal(RequestRecords(fresh))
	for _, first := range []*config.Config{disaggConfig(300, 50, 200, 12, 2, 3, 131072, 50), testConfig(64, 20, 500, 32, 4096)} {
		prev := mustRun(t, first)
		prev.Release()
		if prev.Requests != nil {
			t.Fatal("a released Result still exposes its requests")
		}
		again := mustRun(t, small())
		got, _ := json.Marshal(RequestRecords(again))
		if string(got) != string(want) || again.Summary.TTFT != fresh.Summary.TTFT || again.Summary.ITL != fresh.Summary.ITL ||
			again.Summary.Preemptions != fresh.Summary.Preemptions || again.Summary.Preemptions == 0 {
			t.Fatalf("after releasing a %s run: records or summary differ (preemptions %d and %d)", first.Engine.Mode,
				again.Summary.Preemptions, fresh.Summary.Preemptions)
		}
		again.Release()
	}
}

// Interruptible returns the build's result, or the context's error as soon as it is canceled
// while the build is still running.
func TestInterruptibleBuild(t *testing.T) {
	want := traffic.Synthetic(2, 10, 5)
	got, err := Interruptible(context.Background(), func() (*traffic.Workload, error) { return want, nil })
	if got != want || err != nil {
		t.Fatalf("uncanceled: %p, %v; want %p, nil", got, err, want)
	}
	ctx, cancel := context.WithCancel(context.Background())
	release := make(chan struct{})
	defer close(release)
	go cancel()
	got, err = Interruptible(ctx, func() (*traffic.Workload, error) { <-release; return want, nil })
	if got != nil || !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled during the build: %p, %v; want nil, context.Canceled", got, err)
	}
}

// TestGoodputCountsARequestThatMeetsItsBoundExactly: two lone one-token requests at 0 and
// 4,085.6 ms (0.24476209124730763 req/s: 1000/rate is 4,085.6 exactly), each 15 ms to its first token (fixed 10 + 5 ms), under ttft_ms 15: the second's
// TTFT computes as 15.000000000000455 ms from its absolute times and still meets the bound, so
// goodput is 2 of 2.
func TestGoodputCountsARequestThatMeetsItsBoundExactly(t *testing.T) {
	cfg := testConfig(16, 1, 2, 1, 1000)
	cfg.Traffic.Load = config.Load{Type: config.LoadConstantRate, RequestsPerSecond: 0.24476209124730763}
	cfg.Engine.Workers.Aggregated.Timing = config.Timing{Type: config.TimingFixed, PrefillMs: f64(10), DecodeMs: f64(5)}
	cfg.Evaluation.SLA = &config.SLA{TTFTMs: f64(15)}
	res := mustRun(t, cfg)
	r := res.Requests[1]
	if ttft := r.FirstTokenMs - r.ArrivalMs; ttft <= 15 {
		t.Fatalf("arrival %v ms, TTFT %v ms: the case no longer rounds above the bound", r.ArrivalMs, ttft)
	}
	if got := res.Summary.GoodputCompletedRequests; got != 2 {
		t.Errorf("goodput %d of 2 (second TTFT %v ms)", got, r.FirstTokenMs-r.ArrivalMs)
	}
}

// Percentile SLA terms judge the run: four requests on one worker that runs one sequence at a
// time (ISL 100, OSL 4, fixed timing 30 ms prefill + 8 ms per pass) each take 62 ms (38 ms to
// the first token, three 8 ms gaps) and start when the one before ends, so their TTFTs are 38,
// 100, 162 and 224 ms and their E2E latencies 62, 124, 186 and 248 ms. Nearest-rank percentiles
// of four samples take ranks round(3·p/100): p50 → rank 2 (162 ms TTFT), p90 and p99 → rank 3
// (224 ms TTFT, 248 ms E2E); every ITL gap and TPOT is 8 ms. Terms at those values hold
// (inclusively); 200 ms on p90 TTFT and 7.9 ms on p99 TPOT fail. Goodput counts the per-request
// bound only: ttft_ms 100 keeps the first two requests; with terms alone all four are good.
func TestPercentileSLATerms(t *testing.T) {
	cfg := testConfig(100, 4, 4, 4, 100)
	cfg.Engine.Workers.Aggregated.Scheduler.MaxSequences = 1
	cfg.Evaluation.SLA = &config.SLA{P50TTFTMs: f64(162), P90TTFTMs: f64(200), P99ITLMs: f64(8), P99TPOTMs: f64(7.9),
		P99E2EMs: f64(248)}
	s := mustRun(t, cfg).Summary
	if s.TTFT.Median != 162 || s.TTFT.P90 != 224 || s.E2E.P99 != 248 || s.ITL.P99 != 8 || s.TPOT.P99 != 8 {
		t.Fatalf("ttft p50 %v p90 %v, e2e p99 %v, itl p99 %v, tpot p99 %v; want 162, 224, 248, 8, 8",
			s.TTFT.Median, s.TTFT.P90, s.E2E.P99, s.ITL.P99, s.TPOT.P99)
	}
	if s.GoodputCompletedRequests != 4 {
		t.Errorf("goodput %d under percentile terms only, want all 4 completed requests", s.GoodputCompletedRequests)
	}
	m := s.Map()
	failed, _ := m["sla_percentile_terms_failed"].([]string)
	if m["sla_percentile_terms_met"] != false || strings.Join(failed, ",") != "p90_ttft_ms,p99_tpot_ms" {
		t.Errorf("met %v, failed %v; want false, [p90_ttft_ms p99_tpot_ms]", m["sla_percentile_terms_met"], failed)
	}
	var got []string
	for _, r := range s.SLATerms {
		got = append(got, fmt.Sprintf("%s=%g/%v", r.Term.Key(), r.Value, r.Met))
	}
	if want := "p50_ttft_ms=162/true p90_ttft_ms=224/false p99_itl_ms=8/true p99_tpot_ms=8/false p99_e2e_ms=248/true"; strings.Join(got, " ") != want {
		t.Errorf("terms %s, want %s", strings.Join(got, " "), want)
	}

	cfg.Evaluation.SLA = &config.SLA{TTFTMs: f64(100), P90TTFTMs: f64(224)}
	s = mustRun(t, cfg).Summary
	if s.GoodputCompletedRequests != 2 || s.Map()["sla_percentile_terms_met"] != true {
		t.Errorf("goodput %d, terms met %v; want 2 (TTFT 38 and 100 ms) and true", s.GoodputCompletedRequests, s.Map()["sla_percentile_terms_met"])
	}
	if f := s.Map()["sla_percentile_terms_failed"].([]string); f == nil || len(f) != 0 {
		t.Errorf("failed = %#v, want an empty list", f)
	}

	// Without a percentile term prediction.json has neither key.
	cfg.Evaluation.SLA = &config.SLA{TTFTMs: f64(100)}
	m = mustRun(t, cfg).Summary.Map()
	for _, k := range []string{"sla_percentile_terms_met", "sla_percentile_terms_failed"} {
		if _, ok := m[k]; ok {
			t.Errorf("%s present without percentile terms", k)
		}
	}
}
