package sim

import (
	"context"
	"math"
	"testing"

	"github.com/servesweep/servesweep/sim/config"
)

// traffic.load.warmup_seconds leaves the requests that arrive before it out of the statistics
// and measures the rates over the steady window. Fixed timing, concurrency 1, 64-token prompts
// and 3 output tokens: a request's first token comes after its 38 ms prefill pass (30 ms prefill
// and 8 ms decode) and two 8 ms decode passes follow, 54 ms in all, so the four requests arrive at
// 0, 54, 108 and 162 ms and complete at 54, 108, 162 and 216 ms. A 60 ms warm-up leaves out the
// first two; the steady window is (60, 162] ms, 102 ms, in which the requests that arrived at 54
// and 108 complete: 2 requests, 6 output and 128 input tokens over 0.102 s.
func TestWarmupAndSteadyWindow(t *testing.T) {
	cfg := testConfig(64, 3, 4, 1, 1000)
	warm := 0.06
	cfg.Traffic.Load.WarmupSeconds = &warm
	res, err := Run(context.Background(), cfg, Options{CheckInvariants: true})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []float64{0, 54, 108, 162} {
		if r := res.Requests[i]; r.ArrivalMs != want || r.TerminalMs != want+54 {
			t.Fatalf("request %d: arrival %v, terminal %v; want %v, %v", i, r.ArrivalMs, r.TerminalMs, want, want+54)
		}
	}
	s := res.Summary
	near := func(got, want float64) bool { return math.Abs(got-want) <= 1e-9*math.Max(1, math.Abs(want)) }
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"warmup_requests", float64(s.WarmupRequests), 2},
		{"warmup_seconds", s.WarmupSeconds, 0.06},
		{"num_requests", float64(s.NumRequests), 2},
		{"completed_requests", float64(s.CompletedRequests), 2},
		{"total_input_tokens", float64(s.TotalInputTokens), 128},
		{"total_output_tokens", float64(s.TotalOutputTokens), 6},
		{"num_ttft_samples", float64(s.NumTTFTSamples), 2},
		{"num_itl_samples", float64(s.ITL.Samples), 4},
		{"mean_itl_ms", s.ITL.Mean, 8},
		{"mean_ttft_ms", s.TTFT.Mean, 38},
		{"steady_window_ms", s.SteadyWindowMs, 102},
		{"duration_ms", s.DurationMs, 216},
		{"request_throughput_rps", s.RequestThroughputRPS, 2 / 0.102},
		{"output_throughput_tok_s", s.OutputThroughputTokS, 6 / 0.102},
		{"input_throughput_tok_s", s.InputThroughputTokS, 128 / 0.102},
		{"total_throughput_tok_s", s.TotalThroughputTokS, 134 / 0.102},
		{"decode_worker_seconds", s.DecodeWorkerSeconds, 0.216},
	} {
		if !near(c.got, c.want) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	m := s.Map()
	if m["warmup_requests"] != int64(2) || m["warmup_seconds"] != 0.06 || m["steady_window_ms"] != 102.0 {
		t.Errorf("keys: warmup_requests %v, warmup_seconds %v, steady_window_ms %v", m["warmup_requests"], m["warmup_seconds"], m["steady_window_ms"])
	}

	// Without a warm-up the three keys are absent and every request counts over the whole run:
	// 4 requests and 12 output tokens over 0.216 s.
	cfg.Traffic.Load.WarmupSeconds = nil
	res = mustRun(t, cfg)
	s = res.Summary
	for _, k := range []string{"warmup_requests", "warmup_seconds", "steady_window_ms"} {
		if _, ok := s.Map()[k]; ok {
			t.Errorf("key %s present without a warm-up", k)
		}
	}
	if s.NumRequests != 4 || s.ITL.Samples != 8 || !near(s.OutputThroughputTokS, 12/0.216) {
		t.Errorf("no warm-up: %d requests, %d ITL samples, %v tok/s; want 4, 8, %v", s.NumRequests, s.ITL.Samples, s.OutputThroughputTokS, 12/0.216)
	}

	// A warm-up past the last arrival leaves no steady window: the rates are the whole run's
	// (every completed request, warm-up ones included, over duration_s) and the window is 0.
	warm = 0.2
	cfg.Traffic.Load.WarmupSeconds = &warm
	res, err = Run(context.Background(), cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s = res.Summary
	if !s.SteadyWindowMissing || s.SteadyWindowMs != 0 || s.WarmupRequests != 4 || s.NumRequests != 0 ||
		!near(s.OutputThroughputTokS, 12/0.216) || !near(s.RequestThroughputRPS, 4/0.216) {
		t.Errorf("warm-up past the last arrival: missing %v, window %v, warm-up %d, requests %d, %v tok/s, %v req/s; want true, 0, 4, 0, %v, %v",
			s.SteadyWindowMissing, s.SteadyWindowMs, s.WarmupRequests, s.NumRequests, s.OutputThroughputTokS, s.RequestThroughputRPS, 12/0.216, 4/0.216)
	}
}

// FirstWave keeps one wave of `concurrency` all at once: requests for a synthetic source,
// sessions for a synthetic-session one (or a mixture of them), whatever the stop and start
// were; MeanE2EMs averages terminal minus arrival over completed requests with a token.
func TestFirstWave(t *testing.T) {
	cfg := testConfig(64, 3, 40, 4, 1000)
	ramp, warm := 0.5, 1.0
	cfg.Traffic.Load.RampSeconds, cfg.Traffic.Load.WarmupSeconds = &ramp, &warm
	cfg.Traffic.Stop = config.Stop{RequestsPerLoadUnit: 10}
	w := FirstWave(cfg)
	if w.Traffic.Stop != (config.Stop{Requests: 4}) || w.Traffic.Load.RampSeconds != nil || w.Traffic.Load.WarmupSeconds != nil {
		t.Errorf("synthetic: stop %+v ramp %v warm-up %v", w.Traffic.Stop, w.Traffic.Load.RampSeconds, w.Traffic.Load.WarmupSeconds)
	}
	if cfg.Traffic.Load.RampSeconds != &ramp || cfg.Traffic.Stop.RequestsPerLoadUnit != 10 {
		t.Error("FirstWave changed its argument")
	}
	sess := *cfg
	sess.Traffic.Source = config.Source{Type: config.SourceMixture, Components: []config.MixtureComponent{
		{Weight: 1, Source: &config.Source{Type: config.SourceSyntheticSession}}}}
	if w := FirstWave(&sess); w.Traffic.Stop != (config.Stop{Sessions: 4}) {
		t.Errorf("session mixture: stop %+v, want 4 sessions", w.Traffic.Stop)
	}
	// Four requests at once on one worker, 64-token prompts, 3 tokens: one 38 ms pass prefills
	// all four (30 ms prefill + 8 ms decode) and two 8 ms decode passes finish them at 54 ms.
	res, err := Run(context.Background(), FirstWave(cfg), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if ms, n := MeanE2EMs(res.Requests); ms != 54 || n != 4 {
		t.Errorf("MeanE2EMs = %v over %d, want 54 over 4", ms, n)
	}
}

// A rejected request is never warm-up: with 64-token prompts against a 32-token context every
// request is rejected at arrival, all before the 60 ms warm-up ends, and each still counts as
// offered and rejected (a deployment that rejects must not read as one that measured nothing).
func TestWarmupKeepsRejections(t *testing.T) {
	cfg := testConfig(64, 3, 4, 1, 1000)
	cfg.Engine.ContextLength = 32
	warm := 0.06
	cfg.Traffic.Load.WarmupSeconds = &warm
	res, err := Run(context.Background(), cfg, Options{CheckInvariants: true})
	if err != nil {
		t.Fatal(err)
	}
	s := res.Summary
	if s.NumRequests != 4 || s.RejectedRequests != 4 || s.WarmupRequests != 0 || s.RejectedByReason["context_length"] != 4 {
		t.Errorf("num_requests %d, rejected %d (%v), warmup_requests %d; want 4, 4 context_length, 0",
			s.NumRequests, s.RejectedRequests, s.RejectedByReason, s.WarmupRequests)
	}
}

// cooldownRun runs the cool-down tests' workload, three two-turn sessions of 64 new prompt and 3
// output tokens under fixed timing (54 ms a turn), with a 60 ms warm-up and traffic.load.cooldown,
// under load (nil: testConfig's concurrency 1), and requires its six turns to arrive at arrivals
// (ms), each done 54 ms later.
func cooldownRun(t *testing.T, load *config.Load, arrivals ...float64) (*config.Config, *Result) {
	t.Helper()
	cfg := testConfig(64, 3, 0, 1, 1000)
	cfg.Traffic.Source = config.Source{Type: config.SourceSyntheticSession, NewInputTokensPerTurn: 64, OutputTokensPerTurn: 3,
		Session: &config.SessionShape{Turns: 2}}
	if load != nil {
		cfg.Traffic.Load = *load
	}
	cfg.Traffic.Stop = config.Stop{Sessions: 3}
	warm := 0.06
	on := true
	cfg.Traffic.Load.WarmupSeconds, cfg.Traffic.Load.Cooldown = &warm, &on
	res, err := Run(context.Background(), cfg, Options{CheckInvariants: true})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range arrivals {
		if r := res.Requests[i]; r.ArrivalMs != want || r.TerminalMs != want+54 {
			t.Fatalf("request %d: arrival %v, terminal %v; want %v, %v", i, r.ArrivalMs, r.TerminalMs, want, want+54)
		}
	}
	return cfg, res
}

// traffic.load.cooldown leaves out the requests that arrive after the closed loop's last session
// start, and ends the steady window there. Fixed timing, concurrency 1, three two-turn sessions
// with no inter-turn delay: every turn takes 54 ms (as above), so the six turns arrive at 0, 54,
// 108, 162, 216 and 270 ms. The last session starts at 216 ms, so the turn at 270 ms is
// cool-down; a 60 ms warm-up leaves out the turns at 0 and 54. Counted: the turns at 108, 162
// and 216 (3 requests, 9 output tokens). The steady window is (60, 216] ms, 156 ms, in which the
// turns that arrived at 54, 108 and 162 complete: 3 requests and 9 output tokens over 0.156 s.
// MeanSlotCycleMs is a session's two turns, 108 ms.
func TestCooldown(t *testing.T) {
	cfg, res := cooldownRun(t, nil, 0, 54, 108, 162, 216, 270)
	var err error
	if ms, n := MeanSlotCycleMs(res.Workload, res.Requests); ms != 108 || n != 3 {
		t.Errorf("MeanSlotCycleMs = %v over %d sessions, want 108 over 3", ms, n)
	}
	s := res.Summary
	near := func(got, want float64) bool { return math.Abs(got-want) <= 1e-9*math.Max(1, math.Abs(want)) }
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"warmup_requests", float64(s.WarmupRequests), 2},
		{"cooldown_requests", float64(s.CooldownRequests), 1},
		{"num_requests", float64(s.NumRequests), 3},
		{"completed_requests", float64(s.CompletedRequests), 3},
		{"total_output_tokens", float64(s.TotalOutputTokens), 9},
		{"num_ttft_samples", float64(s.NumTTFTSamples), 3},
		{"num_itl_samples", float64(s.ITL.Samples), 6},
		{"steady_window_ms", s.SteadyWindowMs, 156},
		{"request_throughput_rps", s.RequestThroughputRPS, 3 / 0.156},
		{"output_throughput_tok_s", s.OutputThroughputTokS, 9 / 0.156},
	} {
		if !near(c.got, c.want) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if m := s.Map(); m["cooldown_requests"] != int64(1) || m["steady_window_ms"] != 156.0 {
		t.Errorf("keys: cooldown_requests %v, steady_window_ms %v", m["cooldown_requests"], m["steady_window_ms"])
	}

	// Without a warm-up the window starts at 0: (0, 216], the turns of 0, 54, 108 and 162
	// complete in it; five turns count.
	cfg.Traffic.Load.WarmupSeconds = nil
	if res, err = Run(context.Background(), cfg, Options{CheckInvariants: true}); err != nil {
		t.Fatal(err)
	}
	s = res.Summary
	if s.CooldownRequests != 1 || s.NumRequests != 5 || s.SteadyWindowMs != 216 || !near(s.RequestThroughputRPS, 4/0.216) {
		t.Errorf("no warm-up: %d cool-down, %d requests, window %v, %v req/s; want 1, 5, 216, %v",
			s.CooldownRequests, s.NumRequests, s.SteadyWindowMs, s.RequestThroughputRPS, 4/0.216)
	}
	// Without cooldown the key is absent and the turn at 270 ms counts.
	cfg.Traffic.Load.Cooldown = nil
	s = mustRun(t, cfg).Summary
	if _, ok := s.Map()["cooldown_requests"]; ok || s.NumRequests != 6 {
		t.Errorf("no cooldown: key present %v, %d requests; want absent, 6", ok, s.NumRequests)
	}
}

// Under an open loop of sessions traffic.load.cooldown leaves out the later turns that arrive
// after the last session start, as a closed loop's drain: no new session joins them. Fixed
// timing (54 ms a turn, as above), three two-turn sessions started at 5 per second, at 0, 200
// and 400 ms, with no inter-turn delay: turns arrive at 0, 54, 200, 254, 400 and 454 ms, one at
// a time. The last session starts at 400 ms, so the turn at 454 ms is cool-down; a 60 ms warm-up
// leaves out those at 0 and 54. Counted: 200, 254 and 400 (3 requests, 9 output tokens). The
// steady window is (60, 400] ms, 340 ms, in which the turns that arrived at 54, 200 and 254
// complete: 3 requests over 0.34 s (without the cool-down, (60, 454]: 4 over 0.394 s).
func TestCooldownOpenLoop(t *testing.T) {
	cfg, res := cooldownRun(t, &config.Load{Type: config.LoadConstantRate, SessionsPerSecond: 5}, 0, 54, 200, 254, 400, 454)
	var err error
	s := res.Summary
	near := func(got, want float64) bool { return math.Abs(got-want) <= 1e-9*math.Max(1, math.Abs(want)) }
	if s.WarmupRequests != 2 || s.CooldownRequests != 1 || s.NumRequests != 3 || s.TotalOutputTokens != 9 ||
		s.SteadyWindowMs != 340 || !near(s.RequestThroughputRPS, 3/0.34) || s.CooldownFromMs != 400 {
		t.Errorf("warm-up %d, cool-down %d (from %v ms), %d requests, %d tokens, window %v ms, %v req/s; want 2, 1 (400), 3, 9, 340, %v",
			s.WarmupRequests, s.CooldownRequests, s.CooldownFromMs, s.NumRequests, s.TotalOutputTokens, s.SteadyWindowMs,
			s.RequestThroughputRPS, 3/0.34)
	}
	cfg.Traffic.Load.Cooldown = nil
	if res, err = Run(context.Background(), cfg, Options{CheckInvariants: true}); err != nil {
		t.Fatal(err)
	}
	s = res.Summary
	if s.CooldownRequests != 0 || s.NumRequests != 4 || s.SteadyWindowMs != 394 || !near(s.RequestThroughputRPS, 4/0.394) {
		t.Errorf("no cooldown: %d cool-down, %d requests, window %v ms, %v req/s; want 0, 4, 394, %v",
			s.CooldownRequests, s.NumRequests, s.SteadyWindowMs, s.RequestThroughputRPS, 4/0.394)
	}
}
