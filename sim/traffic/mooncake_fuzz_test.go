package traffic

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func FuzzParseMooncake(f *testing.F) {
	seeds := []string{
		`{"timestamp": 0, "input_length": 6758, "output_length": 500, "hash_ids": [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]}`,
		`{"output_length": 3, "hash_ids": [7, 8, 9]}` + "\n\n" + `{"session_id": 4, "request_id": "r", "output_tokens": 1, "hash_ids": [1], "delay_ms": 2.5}`,
		`{"input_tokens": 0, "output_length": 0, "hash_ids": [], "output_token_ids": []}`,
		`{"output_length": 2, "output_token_ids": [5, 6], "hash_ids": [1.0, 2e0], "priority": null, "policy_class": {"a": "]"}}`,
		"\xef\xbb\xbf" + `{"output_length": 1, "hash_ids": [18446744073709551615]}` + "\r\n",
		`{"output_length": 1, "hash_ids": [1], "input_len": 5}`,
		`{"output_length": -1, "hash_ids": [1]}`,
		`{"output_length": 1.5, "hash_ids": [1]}`,
		`{"input_length": 6000, "output_length": 1, "hash_ids": [1, 2]}`,
		`{"output_length": 1, "hash_ids": [1], "output\u005flength": 2}`,
		`{"output_length": 1,`,
		`[1, 2]`,
		"",
		"\n \n",
	}
	for i, s := range seeds {
		f.Add([]byte(s), uint16(i*100))
	}
	f.Fuzz(func(t *testing.T, data []byte, bsSeed uint16) {
		bs := int(bsSeed%2048) + 1
		rows, err := ParseMooncake(bytes.NewReader(data), "f.jsonl", bs)

		lines := bytes.Split(data, []byte("\n"))
		if len(lines) > 0 {
			lines[0] = bytes.TrimPrefix(lines[0], []byte("\xef\xbb\xbf"))
		}
		if err != nil {
			var te *TraceError
			if !errors.As(err, &te) {
				t.Fatalf("error %T is not a *TraceError: %v", err, err)
			}
			if te.File != "f.jsonl" || !strings.HasPrefix(err.Error(), "f.jsonl") || te.Line < 0 || te.Line > len(lines) {
				t.Fatalf("bad error location: %+v", te)
			}
			if rows != nil {
				t.Fatalf("rows returned with an error")
			}
			return
		}
		if len(rows) == 0 {
			t.Fatalf("no rows and no error")
		}
		nonBlank := 0
		for _, l := range lines {
			if len(bytes.TrimLeft(l, " \t\r\n")) > 0 {
				nonBlank++
			}
		}
		if nonBlank != len(rows) {
			t.Fatalf("%d rows from %d non-blank lines", len(rows), nonBlank)
		}
		prev := 0
		for _, r := range rows {
			if r.Line < 1 || r.Line <= prev || r.Line > len(lines) {
				t.Fatalf("line %d after %d (of %d lines)", r.Line, prev, len(lines))
			}
			prev = r.Line
			if r.OutputLength < 0 || r.InputLength < 0 || r.TimestampMs < 0 || r.DelayMs < 0 {
				t.Fatalf("negative value in %+v", r)
			}
			if !r.HasTimestamp && r.TimestampMs != 0 || !r.HasDelay && r.DelayMs != 0 {
				t.Fatalf("value without its presence flag: %+v", r)
			}
			n := len(r.HashIDs)
			if n == 0 && r.InputLength != 0 {
				t.Fatalf("input %d with no hash ids", r.InputLength)
			}
			if n > 0 && (r.InputLength <= (n-1)*bs || r.InputLength > n*bs) {
				t.Fatalf("input %d inconsistent with %d hash ids of %d tokens", r.InputLength, n, bs)
			}
			if cap(r.HashIDs) != n {
				t.Fatalf("HashIDs capacity %d != length %d", cap(r.HashIDs), n)
			}
			// Cross-check against encoding/json: the line is one object whose hash_ids
			// list has the same length.
			var obj map[string]json.RawMessage
			if err := json.Unmarshal(lines[r.Line-1], &obj); err != nil {
				t.Fatalf("accepted line %d is not a JSON object: %v", r.Line, err)
			}
			var ids []json.RawMessage
			if err := json.Unmarshal(obj["hash_ids"], &ids); err != nil || len(ids) != n {
				t.Fatalf("line %d: encoding/json sees %d hash ids (%v), parser %d", r.Line, len(ids), err, n)
			}
		}
	})
}
