package traffic

import (
	"fmt"
	"io"
	"math"
	"strconv"
)

// AppliedSession is one row of an applied_compute_agentic trace (dynosim-spec.md §3.1.4): one
// agentic session of NumTurns assistant turns, each followed by a tool call, then a final
// assistant response; NumTurns + 1 requests in all.
type AppliedSession struct {
	// Line is the 1-based line of the row.
	Line int
	// InputPromptLength is the first request's prompt, in tokens (`input_prompt_length`).
	InputPromptLength int
	// AssistantResponse[k] is turn k's output in tokens (`assistant_response_length`),
	// ToolOutput[k] the tool output appended to the context after it (`tool_call_output_length`),
	// and ToolLatencyMs[k] the tool call's duration before the next request, in ms
	// (`tool_call_latency`, written in seconds). The three have NumTurns entries.
	AssistantResponse, ToolOutput []int
	ToolLatencyMs                 []float64
	// FinalResponse is the final request's output in tokens (`final_assistant_response_length`).
	FinalResponse int
}

// NumTurns is the row's `num_turns`: its tool-using turns, not counting the final response.
func (s *AppliedSession) NumTurns() int { return len(s.AssistantResponse) }

var appliedKeys = []string{"num_turns", "input_prompt_length", "assistant_response_length",
	"tool_call_output_length", "tool_call_latency", "final_assistant_response_length"}

// maxAppliedTurns bounds num_turns, so one row cannot ask for more requests than a run holds.
const maxAppliedTurns = 1 << 24

// LoadAppliedCompute opens the applied_compute_agentic JSONL trace at path and parses it with
// ParseAppliedCompute. An open failure is an *fs.PathError wrapped with context.
func LoadAppliedCompute(path string) ([]AppliedSession, error) {
	f, err := openTrace("applied_compute_agentic", path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ParseAppliedCompute(f, path)
}

// ParseAppliedCompute parses an applied_compute_agentic JSONL trace: one JSON object per line,
// blank lines skipped but counted. Keys, all required:
//
//   - num_turns: integer in [0, 2^24].
//   - input_prompt_length: integer >= 0 (tokens); final_assistant_response_length: integer >= 1.
//   - assistant_response_length: a list of num_turns integers >= 1 (tokens: every request
//     generates at least one); tool_call_output_length: a list of num_turns integers >= 0.
//   - tool_call_latency: list of num_turns numbers in [0, MaxTraceSpanMs/1000] (seconds).
//
// An unknown or repeated key, a null, or a list of the wrong length is an error. Parsing stops at
// the first problem, a *TraceError `<file>:<line>: <field>: <msg>`; a trace with no rows is an
// error.
func ParseAppliedCompute(r io.Reader, file string) ([]AppliedSession, error) {
	var out []AppliedSession
	err := forEachLine(r, file, maxMooncakeLineBytes, func(line []byte, lineNo int) error {
		b := trimJSONSpace(line)
		if len(b) == 0 {
			return nil
		}
		s, err := parseAppliedRow(b, file, lineNo)
		if err != nil {
			return err
		}
		out = append(out, s)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, &TraceError{File: file, Msg: "trace has no rows (an applied_compute_agentic trace needs at least one JSON object line)"}
	}
	return out, nil
}

func parseAppliedRow(b []byte, file string, lineNo int) (AppliedSession, error) {
	s := AppliedSession{Line: lineNo}
	members, err := splitObject(b, file, lineNo)
	if err != nil {
		return s, err
	}
	raw := map[string][]byte{}
	for _, m := range members {
		known := false
		for _, k := range appliedKeys {
			known = known || k == m.key
		}
		if !known {
			return s, unknownKey(file, lineNo, m.key, appliedKeys)
		}
		if m.val == nil {
			return s, &TraceError{File: file, Line: lineNo, Field: m.key, Msg: "is null; it is required"}
		}
		raw[m.key] = m.val
	}
	for _, k := range appliedKeys {
		if raw[k] == nil {
			return s, &TraceError{File: file, Line: lineNo, Field: k, Msg: "missing; every applied_compute_agentic row needs " + k}
		}
	}
	turns, err := readUint(raw["num_turns"], maxAppliedTurns, file, lineNo, "num_turns", "an integer >= 0 (turns)")
	if err != nil {
		return s, err
	}
	n := int(turns)
	tokens := func(key string) (int, error) {
		u, err := readUint(raw[key], math.MaxInt32, file, lineNo, key, "an integer >= 0 (tokens)")
		return int(u), err
	}
	if s.InputPromptLength, err = tokens("input_prompt_length"); err != nil {
		return s, err
	}
	if s.FinalResponse, err = tokens("final_assistant_response_length"); err != nil {
		return s, err
	}
	// A request generates at least one token (engines refuse max_tokens 0), as the Mooncake formats
	// require: one of none has no first token, so no TTFT, ITL or E2E to score.
	zero := func(field string) error {
		return &TraceError{File: file, Line: lineNo, Field: field, Msg: "must be an integer >= 1 (tokens): a request generates at least one token, got 0"}
	}
	if s.FinalResponse == 0 {
		return s, zero("final_assistant_response_length")
	}
	list := func(key, unit string) ([][]byte, error) {
		elems, ok := listElems(raw[key])
		if !ok {
			return nil, &TraceError{File: file, Line: lineNo, Field: key, Msg: fmt.Sprintf("must be a list of num_turns (%d) %s, got %s", n, unit, describeJSON(raw[key]))}
		}
		if len(elems) != n {
			return nil, &TraceError{File: file, Line: lineNo, Field: key, Msg: fmt.Sprintf("has %d entries, but num_turns is %d; the two must be equal", len(elems), n)}
		}
		return elems, nil
	}
	for _, k := range [...]struct {
		key string
		dst *[]int
	}{{"assistant_response_length", &s.AssistantResponse}, {"tool_call_output_length", &s.ToolOutput}} {
		elems, err := list(k.key, "token counts")
		if err != nil {
			return s, err
		}
		*k.dst = make([]int, n)
		for i, e := range elems {
			field := k.key + "[" + strconv.Itoa(i) + "]"
			u, err := readUint(e, math.MaxInt32, file, lineNo, field, "an integer >= 0 (tokens)")
			if err != nil {
				return s, err
			}
			if u == 0 && k.key == "assistant_response_length" {
				return s, zero(field)
			}
			(*k.dst)[i] = int(u)
		}
	}
	elems, err := list("tool_call_latency", "durations in seconds")
	if err != nil {
		return s, err
	}
	s.ToolLatencyMs = make([]float64, n)
	for i, e := range elems {
		sec, err := readNonNegative(e, MaxTraceSpanMs/1000, file, lineNo, "tool_call_latency["+strconv.Itoa(i)+"]", "seconds")
		if err != nil {
			return s, err
		}
		s.ToolLatencyMs[i] = sec * 1000
	}
	return s, nil
}

// FromAppliedCompute builds the workload of an applied_compute_agentic trace: row i becomes
// session `session_<i>` of NumTurns + 1 requests (dynosim-spec.md §3.1.4). Request k < NumTurns
// has prompt I[k] and output AssistantResponse[k]; the final request has prompt I[NumTurns] and
// output FinalResponse, where I[0] = InputPromptLength and I[k+1] = I[k] + AssistantResponse[k]
// + ToolOutput[k]: each prompt is the previous prompt, then its response, then the tool output,
// so a request can reuse the KV of the whole previous request. Request k+1 arrives
// ToolLatencyMs[k] after request k completes. Tokens are fresh per session (sessions share no
// prefix). Sessions carry no start time: the format replays under a concurrency load. A prompt or
// output beyond maxTokens tokens is a *TraceError naming file, the row's line and the field.
func FromAppliedCompute(sessions []AppliedSession, maxTokens int, file string) (*Workload, error) {
	total := 0
	for i := range sessions {
		total += sessions[i].NumTurns() + 1
	}
	w := &Workload{Sessions: make([]Session, len(sessions)), Requests: make([]Request, 0, total)}
	var alloc tokenAllocator
	for si := range sessions {
		s := &sessions[si]
		n := s.NumTurns()
		w.Sessions[si] = Session{Name: sessionName(si), First: int32(len(w.Requests)), Turns: int32(n + 1)}
		pieces := make([]Piece, 0, 2*n+2)
		prompt := int64(s.InputPromptLength)
		pieces = append(pieces, alloc.take(int32(s.InputPromptLength)))
		for k := 0; k <= n; k++ {
			out, field := s.FinalResponse, "final_assistant_response_length"
			if k < n {
				out, field = s.AssistantResponse[k], "assistant_response_length["+strconv.Itoa(k)+"]"
			}
			if prompt > int64(maxTokens) {
				f := "input_prompt_length"
				if k > 0 {
					f = "tool_call_output_length[" + strconv.Itoa(k-1) + "]"
				}
				return nil, &TraceError{File: file, Line: s.Line, Field: f, Msg: fmt.Sprintf(
					"request %d's prompt (the input prompt plus every earlier response and tool output) is %d tokens; must be <= %d", k, prompt, maxTokens)}
			}
			if out > maxTokens {
				return nil, &TraceError{File: file, Line: s.Line, Field: field, Msg: fmt.Sprintf("is %d tokens; must be <= %d", out, maxTokens)}
			}
			pieces = append(pieces, alloc.take(int32(out)))
			req := Request{Session: int32(si), Turn: int32(k), PromptLen: int32(prompt), OutputLen: int32(out),
				Content: pieces[:len(pieces):len(pieces)]}
			if k > 0 {
				req.DelayMs = s.ToolLatencyMs[k-1]
			}
			w.Requests = append(w.Requests, req)
			prompt += int64(out)
			if k < n {
				pieces = append(pieces, alloc.take(int32(s.ToolOutput[k])))
				prompt += int64(s.ToolOutput[k])
			}
		}
	}
	return w, nil
}
