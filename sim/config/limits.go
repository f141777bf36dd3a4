package config

import (
	"math"
)

// Bounds on the size of one simulation. They sit far above real deployments and workloads and
// keep a mistyped value (1e18 requests, a 4-billion-token block) from exhausting memory or
// overflowing the simulator's 32-bit token counters; a value beyond a bound is a config error
// naming the bound.
const (
	// MaxRequests bounds the requests of one run (requests, or sessions × turns).
	MaxRequests = 10_000_000
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
	// MinRate and MaxRate bound arrival rates (per second), speedup factors and bandwidths.
	MinRate = 1e-6
	MaxRate = 1e9
)

// limits reports values beyond the bounds above.
func (v *validator) limits(c *Config) {
	intMax := func(path string, x, limit int) {
		if x > limit {
			v.errorf(path, "must be <= %d, got %d", limit, x)
		}
	}
	floatIn := func(path string, x, lo, hi float64) {
		if x != 0 && (x < lo || x > hi) {
			v.errorf(path, "must be between %g and %g, got %g", lo, hi, x)
		}
	}
	src, load, stop := &c.Traffic.Source, &c.Traffic.Load, &c.Traffic.Stop
	intMax("traffic.source.input_tokens", src.InputTokens, MaxTokensPerRequest)
	intMax("traffic.source.output_tokens", src.OutputTokens, MaxTokensPerRequest)
	intMax("traffic.source.new_input_tokens_per_turn", src.NewInputTokensPerTurn, MaxTokensPerRequest)
	intMax("traffic.source.output_tokens_per_turn", src.OutputTokensPerTurn, MaxTokensPerRequest)
	turns := 1
	if s := src.Session; s != nil {
		intMax("traffic.source.session.turns", s.Turns, MaxTurns)
		turns = max(s.Turns, 1)
		floatIn("traffic.source.session.inter_turn_delay_ms", s.InterTurnDelayMs, 0, MaxMs)
	}
	intMax("traffic.load.concurrency", load.Concurrency, MaxRequests)
	floatIn("traffic.load.requests_per_second", load.RequestsPerSecond, MinRate, MaxRate)
	floatIn("traffic.load.sessions_per_second", load.SessionsPerSecond, MinRate, MaxRate)
	floatIn("traffic.load.speedup", load.Speedup, MinRate, MaxRate)
	perTurn := MaxRequests / turns
	intMax("traffic.stop.requests", stop.Requests, MaxRequests)
	intMax("traffic.stop.sessions", stop.Sessions, perTurn)
	floatIn("traffic.stop.max_virtual_time_seconds", stop.MaxVirtualTimeSeconds, 0, MaxMs/1000)
	unit := load.Unit()
	if x := stop.RequestsPerLoadUnit; x > 0 && x*unit > MaxRequests {
		v.errorf("traffic.stop.requests_per_load_unit", "resolves to %g requests (× load %g); must be <= %d", x*unit, unit, MaxRequests)
	}
	if x := stop.SessionsPerLoadUnit; x > 0 && x*unit > float64(perTurn) {
		v.errorf("traffic.stop.sessions_per_load_unit", "resolves to %g sessions (× load %g) of %d turns; must be <= %d sessions", x*unit, unit, turns, perTurn)
	}

	e := &c.Engine
	intMax("engine.context_length", e.ContextLength, MaxTokensPerRequest)
	if kt := e.KVTransfer; kt != nil && kt.BandwidthGBps != nil {
		floatIn("engine.kv_transfer.bandwidth_gb_per_second", *kt.BandwidthGBps, MinRate, MaxRate)
	}
	for _, r := range []struct {
		name string
		role *WorkerRole
	}{{"aggregated", e.Workers.Aggregated}, {"prefill", e.Workers.Prefill}, {"decode", e.Workers.Decode}} {
		if r.role == nil {
			continue
		}
		p := "engine.workers." + r.name
		par := r.role.Parallelism
		for _, f := range []struct {
			name string
			x    int
		}{{"replicas", par.Replicas}, {"tensor", par.Tensor}, {"pipeline", par.Pipeline}, {"attention_data", par.AttentionData},
			{"moe_tensor", par.MoeTensor}, {"moe_expert", par.MoeExpert}} {
			intMax(p+".parallelism."+f.name, f.x, MaxParallelism)
		}
		if par.Replicas <= MaxParallelism && par.AttentionData <= MaxParallelism && par.Replicas*par.AttentionData > MaxRanksPerRole {
			v.errorf(p+".parallelism", "replicas × attention_data = %d rank schedulers; must be <= %d", par.Replicas*par.AttentionData, MaxRanksPerRole)
		}
		intMax(p+".scheduler.max_batched_tokens", r.role.Scheduler.MaxBatchedTokens, MaxBatchedTokens)
		intMax(p+".scheduler.max_sequences", r.role.Scheduler.MaxSequences, MaxSequences)
		intMax(p+".kv_cache.block_size", r.role.KVCache.BlockSize, MaxBlockSize)
		intMax(p+".kv_cache.capacity.blocks", r.role.KVCache.Capacity.Blocks, MaxBlocks)
		for _, t := range []struct {
			name string
			x    *float64
		}{{"prefill_ms", r.role.Timing.PrefillMs}, {"decode_ms", r.role.Timing.DecodeMs}} {
			if t.x != nil {
				floatIn(p+".timing."+t.name, *t.x, 0, MaxMs)
			}
		}
	}
}
