package traffic

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// TraceError describes the first problem found in a trace file. Its text has the form
// `<file>:<line>: <field>: <msg>`; the line part is left out when Line is 0 (the error
// concerns the whole file, e.g. an empty trace) and the field part when Field is "" (the
// error concerns the whole line, e.g. malformed JSON). Use errors.As to recover it.
type TraceError struct {
	// File is the file name as given to the parser (a path for LoadMooncake).
	File string
	// Line is the 1-based line number (blank lines count), or 0 for whole-file errors.
	Line int
	// Field is the JSON key at fault as written in the row (list elements get an index,
	// e.g. `hash_ids[3]`), or "" for whole-line errors.
	Field string
	// Msg says what is wrong and what would be valid.
	Msg string
	// Err is the underlying cause (an I/O or JSON syntax error), or nil.
	Err error
}

// Error formats the error as `<file>:<line>: <field>: <msg>`.
func (e *TraceError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(e.Line))
	}
	if e.Field != "" {
		b.WriteString(": ")
		b.WriteString(e.Field)
	}
	b.WriteString(": ")
	b.WriteString(e.Msg)
	return b.String()
}

// Unwrap returns the underlying cause, if any.
func (e *TraceError) Unwrap() error { return e.Err }

// MaxTraceSpanMs bounds, in ms, how far apart the timestamps of one trace may lie (the latest
// minus the earliest) and every `delay`: 30 days, 2,592,000,000 ms. Mooncake times are
// milliseconds; a trace that spans more almost surely holds another unit (epoch microseconds or
// nanoseconds where milliseconds belong), and its arrivals would land where float64 ms no longer
// resolve a forward pass. At the bound float64 ms resolve 2^-21 ms (about 0.5 ns), far below
// 1 µs.
const MaxTraceSpanMs = 2_592_000_000

// maxTraceTimeDecimals bounds the decimal places of a trace time: every float64 written out in
// full has at most 1074, so any value a JSON encoder produces fits; the bound keeps an exponent
// like 1e-999999999 from expanding into a billion digits.
const maxTraceTimeDecimals = 1100

// traceTimeDigits bounds the integer digits of a trace time: it must be below 10^19 ms (above
// any epoch time in ms, µs or ns), so that the whole milliseconds fit a uint64.
const traceTimeDigits = 19

// maxMooncakeLineBytes bounds one line of a trace (256 MiB), so a file without newlines
// cannot exhaust memory; a hash_ids list of several million ids still fits.
const maxMooncakeLineBytes = 256 << 20

// LoadMooncake opens the Mooncake JSONL trace at path and parses it with ParseMooncake;
// blockSize is the trace's hash block size in tokens (spec default 512). An open failure is
// returned as an *fs.PathError (which names the path) wrapped with context; parse errors
// are *TraceError values whose File is path.
func LoadMooncake(path string, blockSize int) ([]TraceRow, error) {
	f, err := openTrace("mooncake", path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) && !filepath.IsAbs(path) {
			if wd, werr := os.Getwd(); werr == nil {
				return nil, fmt.Errorf("%w (a relative path is read from the working directory, %s)", err, wd)
			}
		}
		return nil, err
	}
	defer f.Close()
	return ParseMooncake(f, path, blockSize)
}

// ParseMooncake parses a Mooncake JSONL trace (dynosim-spec.md §3.1.4): one JSON object per
// line. file is used only in error messages. blockSize is the trace hash block size in
// tokens (> 0): each hash_ids entry covers blockSize prompt tokens.
//
// Blank (whitespace-only) lines are skipped but counted, so TraceRow.Line is the 1-based
// physical line. A UTF-8 byte-order mark before the first line is ignored. Accepted keys:
//
//   - request_id, session_id: string (valid UTF-8), or JSON integer (kept as its decimal text);
//     optional.
//   - input_length | input_tokens: integer >= 0 (tokens); optional, at most one of the two.
//     Absent: len(hash_ids)*blockSize. Present: it must lie in
//     ((len(hash_ids)-1)*blockSize, len(hash_ids)*blockSize] — the last block may be partial.
//   - output_length | output_tokens: integer >= 1 (tokens); required, exactly one of the two.
//   - output_token_ids: optional list of integers >= 0 whose length equals the output
//     length; validated, then ignored.
//   - hash_ids: required list of integers in [0, 2^64); empty only when the input length is 0.
//   - timestamp | created_time: number >= 0 (ms), below 10^19, at most 1100 decimal places;
//     optional, at most one. Sets HasTimestamp. It is read exactly (TraceTime), and the
//     timestamps of a trace must lie within MaxTraceSpanMs of each other: the row that first
//     stretches the span beyond it is an error saying the unit is likely wrong.
//   - delay | delay_ms: number in [0, MaxTraceSpanMs] (ms), at most 1100 decimal places;
//     optional, at most one. Sets HasDelay.
//   - priority, strict_priority, policy_class: any JSON value; accepted and ignored.
//
// Choices: an integer field also accepts a number written with a zero fraction or an
// exponent (2.0, 1e3) when its value is a whole number no larger than 2^53 (exactly
// representable); 1.5 is rejected, and larger values must be written as integer literals.
// A JSON null counts as absent for optional keys and is an error for required ones. Keys
// are matched exactly (case-sensitive); a key repeated within a row is an error, as is any
// unknown key (the message lists the valid keys).
//
// Parsing stops at the first problem, returned as a *TraceError (text
// `<file>:<line>: <field>: <what is wrong and what is valid>`). A trace with no rows is an
// error. A blockSize <= 0 is reported as a plain error before reading.
func ParseMooncake(r io.Reader, file string, blockSize int) ([]TraceRow, error) {
	return parseMooncake(r, file, blockSize, maxMooncakeLineBytes, false)
}

func parseMooncake(r io.Reader, file string, blockSize, maxLine int, agentic bool) ([]TraceRow, error) {
	if blockSize <= 0 {
		return nil, fmt.Errorf("%s: mooncake trace block size must be a positive number of tokens, got %d", file, blockSize)
	}
	p := mooncakeParser{file: file, blockSize: blockSize, agentic: agentic}
	if f, ok := r.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
			p.sizeHint, p.f = st.Size(), f
		}
	}
	if err := forEachLine(r, file, maxLine, p.parseLine); err != nil {
		return nil, err
	}
	if len(p.rows) == 0 {
		return nil, &TraceError{File: file, Msg: "trace has no rows (a Mooncake trace needs at least one JSON object line)"}
	}
	return p.rows, nil
}

// forEachLine calls parse with every non-empty physical line of r (newline included) and its
// 1-based number, stopping at the first error. A line longer than maxLine bytes, or a read error,
// is a *TraceError naming file and the line; a UTF-8 byte-order mark before the first line is
// dropped.
func forEachLine(r io.Reader, file string, maxLine int, parse func(line []byte, lineNo int) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var long []byte // accumulates lines longer than the bufio buffer
	lineNo := 0
	for {
		chunk, err := br.ReadSlice('\n')
		line := chunk
		if err == bufio.ErrBufferFull {
			long = append(long[:0], chunk...)
			for err == bufio.ErrBufferFull {
				if len(long) > maxLine {
					return &TraceError{File: file, Line: lineNo + 1,
						Msg: fmt.Sprintf("line is longer than the %d-byte limit", maxLine)}
				}
				chunk, err = br.ReadSlice('\n')
				long = append(long, chunk...)
			}
			line = long
		}
		if err != nil && err != io.EOF {
			return &TraceError{File: file, Line: lineNo + 1, Msg: "read error: " + err.Error(), Err: err}
		}
		if len(line) > 0 {
			lineNo++
			if len(line) > maxLine {
				return &TraceError{File: file, Line: lineNo,
					Msg: fmt.Sprintf("line is longer than the %d-byte limit", maxLine)}
			}
			if lineNo == 1 {
				line = bytes.TrimPrefix(line, []byte("\xef\xbb\xbf"))
			}
			if err := parse(line, lineNo); err != nil {
				return err
			}
		}
		if err == io.EOF {
			return nil
		}
	}
}

// Key slots of a Mooncake row.
const (
	kRequestID = iota
	kSessionID
	kInputLength
	kInputTokens
	kOutputLength
	kOutputTokens
	kOutputTokenIDs
	kHashIDs
	kTimestamp
	kCreatedTime
	kDelay
	kDelayMs
	kPriority
	kStrictPriority
	kPolicyClass
	// The keys only agentic_mooncake rows take.
	kWaitFor
	kToolWaitMs
	kRequestKind
	kBranches
	kPrefixReset
	kToolEvents
	numKeys
)

// numPlainKeys is the number of keys a plain Mooncake row takes (the slots before kWaitFor).
const numPlainKeys = kWaitFor

var mooncakeKeyNames = [numKeys]string{
	"request_id", "session_id", "input_length", "input_tokens", "output_length", "output_tokens",
	"output_token_ids", "hash_ids", "timestamp", "created_time", "delay", "delay_ms",
	"priority", "strict_priority", "policy_class",
	"wait_for", "tool_wait_ms", "request_kind", "branches", "prefix_reset", "tool_events",
}

var (
	mooncakeValidKeys = strings.Join(mooncakeKeyNames[:numPlainKeys], ", ")
	agenticValidKeys  = strings.Join(mooncakeKeyNames[:], ", ")
)

func mooncakeKey(k []byte) int {
	switch string(k) { // no allocation: the compiler specialises switch on string(bytes)
	case "request_id":
		return kRequestID
	case "session_id":
		return kSessionID
	case "input_length":
		return kInputLength
	case "input_tokens":
		return kInputTokens
	case "output_length":
		return kOutputLength
	case "output_tokens":
		return kOutputTokens
	case "output_token_ids":
		return kOutputTokenIDs
	case "hash_ids":
		return kHashIDs
	case "timestamp":
		return kTimestamp
	case "created_time":
		return kCreatedTime
	case "delay":
		return kDelay
	case "delay_ms":
		return kDelayMs
	case "priority":
		return kPriority
	case "strict_priority":
		return kStrictPriority
	case "policy_class":
		return kPolicyClass
	case "wait_for":
		return kWaitFor
	case "tool_wait_ms":
		return kToolWaitMs
	case "request_kind":
		return kRequestKind
	case "branches":
		return kBranches
	case "prefix_reset":
		return kPrefixReset
	case "tool_events":
		return kToolEvents
	}
	return -1
}

// rowsBeforeSizing is the rows read before the row slice is sized from the trace's size.
const rowsBeforeSizing = 256

// lineSamples reads of lineSampleBytes each, spread over the unread part of a trace file,
// estimate the mean length of its lines to come (sampleLineBytes).
const (
	lineSamples     = 16
	lineSampleBytes = 16 << 10
)

// sampleLineBytes estimates the mean line length in bytes of the part of file f from offset from
// to offset to, from the whole lines inside lineSamples reads, one amid each sixteenth of it
// (ReadAt: f's offset stays). It returns 0 for a part smaller than 4 × the samples (the rows read
// so far tell well enough) or with too few whole lines in the samples (lines of tens of KB).
func sampleLineBytes(f *os.File, from, to int64) float64 {
	size := to - from
	if size < 4*lineSamples*lineSampleBytes {
		return 0
	}
	buf := make([]byte, lineSampleBytes)
	var span, lines int
	for k := range int64(lineSamples) {
		n, _ := f.ReadAt(buf, from+(2*k+1)*size/(2*lineSamples)-lineSampleBytes/2)
		b := buf[:n]
		if i, j := bytes.IndexByte(b, '\n'), bytes.LastIndexByte(b, '\n'); i < j {
			span += j - i
			lines += bytes.Count(b[i+1:j+1], []byte{'\n'})
		}
	}
	if lines < 2*lineSamples {
		return 0
	}
	return float64(span) / float64(lines)
}

type mooncakeParser struct {
	file      string
	blockSize int
	agentic   bool // agentic_mooncake: the keys from kWaitFor on are valid
	rows      []TraceRow
	// sizeHint is the trace's size in bytes when known (a regular file, f), 0 otherwise; seen
	// counts the bytes read so far. Once a few rows are read, the row slice is sized for the
	// rest of the file at the mean line length sampled over it (sampleLineBytes), or else at the
	// mean so far, so a large trace is not copied as its rows slice doubles, nor sized by lines
	// at its start that are shorter than the rest.
	sizeHint, seen int64
	f              *os.File
	scratch        []uint64 // hash ids of the current line
	arena          []uint64 // backing store carved into per-row HashIDs slices

	// The earliest and latest timestamp so far and their lines (valid when haveTime).
	haveTime                 bool
	earliest, latest         TraceTime
	earliestLine, latestLine int
}

func (p *mooncakeParser) errf(line int, field, format string, args ...any) *TraceError {
	return &TraceError{File: p.file, Line: line, Field: field, Msg: fmt.Sprintf(format, args...)}
}

func (p *mooncakeParser) parseLine(line []byte, lineNo int) error {
	p.sizeRows(line)
	b := trimJSONSpace(line)
	if len(b) == 0 {
		return nil
	}
	if !json.Valid(b) {
		return malformedJSON(b, p.file, lineNo)
	}
	if b[0] != '{' {
		return p.errf(lineNo, "", "line is a JSON %s, but each line must be one JSON object", jsonKind(b))
	}
	var raw [numKeys][]byte
	var seen [numKeys]bool
	if err := p.members(b, lineNo, &raw, &seen); err != nil {
		return err
	}
	row := TraceRow{Line: lineNo}
	var err error
	if row.RequestID, err = p.idField(raw[kRequestID], lineNo, kRequestID); err != nil {
		return err
	}
	if row.SessionID, err = p.idField(raw[kSessionID], lineNo, kSessionID); err != nil {
		return err
	}
	outKey, err := p.lengths(&row, &raw, &seen, lineNo)
	if err != nil {
		return err
	}
	if otr := raw[kOutputTokenIDs]; otr != nil {
		if err := p.checkOutputTokenIDs(otr, lineNo, row.OutputLength, mooncakeKeyNames[outKey]); err != nil {
			return err
		}
	}
	if err := p.times(&row, &raw, lineNo); err != nil {
		return err
	}
	if p.agentic {
		if err := p.agenticFields(&row, &raw, lineNo); err != nil {
			return err
		}
	}
	p.rows = append(p.rows, row)
	return nil
}

// sizeRows counts line's bytes as read and, once rowsBeforeSizing rows are read, grows the row
// slice once for the rest of the file (mooncakeParser.sizeHint).
func (p *mooncakeParser) sizeRows(line []byte) {
	p.seen += int64(len(line))
	if len(p.rows) == rowsBeforeSizing && p.sizeHint > p.seen {
		// Rows to come at the sampled mean length (else the mean so far), and 5 % more: one
		// allocation for the rest.
		mean := float64(p.seen) / rowsBeforeSizing
		if m := sampleLineBytes(p.f, p.seen, p.sizeHint); m > 0 {
			mean = m
		}
		rest := float64(p.sizeHint-p.seen) / mean * 1.05
		p.rows = slices.Grow(p.rows, int(min(rest, 1<<26)))
	}
}

// members splits the valid JSON object b (line lineNo) into its members: raw[k] is key k's
// value (nil when absent or null) and seen[k] whether the key is present. Errors: an unknown or
// repeated key, or two aliases given together.
func (p *mooncakeParser) members(b []byte, lineNo int, raw *[numKeys][]byte, seen *[numKeys]bool) error {
	var unknown []string
	dup := ""
	i := skipJSONSpace(b, 1)
	if b[i] != '}' {
		for {
			kEnd, esc := scanJSONString(b, i)
			kb := b[i+1 : kEnd-1]
			if esc {
				var s string
				if err := json.Unmarshal(b[i:kEnd], &s); err == nil {
					kb = []byte(s)
				}
			}
			i = skipJSONSpace(b, kEnd) // at ':'
			i = skipJSONSpace(b, i+1)  // at the value
			vEnd := skipJSONValue(b, i)
			k := mooncakeKey(kb)
			if k >= numPlainKeys && !p.agentic {
				k = -1
			}
			switch {
			case k < 0:
				unknown = append(unknown, string(kb))
			case seen[k]:
				if dup == "" {
					dup = mooncakeKeyNames[k]
				}
			default:
				seen[k] = true
				if b[i] != 'n' { // null counts as absent
					raw[k] = b[i:vEnd]
				}
			}
			i = skipJSONSpace(b, vEnd)
			if b[i] != ',' {
				break
			}
			i = skipJSONSpace(b, i+1)
		}
	}
	if len(unknown) > 0 {
		msg := "unknown key"
		if len(unknown) > 1 {
			q := make([]string, len(unknown)-1)
			for j, u := range unknown[1:] {
				q[j] = strconv.Quote(u)
			}
			msg += " (also unknown on this line: " + strings.Join(q, ", ") + ")"
		}
		valid := mooncakeValidKeys
		if p.agentic {
			valid = agenticValidKeys
		}
		return p.errf(lineNo, fieldLabel(unknown[0]), "%s; valid keys are: %s", msg, valid)
	}
	if dup != "" {
		return p.errf(lineNo, dup, "key appears more than once in the row; give it once")
	}
	for _, pair := range [...][2]int{{kInputLength, kInputTokens}, {kOutputLength, kOutputTokens},
		{kTimestamp, kCreatedTime}, {kDelay, kDelayMs}} {
		if raw[pair[0]] != nil && raw[pair[1]] != nil {
			return p.errf(lineNo, mooncakeKeyNames[pair[1]], "given together with %s; they are aliases, give only one",
				mooncakeKeyNames[pair[0]])
		}
	}
	return nil
}

// lengths sets row's output length (required), hash ids (required) and input length (optional;
// the hash ids' capacity by default) from the line's members, and returns the output length's
// key as given.
func (p *mooncakeParser) lengths(row *TraceRow, raw *[numKeys][]byte, seen *[numKeys]bool, lineNo int) (outKey int, err error) {
	// Output length (required).
	outKey = kOutputLength
	if raw[outKey] == nil && raw[kOutputTokens] != nil {
		outKey = kOutputTokens
	}
	if raw[outKey] == nil {
		if seen[outKey] || seen[kOutputTokens] {
			if !seen[outKey] {
				outKey = kOutputTokens
			}
			return outKey, p.errf(lineNo, mooncakeKeyNames[outKey], "is null; it is required: an integer >= 1 (tokens)")
		}
		return outKey, p.errf(lineNo, "output_length", "missing; required: an integer >= 1 (tokens), as output_length or output_tokens")
	}
	if row.OutputLength, err = p.intField(raw[outKey], lineNo, mooncakeKeyNames[outKey]); err != nil {
		return outKey, err
	}
	if row.OutputLength == 0 {
		// A request generates at least one token (engines refuse max_tokens 0); one of none has
		// no first token, so no TTFT, ITL or E2E to score.
		return outKey, p.errf(lineNo, mooncakeKeyNames[outKey], "must be an integer >= 1 (tokens): a request generates at least one token, got 0")
	}

	// Hash ids (required).
	hraw := raw[kHashIDs]
	if hraw == nil {
		if seen[kHashIDs] {
			return outKey, p.errf(lineNo, "hash_ids", "is null; it is required: a list of integers >= 0, one per %d-token block", p.blockSize)
		}
		return outKey, p.errf(lineNo, "hash_ids", "missing; required: a list of integers >= 0, one per %d-token block", p.blockSize)
	}
	if err := p.parseHashIDs(hraw, lineNo); err != nil {
		return outKey, err
	}
	n := len(p.scratch)
	lower, upper := satMul(n-1, p.blockSize), satMul(n, p.blockSize)

	// Input length (optional; defaults to the hash_ids capacity).
	inKey := kInputLength
	if raw[inKey] == nil {
		inKey = kInputTokens
	}
	if raw[inKey] == nil {
		if upper == math.MaxInt {
			return outKey, p.errf(lineNo, "hash_ids", "%d blocks at traffic.source.block_size %d overflow the input length", n, p.blockSize)
		}
		row.InputLength = upper
	} else {
		name := mooncakeKeyNames[inKey]
		if row.InputLength, err = p.intField(raw[inKey], lineNo, name); err != nil {
			return outKey, err
		}
		in := row.InputLength
		need := in / p.blockSize
		if in%p.blockSize != 0 {
			need++
		}
		if n == 0 && in > 0 {
			return outKey, p.errf(lineNo, "hash_ids", "is empty, but %s is %d; an empty list is valid only when the input length is 0 (%d tokens need %s at traffic.source.block_size %d)",
				name, in, in, hashIDCount(need), p.blockSize)
		}
		if n > 0 && !(lower < in && in <= upper) {
			return outKey, p.errf(lineNo, name, "is %d, but %d hash_ids at traffic.source.block_size %d allow %d..%d (the last block may be partial); %d tokens need %s",
				in, n, p.blockSize, lower+1, upper, in, hashIDCount(need))
		}
	}
	if n > 0 {
		row.HashIDs = p.keep(p.scratch)
	}
	return outKey, nil
}

// times sets row's timestamp and delay from the line's members, when given.
func (p *mooncakeParser) times(row *TraceRow, raw *[numKeys][]byte, lineNo int) error {
	var err error
	tsKey := kTimestamp
	if raw[tsKey] == nil {
		tsKey = kCreatedTime
	}
	if raw[tsKey] != nil {
		name := mooncakeKeyNames[tsKey]
		if row.Timestamp, err = p.timeField(raw[tsKey], lineNo, name, "timestamp"); err != nil {
			return err
		}
		if err := p.checkSpan(row.Timestamp, lineNo, name); err != nil {
			return err
		}
		row.HasTimestamp = true
	}
	dKey := kDelay
	if raw[dKey] == nil {
		dKey = kDelayMs
	}
	if raw[dKey] != nil {
		name := mooncakeKeyNames[dKey]
		d, err := p.timeField(raw[dKey], lineNo, name, "delay")
		if err != nil {
			return err
		}
		if d.Cmp(TraceTime{Whole: MaxTraceSpanMs}) > 0 {
			return p.errf(lineNo, name, "is %s ms, more than the %d ms (30 days) a trace may span; the delay unit is likely wrong (Mooncake delays are milliseconds)",
				d, uint64(MaxTraceSpanMs))
		}
		row.DelayMs, row.HasDelay = d.Ms(), true
	}
	return nil
}

// keep copies ids into the arena and returns a capacity-limited slice of it, so appending
// to one row's HashIDs never overwrites another row's.
func (p *mooncakeParser) keep(ids []uint64) []uint64 {
	if len(ids) > cap(p.arena)-len(p.arena) {
		p.arena = make([]uint64, 0, max(16<<10, len(ids)))
	}
	start := len(p.arena)
	p.arena = append(p.arena, ids...)
	end := len(p.arena)
	return p.arena[start:end:end]
}

func (p *mooncakeParser) idField(v []byte, lineNo, key int) (string, error) {
	if v == nil {
		return "", nil
	}
	switch {
	case v[0] == '"':
		if !utf8.Valid(v) {
			// Decoding would turn each invalid byte into U+FFFD, making different ids equal.
			return "", p.errf(lineNo, mooncakeKeyNames[key], "is not valid UTF-8 text; a JSON string must be UTF-8")
		}
		if bytes.IndexByte(v, '\\') < 0 {
			return string(v[1 : len(v)-1]), nil
		}
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return "", p.errf(lineNo, mooncakeKeyNames[key], "invalid string: %v", err)
		}
		return s, nil
	case isIntLiteral(v):
		return string(v), nil
	case v[0] == '-' || isDigit(v[0]):
		f, err := strconv.ParseFloat(string(v), 64)
		if err == nil && f == math.Trunc(f) && math.Abs(f) <= 1<<53 {
			return strconv.FormatInt(int64(f), 10), nil
		}
	}
	return "", p.errf(lineNo, mooncakeKeyNames[key], "must be a string or an integer, got %s", describeJSON(v))
}

func (p *mooncakeParser) intField(v []byte, lineNo int, name string) (int, error) {
	u, st := parseJSONUint(v, math.MaxInt)
	if st != numOK {
		return 0, p.errf(lineNo, name, "%s, got %s", st.want(math.MaxInt, "an integer >= 0 (tokens)"), describeJSON(v))
	}
	return int(u), nil
}

// timeField reads a time in ms exactly; what names the kind of time in messages ("timestamp",
// "delay").
func (p *mooncakeParser) timeField(v []byte, lineNo int, name, what string) (TraceTime, error) {
	t, st := parseTraceTime(v)
	switch st {
	case timeNotNumber, timeNegative:
		return TraceTime{}, p.errf(lineNo, name, "must be a number >= 0 (ms), got %s", describeJSON(v))
	case timeTooLarge:
		return TraceTime{}, p.errf(lineNo, name, "is %s, but a time must be below 1e19 ms; the %s unit is likely wrong (Mooncake %ss are milliseconds)",
			describeJSON(v), what, what)
	case timeTooPrecise:
		return TraceTime{}, p.errf(lineNo, name, "has more than %d decimal places (got %s); write it with at most %d (ms)",
			maxTraceTimeDecimals, describeJSON(v), maxTraceTimeDecimals)
	}
	return t, nil
}

// checkSpan keeps the earliest and latest timestamp seen and reports the row whose timestamp t
// makes them lie more than MaxTraceSpanMs apart.
func (p *mooncakeParser) checkSpan(t TraceTime, lineNo int, name string) error {
	if !p.haveTime {
		p.haveTime = true
		p.earliest, p.latest, p.earliestLine, p.latestLine = t, t, lineNo, lineNo
		return nil
	}
	if t.Cmp(p.earliest) < 0 {
		p.earliest, p.earliestLine = t, lineNo
	}
	if t.Cmp(p.latest) > 0 {
		p.latest, p.latestLine = t, lineNo
	}
	span := p.latest.Minus(p.earliest)
	if span.Cmp(TraceTime{Whole: MaxTraceSpanMs}) <= 0 {
		return nil
	}
	rel, other, otherLine := "after the earliest", p.earliest, p.earliestLine
	if p.earliestLine == lineNo {
		rel, other, otherLine = "before the latest", p.latest, p.latestLine
	}
	return p.errf(lineNo, name, "is %s ms, %s ms %s timestamp (%s ms, line %d), but a trace may span at most %d ms (30 days): "+
		"the timestamp unit is likely wrong (Mooncake timestamps are milliseconds)",
		t, span, rel, other, otherLine, uint64(MaxTraceSpanMs))
}

// timeStatus classifies an attempt to read a JSON value as a trace time.
type timeStatus int

const (
	timeOK timeStatus = iota
	timeNotNumber
	timeNegative
	timeTooLarge   // 10^19 ms or more
	timeTooPrecise // more than maxTraceTimeDecimals decimal places
)

// parseTraceTime reads v (one valid JSON value) as an exact time in ms: integer, decimal and
// exponent forms alike, without rounding. Negative zero reads as zero.
func parseTraceTime(v []byte) (TraceTime, timeStatus) {
	if len(v) == 0 || !(v[0] == '-' || isDigit(v[0])) {
		return TraceTime{}, timeNotNumber
	}
	// Fast path: a plain run of at most 19 digits (any whole ms a trace holds).
	if len(v) <= traceTimeDigits {
		var u uint64
		j := 0
		for ; j < len(v) && isDigit(v[j]); j++ {
			u = u*10 + uint64(v[j]-'0')
		}
		if j == len(v) {
			return TraceTime{Whole: u}, timeOK
		}
	}
	s := v
	neg := s[0] == '-'
	if neg {
		s = s[1:]
	}
	i := 0
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	intDigits, fracDigits := s[:i], s[:0]
	if i < len(s) && s[i] == '.' {
		j := i + 1
		for j < len(s) && isDigit(s[j]) {
			j++
		}
		fracDigits, i = s[i+1:j], j
	}
	exp := int64(0)
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		expNeg := false
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			expNeg = s[i] == '-'
			i++
		}
		for ; i < len(s) && isDigit(s[i]); i++ {
			if exp < 1<<40 { // saturate: far beyond any bound below
				exp = exp*10 + int64(s[i]-'0')
			}
		}
		if expNeg {
			exp = -exp
		}
	}
	if i != len(s) || len(intDigits) == 0 {
		return TraceTime{}, timeNotNumber
	}
	// The value is 0.digits × 10^point.
	digits := append(append(make([]byte, 0, len(intDigits)+len(fracDigits)), intDigits...), fracDigits...)
	point := int64(len(intDigits)) + exp
	lead := 0
	for lead < len(digits) && digits[lead] == '0' {
		lead++
	}
	digits, point = digits[lead:], point-int64(lead)
	for len(digits) > 0 && digits[len(digits)-1] == '0' {
		digits = digits[:len(digits)-1]
	}
	switch {
	case len(digits) == 0:
		return TraceTime{}, timeOK
	case neg:
		return TraceTime{}, timeNegative
	case point > traceTimeDigits:
		return TraceTime{}, timeTooLarge
	case int64(len(digits))-point > maxTraceTimeDecimals:
		return TraceTime{}, timeTooPrecise
	}
	var t TraceTime
	if point <= 0 {
		t.Frac = strings.Repeat("0", int(-point)) + string(digits)
		return t, timeOK
	}
	n := int(point) // 1..19
	for k := range n {
		d := uint64(0)
		if k < len(digits) {
			d = uint64(digits[k] - '0')
		}
		t.Whole = t.Whole*10 + d
	}
	if n < len(digits) {
		t.Frac = string(digits[n:])
	}
	return t, timeOK
}

func (p *mooncakeParser) parseHashIDs(v []byte, lineNo int) error {
	p.scratch = p.scratch[:0]
	if v[0] != '[' {
		return p.errf(lineNo, "hash_ids", "must be a list of integers >= 0 (one per %d-token block), got %s", p.blockSize, describeJSON(v))
	}
	i := skipJSONSpace(v, 1)
	if v[i] == ']' {
		return nil
	}
	for {
		id, end, ok := scanPlainUint(v, i)
		if !ok {
			end = skipJSONValue(v, i)
			e := v[i:end]
			var st numStatus
			if id, st = parseJSONUint(e, math.MaxUint64); st != numOK {
				return p.errf(lineNo, "hash_ids["+strconv.Itoa(len(p.scratch))+"]", "%s, got %s",
					st.want(math.MaxUint64, "an integer >= 0"), describeJSON(e))
			}
		}
		p.scratch = append(p.scratch, id)
		i = skipJSONSpace(v, end)
		if v[i] != ',' {
			return nil
		}
		i = skipJSONSpace(v, i+1)
	}
}

func (p *mooncakeParser) checkOutputTokenIDs(v []byte, lineNo, outLen int, outName string) error {
	if v[0] != '[' {
		return p.errf(lineNo, "output_token_ids", "must be a list of integers >= 0 (token ids), got %s", describeJSON(v))
	}
	count := 0
	i := skipJSONSpace(v, 1)
	if v[i] != ']' {
		for {
			end := skipJSONValue(v, i)
			e := v[i:end]
			if _, st := parseJSONUint(e, math.MaxInt64); st != numOK {
				return p.errf(lineNo, "output_token_ids["+strconv.Itoa(count)+"]", "%s, got %s",
					st.want(math.MaxInt64, "an integer >= 0 (token id)"), describeJSON(e))
			}
			count++
			i = skipJSONSpace(v, end)
			if v[i] != ',' {
				break
			}
			i = skipJSONSpace(v, i+1)
		}
	}
	if count != outLen {
		return p.errf(lineNo, "output_token_ids", "has %d ids, but %s is %d; the two must be equal", count, outName, outLen)
	}
	return nil
}

// numStatus classifies an attempt to read a JSON value as a non-negative integer.
type numStatus int

const (
	numOK numStatus = iota
	numNotNumber
	numNotInteger
	numNegative
	numTooLarge
	numInexact // a float-form whole number above 2^53
)

func (st numStatus) want(limit uint64, base string) string {
	switch st {
	case numTooLarge:
		return fmt.Sprintf("must be an integer in [0, %d]", limit)
	case numInexact:
		return "must be " + base + "; whole numbers above 2^53 must be written without a fraction or exponent"
	}
	return "must be " + base
}

// parseJSONUint reads v (one valid JSON value) as an integer in [0, limit]. Integer literals
// are read exactly; fraction/exponent forms are accepted only for whole values <= 2^53.
func parseJSONUint(v []byte, limit uint64) (uint64, numStatus) {
	if len(v) == 0 {
		return 0, numNotNumber
	}
	// Fast path: a plain run of digits.
	var u uint64
	j := 0
	for ; j < len(v); j++ {
		c := v[j]
		if !isDigit(c) {
			break
		}
		d := uint64(c - '0')
		if u > (math.MaxUint64-d)/10 {
			return 0, numTooLarge
		}
		u = u*10 + d
	}
	if j == len(v) {
		if u > limit {
			return 0, numTooLarge
		}
		return u, numOK
	}
	c := v[0]
	if c != '-' && !isDigit(c) {
		return 0, numNotNumber
	}
	if isIntLiteral(v) { // negative integer literal
		if strings.Trim(string(v[1:]), "0") == "" {
			return 0, numOK // -0
		}
		return 0, numNegative
	}
	f, err := strconv.ParseFloat(string(v), 64)
	switch {
	case err != nil && !math.IsInf(f, 0):
		return 0, numNotInteger
	case f != math.Trunc(f):
		return 0, numNotInteger
	case f < 0:
		return 0, numNegative
	case f > 1<<53:
		if float64(limit) < f {
			return 0, numTooLarge
		}
		return 0, numInexact
	case uint64(f) > limit:
		return 0, numTooLarge
	}
	return uint64(f), numOK
}

// scanPlainUint is the fast path for list elements: it reads the run of digits at v[i] and
// reports ok only when the run is non-empty, fits in a uint64 and ends the element.
func scanPlainUint(v []byte, i int) (u uint64, end int, ok bool) {
	j := i
	for ; j < len(v) && isDigit(v[j]); j++ {
		d := uint64(v[j] - '0')
		if u > (math.MaxUint64-d)/10 {
			return 0, i, false
		}
		u = u*10 + d
	}
	if j == i || j == len(v) {
		return 0, i, false
	}
	if c := v[j]; c == ',' || c == ']' || isJSONSpace(c) {
		return u, j, true
	}
	return 0, i, false
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// isIntLiteral reports whether v is a JSON integer literal (optional minus, digits).
func isIntLiteral(v []byte) bool {
	s := v
	if len(s) > 0 && s[0] == '-' {
		s = s[1:]
	}
	if len(s) == 0 {
		return false
	}
	for _, c := range s {
		if !isDigit(c) {
			return false
		}
	}
	return true
}

func satMul(a, b int) int {
	if a <= 0 || b <= 0 {
		return a * b
	}
	if a > math.MaxInt/b {
		return math.MaxInt
	}
	return a * b
}

func jsonKind(v []byte) string {
	switch v[0] {
	case '"':
		return "string"
	case '{':
		return "object"
	case '[':
		return "list"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}

// describeJSON renders a value for an error message: its kind and (truncated) text.
func describeJSON(v []byte) string {
	const maxShow = 40
	s := string(v)
	if len(s) > maxShow {
		n := maxShow
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		s = s[:n] + "..."
	}
	switch k := jsonKind(v); k {
	case "number", "boolean", "null":
		return s
	default:
		return k + " " + s
	}
}

// fieldLabel returns a key for the Field part of an error: as is when it is a plain
// identifier, quoted otherwise (empty, spaces, punctuation, control characters).
func fieldLabel(k string) string {
	if k == "" {
		return `""`
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c == '_' || c == '-' || c == '.' || isDigit(c) || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			return strconv.Quote(k)
		}
	}
	return k
}

func isJSONSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func trimJSONSpace(b []byte) []byte {
	for len(b) > 0 && isJSONSpace(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isJSONSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

// The scanners below assume b holds valid JSON (checked with json.Valid first).

func skipJSONSpace(b []byte, i int) int {
	for i < len(b) && isJSONSpace(b[i]) {
		i++
	}
	return i
}

// scanJSONString returns the index just past the string starting at b[i] == '"', and
// whether it contains escapes.
func scanJSONString(b []byte, i int) (int, bool) {
	esc := false
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			esc = true
			j++
		case '"':
			return j + 1, esc
		}
	}
	return len(b), esc
}

// skipJSONValue returns the index just past the value starting at b[i].
func skipJSONValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		end, _ := scanJSONString(b, i)
		return end
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				end, _ := scanJSONString(b, j)
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return len(b)
	}
	j := i
	for j < len(b) {
		c := b[j]
		if c == ',' || c == '}' || c == ']' || isJSONSpace(c) {
			break
		}
		j++
	}
	return j
}

// hashIDCount is n hash ids in words, "1 hash id" or "n hash ids", for error messages.
func hashIDCount(n int) string {
	if n == 1 {
		return "1 hash id"
	}
	return fmt.Sprintf("%d hash ids", n)
}
