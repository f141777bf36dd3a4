package sim

import (
	"errors"
	"testing"

	"github.com/servesweep/servesweep/sim/config"
	"github.com/servesweep/servesweep/sim/traffic"
)

// Values beyond the simulator's bounds are config errors naming the field and the bound, not
// truncations, panics or runaway allocations.
func TestCheckTrace(t *testing.T) {
	rows := []traffic.TraceRow{
		{Line: 1, InputLength: 10, OutputLength: 5, HasTimestamp: true},
		{Line: 2, SessionID: "a", InputLength: 10, OutputLength: 5},
	}
	err := checkTrace(rows, "t.jsonl", config.LoadTraceTimestamps)
	var te *traffic.TraceError
	if !errors.As(err, &te) || te.Line != 2 || te.Field != "timestamp" {
		t.Fatalf("missing timestamp: %v", err)
	}
	if err := checkTrace(rows, "t.jsonl", config.LoadConcurrency); err != nil {
		t.Fatalf("concurrency load needs no timestamps: %v", err)
	}
	rows[0].OutputLength = config.MaxTokensPerRequest + 1
	if err := checkTrace(rows, "t.jsonl", config.LoadConcurrency); !errors.As(err, &te) || te.Line != 1 || te.Field != "output_length" {
		t.Fatalf("huge output: %v", err)
	}
	rows[0].OutputLength = 5
	rows[1].HasDelay, rows[1].DelayMs = true, 3
	if err := checkTrace(rows, "t.jsonl", config.LoadConcurrency); !errors.As(err, &te) || te.Field != "delay" {
		t.Fatalf("first-row delay: %v", err)
	}
}
