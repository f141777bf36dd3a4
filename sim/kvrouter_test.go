package sim

import (
	"slices"
	"testing"

	"github.com/servesweep/servesweep/sim/config"
	"github.com/servesweep/servesweep/sim/traffic"
)

// On prefix-heavy multi-turn traffic over 4 replicas, kv_router sends each later turn to the
// worker that caches the earlier turns, so it reuses more of the prompt and prefills less than
// round_robin, which scatters a session's turns across workers.
func TestKVRouterBeatsRoundRobinOnPrefixReuse(t *testing.T) {
	run := func(policy config.Policy) *Result {
		cfg := testConfig(0, 0, 0, 16, 4000)
		cfg.Traffic.Source = config.Source{Type: config.SourceSyntheticSession, NewInputTokensPerTurn: 512, OutputTokensPerTurn: 32,
			Session: &config.SessionShape{Turns: 4, SharedPrefixRatio: 0.5, PrefixGroups: 4, InterTurnDelayMs: 10}}
		cfg.Traffic.Stop = config.Stop{Sessions: 64}
		role := cfg.Engine.Workers.Aggregated
		role.Parallelism.Replicas = 4
		role.Timing = config.Timing{Type: config.TimingPolynomial}
		cfg.Router.Policy = policy
		return mustRun(t, cfg)
	}
	rr, kv := run(config.PolicyRoundRobin), run(config.PolicyKVRouter)
	t.Logf("round_robin reuse %.3f ttft %.1f; kv_router reuse %.3f ttft %.1f",
		rr.Summary.PrefixCacheReusedRatio, rr.Summary.TTFT.Mean, kv.Summary.PrefixCacheReusedRatio, kv.Summary.TTFT.Mean)
	if kv.Summary.PrefixCacheReusedRatio <= rr.Summary.PrefixCacheReusedRatio {
		t.Errorf("kv_router reuse %.3f not above round_robin %.3f", kv.Summary.PrefixCacheReusedRatio, rr.Summary.PrefixCacheReusedRatio)
	}
	if kv.Summary.TTFT.Mean >= rr.Summary.TTFT.Mean {
		t.Errorf("kv_router mean TTFT %.1f not below round_robin %.1f", kv.Summary.TTFT.Mean, rr.Summary.TTFT.Mean)
	}
}

// least_loaded places each request on the slot with the fewest active tokens (prompt tokens until
// the first token plus live prompt blocks × 16), lowest slot first; round_robin cycles. Two
// replicas, prefill 10 ms and decode 5 ms per pass, requests 0..3 arrive at 0 ms, request 4 at
// 17 ms.
//
// least_loaded:
//   - request 0 (160 tokens, 10 blocks): both slots at 0 → slot 0, now 160 + 10·16 = 320;
//   - request 1 (16 tokens, 1 block): slot 1 (0 < 320), now 16 + 16 = 32;
//   - requests 2 and 3: slot 1 again (32, then 64, below 320);
//   - first tokens at 10 + 5 = 15 ms release the prompt tokens: at 17 ms slot 0 holds 10 live
//     blocks (160), slot 1 three (48), so request 4 goes to slot 1. Worker 1 is in its second
//     pass (15..20 ms, requests 1..3 complete); request 4's prefill pass ends at 20 + 15 = 35,
//     its decode at 40. Request 0 alone on worker 0: tokens at 15, 20, 25, 30.
//
// round_robin: 0, 1, 0, 1, 0. Worker 0 prefills requests 0 and 2 together (15 ms), decodes both
// (20 ms, request 2 done), then request 0's 3rd token shares request 4's prefill pass (35 ms) and
// both end at 40 ms.
func TestLeastLoadedPlacement(t *testing.T) {
	rows := []traffic.TraceRow{
		{Line: 1, InputLength: 160, OutputLength: 4, HashIDs: []uint64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, HasTimestamp: true},
		{Line: 2, InputLength: 16, OutputLength: 2, HashIDs: []uint64{11}, HasTimestamp: true},
		{Line: 3, InputLength: 16, OutputLength: 2, HashIDs: []uint64{12}, HasTimestamp: true},
		{Line: 4, InputLength: 16, OutputLength: 2, HashIDs: []uint64{13}, HasTimestamp: true},
		{Line: 5, InputLength: 16, OutputLength: 2, HashIDs: []uint64{14}, HasTimestamp: true, Timestamp: traffic.TraceTime{Whole: 17}},
	}
	type placed struct {
		worker          int32
		firstMs, doneMs float64
	}
	for _, c := range []struct {
		policy config.Policy
		want   []placed
	}{
		{config.PolicyLeastLoaded, []placed{{0, 15, 30}, {1, 15, 20}, {1, 15, 20}, {1, 15, 20}, {1, 35, 40}}},
		{config.PolicyRoundRobin, []placed{{0, 15, 40}, {1, 15, 20}, {0, 15, 20}, {1, 15, 20}, {0, 35, 40}}},
	} {
		cfg := traceConfig(100)
		cfg.Engine.Workers.Aggregated.Parallelism.Replicas = 2
		cfg.Router.Policy = c.policy
		res := runRows(t, cfg, rows)
		for i, w := range c.want {
			r := &res.Requests[i]
			if got := (placed{r.Worker, r.FirstTokenMs, r.TerminalMs}); got != w {
				t.Errorf("%s: request %d (worker, first token, done) = %v, want %v", c.policy, i, got, w)
			}
		}
	}
}

// random draws each request's worker uniformly (seeded): over 300 requests on 3 replicas each
// worker gets Binomial(300, 1/3) requests, mean 100, standard deviation sqrt(300·1/3·2/3) ≈ 8.2,
// so 70..130 (beyond 3.6 deviations; the seed is fixed, the check deterministic). Unlike a
// cycle, some consecutive requests share a worker (a cycle never does; random does with
// probability 1 − (2/3)^299).
func TestRandomPlacement(t *testing.T) {
	cfg := testConfig(16, 1, 300, 30, 500)
	cfg.Engine.Workers.Aggregated.Parallelism.Replicas = 3
	cfg.Router.Policy = config.PolicyRandom
	res := mustRun(t, cfg)
	var per [3]int
	repeats := 0
	for i := range res.Requests {
		per[res.Requests[i].Worker]++
		if i > 0 && res.Requests[i].Worker == res.Requests[i-1].Worker {
			repeats++
		}
	}
	for w, n := range per {
		if n < 70 || n > 130 {
			t.Errorf("worker %d got %d of 300 requests, want 70..130 (per worker %v)", w, n, per)
		}
	}
	if repeats == 0 {
		t.Errorf("no two consecutive requests share a worker: placement cycles instead of drawing")
	}
	if res.Summary.CompletedRequests != 300 || res.Summary.TotalOutputTokens != 300 {
		t.Errorf("completed %d, output %d; want 300 and 300", res.Summary.CompletedRequests, res.Summary.TotalOutputTokens)
	}
}

// router.seed picks the random policy's draws: unset is seed 42, written out it places every
// request the same; another seed places them otherwise (the chance that 300 uniform draws over
// 3 workers repeat is 3^-300).
func TestRouterSeed(t *testing.T) {
	placements := func(seed *uint64) []int32 {
		cfg := testConfig(16, 1, 300, 30, 500)
		cfg.Engine.Workers.Aggregated.Parallelism.Replicas = 3
		cfg.Router.Policy = config.PolicyRandom
		cfg.Router.Seed = seed
		res := mustRun(t, cfg)
		out := make([]int32, len(res.Requests))
		for i := range res.Requests {
			out[i] = res.Requests[i].Worker
		}
		return out
	}
	fortyTwo, seven := uint64(42), uint64(7)
	unset := placements(nil)
	if got := placements(&fortyTwo); !slices.Equal(got, unset) {
		t.Errorf("router.seed 42 places requests otherwise than an unset seed")
	}
	if got := placements(&seven); slices.Equal(got, unset) {
		t.Errorf("router.seed 7 places every request as seed 42 does")
	}
}
