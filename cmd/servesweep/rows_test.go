package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/servesweep/servesweep/results"
)

// rowsSweep runs a two-point sweep of the seed's synthetic workload (TP 1 and 2) into a new
// directory, with extra flags, and returns the directory.
func rowsSweep(t *testing.T, extra ...string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "sweep")
	args := append([]string{"sweep", "-q", "-c", seedConfig, "--output-dir", dir,
		"--set", "engine.workers.aggregated.parallelism.tensor={choices: [1, 2]}",
		"--set", "engine.workers.aggregated.scheduler.max_sequences={choices: [8, 256]}"}, extra...)
	runOK(t, args...)
	return dir
}

// The CSV has the header in Parquet column order and one record per row whose fields are the
// values the Parquet file holds: strings as stored, integers in decimal, floats that parse back
// to the stored float64 exactly, and nulls as empty fields.
func TestRowsCSVRoundTrip(t *testing.T) {
	dir := rowsSweep(t)
	want, err := results.ReadParquet(filepath.Join(dir, results.ParquetFile))
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(strings.NewReader(runOK(t, "rows", "--results", dir))).ReadAll()
	if err != nil {
		t.Fatalf("the CSV does not parse: %v", err)
	}
	var names []string
	for _, c := range results.Columns() {
		names = append(names, c.Name)
	}
	if !slices.Equal(recs[0], names) {
		t.Fatalf("header %v, want the Parquet columns %v", recs[0], names)
	}
	if len(recs)-1 != len(want) || len(want) != 4 {
		t.Fatalf("%d records, the file holds %d rows (want 4)", len(recs)-1, len(want))
	}
	col := func(name string) int { return slices.Index(names, name) }
	for i, r := range want {
		rec := recs[i+1]
		if rec[col("point_id")] != r.PointID || rec[col("gpus")] != strconv.FormatInt(r.GPUs, 10) ||
			rec[col("mode")] != r.Mode || rec[col("agg_prefix_caching")] != "true" {
			t.Errorf("row %d: point_id %q gpus %q mode %q prefix caching %q; want %s %d %s true", i, rec[col("point_id")],
				rec[col("gpus")], rec[col("mode")], rec[col("agg_prefix_caching")], r.PointID, r.GPUs, r.Mode)
		}
		got, err := strconv.ParseFloat(rec[col("output_throughput_tok_s")], 64)
		if err != nil || r.OutputThroughputTokS == nil || got != *r.OutputThroughputTokS {
			t.Errorf("row %d: output_throughput_tok_s %q, the file holds %v", i, rec[col("output_throughput_tok_s")], r.OutputThroughputTokS)
		}
		// An aggregated point has no decode role: the column is null, an empty field.
		if r.DecodeTensor != nil || rec[col("decode_tensor")] != "" {
			t.Errorf("row %d: decode_tensor %q, want the empty field of a null", i, rec[col("decode_tensor")])
		}
		for j, v := range rec {
			if _, err := strconv.ParseFloat(v, 64); err == nil && strings.ContainsAny(v, "eE") {
				t.Errorf("row %d column %s: %q is in exponent notation", i, names[j], v)
			}
		}
	}
}

// JSON lines: one object per row, keys in the order asked, null for a null and the stored
// values; --front keeps exactly pareto.json's front points and the points tied to them (here
// TP 1 and TP 2 tie: polynomial timing does not depend on TP).
func TestRowsJSONLColumnsAndFront(t *testing.T) {
	dir := rowsSweep(t)
	out := runOK(t, "rows", "--results", dir, "--format", "jsonl", "--columns", "gpus,point_id", "--columns", "decode_tensor,p99_ttft_ms")
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 4 {
		t.Fatalf("%d lines, want 4:\n%s", len(lines), out)
	}
	for _, l := range lines {
		if !strings.HasPrefix(l, `{"gpus":`) || !strings.Contains(l, `,"point_id":"`) || !strings.Contains(l, `"decode_tensor":null,"p99_ttft_ms":`) {
			t.Errorf("line %s: keys not in the order asked, or the null not null", l)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil || len(m) != 4 {
			t.Errorf("line %s: %v", l, err)
		}
	}
	front, got := paretoOrder(t, dir), pointIDs(t, dir, "--front")
	slices.Sort(front)
	slices.Sort(got)
	if !slices.Equal(got, front) || len(got) >= 4 {
		t.Errorf("--front printed %v, pareto.json's front is %v (of 4 rows)", got, front)
	}
}

// A sharded sweep, once merged, prints the rows an unsharded run prints.
func TestRowsAfterMerge(t *testing.T) {
	whole := rowsSweep(t)
	shared := filepath.Join(t.TempDir(), "sharded")
	for _, s := range []string{"0/2", "1/2"} {
		runOK(t, "sweep", "-q", "-c", seedConfig, "--output-dir", shared, "--shard", s,
			"--set", "engine.workers.aggregated.parallelism.tensor={choices: [1, 2]}",
			"--set", "engine.workers.aggregated.scheduler.max_sequences={choices: [8, 256]}")
	}
	// Before the merge there is no results.parquet: the error says to merge.
	var out, errb strings.Builder
	if code := run(context.Background(), []string{"rows", "--results", shared}, ioStreams{Out: &out, Err: &errb}); code != exitConfigError ||
		!strings.Contains(errb.String(), "run servesweep merge --results "+shared) {
		t.Errorf("rows before merge: exit %d, %q", code, errb.String())
	}
	runOK(t, "merge", "--results", shared)
	cols := "point_id,point_index,status,gpus,agg_tensor,agg_max_sequences,output_throughput_tok_s,p99_itl_ms"
	a := runOK(t, "rows", "--results", whole, "--columns", cols)
	b := runOK(t, "rows", "--results", shared, "--columns", cols)
	if a != b || strings.Count(a, "\n") != 5 {
		t.Errorf("merged rows differ from the unsharded sweep's:\n%s\nvs\n%s", b, a)
	}
}

// Bad flags are usage errors (exit 2) that say what is valid, with nothing on stdout.
func TestRowsErrors(t *testing.T) {
	dir := rowsSweep(t)
	// What report --output-dir writes: a report without the sweep's results.
	reportOnly := t.TempDir()
	if err := os.WriteFile(filepath.Join(reportOnly, "report.md"), []byte("# report\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"rows", "--results", dir, "--columns", "gpus,nope"}, `no column "nope" in results.parquet; its columns are: point_id, point_index, status,`},
		{[]string{"rows", "--results", dir, "--columns", "gpus,output_throughput_toks"},
			`no column "output_throughput_toks" (did you mean output_throughput_tok_s?) in results.parquet; its columns are: point_id,`},
		{[]string{"rows", "--results", dir, "--format", "jsonl", "--columns", "point_id,gpus,point_id"}, "--columns names point_id twice; name each column once"},
		{[]string{"rows", "--results", dir, "--columns", "point_id,"}, `--columns "point_id," has an empty column name (a comma with nothing beside it)`},
		{[]string{"rows", "--results", dir, "--format", "parquet"}, "--format must be csv or jsonl"},
		{[]string{"rows", "--results", dir, "--columns", ""}, "--columns is empty: name at least one column"},
		{[]string{"rows"}, "--results is required"},
		{[]string{"rows", "--results", t.TempDir()}, "has no results.parquet; give a sweep's output directory, or run servesweep sweep"},
		{[]string{"rows", "--results", reportOnly, "--front"}, "holds a report (report.md) but no results.parquet: servesweep report --output-dir " +
			"writes its analysis apart from the sweep it read; give that sweep's output directory (report's --results)"},
		{[]string{"rows", "--results", filepath.Join(dir, "results.parquet")}, "is a file; give a sweep's output directory"},
		{[]string{"rows", "--results", filepath.Join(dir, "nothere")}, "does not exist; give a sweep's output directory"},
	} {
		var out, errb strings.Builder
		code := run(context.Background(), c.args, ioStreams{Out: &out, Err: &errb})
		if code != exitConfigError || !strings.Contains(errb.String(), c.want) || out.Len() > 0 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and %q", c.args, code, out.String(), errb.String(), c.want)
		}
	}
}

// Floats print in fixed notation that reads back exactly; the special values as words.
func TestRowsFloatText(t *testing.T) {
	for _, c := range []struct {
		x    float64
		want string
	}{{14120, "14120"}, {1.5e-7, "0.00000015"}, {0.1, "0.1"}, {1e21, "1000000000000000000000"},
		{math.NaN(), "NaN"}, {math.Inf(1), "+Inf"}, {math.Inf(-1), "-Inf"}} {
		got, _ := floatText(c.x, 64)
		if got != c.want {
			t.Errorf("floatText(%g) = %q, want %q", c.x, got, c.want)
		}
		if back, err := strconv.ParseFloat(got, 64); !math.IsNaN(c.x) && (err != nil || back != c.x) {
			t.Errorf("%q reads back as %g, want %g", got, back, c.x)
		}
	}
}

// --front prints the front in pareto.json's order (the order the sweep's console, report.md and
// recommendations/ number it), each entry followed by the points tied to it, not in the table's
// order: with concurrency 4, 16 and 64 the table holds the points by concurrency, the front
// from the highest throughput down.
func TestRowsFrontInFrontOrder(t *testing.T) {
	dir := rowsSweep(t, "--set", "traffic.load.concurrency={choices: [4, 16, 64]}")
	want, got := paretoOrder(t, dir), pointIDs(t, dir, "--front")
	if len(want) < 3 {
		t.Fatalf("pareto.json's front %v: want 3 or more points", want)
	}
	var tableOrder []string
	for _, id := range pointIDs(t, dir) {
		if slices.Contains(want, id) {
			tableOrder = append(tableOrder, id)
		}
	}
	if !slices.Equal(got, want) || slices.Equal(tableOrder, want) {
		t.Errorf("--front printed %v, want pareto.json's order %v (the table's order %v must differ for this test to tell)", got, want, tableOrder)
	}
	// JSON lines in the same order.
	var gotJSON []string
	for _, l := range strings.Split(strings.TrimSpace(runOK(t, "rows", "--results", dir, "--front", "--format", "jsonl", "--columns", "point_id")), "\n") {
		var m struct {
			PointID string `json:"point_id"`
		}
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatal(err)
		}
		gotJSON = append(gotJSON, m.PointID)
	}
	if !slices.Equal(gotJSON, want) {
		t.Errorf("--front --format jsonl printed %v, want %v", gotJSON, want)
	}
}

// A pareto.json that names a point the table lacks (stale, or of another sweep) or has no front
// is exit 2 saying so, not a silently shorter front.
func TestRowsFrontRefusesAStalePareto(t *testing.T) {
	dir := rowsSweep(t)
	path, doc := readParetoDoc(t, dir)
	front := doc["front"].([]any)
	front[0].(map[string]any)["point_id"] = "deadbeef0000"
	write := func() {
		t.Helper()
		b, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write()
	var out, errb strings.Builder
	if code := run(context.Background(), []string{"rows", "--results", dir, "--front"}, ioStreams{Out: &out, Err: &errb}); code != exitConfigError ||
		!strings.Contains(errb.String(), "the front names point deadbeef0000, which results.parquet does not hold") || out.Len() != 0 {
		t.Errorf("stale pareto.json: exit %d, stdout %q, stderr %q", code, out.String(), errb.String())
	}
	delete(doc, "front")
	write()
	out.Reset()
	errb.Reset()
	if code := run(context.Background(), []string{"rows", "--results", dir, "--front"}, ioStreams{Out: &out, Err: &errb}); code != exitConfigError ||
		!strings.Contains(errb.String(), "has no front") {
		t.Errorf("pareto.json without a front: exit %d, stderr %q", code, errb.String())
	}
	// An empty front (no candidate point) prints the header alone and says the front is empty.
	doc["front"] = []any{}
	write()
	out.Reset()
	errb.Reset()
	if code := run(context.Background(), []string{"rows", "--results", dir, "--front", "--columns", "point_id"}, ioStreams{Out: &out, Err: &errb}); code != exitOK ||
		out.String() != "point_id\n" || !strings.Contains(errb.String(), "servesweep rows: the front of "+path+" is empty: no point was a candidate") {
		t.Errorf("an empty front: exit %d, stdout %q, stderr %q", code, out.String(), errb.String())
	}
}

// paretoOrder is dir's pareto.json front as rows --front should print it: each entry's
// point_id followed by its listed ties.
func paretoOrder(t *testing.T, dir string) []string {
	t.Helper()
	var doc struct {
		Front []struct {
			PointID      string   `json:"point_id"`
			TiedPointIDs []string `json:"tied_point_ids"`
		} `json:"front"`
	}
	data, err := os.ReadFile(filepath.Join(dir, results.ParetoFile))
	if err != nil || json.Unmarshal(data, &doc) != nil || len(doc.Front) == 0 {
		t.Fatalf("pareto.json: %v", err)
	}
	var ids []string
	for _, p := range doc.Front {
		ids = append(ids, p.PointID)
		ids = append(ids, p.TiedPointIDs...)
	}
	return ids
}

// pointIDs runs rows on dir with args and the point_id column alone, and returns the IDs in
// the order printed.
func pointIDs(t *testing.T, dir string, args ...string) []string {
	t.Helper()
	recs, err := csv.NewReader(strings.NewReader(runOK(t, append([]string{"rows", "--results", dir, "--columns", "point_id"}, args...)...))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range recs[1:] {
		ids = append(ids, r[0])
	}
	return ids
}

// --front refuses, with exit 2 naming the file, the version found and the one it reads, a
// pareto.json whose schema_version is missing, empty or another than the one servesweep writes;
// a version of the wrong JSON kind is refused as not a pareto.json document.
func TestRowsFrontChecksParetoSchemaVersion(t *testing.T) {
	dir := rowsSweep(t)
	path := filepath.Join(dir, results.ParetoFile)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}()
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	if doc["schema_version"] != results.ParetoSchemaVersion {
		t.Fatalf("pareto.json written with schema_version %v, want %q", doc["schema_version"], results.ParetoSchemaVersion)
	}
	for _, c := range []struct {
		name    string
		version any // nil: the key left out
		want    string
	}{
		{"missing", nil, path + ` has no schema_version; this servesweep reads pareto.json schema_version "1"`},
		{"empty", "", path + ` has schema_version ""; this servesweep reads pareto.json schema_version "1"`},
		{"another", "2", path + ` has schema_version "2"; this servesweep reads pareto.json schema_version "1"`},
		{"a number", 1, path + " is not a pareto.json document"},
	} {
		delete(doc, "schema_version")
		if c.version != nil {
			doc["schema_version"] = c.version
		}
		b, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		var out, errb strings.Builder
		if code := run(context.Background(), []string{"rows", "--results", dir, "--front"}, ioStreams{Out: &out, Err: &errb}); code != exitConfigError ||
			!strings.Contains(errb.String(), "--front: "+c.want) || out.Len() != 0 {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 2 with %q", c.name, code, out.String(), errb.String(), c.want)
		}
	}
}

// A pareto.json that is a directory is refused with exit 2 naming it, by rows --front (with the
// report --overwrite hint every other bad pareto.json gets) and by report --overwrite before it
// writes anything (it could not replace it, and would stop after writing recommendations/).
func TestParetoFileIsDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sweep")
	if err := os.CopyFS(dir, os.DirFS(rowsSweep(t))); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, results.ParetoFile)
	recs := filepath.Join(dir, results.RecommendationsDir)
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(recs); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(path, 0o755); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCLI(t, "rows", "--results", dir, "--front")
	if want := "--front: " + path + " is a directory, not a regular file; remove it and run servesweep report --results " + dir + " --overwrite"; code != exitConfigError || out != "" || !strings.Contains(errs, want) {
		t.Errorf("rows --front: exit %d, stdout %q, stderr %q; want exit 2 and %q", code, out, errs, want)
	}
	code, _, errs = runCLI(t, "report", "--results", dir, "--overwrite")
	if want := path + " is a directory, not a regular file; the report cannot replace it"; code != exitConfigError || !strings.Contains(errs, want) {
		t.Errorf("report --overwrite: exit %d, stderr %q; want exit 2 and %q", code, errs, want)
	}
	if _, err := os.Stat(recs); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("report --overwrite wrote %s before refusing (%v)", recs, err)
	}
}

// A front whose tie group is listed in full only in pareto_ties.parquet (more tied points than
// pareto.json keeps) prints with --front: the ties table is read as what it is, not refused as a
// results table without the results' columns.
func TestRowsFrontReadsTheTiesTable(t *testing.T) {
	dir := rowsSweep(t)
	path, doc := readParetoDoc(t, dir)
	first := doc["front"].([]any)[0].(map[string]any)
	first["tied_point_count"] = results.MaxTiedPointIDs + 400
	data, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	ties := []results.TieRow{{FrontRank: 1, PointID: first["point_id"].(string), TiedPointID: first["point_id"].(string)}}
	if err := parquet.WriteFile(filepath.Join(dir, results.TiesFile), ties); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCLI(t, "rows", "--results", dir, "--front", "--columns", "point_id")
	if code != 0 || !strings.Contains(out, first["point_id"].(string)) {
		t.Errorf("exit %d, stdout %q, stderr %q; want the front's rows", code, out, errs)
	}
	// A ties table that cannot be read, or is another table, is exit 2 saying how to rewrite it.
	rewrite := "run servesweep report --results " + dir + " --overwrite to rewrite it with pareto.json"
	if err := os.WriteFile(filepath.Join(dir, results.TiesFile), []byte("not parquet"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, errs := runCLI(t, "rows", "--results", dir, "--front"); code != exitConfigError || out != "" ||
		!strings.Contains(errs, "the full list is unreadable: ") || !strings.Contains(errs, rewrite) {
		t.Errorf("garbage ties table: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	data, err = os.ReadFile(filepath.Join(dir, results.ParquetFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, results.TiesFile), data, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, errs := runCLI(t, "rows", "--results", dir, "--front"); code != exitConfigError || out != "" ||
		!strings.Contains(errs, "has no tied_point_id column: not the ties table servesweep writes; "+rewrite) {
		t.Errorf("results.parquet as the ties table: exit %d, stdout %q, stderr %q", code, out, errs)
	}
}

// readParetoDoc returns the path of dir's pareto.json and the document it holds, for tests to edit.
func readParetoDoc(t *testing.T, dir string) (string, map[string]any) {
	t.Helper()
	path := filepath.Join(dir, results.ParetoFile)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	return path, doc
}

// --table probes prints probes.parquet: every probe the file holds, the values stored, its
// columns in file order; with --front the probes of the front's points, point by point in the
// front's order, each point's probes in the order they ran.
func TestRowsProbes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sweep")
	runOK(t, "sweep", "-q", "-c", "../../examples/sweep-small.yaml", "--output-dir", dir,
		"--set", "traffic.load.concurrency=4", "--set", "evaluation.sla={ttft_ms: 2000, itl_ms: 100}",
		"--set", "optimization.capacity_search={attainment: 0.9, min: 1, max: 64, relative_tolerance: 0.2, max_probes: 6}")
	want, err := results.ReadProbes(filepath.Join(dir, results.ProbesFile))
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(strings.NewReader(runOK(t, "rows", "--results", dir, "--table", "probes"))).ReadAll()
	if err != nil {
		t.Fatalf("the CSV does not parse: %v", err)
	}
	names := probeColumnNames()
	if !slices.Equal(recs[0], names) || !slices.Contains(names, "probe_index") || !slices.Contains(names, "meets_sla") {
		t.Fatalf("header %v, want probes.parquet's columns %v", recs[0], names)
	}
	if len(recs)-1 != len(want) || len(want) < 4 {
		t.Fatalf("%d records, probes.parquet holds %d probes (want 4 or more)", len(recs)-1, len(want))
	}
	col := func(name string) int { return slices.Index(names, name) }
	for i, p := range want {
		rec := recs[i+1]
		load, err := strconv.ParseFloat(rec[col("load")], 64)
		if rec[col("point_id")] != p.PointID || rec[col("probe_index")] != strconv.FormatInt(p.ProbeIndex, 10) ||
			err != nil || load != p.Load || rec[col("meets_sla")] != strconv.FormatBool(p.MeetsSLA) {
			t.Errorf("probe %d: point_id %q probe_index %q load %q meets_sla %q; want %s %d %v %v", i, rec[col("point_id")],
				rec[col("probe_index")], rec[col("load")], rec[col("meets_sla")], p.PointID, p.ProbeIndex, p.Load, p.MeetsSLA)
		}
	}

	for _, c := range []struct {
		columns []string
		want    string
	}{
		{[]string{"load,nope,nope"}, `no column "nope" in probes.parquet; its columns are: point_id, probe_index, load,`},
		{[]string{"point_id\nnope"}, `no column "point_id\nnope" in probes.parquet`},
		{[]string{"capacity_load"}, `no column "capacity_load" in probes.parquet (capacity_load is a column of results.parquet: --table results prints it)`},
		{[]string{"", "point_id"}, "--columns is empty: name at least one column"},
		{[]string{","}, `--columns "," has an empty column name (a comma with nothing beside it); give names separated by single commas, e.g. point_id,load`},
	} {
		args := []string{"rows", "--results", dir, "--table", "probes"}
		for _, v := range c.columns {
			args = append(args, "--columns", v)
		}
		if code, out, errs := runCLI(t, args...); code != exitConfigError || out != "" || !strings.Contains(errs, c.want) {
			t.Errorf("--columns %q: exit %d, stdout %q, stderr %q; want %q", c.columns, code, out, errs, c.want)
		}
	}
	if code, _, errs := runCLI(t, "rows", "--results", dir, "--columns", "point_id,probe_index"); code != exitConfigError ||
		!strings.Contains(errs, `(probe_index is a column of probes.parquet: --table probes prints it)`) {
		t.Errorf("a probe column of results.parquet: exit %d, %q", code, errs)
	}
	// Repeated and comma-separated values name columns in order.
	if out := runOK(t, "rows", "--results", dir, "--table", "probes", "--columns", "load, point_id", "--columns", "probe_index"); !strings.HasPrefix(out, "load,point_id,probe_index\n") {
		t.Errorf("--columns in pieces: %q", out[:min(len(out), 80)])
	}

	front := paretoOrder(t, dir)
	var got []string // point_id per line, in order
	next := map[string]int64{}
	for _, l := range strings.Split(strings.TrimSpace(runOK(t, "rows", "--results", dir, "--table", "probes", "--front",
		"--format", "jsonl", "--columns", "point_id,probe_index")), "\n") {
		var m struct {
			PointID    string `json:"point_id"`
			ProbeIndex int64  `json:"probe_index"`
		}
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatal(err)
		}
		if m.ProbeIndex != next[m.PointID] {
			t.Errorf("point %s: probe %d printed where %d was next", m.PointID, m.ProbeIndex, next[m.PointID])
		}
		next[m.PointID]++
		if len(got) == 0 || got[len(got)-1] != m.PointID {
			got = append(got, m.PointID)
		}
	}
	if len(front) == 0 || !slices.Equal(got, front) {
		t.Errorf("--front printed the probes of %v, one run each; want pareto.json's front %v in its order", got, front)
	}
	for _, id := range front {
		n := int64(0)
		for _, p := range want {
			if p.PointID == id {
				n++
			}
		}
		if next[id] != n {
			t.Errorf("point %s: %d probes printed, probes.parquet holds %d", id, next[id], n)
		}
	}
}

// A capacity-search sweep whose probes.parquet is gone, or damaged, is exit 2 saying how to
// write it again; one whose front points' probes it lacks says so rather than blame pareto.json.
func TestRowsProbesMissingOrDamaged(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sweep")
	runOK(t, "sweep", "-q", "-c", "../../examples/sweep-small.yaml", "--output-dir", dir,
		"--set", "traffic.load.concurrency=4", "--set", "evaluation.sla={ttft_ms: 2000, itl_ms: 100}",
		"--set", "optimization.capacity_search={attainment: 0.9, min: 1, max: 64, relative_tolerance: 0.2, max_probes: 6}")
	probes := filepath.Join(dir, results.ProbesFile)
	data, err := os.ReadFile(probes)
	if err != nil {
		t.Fatal(err)
	}
	// Another page's bytes flipped: the rows cannot be read.
	bad := slices.Clone(data)
	for i := len(bad) / 3; i < len(bad)/3+64; i++ {
		bad[i] ^= 0x5a
	}
	if err := os.WriteFile(probes, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCLI(t, "rows", "--results", dir, "--table", "probes")
	if code != exitConfigError || out != "" || !strings.Contains(errs, probes) ||
		!(strings.Contains(errs, " is damaged: ") && strings.Contains(errs, "rerun the sweep into "+dir) || strings.Contains(errs, "is not a readable Parquet file")) {
		t.Errorf("a damaged probes.parquet: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	// A probe table without the front's points.
	if err := parquet.WriteFile(probes, []results.ProbeRow{{PointID: "000000000000", LoadUnit: "concurrency"}}); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := runCLI(t, "rows", "--results", dir, "--table", "probes", "--front"); code != exitConfigError ||
		!strings.Contains(errs, "whose probes probes.parquet does not hold") || !strings.Contains(errs, "rerun the sweep into its directory") {
		t.Errorf("probes of another sweep: exit %d, %q", code, errs)
	}
	if err := os.Remove(probes); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := runCLI(t, "rows", "--results", dir, "--table", "probes"); code != exitConfigError ||
		!strings.Contains(errs, "has no probes.parquet, though its sweep ran a capacity search (sweep.json): rerun the sweep into "+dir) {
		t.Errorf("probes.parquet removed: exit %d, %q", code, errs)
	}
	// Without sweep.json whether a search ran is unknown: said so, not that none ran.
	if err := os.Remove(filepath.Join(dir, results.ManifestFile)); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := runCLI(t, "rows", "--results", dir, "--table", "probes"); code != exitConfigError ||
		!strings.Contains(errs, "has no probes.parquet, and its sweep.json is missing, so whether its sweep ran a capacity search is unknown") {
		t.Errorf("probes.parquet and sweep.json removed: exit %d, %q", code, errs)
	}
}

// --table probes says why a directory has no probes table, and refuses another table in its place.
func TestRowsProbesErrors(t *testing.T) {
	dir := rowsSweep(t) // no capacity search
	impostor := t.TempDir()
	data, err := os.ReadFile(filepath.Join(dir, results.ParquetFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(impostor, results.ProbesFile), data, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"rows", "--results", dir, "--table", "probes"}, "has no probes.parquet: its sweep ran no capacity search " +
			"(optimization.capacity_search writes a row per probe); --table results prints its points"},
		{[]string{"rows", "--results", dir, "--table", "probe"}, `--table must be results or probes, got "probe"`},
		{[]string{"rows", "--results", t.TempDir(), "--table", "probes"}, "has no results.parquet; give a sweep's output directory"},
		{[]string{"rows", "--results", impostor, "--table", "probes"}, "probes.parquet has no probe_index column: not a probes table servesweep sweep wrote"},
	} {
		var out, errb strings.Builder
		code := run(context.Background(), c.args, ioStreams{Out: &out, Err: &errb})
		if code != exitConfigError || !strings.Contains(errb.String(), c.want) || out.Len() > 0 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and %q", c.args, code, out.String(), errb.String(), c.want)
		}
	}
}

// A capacity-search sweep none of whose searches finished kept no probes: --table probes says so,
// rather than tell to rerun a sweep that would fail again.
func TestRowsProbesNoneFinished(t *testing.T) {
	src, err := os.ReadFile(shippedTrace)
	if err != nil {
		t.Fatal(err)
	}
	trace := filepath.Join(t.TempDir(), "t.jsonl")
	if err := os.WriteFile(trace, []byte(strings.Join(strings.SplitAfter(string(src), "\n")[:5], "")), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "sweep")
	runCLI(t, "sweep", "-q", "-c", "../../examples/trace-replay.yaml", "--output-dir", dir,
		"--set", "traffic.source.paths=["+trace+"]", "--set", "traffic.load={type: concurrency, concurrency: 4}",
		"--set", "evaluation.sla={ttft_ms: 2000, itl_ms: 50}", "--set", "optimization.capacity_search={min: 8}")
	code, out, errs := runCLI(t, "rows", "--results", dir, "--table", "probes")
	if code != exitConfigError || out != "" || !strings.Contains(errs, "but no point's search finished (each failed or timed out") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
	// An interrupted sweep is told to finish, not that its points failed.
	manifest := filepath.Join(dir, results.ManifestFile)
	data, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	m["counts"].(map[string]any)["interrupted"] = true
	if data, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(manifest, data, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs = runCLI(t, "rows", "--results", dir, "--table", "probes")
	if code != exitConfigError || out != "" || !strings.Contains(errs, "but no point's search finished (the sweep is incomplete, "+
		"the sweep was interrupted: rerun it into "+dir+" to finish") {
		t.Errorf("interrupted: exit %d, stdout %q, stderr %q", code, out, errs)
	}
}

// A whole sweep's rows print with nothing on stderr; without its sweep.json, or with one that
// cannot be read, the rows still print, and stderr says whether they are the whole sweep is
// unknown.
func TestRowsSayWhenCompletenessIsUnknown(t *testing.T) {
	dir := rowsSweep(t)
	code, whole, errs := runCLI(t, "rows", "--results", dir, "--columns", "point_id")
	if code != exitOK || errs != "" || strings.Count(whole, "\n") != 5 {
		t.Fatalf("a whole sweep: exit %d, stderr %q, stdout %q", code, errs, whole)
	}
	manifest := filepath.Join(dir, results.ManifestFile)
	if err := os.WriteFile(manifest, []byte("garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCLI(t, "rows", "--results", dir, "--columns", "point_id")
	if code != exitOK || out != whole || !strings.HasPrefix(errs, "servesweep rows: note: "+manifest+" cannot be read (") ||
		!strings.HasSuffix(errs, "whether these rows are every selected point of the sweep (or part of an interrupted one) is unknown\n") {
		t.Errorf("a damaged sweep.json: exit %d, stderr %q", code, errs)
	}
	if err := os.Remove(manifest); err != nil {
		t.Fatal(err)
	}
	code, out, errs = runCLI(t, "rows", "--results", dir, "--columns", "point_id")
	if code != exitOK || out != whole || errs != "servesweep rows: note: "+manifest+" is missing: whether these rows are every "+
		"selected point of the sweep (or part of an interrupted one) is unknown\n" {
		t.Errorf("no sweep.json: exit %d, stderr %q", code, errs)
	}
}

// A point whose capacity search failed keeps, in probes.parquet, the probes that ran before it
// stopped: the measurements that explain the failure, beside its failed row.
func TestRowsProbesOfFailedSearch(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sweep")
	code, _, errs := runCLI(t, "sweep", "-q", "-c", "../../examples/sweep-small.yaml", "--output-dir", dir,
		"--set", "traffic.load.concurrency=4", "--set", "traffic.stop={requests: 40}",
		"--set", "evaluation.sla={ttft_ms: 500, itl_ms: 50}", "--set", "optimization.capacity_search={min: 2, max: 64}")
	if code != exitRunFailure || !strings.Contains(errs, "no feasible point: none of the 1 points passed the filters (failed 1)") {
		t.Fatalf("sweep: exit %d %s; want exit 1, no feasible point", code, errs)
	}
	code, out, errs := runCLI(t, "rows", "--results", dir, "--columns", "status,capacity_probes,capacity_load_unit,capacity_load")
	if want := "status,capacity_probes,capacity_load_unit,capacity_load\nfailed,1,concurrency,\n"; code != 0 || out != want {
		t.Fatalf("results: exit %d, stdout %q, stderr %q; want %q", code, out, errs, want)
	}
	code, out, errs = runCLI(t, "rows", "--results", dir, "--table", "probes", "--columns", "probe_index,load,load_unit,meets_sla,unmeasured")
	if want := "probe_index,load,load_unit,meets_sla,unmeasured\n0,2,concurrency,true,\n"; code != 0 || out != want {
		t.Errorf("probes: exit %d, stdout %q, stderr %q; want %q", code, out, errs, want)
	}
}
