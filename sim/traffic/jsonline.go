package traffic

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// jsonMember is one key and raw value of a JSON object line.
type jsonMember struct {
	key string
	val []byte // nil for a JSON null
}

// malformedJSON is the *TraceError of a line b that is not valid JSON, naming where the parser
// stopped.
func malformedJSON(b []byte, file string, lineNo int) error {
	if lineNo == 1 && len(b) >= 2 && b[0] == 0x1f && b[1] == 0x8b {
		return &TraceError{File: file, Line: lineNo, Msg: "the file is gzip-compressed; this trace format is read as plain JSONL: decompress it first (gunzip)"}
	}
	var v any
	err := json.Unmarshal(b, &v)
	msg := "malformed JSON"
	if err != nil {
		msg += ": " + err.Error()
	}
	if se := (*json.SyntaxError)(nil); errors.As(err, &se) {
		msg += fmt.Sprintf(" (at byte %d of the line)", se.Offset)
	}
	return &TraceError{File: file, Line: lineNo, Msg: msg + "; each line must be one JSON object", Err: err}
}

// splitObject checks that b (one line, surrounding space trimmed, non-empty) is one valid JSON
// object and returns its members in order; a null value is returned as nil. A repeated key is an
// error naming it. Errors are *TraceError values naming file and lineNo.
func splitObject(b []byte, file string, lineNo int) ([]jsonMember, error) {
	if !json.Valid(b) {
		return nil, malformedJSON(b, file, lineNo)
	}
	if b[0] != '{' {
		return nil, &TraceError{File: file, Line: lineNo, Msg: fmt.Sprintf("line is a JSON %s, but each line must be one JSON object", jsonKind(b))}
	}
	return objectMembers(b, file, lineNo, "")
}

// objectMembers returns the members of the valid JSON object b; prefix is put before a repeated
// key's name in the error (e.g. "request.").
func objectMembers(b []byte, file string, lineNo int, prefix string) ([]jsonMember, error) {
	var out []jsonMember
	i := skipJSONSpace(b, 1)
	if b[i] == '}' {
		return nil, nil
	}
	for {
		kEnd, esc := scanJSONString(b, i)
		key := string(b[i+1 : kEnd-1])
		if esc {
			var s string
			if err := json.Unmarshal(b[i:kEnd], &s); err == nil {
				key = s
			}
		}
		i = skipJSONSpace(b, kEnd)
		i = skipJSONSpace(b, i+1)
		vEnd := skipJSONValue(b, i)
		for _, m := range out {
			if m.key == key {
				return nil, &TraceError{File: file, Line: lineNo, Field: prefix + fieldLabel(key), Msg: "key appears more than once in the object; give it once"}
			}
		}
		m := jsonMember{key: key}
		if b[i] != 'n' {
			m.val = b[i:vEnd]
		}
		out = append(out, m)
		i = skipJSONSpace(b, vEnd)
		if b[i] != ',' {
			return out, nil
		}
		i = skipJSONSpace(b, i+1)
	}
}

// listElems returns the raw elements of the valid JSON list v, or ok false when v is not a list.
func listElems(v []byte) (elems [][]byte, ok bool) {
	if len(v) == 0 || v[0] != '[' {
		return nil, false
	}
	i := skipJSONSpace(v, 1)
	if v[i] == ']' {
		return nil, true
	}
	for {
		end := skipJSONValue(v, i)
		elems = append(elems, v[i:end])
		i = skipJSONSpace(v, end)
		if v[i] != ',' {
			return elems, true
		}
		i = skipJSONSpace(v, i+1)
	}
}

// readUint reads v as an integer in [0, limit] (see parseJSONUint); what describes a valid value
// for the message, e.g. "an integer >= 0 (tokens)".
func readUint(v []byte, limit uint64, file string, lineNo int, field, what string) (uint64, error) {
	u, st := parseJSONUint(v, limit)
	if st != numOK {
		return 0, &TraceError{File: file, Line: lineNo, Field: field, Msg: fmt.Sprintf("%s, got %s", st.want(limit, what), describeJSON(v))}
	}
	return u, nil
}

// readNonNegative reads v as a finite number in [0, limit]; unit names the unit for messages.
func readNonNegative(v []byte, limit float64, file string, lineNo int, field, unit string) (float64, error) {
	bad := func(msg string) error {
		return &TraceError{File: file, Line: lineNo, Field: field, Msg: msg}
	}
	if len(v) == 0 || !(v[0] == '-' || isDigit(v[0])) {
		return 0, bad(fmt.Sprintf("must be a number >= 0 (%s), got %s", unit, describeJSON(v)))
	}
	f, err := strconv.ParseFloat(string(v), 64)
	switch {
	case err != nil && !math.IsInf(f, 0):
		return 0, bad(fmt.Sprintf("must be a number >= 0 (%s), got %s", unit, describeJSON(v)))
	case f < 0:
		return 0, bad(fmt.Sprintf("must be a number >= 0 (%s), got %s", unit, describeJSON(v)))
	case f > limit || math.IsInf(f, 0):
		return 0, bad(fmt.Sprintf("is %s; must be at most %g %s", describeJSON(v), limit, unit))
	}
	return f, nil
}

// readString reads v as a JSON string, or an integer kept as its decimal text.
func readString(v []byte, file string, lineNo int, field string) (string, error) {
	switch {
	case v[0] == '"':
		if !utf8.Valid(v) {
			// Decoding would turn each invalid byte into U+FFFD, making different ids equal.
			return "", &TraceError{File: file, Line: lineNo, Field: field, Msg: "is not valid UTF-8 text; a JSON string must be UTF-8"}
		}
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return "", &TraceError{File: file, Line: lineNo, Field: field, Msg: "invalid string: " + err.Error()}
		}
		return s, nil
	case isIntLiteral(v):
		return string(v), nil
	}
	return "", &TraceError{File: file, Line: lineNo, Field: field, Msg: "must be a string or an integer, got " + describeJSON(v)}
}

// unknownKey is the error for a key the format does not define; valid lists the valid keys.
func unknownKey(file string, lineNo int, key string, valid []string) error {
	return &TraceError{File: file, Line: lineNo, Field: fieldLabel(key), Msg: "unknown key; valid keys are: " + strings.Join(valid, ", ")}
}
