package results

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/servesweep/servesweep/sim/optimization"
)

// partRow is a minimal row of point id at index with a status.
func partRow(id string, index int, status string, p99 float64) Row {
	r := Row{PointID: id, PointIndex: int64(index), Status: status, WallTimeMs: float64(index) + 0.5}
	if status == StatusOK {
		r.P99TTFTMs = f64(p99)
	}
	return r
}

// testMeta is the metadata of shard index of a 2-shard sweep of 4 points (sizes 2 and 2).
func testMeta(hash string, index int, missing ...string) *PartMeta {
	return &PartMeta{SpecHash: hash, ShardIndex: index, ShardCount: 2, ShardSizes: []int{2, 2}, MissingPointIDs: missing,
		Manifest: Manifest{Spec: "spec.yaml", Algorithm: "grid", Settings: optimization.Settings{Target: optimization.TargetPareto, Objectives: optimization.DefaultObjectives()},
			Counts: Counts{GridPoints: 6, ValidPoints: 4, SelectedPoints: 4, Filtered: map[string]int{"gpu_budget": 2}}}}
}

func writeTestPart(t *testing.T, path string, rows []Row, meta *PartMeta) *Part {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := WritePart(path, rows, meta); err != nil {
		t.Fatal(err)
	}
	p, err := ReadPart(path)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPartRoundTripAndMetadata(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, PartsDir, PartName(1, 2))
	if filepath.Base(path) != "part-00001-of-00002.parquet" || PartJournalName(1, 2) != "part-00001-of-00002.jsonl" {
		t.Fatalf("names %s %s", path, PartJournalName(1, 2))
	}
	rows := []Row{partRow("b", 1, StatusOK, 10), partRow("d", 3, StatusFailed, 0)}
	p := writeTestPart(t, path, rows, testMeta("h1", 1))
	if !reflect.DeepEqual(p.Rows, rows) {
		t.Errorf("rows read back differ:\n%+v\n%+v", p.Rows, rows)
	}
	if p.Meta.SpecHash != "h1" || p.Meta.ShardIndex != 1 || p.Meta.ShardCount != 2 || p.Meta.Manifest.Counts.GridPoints != 6 {
		t.Errorf("metadata %+v", p.Meta)
	}
	// The plain keys are there for other readers (DuckDB's parquet_kv_metadata).
	f, _ := os.Open(path)
	defer f.Close()
	st, _ := f.Stat()
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{SpecHashKey: "h1", ShardIndexKey: "1", ShardCountKey: "2"} {
		if v, ok := pf.Lookup(k); !ok || v != want {
			t.Errorf("metadata %s = %q, want %q", k, v, want)
		}
	}
	if m, err := ReadPartMeta(path); err != nil || m.SpecHash != "h1" {
		t.Errorf("ReadPartMeta: %v %v", m, err)
	}
	// A shard with no point still writes a readable part.
	empty := writeTestPart(t, filepath.Join(dir, PartsDir, PartName(0, 2)), nil,
		&PartMeta{SpecHash: "h1", ShardIndex: 0, ShardCount: 2, ShardSizes: []int{0, 2}, Manifest: Manifest{Counts: Counts{SelectedPoints: 2}}})
	if len(empty.Rows) != 0 {
		t.Errorf("empty part has %d rows", len(empty.Rows))
	}
	// results.parquet is not a part; neither is a file of another format.
	plain := filepath.Join(dir, "part-plain.parquet")
	if err := WriteParquet(plain, rows); err != nil {
		t.Fatal(err)
	}
	var pe *PartError
	if _, err := ReadPart(plain); !errors.As(err, &pe) || !strings.Contains(err.Error(), plain+": not a part of a sharded sweep") {
		t.Errorf("plain Parquet: %v", err)
	}
	junk := filepath.Join(dir, "junk.parquet")
	os.WriteFile(junk, []byte("PAR1 nope"), 0o644)
	if _, err := ReadPart(junk); !errors.As(err, &pe) || !strings.Contains(err.Error(), "not a readable Parquet file") {
		t.Errorf("junk: %v", err)
	}
	// Metadata that contradicts the rows is refused.
	bad := filepath.Join(dir, "bad.parquet")
	if err := WritePart(bad, rows[:1], testMeta("h1", 1)); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadPart(bad); !errors.As(err, &pe) || !strings.Contains(err.Error(), "1 rows and 0 missing points, but shard 1 has 2 points") {
		t.Errorf("inconsistent part: %v", err)
	}
}

func TestFindPartsSkipsHiddenAndOtherFiles(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"results/part-00001-of-00002.parquet", "results/part-00000-of-00002.parquet",
		"results/.part-00000-of-00002.parquet.tmp-1", ".hidden/part-00000-of-00002.parquet", "results.parquet",
		"node-b/results/part-00001-of-00002.parquet", "results/notes.txt"} {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, nil, 0o644)
	}
	got, err := FindParts(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(dir, "node-b/results/part-00001-of-00002.parquet"),
		filepath.Join(dir, "results/part-00000-of-00002.parquet"), filepath.Join(dir, "results/part-00001-of-00002.parquet")}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("FindParts = %v, want %v", got, want)
	}
}

func TestMergePartsDeduplicatesAndOrders(t *testing.T) {
	dir := t.TempDir()
	// Shard 0 owns a and c, shard 1 owns b and d. A first run of shard 1 timed out on b; a rerun
	// (collected in another directory) finished it. c failed in one copy of shard 0 and is ok
	// in another.
	p0 := writeTestPart(t, filepath.Join(dir, "x", PartName(0, 2)), []Row{partRow("a", 0, StatusOK, 1), partRow("c", 2, StatusFailed, 0)}, testMeta("h", 0))
	p0b := writeTestPart(t, filepath.Join(dir, "y", PartName(0, 2)), []Row{partRow("a", 0, StatusOK, 1), partRow("c", 2, StatusOK, 3)}, testMeta("h", 0))
	p1 := writeTestPart(t, filepath.Join(dir, "x", PartName(1, 2)), []Row{partRow("b", 1, StatusTimedOut, 0), partRow("d", 3, StatusOK, 4)}, testMeta("h", 1))
	p1b := writeTestPart(t, filepath.Join(dir, "z", PartName(1, 2)), []Row{partRow("b", 1, StatusOK, 2), partRow("d", 3, StatusOK, 99)}, testMeta("h", 1))
	rows, m, err := MergeParts([]*Part{p1b, p1, p0b, p0})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rows {
		got = append(got, r.PointID+":"+r.Status)
	}
	if strings.Join(got, " ") != "a:ok b:ok c:ok d:ok" {
		t.Errorf("merged rows %v, want a b c d, all ok", got)
	}
	// d is ok in both x and z: the first by path (x) wins, and the difference is counted.
	if *rows[3].P99TTFTMs != 4 {
		t.Errorf("kept d with p99 %v, want the one of the first part by path (4)", *rows[3].P99TTFTMs)
	}
	mi := m.Merge
	if !mi.Complete || mi.MissingPoints != 0 || mi.DuplicateRows != 4 || mi.ConflictingDuplicates != 1 || len(mi.Parts) != 4 ||
		!reflect.DeepEqual(mi.ShardCounts, []int{2}) || mi.SpecHash != "h" {
		t.Errorf("merge info %+v", mi)
	}
	if m.Counts.SelectedPoints != 4 || m.Counts.OK != 4 || m.Counts.GridPoints != 6 || m.Spec != "spec.yaml" || m.Incomplete() {
		t.Errorf("manifest %+v", m)
	}
	// The result does not depend on the order the parts are given in.
	again, _, _ := MergeParts([]*Part{p0, p1, p0b, p1b})
	if !reflect.DeepEqual(again, rows) {
		t.Error("the merge depends on the order of the parts")
	}
	// Merging the files in place gives the same rows and manifest.
	fromFiles, fm, err := MergePartFiles([]string{p1.Path, p0b.Path, p0.Path, p1b.Path})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(fromFiles, rows) || !reflect.DeepEqual(fm, m) {
		t.Errorf("MergePartFiles differs from MergeParts:\n%+v\n%+v\n%+v\n%+v", fromFiles, rows, fm.Merge, m.Merge)
	}
}

// TestMergePartFilesMatchesMergeParts merges random sharded sweeps (shards of random sizes, empty
// parts, reruns with other statuses and conflicting values, points dealt to shards out of
// order) from files in place and from parts by copy: the rows and manifests are equal, every
// point is kept once and the rows are in point order.
func TestMergePartFilesMatchesMergeParts(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 43))
	statuses := []string{StatusOK, StatusFailed, StatusTimedOut}
	for trial := range 30 {
		dir := t.TempDir()
		points, shards := rng.IntN(40), 1+rng.IntN(6)
		owner := make([][]int, shards)
		for i := range points {
			s := rng.IntN(shards)
			owner[s] = append(owner[s], i)
		}
		sizes := make([]int, shards)
		for s := range owner {
			sizes[s] = len(owner[s])
		}
		var paths []string
		var parts []*Part
		for copyNo := range 1 + rng.IntN(3) {
			for s, ids := range owner {
				if copyNo > 0 && rng.IntN(2) == 0 {
					continue
				}
				var rows []Row
				for _, i := range ids {
					rows = append(rows, partRow(fmt.Sprintf("p%03d", i), i, statuses[rng.IntN(3)], float64(rng.IntN(3))))
				}
				meta := &PartMeta{SpecHash: "h", ShardIndex: s, ShardCount: shards, ShardSizes: sizes,
					Manifest: Manifest{Spec: "spec.yaml", Counts: Counts{GridPoints: points, ValidPoints: points, SelectedPoints: points}}}
				path := filepath.Join(dir, fmt.Sprint("copy", copyNo), PartName(s, shards))
				parts = append(parts, writeTestPart(t, path, rows, meta))
				paths = append(paths, path)
			}
		}
		want, wm, err := MergeParts(parts)
		if err != nil {
			t.Fatal(err)
		}
		rng.Shuffle(len(paths), func(i, j int) { paths[i], paths[j] = paths[j], paths[i] })
		got, gm, err := MergePartFiles(paths)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(gm, wm) {
			t.Fatalf("trial %d: MergePartFiles differs from MergeParts", trial)
		}
		if len(got) != points {
			t.Fatalf("trial %d: %d rows for %d points", trial, len(got), points)
		}
		for i := range got {
			if got[i].PointIndex != int64(i) {
				t.Fatalf("trial %d: row %d is point %d", trial, i, got[i].PointIndex)
			}
		}
	}
	if _, _, err := MergePartFiles(nil); err == nil {
		t.Error("merging no file should be an error")
	}
	junk := filepath.Join(t.TempDir(), PartName(0, 1))
	os.WriteFile(junk, []byte("not parquet"), 0o644)
	var pe *PartError
	if _, _, err := MergePartFiles([]string{junk}); !errors.As(err, &pe) || pe.Path != junk {
		t.Errorf("a file that is not Parquet: %v, want a *PartError naming it", err)
	}
}

func TestMergePartsRefusesTwoSpecs(t *testing.T) {
	dir := t.TempDir()
	a := writeTestPart(t, filepath.Join(dir, "a", PartName(0, 2)), []Row{partRow("a", 0, StatusOK, 1), partRow("c", 2, StatusOK, 1)}, testMeta("aaaa", 0))
	b := writeTestPart(t, filepath.Join(dir, "b", PartName(1, 2)), []Row{partRow("b", 1, StatusOK, 1), partRow("d", 3, StatusOK, 1)}, testMeta("bbbb", 1))
	_, _, err := MergeParts([]*Part{b, a})
	var sme *SpecMismatchError
	if !errors.As(err, &sme) {
		t.Fatalf("got %v, want a SpecMismatchError", err)
	}
	for _, want := range []string{a.Path + " has spec hash aaaa (1 part with it)", b.Path + " has spec hash bbbb (1 part)"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if _, _, err := MergeParts(nil); err == nil {
		t.Error("merging nothing should be an error")
	}
}

func TestMergePartsReportsMissing(t *testing.T) {
	dir := t.TempDir()
	// Shard 1 of 2 wrote no part; shard 0 was interrupted before c.
	p0 := writeTestPart(t, filepath.Join(dir, PartName(0, 2)), []Row{partRow("a", 0, StatusOK, 1)}, testMeta("h", 0, "c"))
	rows, m, err := MergeParts([]*Part{p0})
	if err != nil {
		t.Fatal(err)
	}
	mi := m.Merge
	if len(rows) != 1 || mi.Complete || mi.MissingPoints != 3 || !m.Incomplete() {
		t.Fatalf("rows %d, merge info %+v", len(rows), mi)
	}
	if !reflect.DeepEqual(mi.MissingShards, []MissingShard{{Index: 1, Count: 2, Points: 2}}) {
		t.Errorf("missing shards %+v", mi.MissingShards)
	}
	if !reflect.DeepEqual(mi.PartialShards, []PartialShard{{Index: 0, Count: 2, MissingPointIDs: []string{"c"}}}) {
		t.Errorf("partial shards %+v", mi.PartialShards)
	}
	// The report and pareto.json say so.
	a, err := Analyze(rows, m.Settings)
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if _, err := WriteReport(out, rows, a, m); err != nil {
		t.Fatal(err)
	}
	report, _ := os.ReadFile(filepath.Join(out, ReportFile))
	for _, want := range []string{"**Incomplete:** 3 of 4 selected points have no result", "shard 1 of 2 wrote no part (2 points)",
		"shard 0 of 2 is unfinished: 1 point missing (c)"} {
		if !strings.Contains(string(report), want) {
			t.Errorf("report.md lacks %q:\n%s", want, report)
		}
	}
	pareto, _ := os.ReadFile(filepath.Join(out, ParetoFile))
	if !strings.Contains(string(pareto), `"incomplete": true`) || !strings.Contains(string(pareto), `"missing_points": 3`) {
		t.Errorf("pareto.json:\n%s", pareto)
	}
}

func TestMissingLinesAreBounded(t *testing.T) {
	mi := &MergeInfo{PartialShards: []PartialShard{{Index: 0, Count: 50, MissingPointIDs: []string{"x", "y"}}}}
	for i := 1; i < 50; i++ {
		mi.MissingShards = append(mi.MissingShards, MissingShard{Index: i, Count: 50, Points: 1})
	}
	all := mi.MissingLines(0)
	if len(all) != 50 || all[0] != "shard 1 of 50 wrote no part (1 point)" || all[49] != "shard 0 of 50 is unfinished: 2 points missing (x, y)" {
		t.Errorf("lines %q ... %q", all[0], all[len(all)-1])
	}
	short := mi.MissingLines(5)
	if len(short) != 5 || !strings.HasPrefix(short[4], "... and 46 more shards") {
		t.Errorf("bounded lines %q", short)
	}
}
