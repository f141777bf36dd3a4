package main

import (
	"bytes"
	"os"
	"slices"
	"testing"

	"github.com/servesweep/servesweep/sim/traffic"
)

// shipped is the generated trace as the repository holds it.
const shipped = "../chat-trace.jsonl"

// TestShippedTraceIsGenerated regenerates the trace and compares it with the shipped file byte
// for byte, so that neither drifts from the other.
func TestShippedTraceIsGenerated(t *testing.T) {
	want, err := os.ReadFile(shipped)
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	if err := Write(&got, Generate()); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Fatalf("%s differs from the generator's output (%d bytes, want %d); run go generate ./examples and commit the file",
			shipped, got.Len(), len(want))
	}
	if len(want) >= 100<<10 {
		t.Errorf("%s is %d bytes; the shipped trace stays below 100 KiB", shipped, len(want))
	}
}

// TestShippedTraceInvariants reads the shipped trace with the simulator's own Mooncake parser
// and checks what the generator promises: ceil(input_length / 512) hash ids per row, every later
// turn's prompt extending its previous turn's prompt and answer with the same hash ids first,
// timestamps non-decreasing in file order and increasing within a conversation, conversations
// sharing system prompts, and lengths spread over the documented ranges.
func TestShippedTraceInvariants(t *testing.T) {
	rows, err := traffic.LoadMooncake(shipped, BlockSize)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) < 200 || len(rows) > 500 {
		t.Errorf("%d rows; the trace holds a few hundred", len(rows))
	}
	last := map[string]*traffic.TraceRow{}
	firstIDs := map[uint64]int{} // first hash id of a conversation's first prompt -> conversations
	minIn, maxIn, minOut, maxOut := rows[0].InputLength, 0, rows[0].OutputLength, 0
	for i := range rows {
		r := &rows[i]
		if want := (r.InputLength + BlockSize - 1) / BlockSize; len(r.HashIDs) != want {
			t.Errorf("line %d: %d hash ids for %d input tokens, want %d", r.Line, len(r.HashIDs), r.InputLength, want)
		}
		if !r.HasTimestamp || r.SessionID == "" {
			t.Fatalf("line %d: no timestamp or no session_id", r.Line)
		}
		if i > 0 && r.Timestamp.Cmp(rows[i-1].Timestamp) < 0 {
			t.Errorf("line %d: timestamp %s before the previous row's %s", r.Line, r.Timestamp, rows[i-1].Timestamp)
		}
		if p, ok := last[r.SessionID]; ok {
			if !slices.Equal(r.HashIDs[:min(len(p.HashIDs), len(r.HashIDs))], p.HashIDs) {
				t.Errorf("line %d: hash ids %v do not start with the previous turn's %v (line %d)", r.Line, r.HashIDs, p.HashIDs, p.Line)
			}
			if r.InputLength < p.InputLength+p.OutputLength+laterMessage.Min {
				t.Errorf("line %d: prompt of %d tokens, want at least the previous turn's %d + %d + %d",
					r.Line, r.InputLength, p.InputLength, p.OutputLength, laterMessage.Min)
			}
			if r.Timestamp.Cmp(p.Timestamp) <= 0 {
				t.Errorf("line %d: turn at %s, not after its previous turn's %s", r.Line, r.Timestamp, p.Timestamp)
			}
		} else if len(r.HashIDs) > 0 {
			firstIDs[r.HashIDs[0]]++
		}
		last[r.SessionID] = r
		minIn, maxIn = min(minIn, r.InputLength), max(maxIn, r.InputLength)
		minOut, maxOut = min(minOut, r.OutputLength), max(maxOut, r.OutputLength)
		if r.InputLength > maxPromptTokens || r.OutputLength < answer.Min || r.OutputLength > answer.Max {
			t.Errorf("line %d: %d input, %d output tokens; want at most %d, and [%d, %d]",
				r.Line, r.InputLength, r.OutputLength, maxPromptTokens, answer.Min, answer.Max)
		}
	}
	if len(last) != conversations {
		t.Errorf("%d conversations, want %d", len(last), conversations)
	}
	// The system prompts' first ids (0, 2, 5 and 9) open many conversations each.
	for _, id := range []uint64{0, 2, 5, 9} {
		if firstIDs[id] < 3 {
			t.Errorf("system prompt at hash id %d opens %d conversations, want several", id, firstIDs[id])
		}
	}
	if minIn >= 500 || maxIn < 10000 || minOut >= 100 || maxOut < 900 {
		t.Errorf("input lengths [%d, %d], output lengths [%d, %d]: want hundreds to tens of thousands, and tens to about 1,000",
			minIn, maxIn, minOut, maxOut)
	}
	if span := rows[len(rows)-1].Timestamp.Ms(); span < 120_000 || span > 600_000 {
		t.Errorf("arrivals span %.0f ms; want a few minutes", span)
	}
}

// TestGenerateIsDeterministic checks that two generations in one process are equal.
func TestGenerateIsDeterministic(t *testing.T) {
	a, b := Generate(), Generate()
	if !slices.EqualFunc(a, b, func(x, y Row) bool {
		return x.TimestampMs == y.TimestampMs && x.Conversation == y.Conversation && x.Turn == y.Turn &&
			x.InputLength == y.InputLength && x.OutputLength == y.OutputLength && slices.Equal(x.HashIDs, y.HashIDs)
	}) {
		t.Fatal("two generations differ")
	}
}
