// Package traffic builds the workload of a run: which sessions and requests exist, what tokens
// each prompt holds (so prefix reuse can be simulated), and when sessions start. It knows nothing
// about engines. Start with Workload, Synthetic, SyntheticSessions and FromTrace; the other trace
// formats are FromDeltaTrace, FromAgenticTrace (with Graph), FromAppliedCompute and LoadDynamo.
package traffic

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/servesweep/servesweep/sim/blockmap"
	"github.com/zeebo/xxh3"
)

// Piece is a run of prompt or output tokens: Len tokens (Len >= 0), listed as Kind says from
// Start. Token ids are abstract uint32 values; two prompts share a KV block exactly when they hold
// the same token ids at the same positions before and in that block.
type Piece struct {
	Start uint32
	Len   int32
	Kind  PieceKind
}

// PieceKind says which tokens a Piece holds.
type PieceKind uint8

const (
	// PieceRun is the distinct tokens Start, Start+1, ..., Start+Len-1.
	PieceRun PieceKind = iota
	// PieceRepeat is Len copies of token Start (one Mooncake hash block).
	PieceRepeat
	// PieceHashBlocks is consecutive hash blocks of Workload.HashBlockSize tokens, each one token
	// repeated: token k (0 <= k < Len) is Workload.HashTokens[Start + k/HashBlockSize], the last
	// block possibly cut short (a Mooncake prompt's hash ids in one piece).
	PieceHashBlocks
)

// Request is one request of the workload: one turn of a session.
type Request struct {
	// ID is the request id reported in requests.jsonl ("" for none).
	ID string
	// Session indexes Workload.Sessions; Turn is the 0-based turn within it.
	Session, Turn int32
	// PromptLen is the prompt length (ISL) and OutputLen the requested output (OSL), in tokens.
	PromptLen, OutputLen int32
	// Content is the token sequence: prompt pieces, then the output piece(s); Σ Len over the
	// pieces is at least PromptLen + OutputLen. Pieces are shared between turns of a session.
	Content []Piece
	// DelayMs is, for Turn > 0, the think time in virtual ms between the completion of the
	// previous turn and this turn's arrival (trace timing already divided by the speedup).
	DelayMs float64
}

// Session is a sequence of requests whose turn n+1 arrives after turn n completes plus its delay.
type Session struct {
	// Name is the session id reported in requests.jsonl ("" for independent requests).
	Name string
	// First indexes Workload.Requests; the session's turns are Requests[First : First+Turns].
	First, Turns int32
	// StartMs is the authored arrival of the first turn in virtual ms, relative to the first
	// session (trace timestamps divided by the speedup); 0 for synthetic sources.
	StartMs float64
}

// Workload is the immutable set of sessions and requests of a run. It is safe for concurrent use:
// runs of several configurations share one Workload and its cached block hashes.
type Workload struct {
	Sessions []Session
	Requests []Request
	// Timed reports whether sessions carry authored start times (trace sources).
	Timed bool
	// Graph, set for agentic traces, releases requests by dependencies instead of session turns.
	Graph *Graph
	// HashTokens is the token of every hash block the PieceHashBlocks pieces of the requests'
	// Content cover, indexed by Piece.Start plus the block's position in its piece (set by the
	// Mooncake trace sources, 4 bytes per block; nil otherwise). Callers must not modify it.
	HashTokens []uint32
	// HashBlockSize is the tokens per hash block of the PieceHashBlocks pieces (the trace's block
	// size; 0 when HashTokens is nil).
	HashBlockSize int32
	// MaterializedKeysLimit bounds the shared block ids the workload's BlockSets keep (Shared),
	// summed over its requests: 0 means DefaultMaterializedKeysLimit; a negative limit keeps
	// none, so every BlockSet is compact (tests hold the compact form to the materialized one).
	// Set it before the first Blocks call: BlockSets are computed once per block size.
	MaterializedKeysLimit int

	// distinct reports that no two requests share a token at the same position from the first
	// token on (synthetic single-turn sources), so no block is shared (SharedBlocks).
	distinct bool
	// sessions is the sharing of a synthetic-session workload, from which computeBlocks derives
	// its BlockSets without hashing (sessionPrefixes.sharedBlocks); nil for other workloads.
	sessions *sessionPrefixes

	mu     sync.Mutex
	hashes map[hashKey]*hashSet
}

type hashSet struct {
	once   sync.Once
	blocks *BlockSet
}

// HashSeed is the XXH3-64 seed of KV block hashes, as the reference engine uses
// (engine-internals.md §2.1).
const HashSeed = 1337

// BlockSet is a workload's prefix-cache view at one KV block size and context limit: per
// request, how many full blocks of its tokens (prompt, then output) have a content hash, and the
// names of the leading ones another request of the workload also holds. The blocks after those
// are unique to their request: no other request can match them in a prefix cache, so their
// hashes are never computed, and an engine names them by request and position instead
// (engine.UniqueBlockKey). Chained hashes make the shared blocks a prefix: a block equal in two
// requests means their whole prefixes up to it are equal.
//
// A shared block is named by a dense id in [0, Distinct) instead of its 64-bit hash: equal ids
// if and only if equal hashes (BlockHashes computes them), so a prefix cache or router that
// compares names behaves as one that compares hashes, and can index its tables by the id
// (blockmap.Table) instead of hashing. Ids follow request order: the shared blocks a request is
// the first to hold (in request order) get consecutive ids, after those of the requests before
// it. Those blocks are a suffix of its shared blocks (whoever holds a block holds the one before
// it), and the blocks before them are the first holder's of the block just before: so each
// request's ids are a few runs of consecutive ids, which the BlockSet keeps instead of the ids
// themselves when they are many (Compact).
type BlockSet struct {
	// Full is, per request, its full blocks of blockSize tokens up to maxTokens tokens (the
	// context limit: no request ever holds more; a request whose prompt reaches it gets none, it
	// will be rejected).
	Full []int32
	// Shared is, per request, the ids of its leading blocks another request also holds;
	// len(Shared[i]) <= Full[i]. The slices share one array. Nil when the workload holds more
	// shared blocks than the workload's limit (Workload.MaterializedKeysLimit: the compact form): SharedKeys gives them then.
	Shared [][]uint32
	// Distinct is the number of distinct shared blocks: every id is below it.
	Distinct int

	// The runs of ids, which both forms keep, per request: depth[i] is its count of shared
	// blocks; it is the first holder of its blocks [own[i], depth[i]), named base[i] + (d -
	// own[i]); its blocks before own[i] are those of request prior[i] (-1: none), the first
	// holder of its block own[i] - 1.
	depth, own, prior []int32
	base              []uint32
}

// DefaultMaterializedKeysLimit bounds the shared block ids a BlockSet keeps per request
// (Shared), in ids (2^24: 64 MB of uint32) summed over the workload's requests, unless the
// workload sets its own (Workload.MaterializedKeysLimit). A workload with more keeps only the
// runs (16 bytes per request) and SharedKeys rebuilds a request's ids when a run needs them, so
// memory follows the requests in flight instead of every request's ids (a 1,000,000-request
// Mooncake trace: 400 MB of ids).
const DefaultMaterializedKeysLimit = 1 << 24

// SharedLen is request i's count of leading shared blocks: len(SharedKeys(i)).
func (b *BlockSet) SharedLen(i int) int32 {
	if b.depth == nil {
		return 0
	}
	return b.depth[i]
}

// Compact reports whether the BlockSet keeps only the runs of ids (Shared is nil): SharedKeys
// then builds each request's ids anew.
func (b *BlockSet) Compact() bool { return b.Shared == nil && b.depth != nil }

// SharedKeys returns the ids of request i's leading shared blocks (len SharedLen(i)): Shared[i]
// when kept, which callers must not modify, else FillSharedKeys into a new slice.
func (b *BlockSet) SharedKeys(i int) []uint32 {
	if !b.Compact() {
		if b.Shared == nil {
			return nil
		}
		return b.Shared[i]
	}
	return b.FillSharedKeys(nil, i)
}

// FillSharedKeys writes request i's shared block ids into dst[:SharedLen(i)] (a new array when
// dst is too short) and returns that slice, built from the runs: its own, then those of the
// requests its prefix came from. Nil when the request has none.
func (b *BlockSet) FillSharedKeys(dst []uint32, i int) []uint32 {
	n := int(b.SharedLen(i))
	if n == 0 {
		return nil
	}
	if cap(dst) < n {
		dst = make([]uint32, n)
	}
	dst = dst[:n]
	for hi, j := int32(n), int32(i); hi > 0; {
		lo := b.own[j]
		for d := lo; d < hi; d++ {
			dst[d] = b.base[j] + uint32(d-lo)
		}
		hi, j = lo, b.prior[j]
	}
	return dst
}

// Blocks returns the BlockSet of (blockSize, maxTokens), computed once and shared; callers must
// not modify it. Hashing stops at each request's first unique block, so a workload of distinct
// requests (synthetic single-turn sources) hashes nothing.
func (w *Workload) Blocks(blockSize, maxTokens int) *BlockSet {
	key := hashKey{blockSize, maxTokens}
	w.mu.Lock()
	if w.hashes == nil {
		w.hashes = make(map[hashKey]*hashSet)
	}
	hs := w.hashes[key]
	if hs == nil {
		hs = &hashSet{}
		w.hashes[key] = hs
	}
	w.mu.Unlock()
	hs.once.Do(func() { hs.blocks = w.computeBlocks(blockSize, maxTokens) })
	return hs.blocks
}

// BlockHashes returns, per request, the chained hashes of every full KV block of blockSize tokens
// over its content (prompt and output), up to maxTokens tokens (BlockSet.Full blocks). Block 0's
// hash is XXH3-64(seed 1337) of its tokens as little-endian uint32; block i's hash is
// XXH3-64(seed 1337) of (hash of block i-1, local hash of block i) as little-endian uint64s
// (engine-internals.md §2.1). It computes every block each call: the simulator needs only the
// shared ones (Blocks); this is the reference for checks.
func (w *Workload) BlockHashes(blockSize, maxTokens int) [][]uint64 {
	out := make([][]uint64, len(w.Requests))
	buf := make([]byte, 4*blockSize)
	for i := range w.Requests {
		r := &w.Requests[i]
		h := blockHasher{r: r}
		n := int32(hashedTokens(r, maxTokens) / blockSize)
		out[i] = make([]uint64, n)
		for b := range out[i] {
			out[i][b] = h.next(w, buf, int32(blockSize), false)
		}
	}
	return out
}

// computeBlocks is Blocks without the cache.
func (w *Workload) computeBlocks(blockSize, maxTokens int) *BlockSet {
	bs := &BlockSet{Full: make([]int32, len(w.Requests)), Shared: make([][]uint32, len(w.Requests))}
	for i := range w.Requests {
		bs.Full[i] = int32(hashedTokens(&w.Requests[i], maxTokens) / blockSize)
	}
	if w.distinct {
		return bs
	}
	if w.sessions != nil {
		w.sessions.sharedBlocks(bs, w, blockSize)
	} else {
		w.hashSharedBlocks(bs, blockSize)
	}
	total := 0
	for _, n := range bs.depth {
		total += int(n)
	}
	limit := w.MaterializedKeysLimit
	if limit == 0 {
		limit = DefaultMaterializedKeysLimit
	}
	if total > limit {
		bs.Shared = nil
		return bs
	}
	bs.materialize(total)
	return bs
}

// hashSharedBlocks fills bs's runs and Distinct by hashing the requests' blocks of blockSize
// tokens level by level (sharedPrefixes), given bs.Full.
func (w *Workload) hashSharedBlocks(bs *BlockSet, blockSize int) {
	// One hasher per candidate, in candidate order, moved along as the candidates thin out
	// level by level: each level reads them in sequence, however few of a large workload's
	// requests are left.
	hashers := make([]blockHasher, 0, len(w.Requests))
	for i := range w.Requests {
		if bs.Full[i] > 0 {
			hashers = append(hashers, blockHasher{r: &w.Requests[i]})
		}
	}
	buf := make([]byte, 4*blockSize)
	// Blocks of consecutive ids are named by runHash: the same sharing as BlockHashes' XXH3.
	sharedPrefixes(bs, func(k, _ int32) uint64 { return hashers[k].next(w, buf, int32(blockSize), true) },
		func(dst, src int32) { hashers[dst] = hashers[src] })
}

// materialize sets Shared from the runs: total is the sum of depth. Request i's blocks before
// own[i] are those of prior[i], materialized before it: one copy, then its own run.
func (b *BlockSet) materialize(total int) {
	b.Shared = make([][]uint32, len(b.depth))
	arena := make([]uint32, total)
	off := 0
	for i, n := range b.depth {
		if n == 0 {
			continue
		}
		ids := arena[off : off+int(n) : off+int(n)]
		off += int(n)
		lo := b.own[i]
		if j := b.prior[i]; j >= 0 {
			copy(ids[:lo], b.Shared[j])
		}
		for d := lo; d < n; d++ {
			ids[d] = b.base[i] + uint32(d-lo)
		}
		b.Shared[i] = ids
	}
}

// sharedPrefixes fills b's runs of shared block ids (depth, own, prior, base) and Distinct:
// the blocks that at least one other request also holds. b.Full[i] is request i's count of
// hashed blocks. The candidates of a level (requests whose blocks so far are all shared) are
// kept in request order, position k holding request i; next(k, i) returns that request's next
// block hash, in block order, and move(dst, src) says that the candidate at position src is now
// at position dst (dst <= src) as the candidates thin out. It works level by
// level: at block position d only the requests whose blocks before d are all shared take part,
// since a request with a unique block earlier cannot match anyone at d (chained hashes), so each
// request is asked for at most its shared blocks + 1, once each. A hash held twice at a level is
// shared; its first holder is the first request holding it. Work follows the shared blocks and
// memory the requests, not the blocks.
func sharedPrefixes(b *BlockSet, next func(k, i int32) uint64, move func(dst, src int32)) {
	n := len(b.Full)
	b.depth, b.own, b.prior, b.base = make([]int32, n), make([]int32, n), make([]int32, n), make([]uint32, n)
	owner := make([]int32, n) // per request, the first holder of its latest shared block
	for i := range n {
		b.own[i], b.prior[i], owner[i] = -1, -1, -1
	}
	cand := make([]int32, 0, n)
	for i, k := range b.Full {
		if k > 0 {
			cand = append(cand, int32(i))
		}
	}
	var g levelGrouper
	hs := make([]uint64, len(cand)) // per candidate, its block hash at the level
	first := make([]int32, len(cand))
	for d := int32(0); len(cand) > 1; d++ {
		hs, first = hs[:len(cand)], first[:len(cand)]
		for k, i := range cand {
			hs[k] = next(int32(k), i)
		}
		g.group(hs, cand, first)
		stay := cand[:0]
		for k, i := range cand {
			f := first[k]
			if f < 0 {
				continue
			}
			if f == i && b.own[i] < 0 {
				b.own[i], b.prior[i] = d, owner[i]
			}
			owner[i] = f
			b.depth[i] = d + 1
			if b.Full[i] > d+1 {
				if len(stay) != k {
					move(int32(len(stay)), int32(k))
				}
				stay = append(stay, i)
			}
		}
		cand = stay
	}
	next32 := uint32(0)
	for i, n := range b.depth {
		if n == 0 {
			continue
		}
		if b.own[i] < 0 {
			// Every shared block of i has an earlier first holder: no run of its own.
			b.own[i], b.prior[i] = n, owner[i]
		}
		b.base[i] = next32
		next32 += uint32(n - b.own[i])
	}
	b.Distinct = int(next32)
}

// bucketTarget is the candidates per bucket that levelGrouper aims at: a bucket's table (16-byte
// entries, at most half full: 32 bytes a candidate, 256 KiB) stays in a core's L2 cache. A
// variable so that tests can force many buckets on a few candidates.
var bucketTarget = 8192

// bucketMix spreads hashes over levelGrouper's buckets. It is odd and differs from the
// multiplier blockmap.Map homes keys with, so the bits choosing a bucket are not the bits
// choosing a slot in the bucket's table (where they would pile every key of a bucket into a
// fraction of its slots). It is the multiplier of the SplitMix64 finalizer (Steele, Lea and
// Flood, "Fast splittable pseudorandom number generators", OOPSLA 2014).
const bucketMix = 0xBF58476D1CE4E5B9

// levelGrouper finds, among one level's candidate hashes, those held by two candidates or more.
// On a large workload a single table over all candidates (a million at the first level of a
// million-request trace: tens of MB) would take a cache miss on almost every probe; the grouper
// instead distributes the candidates over buckets by hash, in candidate order, and groups each
// bucket in a table that fits in cache. Work stays linear and the random accesses stay within
// a bucket. (A hash many candidates share, a common system prompt say, makes its bucket large,
// but all of them probe the same slot.) Its buffers are reused from level to level.
type levelGrouper struct {
	seen   blockmap.Map[holders]
	at     []*holders    // per candidate of the bucket being grouped, its hash's entry in seen
	order  []bucketEntry // the candidates, bucket after bucket, each bucket in candidate order
	starts []int32       // per bucket, its first index in order; one more entry ends the last
}

// bucketEntry is a candidate in levelGrouper's buckets: its hash, position and request, so that
// grouping a bucket reads the bucket alone.
type bucketEntry struct {
	h    uint64
	k, i int32
}

// holders is a hash's entry at one level: candidates holding it (capped at 2) and the request
// that is the first of them.
type holders struct{ count, first int32 }

// group sets first[k] to the first request (in candidate order) holding hs[k] when at least two
// candidates hold it, and to -1 when candidate k alone does. cand[k] is candidate k's request;
// hs, cand and first have one entry per candidate.
func (g *levelGrouper) group(hs []uint64, cand, first []int32) {
	bits := uint(0)
	for len(hs)>>bits > bucketTarget && bits < 12 {
		bits++
	}
	nb := 1 << bits
	g.starts = slices.Grow(g.starts[:0], nb+1)[:nb+1]
	clear(g.starts)
	g.order = slices.Grow(g.order[:0], len(hs))[:len(hs)]
	shift := 64 - bits // 64 when there is one bucket: every hash shifts to 0
	for _, h := range hs {
		g.starts[h*bucketMix>>shift+1]++
	}
	for b := 1; b <= nb; b++ {
		g.starts[b] += g.starts[b-1]
	}
	// Fill each bucket from its start, moving the starts on; afterwards starts[b] is where
	// bucket b ends, that is where bucket b+1 starts, so shift them back by one.
	for k, h := range hs {
		b := h * bucketMix >> shift
		g.order[g.starts[b]] = bucketEntry{h, int32(k), cand[k]}
		g.starts[b]++
	}
	copy(g.starts[1:], g.starts[:nb])
	g.starts[0] = 0
	for b := range nb {
		es := g.order[g.starts[b]:g.starts[b+1]]
		if len(es) < 2 {
			// Alone in its bucket, so alone with its hash. Skipping empty buckets also keeps
			// seen from shrinking to nothing and growing back: a shared prefix puts many
			// candidates in one bucket and leaves others empty.
			for _, e := range es {
				first[e.k] = -1
			}
			continue
		}
		// Sized for the whole bucket, seen never grows while it is filled, so the pointers
		// Upsert returns stay valid and the second loop needs no lookup.
		g.seen.Reset(len(es))
		g.at = g.at[:0]
		for _, e := range es {
			h, fresh := g.seen.Upsert(e.h)
			if fresh {
				h.first = e.i
			}
			if h.count < 2 {
				h.count++
			}
			g.at = append(g.at, h)
		}
		for j, e := range es {
			if h := g.at[j]; h.count >= 2 {
				first[e.k] = h.first
			} else {
				first[e.k] = -1
			}
		}
	}
}

type hashKey struct{ blockSize, maxTokens int }

// hashedTokens is how many leading tokens of r get block hashes under a context limit.
func hashedTokens(r *Request, maxTokens int) int {
	if int(r.PromptLen) >= maxTokens {
		return 0
	}
	return min(int(r.PromptLen)+int(r.OutputLen), maxTokens)
}

// blockHasher yields the chained block hashes of one request's content, block after block (see
// BlockHashes). The zero value with r set starts at block 0.
type blockHasher struct {
	r         *Request
	pi        int   // content piece of the cursor
	off       int32 // offset of the cursor within it
	b         int32 // blocks hashed so far
	parent    uint64
	prevLocal uint64
	prevToken uint32
	havePrev  bool
	// same counts the tokens from the cursor on, in the cursor's piece, that are prevToken: a
	// block within them is one more single-token block of the same local hash, hashed without
	// reading the content (a Mooncake hash block spans several KV blocks).
	same int32
}

// next returns the hash of the next block of bs tokens; w is the workload of h.r, and buf holds
// at least 4 × bs bytes. With byRun, a block whose tokens are consecutive ids t, t+1, ...,
// t+bs-1 gets runHash(t) as its local hash instead of XXH3 over its tokens (see runHash); bs
// must then be the same in every call whose hashes are compared.
func (h *blockHasher) next(w *Workload, buf []byte, bs int32, byRun bool) uint64 {
	if h.havePrev && h.same >= bs {
		h.off += bs
		h.same -= bs
		return h.chain(h.prevLocal)
	}
	r := h.r
	for h.off >= r.Content[h.pi].Len {
		h.pi++
		h.off = 0
	}
	// A block inside one token's repeat holds that single token; when the previous block was the
	// same token, the local hash is the same (Mooncake hash blocks repeat one token).
	tok, step, n := w.span(r.Content[h.pi], h.off)
	single := step == 0 && n >= bs
	h.same = 0
	if single {
		h.same = n - bs
	}
	var local uint64
	if single && h.havePrev && h.prevToken == tok {
		local = h.prevLocal
		h.off += bs
	} else if byRun && h.consecutive(w, bs, &local) {
		// local is runHash of the block's first id, the cursor past the block.
	} else {
		local = h.hashTokens(w, buf, bs)
	}
	h.havePrev, h.prevToken, h.prevLocal = single, tok, local
	return h.chain(local)
}

// runHash is the local hash of a block of consecutive token ids from t (the block size fixed by
// the caller): the SplitMix64 finalizer (Steele, Lea and Flood, OOPSLA 2014) of t offset by the
// golden-ratio increment. Two blocks of consecutive ids hold the same tokens exactly when they
// start at the same id, so naming them by their first id keeps XXH3's equality (a collision with
// an XXH3 hash of other tokens is a 2^-64 chance, as between two XXH3 hashes) at a fraction of
// its cost: hashSharedBlocks hashes every shared block once per request holding it, and the
// content of the workloads it hashes is largely runs of fresh ids (every output, the fresh input
// of agentic and applied sessions; synthetic-session workloads skip hashing: sharedBlocks).
func runHash(t uint32) uint64 {
	z := uint64(t) + 0x9E3779B97F4A7C15
	z = (z ^ z>>30) * 0xBF58476D1CE4E5B9
	z = (z ^ z>>27) * 0x94D049BB133111EB
	return z ^ z>>31
}

// consecutive reports whether the next block of bs tokens is consecutive ids t0, t0+1, ...,
// t0+bs-1; if so it sets *local to runHash(t0) and moves the cursor past the block, else it
// leaves both as they are.
func (h *blockHasher) consecutive(w *Workload, bs int32, local *uint64) bool {
	r := h.r
	pi, off := h.pi, h.off
	var t0, want uint32
	for k := int32(0); k < bs; {
		for off >= r.Content[pi].Len {
			pi++
			off = 0
		}
		t, st, m := w.span(r.Content[pi], off)
		m = min(m, bs-k)
		if k == 0 {
			t0, want = t, t
		}
		if t != want || (st != 1 && m > 1) {
			return false
		}
		want += uint32(m)
		k += m
		off += m
	}
	*local = runHash(t0)
	h.pi, h.off = pi, off
	return true
}

// hashTokens returns XXH3-64 (seed HashSeed) of the next bs tokens as little-endian uint32s,
// moving the cursor past them; buf holds at least 4 × bs bytes.
func (h *blockHasher) hashTokens(w *Workload, buf []byte, bs int32) uint64 {
	r := h.r
	for k := int32(0); k < bs; {
		for h.off >= r.Content[h.pi].Len {
			h.pi++
			h.off = 0
		}
		t, st, m := w.span(r.Content[h.pi], h.off)
		m = min(m, bs-k)
		for end := k + m; k < end; k++ {
			binary.LittleEndian.PutUint32(buf[4*k:], t)
			t += st
		}
		h.off += m
	}
	return xxh3.HashSeed(buf[:4*bs], HashSeed)
}

// chain extends the chained hash by the next block's local hash and returns it.
func (h *blockHasher) chain(local uint64) uint64 {
	if h.b == 0 {
		h.parent = local
	} else {
		var pair [16]byte
		binary.LittleEndian.PutUint64(pair[0:], h.parent)
		binary.LittleEndian.PutUint64(pair[8:], local)
		h.parent = xxh3.HashSeed(pair[:], HashSeed)
	}
	h.b++
	return h.parent
}

// span returns the tokens of p from offset off (0 <= off < p.Len) on, as far as they follow one
// pattern: the first token, the step to each next one (0 or 1), and how many tokens follow it.
func (w *Workload) span(p Piece, off int32) (tok, step uint32, n int32) {
	switch p.Kind {
	case PieceRepeat:
		return p.Start, 0, p.Len - off
	case PieceHashBlocks:
		b := off / w.HashBlockSize
		end := min(int64(p.Len), int64(b+1)*int64(w.HashBlockSize))
		return w.HashTokens[p.Start+uint32(b)], 0, int32(end) - off
	}
	return p.Start + uint32(off), 1, p.Len - off
}

// tokenAllocator hands out ranges of fresh token ids, so distinct content never collides.
type tokenAllocator struct{ next uint32 }

func (a *tokenAllocator) take(n int32) Piece {
	p := Piece{Start: a.next, Len: n}
	a.next += uint32(n)
	return p
}

// Synthetic returns n independent single-turn requests of inputTokens prompt and outputTokens
// output tokens. Every prompt holds tokens no other request holds, so there is no prefix reuse.
func Synthetic(n, inputTokens, outputTokens int) *Workload {
	return SyntheticMix(n, []RequestShape{{Input: Fixed(inputTokens), Output: Fixed(outputTokens)}}, nil, 0)
}

// RequestShape is the lengths of synthetic single-turn requests: prompt (ISL) and output (OSL).
type RequestShape struct {
	Input, Output Length
}

// SyntheticMix returns n independent single-turn requests, each drawn from shapes[c] where c is
// drawn with probability weights[c] / Σ weights (weights may be nil for one shape). Draws use a
// generator seeded with seed, in request order: the component (when there are several), then
// the prompt length, then the output length; fixed lengths draw nothing. Every prompt holds
// tokens no other request holds, so there is no prefix reuse.
func SyntheticMix(n int, shapes []RequestShape, weights []float64, seed uint64) *Workload {
	w := &Workload{Sessions: make([]Session, n), Requests: make([]Request, n), distinct: true}
	content := make([]Piece, 2*n)
	rng := newRand(seed)
	var alloc tokenAllocator
	for i := 0; i < n; i++ {
		sh := &shapes[pick(rng, weights, len(shapes))]
		in, out := sh.Input.Draw(rng), sh.Output.Draw(rng)
		content[2*i] = alloc.take(int32(in))
		content[2*i+1] = alloc.take(int32(out))
		w.Sessions[i] = Session{First: int32(i), Turns: 1}
		w.Requests[i] = Request{
			Session: int32(i), PromptLen: int32(in), OutputLen: int32(out),
			Content: content[2*i : 2*i+2 : 2*i+2],
		}
	}
	return w
}

// SessionShape describes synthetic multi-turn sessions.
type SessionShape struct {
	// Turns per session (>= 1).
	Turns int
	// NewInput is the fresh input of each turn and Output each turn's output, in tokens; both
	// are drawn anew for every turn.
	NewInput, Output Length
	// SharedPrefixRatio in [0, 1] and PrefixGroups >= 0: see SyntheticSessions.
	SharedPrefixRatio float64
	PrefixGroups      int
	// InterTurnDelayMs is the think time between a turn's completion and the next turn, ms: the
	// mean of a normal draw clipped at 0 when InterTurnDelayStddevMs (ms) > 0.
	InterTurnDelayMs, InterTurnDelayStddevMs float64
}

// SyntheticSessions returns n sessions of s.Turns turns. Turn k's prompt is turn k-1's prompt,
// then turn k-1's output, then turn k's fresh input, so with fixed lengths turn k has
// k*(NewInput+Output)+NewInput prompt tokens (dynosim-spec.md §3.1.1) and every later turn can
// reuse the KV of the whole previous turn.
//
// Shared prefixes: with PrefixGroups = G > 0 and SharedPrefixRatio = ρ > 0, session i belongs to
// group i mod G, and the first floor(ρ × its first turn's new input) tokens of its first prompt
// are the start of a token run that every session of the group holds identically; the rest of
// the first prompt is unique to the session. Sessions of one group therefore share the KV
// blocks wholly inside the shorter of their shared parts.
func SyntheticSessions(n int, s SessionShape) *Workload {
	return SyntheticSessionsMix(n, []SessionShape{s}, nil, 0)
}

// SyntheticSessionsMix returns n sessions, each drawn from shapes[c] where c is drawn with
// probability weights[c] / Σ weights (weights may be nil for one shape), built as
// SyntheticSessions builds them; prefix groups are per shape (session i of shape c belongs to
// group i mod G_c of that shape). Draws use a generator seeded with seed, in session order: the
// component (when there are several), then for each turn its new input and its output; fixed
// lengths draw nothing. Think times with a standard deviation are drawn from a second generator
// (thinkRand) in request order, so that they leave the lengths as they are without one.
func SyntheticSessionsMix(n int, shapes []SessionShape, weights []float64, seed uint64) *Workload {
	rng := newRand(seed)
	think := thinkRand(seed)
	comp := make([]int32, n)
	// lens[first[i]+2k] and lens[first[i]+2k+1] are session i's turn-k new input and output.
	first := make([]int, n+1)
	lens := make([]int32, 0, 2*n*shapes[0].Turns)
	for i := range n {
		c := pick(rng, weights, len(shapes))
		comp[i] = int32(c)
		first[i] = len(lens)
		sh := &shapes[c]
		for range sh.Turns {
			in := sh.NewInput.Draw(rng)
			lens = append(lens, int32(in), int32(sh.Output.Draw(rng)))
		}
	}
	first[n] = len(lens)

	// shared is the length of session i's part of its group's run (0: none); a group's run is as
	// long as its longest part. Runs are allocated first, group by group, shape by shape.
	shared := make([]int32, n)
	groupLen := make([][]int32, len(shapes))
	for i := range n {
		sh := &shapes[comp[i]]
		if sh.PrefixGroups <= 0 || sh.SharedPrefixRatio <= 0 {
			continue
		}
		in := lens[first[i]]
		shared[i] = min(int32(sh.SharedPrefixRatio*float64(in)), in)
		if groupLen[comp[i]] == nil {
			groupLen[comp[i]] = make([]int32, min(sh.PrefixGroups, n))
		}
		g := &groupLen[comp[i]][i%sh.PrefixGroups]
		*g = max(*g, shared[i])
	}
	var alloc tokenAllocator
	groupRun := make([][]Piece, len(shapes))
	groupBase := make([]int32, len(shapes)) // the workload-wide id of each shape's group 0
	sp := &sessionPrefixes{group: make([]int32, n), shared: shared}
	for c, gl := range groupLen {
		groupBase[c] = int32(sp.groups)
		sp.groups += len(gl)
		groupRun[c] = make([]Piece, len(gl))
		for g, l := range gl {
			if l > 0 {
				groupRun[c][g] = alloc.take(l)
			}
		}
	}

	w := &Workload{Sessions: make([]Session, n), Requests: make([]Request, 0, len(lens)/2), sessions: sp}
	for i := range n {
		sh := &shapes[comp[i]]
		tl := lens[first[i]:first[i+1]]
		pieces := make([]Piece, 0, 2*sh.Turns+1)
		sp.group[i] = -1
		if shared[i] > 0 {
			sp.group[i] = groupBase[comp[i]] + int32(i%sh.PrefixGroups)
			run := groupRun[comp[i]][i%sh.PrefixGroups]
			run.Len = shared[i]
			pieces = append(pieces, run)
			if rest := tl[0] - shared[i]; rest > 0 {
				pieces = append(pieces, alloc.take(rest))
			}
		} else {
			pieces = append(pieces, alloc.take(tl[0]))
		}
		w.Sessions[i] = Session{Name: sessionName(i), First: int32(len(w.Requests)), Turns: int32(sh.Turns)}
		prompt := tl[0]
		for k := 0; k < sh.Turns; k++ {
			in, out := tl[2*k], tl[2*k+1]
			if k > 0 {
				pieces = append(pieces, alloc.take(in))
				prompt += in
			}
			pieces = append(pieces, alloc.take(out))
			req := Request{
				Session: int32(i), Turn: int32(k), PromptLen: prompt, OutputLen: out,
				Content: pieces[:len(pieces):len(pieces)],
			}
			if k > 0 {
				req.DelayMs = sh.InterTurnDelayMs
				if sh.InterTurnDelayStddevMs > 0 {
					req.DelayMs = max(0, sh.InterTurnDelayMs+sh.InterTurnDelayStddevMs*think.NormFloat64())
				}
			}
			w.Requests = append(w.Requests, req)
			prompt += out
		}
	}
	return w
}

func sessionName(i int) string { return "session_" + itoa(i) }

func itoa(i int) string {
	var b [20]byte
	n := len(b)
	if i == 0 {
		return "0"
	}
	for i > 0 {
		n--
		b[n] = byte('0' + i%10)
		i /= 10
	}
	return string(b[n:])
}

// FromTrace builds the workload of Mooncake rows whose hash ids stand for blockSize tokens each
// (blockSize > 0). Rows with the same session id are the turns of one session, in file order; a
// row without one is its own session. Each distinct hash id becomes one token id (interned in
// sorted order), and each hash block expands to blockSize copies of it, the last block cut at the
// row's input length (dynosim-spec.md §3.1.4): a row's prompt is one PieceHashBlocks piece, its
// blocks' tokens in Workload.HashTokens (4 bytes per block). Output tokens are fresh per row.
// Session start times are the first turn's timestamp minus the earliest first-turn timestamp,
// divided by speedup; a later turn's delay is its `delay` field when present, else the timestamp
// difference to the previous turn, both divided by speedup (and never negative). Timestamps are
// subtracted exactly (TraceTime) before the difference becomes float64 ms.
func FromTrace(rows []TraceRow, blockSize int, speedup float64) *Workload {
	w, _ := fromTrace(rows, blockSize, speedup, false, 0, "")
	return w
}

// FromDeltaTrace builds the workload of a mooncake-delta trace (dynosim-spec.md §3.1.4): as
// FromTrace, except that a later turn's row describes only the input that is new in that turn.
// Turn n+1's prompt is turn n's whole prompt, then turn n's output tokens, then the row's new
// input (its hash blocks expanded as in FromTrace), so its prompt length is
// prompt(n) + output(n) + input_length(n+1) tokens and it can reuse the KV of all of turn n.
// A turn whose full prompt exceeds maxPrompt tokens is a *TraceError naming file, the row's line
// and its input-length field.
func FromDeltaTrace(rows []TraceRow, blockSize int, speedup float64, maxPrompt int, file string) (*Workload, error) {
	return fromTrace(rows, blockSize, speedup, true, maxPrompt, file)
}

// maxHashTokens bounds Workload.HashTokens, whose indices Piece.Start holds: a trace with more
// used hash blocks expands them into one PieceRepeat piece each (tests lower it to compare the two
// forms).
var maxHashTokens uint64 = math.MaxUint32

func fromTrace(rows []TraceRow, blockSize int, speedup float64, delta bool, maxPrompt int, file string) (*Workload, error) {
	// A hash id's token is its index among the distinct ids in sorted order: no map of every id
	// (for a million-request trace, hundreds of MB).
	ranks := newHashRanks(rows)
	alloc := tokenAllocator{next: uint32(ranks.distinct)}
	bs := int32(blockSize)

	// A row's prompt is one PieceHashBlocks piece over its hash blocks' tokens in w.HashTokens, or
	// in the expanded form one PieceRepeat piece per hash block; then comes one output piece. All
	// pieces live in one array, a session's consecutively (a delta turn's content is its
	// session's pieces so far).
	blocks, prompts := 0, 0
	for i := range rows {
		if n := usedBlocks(&rows[i], bs); n > 0 {
			blocks += n
			prompts++
		}
	}
	w := &Workload{Timed: true}
	compact := uint64(blocks) <= maxHashTokens
	var arena []Piece
	if compact {
		arena = make([]Piece, 0, len(rows)+prompts)
		w.HashTokens, w.HashBlockSize = make([]uint32, 0, blocks), bs
	} else {
		arena = make([]Piece, 0, len(rows)+blocks)
	}

	ts := groupSessions(rows)
	w.Sessions, w.Requests = make([]Session, 0, ts.count()), make([]Request, 0, len(rows))
	var t0 TraceTime
	haveT0 := false
	for si := range ts.count() {
		if r := &rows[ts.of(si)[0]]; r.HasTimestamp && (!haveT0 || r.Timestamp.Cmp(t0) < 0) {
			t0, haveT0 = r.Timestamp, true
		}
	}
	if speedup <= 0 {
		speedup = 1
	}
	for si := range ts.count() {
		srows := ts.of(si)
		first := &rows[srows[0]]
		start := 0.0
		if first.HasTimestamp {
			start = first.Timestamp.Minus(t0).Ms() / speedup
		}
		w.Sessions = append(w.Sessions, Session{Name: first.SessionID, First: int32(len(w.Requests)), Turns: int32(len(srows)), StartMs: start})
		session := len(arena) // delta: the session's content starts here
		prompt := int64(0)    // delta: the next turn's prompt before its new input, in tokens
		for k, ri := range srows {
			row := &rows[ri]
			from := len(arena)
			if delta {
				from = session
				prompt += int64(row.InputLength)
				if prompt > int64(maxPrompt) {
					return nil, &TraceError{File: file, Line: row.Line, Field: "input_length", Msg: fmt.Sprintf(
						"turn %d's full prompt (the previous turn's prompt and output plus this row's %d new tokens) is %d tokens; must be <= %d",
						k, row.InputLength, prompt, maxPrompt)}
				}
			}
			used := row.HashIDs[:usedBlocks(row, bs)]
			switch {
			case len(used) == 0:
			case compact:
				// The blocks before the last are whole: the piece is the input length, at most
				// the blocks' tokens.
				n := min(int64(int32(row.InputLength)), int64(len(used))*int64(bs))
				arena = append(arena, Piece{Start: uint32(len(w.HashTokens)), Len: int32(n), Kind: PieceHashBlocks})
				for _, h := range used {
					w.HashTokens = append(w.HashTokens, ranks.token(h))
				}
			default:
				left := int32(row.InputLength)
				for _, h := range used {
					n := min(bs, left)
					arena = append(arena, Piece{Start: ranks.token(h), Len: n, Kind: PieceRepeat})
					left -= n
				}
			}
			arena = append(arena, alloc.take(int32(row.OutputLength)))
			promptLen := int32(row.InputLength)
			if delta {
				promptLen = int32(prompt)
				prompt += int64(row.OutputLength)
			}
			req := Request{
				ID: row.RequestID, Session: int32(si), Turn: int32(k),
				PromptLen: promptLen, OutputLen: int32(row.OutputLength), Content: arena[from:len(arena):len(arena)],
			}
			if k > 0 {
				prev := &rows[srows[k-1]]
				switch {
				case row.HasDelay:
					req.DelayMs = row.DelayMs / speedup
				case row.HasTimestamp && prev.HasTimestamp:
					req.DelayMs = row.Timestamp.Minus(prev.Timestamp).Ms() / speedup
				}
			}
			w.Requests = append(w.Requests, req)
		}
	}
	return w, nil
}

// usedBlocks returns how many of row's hash ids its prompt holds: its input length in hash
// blocks of bs tokens (the last one possibly partial), at most its hash ids.
func usedBlocks(row *TraceRow, bs int32) int {
	in := int32(row.InputLength)
	if in <= 0 || bs <= 0 {
		return 0
	}
	return int(min(int64(len(row.HashIDs)), (int64(in)+int64(bs)-1)/int64(bs)))
}

// traceSessions is the trace's rows grouped into sessions: session s is the rows
// rows[first[s]:first[s+1]], as indices into the trace in file order. A row without a session id
// is a session of its own and costs no more than its two indices.
type traceSessions struct {
	rows  []int32
	first []int32
}

// count returns the number of sessions.
func (ts *traceSessions) count() int { return len(ts.first) - 1 }

// of returns the row indices of session s, in file order.
func (ts *traceSessions) of(s int) []int32 { return ts.rows[ts.first[s]:ts.first[s+1]] }

// groupSessions groups rows into sessions in order of first appearance: rows with the same
// session id are the turns of one session, and a row without one is its own session.
func groupSessions(rows []TraceRow) traceSessions {
	// sess[i] is row i's session; byName holds the named sessions only.
	sess := make([]int32, len(rows))
	byName := map[string]int32{}
	n := int32(0)
	for i := range rows {
		name := rows[i].SessionID
		if name == "" {
			sess[i] = n
			n++
			continue
		}
		s, ok := byName[name]
		if !ok {
			s = n
			byName[name] = s
			n++
		}
		sess[i] = s
	}
	// Counting sort by session, stable: first[s+1] counts session s's rows, then its prefix sums
	// place them; placing advances first[s] to the next session's start, so first is shifted back.
	ts := traceSessions{rows: make([]int32, len(rows)), first: make([]int32, n+1)}
	for _, s := range sess {
		ts.first[s+1]++
	}
	for s := int32(1); s <= n; s++ {
		ts.first[s] += ts.first[s-1]
	}
	for i, s := range sess {
		ts.rows[ts.first[s]] = int32(i)
		ts.first[s]++
	}
	copy(ts.first[1:], ts.first[:n])
	ts.first[0] = 0
	return ts
}

// LatestArrival returns the latest authored arrival of w, the workload FromTrace built from rows:
// over every request, its session's start plus the delays of its turns so far, in virtual ms
// (the service time of the earlier turns comes on top at run time), and the line of its row.
// It returns (0, 0) when rows is empty.
func LatestArrival(rows []TraceRow, w *Workload) (ms float64, line int) {
	ts := groupSessions(rows)
	for si := range ts.count() {
		sess := &w.Sessions[si]
		t := sess.StartMs
		for k, ri := range ts.of(si) {
			if k > 0 {
				t += w.Requests[int(sess.First)+k].DelayMs
			}
			if line == 0 || t > ms {
				ms, line = t, rows[ri].Line
			}
		}
	}
	return ms, line
}

// TraceSegment returns the rows of the sessions of rows that start within the trace's first
// seconds seconds of trace time (before any speedup): those whose first row's timestamp lies at
// most seconds × 1000 ms after the earliest first-row timestamp, as FromTrace sets a session's
// start (a first row without a timestamp starts at 0, inside). Every row of a kept session is
// kept, later turns whose own timestamps lie past the segment included, so the segment holds
// the same requests whatever the speedup and however fast turns come back. Rows keep their file
// order; rows itself is returned when every session is kept, and it is never modified
// (traffic.stop.max_trace_seconds; a capacity search replays one segment at every speedup).
func TraceSegment(rows []TraceRow, seconds float64) []TraceRow {
	ts := groupSessions(rows)
	var t0 TraceTime
	haveT0 := false
	for si := range ts.count() {
		if r := &rows[ts.of(si)[0]]; r.HasTimestamp && (!haveT0 || r.Timestamp.Cmp(t0) < 0) {
			t0, haveT0 = r.Timestamp, true
		}
	}
	keep := make([]bool, len(rows))
	n := 0
	for si := range ts.count() {
		srows := ts.of(si)
		if first := &rows[srows[0]]; first.HasTimestamp && first.Timestamp.Minus(t0).Ms() > seconds*1000 {
			continue
		}
		for _, ri := range srows {
			keep[ri] = true
		}
		n += len(srows)
	}
	if n == len(rows) {
		return rows
	}
	out := make([]TraceRow, 0, n)
	for i := range rows {
		if keep[i] {
			out = append(out, rows[i])
		}
	}
	return out
}
