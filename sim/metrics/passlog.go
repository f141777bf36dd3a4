package metrics

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sync"
)

// passChunkLen is the number of passes per PassLog chunk (48 KiB of gaps and counts).
const passChunkLen = 4096

// passBytes is the size of one pass in memory and in a spill file: its float64 gap and its int32
// count of continuing tokens.
const passBytes = 12

// chunkBytes is the size of one chunk in a spill file (49,152 bytes): its 4096 gaps as
// little-endian IEEE-754 bits, then its 4096 counts as little-endian int32.
const chunkBytes = passChunkLen * passBytes

// PassMemoryBudget is the default memory budget of one run's pass logs together, in passes:
// 2^22 passes, 48 MiB (50,331,648 bytes) of gaps and counts. A trace replay of the Mooncake
// conversation trace (12,031 requests) records about 1.2 million passes and never touches the
// disk; a run that records more spills the excess to a temporary file (PassStore).
const PassMemoryBudget = 1 << 22

// spillPattern is the name pattern of spill files in the temporary directory (os.CreateTemp).
const spillPattern = "servesweep-passes-*"

// PassLog is one worker's pass history for ITL: per pass, in order, its gap in ms (the pass's
// end minus its start) and how many tokens emitted in it continued a pass run, i.e. came from
// requests whose previous token was emitted by the pass before (engine.Request.EachRun): each
// such token's ITL sample is the pass's gap. Storage grows in fixed chunks of passChunkLen
// passes, so a long run never copies or discards what it recorded; with a PassStore (UseStore),
// full chunks beyond the store's memory budget are written to its spill file and read back when
// the statistics are built. The zero value is empty, keeps everything in memory and is ready to
// use.
type PassLog struct {
	cur    *passChunk // the chunk being filled (the last of chunks); nil before the first pass
	n      int
	chunks []logChunk
	store  *PassStore
	// rounds[i] counts the speculative rounds of chunk i's passes (AppendRounds; nil: none).
	// They stay in memory: 32 bytes per pass where any round continued a pass run.
	rounds []*roundChunk
}

type passChunk struct {
	gapMs     [passChunkLen]float64
	continued [passChunkLen]int32
}

// logChunk is one chunk of a PassLog: in memory, or spilled to the store's file.
type logChunk struct {
	mem *passChunk // nil when spilled
	off int64      // the chunk's offset in the spill file, when spilled
	// fix lists the uncounts of a spilled chunk, applied each time it is read back.
	fix []passRange
	// lo and hi bound the chunk's gaps (every entry, sample or not; gapRange), taken when it
	// filled (ranged): the statistics size their first selection level from them without a
	// scan.
	lo, hi float64
	ranged bool
}

// gapRange returns bounds of the finite values of gaps: plain comparisons skip NaN, and an
// infinite gap only widens them (it is never a sample, and the statistics clamp the bounds to the
// finite non-negative range). +Inf and -Inf when gaps is empty.
func gapRange(gaps []float64) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, v := range gaps {
		if v < lo {
			lo = v
		}
		if v > hi {
			hi = v
		}
	}
	return lo, hi
}

// passRange is a range [lo, hi] of pass indices within one chunk whose counts lose one
// continuing token each.
type passRange struct{ lo, hi uint16 }

// UseStore makes l count its chunks against st's memory budget and spill beyond it to st's file.
// Call it before the first Append.
func (l *PassLog) UseStore(st *PassStore) { l.store = st }

// Len is the number of passes recorded; the next Append records pass Len().
func (l *PassLog) Len() int { return l.n }

// Append records the next pass: its gap in ms and its count of continuing tokens (>= 0). A
// failure to spill a full chunk is recorded in the log's PassStore (PassStore.Err), and the log
// then keeps its chunks in memory.
func (l *PassLog) Append(gapMs float64, continued int32) {
	i := l.n & (passChunkLen - 1)
	if i == 0 {
		l.grow()
	}
	l.cur.gapMs[i] = gapMs
	l.cur.continued[i] = continued
	l.n++
}

// grow starts the next chunk: when the store's budget is used up, the full current chunk is
// written to the spill file and its buffer reused; otherwise a new chunk is allocated.
func (l *PassLog) grow() {
	st := l.store
	if l.cur != nil {
		// The chunk just filled is still in cache: bound its gaps now.
		last := &l.chunks[len(l.chunks)-1]
		last.lo, last.hi = gapRange(l.cur.gapMs[:])
		last.ranged = true
	}
	if l.cur != nil && st != nil && st.err == nil && st.inMem >= st.budget {
		off, err := st.write(l.cur)
		if err == nil {
			last := &l.chunks[len(l.chunks)-1]
			last.mem, last.off = nil, off
			l.chunks = append(l.chunks, logChunk{mem: l.cur})
			return
		}
		st.err = err
	}
	l.cur = chunkPool.Get().(*passChunk)
	if st != nil {
		st.inMem++
	}
	l.chunks = append(l.chunks, logChunk{mem: l.cur})
}

// chunkPool holds the in-memory chunks of released logs (PassLog.Release) for later logs, so that
// a sweep's points reuse them instead of allocating and zeroing 48 KiB a chunk. A reused chunk
// keeps stale entries past the passes written to it; nothing reads them (a chunk is read up to
// its log's length, a full one whole).
var chunkPool = sync.Pool{New: func() any { return new(passChunk) }}

// Release hands the log's in-memory chunks to later logs and empties the log. Call it once the
// statistics that read the log are built; the log is then as new, without a PassStore.
func (l *PassLog) Release() {
	for i := range l.chunks {
		if c := l.chunks[i].mem; c != nil {
			chunkPool.Put(c)
		}
	}
	l.releaseRounds()
	*l = PassLog{}
}

// uncount removes one continuing token from each pass in [first, last] (a run of a request that
// did not complete: its tokens give no ITL sample). Passes of spilled chunks keep the removal
// with the chunk, applied when it is read back.
func (l *PassLog) uncount(first, last int32) {
	for k := int(first); k <= int(last); {
		ci := k / passChunkLen
		end := min(int(last), (ci+1)*passChunkLen-1)
		lo, hi := k%passChunkLen, end%passChunkLen
		ch := &l.chunks[ci]
		if c := ch.mem; c != nil {
			for j := lo; j <= hi; j++ {
				c.continued[j]--
			}
		} else {
			ch.fix = append(ch.fix, passRange{uint16(lo), uint16(hi)})
		}
		k = end + 1
	}
}

// appendSegments appends the log's chunks to segs as weighted segments; a spilled chunk is a
// segment that segReader reads back.
func (l *PassLog) appendSegments(segs []segment) []segment {
	for i := range l.chunks {
		ch := &l.chunks[i]
		if ch.mem == nil {
			segs = append(segs, segment{log: l, chunk: i, lo: ch.lo, hi: ch.hi, ranged: ch.ranged})
			continue
		}
		n := min(passChunkLen, l.n-i*passChunkLen)
		seg := segment{v: ch.mem.gapMs[:n], c: ch.mem.continued[:n], lo: ch.lo, hi: ch.hi, ranged: ch.ranged}
		if !ch.ranged {
			// The chunk being filled.
			seg.lo, seg.hi = gapRange(seg.v)
			seg.ranged = true
		}
		segs = append(segs, seg)
	}
	return segs
}

// load reads spilled chunk i back into c, with its uncounts applied; raw is a buffer of
// chunkBytes.
func (l *PassLog) load(i int, c *passChunk, raw []byte) error {
	ch := &l.chunks[i]
	if err := l.store.read(raw, ch.off); err != nil {
		return err
	}
	decodeChunk(c, raw)
	for _, r := range ch.fix {
		for j := int(r.lo); j <= int(r.hi); j++ {
			c.continued[j]--
		}
	}
	return nil
}

// PassStore is the memory budget and the spill file shared by the pass logs of one run
// (PassLog.UseStore). While the logs hold fewer chunks in memory than the budget, nothing
// touches the disk. Beyond it, each chunk that fills is written to a temporary file and its
// buffer reused: the file is created on first need with os.CreateTemp("", "servesweep-passes-*")
// (in $TMPDIR, else the system's temporary directory) and, except on Windows, removed from its
// directory at once, so that nothing is left behind even if the process is killed; the open
// file keeps its data until Close. A PassStore is not safe for concurrent use (a run is
// single-threaded).
type PassStore struct {
	budget  int // chunks the logs may hold in memory
	inMem   int // chunks the logs hold in memory
	f       *os.File
	path    string
	size    int64 // bytes written to f
	spilled int   // chunks written to f
	err     error // the first failed spill
	raw     []byte
	closed  bool
}

// NewPassStore returns a store whose logs keep at most budgetPasses passes in memory together
// (rounded down to whole chunks of 4096 passes, 12 bytes per pass; PassMemoryBudget is the
// default), plus the chunk each log is filling.
func NewPassStore(budgetPasses int) *PassStore {
	return &PassStore{budget: max(budgetPasses, 0) / passChunkLen}
}

// Err is the first failure to spill a chunk (creating or writing the spill file), nil when none.
// A run whose store failed cannot build exact statistics and must fail with this error; it names
// the file and says what to do.
func (st *PassStore) Err() error { return st.err }

// SpilledChunks is the number of chunks of 4096 passes written to the spill file.
func (st *PassStore) SpilledChunks() int { return st.spilled }

// Close releases the spill file, if one was created (on Windows, removing it); the logs' spilled
// chunks cannot be read back afterwards. It returns an error naming the file when closing or
// removing it fails. Close is idempotent.
func (st *PassStore) Close() error {
	if st == nil || st.f == nil || st.closed {
		return nil
	}
	st.closed = true
	err := st.f.Close()
	if runtime.GOOS == "windows" {
		if rerr := os.Remove(st.path); err == nil {
			err = rerr
		}
	}
	if err != nil {
		return spillErrorf("pass log spill file %s: closing: %v", st.path, pathless(err))
	}
	return nil
}

// SpillError is a failure to create, write, read back or close a pass log's spill file: a fault
// of the machine the run is on (TMPDIR missing or unwritable, disk full), not of the simulated
// configuration, so a sweep stops on it rather than recording the point as failed.
type SpillError struct{ Msg string }

// Error is Msg: the file, the operation, the cause and what to do.
func (e *SpillError) Error() string { return e.Msg }

func spillErrorf(format string, args ...any) error {
	return &SpillError{Msg: fmt.Sprintf(format, args...)}
}

// advice ends every spill error: why the file exists and what the user can do about it.
func (st *PassStore) advice() string {
	return fmt.Sprintf("the run's ITL pass log outgrew its in-memory budget (%d MB) and spills to a temporary file, "+
		"12 bytes per simulated pass; set TMPDIR to a writable directory with free space", st.budget*chunkBytes>>20)
}

// create creates the spill file and, except on Windows, removes its name.
func (st *PassStore) create() error {
	f, err := os.CreateTemp("", spillPattern)
	if err != nil {
		return spillErrorf("pass log spill file %s: creating: %v; %s",
			filepath.Join(os.TempDir(), spillPattern), pathless(err), st.advice())
	}
	st.f, st.path = f, f.Name()
	if runtime.GOOS != "windows" {
		if err := os.Remove(st.path); err != nil {
			f.Close()
			st.closed = true
			return spillErrorf("pass log spill file %s: removing its name after creating it: %v; %s", st.path, pathless(err), st.advice())
		}
	}
	return nil
}

// write appends chunk c to the spill file, creating it on first use, and returns its offset.
func (st *PassStore) write(c *passChunk) (int64, error) {
	if st.closed {
		return 0, spillErrorf("pass log spill file %s: written after Close", st.path)
	}
	if st.f == nil {
		if err := st.create(); err != nil {
			return 0, err
		}
	}
	if st.raw == nil {
		st.raw = make([]byte, chunkBytes)
	}
	encodeChunk(st.raw, c)
	off := st.size
	if _, err := st.f.WriteAt(st.raw, off); err != nil {
		return 0, spillErrorf("pass log spill file %s: writing %d bytes at offset %d: %v; %s", st.path, chunkBytes, off, pathless(err), st.advice())
	}
	st.size += chunkBytes
	st.spilled++
	return off, nil
}

// read reads the chunk at offset off of the spill file into raw (chunkBytes long).
func (st *PassStore) read(raw []byte, off int64) error {
	if st.f == nil || st.closed {
		return spillErrorf("pass log spill file %s: read back after Close", st.path)
	}
	if _, err := st.f.ReadAt(raw, off); err != nil {
		return spillErrorf("pass log spill file %s: reading back %d bytes at offset %d: %v; %s", st.path, len(raw), off, pathless(err), st.advice())
	}
	return nil
}

// pathless is err without the file name an *os.PathError repeats (the messages name the file).
func pathless(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", pe.Op, pe.Err)
	}
	return err
}

// encodeChunk writes c into b (chunkBytes long): the gaps' IEEE-754 bits, then the counts, both
// little-endian.
func encodeChunk(b []byte, c *passChunk) {
	g, k := b[:8*passChunkLen], b[8*passChunkLen:chunkBytes]
	for i, v := range &c.gapMs {
		binary.LittleEndian.PutUint64(g[8*i:], math.Float64bits(v))
	}
	for i, v := range &c.continued {
		binary.LittleEndian.PutUint32(k[4*i:], uint32(v))
	}
}

// decodeChunk reads c from b, as encodeChunk wrote it.
func decodeChunk(c *passChunk, b []byte) {
	g, k := b[:8*passChunkLen], b[8*passChunkLen:chunkBytes]
	for i := range &c.gapMs {
		c.gapMs[i] = math.Float64frombits(binary.LittleEndian.Uint64(g[8*i:]))
	}
	for i := range &c.continued {
		c.continued[i] = int32(binary.LittleEndian.Uint32(k[4*i:]))
	}
}
