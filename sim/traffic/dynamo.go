package traffic

import (
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
)

// DynamoSchema is the schema tag of a Dynamo request-trace record.
const DynamoSchema = "dynamo.request.trace.v1"

// dynamoEvent is the part of a dynamo.request.trace.v1 record the replay reads; every other key
// is ignored. Values are kept raw so that each is checked with its own message.
type dynamoEvent struct {
	Schema       json.RawMessage `json:"schema"`
	EventType    json.RawMessage `json:"event_type"`
	EventTime    json.RawMessage `json:"event_time_unix_ms"`
	AgentContext json.RawMessage `json:"agent_context"`
	Request      json.RawMessage `json:"request"`
}

type dynamoRequest struct {
	RequestID    json.RawMessage `json:"request_id"`
	OutputTokens json.RawMessage `json:"output_tokens"`
	ReceivedMs   json.RawMessage `json:"request_received_ms"`
	TotalTimeMs  json.RawMessage `json:"total_time_ms"`
	Replay       json.RawMessage `json:"replay"`
}

type dynamoReplay struct {
	BlockSize   json.RawMessage `json:"trace_block_size"`
	InputLength json.RawMessage `json:"input_length"`
	Hashes      json.RawMessage `json:"input_sequence_hashes"`
}

// dynamoRow is a request_end record with the times it is ordered by.
type dynamoRow struct {
	row        TraceRow
	start, end uint64
}

// LoadDynamo reads the Dynamo request-trace shards at paths (JSONL; a path ending in .gz is
// gzip-compressed, several members allowed) and returns their requests as rows, ordered by
// (start, end, request_id), and the block size the records embed. expectedBlockSize, when > 0,
// must equal it (an explicit traffic.source.block_size). The format, as the reference's Dynamo
// loader reads it:
//
//   - Each non-blank line is one JSON object: a record, or an object whose `event` member is the
//     record. A record's `event_type` says what it is: request_end records are requests;
//     request_payload and tool_start records are skipped; tool_end and tool_error records carry
//     tool timing that only agentic traces use; any other type is an error.
//   - Every kept record has `schema` "dynamo.request.trace.v1" and `event_time_unix_ms`, an
//     integer >= 0 (ms since the epoch).
//   - A request_end record's `request` holds `request_id` (a non-empty string, unique across all
//     shards), `output_tokens` (integer >= 0, tokens), optional `request_received_ms` (integer
//     ms, not after event_time_unix_ms) and `total_time_ms` (number >= 0), and `replay` {`trace_block_size` (integer > 0, the
//     same in every record), `input_length` (tokens), `input_sequence_hashes` (one integer per
//     trace block, the last block may be partial)}.
//   - The request starts at request_received_ms, else at event_time_unix_ms minus
//     round(total_time_ms); it ends at request_received_ms + round(total_time_ms) when both are
//     given, else at event_time_unix_ms. Its row's timestamp is its start (FromTrace subtracts
//     the earliest); rows carry no session.
//
// A record with `agent_context` makes the trace agentic, which is not simulated: it is an error.
// Errors are *TraceError values naming the shard, the line and the field (dotted, e.g.
// `request.replay.input_length`); a shard that cannot be opened is an *fs.PathError wrapped with
// context.
func LoadDynamo(paths []string, expectedBlockSize int) ([]TraceRow, int, error) {
	p := dynamoParser{expected: expectedBlockSize, ids: map[string]string{}}
	for _, path := range paths {
		if err := p.loadFile(path); err != nil {
			return nil, 0, err
		}
	}
	if len(p.rows) == 0 {
		return nil, 0, &TraceError{File: paths[0], Msg: "the trace has no request_end records (a Dynamo trace needs at least one request)"}
	}
	sort.SliceStable(p.rows, func(a, b int) bool {
		x, y := &p.rows[a], &p.rows[b]
		if x.start != y.start {
			return x.start < y.start
		}
		if x.end != y.end {
			return x.end < y.end
		}
		return x.row.RequestID < y.row.RequestID
	})
	first, last := p.rows[0].start, p.rows[len(p.rows)-1].start
	if last-first > MaxTraceSpanMs {
		r := &p.rows[len(p.rows)-1].row
		return nil, 0, &TraceError{File: r.File, Line: r.Line, Field: "request.request_received_ms", Msg: fmt.Sprintf(
			"the request starts %d ms after the earliest one, but a trace may span at most %d ms (30 days)", last-first, uint64(MaxTraceSpanMs))}
	}
	rows := make([]TraceRow, len(p.rows))
	for i := range p.rows {
		rows[i] = p.rows[i].row
	}
	return rows, p.blockSize, nil
}

type dynamoParser struct {
	expected  int
	blockSize int
	sizeAt    string // file:line of the first record, which set blockSize
	ids       map[string]string
	rows      []dynamoRow
	arena     []uint64
}

func (p *dynamoParser) loadFile(path string) error {
	f, err := openTrace("dynamo", path)
	if err != nil {
		return err
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		zr, err := gzip.NewReader(f)
		if err != nil {
			return &TraceError{File: path, Msg: "not a gzip file (a .gz shard must be gzip-compressed JSONL): " + err.Error(), Err: err}
		}
		defer zr.Close()
		r = zr
	}
	return p.parse(r, path)
}

// parse reads one shard from r; file names it in errors.
func (p *dynamoParser) parse(r io.Reader, file string) error {
	return forEachLine(r, file, maxMooncakeLineBytes, func(line []byte, lineNo int) error {
		b := trimJSONSpace(line)
		if len(b) == 0 {
			return nil
		}
		if _, err := splitObject(b, file, lineNo); err != nil {
			return err
		}
		return p.record(b, file, lineNo)
	})
}

func (p *dynamoParser) record(b []byte, file string, lineNo int) error {
	bad := func(field, format string, args ...any) error {
		return &TraceError{File: file, Line: lineNo, Field: field, Msg: fmt.Sprintf(format, args...)}
	}
	var wrap struct {
		Event json.RawMessage `json:"event"`
	}
	prefix := ""
	if json.Unmarshal(b, &wrap) == nil && len(wrap.Event) > 0 && wrap.Event[0] == '{' {
		b, prefix = wrap.Event, "event."
	}
	var ev dynamoEvent
	if err := json.Unmarshal(b, &ev); err != nil {
		return bad(prefix, "%v", err)
	}
	etype, err := rawString(ev.EventType)
	if err != nil {
		return bad(prefix+"event_type", "must be a string, got %s", describeJSONOrMissing(ev.EventType))
	}
	switch etype {
	case "request_payload", "tool_start":
		return nil
	case "request_end", "tool_end", "tool_error":
	default:
		return bad(prefix+"event_type", "is %q; a Dynamo request trace holds request_end, request_payload, tool_start, tool_end and tool_error records", etype)
	}
	if schema, err := rawString(ev.Schema); err != nil || schema != DynamoSchema {
		return bad(prefix+"schema", "must be %q, got %s", DynamoSchema, describeJSONOrMissing(ev.Schema))
	}
	if isNull(ev.EventTime) {
		return bad(prefix+"event_time_unix_ms", "missing; required: an integer >= 0 (ms since the epoch)")
	}
	eventMs, err := readUint(ev.EventTime, math.MaxInt64, file, lineNo, prefix+"event_time_unix_ms", "an integer >= 0 (ms since the epoch)")
	if err != nil {
		return err
	}
	if !isNull(ev.AgentContext) {
		return bad(prefix+"agent_context", "agentic Dynamo traces (records with agent_context) are not supported yet; use a standard trace or convert it to agentic_mooncake")
	}
	if etype != "request_end" {
		return nil // tool timing: used by agentic traces only
	}
	if isNull(ev.Request) {
		return bad(prefix+"request", "missing; a request_end record needs its request metrics")
	}
	pre := prefix + "request."
	var rq dynamoRequest
	if ev.Request[0] != '{' || json.Unmarshal(ev.Request, &rq) != nil {
		return bad(prefix+"request", "must be an object, got %s", describeJSON(ev.Request))
	}
	id, err := rawString(rq.RequestID)
	if err != nil || strings.TrimSpace(id) == "" {
		return bad(pre+"request_id", "must be a non-empty string, got %s", describeJSONOrMissing(rq.RequestID))
	}
	if at, dup := p.ids[id]; dup {
		return bad(pre+"request_id", "%q is already the id of the request at %s; request ids must be unique across all shards", id, at)
	}
	p.ids[id] = fmt.Sprintf("%s:%d", file, lineNo)
	if isNull(rq.OutputTokens) {
		return bad(pre+"output_tokens", "missing; required: an integer >= 0 (tokens)")
	}
	out, err := readUint(rq.OutputTokens, math.MaxInt32, file, lineNo, pre+"output_tokens", "an integer >= 0 (tokens)")
	if err != nil {
		return err
	}
	var total uint64
	haveTotal := !isNull(rq.TotalTimeMs)
	if haveTotal {
		t, err := readNonNegative(rq.TotalTimeMs, MaxTraceSpanMs, file, lineNo, pre+"total_time_ms", "ms")
		if err != nil {
			return err
		}
		total = uint64(math.Round(t))
	}
	start, end := eventMs-min(total, eventMs), eventMs
	if !isNull(rq.ReceivedMs) {
		if start, err = readUint(rq.ReceivedMs, math.MaxInt64, file, lineNo, pre+"request_received_ms", "an integer >= 0 (ms since the epoch)"); err != nil {
			return err
		}
		if haveTotal {
			end = start + total
		}
		if start > eventMs {
			return bad(pre+"request_received_ms", "is %d, after the record's event_time_unix_ms %d: a request is received before it ends", start, eventMs)
		}
	}

	in, hashes, err := p.replay(rq.Replay, pre+"replay", file, lineNo)
	if err != nil {
		return err
	}
	p.rows = append(p.rows, dynamoRow{start: start, end: end, row: TraceRow{
		Line: lineNo, File: file, RequestID: id, InputLength: int(in), OutputLength: int(out),
		HashIDs: hashes, HasTimestamp: true, Timestamp: TraceTime{Whole: start},
	}})
	return nil
}

// replay reads a request_end record's replay object raw (at path, in file's line lineNo): the
// input length and its block hashes (nil for an empty input), which it keeps in the parser's
// arena, and the trace's block size, which every record must share.
func (p *dynamoParser) replay(raw json.RawMessage, path, file string, lineNo int) (in uint64, hashes []uint64, err error) {
	bad := func(field, format string, args ...any) error {
		return &TraceError{File: file, Line: lineNo, Field: field, Msg: fmt.Sprintf(format, args...)}
	}
	if isNull(raw) {
		return 0, nil, bad(path, "missing; required: {trace_block_size, input_length, input_sequence_hashes}")
	}
	var rp dynamoReplay
	if raw[0] != '{' || json.Unmarshal(raw, &rp) != nil {
		return 0, nil, bad(path, "must be an object, got %s", describeJSON(raw))
	}
	pre := path + "."
	for _, f := range [...]struct {
		v    json.RawMessage
		name string
	}{{rp.BlockSize, "trace_block_size"}, {rp.InputLength, "input_length"}, {rp.Hashes, "input_sequence_hashes"}} {
		if isNull(f.v) {
			return 0, nil, bad(pre+f.name, "missing; required")
		}
	}
	bs, err := readUint(rp.BlockSize, math.MaxInt32, file, lineNo, pre+"trace_block_size", "an integer > 0 (tokens per hash)")
	if err != nil {
		return 0, nil, err
	}
	switch {
	case bs == 0:
		return 0, nil, bad(pre+"trace_block_size", "must be an integer > 0 (tokens per hash), got 0")
	case p.expected > 0 && int(bs) != p.expected:
		return 0, nil, bad(pre+"trace_block_size", "is %d, but traffic.source.block_size is %d; for a dynamo trace the embedded block size is authoritative (omit block_size or make them equal)", bs, p.expected)
	case p.blockSize == 0:
		p.blockSize, p.sizeAt = int(bs), fmt.Sprintf("%s:%d", file, lineNo)
	case int(bs) != p.blockSize:
		return 0, nil, bad(pre+"trace_block_size", "is %d, but the record at %s has %d; every record of a trace needs the same block size", bs, p.sizeAt, p.blockSize)
	}
	in, err = readUint(rp.InputLength, math.MaxInt32, file, lineNo, pre+"input_length", "an integer >= 0 (tokens)")
	if err != nil {
		return 0, nil, err
	}
	elems, ok := listElems(rp.Hashes)
	if !ok {
		return 0, nil, bad(pre+"input_sequence_hashes", "must be a list of integers >= 0, one per %d-token block, got %s", bs, describeJSON(rp.Hashes))
	}
	start0 := len(p.arena)
	for i, e := range elems {
		h, err := readUint(e, math.MaxUint64, file, lineNo, fmt.Sprintf("%sinput_sequence_hashes[%d]", pre, i), "an integer >= 0")
		if err != nil {
			return 0, nil, err
		}
		p.arena = append(p.arena, h)
	}
	hashes = p.arena[start0:len(p.arena):len(p.arena)]
	n, size := uint64(len(hashes)), bs
	switch {
	case n == 0 && in > 0:
		return 0, nil, bad(pre+"input_sequence_hashes", "is empty, but input_length is %d; an empty list is valid only when the input length is 0", in)
	case n > 0 && !((n-1)*size < in && in <= n*size):
		return 0, nil, bad(pre+"input_length", "is %d, but %d hashes of %d tokens allow %d..%d (the last block may be partial)", in, n, size, (n-1)*size+1, n*size)
	}
	if n == 0 {
		hashes = nil
	}
	return in, hashes, nil
}

// isNull reports whether a raw member is absent or JSON null.
func isNull(v json.RawMessage) bool { return len(v) == 0 || string(v) == "null" }

// rawString decodes a raw JSON string.
func rawString(v json.RawMessage) (string, error) {
	if len(v) == 0 || v[0] != '"' {
		return "", errors.New("not a string")
	}
	var s string
	err := json.Unmarshal(v, &s)
	return s, err
}

func describeJSONOrMissing(v json.RawMessage) string {
	if isNull(v) {
		return "nothing"
	}
	return describeJSON(v)
}
