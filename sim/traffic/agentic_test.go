package traffic

import (
	"errors"
	"strings"
	"testing"
)

// testdata/agentic.jsonl: r1 (a root at 1000 ms) → r2 (delay 5 + tool wait 3) and r3 (delay 0);
// r4 waits for both (tool wait 2); x1 is a second root at 1100 ms. Two trajectories: {r1, r2,
// r3, r4} and {x1}. Roots start at 0 and 100 ms (50 ms at speedup 2, when r2's wait is 4 ms).
func TestAgenticGraph(t *testing.T) {
	rows, err := LoadAgenticMooncake("testdata/agentic.jsonl", 16)
	if err != nil {
		t.Fatal(err)
	}
	w, err := FromAgenticTrace(rows, 16, 1, 1e10, "testdata/agentic.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	g := w.Graph
	if g.Trajectories != 2 || !equal32(g.Trajectory, []int32{0, 0, 0, 0, 1}) || !equal32(g.Waits, []int32{0, 1, 1, 2, 0}) {
		t.Fatalf("graph %+v", g)
	}
	next := func(i int) []int32 { return g.Next[g.NextStart[i]:g.NextStart[i+1]] }
	if !equal32(next(0), []int32{1, 2}) || !equal32(next(1), []int32{3}) || !equal32(next(2), []int32{3}) || len(next(3)) != 0 {
		t.Errorf("dependents %v", g.Next)
	}
	for i, want := range []float64{0, 8, 0, 2, 0} {
		if w.Requests[i].DelayMs != want {
			t.Errorf("request %d delay %v, want %v", i, w.Requests[i].DelayMs, want)
		}
	}
	if w.Sessions[0].StartMs != 0 || w.Sessions[4].StartMs != 100 || w.Requests[1].PromptLen != 32 || w.Requests[1].ID != "r2" {
		t.Errorf("sessions %+v", w.Sessions)
	}
	w, err = FromAgenticTrace(rows, 16, 2, 1e10, "testdata/agentic.jsonl")
	if err != nil || w.Sessions[4].StartMs != 50 || w.Requests[1].DelayMs != 4 {
		t.Errorf("speedup 2: %v, %+v", err, w.Sessions[4])
	}
}

func equal32(a, b []int32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Graph errors name the line and the field.
func TestAgenticGraphErrors(t *testing.T) {
	row := func(id, extra string) string {
		return `{"request_id": ` + id + `, "output_length": 1, "hash_ids": [1]` + extra + `}`
	}
	for _, c := range []struct {
		name  string
		lines []string
		line  int
		field string
		msg   string
	}{
		{"unknown id", []string{row(`"a"`, ""), row(`"b"`, `, "wait_for": ["zz"]`)}, 2, "wait_for[0]", `"zz" is the request_id of no row`},
		{"self loop", []string{row(`"a"`, ""), row(`"b"`, `, "wait_for": ["a", "b"]`)}, 2, "wait_for[1]", "cannot wait for itself"},
		{"listed twice", []string{row(`"a"`, ""), row(`"b"`, `, "wait_for": ["a", "a"]`)}, 2, "wait_for[1]", "listed twice"},
		{"cycle", []string{row(`"a"`, ""), row(`"b"`, `, "wait_for": ["d"]`), row(`"c"`, `, "wait_for": ["b", "a"]`), row(`"d"`, `, "wait_for": ["c"]`)},
			2, "wait_for", `cycle ("b" → "d" → "c" → "b"`},
		{"duplicate id", []string{row(`"a"`, ""), row(`"a"`, "")}, 2, "request_id", "already the id of line 1"},
		{"missing id", []string{row(`"a"`, ""), `{"output_length": 1, "hash_ids": [1]}`}, 2, "request_id", "is required"},
		{"root delay", []string{row(`"a"`, ""), row(`"b"`, `, "delay": 3`)}, 2, "delay", "on a root"},
		{"root tool wait", []string{row(`"a"`, ""), row(`7`, `, "tool_wait_ms": 3`)}, 2, "tool_wait_ms", "on a root"},
	} {
		rows, err := ParseAgenticMooncake(strings.NewReader(strings.Join(c.lines, "\n")), "g.jsonl", 16)
		if err == nil {
			_, err = FromAgenticTrace(rows, 16, 1, 1e10, "g.jsonl")
		}
		var te *TraceError
		if !errors.As(err, &te) || te.File != "g.jsonl" || te.Line != c.line || te.Field != c.field || !strings.Contains(te.Msg, c.msg) {
			t.Errorf("%s: got %v, want g.jsonl:%d: %s: ...%s...", c.name, err, c.line, c.field, c.msg)
		}
	}
	// Parse errors of the agentic keys, and a plain Mooncake trace refusing them.
	for _, c := range []struct{ in, field, msg string }{
		{row(`"a"`, `, "wait_for": "b"`), "wait_for", "must be a list of request ids"},
		{row(`"a"`, `, "wait_for": [1.5]`), "wait_for[0]", "must be a string or an integer"},
		{row(`"a"`, `, "tool_wait_ms": -1`), "tool_wait_ms", "must be a number >= 0 (ms)"},
	} {
		_, err := ParseAgenticMooncake(strings.NewReader(c.in), "p.jsonl", 16)
		var te *TraceError
		if !errors.As(err, &te) || te.Line != 1 || te.Field != c.field || !strings.Contains(te.Msg, c.msg) {
			t.Errorf("%s: got %v", c.in, err)
		}
	}
	_, err := ParseMooncake(strings.NewReader(row(`"a"`, `, "wait_for": []`)), "m.jsonl", 16)
	var te *TraceError
	if !errors.As(err, &te) || te.Field != "wait_for" || !strings.Contains(te.Msg, "unknown key") {
		t.Errorf("mooncake with wait_for: %v", err)
	}
}

// FuzzAgenticMooncake checks that no input panics the agentic parser or the graph builder, and
// that an accepted graph is acyclic with every dependency count matching its wait_for.
func FuzzAgenticMooncake(f *testing.F) {
	f.Add(`{"request_id": "a", "output_length": 1, "hash_ids": [1], "timestamp": 3}` + "\n" +
		`{"request_id": "b", "output_length": 1, "hash_ids": [1], "wait_for": ["a"], "delay": 2, "tool_wait_ms": 1}`)
	f.Add(`{"request_id": "a", "output_length": 1, "hash_ids": [], "input_length": 0, "wait_for": ["a"]}`)
	f.Add(`{"request_id": 1, "output_length": 1, "hash_ids": [1], "wait_for": [2]}` + "\n" + `{"request_id": 2, "output_length": 1, "hash_ids": [1], "wait_for": [1]}`)
	f.Fuzz(func(t *testing.T, in string) {
		rows, err := ParseAgenticMooncake(strings.NewReader(in), "f.jsonl", 4)
		if err != nil {
			return
		}
		w, err := FromAgenticTrace(rows, 4, 1, 1e10, "f.jsonl")
		if err != nil {
			var te *TraceError
			if !errors.As(err, &te) {
				t.Fatalf("error %v is not a *TraceError", err)
			}
			return
		}
		g := w.Graph
		left := append([]int32(nil), g.Waits...)
		done := 0
		var queue []int32
		for i := range rows {
			if int(g.Waits[i]) != len(rows[i].WaitFor) {
				t.Fatalf("row %d waits %d, wait_for %v", i, g.Waits[i], rows[i].WaitFor)
			}
			if left[i] == 0 {
				queue = append(queue, int32(i))
			}
		}
		for len(queue) > 0 {
			i := queue[0]
			queue = queue[1:]
			done++
			for _, c := range g.Next[g.NextStart[i]:g.NextStart[i+1]] {
				if left[c]--; left[c] == 0 {
					queue = append(queue, c)
				}
			}
		}
		if done != len(rows) {
			t.Fatalf("accepted graph is not acyclic: %d of %d released", done, len(rows))
		}
	})
}
