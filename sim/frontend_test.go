package sim

import (
	"context"
	"errors"
	"strings"
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
	// requests.jsonl: dispatched_at_ms is the arrival plus the front-end time, null without one.
	for i, rec := range RequestRecords(res) {
		if got, want := rec["dispatched_at_ms"], rec["arrival_time_ms"].(float64)+5; got != want {
			t.Errorf("record %d: dispatched_at_ms %v, want %v", i, got, want)
		}
	}
	if got := RequestRecords(base)[0]["dispatched_at_ms"]; got != nil {
		t.Errorf("without a front end dispatched_at_ms = %v, want null", got)
	}
	if got, want := res.Summary.ITL.Mean, base.Summary.ITL.Mean; got != want || got != 8 {
		t.Errorf("mean ITL %v ms, want %v = the 8 ms decode pass (the front end does not touch decoding)", got, want)
	}
}

// The default front-end time is the calibrated one under default timing only (op_level's own
// under forward_model op_level): fixed and polynomial timing keep the reference's exact times.
// An explicit value wins, 0 included.
func TestFrontendOverheadDefault(t *testing.T) {
	cfg := testConfig(64, 4, 3, 1, 1000)
	if got := FrontendOverheadMs(cfg); got != 0 {
		t.Errorf("fixed timing: default front end %v ms, want 0", got)
	}
	cfg.Engine.Workers.Aggregated.Timing = config.Timing{Type: config.TimingDefault}
	if got := FrontendOverheadMs(cfg); got != timing.CalibratedFrontendOverheadMs {
		t.Errorf("default timing: default front end %v ms, want %v", got, timing.CalibratedFrontendOverheadMs)
	}
	// op_level has its own, fitted with its own fixed costs.
	cfg.Engine.Workers.Aggregated.Timing.ForwardModel = config.ForwardOpLevel
	if got := FrontendOverheadMs(cfg); got != timing.CalibratedOpLevelFrontendOverheadMs {
		t.Errorf("op_level timing: default front end %v ms, want %v", got, timing.CalibratedOpLevelFrontendOverheadMs)
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

// A shape the model cannot be split into is refused under default timing, naming the
// parallelism field: a tensor degree that does not divide the heads, more stages than layers.
func TestShapeMustFitTheModel(t *testing.T) {
	for _, c := range []struct {
		tensor, pipeline int
		path, msg        string
	}{
		{3, 1, "engine.workers.aggregated.parallelism.tensor", "tensor 3 does not divide meta-llama/Llama-3.1-8B's 32 attention heads; valid: 1, 2, 4, 8, 16, 32"},
		{64, 1, "engine.workers.aggregated.parallelism.tensor", "tensor 64 does not divide"},
		{1, 33, "engine.workers.aggregated.parallelism.pipeline", "pipeline 33 exceeds meta-llama/Llama-3.1-8B's 32 layers"},
	} {
		cfg := testConfig(64, 4, 3, 1, 1000)
		cfg.Engine.Model = "meta-llama/Meta-Llama-3.1-8B-Instruct"
		role := cfg.Engine.Workers.Aggregated
		role.Timing = config.Timing{Type: config.TimingDefault}
		role.Parallelism.Tensor, role.Parallelism.Pipeline = c.tensor, c.pipeline
		err := Check(cfg, nil)
		var ce *config.Error
		if !errors.As(err, &ce) || ce.Path != c.path || !strings.Contains(ce.Msg, c.msg) {
			t.Errorf("TP%d PP%d: %v; want %s: %s", c.tensor, c.pipeline, err, c.path, c.msg)
		}
	}
}
