package sim

import (
	"testing"

	"github.com/servesweep/servesweep/sim/config"
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

// Policies users compare against: random and least_loaded complete the same work.
func TestOtherPolicies(t *testing.T) {
	for _, policy := range []config.Policy{config.PolicyRandom, config.PolicyLeastLoaded} {
		cfg := testConfig(200, 20, 50, 10, 500)
		cfg.Engine.Workers.Aggregated.Parallelism.Replicas = 3
		cfg.Router.Policy = policy
		res := mustRun(t, cfg)
		if res.Summary.CompletedRequests != 50 {
			t.Errorf("%s: completed %d", policy, res.Summary.CompletedRequests)
		}
	}
}
