package results

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"github.com/parquet-go/parquet-go"
	"github.com/servesweep/servesweep/sim/config"
)

// Layout of a sharded sweep inside its output directory (shared by every shard):
//
//	results/part-IIIII-of-NNNNN.parquet   shard I's rows (the dataset: read results/*.parquet)
//	journals/part-IIIII-of-NNNNN.jsonl    shard I's journal (its resume state)
//
// Temporary files are hidden (a leading dot), so Spark and a results/*.parquet glob never see
// a part that is still being written.
const (
	// PartsDir holds the part files; it holds nothing else, so that Spark can read it as one
	// dataset.
	PartsDir = "results"
	// JournalsDir holds one journal per shard, so that shards sharing an output directory never
	// write the same file.
	JournalsDir = "journals"
)

// Key-value metadata of a part file (Parquet footer). PartMetaKey holds the whole PartMeta as
// JSON; the other keys repeat its main fields for readers such as DuckDB's parquet_kv_metadata.
const (
	PartMetaKey   = "servesweep.part"
	SpecHashKey   = "servesweep.spec_hash"
	ShardIndexKey = "servesweep.shard_index"
	ShardCountKey = "servesweep.shard_count"
	// ChecksumKey holds partChecksum: SHA-256 over the PartMetaKey JSON and the rows, so that a
	// damaged part (a flipped bit in the footer's column names or in a page header, which the
	// page checksums do not cover) is refused instead of merged with silently wrong columns.
	// Parts without it (older servesweep) are not checked.
	ChecksumKey = "servesweep.checksum"
)

// partVersion is the schema version of PartMeta.
const partVersion = "1"

// PartName is the file name of shard index of count inside PartsDir, e.g.
// part-00002-of-00004.parquet.
func PartName(index, count int) string { return fmt.Sprintf("part-%05d-of-%05d.parquet", index, count) }

// PartJournalName is the file name of the journal of shard index of count inside JournalsDir,
// e.g. part-00002-of-00004.jsonl.
func PartJournalName(index, count int) string {
	return fmt.Sprintf("part-%05d-of-%05d.jsonl", index, count)
}

// PartMeta describes one part of a sharded sweep; it is stored in the part's Parquet footer.
type PartMeta struct {
	// SchemaVersion is the version of this format (set by WritePart).
	SchemaVersion string `json:"schema_version"`
	// SpecHash identifies the expanded spec (grid.Expansion.SpecHash); parts of different specs
	// are never merged.
	SpecHash string `json:"spec_hash"`
	// ShardIndex (0-based) and ShardCount say which shard wrote the part.
	ShardIndex int `json:"shard_index"`
	ShardCount int `json:"shard_count"`
	// ShardSizes holds the number of selected points of every shard (ShardCount entries), so a
	// merge knows how many points a shard that wrote no part owes.
	ShardSizes []int `json:"shard_sizes"`
	// MissingPointIDs are the shard's points that have no row (the shard was interrupted).
	MissingPointIDs []string `json:"missing_point_ids,omitempty"`
	// Manifest describes the sweep (spec, algorithm, settings, grid counts) and this shard's run
	// (its counts; SelectedPoints is the whole sweep's).
	Manifest Manifest `json:"manifest"`
}

// Part is one part file read back.
type Part struct {
	// Path is the file's path.
	Path string
	// Meta is its footer metadata and Rows its rows.
	Meta PartMeta
	Rows []Row
}

// PartError is a Parquet file that cannot be used: not Parquet at all, or (for a part) without
// servesweep part metadata or inconsistent with it.
type PartError struct {
	// Path names the file and Msg says what is wrong with it.
	Path, Msg string
}

// Error names the file and says what is wrong with it.
func (e *PartError) Error() string { return e.Path + ": " + e.Msg }

// WritePart writes a shard's rows (in point order) to path with meta in the Parquet footer,
// atomically (temporary file, fsync, rename), like WriteParquet. A shard with no point still
// gets a part (with no row), so a merge sees that it ran.
func WritePart(path string, rows []Row, meta *PartMeta) error {
	meta.SchemaVersion = partVersion
	data, err := json.Marshal(meta)
	if err != nil {
		return err
	}
	sum, err := partChecksum(data, rows)
	if err != nil {
		return err
	}
	return WriteAtomic(path, func(out io.Writer) error {
		w := parquet.NewGenericWriter[Row](out, parquet.Compression(&parquet.Snappy),
			parquet.KeyValueMetadata(PartMetaKey, string(data)),
			parquet.KeyValueMetadata(ChecksumKey, sum),
			parquet.KeyValueMetadata(SpecHashKey, meta.SpecHash),
			parquet.KeyValueMetadata(ShardIndexKey, strconv.Itoa(meta.ShardIndex)),
			parquet.KeyValueMetadata(ShardCountKey, strconv.Itoa(meta.ShardCount)))
		if len(rows) > 0 {
			if _, err := w.Write(rows); err != nil {
				return err
			}
		}
		return w.Close()
	})
}

// ReadPart reads a part file and checks its metadata: a Parquet file without servesweep part
// metadata, or whose metadata contradicts its rows, is a *PartError naming the file.
func ReadPart(path string) (*Part, error) {
	rows, pf, err := readRows(path)
	if err != nil {
		return nil, err
	}
	return partOf(path, rows, pf)
}

// partOf checks the rows read from the part file at path against its footer (checksum and
// metadata) and returns the part holding them.
func partOf(path string, rows []Row, pf *parquet.File) (*Part, error) {
	raw, ok := pf.Lookup(PartMetaKey)
	if !ok {
		return nil, &PartError{Path: path, Msg: "not a part of a sharded sweep (no " + PartMetaKey +
			" metadata); only the parts a sharded sweep writes can be merged"}
	}
	if want, ok := pf.Lookup(ChecksumKey); ok {
		got, err := partChecksum([]byte(raw), rows)
		if err != nil {
			return nil, err
		}
		if got != want {
			return nil, &PartError{Path: path, Msg: "its content does not match the checksum it was written with: a damaged " +
				"copy, or a part written by another servesweep version; rerun its shard (it resumes from its journal " +
				"and rewrites the part)"}
		}
	}
	p := &Part{Path: path, Rows: rows}
	if err := json.Unmarshal([]byte(raw), &p.Meta); err != nil {
		return nil, &PartError{Path: path, Msg: "unreadable " + PartMetaKey + " metadata: " + err.Error()}
	}
	if msg := p.check(); msg != "" {
		return nil, &PartError{Path: path, Msg: msg + "; the file was not written by this servesweep or was altered, rerun its shard"}
	}
	return p, nil
}

// partChecksum is the hex SHA-256 of a part's metadata JSON followed by, for each row in order,
// its non-null columns as "name=value" lines (the results.parquet column names; floats in their
// shortest exact form) and a blank line. Null columns are left out, so a column added in a later
// servesweep leaves the checksums of parts that do not use it unchanged. Probes are not in a
// part.
func partChecksum(meta []byte, rows []Row) (string, error) {
	h := sha256.New()
	h.Write(meta)
	fields := rowSetterList()
	var line []byte
	for i := range rows {
		for _, c := range fields {
			field := unsafe.Add(unsafe.Pointer(&rows[i]), c.offset)
			if c.pointer {
				field = *(*unsafe.Pointer)(field)
				if field == nil {
					continue
				}
			}
			line = append(line[:0], c.name...)
			line = append(line, '=')
			switch c.kind {
			case reflect.Float64:
				line = strconv.AppendFloat(line, *(*float64)(field), 'g', -1, 64)
			case reflect.Int64:
				line = strconv.AppendInt(line, *(*int64)(field), 10)
			case reflect.Bool:
				line = strconv.AppendBool(line, *(*bool)(field))
			case reflect.String:
				line = strconv.AppendQuote(line, *(*string)(field))
			default:
				return "", fmt.Errorf("checksumming a part: column %s has kind %s", c.name, c.kind)
			}
			h.Write(append(line, '\n'))
		}
		h.Write([]byte{'\n'})
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// ReadPartMeta reads only the footer metadata of a part file (not its rows); see ReadPart.
func ReadPartMeta(path string) (*PartMeta, error) {
	if k := config.NotRegular(path); k != "" { // opening a named pipe would block
		return nil, &PartError{Path: path, Msg: "it is " + k + ", not a regular file"}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	pf, err := parquet.OpenFile(f, st.Size(), parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		return nil, &PartError{Path: path, Msg: "not a readable Parquet file: " + err.Error()}
	}
	raw, ok := pf.Lookup(PartMetaKey)
	if !ok {
		return nil, &PartError{Path: path, Msg: "not a part of a sharded sweep (no " + PartMetaKey + " metadata)"}
	}
	var m PartMeta
	if err := json.Unmarshal([]byte(raw), &m); err != nil {
		return nil, &PartError{Path: path, Msg: "unreadable " + PartMetaKey + " metadata: " + err.Error()}
	}
	return &m, nil
}

// check returns what is inconsistent in a part, or "".
func (p *Part) check() string {
	m := &p.Meta
	switch {
	case m.SchemaVersion != partVersion:
		return fmt.Sprintf("part schema version %q, this servesweep reads %q", m.SchemaVersion, partVersion)
	case m.SpecHash == "":
		return "no spec hash"
	case m.ShardCount < 1 || m.ShardIndex < 0 || m.ShardIndex >= m.ShardCount:
		return fmt.Sprintf("shard %d of %d is out of range", m.ShardIndex, m.ShardCount)
	case len(m.ShardSizes) != m.ShardCount:
		return fmt.Sprintf("%d shard sizes for %d shards", len(m.ShardSizes), m.ShardCount)
	}
	total := 0
	for _, n := range m.ShardSizes {
		total += n
	}
	if total != m.Manifest.Counts.SelectedPoints {
		return fmt.Sprintf("shard sizes add up to %d points, the sweep selected %d", total, m.Manifest.Counts.SelectedPoints)
	}
	if want := m.ShardSizes[m.ShardIndex]; len(p.Rows)+len(m.MissingPointIDs) != want {
		return fmt.Sprintf("%d rows and %d missing points, but shard %d has %d points",
			len(p.Rows), len(m.MissingPointIDs), m.ShardIndex, want)
	}
	for i := range p.Rows {
		if p.Rows[i].PointID == "" {
			return fmt.Sprintf("row %d has no point_id", i)
		}
	}
	return ""
}

var partName = regexp.MustCompile(`^part-.*\.parquet$`)

// FindParts returns the part files under dir, at any depth, sorted by path: the files named
// part-*.parquet, skipping hidden files and directories (names starting with a dot, such as
// the temporary files of a write in progress). An unreadable dir is an error.
func FindParts(dir string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if path != dir && strings.HasPrefix(name, ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.IsDir() && partName.MatchString(name) {
			out = append(out, path)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(out)
	return out, nil
}

// SpecMismatchError refuses to merge parts of different sweep specs.
type SpecMismatchError struct {
	// PathA and HashA are the first part (in path order) and its spec hash; PathB and HashB the
	// first part with another hash. CountA and CountB count the parts with each hash.
	PathA, HashA   string
	PathB, HashB   string
	CountA, CountB int
}

// Error names a part of each spec with its spec hash, and says how to proceed.
func (e *SpecMismatchError) Error() string {
	return fmt.Sprintf("the parts belong to different sweep specs: %s has spec hash %s (%s with it) but %s has "+
		"spec hash %s (%s); merge the parts of one spec at a time (move the other spec's parts out of the directory)", e.PathA, e.HashA, Plural(e.CountA, "part"), e.PathB, e.HashB,
		Plural(e.CountB, "part"))
}

// Plural renders n and noun as a count: "1 part", "3 parts" (noun + "s" for any n but 1).
func Plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// MissingShard is a shard that wrote no part.
type MissingShard struct {
	// Index and Count name the shard (Index of Count, 0-based); Points is how many selected
	// points it owns.
	Index  int `json:"index"`
	Count  int `json:"count"`
	Points int `json:"points"`
}

// PartialShard is a shard whose part lacks some of its points (it was interrupted).
type PartialShard struct {
	// Index and Count name the shard; MissingPointIDs are its points that no part has a row for.
	Index           int      `json:"index"`
	Count           int      `json:"count"`
	MissingPointIDs []string `json:"missing_point_ids"`
}

// MergeInfo describes how a merged result was assembled; it is part of sweep.json and
// pareto.json of a merge.
type MergeInfo struct {
	// SpecHash is the spec hash every part carries.
	SpecHash string `json:"spec_hash"`
	// Parts are the part files merged, in path order; ShardCounts the distinct shard counts
	// among them (one unless the sweep was run with several counts).
	Parts       []string `json:"parts"`
	ShardCounts []int    `json:"shard_counts"`
	// DuplicateRows counts the rows dropped because another part had the same point (reruns);
	// ConflictingDuplicates counts those whose simulated columns differed from the kept row
	// (parts written by different servesweep versions).
	DuplicateRows         int `json:"duplicate_rows"`
	ConflictingDuplicates int `json:"conflicting_duplicates"`
	// Complete is set when every selected point has a row; MissingPoints counts the others.
	Complete      bool `json:"complete"`
	MissingPoints int  `json:"missing_points"`
	// MissingShards are the shards without a part and PartialShards those with unfinished
	// points (both empty when Complete).
	MissingShards []MissingShard `json:"missing_shards,omitempty"`
	PartialShards []PartialShard `json:"partial_shards,omitempty"`
	// MissingProbePoints are the points with a row whose capacity-search probes no shard's probe
	// table holds (results/../probes/probes-*.parquet lost); they make the merge incomplete.
	MissingProbePoints []string `json:"missing_probe_points,omitempty"`
}

// maxMissingLines bounds the missing-shard lines of report.md.
const maxMissingLines = 20

// MissingLines describes what a merge lacks, one line per shard without a part ("shard 2 of 4
// wrote no part (23 points)") and per unfinished shard ("shard 1 of 4 is unfinished: 3 points
// missing (ids)"), at most limit lines (limit <= 0: all), the last one summing up the rest.
func (mi *MergeInfo) MissingLines(limit int) []string {
	var out []string
	for _, s := range mi.MissingShards {
		out = append(out, fmt.Sprintf("shard %d of %d wrote no part (%s)", s.Index, s.Count, Plural(s.Points, "point")))
	}
	for _, s := range mi.PartialShards {
		out = append(out, fmt.Sprintf("shard %d of %d is unfinished: %s missing (%s)", s.Index, s.Count,
			Plural(len(s.MissingPointIDs), "point"), abbreviate(s.MissingPointIDs, 8)))
	}
	if n := len(mi.MissingProbePoints); n > 0 {
		out = append(out, fmt.Sprintf("the probes of %s are in no %s/probes-*.parquet (%s)", Plural(n, "point"), ProbesDir,
			abbreviate(mi.MissingProbePoints, 8)))
	}
	if limit > 0 && len(out) > limit {
		rest := len(out) - (limit - 1)
		out = append(out[:limit-1], fmt.Sprintf("... and %d more shards without a part or unfinished (the full list is in pareto.json)", rest))
	}
	return out
}

// statusRank orders the rows of one point for deduplication: ok (or degraded or infeasible: the
// same finished simulation) first, then failed, then timed_out.
func statusRank(s string) int {
	switch s {
	case StatusOK, StatusDegraded, StatusInfeasible:
		return 0
	case StatusFailed:
		return 1
	}
	return 2
}

// MergeParts merges the parts of one sharded sweep (any number of shards, reruns and shard
// counts) into the rows and manifest a single-process run of the sweep would give: rows in
// point order, one per point. Of several rows of one point the kept one is the first by status
// (ok, then failed, then timed_out), then by part path, then by position in the part. The
// parts are left as they are (the merged rows are copies); MergePartFiles merges files without
// holding every row twice.
//
// Parts of different spec hashes are refused with a *SpecMismatchError; no part is an error. A
// merge with missing points is not an error: the returned manifest's Merge says what is missing
// (shards without a part, by index, and unfinished points of the others).
func MergeParts(parts []*Part) ([]Row, *Manifest, error) {
	plan, err := planMerge(parts)
	if err != nil {
		return nil, nil, err
	}
	rows := make([]Row, 0, len(plan.order))
	for _, k := range plan.order {
		rows = append(rows, plan.parts[k.part].Rows[k.row])
	}
	return rows, plan.manifest(rows), nil
}

// MergePartFiles reads the part files at paths and merges them as MergeParts does, holding each
// row once: the parts are read into one table and the merge orders that table in place, so a
// merge's rows take their own size in memory, not twice it. A file that is not a readable part
// is a *PartError naming it.
func MergePartFiles(paths []string) ([]Row, *Manifest, error) {
	if len(paths) == 0 {
		return nil, nil, errors.New("no part to merge")
	}
	// The table is sized for the sweep's selected points (the first part's manifest says how
	// many), the rows of a complete merge without reruns; it grows when parts hold more.
	var table []Row
	parts := make([]*Part, len(paths))
	offset := make(map[*Part]int, len(paths))
	for i, path := range paths {
		at := len(table)
		pf, err := readRowsInto(path, func(n int) ([]Row, error) {
			if table == nil {
				table = make([]Row, 0, max(n, selectedPoints(path)))
			}
			table = slices.Grow(table, n)[:at+n]
			return table[at : at+n : at+n], nil
		})
		if err != nil {
			return nil, nil, err
		}
		if parts[i], err = partOf(path, table[at:len(table):len(table)], pf); err != nil {
			return nil, nil, err
		}
		offset[parts[i]] = at
	}
	for _, p := range parts { // a grown table moved the rows read before it grew
		p.Rows = table[offset[p] : offset[p]+len(p.Rows) : offset[p]+len(p.Rows)]
	}
	total := len(table)
	plan, err := planMerge(parts)
	if err != nil {
		return nil, nil, err
	}
	// src[i] is the table position of the row that goes to position i: the kept rows in point
	// order, then the dropped duplicates in any order. Applying it cycle by cycle moves each row
	// once, with one row of scratch space.
	src := make([]int32, 0, total)
	taken := make([]bool, total)
	for _, k := range plan.order {
		j := offset[plan.parts[k.part]] + k.row
		src = append(src, int32(j))
		taken[j] = true
	}
	for j, t := range taken {
		if !t {
			src = append(src, int32(j))
		}
	}
	done := make([]bool, total)
	for i := range table {
		if done[i] {
			continue
		}
		tmp := table[i]
		j := i
		for {
			done[j] = true
			k := int(src[j])
			if k == i {
				table[j] = tmp
				break
			}
			table[j] = table[k]
			j = k
		}
	}
	kept := len(plan.order)
	clear(table[kept:]) // the dropped duplicates' values are released
	rows := table[:kept:kept]
	return rows, plan.manifest(rows), nil
}

// mergePlan is what a merge decides before it moves any row: the parts sorted by path, the kept
// row of each point in point order, and what the merge found.
type mergePlan struct {
	parts []*Part
	order []mergePick
	kept  map[string]*mergePick
	info  *MergeInfo
}

// mergePick refers to a kept row by its part (an index into mergePlan.parts), its position in
// that part, and its status rank.
type mergePick struct {
	part, row, rank int
}

// planMerge sorts the parts by path, refuses parts of different spec hashes, and picks each
// point's kept row (see MergeParts).
func planMerge(parts []*Part) (*mergePlan, error) {
	if len(parts) == 0 {
		return nil, errors.New("no part to merge")
	}
	parts = slices.Clone(parts)
	slices.SortStableFunc(parts, func(a, b *Part) int { return strings.Compare(a.Path, b.Path) })
	first := parts[0]
	hashCount := map[string]int{}
	for _, p := range parts {
		hashCount[p.Meta.SpecHash]++
	}
	for _, p := range parts {
		// A part written by shard I of N is named PartName(I, N): a copy under another shard's
		// name (or one out of range) would pass for a shard it is not.
		var index, count int
		if n, _ := fmt.Sscanf(filepath.Base(p.Path), "part-%05d-of-%05d.parquet", &index, &count); n == 2 &&
			(index != p.Meta.ShardIndex || count != p.Meta.ShardCount) {
			return nil, &PartError{Path: p.Path, Msg: fmt.Sprintf("named shard %d of %d, but it holds shard %d of %d (its metadata): "+
				"a part keeps the name its shard wrote; rename it %s or remove it", index, count, p.Meta.ShardIndex, p.Meta.ShardCount,
				PartName(p.Meta.ShardIndex, p.Meta.ShardCount))}
		}
		if p.Meta.SpecHash != first.Meta.SpecHash {
			return nil, &SpecMismatchError{PathA: first.Path, HashA: first.Meta.SpecHash, CountA: hashCount[first.Meta.SpecHash],
				PathB: p.Path, HashB: p.Meta.SpecHash, CountB: hashCount[p.Meta.SpecHash]}
		}
	}
	info := &MergeInfo{SpecHash: first.Meta.SpecHash}
	kept := map[string]*mergePick{}
	var order []*mergePick
	for pi, p := range parts {
		info.Parts = append(info.Parts, p.Path)
		if !slices.Contains(info.ShardCounts, p.Meta.ShardCount) {
			info.ShardCounts = append(info.ShardCounts, p.Meta.ShardCount)
		}
		for ri := range p.Rows {
			r := &p.Rows[ri]
			k := kept[r.PointID]
			if k == nil {
				k = &mergePick{part: pi, row: ri, rank: statusRank(r.Status)}
				kept[r.PointID] = k
				order = append(order, k)
				continue
			}
			info.DuplicateRows++
			if rank := statusRank(r.Status); rank < k.rank {
				k.part, k.row, k.rank = pi, ri, rank
			} else if rank == k.rank && !reflect.DeepEqual(r.WithoutHostTime(), parts[k.part].Rows[k.row].WithoutHostTime()) {
				info.ConflictingDuplicates++
			}
		}
	}
	slices.Sort(info.ShardCounts)
	at := func(k *mergePick) *Row { return &parts[k.part].Rows[k.row] }
	slices.SortStableFunc(order, func(x, y *mergePick) int {
		a, b := at(x), at(y)
		if a.PointIndex != b.PointIndex {
			return int(a.PointIndex - b.PointIndex)
		}
		return strings.Compare(a.PointID, b.PointID)
	})
	plan := &mergePlan{parts: parts, kept: kept, info: info, order: make([]mergePick, len(order))}
	for i, k := range order {
		plan.order[i] = *k
	}
	m := first.Meta.Manifest
	info.MissingPoints = max(0, m.Counts.SelectedPoints-len(order))
	info.Complete = info.MissingPoints == 0
	if !info.Complete {
		info.MissingShards, info.PartialShards = missingShards(parts, func(id string) bool { return kept[id] != nil })
	}
	return plan, nil
}

// manifest is the merged sweep's manifest: the first part's, with the counts of the merged rows
// and what the merge found.
func (p *mergePlan) manifest(rows []Row) *Manifest {
	m := p.parts[0].Meta.Manifest
	c := Counts{GridPoints: m.Counts.GridPoints, ValidPoints: m.Counts.ValidPoints, SelectedPoints: m.Counts.SelectedPoints,
		Filtered: m.Counts.Filtered, Simulated: len(rows)}
	for i := range rows {
		c.addStatus(rows[i].Status)
	}
	return &Manifest{Spec: m.Spec, Algorithm: m.Algorithm, Settings: m.Settings, Counts: c, Merge: p.info,
		CapacitySearch: m.CapacitySearch, GPUHourUSD: m.GPUHourUSD, FilteredExamples: m.FilteredExamples, EmptyValues: m.EmptyValues,
		ExamplePrices: m.ExamplePrices}
}

// missingShards lists, per shard count among the parts, the shards without a part, and the
// shards whose parts leave points unfinished that no other part has.
func missingShards(parts []*Part, has func(id string) bool) ([]MissingShard, []PartialShard) {
	type key struct{ index, count int }
	present := map[key]bool{}
	sizes := map[int][]int{}
	unfinished := map[key][]string{}
	for _, p := range parts {
		k := key{p.Meta.ShardIndex, p.Meta.ShardCount}
		present[k] = true
		sizes[p.Meta.ShardCount] = p.Meta.ShardSizes
		for _, id := range p.Meta.MissingPointIDs {
			if !has(id) && !slices.Contains(unfinished[k], id) {
				unfinished[k] = append(unfinished[k], id)
			}
		}
	}
	counts := make([]int, 0, len(sizes))
	for n := range sizes {
		counts = append(counts, n)
	}
	slices.Sort(counts)
	var missing []MissingShard
	var partial []PartialShard
	for _, n := range counts {
		for i := range n {
			k := key{i, n}
			if !present[k] {
				missing = append(missing, MissingShard{Index: i, Count: n, Points: sizes[n][i]})
			} else if ids := unfinished[k]; len(ids) > 0 {
				slices.Sort(ids)
				partial = append(partial, PartialShard{Index: i, Count: n, MissingPointIDs: ids})
			}
		}
	}
	return missing, partial
}

// readRows reads every row of the Parquet file at path and returns the open file's metadata
// view with them. A file that is not Parquet is a *PartError.
func readRows(path string) ([]Row, *parquet.File, error) {
	var rows []Row
	pf, err := readRowsInto(path, func(n int) ([]Row, error) {
		rows = make([]Row, n)
		return rows, nil
	})
	return rows, pf, err
}

// selectedPoints is the number of points the sweep of the part file at path selected, as its
// metadata says, or 0 when the file has none (ReadPart says what is wrong with it).
func selectedPoints(path string) int {
	m, err := ReadPartMeta(path)
	if err != nil {
		return 0
	}
	return m.Manifest.Counts.SelectedPoints
}

// readRowsInto opens the Parquet file at path, asks into for a table of as many rows as its
// footer announces, and reads every row into it (nothing when into returns nil); it returns the
// open file's metadata view. A file that is not Parquet, or whose rows cannot be decoded, is a
// *PartError naming it; into's error is returned as is.
func readRowsInto(path string, into func(n int) ([]Row, error)) (pf *parquet.File, err error) {
	// A damaged file (a flipped bit, a truncated page) can make the Parquet decoder panic; that
	// is bad input naming the file, like any other decoding error.
	defer func() {
		if r := recover(); r != nil {
			pf, err = nil, &PartError{Path: path, Msg: fmt.Sprintf("corrupt Parquet data: %v", r)}
		}
	}()
	if k := config.NotRegular(path); k != "" { // opening a named pipe would block
		return nil, &PartError{Path: path, Msg: "it is " + k + ", not a regular file"}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	pf, err = parquet.OpenFile(f, st.Size(), parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		return nil, &PartError{Path: path, Msg: "not a readable Parquet file: " + err.Error()}
	}
	if msg := MissingResultsColumns(ColumnNames(pf.Schema())); msg != "" {
		return nil, &PartError{Path: path, Msg: msg}
	}
	rows, err := into(int(pf.NumRows()))
	if err != nil || len(rows) == 0 {
		return pf, err
	}
	if err := decodeRows(pf, rows); err != nil {
		return nil, &PartError{Path: path, Msg: "corrupt Parquet data: " + err.Error()}
	}
	return pf, nil
}

// resultsKeyColumns are the columns every servesweep results table (results.parquet, a shard's
// part) has, which other Parquet files (pareto_ties.parquet, probes.parquet, another tool's) lack.
var resultsKeyColumns = []string{"point_id", "point_index", "status", "config_yaml"}

// ColumnNames are the leaf column paths of schema s, dotted, in schema order.
func ColumnNames(s *parquet.Schema) []string {
	var names []string
	for _, c := range s.Columns() {
		names = append(names, strings.Join(c, "."))
	}
	return names
}

// MissingResultsColumns says why a Parquet table of the columns names is not a servesweep results
// table, "" when it is one: it lacks a column every results table has (resultsKeyColumns). Read
// as one, another table's rows would all decode as failed points of no configuration.
func MissingResultsColumns(names []string) string {
	var missing []string
	for _, c := range resultsKeyColumns {
		if !slices.Contains(names, c) {
			missing = append(missing, c)
		}
	}
	if len(missing) == 0 {
		return ""
	}
	shown := names
	if len(shown) > 8 {
		shown = append(slices.Clone(shown[:8]), fmt.Sprintf("and %d more", len(names)-8))
	}
	what := "column"
	if len(missing) > 1 {
		what = "columns"
	}
	return fmt.Sprintf("not a servesweep results table: it has no %s %s (its columns: %s)",
		strings.Join(missing, ", "), what, strings.Join(shown, ", "))
}
