package sim

import (
	"fmt"

	"github.com/servesweep/servesweep/sim/config"
	"github.com/servesweep/servesweep/sim/traffic"
)

// checkTrace applies the run-level rules to parsed Mooncake rows: bounded lengths and row count,
// and, under trace_timestamps, a timestamp on the first row of every session (dynosim-spec.md
// §3.1.4); a first row's delay must be 0 or absent. Errors name the file and line.
func checkTrace(rows []traffic.TraceRow, file, loadType string) error {
	if len(rows) > config.MaxRequests {
		return &traffic.TraceError{File: file, Msg: fmt.Sprintf("has %d rows; at most %d requests fit one run", len(rows), config.MaxRequests)}
	}
	seen := make(map[string]bool)
	for i := range rows {
		r := &rows[i]
		bad := func(field, format string, args ...any) error {
			return &traffic.TraceError{File: file, Line: r.Line, Field: field, Msg: fmt.Sprintf(format, args...)}
		}
		if r.InputLength > config.MaxTokensPerRequest {
			return bad("input_length", "is %d tokens; must be <= %d", r.InputLength, config.MaxTokensPerRequest)
		}
		if r.OutputLength > config.MaxTokensPerRequest {
			return bad("output_length", "is %d tokens; must be <= %d", r.OutputLength, config.MaxTokensPerRequest)
		}
		first := r.SessionID == "" || !seen[r.SessionID]
		seen[r.SessionID] = true
		if !first {
			continue
		}
		if loadType == config.LoadTraceTimestamps && !r.HasTimestamp {
			return bad("timestamp", "is required on the first row of a session under traffic.load.type trace_timestamps")
		}
		if r.HasDelay && r.DelayMs != 0 {
			return bad("delay", "must be 0 or absent on the first row of a session, got %g", r.DelayMs)
		}
	}
	return nil
}
