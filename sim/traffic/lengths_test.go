package traffic

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// moments draws n counts from l and returns their mean and standard deviation.
func moments(l Length, n int, seed uint64) (mean, std float64) {
	rng := newRand(seed)
	var sum, sq float64
	for range n {
		x := float64(l.Draw(rng))
		sum += x
		sq += x * x
	}
	mean = sum / float64(n)
	return mean, math.Sqrt(sq/float64(n) - mean*mean)
}

// Sample moments over 10,000 draws. Tolerances: the standard error of the mean is σ/√n = σ/100,
// so a mean within 5σ/100 of the expectation fails by chance with probability < 1e-6; the sample
// standard deviation is held within 5 %.
func TestLengthMoments(t *testing.T) {
	const n = 10_000
	for _, c := range []struct {
		name      string
		l         Length
		mean, std float64
	}{
		// Uniform integers in [a, b]: mean (a+b)/2, variance ((b−a+1)² − 1)/12.
		{"uniform", Length{Kind: LengthUniform, Min: 100, Max: 300}, 200, math.Sqrt((201*201 - 1) / 12.0)},
		// Normal far from its clip bounds: the moments are the parameters (rounding adds 1/12
		// to the variance, negligible here).
		{"normal", Length{Kind: LengthNormal, Min: 1, Max: 1 << 24, Mean: 1000, Stddev: 200}, 1000, 200},
		// Log-normal with mean and stddev of the count itself; the clip at 1<<24 is beyond
		// every draw that matters.
		{"lognormal", Length{Kind: LengthLognormal, Min: 1, Max: 1 << 24, Mean: 2048, Stddev: 1024}, 2048, 1024},
		// Empirical 100 (weight 3) and 500 (weight 1): mean 200, variance 0.75 × 100² + 0.25 ×
		// 300² = 30,000.
		{"empirical", Length{Kind: LengthEmpirical, Values: []int{100, 500}, Weights: []float64{3, 1}}, 200, math.Sqrt(30000)},
	} {
		mean, std := moments(c.l, n, 42)
		if math.Abs(mean-c.mean) > 5*c.std/math.Sqrt(n) {
			t.Errorf("%s: mean %.2f, want %.2f ± %.2f", c.name, mean, c.mean, 5*c.std/math.Sqrt(n))
		}
		if math.Abs(std-c.std) > 0.05*c.std {
			t.Errorf("%s: stddev %.2f, want %.2f ± 5 %%", c.name, std, c.std)
		}
	}
}

// Draws stay within [min, max]: a normal distribution centred on its lower bound puts about
// half of its draws on the bound, none below.
func TestLengthClipped(t *testing.T) {
	l := Length{Kind: LengthNormal, Min: 100, Max: 120, Mean: 100, Stddev: 50}
	rng := newRand(1)
	atMin := 0
	for range 10_000 {
		x := l.Draw(rng)
		if x < 100 || x > 120 {
			t.Fatalf("draw %d outside [100, 120]", x)
		}
		if x == 100 {
			atMin++
		}
	}
	if atMin < 4500 || atMin > 5500 {
		t.Errorf("%d of 10,000 draws at the lower bound, want about half", atMin)
	}
	// Log-normal with stddev 0 is its mean; a fixed length is its value and draws nothing.
	if got := (&Length{Kind: LengthLognormal, Min: 1, Max: 1000, Mean: 300}).Draw(rng); got != 300 {
		t.Errorf("lognormal stddev 0 drew %d, want 300", got)
	}
	pcg := rand.NewPCG(1, 2)
	before, _ := pcg.MarshalBinary()
	if got := (&Length{Value: 7}).Draw(rand.New(pcg)); got != 7 {
		t.Errorf("fixed length drew %d, want 7", got)
	}
	if after, _ := pcg.MarshalBinary(); !slices.Equal(before, after) {
		t.Error("a fixed length consumed randomness")
	}
}

// A workload of random lengths is reproduced exactly by its seed and changes with it; one of
// fixed lengths is the same for every seed.
func TestSyntheticSeed(t *testing.T) {
	shapes := []RequestShape{{Input: Length{Kind: LengthUniform, Min: 10, Max: 1000}, Output: Fixed(16)}}
	lens := func(w *Workload) []int32 {
		var out []int32
		for _, r := range w.Requests {
			out = append(out, r.PromptLen, r.OutputLen)
		}
		return out
	}
	a, b, c := SyntheticMix(500, shapes, nil, 42), SyntheticMix(500, shapes, nil, 42), SyntheticMix(500, shapes, nil, 43)
	if !slices.Equal(lens(a), lens(b)) {
		t.Error("the same seed gave different lengths")
	}
	if slices.Equal(lens(a), lens(c)) {
		t.Error("seeds 42 and 43 gave the same lengths")
	}
	fixed := []RequestShape{{Input: Fixed(100), Output: Fixed(10)}}
	if !slices.Equal(lens(SyntheticMix(50, fixed, nil, 1)), lens(SyntheticMix(50, fixed, nil, 2))) {
		t.Error("fixed lengths depend on the seed")
	}
	// Tokens are conserved: the content holds exactly each prompt and output.
	for i, r := range a.Requests {
		n := int32(0)
		for _, p := range r.Content {
			n += p.Len
		}
		if n != r.PromptLen+r.OutputLen {
			t.Fatalf("request %d: content %d tokens, prompt + output %d", i, n, r.PromptLen+r.OutputLen)
		}
	}
}

// A mixture draws each component with probability weight / Σ weights: weights 3 and 1 over
// 10,000 requests give shares within 5 standard errors (√(0.75 × 0.25 / 10,000) ≈ 0.0043) of
// 0.75 and 0.25.
func TestMixtureShares(t *testing.T) {
	shapes := []RequestShape{{Input: Fixed(100), Output: Fixed(10)}, {Input: Fixed(200), Output: Fixed(20)}}
	w := SyntheticMix(10_000, shapes, []float64{3, 1}, 42)
	first := 0
	for _, r := range w.Requests {
		if r.PromptLen == 100 {
			first++
		}
	}
	if share := float64(first) / 10_000; math.Abs(share-0.75) > 5*0.0043 {
		t.Errorf("first component share %.4f, want 0.75", share)
	}
}

// Sessions with random turn lengths: each turn's prompt is the previous prompt plus its output
// plus the new input, and sessions of one prefix group share the leading tokens of the shorter
// of their shared parts (ratio 0.5 of the first new input).
func TestSyntheticSessionsRandomLengths(t *testing.T) {
	sh := SessionShape{Turns: 3, NewInput: Length{Kind: LengthUniform, Min: 50, Max: 150},
		Output: Length{Kind: LengthUniform, Min: 5, Max: 20}, SharedPrefixRatio: 0.5, PrefixGroups: 2}
	w := SyntheticSessionsMix(20, []SessionShape{sh}, nil, 9)
	for _, s := range w.Sessions {
		turns := w.Requests[s.First : s.First+s.Turns]
		for k := 1; k < len(turns); k++ {
			grew := turns[k].PromptLen - turns[k-1].PromptLen - turns[k-1].OutputLen
			if grew < 50 || grew > 150 {
				t.Fatalf("session %s turn %d: new input %d outside [50, 150]", s.Name, k, grew)
			}
		}
	}
	// Sessions 0 and 2 are in group 0: their first pieces start at the same token, each as long
	// as half its first prompt.
	a, b := w.Requests[w.Sessions[0].First], w.Requests[w.Sessions[2].First]
	if a.Content[0].Start != b.Content[0].Start || a.Content[0].Len != a.PromptLen/2 || b.Content[0].Len != b.PromptLen/2 {
		t.Errorf("group 0 prefixes %+v (prompt %d) and %+v (prompt %d)", a.Content[0], a.PromptLen, b.Content[0], b.PromptLen)
	}
	if c := w.Requests[w.Sessions[1].First]; c.Content[0].Start == a.Content[0].Start {
		t.Error("sessions of groups 0 and 1 share a prefix")
	}
}

// sharedPrefixes against the definition: the leading blocks of a request that another request
// holds, on random prefix trees (chained hashes: a block's hash names its whole prefix), asking
// each request for at most one block past its shared ones, each block once, and naming the
// shared blocks by dense ids that are equal exactly when the hashes are.
func TestSharedBlocksProperty(t *testing.T) {
	// One table for all candidates, and (small bucketTarget) the hashes spread over many
	// buckets, a few candidates each, empty buckets among them.
	for _, c := range []struct{ target, maxRequests int }{{bucketTarget, 12}, {1, 12}, {3, 300}} {
		t.Run(fmt.Sprintf("bucketTarget=%d,requests<=%d", c.target, c.maxRequests), func(t *testing.T) {
			defer func(old int) { bucketTarget = old }(bucketTarget)
			bucketTarget = c.target
			checkSharedBlocks(t, c.maxRequests)
		})
	}
}

// checkSharedBlocks runs TestSharedBlocksProperty's trials on up to maxRequests requests.
func checkSharedBlocks(t *testing.T, maxRequests int) {
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := range 200 {
		n := 1 + rng.IntN(maxRequests)
		perReq := make([][]uint64, n)
		root := rng.Uint64() // a tree of other hashes each trial, landing in other buckets
		for i := range perReq {
			// Each request follows a random path in a tree of fan-out 2, up to 6 deep: block d's
			// hash encodes the path so far.
			depth := rng.IntN(7)
			h := root
			for range depth {
				h = h*3 + 1 + uint64(rng.IntN(2))
				perReq[i] = append(perReq[i], h)
			}
		}
		blocks := make([]int32, n)
		asked := make([]int, n)
		for i := range perReq {
			blocks[i] = int32(len(perReq[i]))
		}
		bs := &BlockSet{Full: blocks}
		pos := make([]int32, 0, n) // the request at each candidate position
		for i := range blocks {
			if blocks[i] > 0 {
				pos = append(pos, int32(i))
			}
		}
		sharedPrefixes(bs, func(k, i int32) uint64 {
			if pos[k] != i {
				t.Fatalf("trial %d: candidate %d is request %d, its moves say %d", trial, k, i, pos[k])
			}
			if asked[i] >= len(perReq[i]) {
				t.Fatalf("trial %d: request %d asked for block %d of %d", trial, i, asked[i], len(perReq[i]))
			}
			asked[i]++
			return perReq[i][asked[i]-1]
		}, func(dst, src int32) { pos[dst] = pos[src] })
		want := make([][]uint64, n)
		for i, hs := range perReq {
			for _, h := range hs {
				other := false
				for j, gs := range perReq {
					other = other || j != i && slices.Contains(gs, h)
				}
				if !other {
					break
				}
				want[i] = append(want[i], h)
			}
			if asked[i] > len(want[i])+1 {
				t.Fatalf("trial %d request %d: hashed %d blocks for %d shared", trial, i, asked[i], len(want[i]))
			}
		}
		// Both forms of the BlockSet name the blocks alike: the ids rebuilt from the runs one
		// request at a time, and the ones materialized for all requests at once.
		got := make([][]uint32, n)
		total := 0
		for i := range got {
			got[i] = bs.FillSharedKeys(nil, i)
			if int(bs.SharedLen(i)) != len(got[i]) {
				t.Fatalf("trial %d request %d: SharedLen %d, %d keys", trial, i, bs.SharedLen(i), len(got[i]))
			}
			total += len(got[i])
		}
		if msg := sameNames(got, bs.Distinct, want); msg != "" {
			t.Fatalf("trial %d (%v): %s", trial, perReq, msg)
		}
		bs.materialize(total)
		if msg := sameNames(bs.Shared, bs.Distinct, want); msg != "" {
			t.Fatalf("trial %d (%v) materialized: %s", trial, perReq, msg)
		}
	}
}

// sameNames checks that ids names the blocks of hashes: per request the same count, ids below
// distinct, each used, and equal ids exactly where the hashes are equal. It returns what differs.
func sameNames(ids [][]uint32, distinct int, hashes [][]uint64) string {
	if len(ids) != len(hashes) {
		return fmt.Sprintf("%d requests named, want %d", len(ids), len(hashes))
	}
	idOf, hashOf := map[uint64]uint32{}, map[uint32]uint64{}
	for i := range hashes {
		if len(ids[i]) != len(hashes[i]) {
			return fmt.Sprintf("request %d: %d shared blocks %v, want %d %x", i, len(ids[i]), ids[i], len(hashes[i]), hashes[i])
		}
		for j, h := range hashes[i] {
			id := ids[i][j]
			if int(id) >= distinct {
				return fmt.Sprintf("request %d block %d: id %d, not below the %d distinct", i, j, id, distinct)
			}
			if x, ok := idOf[h]; ok && x != id {
				return fmt.Sprintf("hash %x named %d and %d", h, x, id)
			}
			if x, ok := hashOf[id]; ok && x != h {
				return fmt.Sprintf("id %d names hashes %x and %x", id, x, h)
			}
			idOf[h], hashOf[id] = id, h
		}
	}
	if len(hashOf) != distinct {
		return fmt.Sprintf("%d ids used, %d distinct claimed", len(hashOf), distinct)
	}
	return ""
}

// Think times with a standard deviation: every later turn's DelayMs is a normal draw of mean 100
// and standard deviation 50 ms clipped at 0 (sample mean within 4 standard errors, sample
// standard deviation within 5 %), first turns wait for nothing, and the lengths are those of the
// same workload with a constant think time (the draws come from a generator of their own).
func TestSyntheticSessionsThinkTimeSpread(t *testing.T) {
	sh := SessionShape{Turns: 4, NewInput: Length{Kind: LengthUniform, Min: 50, Max: 150},
		Output: Length{Kind: LengthUniform, Min: 5, Max: 20}, InterTurnDelayMs: 100}
	fixed := SyntheticSessionsMix(4000, []SessionShape{sh}, nil, 3)
	sh.InterTurnDelayStddevMs = 50
	spread := SyntheticSessionsMix(4000, []SessionShape{sh}, nil, 3)
	var sum, sq float64
	n := 0
	for i, r := range spread.Requests {
		f := fixed.Requests[i]
		if r.PromptLen != f.PromptLen || r.OutputLen != f.OutputLen {
			t.Fatalf("request %d: lengths %d/%d, want %d/%d as without a spread", i, r.PromptLen, r.OutputLen, f.PromptLen, f.OutputLen)
		}
		if r.Turn == 0 {
			if r.DelayMs != 0 {
				t.Fatalf("request %d: first turn waits %g ms", i, r.DelayMs)
			}
			continue
		}
		if f.DelayMs != 100 || r.DelayMs < 0 {
			t.Fatalf("request %d: think times %g (constant) and %g (spread)", i, f.DelayMs, r.DelayMs)
		}
		sum += r.DelayMs
		sq += r.DelayMs * r.DelayMs
		n++
	}
	mean := sum / float64(n)
	sd := math.Sqrt(sq/float64(n) - mean*mean)
	if n != 12_000 || math.Abs(mean-100) > 4*50/math.Sqrt(float64(n)) || math.Abs(sd-50) > 2.5 {
		t.Errorf("%d think times: mean %.2f ms, standard deviation %.2f ms; want 12000, 100 and 50", n, mean, sd)
	}
}
