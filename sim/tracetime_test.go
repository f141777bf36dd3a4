package sim

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/servesweep/servesweep/sim/config"
	"github.com/servesweep/servesweep/sim/traffic"
)

// traceTestConfig replays the trace at path on one aggregated worker with fixed timing: a pass
// costs prefill_ms when it holds prefill work plus decode_ms when it holds decoding requests.
func traceTestConfig(path string, prefillMs, decodeMs, speedup float64) *config.Config {
	cfg := testConfig(0, 0, 0, 1, 100)
	cfg.Traffic = config.Traffic{
		Source: config.Source{Type: config.SourceTrace, Format: "mooncake", Paths: []string{path}, BlockSize: 16},
		Load:   config.Load{Type: config.LoadTraceTimestamps, Speedup: speedup},
	}
	cfg.Engine.Workers.Aggregated.Timing = config.Timing{Type: config.TimingFixed, PrefillMs: f64(prefillMs), DecodeMs: f64(decodeMs)}
	return cfg
}

func writeTrace(t *testing.T, lines ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "trace.jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// A second timestamp in epoch nanoseconds after a first of 0 is refused, naming line 2 and the
// unit, instead of running with every latency lost to float64 spacing (256 ms at 1.7e18).
func TestTraceTimestampInWrongUnit(t *testing.T) {
	path := writeTrace(t,
		`{"output_length": 2, "hash_ids": [1], "timestamp": 0}`,
		`{"output_length": 2, "hash_ids": [2], "timestamp": 1.733e18}`)
	_, err := BuildWorkload(traceTestConfig(path, 10, 5, 1))
	var te *traffic.TraceError
	if !errors.As(err, &te) || te.File != path || te.Line != 2 || te.Field != "timestamp" ||
		!strings.Contains(te.Msg, "the timestamp unit is likely wrong (Mooncake timestamps are milliseconds)") {
		t.Fatalf("got %v, want a TraceError on line 2 naming the unit", err)
	}
}

// Epoch-ms timestamps replay from 0: the first request arrives at 0, the second at 15 ms. With
// prefill 10 ms and decode 5 ms: request 1's first pass (prefill + decode) ends at 15 (TTFT 15);
// request 2 arrives as it ends and joins the next pass, which carries its prefill and request 1's
// decode and so costs 15: at 30 request 1 finishes (E2E 30, gap 15) and request 2 emits its
// first token (TTFT 15); a decode pass of 5 ends request 2 at 35 (E2E 20, gap 5).
func TestTraceEpochMsRun(t *testing.T) {
	path := writeTrace(t,
		`{"output_length": 2, "hash_ids": [1], "timestamp": 1733000000000}`,
		`{"output_length": 2, "hash_ids": [2], "timestamp": 1733000000015}`)
	cfg := traceTestConfig(path, 10, 5, 1)
	wl, err := BuildWorkload(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if wl.Sessions[0].StartMs != 0 || wl.Sessions[1].StartMs != 15 {
		t.Fatalf("arrivals %v, %v ms; want 0 and 15", wl.Sessions[0].StartMs, wl.Sessions[1].StartMs)
	}
	res, err := Run(t.Context(), cfg, Options{Workload: wl, CheckInvariants: true})
	if err != nil {
		t.Fatal(err)
	}
	checkConservation(t, res)
	s := res.Summary
	for name, c := range map[string]struct{ got, want float64 }{
		"ttft min": {s.TTFT.Min, 15}, "ttft max": {s.TTFT.Max, 15},
		"e2e min": {s.E2E.Min, 20}, "e2e max": {s.E2E.Max, 30},
		"itl min": {s.ITL.Min, 5}, "itl max": {s.ITL.Max, 15}, "itl mean": {s.ITL.Mean, 10},
		"duration": {s.DurationMs, 35},
	} {
		if !near(c.got, c.want) {
			t.Errorf("%s = %v ms, want %v", name, c.got, c.want)
		}
	}
}

// An authored arrival beyond config.MaxMs virtual ms is refused naming its line: through chained session
// delays, or through a speedup below 1 that stretches the trace.
func TestTraceArrivalBeyondMaxMs(t *testing.T) {
	// Session s: 0, then four delays of 2,592,000,000 ms: the fifth turn (line 5) arrives at
	// 10,368,000,000 ms > 1e10.
	const turn = `{"output_length": 1, "hash_ids": [1], "session_id": "s", "delay": 2592000000}`
	path := writeTrace(t, `{"output_length": 1, "hash_ids": [1], "session_id": "s", "timestamp": 0}`, turn, turn, turn, turn)
	_, err := BuildWorkload(traceTestConfig(path, 10, 5, 1))
	var te *traffic.TraceError
	const want = "this request arrives at 1.0368e+10 virtual ms (its session's start plus the delays of its turns), beyond the 1e+10 ms simulated time may reach"
	if !errors.As(err, &te) || te.Line != 5 || te.Msg != want {
		t.Errorf("chained delays: got %v, want line 5: %s", err, want)
	}

	// 2,592,000,000 ms apart at speedup 0.25: the second row arrives at 10,368,000,000 ms.
	path = writeTrace(t, `{"output_length": 1, "hash_ids": [1], "timestamp": 0}`, `{"output_length": 1, "hash_ids": [1], "timestamp": 2592000000}`)
	_, err = BuildWorkload(traceTestConfig(path, 10, 5, 0.25))
	if !errors.As(err, &te) || te.Line != 2 || te.Msg != "this request arrives at 1.0368e+10 virtual ms (its session's start plus the delays of its turns), "+
		"beyond the 1e+10 ms simulated time may reach (traffic.load.speedup 0.25 divides every trace time; a larger speedup shortens them)" {
		t.Errorf("speedup 0.25: got %v", err)
	}
	// At speedup 0.5 it arrives at 5,184,000,000 ms, within the bound.
	wl, err := BuildWorkload(traceTestConfig(path, 10, 5, 0.5))
	if err != nil || wl.Sessions[1].StartMs != 5184000000 {
		t.Errorf("speedup 0.5: %v", err)
	}
}

// A row without a timestamp under trace_timestamps is refused naming line and field; when its
// session_id is empty or null the message says that the row is a session of its own, and a
// later turn of a named session needs none.
func TestTraceTimestampRequiredMessages(t *testing.T) {
	for _, c := range []struct {
		row, want string
	}{
		{`{"output_length": 2, "hash_ids": [2], "session_id": ""}`, "on a row without a session_id (an empty or null session_id is none"},
		{`{"output_length": 2, "hash_ids": [2], "session_id": null}`, "on a row without a session_id (an empty or null session_id is none"},
		{`{"output_length": 2, "hash_ids": [2], "session_id": "b"}`, "is required on the first row of a session"},
	} {
		path := writeTrace(t, `{"output_length": 2, "hash_ids": [1], "timestamp": 0, "session_id": "a"}`, c.row)
		_, err := BuildWorkload(traceTestConfig(path, 10, 5, 1))
		var te *traffic.TraceError
		if !errors.As(err, &te) || te.Line != 2 || te.Field != "timestamp" || !strings.Contains(te.Msg, c.want) {
			t.Errorf("row %s: got %v, want a TraceError on line 2 saying %q", c.row, err, c.want)
		}
	}
	path := writeTrace(t, `{"output_length": 2, "hash_ids": [1], "timestamp": 0, "session_id": "a"}`,
		`{"output_length": 2, "hash_ids": [1, 2], "session_id": "a"}`)
	if _, err := BuildWorkload(traceTestConfig(path, 10, 5, 1)); err != nil {
		t.Errorf("a later turn without a timestamp: %v", err)
	}
}

// traffic.stop.max_trace_seconds replays the sessions that start within that much trace time,
// the same requests at any speedup, and the run lasts until they finish; with
// max_virtual_time_seconds as well the clock still cuts it there.
func TestTraceSegmentStop(t *testing.T) {
	path := writeTrace(t,
		`{"output_length": 4, "hash_ids": [1], "timestamp": 0}`,
		`{"output_length": 4, "hash_ids": [2], "timestamp": 1000}`,
		`{"output_length": 4, "hash_ids": [3], "timestamp": 2000}`,
		`{"output_length": 4, "hash_ids": [4], "timestamp": 3000}`)
	for _, c := range []struct {
		speedup, vtime                float64
		offered, unfinished, duration int64
	}{
		// Requests at 0, 1 and 2 s of trace time; each lives 30 ms (duration_ms runs to the
		// last completion).
		{1, 0, 3, 0, 2030},
		{4, 0, 3, 0, 530},
		{0.5, 0, 3, 0, 4030},
		// Cut at 4.01 s: the third request arrived at 4 s and is in flight.
		{0.5, 4.01, 3, 1, 2030},
	} {
		cfg := traceTestConfig(path, 10, 5, c.speedup)
		cfg.Traffic.Stop = config.Stop{MaxTraceSeconds: 2, MaxVirtualTimeSeconds: c.vtime}
		res, err := Run(t.Context(), cfg, Options{CheckInvariants: true})
		if err != nil {
			t.Fatal(err)
		}
		s := res.Summary
		if s.NumRequests != c.offered || s.UnfinishedRequests != c.unfinished || !near(s.DurationMs, float64(c.duration)) {
			t.Errorf("speedup %g, stop %g s: %d offered, %d unfinished over %v ms; want %d, %d over %d", c.speedup, c.vtime,
				s.NumRequests, s.UnfinishedRequests, s.DurationMs, c.offered, c.unfinished, c.duration)
		}
	}
}
