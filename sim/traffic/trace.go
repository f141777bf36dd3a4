package traffic

// TraceRow is one parsed line of a Mooncake-format JSONL trace (dynosim-spec.md §3.1.4).
// A row is one request, or one turn of a session when SessionID is set.
type TraceRow struct {
	// Line is the 1-based line number in the file, for error messages and request ids.
	Line int
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
	// HasTimestamp reports whether `timestamp` or `created_time` was present; TimestampMs is it in ms.
	HasTimestamp bool
	TimestampMs  float64
	// DelayMs is `delay` or `delay_ms` (0 when absent): for a later turn of a session, the think
	// time after the previous turn completes.
	DelayMs  float64
	HasDelay bool
}
