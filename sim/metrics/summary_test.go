package metrics

import (
	"math"
	"testing"

	"github.com/servesweep/servesweep/sim/engine"
)

// A run whose completed requests all finished at 0 ms divides its rates by the 1e-9 s floor:
// 2 requests of 100 prompt and 1 output token give 2e9 requests/s and 2e9 output tokens/s, which
// prediction.json keeps, flagged by ThroughputsFloored. A run of 62 ms, or one in which nothing
// completed, is not floored.
func TestDurationFloored(t *testing.T) {
	done := func(terminalMs float64) engine.Request {
		return engine.Request{PromptLen: 100, Status: engine.Completed, Generated: 1,
			FirstTokenMs: terminalMs, LastTokenMs: terminalMs, TerminalMs: terminalMs}
	}
	build := func(in *Input) *Summary {
		t.Helper()
		s, err := Build(in)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	s := build(&Input{Requests: []engine.Request{done(0), done(0)}, DecodeWorkers: 1, DecodeGPUsPerWorker: 1})
	rel := func(got, want float64) bool { return math.Abs(got-want) <= 1e-12*want }
	if !s.ThroughputsFloored() || s.DurationMs != 0 || !rel(s.RequestThroughputRPS, 2e9) || !rel(s.OutputThroughputTokS, 2e9) ||
		!rel(s.TotalThroughputTokS, 202e9) {
		t.Errorf("zero duration: floored %v, duration %v, rps %v, output %v, total %v; want true, 0, 2e9, 2e9, 2.02e11",
			s.ThroughputsFloored(), s.DurationMs, s.RequestThroughputRPS, s.OutputThroughputTokS, s.TotalThroughputTokS)
	}
	if s := build(&Input{Requests: []engine.Request{done(62)}}); s.ThroughputsFloored() || s.RequestThroughputRPS != 1/0.062 {
		t.Errorf("62 ms run: floored %v, rps %v; want false, 1/0.062", s.ThroughputsFloored(), s.RequestThroughputRPS)
	}
	if s := build(&Input{Requests: []engine.Request{{Status: engine.Rejected, TerminalMs: 0}}}); s.ThroughputsFloored() {
		t.Error("a run with no completed request is reported as floored")
	}
	for _, c := range []struct {
		completed  int64
		durationMs float64
		want       bool
	}{{1, 0, true}, {1, 0.0000009, true}, {1, 0.000002, false}, {1, 0.001, false}, {0, 0, false}} { // 1e-9 s = 1e-6 ms
		if got := DurationFloored(c.completed, c.durationMs); got != c.want {
			t.Errorf("DurationFloored(%d, %v) = %v, want %v", c.completed, c.durationMs, got, c.want)
		}
	}
}
