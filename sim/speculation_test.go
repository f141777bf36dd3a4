package sim

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/servesweep/servesweep/sim/config"
	"github.com/servesweep/servesweep/sim/metrics"
)

// specConfig is testConfig (fixed timing: prefill 30 ms, decode 8 ms) with one request of a
// 16-token prompt and 10 output tokens and speculation of 3 drafts accepted with rate p each.
func specConfig(p float64) *config.Config {
	cfg := testConfig(16, 10, 1, 1, 1000)
	cfg.Engine.Speculation = &config.Speculation{Kind: "ngram", NumSpeculativeTokens: 3, AcceptanceRates: []float64{p, p, p}, Seed: 42}
	return cfg
}

// TestSpeculationFixedTiming: under fixed timing a round costs one decode_ms whatever its
// drafts. All drafts accepted:
//
//	pass 1  0–38 ms: prefill and the first token (30 + 8)
//	pass 2 38–46: tokens 2–5     pass 3 46–54: tokens 6–9     pass 4 54–62: token 10 (no draft)
//
// TTFT 38, E2E 62, TPOT (62 − 38)/9 = 8/3; the 9 ITL samples are 8, 0, 0, 0, 8, 0, 0, 0, 8
// (tokens of one round arrive together: the round's first token carries the pass's gap, the
// others 0), mean 8/3, median 0, max 8; output throughput 10 tokens / 0.062 s; mean accepted
// length 4 over 2 rounds with drafts; per-user output rate one sample per round after a gap,
// its tokens over the gap: 500, 500 and 125 tokens/s.
func TestSpeculationFixedTiming(t *testing.T) {
	s := mustRun(t, specConfig(1)).Summary
	near := func(name string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-9 {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	near("ttft", s.TTFT.Mean, 38)
	near("e2e", s.E2E.Mean, 62)
	near("tpot", s.TPOT.Mean, 8.0/3)
	near("itl mean", s.ITL.Mean, 8.0/3)
	near("itl median", s.ITL.Median, 0)
	near("itl max", s.ITL.Max, 8)
	near("output throughput", s.OutputThroughputTokS, 10/0.062)
	if s.ITL.Samples != 9 || s.OutputTokenThroughputPerUser.Samples != 3 {
		t.Errorf("itl samples %d, per-user samples %d; want 9 and 3 (one rate per round after a gap)", s.ITL.Samples, s.OutputTokenThroughputPerUser.Samples)
	}
	// The user's rate over each gap is the round's tokens / gap: 4000/8, 4000/8, 1000/8 tokens/s.
	pu := s.OutputTokenThroughputPerUser
	near("per-user mean", pu.Mean, 375)
	near("per-user median", pu.Median, 500)
	near("per-user min", pu.Min, 125)
	near("per-user max", pu.Max, 500)
	m := s.Map()
	if m["mean_accepted_length"] != 4.0 || m["num_speculative_rounds"] != int64(2) || m["num_draft_tokens"] != int64(6) ||
		m["num_accepted_draft_tokens"] != int64(6) || m["draft_acceptance_rate"] != 1.0 {
		t.Errorf("speculation keys: %v %v %v %v %v", m["mean_accepted_length"], m["num_speculative_rounds"], m["num_draft_tokens"],
			m["num_accepted_draft_tokens"], m["draft_acceptance_rate"])
	}
}

// TestSpeculationNoneAccepted: acceptance 0 gives exactly the run without speculation under fixed
// timing (the drafts are verified in the same one-decode_ms round), plus the speculation keys:
// mean accepted length 1 over 8 rounds with drafts (3 drafts while 4 or more tokens remain, then
// 2 and 1).
func TestSpeculationNoneAccepted(t *testing.T) {
	with := mustRun(t, specConfig(0)).Summary.Map()
	without := mustRun(t, testConfig(16, 10, 1, 1, 1000)).Summary.Map()
	if with["mean_accepted_length"] != 1.0 || with["num_speculative_rounds"] != int64(8) || with["num_draft_tokens"] != int64(21) {
		t.Errorf("speculation keys: %v %v %v", with["mean_accepted_length"], with["num_speculative_rounds"], with["num_draft_tokens"])
	}
	for _, k := range []string{"mean_accepted_length", "num_speculative_rounds", "num_draft_tokens", "num_accepted_draft_tokens", "draft_acceptance_rate"} {
		if _, ok := without[k]; ok {
			t.Errorf("%s written without speculation", k)
		}
		delete(with, k)
	}
	for _, k := range wallKeys {
		delete(with, k)
		delete(without, k)
	}
	for k, v := range without {
		if a, b := mustJSON(t, v), mustJSON(t, with[k]); a != b {
			t.Errorf("%s: %s with acceptance 0, %s without speculation", k, b, a)
		}
	}
	if len(with) != len(without) {
		t.Errorf("%d keys with acceptance 0, %d without", len(with), len(without))
	}
}

// wallKeys are the summary keys that depend on host time.
var wallKeys = []string{"wall_time_ms", "processed_tokens_per_s", "processed_output_tokens_per_s"}

// TestSpeculationEveryStyleAndTiming: every backend's scheduler, disaggregated serving, and the
// hardware-aware timing models run speculation with tokens conserved. Under the roofline the
// verified drafts are tokens of the pass: with acceptance 0 a run is never faster than without
// speculation (here, 8 decoding requests, the pass stays bound by the weight and KV reads, so it
// costs the same; TestRooflineDrafts prices drafts in a compute-bound pass), with acceptance 1
// faster.
func TestSpeculationEveryStyleAndTiming(t *testing.T) {
	for _, backend := range []string{"vllm", "trtllm", "sglang"} {
		cfg := testConfig(200, 64, 40, 8, 400)
		cfg.Engine.Backend = backend
		cfg.Engine.Speculation = &config.Speculation{Kind: "ngram", NumSpeculativeTokens: 4, AcceptanceRates: []float64{0.9, 0.7, 0.5, 0.3}, Seed: 42}
		s := mustRun(t, cfg).Summary
		if s.CompletedRequests != 40 || s.Speculation.Rounds == 0 || s.Speculation.MeanAcceptedLength() <= 1 {
			t.Errorf("%s: completed %d, speculation %+v", backend, s.CompletedRequests, s.Speculation)
		}
	}
	cfg := mustLoad(t, seedDisaggregated, "engine.speculation={kind: ngram, num_speculative_tokens: 2, acceptance_rates: [0.8, 0.5]}",
		"traffic={source: {type: synthetic, input_tokens: 600, output_tokens: 32}, load: {type: concurrency, concurrency: 4}, stop: {requests: 12}}")
	if s := mustRun(t, cfg).Summary; s.CompletedRequests != 12 || s.Speculation.Rounds == 0 {
		t.Errorf("disaggregated: completed %d, speculation %+v", s.CompletedRequests, s.Speculation)
	}

	e2e := func(p float64, spec bool) float64 {
		cfg := testConfig(512, 64, 8, 8, 4000)
		cfg.Engine.Model, cfg.Engine.Hardware = "meta-llama/Meta-Llama-3.1-8B-Instruct", "h100_sxm"
		cfg.Engine.Workers.Aggregated.Timing = config.Timing{Type: config.TimingRoofline}
		if spec {
			cfg.Engine.Speculation = &config.Speculation{Kind: "ngram", NumSpeculativeTokens: 3, AcceptanceRates: []float64{p, p, p}, Seed: 42}
		}
		return mustRun(t, cfg).Summary.E2E.Mean
	}
	base, none, all := e2e(0, false), e2e(0, true), e2e(1, true)
	if !(none >= base && all < base) {
		t.Errorf("roofline mean E2E: %v without speculation, %v with acceptance 0, %v with acceptance 1", base, none, all)
	}
}

// TestSpeculationOpLevel: op_level timing prices verified drafts as tokens of the pass.
func TestSpeculationOpLevel(t *testing.T) {
	db := systemsDB(t)
	e2e := func(p float64, spec bool) float64 {
		cfg := testConfig(512, 64, 8, 8, 4000)
		cfg.Engine.Model, cfg.Engine.Hardware = "meta-llama/Meta-Llama-3.1-8B-Instruct", "h100_sxm"
		cfg.Engine.Workers.Aggregated.Timing = config.Timing{Type: config.TimingDefault, ForwardModel: config.ForwardOpLevel}
		if spec {
			cfg.Engine.Speculation = &config.Speculation{Kind: "ngram", NumSpeculativeTokens: 3, AcceptanceRates: []float64{p, p, p}, Seed: 42}
		}
		res, err := Run(context.Background(), cfg, Options{Systems: db, CheckInvariants: true})
		if err != nil {
			t.Fatal(err)
		}
		checkConservation(t, res)
		return res.Summary.E2E.Mean
	}
	base, none, all := e2e(0, false), e2e(0, true), e2e(1, true)
	if !(none > base && all < base) {
		t.Errorf("op_level mean E2E: %v without speculation, %v with acceptance 0, %v with acceptance 1", base, none, all)
	}
}

// mustJSON is v encoded as JSON.
func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// mtpConfig is DeepSeek-R1 on 8 B200 (TP8, EP8, roofline timing, default KV) serving 24 requests
// of 512 prompt and 256 output tokens at concurrency 8, with speculation spec (none when empty).
func mtpConfig(t *testing.T, spec string) *config.Config {
	t.Helper()
	sets := []string{"engine.model=deepseek-ai/DeepSeek-R1", "engine.hardware=b200_sxm",
		"engine.workers.aggregated.parallelism={replicas: 1, tensor: 8, moe_expert: 8}",
		"engine.workers.aggregated.timing={type: roofline}", "engine.workers.aggregated.kv_cache.capacity={type: default, memory_fraction: 0.9}",
		"traffic.source={type: synthetic, input_tokens: 512, output_tokens: 256}",
		"traffic.load={type: concurrency, concurrency: 8}", "traffic.stop={requests: 24}"}
	if spec != "" {
		sets = append(sets, "engine.speculation="+spec)
	}
	return mustLoad(t, seedSynthetic, sets...)
}

// TestMTPDraftCost: MTP drafting costs GPU time that n-gram drafting does not. With every draft
// rejected both emit one token per round and verify the same drafts, so MTP's TPOT exceeds
// n-gram's by its draft steps: 3 per round, each at least the lm_head's BF16 read on a GPU
// (2 × 7168 × 129280 / 8 bytes at B200's streaming rate, ≥ 0.029 ms) and far less than the round's pass. With
// the acceptance the DeepSeek-V3 report gives for the first draft (0.85) MTP beats plain
// decoding, and its counts show the rounds.
func TestMTPDraftCost(t *testing.T) {
	none := mustRun(t, mtpConfig(t, "")).Summary
	ngram0 := mustRun(t, mtpConfig(t, "{kind: ngram, num_speculative_tokens: 3, acceptance_rates: [0, 0, 0]}")).Summary
	mtp0 := mustRun(t, mtpConfig(t, "{kind: mtp, num_speculative_tokens: 3, acceptance_rates: [0, 0, 0]}")).Summary
	mtp := mustRun(t, mtpConfig(t, "{kind: mtp, num_speculative_tokens: 3, acceptance_rates: [0.85, 0.73, 0.62]}")).Summary
	for _, s := range []*metrics.Summary{none, ngram0, mtp0, mtp} {
		if s.CompletedRequests != 24 || s.TotalOutputTokens != 24*256 {
			t.Fatalf("completed %d requests, %d output tokens; want 24 and %d", s.CompletedRequests, s.TotalOutputTokens, 24*256)
		}
	}
	if d := mtp0.TPOT.Mean - ngram0.TPOT.Mean; !(d > 3*0.029) || !(d < ngram0.TPOT.Mean/3) {
		t.Errorf("MTP's draft steps add %v ms to n-gram's TPOT %v ms; want more than 3 lm_head reads (0.087 ms) and less than a third of it", d, ngram0.TPOT.Mean)
	}
	if !(mtp.TPOT.Mean < none.TPOT.Mean/1.5) {
		t.Errorf("TPOT with MTP at 0.85/0.73/0.62 = %v ms, without speculation %v; want at least 1.5× faster", mtp.TPOT.Mean, none.TPOT.Mean)
	}
	if l := mtp.Map()["mean_accepted_length"].(float64); l < 2.5 || l > 3.2 {
		t.Errorf("mean accepted length %v, want near the expected 1 + 0.85 + 0.85·0.73 + 0.85·0.73·0.62 = 2.85", l)
	}
}

// TestMTPConfigFaults: kind mtp needs a model with an MTP module and a timing that prices it; it
// runs with overlap scheduling (engines overlap the host with MTP drafting), unlike n-gram.
func TestMTPConfigFaults(t *testing.T) {
	const spec = "engine.speculation={kind: mtp, num_speculative_tokens: 2, acceptance_rates: [0.8, 0.6]}"
	for _, c := range []struct {
		sets []string
		msg  string
	}{
		{[]string{spec, "engine.workers.aggregated.timing={type: roofline}", "engine.workers.aggregated.kv_cache.capacity={type: default, memory_fraction: 0.9}"},
			"has no multi-token-prediction module"},
		{[]string{spec}, "timing.type must be default or roofline, got polynomial"},
	} {
		_, err := Run(context.Background(), mustLoad(t, seedSynthetic, c.sets...), Options{})
		var ce *config.Error
		if !errors.As(err, &ce) || ce.Path != "engine.speculation.kind" || !strings.Contains(ce.Msg, c.msg) {
			t.Errorf("%v: %v, want engine.speculation.kind: %q", c.sets, err, c.msg)
		}
	}
	cfg := mtpConfig(t, "{kind: mtp, num_speculative_tokens: 1, acceptance_rates: [0.85]}")
	on := true
	cfg.Engine.OverlapScheduling = &on
	if err := cfg.Validate(); err != nil {
		t.Errorf("mtp with overlap scheduling: %v", err)
	}
	cfg.Engine.Speculation.Kind = config.SpeculationNGram
	if err := cfg.Validate(); err == nil {
		t.Error("ngram with overlap scheduling validated")
	}
}

// TestSpeculationPerUserRateAcceptNone: under fixed timing, acceptance 0 runs exactly as without
// speculation, so the per-user output rate, taken per round (the rounds that continue a pass run
// tallied per pass and size, the others one sample each), equals the plain run's, taken per
// token gap — for every backend and for disaggregated serving (whose first decode round follows
// the hand-off, not a pass run), and with a spilling pass log.
func TestSpeculationPerUserRateAcceptNone(t *testing.T) {
	type run struct {
		name string
		cfg  func() *config.Config
	}
	var runs []run
	for _, backend := range []string{"vllm", "trtllm", "sglang"} {
		runs = append(runs, run{backend, func() *config.Config {
			cfg := testConfig(200, 64, 40, 8, 400)
			cfg.Engine.Backend = backend
			return cfg
		}})
	}
	// One request at a time: 100 × 64 decode passes, past one chunk of 4096, so that the budget
	// of one pass spills.
	runs = append(runs, run{"long", func() *config.Config { return testConfig(16, 64, 100, 1, 400) }})
	runs = append(runs, run{"disaggregated", func() *config.Config {
		return mustLoad(t, seedDisaggregated, "traffic={source: {type: synthetic, input_tokens: 600, output_tokens: 32}, load: {type: concurrency, concurrency: 4}, stop: {requests: 12}}")
	}})
	for _, r := range runs {
		for _, opt := range []Options{{}, {passBudget: 1}} {
			plain := mustRunWith(t, r.cfg(), opt).Summary
			cfg := r.cfg()
			cfg.Engine.Speculation = &config.Speculation{Kind: "ngram", NumSpeculativeTokens: 3, AcceptanceRates: []float64{0, 0, 0}, Seed: 42}
			spec := mustRunWith(t, cfg, opt).Summary
			if spec.OutputTokenThroughputPerUser != plain.OutputTokenThroughputPerUser || spec.ITL != plain.ITL || spec.Speculation.Rounds == 0 {
				t.Errorf("%s (pass budget %d): per-user rate %+v with speculation at acceptance 0, %+v without; ITL %+v and %+v",
					r.name, opt.passBudget, spec.OutputTokenThroughputPerUser, plain.OutputTokenThroughputPerUser, spec.ITL, plain.ITL)
			}
		}
	}
}

// TestRoundTallyMatchesRoundTokens: the engines' per-pass round tallies (engine.Engine.TakeRounds)
// give the same summary as keeping every continuing round on its request
// (engine.Config.KeepRoundTokens, what a run with a virtual-time cap does, which also forms no
// speculative steady run), with the warm-up's requests left out of both: every backend,
// disaggregated serving, and a pass log that spills.
// Acceptance below 1 mixes round sizes, so a pass's counts spread over several sizes.
func TestRoundTallyMatchesRoundTokens(t *testing.T) {
	warm := 0.2
	cases := map[string]func() *config.Config{
		"disaggregated": func() *config.Config {
			return mustLoad(t, seedDisaggregated, "traffic={source: {type: synthetic, input_tokens: 600, output_tokens: 40}, load: {type: concurrency, concurrency: 6, warmup_seconds: 0.2}, stop: {requests: 30}}")
		},
	}
	// A closed loop of three-turn sessions with a cool-down: the turns that arrive after the last
	// session start leave the tally as they leave the statistics.
	cases["cooldown"] = func() *config.Config {
		cfg := testConfig(200, 48, 0, 4, 4000)
		cfg.Traffic.Source = config.Source{Type: config.SourceSyntheticSession, NewInputTokensPerTurn: 100, OutputTokensPerTurn: 48,
			Session: &config.SessionShape{Turns: 3}}
		cfg.Traffic.Stop = config.Stop{Sessions: 12}
		on := true
		cfg.Traffic.Load.WarmupSeconds, cfg.Traffic.Load.Cooldown = &warm, &on
		return cfg
	}
	for _, backend := range []string{"vllm", "trtllm", "sglang"} {
		cases[backend] = func() *config.Config {
			cfg := testConfig(200, 48, 60, 8, 400)
			cfg.Engine.Backend = backend
			cfg.Traffic.Load.WarmupSeconds = &warm
			return cfg
		}
	}
	hostFree := func(s *metrics.Summary) string {
		c := *s
		c.WallTimeMs, c.ProcessedTokensPerS, c.ProcessedOutputTokensPerS = 0, 0, 0
		b, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for name, mk := range cases {
		for _, budget := range []int{0, 1} {
			run := func(keep bool) *Result {
				cfg := mk()
				cfg.Engine.Speculation = &config.Speculation{Kind: "ngram", NumSpeculativeTokens: 3, AcceptanceRates: []float64{0.7, 0.6, 0.5}, Seed: 7}
				opt := Options{CheckInvariants: true, passBudget: budget}
				opt.reference.keepRoundTokens = keep
				res, err := Run(context.Background(), cfg, opt) // not mustRunWith: warm-up tokens leave the summary's count
				if err != nil {
					t.Fatal(err)
				}
				return res
			}
			tallyRes, keptRes := run(false), run(true)
			tally, kept := tallyRes.Summary, keptRes.Summary
			// The tallied runs form speculative steady runs but under SGLang; keeping the
			// rounds per request forms none, so the two runs also compare those with the
			// general path.
			if (tallyRes.steadyPasses == 0) != (name == "sglang") {
				t.Errorf("%s: %d speculative steady passes", name, tallyRes.steadyPasses)
			}
			if keptRes.steadyPasses != 0 {
				t.Errorf("%s: %d steady passes with the rounds kept per request, which form none", name, keptRes.steadyPasses)
			}
			if tally.WarmupRequests == 0 || tally.Speculation.Accepted == 0 || tally.OutputTokenThroughputPerUser.Samples == 0 {
				t.Errorf("%s: %d warm-up requests, %d accepted drafts, %d per-user samples: the case does not exercise the warm-up's rounds",
					name, tally.WarmupRequests, tally.Speculation.Accepted, tally.OutputTokenThroughputPerUser.Samples)
			}
			if name == "cooldown" && tally.CooldownRequests == 0 {
				t.Errorf("cooldown: no cool-down request")
			}
			if a, b := hostFree(tally), hostFree(kept); a != b {
				t.Errorf("%s (pass budget %d): summaries differ: per-user rate %+v tallied, %+v from the requests' rounds",
					name, budget, tally.OutputTokenThroughputPerUser, kept.OutputTokenThroughputPerUser)
			}
		}
	}
}
