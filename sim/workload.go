package sim

import (
	"errors"
	"fmt"
	"runtime"

	"github.com/servesweep/servesweep/sim/config"
	"github.com/servesweep/servesweep/sim/traffic"
)

// BuildWorkload builds the sessions and requests cfg.Traffic describes. Trace files are read here;
// a bad trace line is a *traffic.TraceError naming the file and line.
func BuildWorkload(cfg *config.Config) (*traffic.Workload, error) {
	src, load, stop := &cfg.Traffic.Source, &cfg.Traffic.Load, &cfg.Traffic.Stop
	components, weights := []*config.Source{src}, []float64(nil)
	if src.Type == config.SourceMixture {
		components = make([]*config.Source, len(src.Components))
		weights = make([]float64, len(src.Components))
		for i, c := range src.Components {
			components[i], weights[i] = c.Source, c.Weight
		}
	}
	switch components[0].Type {
	case config.SourceSynthetic:
		shapes := make([]traffic.RequestShape, len(components))
		for i, c := range components {
			shapes[i] = traffic.RequestShape{Input: lengthOf(c.InputTokens, c.InputTokensDist),
				Output: lengthOf(c.OutputTokens, c.OutputTokensDist)}
		}
		return traffic.SyntheticMix(countFor(stop.Requests, stop.RequestsPerLoadUnit, load), shapes, weights, src.DrawSeed()), nil
	case config.SourceSyntheticSession:
		shapes := make([]traffic.SessionShape, len(components))
		for i, c := range components {
			sh := c.Session
			shapes[i] = traffic.SessionShape{
				Turns: sh.Turns, NewInput: lengthOf(c.NewInputTokensPerTurn, c.NewInputTokensPerTurnDist),
				Output:            lengthOf(c.OutputTokensPerTurn, c.OutputTokensPerTurnDist),
				SharedPrefixRatio: sh.SharedPrefixRatio, PrefixGroups: sh.PrefixGroups, InterTurnDelayMs: sh.InterTurnDelayMs,
				InterTurnDelayStddevMs: sh.InterTurnDelayStddevMs,
			}
		}
		return traffic.SyntheticSessionsMix(countFor(stop.Sessions, stop.SessionsPerLoadUnit, load), shapes, weights, src.DrawSeed()), nil
	case config.SourceTrace:
		tr, err := LoadTrace(cfg)
		if err != nil {
			return nil, err
		}
		wl, err := TraceWorkload(cfg, tr)
		// The parsed rows, often more memory than the workload built from them, are garbage now:
		// collecting them at once lets the run reuse that memory instead of growing the heap
		// towards twice the workload (a 1,000,000-request trace: hundreds of MB of peak RSS, for
		// one collection of well under a second).
		runtime.GC()
		return wl, err
	}
	return nil, fmt.Errorf("traffic.source.type %q is not supported", components[0].Type)
}

// lengthOf is the token-count distribution of a synthetic source's count n, or of its
// distribution d when the YAML gave one (an omitted max is config.MaxTokensPerRequest).
func lengthOf(n int, d *config.Distribution) traffic.Length {
	if d == nil {
		return traffic.Fixed(n)
	}
	hi := d.Max
	if hi == 0 {
		hi = config.MaxTokensPerRequest
	}
	l := traffic.Length{Min: d.Min, Max: hi, Mean: d.Mean, Stddev: d.Stddev, Values: d.Values, Weights: d.Weights}
	switch d.Distribution {
	case config.DistUniform:
		l.Kind = traffic.LengthUniform
	case config.DistNormal:
		l.Kind = traffic.LengthNormal
	case config.DistLognormal:
		l.Kind = traffic.LengthLognormal
	case config.DistEmpirical:
		l.Kind = traffic.LengthEmpirical
	}
	return l
}

// LoadTrace parses the trace of cfg's trace source (traffic.source.paths in
// traffic.source.format; Mooncake-style rows hashed at traffic.source.block_size tokens per hash
// id). A file that cannot be read at all is a *config.Error on traffic.source.paths; a bad line
// is a *traffic.TraceError naming it. The trace depends only on the paths, format and block size,
// so a sweep may parse the files once and share the result.
func LoadTrace(cfg *config.Config) (*traffic.Trace, error) {
	src := &cfg.Traffic.Source
	tr := &traffic.Trace{BlockSize: src.BlockSize}
	var err error
	switch src.Format {
	case config.FormatAppliedCompute:
		tr.Applied, err = traffic.LoadAppliedCompute(src.Paths[0])
	case config.FormatAgenticMooncake:
		tr.Rows, err = traffic.LoadAgenticMooncake(src.Paths[0], src.BlockSize)
	case config.FormatDynamo:
		tr.Rows, tr.BlockSize, err = traffic.LoadDynamo(src.Paths, src.BlockSize)
	default:
		tr.Rows, err = traffic.LoadMooncake(src.Paths[0], src.BlockSize)
	}
	var te *traffic.TraceError
	if err != nil && !errors.As(err, &te) {
		return nil, &config.Error{File: cfg.File, Path: "traffic.source.paths", Msg: err.Error(), Err: err}
	}
	if err != nil {
		return nil, err
	}
	return tr, nil
}

// TraceWorkload builds the workload of cfg's trace source from its parsed trace (LoadTrace), which
// is read, not modified. A row checkTrace refuses is a *traffic.TraceError; speedup applies only
// to trace_timestamps loads, and traffic.stop.max_trace_seconds keeps the sessions that start
// within that many seconds of trace time (traffic.TraceSegment). A request whose authored arrival (its session's start plus its
// delays, after the speedup) lies beyond config.MaxMs virtual ms is a *traffic.TraceError naming
// its line: past it float64 ms no longer resolve 2 ns, and far past it a forward pass would
// vanish from the latencies.
func TraceWorkload(cfg *config.Config, tr *traffic.Trace) (*traffic.Workload, error) {
	src, load := &cfg.Traffic.Source, &cfg.Traffic.Load
	if src.Format == config.FormatAppliedCompute {
		return appliedWorkload(tr.Applied, src.Paths[0])
	}
	rows := tr.Rows
	agentic := src.Format == config.FormatAgenticMooncake
	if err := checkTrace(rows, src.Paths[0], load.Type, !agentic, src.Format == config.FormatMooncakeDelta); err != nil {
		return nil, err
	}
	if w := cfg.Traffic.Stop.MaxTraceSeconds; w > 0 && !agentic {
		// The trace's segment: the sessions that start in its first w seconds, all their turns.
		rows = traffic.TraceSegment(rows, w)
	}
	speedup := 1.0
	if load.Type == config.LoadTraceTimestamps && load.Speedup > 0 {
		speedup = load.Speedup
	}
	if agentic {
		return traffic.FromAgenticTrace(rows, tr.BlockSize, speedup, config.MaxMs, src.Paths[0])
	}
	var w *traffic.Workload
	switch src.Format {
	case config.FormatMooncakeDelta:
		var err error
		if w, err = traffic.FromDeltaTrace(rows, tr.BlockSize, speedup, config.MaxTokensPerRequest, src.Paths[0]); err != nil {
			return nil, err
		}
	default:
		w = traffic.FromTrace(rows, tr.BlockSize, speedup)
	}
	if at, line := traffic.LatestArrival(rows, w); at > config.MaxMs {
		file := src.Paths[0]
		for i := range rows {
			if rows[i].Line == line && rows[i].File != "" && w.Sessions[i].StartMs == at {
				file = rows[i].File // dynamo: one session per row, the shard named by the row
				break
			}
		}
		msg := fmt.Sprintf("this request arrives at %g virtual ms (its session's start plus the delays of its turns), "+
			"beyond the %g ms simulated time may reach", at, float64(config.MaxMs))
		if speedup != 1 {
			msg += fmt.Sprintf(" (traffic.load.speedup %g divides every trace time; a larger speedup shortens them)", speedup)
		}
		return nil, &traffic.TraceError{File: file, Line: line, Msg: msg}
	}
	return w, nil
}

// appliedWorkload builds the workload of an applied_compute_agentic trace, refusing one with more
// than config.MaxRequests requests.
func appliedWorkload(sessions []traffic.AppliedSession, file string) (*traffic.Workload, error) {
	total := 0
	for i := range sessions {
		if sessions[i].InputPromptLength <= 0 {
			return nil, &traffic.TraceError{File: file, Line: sessions[i].Line, Field: "input_prompt_length",
				Msg: "is 0 tokens: the first request needs a prompt; must be > 0"}
		}
		if total += sessions[i].NumTurns() + 1; total > config.MaxRequests {
			return nil, &traffic.TraceError{File: file, Line: sessions[i].Line, Field: "num_turns",
				Msg: fmt.Sprintf("the rows up to this one expand to %d requests; at most %d fit one run", total, config.MaxRequests)}
		}
	}
	return traffic.FromAppliedCompute(sessions, config.MaxTokensPerRequest, file)
}

// countFor resolves a stop count: the explicit count, or max(1, round(x × load unit)) where the
// load unit is the concurrency or the open-loop rate (dynosim-spec.md §3.1.3).
func countFor(n int, perLoadUnit float64, load *config.Load) int {
	return max(1, config.ResolveCount(n, perLoadUnit, load.Unit()))
}

// checkTrace applies the run-level rules to parsed Mooncake rows: bounded lengths and row count,
// and, when rows form sessions (all formats but agentic_mooncake, whose graph rules
// traffic.FromAgenticTrace checks), under trace_timestamps a timestamp on the first row of every
// session (dynosim-spec.md §3.1.4), and a first row's delay 0 or absent. Errors name the file and
// line.
//
// A request needs a prompt: input_length 0 (or no hash ids without input_length) is refused,
// except on a later turn of a mooncake-delta session (delta), whose prompt is the previous turn's
// prompt and output plus that new input.
func checkTrace(rows []traffic.TraceRow, file, loadType string, sessions, delta bool) error {
	if len(rows) > config.MaxRequests {
		return &traffic.TraceError{File: file, Msg: fmt.Sprintf("has %d rows; at most %d requests fit one run", len(rows), config.MaxRequests)}
	}
	seen := make(map[string]bool)
	last := make(map[string]int) // session → index of its previous row with a timestamp
	for i := range rows {
		r := &rows[i]
		bad := func(field, format string, args ...any) error {
			f := file
			if r.File != "" {
				f = r.File
			}
			return &traffic.TraceError{File: f, Line: r.Line, Field: field, Msg: fmt.Sprintf(format, args...)}
		}
		if r.InputLength > config.MaxTokensPerRequest {
			return bad("input_length", "is %d tokens; must be <= %d", r.InputLength, config.MaxTokensPerRequest)
		}
		if r.OutputLength > config.MaxTokensPerRequest {
			return bad("output_length", "is %d tokens; must be <= %d", r.OutputLength, config.MaxTokensPerRequest)
		}
		first := r.SessionID == "" || !seen[r.SessionID]
		seen[r.SessionID] = true
		if r.InputLength == 0 && (!delta || first) {
			return bad("input_length", "is 0 tokens: a request needs a prompt; must be > 0 (or hash_ids that cover it)")
		}
		if !sessions {
			continue
		}
		if r.SessionID != "" && r.HasTimestamp {
			if j, ok := last[r.SessionID]; ok && !r.HasDelay && r.Timestamp.Cmp(rows[j].Timestamp) < 0 {
				return bad("timestamp", "is %s, before the previous turn of session %q (%s at line %d): a later turn arrives after "+
					"the previous one completes, so its timestamp must not go back (or give its delay)",
					r.Timestamp, r.SessionID, rows[j].Timestamp, rows[j].Line)
			}
			last[r.SessionID] = i
		}
		if !first {
			continue
		}
		if loadType == config.LoadTraceTimestamps && !r.HasTimestamp {
			if r.SessionID == "" {
				return bad("timestamp", "is required under traffic.load.type trace_timestamps on a row without a session_id "+
					"(an empty or null session_id is none: the row is a session of its own)")
			}
			return bad("timestamp", "is required on the first row of a session under traffic.load.type trace_timestamps")
		}
		if r.HasDelay && r.DelayMs != 0 {
			return bad("delay", "must be 0 or absent on the first row of a session, got %g", r.DelayMs)
		}
	}
	return nil
}
