package metrics

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// tempDirEmpty fails the test when dir holds any entry (a spill file left behind).
func tempDirEmpty(t *testing.T, dir, when string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		t.Errorf("%s: %s left in the temporary directory", when, e.Name())
	}
}

// randomGap is a pass gap in ms: mostly positive and varied, sometimes 0, repeated, negative or
// non-finite (gapStats treats the last two as 0 and as no sample).
func randomGap(rng *rand.Rand) float64 {
	switch r := rng.IntN(100); {
	case r < 3:
		return 0
	case r < 4:
		return -1
	case r < 5:
		return math.NaN()
	case r < 6:
		return math.Inf(1)
	case r < 30:
		return 8 // ties
	default:
		return 8 * math.Exp(rng.NormFloat64())
	}
}

// Property: pass logs that spill to the temporary file beyond a budget of 0 or 1 chunk give the
// same gapStats and the same Build summary, to the bit, as the same logs kept in memory, over
// several workers with random gaps and counts and random uncount ranges, many of which cross
// between spilled and in-memory chunks; the spill file is never visible in the temporary
// directory, neither while the logs are open nor after Close.
func TestSpilledPassLogsEqualInMemory(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	rng := rand.New(rand.NewPCG(7, 8))
	var crossing, spilledTotal int
	for trial := 0; trial < 60; trial++ {
		workers := 1 + rng.IntN(4)
		st := NewPassStore(rng.IntN(2) * passChunkLen)
		mem := make([]*PassLog, workers)
		disk := make([]*PassLog, workers)
		lens := make([]int, workers)
		for w := range workers {
			mem[w], disk[w] = new(PassLog), new(PassLog)
			disk[w].UseStore(st)
			lens[w] = rng.IntN(5 * passChunkLen)
			if trial%10 == 0 {
				lens[w] = passChunkLen * rng.IntN(4) // whole chunks only
			}
		}
		// Interleave the workers' passes as a run does.
		for left := true; left; {
			left = false
			for w := range workers {
				if mem[w].Len() >= lens[w] {
					continue
				}
				left = true
				for k := rng.IntN(50); k >= 0 && mem[w].Len() < lens[w]; k-- {
					g, c := randomGap(rng), int32(rng.IntN(6))
					mem[w].Append(g, c)
					disk[w].Append(g, c)
				}
			}
		}
		if err := st.Err(); err != nil {
			t.Fatal(err)
		}
		spilledTotal += st.SpilledChunks()
		for w := range workers {
			if lens[w] == 0 {
				continue
			}
			for k := rng.IntN(30); k > 0; k-- {
				first := rng.IntN(lens[w])
				last := min(lens[w]-1, first+rng.IntN(3*passChunkLen))
				if first/passChunkLen != last/passChunkLen && (disk[w].chunks[first/passChunkLen].mem == nil) != (disk[w].chunks[last/passChunkLen].mem == nil) {
					crossing++
				}
				mem[w].uncount(int32(first), int32(last))
				disk[w].uncount(int32(first), int32(last))
			}
		}
		tempDirEmpty(t, dir, "while spilled")
		var segsM, segsD []segment
		for w := range workers {
			segsM, segsD = mem[w].appendSegments(segsM), disk[w].appendSegments(segsD)
		}
		wantI, wantU, err := gapStats(segsM)
		if err != nil {
			t.Fatal(err)
		}
		gotI, gotU, err := gapStats(segsD)
		if err != nil {
			t.Fatal(err)
		}
		if gotI != wantI || gotU != wantU {
			t.Fatalf("trial %d: spilled gapStats\n got %+v %+v\nwant %+v %+v", trial, gotI, gotU, wantI, wantU)
		}
		if trial%6 == 0 {
			if refI, refU := reference(segsM); refI != wantI || refU != wantU {
				t.Fatalf("trial %d: in-memory gapStats differ from the sorted reference", trial)
			}
		}
		want, err := Build(&Input{PassLogs: mem})
		if err != nil {
			t.Fatal(err)
		}
		got, err := Build(&Input{PassLogs: disk})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("trial %d: spilled Build\n got %+v\nwant %+v", trial, got, want)
		}
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
		tempDirEmpty(t, dir, "after Close")
	}
	if spilledTotal == 0 || crossing < 20 {
		t.Errorf("the trials spilled %d chunks and had %d uncount ranges crossing spilled and in-memory chunks: the test does not exercise spilling", spilledTotal, crossing)
	}
}

// A budget of one chunk: a worker's first chunk stays in memory, the second worker's first chunk
// is over the budget but every log needs one, and each chunk that fills after that spills. The
// in-memory chunks are exactly those; memory stays at 2 chunks whatever the length.
func TestPassStoreBudget(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	st := NewPassStore(passChunkLen)
	defer st.Close()
	var a, b PassLog
	a.UseStore(st)
	b.UseStore(st)
	for i := range 10 * passChunkLen {
		a.Append(float64(i), 1)
		if i < 3*passChunkLen+5 {
			b.Append(float64(i), 1)
		}
	}
	inMem := func(l *PassLog) (out []int) {
		for i, c := range l.chunks {
			if c.mem != nil {
				out = append(out, i)
			}
		}
		return out
	}
	if got := inMem(&a); !reflect.DeepEqual(got, []int{9}) {
		t.Errorf("log a: chunks %v in memory, want [9] (only the chunk being filled)", got)
	}
	if got := inMem(&b); !reflect.DeepEqual(got, []int{3}) {
		t.Errorf("log b: chunks %v in memory, want [3]", got)
	}
	if st.inMem != 2 || st.SpilledChunks() != 9+3 {
		t.Errorf("store: %d chunks in memory, %d spilled; want 2 and 12", st.inMem, st.SpilledChunks())
	}
	// Under the default budget nothing spills and no file is created.
	def := NewPassStore(PassMemoryBudget)
	var c PassLog
	c.UseStore(def)
	for i := range 10 * passChunkLen {
		c.Append(float64(i), 1)
	}
	if def.f != nil || def.SpilledChunks() != 0 {
		t.Errorf("under the default budget: file %v, %d chunks spilled", def.f, def.SpilledChunks())
	}
}

// A chunk survives the spill file bit for bit: negative zero, NaN payloads, infinities,
// subnormals and extreme counts.
func TestChunkEncodingExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var c, d passChunk
	special := []float64{math.Copysign(0, -1), math.Float64frombits(0x7ff8_dead_beef_0001), math.Inf(-1), math.Inf(1), 5e-324, math.MaxFloat64}
	for i := range c.gapMs {
		if i < len(special) {
			c.gapMs[i] = special[i]
		} else {
			c.gapMs[i] = math.Float64frombits(rng.Uint64())
		}
		c.continued[i] = int32(rng.Uint32())
	}
	c.continued[0], c.continued[1] = math.MinInt32, math.MaxInt32
	raw := make([]byte, chunkBytes)
	encodeChunk(raw, &c)
	decodeChunk(&d, raw)
	for i := range c.gapMs {
		if math.Float64bits(c.gapMs[i]) != math.Float64bits(d.gapMs[i]) || c.continued[i] != d.continued[i] {
			t.Fatalf("pass %d: wrote %x/%d, read %x/%d", i, math.Float64bits(c.gapMs[i]), c.continued[i], math.Float64bits(d.gapMs[i]), d.continued[i])
		}
	}
}

// spillErrorSays fails the test unless err names the spill file and says to set TMPDIR.
func spillErrorSays(t *testing.T, err error, what string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: no error", what)
	}
	if msg := err.Error(); !strings.Contains(msg, "servesweep-passes-") || !strings.Contains(msg, "set TMPDIR") {
		t.Errorf("%s: error %q does not name the spill file and say to set TMPDIR", what, msg)
	}
}

// A temporary directory that does not exist: the first spill fails, the log keeps its chunks in
// memory (nothing is lost or panics), and Build returns the error.
func TestPassStoreCreateFails(t *testing.T) {
	t.Setenv("TMPDIR", filepath.Join(t.TempDir(), "missing"))
	st := NewPassStore(0)
	defer st.Close()
	var l PassLog
	l.UseStore(st)
	for i := range 3 * passChunkLen {
		l.Append(1, 1)
		if i == passChunkLen && st.Err() == nil {
			t.Fatal("no error after the first chunk failed to spill")
		}
	}
	spillErrorSays(t, st.Err(), "creating")
	if l.Len() != 3*passChunkLen || st.SpilledChunks() != 0 {
		t.Errorf("log length %d, %d spilled", l.Len(), st.SpilledChunks())
	}
	s, err := Build(&Input{PassLogs: []*PassLog{&l}})
	if s != nil {
		t.Error("Build returned a summary beside the error")
	}
	spillErrorSays(t, err, "Build")
}

// A write that fails once the file exists (here: the file is read-only) is recorded like a
// failed creation.
func TestPassStoreWriteFails(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	st := NewPassStore(0)
	defer st.Close()
	var l PassLog
	l.UseStore(st)
	for range passChunkLen + 1 {
		l.Append(1, 1)
	}
	if st.SpilledChunks() != 1 || st.Err() != nil {
		t.Fatalf("%d chunks spilled, error %v; want 1 and none", st.SpilledChunks(), st.Err())
	}
	ro, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	st.f.Close()
	st.f = ro
	for range passChunkLen {
		l.Append(1, 1)
	}
	spillErrorSays(t, st.Err(), "writing")
	if _, err := Build(&Input{PassLogs: []*PassLog{&l}}); err == nil {
		t.Error("Build succeeded after a failed spill")
	}
}

// A spilled chunk that cannot be read back (here: the file was closed under the store) makes
// Build fail with an error naming the file, not panic or report partial statistics.
func TestPassStoreReadFails(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	st := NewPassStore(0)
	defer st.Close()
	var l PassLog
	l.UseStore(st)
	for i := range 2*passChunkLen + 7 {
		l.Append(float64(i), 1)
	}
	st.f.Close() // the store still believes it open: ReadAt fails
	s, err := Build(&Input{PassLogs: []*PassLog{&l}})
	if s != nil {
		t.Error("Build returned a summary beside the error")
	}
	spillErrorSays(t, err, "reading back")
}

// A log built on chunks another log released (PassLog.Release) reads only what it wrote: the
// released log's large gaps stay in the reused chunks past the new log's passes and never reach
// its statistics, which equal those of the same passes in plain segments.
func TestReleasedChunksReuseSameStats(t *testing.T) {
	var old PassLog
	for range 3*passChunkLen + 100 {
		old.Append(1e9, 3)
	}
	released := map[*passChunk]bool{}
	for _, ch := range old.chunks {
		released[ch.mem] = true
	}
	old.Release()
	if old.Len() != 0 {
		t.Fatalf("a released log holds %d passes", old.Len())
	}
	rng := rand.New(rand.NewPCG(31, 32))
	var l PassLog
	v, c := make([]float64, passChunkLen+7), make([]int32, passChunkLen+7)
	for i := range v {
		v[i], c[i] = 5+rng.Float64(), int32(rng.IntN(4))
		l.Append(v[i], c[i])
	}
	reused := 0
	for _, ch := range l.chunks {
		if released[ch.mem] {
			reused++
		}
	}
	// Without the race detector, sync.Pool keeps what it is given across one garbage collection,
	// so the new log's two chunks are released ones, holding stale passes.
	if reused == 0 && !raceEnabled {
		t.Fatal("no chunk of the released log was reused: the test would not see stale entries")
	}
	gotI, gotU, err := gapStats(l.appendSegments(nil))
	if err != nil {
		t.Fatal(err)
	}
	wantI, wantU := reference([]segment{{v: v, c: c}})
	if gotI != wantI || gotU != wantU {
		t.Fatalf("stats of a log on reused chunks:\n got %+v %+v\nwant %+v %+v", gotI, gotU, wantI, wantU)
	}
}
