package grid

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/servesweep/servesweep/sim/optimization"
	"github.com/zeebo/xxh3"
)

// MaxShards is the largest shard count: part files are named with five-digit shard numbers
// (results.PartName), which keeps them fixed-width and sorted.
const MaxShards = 99_999

// Shard selects a subset of a sweep's points for one process of a cluster job: shard Index of
// Count (0 <= Index < Count). The zero value is not valid; Shard{0, 1} is the whole sweep.
type Shard struct {
	// Index is the 0-based shard number and Count the number of shards.
	Index, Count int
}

// String renders the shard as --shard takes it, e.g. "2/4".
func (s Shard) String() string { return strconv.Itoa(s.Index) + "/" + strconv.Itoa(s.Count) }

// Check returns an error unless 1 <= Count <= MaxShards and 0 <= Index < Count.
func (s Shard) Check() error {
	switch {
	case s.Count <= 0:
		return fmt.Errorf("the shard count must be >= 1, got %d", s.Count)
	case s.Count > MaxShards:
		return fmt.Errorf("the shard count must be <= %d, got %d", MaxShards, s.Count)
	case s.Index < 0:
		return fmt.Errorf("the shard index must be >= 0, got %d", s.Index)
	case s.Index >= s.Count:
		return fmt.Errorf("the shard index must be < the shard count %d (shards are numbered 0 to %d), got %d",
			s.Count, s.Count-1, s.Index)
	}
	return nil
}

// ParseShard parses "I/N" (0-based shard I of N, e.g. "0/4" to "3/4") and checks it (see
// Shard.Check). Errors say what is wrong; the caller names the flag.
func ParseShard(text string) (Shard, error) {
	is, ns, ok := strings.Cut(strings.TrimSpace(text), "/")
	if !ok {
		return Shard{}, fmt.Errorf("want I/N, the 0-based shard index and the shard count (e.g. 0/4), got %q", text)
	}
	i, err := strconv.Atoi(strings.TrimSpace(is))
	if err != nil {
		return Shard{}, fmt.Errorf("want I/N with I a whole number (e.g. 0/4), got %q", text)
	}
	n, err := strconv.Atoi(strings.TrimSpace(ns))
	if err != nil {
		return Shard{}, fmt.Errorf("want I/N with N a whole number (e.g. 0/4), got %q", text)
	}
	s := Shard{Index: i, Count: n}
	return s, s.Check()
}

// ShardOf returns the shard (0 to count-1) that owns the point with the given stable ID: the
// first 8 bytes of SHA-256("servesweep shard v1\n" + id), big-endian, modulo count. It depends
// only on the ID, so a point lands in the same shard whatever the order of the spec's domains
// and values; count must be >= 1.
func ShardOf(id string, count int) int {
	if count <= 1 {
		return 0
	}
	var buf [64]byte
	sum := sha256.Sum256(append(append(buf[:0], shardPrefix...), id...))
	return int(binary.BigEndian.Uint64(sum[:8]) % uint64(count))
}

// shardPrefix versions ShardOf's hashed text.
const shardPrefix = "servesweep shard v1\n"

// ShardPoints returns the selected points that belong to shard s, in point order.
func (x *Expansion) ShardPoints(s Shard) []Point {
	var out []Point
	for i, n := range x.shards(s.Count) {
		if int(n) == s.Index {
			out = append(out, x.Points[i])
		}
	}
	return out
}

// ShardSizes returns the number of selected points in each of count shards.
func (x *Expansion) ShardSizes(count int) []int {
	sizes := make([]int, max(count, 1))
	for _, n := range x.shards(count) {
		sizes[n]++
	}
	return sizes
}

// shards returns the shard of each selected point among count shards (ShardOf), computed once per
// count: a shard's run asks for its points and for every shard's size.
func (x *Expansion) shards(count int) []int32 {
	x.shardMu.Lock()
	defer x.shardMu.Unlock()
	if len(x.Points) == 0 {
		return nil
	}
	if x.shardCount == count && len(x.shardOf) == len(x.Points) && x.shardFirst == &x.Points[0] {
		return x.shardOf
	}
	out := make([]int32, len(x.Points))
	for i := range x.Points {
		out[i] = int32(ShardOf(x.Points[i].ID, count))
	}
	x.shardCount, x.shardOf, x.shardFirst = count, out, &x.Points[0]
	return out
}

// SpecHash identifies what a sweep computes, so that the parts of a sharded sweep can be checked
// to belong together: 16 hex digits of the SHA-256 of a versioned canonical text holding the
// selected point IDs in point order (each ID is a hash of the point's concrete config) and the
// analysis settings (target, objectives, GPU bounds, strict SLA, min goodput), and what else
// changes the rows: the performance database's identity (Spec.Systems, opdb.DB.Identity), the
// capacity search and the prices of the points' hardware, each absent from the text when unset. The spec's file
// name, the worker count and the per-point timeout are left out: the same spec mounted at
// another path hashes the same.
func (x *Expansion) SpecHash() string { return x.SpecHashWith(x.Spec.Optimization.Settings()) }

// SpecHashWith is SpecHash with the analysis settings s in place of the spec's: equal to a sweep
// directory's recorded hash when that sweep ran the same points (and search, prices and
// database) and differs only in its settings, which `servesweep report` applies to the rows
// without simulating them again.
func (x *Expansion) SpecHashWith(s optimization.Settings) string {
	h := sha256.New()
	h.Write([]byte("servesweep spec v1\n"))
	x.writePointLines(h)
	for _, l := range x.hashedLines(s) {
		h.Write([]byte(l + "\n"))
	}
	sum := h.Sum(nil)
	return hex.EncodeToString(sum[:8])
}

// SpecIdentity is what SpecHash covers, in lines a person can compare: "points N ORDERED SET"
// (the selected points' count, 16 hex digits of the SHA-256 of their lines in point order, and
// 16 of the sum modulo 2⁶⁴ of their IDs' XXH3-64 digests, which does not depend on the order),
// then the lines of the analysis settings, the performance database, the build, each trace
// file's digest, the capacity search and the prices, as SpecHash hashes them, with a newline or
// carriage return inside a line (a trace's path) written as \n or \r (results.SpecChanges says
// what differs between two). A sweep records it beside its journal (results.ClaimJournalSpec),
// so that a resume under another hash can say what changed.
func (x *Expansion) SpecIdentity() []string {
	h := sha256.New()
	x.writePointLines(h)
	sum := h.Sum(nil)
	var set uint64
	for _, p := range x.Points {
		set += xxh3.HashString(p.ID)
	}
	lines := []string{fmt.Sprintf("points %d %s %016x", len(x.Points), hex.EncodeToString(sum[:8]), set)}
	escape := strings.NewReplacer("\n", `\n`, "\r", `\r`)
	for _, l := range x.hashedLines(x.Spec.Optimization.Settings()) {
		lines = append(lines, escape.Replace(l))
	}
	return lines
}

// writePointLines writes the selected points' lines, "point ID" each, to w, as they are built (a
// million points' text is 19 MB).
func (x *Expansion) writePointLines(w io.Writer) {
	var line []byte
	for _, p := range x.Points {
		line = append(append(append(line[:0], "point "...), p.ID...), '\n')
		w.Write(line)
	}
}

// hashedLines are the lines SpecHashWith hashes after the points' lines, each followed by a
// newline there: the analysis settings s and what else changes the rows.
func (x *Expansion) hashedLines(s optimization.Settings) []string {
	lines := settingsLines(s)
	// What changes the rows beyond the point configs: the capacity search and the prices (absent
	// from the text without them, so other specs keep their hashes).
	// The performance database default timing composes passes from (absent without one).
	if db := x.Spec.Systems; db != nil {
		lines = append(lines, "systems_dir "+db.Identity())
	}
	// The build that simulates (absent when unknown): another build may time passes otherwise.
	if x.Spec.Build != "" {
		lines = append(lines, "build "+x.Spec.Build)
	}
	// The trace files' contents (DigestTraces; absent when not taken): point IDs name a trace's
	// path, and a trace edited between two runs must not resume into the other's rows.
	for _, t := range x.Spec.traceDigests {
		lines = append(lines, "trace "+t.path+" "+t.digest)
	}
	if cs := x.Spec.Optimization.CapacitySearch; cs != nil {
		lines = append(lines, fmt.Sprintf("capacity_search %s %s %s %s %d", ftoa(cs.Attainment), ftoa(cs.Min), ftoa(cs.Max),
			ftoa(cs.RelativeTolerance), cs.MaxProbes))
	}
	if c := x.Spec.Optimization.Cost; c != nil {
		// The prices of the points' hardware only: one for hardware no point runs on (a price
		// list shared between specs) changes no row, and must not block a resume.
		ids := make([]string, 0, len(c.GPUHourUSD))
		for id := range c.GPUHourUSD {
			if x.pricedHardware == nil || x.pricedHardware[id] {
				ids = append(ids, id)
			}
		}
		slices.Sort(ids)
		for _, id := range ids {
			lines = append(lines, "gpu_hour_usd "+id+" "+ftoa(c.GPUHourUSD[id]))
		}
	}
	return lines
}

// settingsLines are the canonical lines of analysis settings s.
func settingsLines(s optimization.Settings) []string {
	lines := []string{"target " + string(s.Target)}
	for _, o := range s.Objectives {
		lines = append(lines, fmt.Sprintf("objective %s", o))
	}
	return append(lines, fmt.Sprintf("gpus %d %d", s.MinGPUs, s.MaxGPUs), fmt.Sprintf("strict_sla %t", s.StrictSLA),
		"min_goodput_rps "+strconv.FormatFloat(s.MinGoodputRPS, 'g', -1, 64))
}

func ftoa(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

// traceDigest is a trace file's path as the spec gives it and the XXH3-128 digest of its bytes.
type traceDigest struct{ path, digest string }

// DigestTraces reads every trace file the spec names (TracePaths) and keeps the XXH3-128 digest
// of its bytes for SpecHash, which then covers the traces' contents: a trace edited between two
// runs of the spec (in place, under the same path) gives another hash, so that a sweep resumed
// after the edit is refused instead of mixing rows of the two contents (point IDs name a trace's
// path only). The error is the first file's that cannot be read, naming it.
func (s *Spec) DigestTraces() error {
	s.traceDigests = s.traceDigests[:0]
	for _, p := range s.TracePaths() {
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		h := xxh3.New()
		_, err = io.Copy(h, f)
		f.Close()
		if err != nil {
			return fmt.Errorf("reading trace %s: %w", p, err)
		}
		sum := h.Sum128().Bytes()
		s.traceDigests = append(s.traceDigests, traceDigest{p, hex.EncodeToString(sum[:])})
	}
	return nil
}
