package traffic

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

const realMooncakeTrace = "../../../shared/data/traces/mooncake_conversation_trace.jsonl"

func TestParseMooncakeGood(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		bs    int
		want  []TraceRow
		check func(t *testing.T, rows []TraceRow)
	}{
		{
			name: "full row",
			in:   `{"timestamp": 0, "input_length": 6758, "output_length": 500, "hash_ids": [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]}`,
			bs:   512,
			want: []TraceRow{{Line: 1, InputLength: 6758, OutputLength: 500,
				HashIDs: []uint64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13}, HasTimestamp: true}},
		},
		{
			name: "input defaults to hash_ids capacity",
			in:   `{"output_length": 3, "hash_ids": [7, 8, 9]}`,
			bs:   16,
			want: []TraceRow{{Line: 1, InputLength: 48, OutputLength: 3, HashIDs: []uint64{7, 8, 9}}},
		},
		{
			name: "empty hash_ids and no input gives input 0",
			in:   `{"output_tokens": 1, "hash_ids": []}`,
			bs:   512,
			want: []TraceRow{{Line: 1, OutputLength: 1}},
		},
		{
			name: "empty hash_ids with explicit input 0",
			in:   `{"input_tokens": 0, "output_length": 1, "hash_ids": []}`,
			bs:   512,
			want: []TraceRow{{Line: 1, OutputLength: 1}},
		},
		{
			name: "aliases and integer ids",
			in: `{"request_id": 17, "session_id": 99999999999999999999999, "input_tokens": 5, "output_tokens": 2,` +
				` "hash_ids": [18446744073709551615], "created_time": 12.5, "delay_ms": 3}`,
			bs: 8,
			want: []TraceRow{{Line: 1, RequestID: "17", SessionID: "99999999999999999999999", InputLength: 5,
				OutputLength: 2, HashIDs: []uint64{18446744073709551615}, HasTimestamp: true, Timestamp: TraceTime{Whole: 12, Frac: "5"},
				DelayMs: 3, HasDelay: true}},
		},
		{
			name: "string ids with escapes, ignored metadata",
			in: `{"request_id": "r\u00e9q\"1", "session_id": "s-1", "output_length": 2, "hash_ids": [1],` +
				` "priority": 3, "strict_priority": true, "policy_class": {"x": [1, "]"]}, "delay": 0}`,
			bs: 4,
			want: []TraceRow{{Line: 1, RequestID: "réq\"1", SessionID: "s-1", InputLength: 4, OutputLength: 2,
				HashIDs: []uint64{1}, HasDelay: true}},
		},
		{
			name: "float-form whole numbers are accepted as integers",
			in:   `{"input_length": 2.0, "output_length": 1e1, "hash_ids": [3.0], "request_id": 4.0}`,
			bs:   2,
			want: []TraceRow{{Line: 1, RequestID: "4", InputLength: 2, OutputLength: 10, HashIDs: []uint64{3}}},
		},
		{
			name: "partial last block bounds",
			in: `{"input_length": 9, "output_length": 1, "hash_ids": [1, 2, 3]}` + "\n" +
				`{"input_length": 12, "output_length": 1, "hash_ids": [1, 2, 3]}`,
			bs: 4,
			want: []TraceRow{
				{Line: 1, InputLength: 9, OutputLength: 1, HashIDs: []uint64{1, 2, 3}},
				{Line: 2, InputLength: 12, OutputLength: 1, HashIDs: []uint64{1, 2, 3}},
			},
		},
		{
			name: "blank lines are skipped but counted; CRLF; BOM; no final newline",
			in: "\xef\xbb\xbf\n  \t\r\n" + `{"output_length": 1, "hash_ids": [5]}` + "\r\n\n" +
				`{"output_length": 2, "hash_ids": [6], "timestamp": 10}`,
			bs: 1,
			want: []TraceRow{
				{Line: 3, InputLength: 1, OutputLength: 1, HashIDs: []uint64{5}},
				{Line: 5, InputLength: 1, OutputLength: 2, HashIDs: []uint64{6}, HasTimestamp: true, Timestamp: TraceTime{Whole: 10}},
			},
		},
		{
			name: "null is absent for optional keys",
			in: `{"request_id": null, "session_id": null, "input_length": null, "output_length": 1, "hash_ids": [1],` +
				` "timestamp": null, "created_time": 4, "delay": null, "output_token_ids": null}`,
			bs:   2,
			want: []TraceRow{{Line: 1, InputLength: 2, OutputLength: 1, HashIDs: []uint64{1}, HasTimestamp: true, Timestamp: TraceTime{Whole: 4}}},
		},
		{
			name: "output_token_ids of the right length",
			in:   `{"output_length": 3, "output_token_ids": [1, 2, 3], "hash_ids": [1]}` + "\n" + `{"output_length": 1, "output_token_ids": [7], "hash_ids": [1]}`,
			bs:   2,
			want: []TraceRow{
				{Line: 1, InputLength: 2, OutputLength: 3, HashIDs: []uint64{1}},
				{Line: 2, InputLength: 2, OutputLength: 1, HashIDs: []uint64{1}},
			},
		},
		{
			name: "whitespace inside the object",
			in:   " { \"output_length\" :1 ,\t\"hash_ids\" : [ 1 , 2 ] } ",
			bs:   2,
			want: []TraceRow{{Line: 1, InputLength: 4, OutputLength: 1, HashIDs: []uint64{1, 2}}},
		},
		{
			name: "epoch-ms timestamps and times at the bounds are exact",
			in: `{"output_length": 1, "hash_ids": [1], "timestamp": 1733000000000}` + "\n" +
				`{"output_length": 1, "hash_ids": [2], "created_time": 1.733000000015e12, "delay": 2592000000}` + "\n" +
				`{"output_length": 1, "hash_ids": [3], "timestamp": 1735592000000.000, "delay_ms": 0.25}`,
			bs: 2,
			want: []TraceRow{
				{Line: 1, InputLength: 2, OutputLength: 1, HashIDs: []uint64{1}, HasTimestamp: true, Timestamp: TraceTime{Whole: 1733000000000}},
				{Line: 2, InputLength: 2, OutputLength: 1, HashIDs: []uint64{2}, HasTimestamp: true, Timestamp: TraceTime{Whole: 1733000000015},
					HasDelay: true, DelayMs: 2592000000},
				{Line: 3, InputLength: 2, OutputLength: 1, HashIDs: []uint64{3}, HasTimestamp: true, Timestamp: TraceTime{Whole: 1735592000000},
					HasDelay: true, DelayMs: 0.25},
			},
		},
		{
			name: "negative zero reads as zero",
			in:   `{"output_length": 1, "input_length": -0, "hash_ids": [], "timestamp": -0.0}`,
			bs:   2,
			check: func(t *testing.T, rows []TraceRow) {
				if rows[0].InputLength != 0 || !rows[0].HasTimestamp || rows[0].Timestamp != (TraceTime{}) {
					t.Errorf("got %+v", rows[0])
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rows, err := ParseMooncake(strings.NewReader(tc.in), "t.jsonl", tc.bs)
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if tc.check != nil {
				tc.check(t, rows)
				return
			}
			if !reflect.DeepEqual(rows, tc.want) {
				t.Errorf("rows\n got %+v\nwant %+v", rows, tc.want)
			}
		})
	}
}

func TestParseMooncakeBad(t *testing.T) {
	const valid = "request_id, session_id, input_length, input_tokens, output_length, output_tokens, " +
		"output_token_ids, hash_ids, timestamp, created_time, delay, delay_ms, priority, strict_priority, policy_class"
	ok := `{"output_length": 1, "hash_ids": [1]}` + "\n"
	tests := []struct {
		name, in string
		bs       int
		line     int
		field    string
		want     string // full error text
	}{
		{"empty input", "", 512, 0, "", "t.jsonl: trace has no rows (a Mooncake trace needs at least one JSON object line)"},
		{"blank lines only", "\n  \n\r\n", 512, 0, "", "t.jsonl: trace has no rows (a Mooncake trace needs at least one JSON object line)"},
		{"gzip-compressed", "\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03", 512, 1, "",
			"t.jsonl:1: the file is gzip-compressed; this trace format is read as plain JSONL: decompress it first (gunzip)"},
		{"malformed JSON", ok + `{"output_length": 1,` + "\n", 512, 2, "",
			"t.jsonl:2: malformed JSON: unexpected end of JSON input (at byte 20 of the line); each line must be one JSON object"},
		{"bad character", ok + "\n" + `{"output_length": x}`, 512, 3, "",
			"t.jsonl:3: malformed JSON: invalid character 'x' looking for beginning of value (at byte 19 of the line); each line must be one JSON object"},
		{"two objects on a line", `{"output_length": 1, "hash_ids": [1]} {}`, 512, 1, "",
			"t.jsonl:1: malformed JSON: invalid character '{' after top-level value (at byte 39 of the line); each line must be one JSON object"},
		{"not an object", `[1, 2]`, 512, 1, "", "t.jsonl:1: line is a JSON list, but each line must be one JSON object"},
		{"unknown key", `{"output_length": 1, "hash_ids": [1], "input_len": 5}`, 512, 1, "input_len",
			"t.jsonl:1: input_len: unknown key; valid keys are: " + valid},
		{"several unknown keys", `{"Output_Length": 1, "hash_ids": [1], "a b": 5, "z": 0}`, 512, 1, "Output_Length",
			`t.jsonl:1: Output_Length: unknown key (also unknown on this line: "a b", "z"); valid keys are: ` + valid},
		{"quoted odd unknown key", `{"": 1}`, 512, 1, `""`, `t.jsonl:1: "": unknown key; valid keys are: ` + valid},
		{"duplicate key", `{"output_length": 1, "hash_ids": [1], "output_length": 2}`, 512, 1, "output_length",
			"t.jsonl:1: output_length: key appears more than once in the row; give it once"},
		{"duplicate via escaped key", `{"output_length": 1, "hash_ids": [1], "output\u005flength": 2}`, 512, 1, "output_length",
			"t.jsonl:1: output_length: key appears more than once in the row; give it once"},
		{"both input aliases", `{"input_length": 1, "input_tokens": 1, "output_length": 1, "hash_ids": [1]}`, 512, 1, "input_tokens",
			"t.jsonl:1: input_tokens: given together with input_length; they are aliases, give only one"},
		{"both output aliases", `{"output_length": 1, "output_tokens": 1, "hash_ids": [1]}`, 512, 1, "output_tokens",
			"t.jsonl:1: output_tokens: given together with output_length; they are aliases, give only one"},
		{"both timestamp aliases", `{"output_length": 1, "hash_ids": [1], "timestamp": 1, "created_time": 1}`, 512, 1, "created_time",
			"t.jsonl:1: created_time: given together with timestamp; they are aliases, give only one"},
		{"both delay aliases", `{"output_length": 1, "hash_ids": [1], "delay": 1, "delay_ms": 1}`, 512, 1, "delay_ms",
			"t.jsonl:1: delay_ms: given together with delay; they are aliases, give only one"},
		{"missing output", ok + `{"hash_ids": [1]}`, 512, 2, "output_length",
			"t.jsonl:2: output_length: missing; required: an integer >= 1 (tokens), as output_length or output_tokens"},
		{"null output", `{"output_tokens": null, "hash_ids": [1]}`, 512, 1, "output_tokens",
			"t.jsonl:1: output_tokens: is null; it is required: an integer >= 1 (tokens)"},
		{"zero output", `{"output_length": 0, "hash_ids": [1]}`, 512, 1, "output_length",
			"t.jsonl:1: output_length: must be an integer >= 1 (tokens): a request generates at least one token, got 0"},
		{"negative output", `{"output_length": -1, "hash_ids": [1]}`, 512, 1, "output_length",
			"t.jsonl:1: output_length: must be an integer >= 0 (tokens), got -1"},
		{"fractional output", `{"output_tokens": 1.5, "hash_ids": [1]}`, 512, 1, "output_tokens",
			"t.jsonl:1: output_tokens: must be an integer >= 0 (tokens), got 1.5"},
		{"string output", `{"output_length": "5", "hash_ids": [1]}`, 512, 1, "output_length",
			`t.jsonl:1: output_length: must be an integer >= 0 (tokens), got string "5"`},
		{"huge output", `{"output_length": 9223372036854775808, "hash_ids": [1]}`, 512, 1, "output_length",
			"t.jsonl:1: output_length: must be an integer in [0, 9223372036854775807], got 9223372036854775808"},
		{"inexact float output", `{"output_length": 1e17, "hash_ids": [1]}`, 512, 1, "output_length",
			"t.jsonl:1: output_length: must be an integer >= 0 (tokens); whole numbers above 2^53 must be written without a fraction or exponent, got 1e17"},
		{"missing hash_ids", `{"output_length": 1}`, 512, 1, "hash_ids",
			"t.jsonl:1: hash_ids: missing; required: a list of integers >= 0, one per 512-token block"},
		{"null hash_ids", `{"output_length": 1, "hash_ids": null}`, 64, 1, "hash_ids",
			"t.jsonl:1: hash_ids: is null; it is required: a list of integers >= 0, one per 64-token block"},
		{"hash_ids not a list", `{"output_length": 1, "hash_ids": {"a": 1}}`, 512, 1, "hash_ids",
			`t.jsonl:1: hash_ids: must be a list of integers >= 0 (one per 512-token block), got object {"a": 1}`},
		{"negative hash id", `{"output_length": 1, "hash_ids": [1, 2, -3]}`, 512, 1, "hash_ids[2]",
			"t.jsonl:1: hash_ids[2]: must be an integer >= 0, got -3"},
		{"string hash id", `{"output_length": 1, "hash_ids": ["a"]}`, 512, 1, "hash_ids[0]",
			`t.jsonl:1: hash_ids[0]: must be an integer >= 0, got string "a"`},
		{"hash id too large", `{"output_length": 1, "hash_ids": [18446744073709551616]}`, 512, 1, "hash_ids[0]",
			"t.jsonl:1: hash_ids[0]: must be an integer in [0, 18446744073709551615], got 18446744073709551616"},
		{"nested hash id list", `{"output_length": 1, "hash_ids": [[1]]}`, 512, 1, "hash_ids[0]",
			"t.jsonl:1: hash_ids[0]: must be an integer >= 0, got list [1]"},
		{"empty hash_ids with input", `{"input_length": 100, "output_length": 1, "hash_ids": []}`, 512, 1, "hash_ids",
			"t.jsonl:1: hash_ids: is empty, but input_length is 100; an empty list is valid only when the input length is 0 (100 tokens need 1 hash id at traffic.source.block_size 512)"},
		{"input too long for hash_ids", `{"input_length": 6000, "output_length": 1, "hash_ids": [1, 2]}`, 512, 1, "input_length",
			"t.jsonl:1: input_length: is 6000, but 2 hash_ids at traffic.source.block_size 512 allow 513..1024 (the last block may be partial); 6000 tokens need 12 hash ids"},
		{"input too short for hash_ids", `{"input_tokens": 512, "output_length": 1, "hash_ids": [1, 2]}`, 512, 1, "input_tokens",
			"t.jsonl:1: input_tokens: is 512, but 2 hash_ids at traffic.source.block_size 512 allow 513..1024 (the last block may be partial); 512 tokens need 1 hash id"},
		{"negative input", `{"input_length": -4, "output_length": 1, "hash_ids": [1]}`, 512, 1, "input_length",
			"t.jsonl:1: input_length: must be an integer >= 0 (tokens), got -4"},
		{"bad request_id", `{"request_id": [1], "output_length": 1, "hash_ids": [1]}`, 512, 1, "request_id",
			"t.jsonl:1: request_id: must be a string or an integer, got list [1]"},
		{"fractional session_id", `{"session_id": 1.5, "output_length": 1, "hash_ids": [1]}`, 512, 1, "session_id",
			"t.jsonl:1: session_id: must be a string or an integer, got 1.5"},
		{"output_token_ids length", `{"output_length": 3, "output_token_ids": [1, 2], "hash_ids": [1]}`, 512, 1, "output_token_ids",
			"t.jsonl:1: output_token_ids: has 2 ids, but output_length is 3; the two must be equal"},
		{"output_token_ids element", `{"output_tokens": 2, "output_token_ids": [1, true], "hash_ids": [1]}`, 512, 1, "output_token_ids[1]",
			"t.jsonl:1: output_token_ids[1]: must be an integer >= 0 (token id), got true"},
		{"output_token_ids not a list", `{"output_tokens": 2, "output_token_ids": "ab", "hash_ids": [1]}`, 512, 1, "output_token_ids",
			`t.jsonl:1: output_token_ids: must be a list of integers >= 0 (token ids), got string "ab"`},
		{"negative timestamp", `{"output_length": 1, "hash_ids": [1], "timestamp": -1}`, 512, 1, "timestamp",
			"t.jsonl:1: timestamp: must be a number >= 0 (ms), got -1"},
		{"string created_time", `{"output_length": 1, "hash_ids": [1], "created_time": "2024"}`, 512, 1, "created_time",
			`t.jsonl:1: created_time: must be a number >= 0 (ms), got string "2024"`},
		{"overflowing delay", `{"output_length": 1, "hash_ids": [1], "delay": 1e400}`, 512, 1, "delay",
			"t.jsonl:1: delay: is 1e400, but a time must be below 1e19 ms; the delay unit is likely wrong (Mooncake delays are milliseconds)"},
		{"negative delay_ms", `{"output_length": 1, "hash_ids": [1], "delay_ms": -0.5}`, 512, 1, "delay_ms",
			"t.jsonl:1: delay_ms: must be a number >= 0 (ms), got -0.5"},
		{"timestamp in epoch ns after 0", `{"output_length": 1, "hash_ids": [1], "timestamp": 0}` + "\n" +
			`{"output_length": 1, "hash_ids": [2], "timestamp": 1.733e18}`, 512, 2, "timestamp",
			"t.jsonl:2: timestamp: is 1733000000000000000 ms, 1733000000000000000 ms after the earliest timestamp (0 ms, line 1), " +
				"but a trace may span at most 2592000000 ms (30 days): the timestamp unit is likely wrong (Mooncake timestamps are milliseconds)"},
		{"earlier timestamp stretches the span", `{"output_length": 1, "hash_ids": [1], "created_time": 1733000000000000000}` + "\n" +
			`{"output_length": 1, "hash_ids": [2], "timestamp": 0}`, 512, 2, "timestamp",
			"t.jsonl:2: timestamp: is 0 ms, 1733000000000000000 ms before the latest timestamp (1733000000000000000 ms, line 1), " +
				"but a trace may span at most 2592000000 ms (30 days): the timestamp unit is likely wrong (Mooncake timestamps are milliseconds)"},
		{"span one microsecond over the bound", `{"output_length": 1, "hash_ids": [1], "timestamp": 0}` + "\n" +
			`{"output_length": 1, "hash_ids": [2], "created_time": 2592000000.001}`, 512, 2, "created_time",
			"t.jsonl:2: created_time: is 2592000000.001 ms, 2592000000.001 ms after the earliest timestamp (0 ms, line 1), " +
				"but a trace may span at most 2592000000 ms (30 days): the timestamp unit is likely wrong (Mooncake timestamps are milliseconds)"},
		{"span exactly the bound, then one ms more", `{"output_length": 1, "hash_ids": [1], "timestamp": 100}` + "\n" +
			`{"output_length": 1, "hash_ids": [2], "timestamp": 2592000100}` + "\n" + `{"output_length": 1, "hash_ids": [3], "timestamp": 99}`, 512, 3, "timestamp",
			"t.jsonl:3: timestamp: is 99 ms, 2592000001 ms before the latest timestamp (2592000100 ms, line 2), " +
				"but a trace may span at most 2592000000 ms (30 days): the timestamp unit is likely wrong (Mooncake timestamps are milliseconds)"},
		{"timestamp beyond 1e19 ms", `{"output_length": 1, "hash_ids": [1], "timestamp": 1e19}`, 512, 1, "timestamp",
			"t.jsonl:1: timestamp: is 1e19, but a time must be below 1e19 ms; the timestamp unit is likely wrong (Mooncake timestamps are milliseconds)"},
		{"timestamp of 20 digits", `{"output_length": 1, "hash_ids": [1], "timestamp": 17330000000000000000}`, 512, 1, "timestamp",
			"t.jsonl:1: timestamp: is 17330000000000000000, but a time must be below 1e19 ms; the timestamp unit is likely wrong (Mooncake timestamps are milliseconds)"},
		{"timestamp too precise", `{"output_length": 1, "hash_ids": [1], "timestamp": 1e-1101}`, 512, 1, "timestamp",
			"t.jsonl:1: timestamp: has more than 1100 decimal places (got 1e-1101); write it with at most 1100 (ms)"},
		{"delay over the bound", `{"output_length": 1, "hash_ids": [1], "delay_ms": 2592000000.5}`, 512, 1, "delay_ms",
			"t.jsonl:1: delay_ms: is 2592000000.5 ms, more than the 2592000000 ms (30 days) a trace may span; the delay unit is likely wrong (Mooncake delays are milliseconds)"},
		{"long value is truncated", `{"output_length": "` + strings.Repeat("x", 60) + `", "hash_ids": [1]}`, 512, 1, "output_length",
			`t.jsonl:1: output_length: must be an integer >= 0 (tokens), got string "` + strings.Repeat("x", 39) + `...`},
		{"first error wins", ok + `{"output_length": -1, "hash_ids": [1]}` + "\n" + `{bad`, 512, 2, "output_length",
			"t.jsonl:2: output_length: must be an integer >= 0 (tokens), got -1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rows, err := ParseMooncake(strings.NewReader(tc.in), "t.jsonl", tc.bs)
			if err == nil {
				t.Fatalf("no error; rows %+v", rows)
			}
			if rows != nil {
				t.Errorf("rows = %+v, want nil on error", rows)
			}
			if err.Error() != tc.want {
				t.Errorf("error\n got %s\nwant %s", err, tc.want)
			}
			var te *TraceError
			if !errors.As(err, &te) {
				t.Fatalf("error %T is not a *TraceError", err)
			}
			if te.File != "t.jsonl" || te.Line != tc.line || te.Field != tc.field {
				t.Errorf("TraceError{File: %q, Line: %d, Field: %q}, want {t.jsonl, %d, %q}", te.File, te.Line, te.Field, tc.line, tc.field)
			}
		})
	}
}

// Trace times are read exactly: integer, decimal and exponent forms, with the whole ms in Whole
// and the fraction's digits, trailing zeros dropped, in Frac.
func TestParseTraceTime(t *testing.T) {
	for _, c := range []struct {
		in   string
		want TraceTime
		st   timeStatus
	}{
		{"0", TraceTime{}, timeOK},
		{"1733000000000", TraceTime{Whole: 1733000000000}, timeOK},
		{"12.50", TraceTime{Whole: 12, Frac: "5"}, timeOK},
		{"1.733e18", TraceTime{Whole: 1733000000000000000}, timeOK},
		{"1733000000000000.1", TraceTime{Whole: 1733000000000000, Frac: "1"}, timeOK},
		{"17330000000000003e-1", TraceTime{Whole: 1733000000000000, Frac: "3"}, timeOK},
		{"2.5E+3", TraceTime{Whole: 2500}, timeOK},
		{"1e-3", TraceTime{Frac: "001"}, timeOK},
		{"0.00030000000000000003", TraceTime{Frac: "00030000000000000003"}, timeOK},
		{"9999999999999999999", TraceTime{Whole: 9999999999999999999}, timeOK},
		{"9999999999999999999.5", TraceTime{Whole: 9999999999999999999, Frac: "5"}, timeOK},
		{"1e-1100", TraceTime{Frac: strings.Repeat("0", 1099) + "1"}, timeOK},
		{"-0.0", TraceTime{}, timeOK},
		{"0e99999999999999999999", TraceTime{}, timeOK},
		{"-1", TraceTime{}, timeNegative},
		{"-1e-5", TraceTime{}, timeNegative},
		{"1e19", TraceTime{}, timeTooLarge},
		{"10000000000000000000", TraceTime{}, timeTooLarge},
		{"1e99999999999999999999", TraceTime{}, timeTooLarge},
		{"1e-1101", TraceTime{}, timeTooPrecise},
		{"true", TraceTime{}, timeNotNumber},
		{`"5"`, TraceTime{}, timeNotNumber},
	} {
		got, st := parseTraceTime([]byte(c.in))
		if got != c.want || st != c.st {
			t.Errorf("parseTraceTime(%s) = %+v, status %d; want %+v, status %d", c.in, got, st, c.want, c.st)
		}
	}
}

// Cmp, Minus and Ms work on the exact decimal values; Ms rounds once, to the nearest float64.
func TestTraceTimeArithmetic(t *testing.T) {
	ms := func(w uint64, f string) TraceTime { return TraceTime{Whole: w, Frac: f} }
	for _, c := range []struct {
		a, b TraceTime
		cmp  int
		diff TraceTime
	}{
		{ms(1733000000000015, ""), ms(1733000000000000, ""), 1, ms(15, "")},
		// float64 holds these two as 1733000000000000 and 1733000000000000.25 (spacing 0.25).
		{ms(1733000000000000, "3"), ms(1733000000000000, "1"), 1, ms(0, "2")},
		{ms(5, "1"), ms(3, "25"), 1, ms(1, "85")}, // a borrow from the whole part
		{ms(3, ""), ms(5, ""), -1, ms(0, "")},     // a negative gap is 0
		{ms(1, "5"), ms(1, "50"), 0, ms(0, "")},   // trailing zeros do not count
		{ms(1, "05"), ms(1, "5"), -1, ms(0, "")},
	} {
		if got := c.a.Cmp(c.b); got != c.cmp {
			t.Errorf("%s Cmp %s = %d, want %d", c.a, c.b, got, c.cmp)
		}
		if got := c.a.Minus(c.b); got != c.diff {
			t.Errorf("%s Minus %s = %+v, want %+v", c.a, c.b, got, c.diff)
		}
	}
	if got := ms(1733000000000000, "3").Minus(ms(1733000000000000, "1")).Ms(); got != 0.2 {
		t.Errorf("exact gap = %v ms, want 0.2", got)
	}
	for _, c := range []struct {
		t    TraceTime
		want float64
	}{
		{ms(12, "5"), 12.5},
		{ms(0, "001"), 0.001},
		{ms(1733000000000000000, ""), 1.733e18},
		{ms(9007199254740993, ""), 9007199254740992},       // 2^53 + 1: a tie, to even
		{ms(9007199254740993, "000001"), 9007199254740994}, // just above the tie: up
		{ms(7, "000"), 7},
	} {
		if got := c.t.Ms(); got != c.want {
			t.Errorf("%+v.Ms() = %v, want %v", c.t, got, c.want)
		}
	}
	if s := ms(12, "50").String(); s != "12.5" {
		t.Errorf("String = %q, want 12.5", s)
	}
}

// MaxTraceSpanMs keeps float64 ms at the 1 µs resolution the simulator needs (by a wide margin:
// at 2,592,000,000 ms the spacing of float64 values is 2^-21 ms).
func TestMaxTraceSpanResolution(t *testing.T) {
	if MaxTraceSpanMs != 30*24*3600*1000 {
		t.Errorf("MaxTraceSpanMs = %d, want 30 days = 2592000000 ms", MaxTraceSpanMs)
	}
	if gap := math.Nextafter(MaxTraceSpanMs, math.Inf(1)) - MaxTraceSpanMs; gap != 1.0/(1<<21) {
		t.Errorf("float64 spacing at the bound = %g ms, want 2^-21", gap)
	}
}

func TestParseMooncakeBlockSize(t *testing.T) {
	for _, bs := range []int{0, -512} {
		_, err := ParseMooncake(strings.NewReader(`{"output_length": 1, "hash_ids": [1]}`), "t.jsonl", bs)
		if err == nil || !strings.Contains(err.Error(), "block size must be a positive number of tokens") {
			t.Errorf("block size %d: err = %v", bs, err)
		}
	}
}

func TestParseMooncakeLongLine(t *testing.T) {
	// An 11 MB line: 1,100,000 hash ids of 10 bytes each.
	const n = 1_100_000
	var b strings.Builder
	b.WriteString(`{"output_length": 7, "hash_ids": [`)
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("12345678")
	}
	b.WriteString("]}\n")
	in := `{"output_length": 1, "hash_ids": [1]}` + "\n" + b.String() + `{"output_length": 2, "hash_ids": [2, 3]}` + "\n"
	if len(in) < 10<<20 {
		t.Fatalf("test line is only %d bytes", len(in))
	}
	rows, err := ParseMooncake(strings.NewReader(in), "long.jsonl", 16)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 || len(rows[1].HashIDs) != n || rows[1].InputLength != 16*n || rows[1].Line != 2 || rows[2].Line != 3 {
		t.Fatalf("got %d rows; row 2 has %d ids, input %d", len(rows), len(rows[1].HashIDs), rows[1].InputLength)
	}
	if !reflect.DeepEqual(rows[2].HashIDs, []uint64{2, 3}) || rows[1].HashIDs[n-1] != 12345678 {
		t.Errorf("wrong ids")
	}
	// The same input through a reader that returns one byte at a time.
	rows, err = ParseMooncake(iotest.OneByteReader(strings.NewReader(in)), "long.jsonl", 16)
	if err != nil || len(rows) != 3 {
		t.Fatalf("one-byte reader: %d rows, %v", len(rows), err)
	}

	_, err = parseMooncake(strings.NewReader(in), "long.jsonl", 16, 1<<20, false)
	const want = "long.jsonl:2: line is longer than the 1048576-byte limit"
	if err == nil || err.Error() != want {
		t.Errorf("line limit: got %v, want %s", err, want)
	}
}

func TestParseMooncakeRowsDoNotAlias(t *testing.T) {
	in := `{"output_length": 1, "hash_ids": [1, 2]}` + "\n" + `{"output_length": 1, "hash_ids": [3, 4]}`
	rows, err := ParseMooncake(strings.NewReader(in), "t.jsonl", 4)
	if err != nil {
		t.Fatal(err)
	}
	if cap(rows[0].HashIDs) != 2 {
		t.Fatalf("cap = %d, want 2", cap(rows[0].HashIDs))
	}
	_ = append(rows[0].HashIDs, 99)
	if !reflect.DeepEqual(rows[1].HashIDs, []uint64{3, 4}) {
		t.Errorf("append to row 1 clobbered row 2: %v", rows[1].HashIDs)
	}
}

func TestParseMooncakeReadError(t *testing.T) {
	boom := errors.New("boom")
	r := io.MultiReader(strings.NewReader(`{"output_length": 1, "hash_ids": [1]}`+"\n"), iotest.ErrReader(boom))
	_, err := ParseMooncake(r, "t.jsonl", 4)
	var te *TraceError
	if !errors.Is(err, boom) || !errors.As(err, &te) || te.Line != 2 || err.Error() != "t.jsonl:2: read error: boom" {
		t.Fatalf("got %v", err)
	}
}

func TestLoadMooncake(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "trace.jsonl")
	if err := os.WriteFile(path, []byte(`{"output_length": 1, "hash_ids": [1]}`+"\n"+`{"output_length": 1}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := LoadMooncake(path, 512)
	want := path + ":2: hash_ids: missing; required: a list of integers >= 0, one per 512-token block"
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}

	missing := filepath.Join(dir, "nope.jsonl")
	_, err = LoadMooncake(missing, 512)
	if err == nil || !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), missing) {
		t.Errorf("missing file: got %v", err)
	}
}

func TestLoadMooncakeRealTrace(t *testing.T) {
	if _, err := os.Stat(realMooncakeTrace); err != nil {
		t.Skipf("real Mooncake trace not available at %s (relative to sim/traffic): %v", realMooncakeTrace, err)
	}
	start := time.Now()
	rows, err := LoadMooncake(realMooncakeTrace, 512)
	elapsed := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("parsed %d rows in %v", len(rows), elapsed)
	if len(rows) != 12031 {
		t.Fatalf("got %d rows, want 12031", len(rows))
	}
	r := rows[0]
	if r.Line != 1 || r.InputLength != 6758 || r.OutputLength != 500 || len(r.HashIDs) != 14 ||
		!r.HasTimestamp || r.Timestamp != (TraceTime{}) || r.HasDelay || r.RequestID != "" || r.SessionID != "" {
		t.Errorf("first row = %+v", r)
	}
	for i, id := range r.HashIDs {
		if id != uint64(i) {
			t.Errorf("first row hash_ids[%d] = %d, want %d", i, id, i)
		}
	}
	last := rows[len(rows)-1]
	if last.Line != 12031 || last.Timestamp != (TraceTime{Whole: 3536999}) {
		t.Errorf("last row = Line %d, timestamp %v", last.Line, last.Timestamp)
	}
	for i, r := range rows {
		if i > 0 && r.Line <= rows[i-1].Line {
			t.Fatalf("row %d: line %d not increasing", i, r.Line)
		}
		if n := len(r.HashIDs); r.InputLength <= (n-1)*512 || r.InputLength > n*512 {
			t.Fatalf("row %d: input %d inconsistent with %d hash ids", i, r.InputLength, n)
		}
	}
}

func BenchmarkParseMooncake(b *testing.B) {
	data, err := os.ReadFile(realMooncakeTrace)
	if err != nil {
		b.Skipf("real Mooncake trace not available at %s (relative to sim/traffic): %v", realMooncakeTrace, err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	rowsParsed := 0
	for b.Loop() {
		rows, err := ParseMooncake(bytes.NewReader(data), "trace.jsonl", 512)
		if err != nil {
			b.Fatal(err)
		}
		rowsParsed += len(rows)
	}
	b.ReportMetric(float64(rowsParsed)/b.Elapsed().Seconds(), "rows/s")
}

// A trace path naming a directory is refused by every loader, saying a file is wanted, instead of
// a read error on line 1.
func TestTracePathIsADirectory(t *testing.T) {
	dir := t.TempDir()
	loaders := map[string]func() error{
		"mooncake":                func() error { _, err := LoadMooncake(dir, 512); return err },
		"agentic_mooncake":        func() error { _, err := LoadAgenticMooncake(dir, 512); return err },
		"applied_compute_agentic": func() error { _, err := LoadAppliedCompute(dir); return err },
		"dynamo":                  func() error { _, _, err := LoadDynamo([]string{dir}, 0); return err },
	}
	for kind, load := range loaders {
		err := load()
		if err == nil || !strings.Contains(err.Error(), kind+" trace: "+dir+" is a directory; a trace path must name a file") {
			t.Errorf("%s: %v, want a message that the path is a directory", kind, err)
		}
	}
}

// An id that is not valid UTF-8 is refused naming its line and field: decoding would turn every
// invalid byte into U+FFFD and make different ids equal.
func TestTraceIDMustBeUTF8(t *testing.T) {
	for _, key := range []string{"request_id", "session_id"} {
		line := `{"` + key + `":"a` + "\xff" + `b","timestamp":0,"input_length":1000,"output_length":10,"hash_ids":[1,2]}` + "\n"
		_, err := ParseMooncake(strings.NewReader(line), "t.jsonl", 512)
		var te *TraceError
		if !errors.As(err, &te) || te.Line != 1 || te.Field != key || !strings.Contains(te.Msg, "not valid UTF-8") {
			t.Errorf("%s: %v, want line 1 %s not valid UTF-8", key, err, key)
		}
	}
	line := `{"request_id":"b","wait_for":["` + "\xfe" + `"],"timestamp":0,"input_length":1000,"output_length":10,"hash_ids":[1,2]}` + "\n"
	_, err := ParseAgenticMooncake(strings.NewReader(line), "t.jsonl", 512)
	if err == nil || !strings.Contains(err.Error(), "wait_for[0]") || !strings.Contains(err.Error(), "not valid UTF-8") {
		t.Errorf("wait_for: %v, want wait_for[0] not valid UTF-8", err)
	}
}

// The row slice of a trace file is sized from line lengths sampled over the rest of the file, not
// from its first rows: a trace whose first rows are much shorter (or longer) than the rest still
// gets about as many rows of capacity as it has rows.
func TestParseMooncakeSizesRowsFromSamples(t *testing.T) {
	short := `{"timestamp": 1, "output_length": 1, "hash_ids": [1]}` + "\n"
	long := `{"timestamp": 1, "output_length": 1, "hash_ids": [` + strings.Repeat("123456, ", 40) + `7]}` + "\n"
	for _, c := range []struct {
		name        string
		first, rest string
	}{{"short first rows", short, long}, {"long first rows", long, short}} {
		path := filepath.Join(t.TempDir(), "t.jsonl")
		text := strings.Repeat(c.first, rowsBeforeSizing) + strings.Repeat(c.rest, 5*lineSamples*lineSampleBytes/len(c.rest))
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		rows, err := LoadMooncake(path, 512)
		if err != nil {
			t.Fatal(err)
		}
		if n := len(rows); cap(rows) < n || float64(cap(rows)) > 1.15*float64(n) {
			t.Errorf("%s: %d rows in a slice of capacity %d, want at most 15 %% more", c.name, n, cap(rows))
		}
	}
}
