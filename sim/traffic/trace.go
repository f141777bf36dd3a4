package traffic

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// TraceRow is one parsed line of a Mooncake-format JSONL trace (dynosim-spec.md §3.1.4).
// A row is one request, or one turn of a session when SessionID is set.
type TraceRow struct {
	// Line is the 1-based line number in the file, for error messages and request ids.
	Line int
	// File is the file the row came from when a trace spans several files (dynamo); "" when
	// the trace is one file.
	File string
	// RequestID is the optional `request_id` ("" when absent).
	RequestID string
	// SessionID is the optional `session_id` ("" when absent: the row is its own session).
	SessionID string
	// InputLength is the prompt length in tokens (`input_length` or `input_tokens`);
	// when absent it is len(HashIDs) × the trace block size.
	InputLength int
	// OutputLength is the requested output length in tokens (`output_length` or `output_tokens`).
	OutputLength int
	// HashIDs holds one id per trace block of prompt tokens, in prompt order.
	HashIDs []uint64
	// HasTimestamp reports whether `timestamp` or `created_time` was present; Timestamp is it,
	// in ms, exactly as written (zero when absent).
	HasTimestamp bool
	Timestamp    TraceTime
	// DelayMs is `delay` or `delay_ms` (0 when absent): for a later turn of a session, the think
	// time after the previous turn completes. It is at most MaxTraceSpanMs.
	DelayMs  float64
	HasDelay bool
	// WaitFor lists the request ids an agentic_mooncake row waits for (`wait_for`), in order;
	// nil for other formats and for roots.
	WaitFor []string
	// ToolWaitMs is an agentic_mooncake row's `tool_wait_ms`: more wait after its dependencies,
	// in ms (0 when absent), at most MaxTraceSpanMs.
	ToolWaitMs float64
}

// TraceTime is an exact non-negative decimal number of milliseconds as written in a trace:
// Whole ms plus the fraction 0.Frac. Timestamps stay exact until FromTrace subtracts the earliest
// one (Minus), so epoch-scale values (1733000000000015 ms needs 51 bits) lose nothing before
// the difference becomes a float64.
type TraceTime struct {
	// Whole is the integer part in ms.
	Whole uint64
	// Frac holds the decimal digits of the fractional part, most significant first ("" for a
	// whole number). The parser drops trailing zeros; the methods accept them.
	Frac string
}

// fracDigit returns digit i of the fraction (0 past its end).
func (t TraceTime) fracDigit(i int) byte {
	if i < len(t.Frac) {
		return t.Frac[i] - '0'
	}
	return 0
}

// Cmp compares t and u exactly: -1 when t < u, 0 when equal, +1 when t > u.
func (t TraceTime) Cmp(u TraceTime) int {
	switch {
	case t.Whole < u.Whole:
		return -1
	case t.Whole > u.Whole:
		return 1
	}
	for i := range max(len(t.Frac), len(u.Frac)) {
		a, b := t.fracDigit(i), u.fracDigit(i)
		switch {
		case a < b:
			return -1
		case a > b:
			return 1
		}
	}
	return 0
}

// Minus returns t − u exactly, or zero when u is later than t (a gap between trace times never
// goes negative).
func (t TraceTime) Minus(u TraceTime) TraceTime {
	if t.Cmp(u) <= 0 {
		return TraceTime{}
	}
	n := max(len(t.Frac), len(u.Frac))
	frac := make([]byte, n)
	borrow := byte(0)
	for i := n - 1; i >= 0; i-- {
		a, b := t.fracDigit(i), u.fracDigit(i)+borrow
		borrow = 0
		if a < b {
			a += 10
			borrow = 1
		}
		frac[i] = '0' + a - b
	}
	for n > 0 && frac[n-1] == '0' {
		n--
	}
	// t > u, so t.Whole >= u.Whole + borrow.
	return TraceTime{Whole: t.Whole - u.Whole - uint64(borrow), Frac: string(frac[:n])}
}

// Ms returns t as the nearest float64 (round half to even).
func (t TraceTime) Ms() float64 {
	if strings.Trim(t.Frac, "0") == "" {
		return float64(t.Whole) // Go rounds integer-to-float conversions to nearest even
	}
	f, _ := strconv.ParseFloat(t.String(), 64) // correctly rounded; cannot fail on digits
	return f
}

// String writes t in decimal, e.g. "1733000000000015" or "12.5".
func (t TraceTime) String() string {
	s := strconv.FormatUint(t.Whole, 10)
	if f := strings.TrimRight(t.Frac, "0"); f != "" {
		s += "." + f
	}
	return s
}

// Trace is a parsed trace, what a workload is built from: Rows for the formats whose rows are
// requests (mooncake, mooncake-delta, agentic_mooncake, dynamo), Applied for
// applied_compute_agentic.
type Trace struct {
	Rows    []TraceRow
	Applied []AppliedSession
	// BlockSize is the trace's hash granularity in tokens per hash id: the configured one, or
	// the one a dynamo trace embeds.
	BlockSize int
}

// openTrace opens the trace file at path for the trace kind named in messages. A path that
// names a directory is an error saying what is wanted (reading it would fail with a read error
// on line 1); an open failure is its *fs.PathError wrapped with the kind.
func openTrace(kind, path string) (*os.File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%s trace: %w", kind, err)
	}
	if st, err := f.Stat(); err == nil && st.IsDir() {
		f.Close()
		return nil, fmt.Errorf("%s trace: %s is a directory; a trace path must name a file (a regular file or a named pipe)", kind, path)
	}
	return f, nil
}
