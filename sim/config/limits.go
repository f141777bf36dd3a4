package config

import (
	"math"
)

// Bounds on the size of one simulation. They sit far above real deployments and workloads and
// keep a mistyped value (1e18 requests, a 4-billion-token block) from exhausting memory or
// overflowing the simulator's 32-bit token counters; a value beyond a bound is a config error
// naming the bound. A field's `limit` tag (config.go) names the bound that applies to it; the
// bounds that combine fields are checked by limits below.
const (
	// MaxRequests bounds the requests of one run (requests, or sessions × turns). A run keeps
	// about 3 KB per request until it ends (measured 2026-11-30: 1M synthetic requests peak at
	// 2.8 GB, 2M at 6.3 GB), so the bound keeps one run within a few GB.
	MaxRequests = 2_000_000
	// MaxTokensPerRequest bounds a request's prompt, its output, and context_length (2^24).
	MaxTokensPerRequest = 1 << 24
	// MaxTurns bounds the turns of a synthetic session.
	MaxTurns = 100_000
	// MaxBlockSize bounds kv_cache.block_size in tokens.
	MaxBlockSize = 1 << 16
	// MaxBatchedTokens bounds scheduler.max_batched_tokens; MaxSequences scheduler.max_sequences.
	MaxBatchedTokens = 1 << 24
	MaxSequences     = 1 << 20
	// MaxBlocks bounds kv_cache.capacity.blocks per rank (block ids are 32-bit). Pools allocate
	// lazily, so a large capacity costs memory only for the blocks a run touches.
	MaxBlocks = math.MaxInt32
	// MaxRanksPerRole bounds replicas × attention_data of one role; MaxParallelism each
	// parallelism value.
	MaxRanksPerRole = 1 << 16
	MaxParallelism  = 1 << 16
	// MaxMs bounds every duration in ms (fixed pass times, think time) and every authored trace
	// arrival in virtual ms: about 115 days, where float64 ms still resolve 2^-19 ms (about 2 ns).
	MaxMs = 1e10
	// MaxSeconds is MaxMs in seconds: the bound of durations given in seconds.
	MaxSeconds = MaxMs / 1000
	// MinRate and MaxRate bound arrival rates (per second), speedup factors and bandwidths.
	MinRate = 1e-6
	MaxRate = 1e9
	// MaxGiB bounds a memory amount per GPU in GiB (kv_cache.capacity.reserve_gib): 2^20 GiB, a
	// thousand times any GPU's memory.
	MaxGiB = 1 << 20
)

// boundNames are the names a `limit` tag may use.
var boundNames = map[string]float64{
	"MaxRequests": MaxRequests, "MaxTokensPerRequest": MaxTokensPerRequest, "MaxTurns": MaxTurns,
	"MaxBlockSize": MaxBlockSize, "MaxBatchedTokens": MaxBatchedTokens, "MaxSequences": MaxSequences,
	"MaxBlocks": MaxBlocks, "MaxParallelism": MaxParallelism, "MaxMs": MaxMs, "MaxSeconds": MaxSeconds,
	"MinRate": MinRate, "MaxRate": MaxRate, "MaxGiB": MaxGiB,
}

// limits reports the bounds that combine fields: sessions × turns, the requests a
// *_per_load_unit stop resolves to, and the rank schedulers of a role.
func (v *validator) limits(c *Config) {
	src, load, stop := &c.Traffic.Source, &c.Traffic.Load, &c.Traffic.Stop
	turns := 1
	if s := src.Session; s != nil {
		turns = max(s.Turns, 1)
	}
	for _, c := range src.Components {
		if c.Source != nil && c.Source.Session != nil {
			turns = max(turns, c.Source.Session.Turns)
		}
	}
	perTurn := MaxRequests / turns
	if stop.Sessions > perTurn {
		v.errorf("traffic.stop.sessions", "must be <= %d, got %d", perTurn, stop.Sessions)
	}
	unit := load.Unit()
	if x := stop.RequestsPerLoadUnit; x > 0 && x*unit > MaxRequests {
		v.errorf("traffic.stop.requests_per_load_unit", "resolves to %g requests (× load %g); must be <= %d", x*unit, unit, MaxRequests)
	}
	if x := stop.SessionsPerLoadUnit; x > 0 && x*unit > float64(perTurn) {
		v.errorf("traffic.stop.sessions_per_load_unit", "resolves to %g sessions (× load %g) of %d turns; must be <= %d sessions", x*unit, unit, turns, perTurn)
	}
	for _, name := range Roles() {
		r := c.Engine.Workers.Role(name)
		if r == nil {
			continue
		}
		par := r.Parallelism
		if par.Replicas <= MaxParallelism && par.AttentionData <= MaxParallelism && par.Replicas*par.AttentionData > MaxRanksPerRole {
			v.errorf("engine.workers."+string(name)+".parallelism", "replicas × attention_data = %d rank schedulers; must be <= %d",
				par.Replicas*par.AttentionData, MaxRanksPerRole)
		}
	}
}
