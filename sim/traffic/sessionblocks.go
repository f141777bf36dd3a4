package traffic

import "sort"

// sessionPrefixes is what SyntheticSessionsMix knows of how its workload's requests share
// content, from which sharedBlocks derives the BlockSet that hashing every shared block would
// give (computeBlocks takes it instead of hashing). Two of its requests hold the same leading
// tokens in two ways only:
//   - turns of one session: turn k's content (prompt and output) is the start of turn k+1's;
//   - first prompts of one prefix group: sessions of a group begin with the same token run, each
//     with shared[s] tokens of it, so two of them agree on their first min(shared) tokens and
//     differ at the next one (a fresh token on one side at least).
//
// Every other token is fresh (tokenAllocator), so no other pair of requests agrees on a token at
// the same position. (Fresh ids are uint32: past 2^32 tokens in a workload they wrap and hashing
// would find blocks that repeat earlier ones, which the generator does not mean; this structure
// keeps the sharing it means.)
type sessionPrefixes struct {
	// group is, per session, its prefix group numbered over the workload (shapes' groups apart);
	// -1 for a session without a share of a group's run.
	group []int32
	// shared is, per session, the tokens of its group's run its first prompt begins with (0
	// without a group).
	shared []int32
	// groups is the number of groups: every group id is below it.
	groups int
}

// sharedBlocks fills b's runs (depth, own, prior, base) and Distinct from w's session structure
// sp, given b.Full for blocks of blockSize tokens, exactly as sharedPrefixes fills them from the
// block hashes: request i's depth is the most leading blocks it has in common with another
// request, and each block's first holder is the first request (in request order) holding it.
// With f the full blocks of a request and m_s = shared[s] / blockSize the blocks of session s
// inside its group's run, two turns of one session have min(f_i, f_j) blocks in common, two
// requests of different sessions of one group min(f_i, f_j, m_s, m_s'), and any other two none.
// Work is O(requests × log turns per session), memory linear in the requests.
func (sp *sessionPrefixes) sharedBlocks(b *BlockSet, w *Workload, blockSize int) {
	n := len(b.Full)
	b.depth, b.own, b.prior, b.base = make([]int32, n), make([]int32, n), make([]int32, n), make([]uint32, n)
	for i := range n {
		b.own[i], b.prior[i] = -1, -1
	}
	ns := len(w.Sessions)
	// Per session: m, its group blocks; held, the most group blocks one of its requests holds
	// (min(m, max f)); top and second, the two largest f of its turns (a multiset: equal when two
	// turns tie).
	// reach is, per request, the most blocks it or an earlier turn of its session holds: the
	// first turn holding block d is the first whose reach passes d.
	m := make([]int32, ns)
	held := make([]int32, ns)
	top, second := make([]int32, ns), make([]int32, ns)
	reach := make([]int32, n)
	for s := range w.Sessions {
		turns := b.Full[w.Sessions[s].First : w.Sessions[s].First+w.Sessions[s].Turns]
		for k, f := range turns {
			if f > top[s] {
				top[s], second[s] = f, top[s]
			} else if f > second[s] {
				second[s] = f
			}
			reach[int(w.Sessions[s].First)+k] = top[s]
		}
		if sp.group[s] >= 0 {
			m[s] = sp.shared[s] / int32(blockSize)
			held[s] = min(m[s], top[s])
		}
	}
	// Per group: the two largest held (a multiset), and the sessions, in session order, whose
	// held exceeds every earlier session's of the group (the first holders of group blocks).
	gTop, gSecond := make([]int32, sp.groups), make([]int32, sp.groups)
	leaders := make([][]int32, sp.groups)
	for s, g := range sp.group {
		if g < 0 {
			continue
		}
		h := held[s]
		if h > gTop[g] {
			gTop[g], gSecond[g] = h, gTop[g]
			leaders[g] = append(leaders[g], int32(s))
		} else if h > gSecond[g] {
			gSecond[g] = h
		}
	}
	// firstTurn is the first request of session s holding block d (callers ask only for a block
	// some turn holds).
	firstTurn := func(s int, d int32) int32 {
		se := w.Sessions[s]
		turns := reach[se.First : se.First+se.Turns]
		return se.First + int32(sort.Search(len(turns), func(k int) bool { return turns[k] > d }))
	}
	// groupFirst is the first request holding block d of group g's run (d below gTop[g]).
	groupFirst := func(g int32, d int32) int32 {
		ls := leaders[g]
		k := sort.Search(len(ls), func(k int) bool { return held[ls[k]] > d })
		return firstTurn(int(ls[k]), d)
	}

	next := uint32(0)
	earlier := make([]int32, sp.groups) // per group, the most group blocks an earlier session holds
	for s := range w.Sessions {
		se := w.Sessions[s]
		g := sp.group[s]
		var otherSessions, groupHeld int32 // blocks of the group's run other / earlier sessions hold
		if g >= 0 {
			otherSessions = gTop[g]
			if held[s] == gTop[g] {
				otherSessions = gSecond[g]
			}
			groupHeld = min(earlier[g], m[s])
		}
		var before int32 // the most blocks an earlier turn of the session holds
		for r := se.First; r < se.First+se.Turns; r++ {
			f := b.Full[r]
			otherTurns := top[s]
			if f == top[s] {
				otherTurns = second[s]
			}
			depth := max(min(f, otherTurns), min(f, m[s], otherSessions))
			if depth > 0 {
				// Block d of r has an earlier holder while d < before (an earlier turn) or
				// d < groupHeld (an earlier session of the group): r's own run starts after both.
				own := min(max(before, groupHeld), depth)
				prior := int32(-1)
				if d := own - 1; d >= 0 {
					if d < groupHeld {
						prior = groupFirst(g, d)
					} else {
						prior = firstTurn(s, d)
					}
				}
				b.depth[r], b.own[r], b.prior[r], b.base[r] = depth, own, prior, next
				next += uint32(depth - own)
			}
			before = max(before, f)
		}
		if g >= 0 {
			earlier[g] = max(earlier[g], held[s])
		}
	}
	b.Distinct = int(next)
}
