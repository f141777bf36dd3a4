package sim

import "testing"

// On prefix-heavy multi-turn traffic over 4 replicas, kv_router sends each later turn to the
// worker that caches the earlier turns, so it reuses more of the prompt and prefills less than
// round_robin, which scatters a session's turns across workers.
func TestKVRouterBeatsRoundRobinOnPrefixReuse(t *testing.T) {
	run := func(policy string) *Result {
		cfg := testConfig(0, 0, 0, 16, 4000)
		cfg.Traffic.Source = Source{Type: SourceSyntheticSession, NewInputTokensPerTurn: 512, OutputTokensPerTurn: 32,
			Session: &SessionShape{Turns: 4, SharedPrefixRatio: 0.5, PrefixGroups: 4, InterTurnDelayMs: 10}}
		cfg.Traffic.Stop = Stop{Sessions: 64}
		role := cfg.Engine.Workers.Aggregated
		role.Parallelism.Replicas = 4
		role.Timing = Timing{Type: TimingPolynomial}
		cfg.Router.Policy = policy
		return mustRun(t, cfg)
	}
	rr, kv := run(PolicyRoundRobin), run(PolicyKVRouter)
	t.Logf("round_robin reuse %.3f ttft %.1f; kv_router reuse %.3f ttft %.1f",
		rr.Summary.PrefixCacheReusedRatio, rr.Summary.TTFT.Mean, kv.Summary.PrefixCacheReusedRatio, kv.Summary.TTFT.Mean)
	if kv.Summary.PrefixCacheReusedRatio <= rr.Summary.PrefixCacheReusedRatio {
		t.Errorf("kv_router reuse %.3f not above round_robin %.3f", kv.Summary.PrefixCacheReusedRatio, rr.Summary.PrefixCacheReusedRatio)
	}
	if kv.Summary.TTFT.Mean >= rr.Summary.TTFT.Mean {
		t.Errorf("kv_router mean TTFT %.1f not below round_robin %.1f", kv.Summary.TTFT.Mean, rr.Summary.TTFT.Mean)
	}
}

// Policies users compare against: random and least_loaded complete the same work.
func TestOtherPolicies(t *testing.T) {
	for _, policy := range []string{"random", "least_loaded"} {
		cfg := testConfig(200, 20, 50, 10, 500)
		cfg.Engine.Workers.Aggregated.Parallelism.Replicas = 3
		cfg.Router.Policy = policy
		res := mustRun(t, cfg)
		if res.Summary.CompletedRequests != 50 {
			t.Errorf("%s: completed %d", policy, res.Summary.CompletedRequests)
		}
	}
}
