package traffic

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/zeebo/xxh3"
)

// Block hashes depend on token content only, not on how content is split into pieces, and match
// the reference scheme: XXH3-64 (seed 1337) of the block's little-endian uint32 tokens, chained
// through (parent, local) for later blocks.
func TestBlockHashesContentAndChaining(t *testing.T) {
	w := &Workload{Requests: []Request{
		{PromptLen: 8, OutputLen: 0, Content: []Piece{{Start: 10, Len: 8}}},
		{PromptLen: 8, OutputLen: 0, Content: []Piece{{Start: 10, Len: 3}, {Start: 13, Len: 5}}},
		{PromptLen: 8, OutputLen: 0, Content: []Piece{{Start: 10, Len: 4}, {Start: 99, Len: 4}}},
		{PromptLen: 8, OutputLen: 0, Content: []Piece{{Start: 7, Len: 4, Kind: PieceRepeat}, {Start: 7, Len: 4, Kind: PieceRepeat}}},
	}}
	h := w.BlockHashes(4, 1<<30)
	local := func(toks ...uint32) uint64 {
		b := make([]byte, 4*len(toks))
		for i, v := range toks {
			binary.LittleEndian.PutUint32(b[4*i:], v)
		}
		return xxh3.HashSeed(b, 1337)
	}
	chain := func(parent, l uint64) uint64 {
		var b [16]byte
		binary.LittleEndian.PutUint64(b[:], parent)
		binary.LittleEndian.PutUint64(b[8:], l)
		return xxh3.HashSeed(b[:], 1337)
	}
	b0 := local(10, 11, 12, 13)
	want0 := []uint64{b0, chain(b0, local(14, 15, 16, 17))}
	for i, want := range [][]uint64{want0, want0} {
		if len(h[i]) != 2 || h[i][0] != want[0] || h[i][1] != want[1] {
			t.Fatalf("request %d hashes %x, want %x", i, h[i], want)
		}
	}
	if h[2][0] != b0 || h[2][1] == want0[1] {
		t.Fatalf("request 2 must share block 0 only: %x vs %x", h[2], want0)
	}
	r7 := local(7, 7, 7, 7)
	if h[3][0] != r7 || h[3][1] != chain(r7, r7) {
		t.Fatalf("repeat pieces: %x", h[3])
	}
	// Blocks keeps the shared leading hashes only, once per block size: requests 0 and 1 share
	// both blocks, request 2 block 0 with them, request 3 nothing.
	bs := w.Blocks(4, 1<<30)
	if w.Blocks(4, 1<<30) != bs {
		t.Fatal("blocks are not cached per block size")
	}
	if msg := sameNames(bs.Shared, bs.Distinct, [][]uint64{want0, want0, {b0}, nil}); msg != "" {
		t.Error(msg)
	}
	for i := range 4 {
		if bs.Full[i] != 2 {
			t.Errorf("request %d: %d full blocks, want 2", i, bs.Full[i])
		}
	}
}

// Blocks against BlockHashes on workloads with sharing (sessions of prefix groups, a trace with
// common hash ids): Shared[i] is the leading run of request i's hashes that another request
// holds, Full[i] its count of hashed blocks, under a context limit too; a workload of distinct
// requests hashes nothing.
func TestBlocksKeepTheSharedPrefixes(t *testing.T) {
	sessions := SyntheticSessions(6, SessionShape{Turns: 3, NewInput: Fixed(100), Output: Fixed(20), SharedPrefixRatio: 0.5, PrefixGroups: 2})
	trace := FromTrace([]TraceRow{
		{Line: 1, InputLength: 1000, OutputLength: 10, HashIDs: []uint64{7, 8}, HasTimestamp: true},
		{Line: 2, InputLength: 600, OutputLength: 5, HashIDs: []uint64{7, 9}, HasTimestamp: true},
		{Line: 3, InputLength: 1100, OutputLength: 5, HashIDs: []uint64{7, 8, 3}, HasTimestamp: true},
	}, 512, 1)
	// The same consecutive ids held as one piece, split over two, or as single-token repeats
	// (named by their first id in Blocks), beside ids that break the run after the first block.
	pieces := &Workload{Requests: []Request{
		{PromptLen: 8, Content: []Piece{{Start: 10, Len: 3}, {Start: 13, Len: 5}}},
		{PromptLen: 8, Content: []Piece{{Start: 10, Len: 8}}},
		{PromptLen: 8, Content: []Piece{{Start: 10, Len: 4}, {Start: 99, Len: 4}}},
		{PromptLen: 8, Content: []Piece{{Start: 10, Len: 4}, {Start: 14, Len: 1, Kind: PieceRepeat},
			{Start: 15, Len: 1, Kind: PieceRepeat}, {Start: 16, Len: 2}}},
		{PromptLen: 8, Content: []Piece{{Start: 30, Len: 4}, {Start: 99, Len: 4}}},
	}}
	for _, c := range []struct {
		name       string
		w          *Workload
		bs, maxTok int
	}{{"sessions", sessions, 16, 1 << 30}, {"sessions, context 200", sessions, 16, 200}, {"trace", trace, 64, 1 << 30}, {"pieces", pieces, 4, 1 << 30}} {
		if checkSharing(t, c.name, c.w, c.bs, c.maxTok) == 0 {
			t.Errorf("%s: no shared block, the case checks nothing", c.name)
		}
	}
	d := Synthetic(4, 100, 10).Blocks(16, 1<<30)
	for i := range 4 {
		if d.Full[i] != 6 || len(d.Shared[i]) != 0 {
			t.Errorf("distinct request %d: %d blocks, %d shared; want 6 and 0", i, d.Full[i], len(d.Shared[i]))
		}
	}
}

// checkSharing checks w.Blocks(bs, maxTok) against BlockHashes' XXH3 hashes: Shared[i] is the
// leading run of request i's hashes that another request holds (named alike exactly when the
// hashes are equal), Full[i] its count of hashed blocks. It returns the shared blocks counted.
func checkSharing(t *testing.T, name string, w *Workload, bs, maxTok int) int {
	t.Helper()
	all := w.BlockHashes(bs, maxTok)
	got := w.Blocks(bs, maxTok)
	holders := map[uint64]int{}
	for _, hs := range all {
		for _, x := range hs {
			holders[x]++
		}
	}
	sharing := 0
	want := make([][]uint64, len(all))
	for i, hs := range all {
		n := 0
		for n < len(hs) && holders[hs[n]] >= 2 {
			n++
		}
		sharing += n
		want[i] = hs[:n]
		if got.Full[i] != int32(len(hs)) {
			t.Errorf("%s request %d: %d blocks, want %d", name, i, got.Full[i], len(hs))
		}
	}
	if msg := sameNames(got.Shared, got.Distinct, want); msg != "" {
		t.Errorf("%s: %s", name, msg)
	}
	return sharing
}

// Blocks names blocks of consecutive ids by their first id (runHash) and the others by XXH3;
// on random requests mixing every piece kind (runs, single-token repeats, hash blocks) over a
// few ids, so that the same tokens come in different pieces, at block sizes 1 to 4, it shares
// exactly the blocks XXH3 over the tokens shares.
func TestBlocksSharingOnMixedPieces(t *testing.T) {
	shared := 0
	for seed := range uint64(300) {
		rng := newRand(seed)
		w := &Workload{HashBlockSize: 3, HashTokens: make([]uint32, 6)}
		for i := range w.HashTokens {
			w.HashTokens[i] = 10 + uint32(rng.IntN(6))
		}
		for range 6 {
			var r Request
			for range 1 + rng.IntN(4) {
				p := Piece{Start: 10 + uint32(rng.IntN(6)), Len: 1 + int32(rng.IntN(6))}
				switch rng.IntN(3) {
				case 1:
					p.Kind = PieceRepeat
				case 2:
					p = Piece{Kind: PieceHashBlocks, Start: uint32(rng.IntN(4)), Len: 1 + int32(rng.IntN(6))}
				}
				r.Content = append(r.Content, p)
				r.PromptLen += p.Len
			}
			w.Requests = append(w.Requests, r)
		}
		for bs := 1; bs <= 4; bs++ {
			shared += checkSharing(t, fmt.Sprintf("seed %d, block size %d", seed, bs), w, bs, 1<<30)
		}
	}
	if shared < 1000 {
		t.Errorf("%d shared blocks over every case: too few to check the naming", shared)
	}
}

// The compact BlockSet (beyond Workload.MaterializedKeysLimit) keeps no per-request ids but rebuilds the
// same ones: for every request SharedKeys equals the kept form's Shared, and Distinct and Full
// are equal.
func TestCompactBlockSetSameKeys(t *testing.T) {
	build := func(limit int) *Workload {
		w := SyntheticSessions(40, SessionShape{Turns: 4, NewInput: Fixed(100), Output: Fixed(20), SharedPrefixRatio: 0.5, PrefixGroups: 3})
		w.MaterializedKeysLimit = limit
		return w
	}
	kept := build(0).Blocks(16, 1<<30)
	compact := build(-1).Blocks(16, 1<<30)
	if !compact.Compact() || kept.Compact() || compact.Shared != nil {
		t.Fatalf("forms: kept compact=%v, compact compact=%v", kept.Compact(), compact.Compact())
	}
	if compact.Distinct != kept.Distinct || !slices.Equal(compact.Full, kept.Full) {
		t.Fatalf("distinct %d vs %d, full %v vs %v", compact.Distinct, kept.Distinct, compact.Full, kept.Full)
	}
	shared := 0
	for i := range kept.Shared {
		got := compact.SharedKeys(i)
		if !slices.Equal(got, kept.Shared[i]) || compact.SharedLen(i) != int32(len(kept.Shared[i])) {
			t.Fatalf("request %d: compact keys %v (len %d), kept %v", i, got, compact.SharedLen(i), kept.Shared[i])
		}
		shared += len(got)
	}
	if shared == 0 {
		t.Fatal("no shared block: the case checks nothing")
	}
	// The limit is inclusive: exactly as many ids as shared blocks keeps them, one fewer does not.
	if build(shared).Blocks(16, 1<<30).Compact() {
		t.Errorf("a limit of %d ids made %d shared ids compact", shared, shared)
	}
	if !build(shared-1).Blocks(16, 1<<30).Compact() {
		t.Errorf("a limit of %d ids kept %d shared ids", shared-1, shared)
	}
}

// Sessions of one prefix group share exactly the full blocks inside the shared run; each turn's
// hashes extend the previous turn's (prompt + output), so a later turn can reuse it whole.
func TestSyntheticSessionsSharing(t *testing.T) {
	w := SyntheticSessions(3, SessionShape{Turns: 3, NewInput: Fixed(100), Output: Fixed(20), SharedPrefixRatio: 0.5, PrefixGroups: 2})
	if len(w.Requests) != 9 || len(w.Sessions) != 3 {
		t.Fatalf("got %d requests, %d sessions", len(w.Requests), len(w.Sessions))
	}
	for k, want := range []int32{100, 220, 340} {
		if got := w.Requests[k].PromptLen; got != want {
			t.Errorf("turn %d prompt %d, want %d", k, got, want)
		}
	}
	h := w.BlockHashes(16, 1<<30)
	// Sessions 0 and 2 are group 0: 50 shared tokens = 3 full blocks of 16.
	s0, s1, s2 := h[0], h[3], h[6]
	for b := 0; b < 3; b++ {
		if s0[b] != s2[b] {
			t.Errorf("block %d not shared within the group", b)
		}
		if s0[b] == s1[b] {
			t.Errorf("block %d shared across groups", b)
		}
	}
	if s0[3] == s2[3] {
		t.Error("block 3 straddles the shared run and must differ")
	}
	// Turn 1 of session 0 starts with all of turn 0's blocks (120 tokens → 7 full blocks).
	for b := 0; b < 7; b++ {
		if h[1][b] != h[0][b] {
			t.Fatalf("turn 1 block %d differs from turn 0", b)
		}
	}
}

// Trace rows expand hash ids into block_size copies of one token; rows sharing a leading hash id
// share the engine blocks inside it, and the last trace block is cut at the input length.
func TestFromTrace(t *testing.T) {
	rows := []TraceRow{
		{Line: 1, InputLength: 1000, OutputLength: 10, HashIDs: []uint64{7, 8}, HasTimestamp: true, Timestamp: TraceTime{Whole: 500}},
		{Line: 2, InputLength: 600, OutputLength: 5, HashIDs: []uint64{7, 9}, HasTimestamp: true, Timestamp: TraceTime{Whole: 1500}},
		{Line: 3, SessionID: "s", InputLength: 100, OutputLength: 5, HashIDs: []uint64{1}, HasTimestamp: true, Timestamp: TraceTime{Whole: 2500}},
		{Line: 4, SessionID: "s", InputLength: 200, OutputLength: 5, HashIDs: []uint64{1}, HasTimestamp: true, Timestamp: TraceTime{Whole: 4500}},
	}
	w := FromTrace(rows, 512, 2)
	if len(w.Sessions) != 3 || w.Sessions[2].Turns != 2 || w.Sessions[2].Name != "s" {
		t.Fatalf("sessions %+v", w.Sessions)
	}
	if w.Sessions[1].StartMs != 500 || w.Sessions[2].StartMs != 1000 || w.Requests[3].DelayMs != 1000 {
		t.Fatalf("timing: starts %v %v delay %v", w.Sessions[1].StartMs, w.Sessions[2].StartMs, w.Requests[3].DelayMs)
	}
	h := w.BlockHashes(64, 1<<30)
	if len(h[0]) != (1000+10)/64 {
		t.Fatalf("row 1 has %d blocks", len(h[0]))
	}
	for b := 0; b < 8; b++ {
		if h[0][b] != h[1][b] {
			t.Fatalf("block %d of the shared hash id differs", b)
		}
	}
	if h[0][8] == h[1][8] {
		t.Fatal("different second hash ids must give different blocks")
	}
}

// Session starts are the exact gap to the earliest first-turn timestamp and delays the exact gap
// to the previous turn, so epoch-scale timestamps keep their ms (float64 spacing is 256 at 1.7e18
// and 0.25 at 1.7e15).
func TestFromTraceNormalisesExactly(t *testing.T) {
	for _, c := range []struct {
		name   string
		in     string
		starts []float64
		delay  float64 // of request 2, turn 1 of session "s"
	}{
		{"epoch ms", `{"output_length": 1, "hash_ids": [1], "timestamp": 1733000000000}
{"output_length": 1, "hash_ids": [2], "timestamp": 1733000000015, "session_id": "s"}
{"output_length": 1, "hash_ids": [3], "timestamp": 1733000000040, "session_id": "s"}`, []float64{0, 15}, 25},
		{"epoch-ns magnitude", `{"output_length": 1, "hash_ids": [1], "timestamp": 1733000000000000000}
{"output_length": 1, "hash_ids": [2], "timestamp": 1733000000000000015, "session_id": "s"}
{"output_length": 1, "hash_ids": [3], "timestamp": 1733000000000000020, "session_id": "s"}`, []float64{0, 15}, 5},
		{"decimals", `{"output_length": 1, "hash_ids": [1], "timestamp": 1733000000000000.3}
{"output_length": 1, "hash_ids": [2], "timestamp": 1733000000000000.1, "session_id": "s"}
{"output_length": 1, "hash_ids": [3], "timestamp": 17330000000000003.5e-1, "session_id": "s"}`, []float64{0.2, 0}, 0.25},
	} {
		rows, err := ParseMooncake(strings.NewReader(c.in), "t.jsonl", 2)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		w := FromTrace(rows, 2, 1)
		if len(w.Sessions) != 2 || w.Sessions[0].StartMs != c.starts[0] || w.Sessions[1].StartMs != c.starts[1] ||
			w.Requests[2].DelayMs != c.delay {
			t.Errorf("%s: starts %v %v, delay %v; want %v, delay %v", c.name,
				w.Sessions[0].StartMs, w.Sessions[1].StartMs, w.Requests[2].DelayMs, c.starts, c.delay)
		}
	}
}

// LatestArrival is the largest session start plus the delays of the turns up to a request.
func TestLatestArrival(t *testing.T) {
	in := `{"output_length": 1, "hash_ids": [1], "timestamp": 0}
{"output_length": 1, "hash_ids": [2], "timestamp": 10, "session_id": "s"}
{"output_length": 1, "hash_ids": [3], "delay": 100, "session_id": "s"}
{"output_length": 1, "hash_ids": [4], "delay": 50, "session_id": "s"}
{"output_length": 1, "hash_ids": [5], "timestamp": 120}`
	rows, err := ParseMooncake(strings.NewReader(in), "t.jsonl", 2)
	if err != nil {
		t.Fatal(err)
	}
	// Session s: 10, 10+100 = 110, 110+50 = 160 (line 4); the last row starts at 120.
	if ms, line := LatestArrival(rows, FromTrace(rows, 2, 1)); ms != 160 || line != 4 {
		t.Errorf("speedup 1: latest arrival %v ms on line %d, want 160 on line 4", ms, line)
	}
	if ms, line := LatestArrival(rows, FromTrace(rows, 2, 2)); ms != 80 || line != 4 {
		t.Errorf("speedup 2: latest arrival %v ms on line %d, want 80 on line 4", ms, line)
	}
	if ms, line := LatestArrival(nil, FromTrace(nil, 2, 1)); ms != 0 || line != 0 {
		t.Errorf("no rows: %v, %d", ms, line)
	}
}

// randomTrace returns n rows as the Mooncake parser leaves them: input lengths within their hash
// ids' blocks of bs tokens (the last one partial or whole), hash ids from a small pool so rows
// share prefixes, some rows turns of a few named sessions, others their own session.
func randomTrace(rng *rand.Rand, n int, bs int) []TraceRow {
	rows := make([]TraceRow, n)
	var prefix []uint64
	for i := range rows {
		ids := make([]uint64, rng.IntN(8))
		for k := range ids {
			switch {
			case k < len(prefix) && rng.IntN(4) > 0:
				ids[k] = prefix[k] // a shared prefix with an earlier row
			default:
				ids[k] = rng.Uint64N(40)
			}
		}
		if len(ids) > 0 {
			prefix = ids
		}
		in := 0
		if len(ids) > 0 {
			in = (len(ids)-1)*bs + 1 + rng.IntN(bs)
		}
		r := TraceRow{Line: i + 1, InputLength: in, OutputLength: rng.IntN(3 * bs), HashIDs: ids,
			HasTimestamp: true, Timestamp: TraceTime{Whole: uint64(10 * i)}}
		if rng.IntN(2) == 0 {
			r.SessionID = "s" + itoa(rng.IntN(5))
		}
		rows[i] = r
	}
	return rows
}

// flatTokens is request r's tokens, one by one, as the pieces' definitions spell them out.
func flatTokens(w *Workload, r *Request) []uint32 {
	var out []uint32
	for _, p := range r.Content {
		for k := range uint32(p.Len) {
			switch p.Kind {
			case PieceRun:
				out = append(out, p.Start+k)
			case PieceRepeat:
				out = append(out, p.Start)
			case PieceHashBlocks:
				out = append(out, w.HashTokens[p.Start+k/uint32(w.HashBlockSize)])
			}
		}
	}
	return out
}

// A trace prompt held as one PieceHashBlocks piece per row hashes exactly as the same prompt
// expanded into one PieceRepeat piece per hash block, and both as the reference scheme over the
// tokens written out one by one: at KV block sizes that divide the trace block size, straddle it
// or exceed it, under context limits, for FromTrace and FromDeltaTrace alike. Blocks agrees too.
func TestHashBlockPiecesHashAsExpandedBlocks(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	defer func(m uint64) { maxHashTokens = m }(maxHashTokens)
	for trial := range 60 {
		tbs := []int{1, 3, 16, 64}[trial%4]
		rows := randomTrace(rng, 1+rng.IntN(40), tbs)
		for _, delta := range []bool{false, true} {
			build := func(limit uint64) *Workload {
				maxHashTokens = limit
				w, err := fromTrace(rows, tbs, 1, delta, 1<<30, "t.jsonl")
				if err != nil {
					t.Fatal(err)
				}
				return w
			}
			compact, expanded := build(math.MaxUint32), build(0)
			if compact.HashTokens == nil || expanded.HashTokens != nil {
				t.Fatalf("trial %d: compact form %v, expanded form %v", trial, compact.HashTokens != nil, expanded.HashTokens == nil)
			}
			for i := range compact.Requests {
				c, e := &compact.Requests[i], &expanded.Requests[i]
				for _, p := range c.Content {
					if p.Kind == PieceRepeat {
						t.Fatalf("trial %d request %d: a PieceRepeat piece in the compact form", trial, i)
					}
				}
				if c.PromptLen != e.PromptLen || c.OutputLen != e.OutputLen || c.Session != e.Session || c.Turn != e.Turn {
					t.Fatalf("trial %d request %d: %+v vs %+v", trial, i, c, e)
				}
				if a, b := flatTokens(compact, c), flatTokens(expanded, e); !slices.Equal(a, b) {
					t.Fatalf("trial %d delta %v request %d: tokens %v, expanded %v", trial, delta, i, a, b)
				}
			}
			for _, kv := range []int{1, 2, 5, 16, 64, 100} {
				for _, maxTok := range []int{1 << 30, 3 * tbs, 40} {
					hc, he := compact.BlockHashes(kv, maxTok), expanded.BlockHashes(kv, maxTok)
					for i := range hc {
						want := referenceHashes(flatTokens(expanded, &expanded.Requests[i]), kv, hashedTokens(&expanded.Requests[i], maxTok))
						if !slices.Equal(hc[i], he[i]) || !slices.Equal(hc[i], want) {
							t.Fatalf("trial %d delta %v kv %d max %d request %d: hashes %x, expanded %x, reference %x",
								trial, delta, kv, maxTok, i, hc[i], he[i], want)
						}
					}
					bc, be := compact.Blocks(kv, maxTok), expanded.Blocks(kv, maxTok)
					if bc.Distinct != be.Distinct || !slices.Equal(bc.Full, be.Full) || !slices.EqualFunc(bc.Shared, be.Shared, slices.Equal) {
						t.Fatalf("trial %d delta %v kv %d max %d: Blocks differ", trial, delta, kv, maxTok)
					}
				}
			}
		}
	}
}

// referenceHashes is the chained block hashes of the first n tokens of toks in blocks of bs
// (engine-internals.md §2.1), computed from scratch.
func referenceHashes(toks []uint32, bs, n int) []uint64 {
	out := []uint64{}
	var parent uint64
	for b := 0; (b+1)*bs <= n; b++ {
		buf := make([]byte, 4*bs)
		for k := range bs {
			binary.LittleEndian.PutUint32(buf[4*k:], toks[b*bs+k])
		}
		local := xxh3.HashSeed(buf, 1337)
		if b == 0 {
			parent = local
		} else {
			var pair [16]byte
			binary.LittleEndian.PutUint64(pair[:], parent)
			binary.LittleEndian.PutUint64(pair[8:], local)
			parent = xxh3.HashSeed(pair[:], 1337)
		}
		out = append(out, parent)
	}
	return out
}

// TraceSegment keeps the sessions that start within the first seconds of trace time, measured
// from the earliest session start, with every turn (a later turn's own timestamp may lie past
// the segment), in file order; rows itself when every session is kept.
func TestTraceSegment(t *testing.T) {
	rows := []TraceRow{
		{Line: 1, HasTimestamp: true, Timestamp: TraceTime{Whole: 1000}},
		{Line: 2, SessionID: "s", HasTimestamp: true, Timestamp: TraceTime{Whole: 2500}},
		{Line: 3, HasTimestamp: true, Timestamp: TraceTime{Whole: 3000, Frac: "5"}},
		{Line: 4, SessionID: "s", HasTimestamp: true, Timestamp: TraceTime{Whole: 9000}},
		{Line: 5, HasTimestamp: true, Timestamp: TraceTime{Whole: 3000}},
	}
	lines := func(rs []TraceRow) []int {
		var out []int
		for _, r := range rs {
			out = append(out, r.Line)
		}
		return out
	}
	for _, c := range []struct {
		seconds float64
		want    []int
	}{
		{0, []int{1}},
		{1.5, []int{1, 2, 4}},
		{2, []int{1, 2, 4, 5}},
		{2.0005, []int{1, 2, 3, 4, 5}},
		{100, []int{1, 2, 3, 4, 5}},
	} {
		if got := lines(TraceSegment(rows, c.seconds)); !slices.Equal(got, c.want) {
			t.Errorf("%g s: lines %v, want %v", c.seconds, got, c.want)
		}
	}
	if all := TraceSegment(rows, 100); &all[0] != &rows[0] {
		t.Error("a segment holding every session is not rows itself")
	}
}
