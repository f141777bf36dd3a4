package traffic

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// testdata/dynamo-1.jsonl and dynamo-2.jsonl.gz: a request_payload and a tool_end record
// (skipped), and three requests with an embedded block size of 16. a (line 3 of shard 1, wrapped
// in `event`) has no received time: it starts at 5030 − 30 = 5000 ms. b (line 2 of shard 1)
// starts at 5020 and ends at 5020 + round(20.4) = 5040; c (line 2 of shard 2) starts at 5020 and
// ends at its event time 5100. Ordered by (start, end, id): a, b, c, at 0, 20 and 20 ms.
func TestDynamoFixture(t *testing.T) {
	paths := []string{"testdata/dynamo-1.jsonl", "testdata/dynamo-2.jsonl.gz"}
	rows, bs, err := LoadDynamo(paths, 0)
	if err != nil {
		t.Fatal(err)
	}
	if bs != 16 || len(rows) != 3 {
		t.Fatalf("block size %d, %d rows", bs, len(rows))
	}
	want := []struct {
		id, file   string
		line, in   int
		out        int
		start      uint64
		hashLength int
	}{{"a", paths[0], 3, 16, 3, 5000, 1}, {"b", paths[0], 2, 20, 2, 5020, 2}, {"c", paths[1], 2, 32, 1, 5020, 2}}
	for i, x := range want {
		r := &rows[i]
		if r.RequestID != x.id || r.File != x.file || r.Line != x.line || r.InputLength != x.in || r.OutputLength != x.out ||
			!r.HasTimestamp || r.Timestamp != (TraceTime{Whole: x.start}) || len(r.HashIDs) != x.hashLength || r.SessionID != "" {
			t.Errorf("row %d = %+v, want %+v", i, r, x)
		}
	}
	w := FromTrace(rows, bs, 1)
	for i, start := range []float64{0, 20, 20} {
		if w.Sessions[i].StartMs != start {
			t.Errorf("session %d starts at %v, want %v", i, w.Sessions[i].StartMs, start)
		}
	}
	if _, _, err := LoadDynamo(paths, 16); err != nil {
		t.Errorf("matching block_size: %v", err)
	}
}

// Malformed records name the shard, the line and the field.
func TestDynamoErrors(t *testing.T) {
	const ok = `{"schema": "dynamo.request.trace.v1", "event_type": "request_end", "event_time_unix_ms": 10, "request": {"request_id": "r0", "output_tokens": 1, "replay": {"trace_block_size": 4, "input_length": 4, "input_sequence_hashes": [1]}}}`
	rec := func(old, new string) string {
		return strings.Replace(strings.Replace(ok, `"r0"`, `"r1"`, 1), old, new, 1)
	}
	dir := t.TempDir()
	for _, c := range []struct {
		name, line string
		expected   int
		field, msg string
	}{
		{"schema", rec(`trace.v1"`, `trace.v2"`), 0, "schema", `must be "dynamo.request.trace.v1"`},
		{"event type", rec(`"request_end"`, `"other"`), 0, "event_type", `is "other"`},
		{"event time", rec(`"event_time_unix_ms": 10`, `"event_time_unix_ms": -1`), 0, "event_time_unix_ms", "must be an integer >= 0"},
		{"output", rec(`"output_tokens": 1, `, ``), 0, "request.output_tokens", "missing"},
		{"id", rec(`"r1"`, `""`), 0, "request.request_id", "non-empty string"},
		{"duplicate id", ok, 0, "request.request_id", `"r0" is already the id of the request at`},
		{"expected size", rec(`"trace_block_size": 4`, `"trace_block_size": 4`), 8, "request.replay.trace_block_size", "traffic.source.block_size is 8"},
		{"mixed sizes", rec(`"trace_block_size": 4, "input_length": 4`, `"trace_block_size": 8, "input_length": 8`), 0, "request.replay.trace_block_size", "every record of a trace needs the same block size"},
		{"input length", rec(`"input_length": 4`, `"input_length": 5`), 0, "request.replay.input_length", "allow 1..4"},
		{"hash", rec(`[1]`, `[-1]`), 0, "request.replay.input_sequence_hashes[0]", "must be an integer >= 0"},
		{"replay", rec(`"replay"`, `"replay_x"`), 0, "request.replay", "missing"},
		{"agentic", rec(`"request":`, `"agent_context": {"session_id": "s"}, "request":`), 0, "agent_context", "not supported yet"},
		{"wrapped", `{"event": ` + rec(`"output_tokens": 1`, `"output_tokens": 1.5`) + `}`, 0, "event.request.output_tokens", "must be an integer"},
		{"json", `{"schema": `, 0, "", "malformed JSON"},
		{"received after end", rec(`"output_tokens": 1, `, `"output_tokens": 1, "request_received_ms": 11, `), 0, "request.request_received_ms", "after the record's event_time_unix_ms 10"},
	} {
		path := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_")+".jsonl")
		if err := os.WriteFile(path, []byte(ok+"\n\n"+c.line+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		_, _, err := LoadDynamo([]string{path}, c.expected)
		var te *TraceError
		line := 3
		if c.expected != 0 {
			line = 1 // the first record already disagrees
		}
		if !errors.As(err, &te) || te.File != path || te.Line != line || te.Field != c.field || !strings.Contains(te.Msg, c.msg) {
			t.Errorf("%s: got %v, want line %d, field %s: ...%s...", c.name, err, line, c.field, c.msg)
		}
	}
	// A shard that is not gzip, and a trace without requests.
	bad := filepath.Join(dir, "x.jsonl.gz")
	os.WriteFile(bad, []byte(ok), 0o644)
	if _, _, err := LoadDynamo([]string{bad}, 0); err == nil || !strings.Contains(err.Error(), "not a gzip file") {
		t.Errorf("not gzip: %v", err)
	}
	empty := filepath.Join(dir, "empty.jsonl")
	os.WriteFile(empty, []byte(`{"schema": "dynamo.request.trace.v1", "event_type": "tool_start"}`+"\n"), 0o644)
	if _, _, err := LoadDynamo([]string{empty}, 0); err == nil || !strings.Contains(err.Error(), "no request_end records") {
		t.Errorf("empty: %v", err)
	}
}

// FuzzDynamo checks that no input panics the Dynamo parser, and that accepted rows have hashes
// consistent with their input length at the embedded block size.
func FuzzDynamo(f *testing.F) {
	f.Add(`{"schema": "dynamo.request.trace.v1", "event_type": "request_end", "event_time_unix_ms": 10, "request": {"request_id": "r0", "output_tokens": 1, "total_time_ms": 3, "replay": {"trace_block_size": 4, "input_length": 4, "input_sequence_hashes": [1]}}}`)
	f.Add(`{"event": {"schema": "dynamo.request.trace.v1", "event_type": "tool_end", "event_time_unix_ms": 1}}`)
	f.Add(`{"event": 3, "request": null}`)
	f.Fuzz(func(t *testing.T, in string) {
		p := dynamoParser{ids: map[string]string{}}
		if err := p.parse(strings.NewReader(in), "f.jsonl"); err != nil {
			var te *TraceError
			if !errors.As(err, &te) {
				t.Fatalf("error %v is not a *TraceError", err)
			}
			return
		}
		for _, r := range p.rows {
			n := len(r.row.HashIDs)
			if p.blockSize <= 0 || r.row.InputLength > n*p.blockSize || n > 0 && r.row.InputLength <= (n-1)*p.blockSize {
				t.Fatalf("row %+v at block size %d", r.row, p.blockSize)
			}
		}
	})
}
