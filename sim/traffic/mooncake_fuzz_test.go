package traffic

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/big"
	"strconv"
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
		`{"output_length": 1, "hash_ids": [1], "timestamp": 0}` + "\n" + `{"output_length": 1, "hash_ids": [2], "timestamp": 1.733e18}`,
		`{"output_length": 1, "hash_ids": [1], "timestamp": 1733000000000}` + "\n" + `{"output_length": 1, "hash_ids": [2], "created_time": 1733000000015}`,
		`{"output_length": 1, "hash_ids": [1], "timestamp": 1733000000000000.1}` + "\n" + `{"output_length": 1, "hash_ids": [2], "timestamp": 17330000000000003e-1}`,
		`{"output_length": 1, "hash_ids": [1], "timestamp": 0.00030000000000000003, "delay": 2592000000.0}`,
		`{"output_length": 1, "hash_ids": [1], "timestamp": 1e-1200}` + "\n" + `{"output_length": 1, "hash_ids": [1], "delay_ms": 2.5E+3}`,
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
			if r.OutputLength < 0 || r.InputLength < 0 || r.DelayMs < 0 || r.DelayMs > MaxTraceSpanMs {
				t.Fatalf("value out of range in %+v", r)
			}
			if !r.HasTimestamp && r.Timestamp != (TraceTime{}) || !r.HasDelay && r.DelayMs != 0 {
				t.Fatalf("value without its presence flag: %+v", r)
			}
			if f := r.Timestamp.Frac; strings.Trim(f, "0123456789") != "" || strings.HasSuffix(f, "0") || len(f) > maxTraceTimeDecimals {
				t.Fatalf("line %d: timestamp fraction %q is not trimmed decimal digits", r.Line, f)
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
			// Times: the exact value, rounded once, is what strconv reads from the text.
			for _, k := range []string{"timestamp", "created_time"} {
				if raw := obj[k]; r.HasTimestamp && raw != nil && string(raw) != "null" {
					want, _ := strconv.ParseFloat(string(raw), 64)
					if got := r.Timestamp.Ms(); got != want+0 {
						t.Fatalf("line %d: %s %s reads as %v, strconv says %v", r.Line, k, raw, got, want)
					}
				}
			}
			for _, k := range []string{"delay", "delay_ms"} {
				if raw := obj[k]; r.HasDelay && raw != nil && string(raw) != "null" {
					if want, _ := strconv.ParseFloat(string(raw), 64); r.DelayMs != want+0 {
						t.Fatalf("line %d: %s %s reads as %v, strconv says %v", r.Line, k, raw, r.DelayMs, want)
					}
				}
			}
		}
		// Every pair of timestamps lies within MaxTraceSpanMs, and Cmp and Minus agree with exact
		// rational arithmetic.
		bound := new(big.Rat).SetInt64(MaxTraceSpanMs)
		for i := range rows {
			for j := range rows {
				if !rows[i].HasTimestamp || !rows[j].HasTimestamp || j > i+3 {
					continue
				}
				a, b := rows[i].Timestamp, rows[j].Timestamp
				ra, _ := new(big.Rat).SetString(a.String())
				rb, _ := new(big.Rat).SetString(b.String())
				if a.Cmp(b) != ra.Cmp(rb) {
					t.Fatalf("Cmp(%s, %s) = %d, exact %d", a, b, a.Cmp(b), ra.Cmp(rb))
				}
				d := new(big.Rat).Sub(ra, rb)
				if d.Sign() < 0 {
					d.SetInt64(0)
				}
				rd, _ := new(big.Rat).SetString(a.Minus(b).String())
				if rd.Cmp(d) != 0 || d.Cmp(bound) > 0 {
					t.Fatalf("%s minus %s = %s, exact %s (bound %d)", a, b, a.Minus(b), d.FloatString(30), MaxTraceSpanMs)
				}
			}
		}
	})
}
