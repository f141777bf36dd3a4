package sim

import (
	"context"
	"testing"

	"github.com/servesweep/servesweep/sim/config"
	"github.com/servesweep/servesweep/sim/engine"
	"github.com/servesweep/servesweep/sim/timing"
)

// engine.frontend.overhead_ms delays every request's arrival at the workers: TTFT and E2E grow by
// exactly it, ITL does not change, and a closed loop's next request leaves the client when the
// previous one completes. Fixed timing, one request at a time, against the same run without a
// front end.
func TestFrontendOverhead(t *testing.T) {
	run := func(fe float64) *Result {
		cfg := testConfig(64, 4, 3, 1, 1000)
		cfg.Engine.Frontend = &config.Frontend{OverheadMs: &fe}
		res, err := Run(context.Background(), cfg, Options{CheckInvariants: true})
		if err != nil {
			t.Fatal(err)
		}
		checkConservation(t, res)
		return res
	}
	base, res := run(0), run(5)
	arrival := 0.0
	for i := range res.Requests {
		r, b := &res.Requests[i], &base.Requests[i]
		if r.Status != engine.Completed {
			t.Fatalf("request %d: status %v", i, r.Status)
		}
		if r.ArrivalMs != arrival {
			t.Errorf("request %d arrived at %v ms, want %v (the previous completion)", i, r.ArrivalMs, arrival)
		}
		if got, want := r.FirstTokenMs-r.ArrivalMs, b.FirstTokenMs-b.ArrivalMs+5; got != want {
			t.Errorf("request %d: TTFT %v ms, want %v (5 more than without a front end)", i, got, want)
		}
		if got, want := r.TerminalMs-r.ArrivalMs, b.TerminalMs-b.ArrivalMs+5; got != want {
			t.Errorf("request %d: E2E %v ms, want %v", i, got, want)
		}
		arrival = r.TerminalMs
	}
	if got, want := res.Summary.ITL.Mean, base.Summary.ITL.Mean; got != want || got != 8 {
		t.Errorf("mean ITL %v ms, want %v = the 8 ms decode pass (the front end does not touch decoding)", got, want)
	}
}

// The default front-end time is the calibrated one under default timing only: fixed and
// polynomial timing keep the reference's exact times. An explicit value wins, 0 included.
func TestFrontendOverheadDefault(t *testing.T) {
	cfg := testConfig(64, 4, 3, 1, 1000)
	if got := FrontendOverheadMs(cfg); got != 0 {
		t.Errorf("fixed timing: default front end %v ms, want 0", got)
	}
	cfg.Engine.Workers.Aggregated.Timing = config.Timing{Type: config.TimingDefault}
	if got := FrontendOverheadMs(cfg); got != timing.CalibratedFrontendOverheadMs {
		t.Errorf("default timing: default front end %v ms, want %v", got, timing.CalibratedFrontendOverheadMs)
	}
	zero := 0.0
	cfg.Engine.Frontend = &config.Frontend{OverheadMs: &zero}
	if got := FrontendOverheadMs(cfg); got != 0 {
		t.Errorf("explicit 0: front end %v ms, want 0", got)
	}
}

// A request still in the front end when the run stops has been offered: it counts as
// unfinished, never silently dropped.
func TestFrontendRequestsInFlightAtStopAreUnfinished(t *testing.T) {
	cfg := testConfig(64, 4, 2, 2, 1000)
	fe := 100.0
	cfg.Engine.Frontend = &config.Frontend{OverheadMs: &fe}
	cfg.Traffic.Stop.MaxVirtualTimeSeconds = 0.05
	res, err := Run(context.Background(), cfg, Options{CheckInvariants: true})
	if err != nil {
		t.Fatal(err)
	}
	s := res.Summary
	if s.NumRequests != 2 || s.UnfinishedRequests != 2 || s.CompletedRequests != 0 {
		t.Errorf("requests %d, unfinished %d, completed %d; want 2, 2, 0 (both still in the front end at 50 ms)",
			s.NumRequests, s.UnfinishedRequests, s.CompletedRequests)
	}
}
