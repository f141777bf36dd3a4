package metrics

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
)

// segment is part of a weighted sample population: value v[i] occurs c[i] times (c nil: once
// each). Entries with a count <= 0 or a non-finite value are not samples; negative values count
// as 0 (latency samples are clamped at >= 0). A segment with log set is chunk number chunk of
// that PassLog, spilled to its store's file: v and c are nil, and segReader reads it back.
// ranged says that lo and hi bound every finite value of v (samples or not; an infinite lo or
// hi only widens the bounds).
type segment struct {
	v      []float64
	c      []int32
	log    *PassLog
	chunk  int
	lo, hi float64
	ranged bool
}

// segReader visits the segments of a population in order, reading spilled ones back into one
// reused buffer (valid until the next call of next). A read failure ends the visit and is kept in
// err.
type segReader struct {
	segs []segment
	i    int
	cur  segment
	buf  *passChunk
	raw  []byte
	err  error
}

// rewind starts a new visit.
func (r *segReader) rewind() { r.i = 0 }

// next is the next segment of the visit; nil at the end or after a read failure (err).
func (r *segReader) next() *segment {
	if r.i >= len(r.segs) || r.err != nil {
		return nil
	}
	s := &r.segs[r.i]
	r.i++
	if s.log == nil {
		return s
	}
	if r.buf == nil {
		r.buf, r.raw = new(passChunk), make([]byte, chunkBytes)
	}
	if r.err = s.log.load(s.chunk, r.buf, r.raw); r.err != nil {
		return nil
	}
	r.cur = segment{v: r.buf.gapMs[:], c: r.buf.continued[:]}
	return &r.cur
}

// weight is the count of entry i (1 when the segment has no counts).
func (s *segment) weight(i int) int64 {
	if s.c == nil {
		return 1
	}
	return int64(s.c[i])
}

// sample is entry i's value clamped at 0 and whether it is a sample at all.
func (s *segment) sample(i int) (float64, int64, bool) {
	c := s.weight(i)
	v := s.v[i]
	if c <= 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, 0, false
	}
	return max(v, 0), c, true
}

// msPerSecond turns a gap in ms into a per-user output rate in tokens/s: msPerSecond / gap.
const msPerSecond = 1000.0

// gapStats returns the Stats of the ITL population in segs and the Stats of the per-user output
// rate 1000/gap (tokens/s) over its gaps > 0, equal to Summarize over the expanded
// population and over its reciprocals, without sorting or copying the population: sums are exact
// (so order-free), min and max come from one scan, and the nearest-rank percentiles of both from
// one radix selection over the gaps (rate percentiles are gap percentiles counted from the top,
// since 1000/g reverses the order). Spilled segments are read back once per scan; a read failure
// is returned as the error.
func gapStats(segs []segment) (itl, perUser Stats, err error) {
	r := &segReader{segs: segs}
	base, top, ok := keyRange(segs)
	if !ok {
		return Stats{}, Stats{}, nil
	}
	var n, zeros int64
	minV, maxV, minPos := math.Inf(1), math.Inf(-1), math.Inf(1)
	var fsum, fsumU fastSum
	// The scan for the sums also counts the first level of the percentile selection, which is the
	// same for every rank: firstBits wide over the population's key range [base, top], so that a
	// rank's bucket usually holds few enough entries to be gathered in the next scan.
	span := uint(bits.Len64(top - base))
	first := newSelGroup(0, span, firstWidth(segs, span))
	for s := r.next(); s != nil; s = r.next() {
		for i := range s.v {
			v, c, ok := s.sample(i)
			if !ok {
				continue
			}
			first.count(math.Float64bits(v)-base, c)
			n += c
			minV, maxV = min(minV, v), max(maxV, v)
			fsum.addProduct(v, float64(c))
			if v == 0 {
				zeros += c
				continue
			}
			minPos = min(minPos, v)
			fsumU.addProduct(msPerSecond/v, float64(c))
		}
	}
	if r.err != nil {
		return Stats{}, Stats{}, r.err
	}
	if n == 0 {
		return Stats{}, Stats{}, nil
	}
	if math.Float64bits(minV) < base || math.Float64bits(maxV) > top {
		// A segment gave bounds its values break: the selection could not find the ranks.
		return Stats{}, Stats{}, fmt.Errorf("ITL statistics: values %v to %v outside the bounds %v to %v their segments gave (a simulator bug)",
			minV, maxV, math.Float64frombits(base), math.Float64frombits(top))
	}
	nU := n - zeros
	// Sums are exact: a fast certified sum, recomputed with exactSum when it cannot be certified.
	total, ok := fsum.value()
	totalU, okU := fsumU.value()
	if !ok || !okU {
		if total, totalU, err = exactTotals(r); err != nil {
			return Stats{}, Stats{}, err
		}
	}
	mean := total / float64(n)
	var meanU float64
	if nU > 0 {
		meanU = totalU / float64(nU)
	}
	pcts := [5]float64{50, 75, 90, 95, 99}
	var ranks [10]int64
	nr := 5
	for k, p := range pcts {
		ranks[k] = percentileRank(n, p)
		if nU > 0 {
			ranks[5+k] = zeros + nU - 1 - percentileRank(nU, p)
			nr = 10
		}
	}
	var vals [10]float64
	sel := newSelection(ranks[:nr], vals[:nr], base, span)
	sel.groups = append(sel.groups, first)
	sel.resolve()
	// The scan for the squares also counts the selection's second level.
	var fss, fssU fastSum
	level := sel.next()
	if err := eachGap(r, func(v, c float64) {
		d := v - mean
		fss.addProduct(float64(d*d), c)
		if v > 0 {
			du := msPerSecond/v - meanU
			fssU.addProduct(float64(du*du), c)
		}
		if level {
			sel.count(math.Float64bits(v)-base, int64(c))
		}
	}); err != nil {
		return Stats{}, Stats{}, err
	}
	if level {
		sel.resolve()
		for sel.next() {
			if err := scanLevel(r, sel); err != nil {
				return Stats{}, Stats{}, err
			}
			sel.resolve()
		}
	}
	sqs, ok := fss.value()
	sqsU, okU := fssU.value()
	if !ok || !okU {
		if sqs, sqsU, err = exactSquares(r, mean, meanU); err != nil {
			return Stats{}, Stats{}, err
		}
	}
	itl = Stats{
		Mean: mean, Min: minV, Max: maxV, Std: math.Sqrt(sqs / float64(n)),
		Median: vals[0], P75: vals[1], P90: vals[2], P95: vals[3], P99: vals[4], Samples: n,
	}
	if nU > 0 {
		perUser = Stats{
			Mean: meanU, Min: msPerSecond / maxV, Max: msPerSecond / minPos, Std: math.Sqrt(sqsU / float64(nU)),
			Median: msPerSecond / vals[5], P75: msPerSecond / vals[6], P90: msPerSecond / vals[7],
			P95: msPerSecond / vals[8], P99: msPerSecond / vals[9], Samples: nU,
		}
	}
	return itl, perUser, nil
}

// exactTotals is the exact sum of r's gaps and of the rates 1000/gap over its positive gaps
// (exactSum): gapStats's sums when the fast ones cannot be certified.
func exactTotals(r *segReader) (total, totalU float64, err error) {
	var sum, sumU exactSum
	if err := eachGap(r, func(v, c float64) {
		sum.addProduct(v, c)
		if v > 0 {
			sumU.addProduct(msPerSecond/v, c)
		}
	}); err != nil {
		return 0, 0, err
	}
	return sum.value(), sumU.value(), nil
}

// exactSquares is the exact sum of the squared deviations of r's gaps from mean and of the rates
// 1000/gap over its positive gaps from meanU (exactSum): gapStats's when the fast sums cannot be
// certified.
func exactSquares(r *segReader, mean, meanU float64) (sqs, sqsU float64, err error) {
	var ss, ssU exactSum
	if err := eachGap(r, func(v, c float64) {
		d := v - mean
		ss.addProduct(float64(d*d), c)
		if v > 0 {
			du := msPerSecond/v - meanU
			ssU.addProduct(float64(du*du), c)
		}
	}); err != nil {
		return 0, 0, err
	}
	return ss.value(), ssU.value(), nil
}

// eachGap calls fn with every sample entry of r's segments (a new visit): its value clamped at 0
// and its count. It returns r's read failure, if any.
func eachGap(r *segReader, fn func(v, c float64)) error {
	r.rewind()
	for s := r.next(); s != nil; s = r.next() {
		for i := range s.v {
			if v, c, ok := s.sample(i); ok {
				fn(v, float64(c))
			}
		}
	}
	return r.err
}

// Radix selection: a value >= 0 orders like its IEEE-754 bits read as an unsigned integer, so the
// value at a rank is found digit by digit from the top of its key, the bits minus those of the
// population's least value (base): the first level counts firstBits-wide digits over the whole
// key range, each later level, over the entries whose higher bits match the target's, the
// weight per next digit (digitBits wide), and keeps the digit where the rank falls. Once few
// enough entries share the target's prefix they are gathered and sorted instead.
const (
	firstBits   = 16
	digitBits   = 12
	gatherLimit = 4096
)

// firstWidth is the width of the first selection level over segs, whose keys span span bits:
// firstBits, but only digitBits for a population of fewer than 2^firstBits entries, whose
// buckets are then small enough already (and a 1 MB histogram would cost more than it saves).
func firstWidth(segs []segment, span uint) uint {
	entries := 0
	for i := range segs {
		if segs[i].log != nil {
			entries += passChunkLen
		} else {
			entries += len(segs[i].v)
		}
	}
	if entries < 1<<firstBits {
		return min(digitBits, span)
	}
	return min(firstBits, span)
}

// keyRange returns the key bounds of the samples of segs (the IEEE-754 bits of the least and
// greatest value, clamped at 0 as samples are) and false when there is no finite bound (no
// sample). A ranged segment's bounds are taken as given (they may be wider: the population's
// range then is too, which only coarsens the first level); the others are scanned.
func keyRange(segs []segment) (base, top uint64, ok bool) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for i := range segs {
		s := &segs[i]
		if s.ranged {
			lo, hi = min(lo, s.lo), max(hi, s.hi)
			continue
		}
		for j := range s.v {
			if v, _, ok := s.sample(j); ok {
				lo, hi = min(lo, v), max(hi, v)
			}
		}
	}
	lo, hi = max(lo, 0), min(max(hi, 0), math.MaxFloat64)
	if !(lo <= hi) || math.IsInf(lo, 0) {
		return 0, 0, false
	}
	return math.Float64bits(lo), math.Float64bits(hi), true
}

// selTarget is one rank being selected: the entries with key>>shift == prefix hold it, at rank
// rem among them (0-based, ascending).
type selTarget struct {
	prefix  uint64
	shift   uint
	rem     int64
	entries int64 // entries with the prefix (not weight), when known; -1 unknown
	done    bool
}

// selGroup is the work of one level for the targets sharing a prefix.
type selGroup struct {
	prefix  uint64
	shift   uint
	width   uint // digit bits counted (histogram)
	gather  bool
	weights []int64 // per digit (histogram) or nil when gathering
	entries []int64
	buf     []keyCount
}

type keyCount struct {
	key   uint64
	count int64
}

// newSelGroup returns the group of the targets whose entries have key>>shift == prefix, counting
// a histogram of their next digit, width bits wide (width <= shift).
func newSelGroup(prefix uint64, shift, width uint) *selGroup {
	return &selGroup{prefix: prefix, shift: shift, width: width, weights: make([]int64, 1<<width), entries: make([]int64, 1<<width)}
}

// count adds an entry of key with count c to the group when its prefix matches.
func (g *selGroup) count(key uint64, c int64) {
	if g.shift < 64 && key>>g.shift != g.prefix {
		return
	}
	if g.gather {
		g.buf = append(g.buf, keyCount{key, c})
		return
	}
	d := (key >> (g.shift - g.width)) & (1<<g.width - 1)
	g.weights[d] += c
	g.entries[d]++
}

// selection selects values at ranks level by level: next forms the level's groups, every entry
// of the population is counted once (count), and resolve moves each target one digit down.
type selection struct {
	ts     []selTarget
	out    []float64
	groups []*selGroup
	base   uint64 // keys are value bits minus base
}

// newSelection starts selecting the values at 0-based ranks (each below the population's total
// weight) into out, over keys of span bits that are value bits minus base.
func newSelection(ranks []int64, out []float64, base uint64, span uint) *selection {
	s := &selection{ts: make([]selTarget, len(ranks)), out: out, base: base}
	for i, r := range ranks {
		s.ts[i] = selTarget{shift: span, rem: r, entries: -1}
	}
	return s
}

// next forms the groups of the next level, writing out the targets whose every digit is known,
// and reports whether any group remains to be counted.
func (s *selection) next() bool {
	s.groups = s.groups[:0]
	for i := range s.ts {
		t := &s.ts[i]
		if t.done {
			continue
		}
		if t.shift == 0 {
			s.out[i], t.done = math.Float64frombits(t.prefix+s.base), true
			continue
		}
		found := false
		for _, g := range s.groups {
			if g.prefix == t.prefix && g.shift == t.shift {
				found = true
				break
			}
		}
		if !found {
			g := &selGroup{prefix: t.prefix, shift: t.shift, gather: t.entries >= 0 && t.entries <= gatherLimit}
			if !g.gather {
				g = newSelGroup(t.prefix, t.shift, min(uint(digitBits), t.shift))
			}
			s.groups = append(s.groups, g)
		}
	}
	return len(s.groups) > 0
}

// count adds an entry of key with count c to every group of the level it matches.
func (s *selection) count(key uint64, c int64) {
	for _, g := range s.groups {
		g.count(key, c)
	}
}

// resolve moves every target of the level one digit down (or to its value, from gathered
// entries).
func (s *selection) resolve() {
	for i := range s.ts {
		t := &s.ts[i]
		if t.done {
			continue
		}
		for _, g := range s.groups {
			if g.prefix != t.prefix || g.shift != t.shift {
				continue
			}
			if g.gather {
				s.out[i], t.done = math.Float64frombits(pickGathered(g.buf, t.rem)+s.base), true
				break
			}
			width := g.width
			var cum int64
			for d, w := range g.weights[:1<<width] {
				if t.rem < cum+w {
					t.rem -= cum
					t.prefix = t.prefix<<width | uint64(d)
					t.shift -= width
					t.entries = g.entries[d]
					break
				}
				cum += w
			}
			break
		}
	}
}

// scanLevel visits every sample of r's segments once (a new visit) and counts it in the level's
// groups. It returns r's read failure, if any.
func scanLevel(r *segReader, s *selection) error {
	r.rewind()
	for seg := r.next(); seg != nil; seg = r.next() {
		for i := range seg.v {
			if v, c, ok := seg.sample(i); ok {
				s.count(math.Float64bits(v)-s.base, c)
			}
		}
	}
	return r.err
}

// pickGathered is the key at rank rem among the gathered entries.
func pickGathered(buf []keyCount, rem int64) uint64 {
	slices.SortFunc(buf, func(a, b keyCount) int {
		switch {
		case a.key < b.key:
			return -1
		case a.key > b.key:
			return 1
		}
		return 0
	})
	var cum int64
	for _, e := range buf {
		cum += e.count
		if rem < cum {
			return e.key
		}
	}
	return buf[len(buf)-1].key
}
