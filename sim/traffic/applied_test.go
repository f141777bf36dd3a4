package traffic

import (
	"errors"
	"strings"
	"testing"
)

// testdata/applied.jsonl: row 1 (line 1) has two tool turns, row 2 (line 3, after a blank
// line) none. Row 1's prompts are 100, 100+3+10 = 113 and 113+2+20 = 135 tokens with outputs 3,
// 2 and 4, and its tool calls take 5 and 10 ms; row 2 is one request of 50 prompt and 2 output
// tokens.
func TestAppliedComputeFixture(t *testing.T) {
	rows, err := LoadAppliedCompute("testdata/applied.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[0].Line != 1 || rows[1].Line != 3 || rows[0].NumTurns() != 2 || rows[1].NumTurns() != 0 {
		t.Fatalf("rows %+v", rows)
	}
	w, err := FromAppliedCompute(rows, 1<<20, "testdata/applied.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		session, turn, prompt, out int32
		delay                      float64
	}{{0, 0, 100, 3, 0}, {0, 1, 113, 2, 5}, {0, 2, 135, 4, 10}, {1, 0, 50, 2, 0}}
	if len(w.Requests) != len(want) || len(w.Sessions) != 2 || w.Sessions[0].Turns != 3 || w.Sessions[1].First != 3 {
		t.Fatalf("%d requests, sessions %+v", len(w.Requests), w.Sessions)
	}
	for i, x := range want {
		r := &w.Requests[i]
		if r.Session != x.session || r.Turn != x.turn || r.PromptLen != x.prompt || r.OutputLen != x.out || r.DelayMs != x.delay {
			t.Errorf("request %d = %+v, want %+v", i, r, x)
		}
		n := int32(0)
		for _, p := range r.Content {
			n += p.Len
		}
		if n != r.PromptLen+r.OutputLen {
			t.Errorf("request %d content holds %d tokens, want %d", i, n, r.PromptLen+r.OutputLen)
		}
	}
	// Turn 1's content starts with all of turn 0's (prompt and output): the KV can be reused.
	if w.Requests[1].Content[0] != w.Requests[0].Content[0] || w.Requests[1].Content[1] != w.Requests[0].Content[1] {
		t.Error("turn 1 does not extend turn 0")
	}
	if w.Sessions[0].Name != "session_0" || w.Sessions[1].Name != "session_1" {
		t.Errorf("session names %q, %q", w.Sessions[0].Name, w.Sessions[1].Name)
	}
}

// Malformed applied_compute_agentic rows name the line and the field.
func TestAppliedComputeErrors(t *testing.T) {
	const good = `"input_prompt_length": 10, "assistant_response_length": [1], "tool_call_output_length": [2], "tool_call_latency": [0.5], "final_assistant_response_length": 3`
	for _, c := range []struct{ row, field, msg string }{
		{`{"num_turns": 1, ` + good + `, "extra": 1}`, "extra", "unknown key"},
		{`{"num_turns": 2, ` + good + `}`, "assistant_response_length", "has 1 entries, but num_turns is 2"},
		{`{"num_turns": 1, ` + strings.Replace(good, "[0.5]", "[-1]", 1) + `}`, "tool_call_latency[0]", "must be a number >= 0 (seconds)"},
		{`{"num_turns": 1, ` + strings.Replace(good, "[2]", "[2.5]", 1) + `}`, "tool_call_output_length[0]", "must be an integer >= 0 (tokens)"},
		{`{"num_turns": 1, ` + strings.Replace(good, `"input_prompt_length": 10`, `"input_prompt_length": null`, 1) + `}`, "input_prompt_length", "is null"},
		{`{` + good + `}`, "num_turns", "missing"},
		{`{"num_turns": 1, "num_turns": 1, ` + good + `}`, "num_turns", "more than once"},
		{`{"num_turns": 1, ` + strings.Replace(good, "[1]", "1", 1) + `}`, "assistant_response_length", "must be a list"},
		{`{"num_turns": 1, ` + strings.Replace(good, `"final_assistant_response_length": 3`, `"final_assistant_response_length": 0`, 1) + `}`,
			"final_assistant_response_length", "must be an integer >= 1 (tokens): a request generates at least one token, got 0"},
		{`{"num_turns": 1, ` + strings.Replace(good, "[1]", "[0]", 1) + `}`, "assistant_response_length[0]", "must be an integer >= 1 (tokens)"},
		{`[1]`, "", "each line must be one JSON object"},
		{`{"num_turns": 1,`, "", "malformed JSON"},
	} {
		_, err := ParseAppliedCompute(strings.NewReader(`{"num_turns": 1, `+good+"}\n"+c.row+"\n"), "a.jsonl")
		var te *TraceError
		if !errors.As(err, &te) || te.File != "a.jsonl" || te.Line != 2 || te.Field != c.field || !strings.Contains(te.Msg, c.msg) {
			t.Errorf("%s: got %v, want a.jsonl:2: %s: ...%s...", c.row, err, c.field, c.msg)
		}
	}
	if _, err := ParseAppliedCompute(strings.NewReader("\n"), "e.jsonl"); err == nil || !strings.Contains(err.Error(), "no rows") {
		t.Errorf("empty trace: %v", err)
	}
	// A prompt that grows past the bound names the tool output that pushed it over.
	rows, err := ParseAppliedCompute(strings.NewReader(`{"num_turns": 1, `+good+"}"), "b.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	_, err = FromAppliedCompute(rows, 12, "b.jsonl")
	var te *TraceError
	if !errors.As(err, &te) || te.Line != 1 || te.Field != "tool_call_output_length[0]" {
		t.Errorf("bound: got %v", err)
	}
}

// FuzzParseAppliedCompute checks that no input panics the parser, and that accepted rows hold
// lists of num_turns entries and non-negative finite latencies.
func FuzzParseAppliedCompute(f *testing.F) {
	f.Add(`{"num_turns": 1, "input_prompt_length": 10, "assistant_response_length": [1], "tool_call_output_length": [2], "tool_call_latency": [0.5], "final_assistant_response_length": 3}`)
	f.Add(`{"num_turns": 0, "input_prompt_length": 0, "assistant_response_length": [], "tool_call_output_length": [], "tool_call_latency": [], "final_assistant_response_length": 1}`)
	f.Add("{\"num_turns\": 1e0}\n\n[]")
	f.Fuzz(func(t *testing.T, in string) {
		rows, err := ParseAppliedCompute(strings.NewReader(in), "f.jsonl")
		if err != nil {
			var te *TraceError
			if !errors.As(err, &te) {
				t.Fatalf("error %v is not a *TraceError", err)
			}
			return
		}
		for _, r := range rows {
			n := r.NumTurns()
			if len(r.ToolOutput) != n || len(r.ToolLatencyMs) != n {
				t.Fatalf("row %+v: lists of different lengths", r)
			}
			for _, l := range r.ToolLatencyMs {
				if !(l >= 0) || l > MaxTraceSpanMs {
					t.Fatalf("latency %v ms", l)
				}
			}
		}
		if _, err := FromAppliedCompute(rows, 1<<20, "f.jsonl"); err != nil {
			var te *TraceError
			if !errors.As(err, &te) {
				t.Fatalf("build error %v is not a *TraceError", err)
			}
		}
	})
}
