package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/servesweep/servesweep/results"
	"github.com/servesweep/servesweep/sim/optimization"
)

// tinyAggregated is tinyDefault restricted to aggregated points at one token budget: an 80-point
// sweep that takes a fraction of a second. It removes the built-in spec's prefill and decode
// roles and kv_transfer, which no aggregated point uses (kept, they would be warned about).
var tinyAggregated = append([]string{"--set", "engine.mode={choices: [aggregated]}",
	"--set", "engine.workers.aggregated.scheduler.max_batched_tokens=8192",
	"--set", "engine.workers.prefill=null", "--set", "engine.workers.decode=null", "--set", "engine.kv_transfer=null"}, tinyDefault...)

// runTinySweep runs the tiny aggregated sweep into dir and returns its stdout.
func runTinySweep(t *testing.T, dir string, extra ...string) string {
	t.Helper()
	args := append(append([]string{"sweep", "--output-dir", dir, "-q"}, tinyAggregated...), extra...)
	code, out, errs := runCLI(t, args...)
	if code != 0 {
		t.Fatalf("%v: exit %d: %s\n%s", args, code, errs, out)
	}
	return out
}

// snapshot reads every file under dir, by slash-separated path relative to dir.
func snapshot(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		files[filepath.ToSlash(rel)] = data
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// sameFiles reports how two snapshots differ ("" when they are byte-identical).
func sameFiles(before, after map[string][]byte) string {
	var diffs []string
	for name, data := range before {
		if got, ok := after[name]; !ok {
			diffs = append(diffs, name+" removed")
		} else if !bytes.Equal(got, data) {
			diffs = append(diffs, name+" changed")
		}
	}
	for name := range after {
		if _, ok := before[name]; !ok {
			diffs = append(diffs, name+" added")
		}
	}
	slices.Sort(diffs)
	return strings.Join(diffs, ", ")
}

// TestReportOutputDir checks that report never rewrites a report without --overwrite: into the
// sweep's own directory (the default) it exits 2 naming --output-dir and --overwrite; with
// --output-dir it writes a complete report into a new nested directory and leaves every file of
// the sweep byte-identical; a second run into that directory needs --overwrite, which replaces
// the report there.
func TestReportOutputDir(t *testing.T) {
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "sweep")
	runTinySweep(t, dir)
	before := snapshot(t, dir)
	if len(before) < 8 {
		t.Fatalf("the sweep wrote only %v", slices.Sorted(maps.Keys(before)))
	}

	code, out, errs := runCLI(t, "report", "--results", dir, "--target", "throughput")
	want := "error: --results " + dir + " already holds a report (pareto.json, report.md, pareto.png, "
	if code != exitConfigError || out != "" || !strings.HasPrefix(errs, want) ||
		!strings.HasSuffix(errs, "more)); pass --output-dir DIR to write the new analysis elsewhere, or --overwrite to replace it\n") {
		t.Errorf("report into the sweep's directory: exit %d, stdout %q, stderr %q; want exit 2 and %q...", code, out, errs, want)
	}

	other := filepath.Join(tmp, "analyses", "throughput")
	code, out, errs = runCLI(t, "report", "--results", dir, "--output-dir", other, "--target", "throughput")
	if code != exitOK {
		t.Fatalf("report --output-dir: exit %d: %s", code, errs)
	}
	if d := sameFiles(before, snapshot(t, dir)); d != "" {
		t.Errorf("report --output-dir changed the sweep's directory: %s", d)
	}
	if !strings.Contains(out, "Best points by throughput") || !strings.Contains(out, "Saved report to: "+filepath.Join(other, results.ReportFile)) {
		t.Errorf("stdout:\n%s", out)
	}
	// Each ranked point shows the target's own column first, with objectives that leave it out too.
	code, out, errs = runCLI(t, "report", "--results", dir, "--output-dir", filepath.Join(tmp, "analyses", "gpus"),
		"--target", "throughput", "--objective", "max:gpus")
	if code != exitOK || !strings.Contains(out, "\n  1: output_throughput_tok_s=") || !strings.Contains(out, ", gpus=") {
		t.Errorf("--target throughput --objective max:gpus: exit %d %s\n%s", code, errs, out)
	}
	written := snapshot(t, other)
	names := slices.Sorted(maps.Keys(written))
	wantNames := []string{results.ParetoFile, results.PlotFile, results.ReportFile, results.HTMLFile}
	if readPareto(t, other).TiesFile != "" {
		// The front has exact ties (on this sweep a kv_router twin of a round_robin point).
		wantNames = append(wantNames, results.TiesFile)
	}
	for i := 1; i <= 10; i++ {
		wantNames = append(wantNames, fmt.Sprintf("%s/%04d.yaml", results.RecommendationsDir, i))
	}
	slices.Sort(wantNames)
	if !slices.Equal(names, wantNames) {
		t.Errorf("--output-dir holds %v, want %v", names, wantNames)
	}
	if got := readPareto(t, other).Settings.Target; got != "throughput" {
		t.Errorf("pareto.json in --output-dir has target %q, want throughput", got)
	}
	if got := readPareto(t, dir).Settings.Target; got != optimization.TargetPareto {
		t.Errorf("the sweep's pareto.json has target %q, want pareto", got)
	}

	code, _, errs = runCLI(t, "report", "--results", dir, "--output-dir", other)
	if code != exitConfigError || !strings.Contains(errs, "--output-dir "+other+" already holds a report (pareto.json, report.md, pareto.png, ") ||
		!strings.Contains(errs, "pass another --output-dir DIR to write the new analysis elsewhere, or --overwrite to replace it") {
		t.Errorf("second report into --output-dir: exit %d %q", code, errs)
	}
	if d := sameFiles(written, snapshot(t, other)); d != "" {
		t.Errorf("a refused report changed --output-dir: %s", d)
	}
	if code, _, errs := runCLI(t, "report", "--results", dir, "--output-dir", other, "--overwrite"); code != exitOK {
		t.Fatalf("--overwrite: exit %d %q", code, errs)
	}
	if got := readPareto(t, other).Settings.Target; got != optimization.TargetPareto {
		t.Errorf("after --overwrite, pareto.json has target %q, want the sweep's pareto", got)
	}
	// The front of the sweep's settings has fewer points than the 10 ranked ones: the stale
	// recommendations are gone.
	recs, _ := filepath.Glob(filepath.Join(other, results.RecommendationsDir, "*.yaml"))
	if front := readPareto(t, other).Front; len(recs) != len(front) {
		t.Errorf("%d recommendations after --overwrite for a front of %d points", len(recs), len(front))
	}

	// A bad GPU bound is named alone; two that disagree are named together.
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--max-gpus", "-1"}, "--max-gpus: must be >= 0 (0: no bound), got -1"},
		{[]string{"--min-gpus", "-2"}, "--min-gpus: must be >= 0 (0: no bound), got -2"},
		{[]string{"--min-gpus", "4", "--max-gpus", "2"}, "--min-gpus (4) must be at most --max-gpus (2)"},
	} {
		args := append([]string{"report", "--results", dir, "--output-dir", other, "--overwrite"}, c.args...)
		if code, _, errs := runCLI(t, args...); code != exitConfigError || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d %q, want %d and %q", c.args, code, errs, exitConfigError, c.want)
		}
	}

	// --overwrite also rewrites the sweep's own report, with the new settings.
	if code, _, errs := runCLI(t, "report", "--results", dir, "--overwrite", "--max-gpus", "2"); code != exitOK {
		t.Fatalf("--overwrite into the sweep's directory: exit %d %q", code, errs)
	}
	var settings struct {
		Settings struct {
			MaxGPUs int `json:"max_candidate_gpus"`
		} `json:"settings"`
	}
	data, _ := os.ReadFile(filepath.Join(dir, results.ParetoFile))
	if err := json.Unmarshal(data, &settings); err != nil || settings.Settings.MaxGPUs != 2 {
		t.Errorf("the sweep's pareto.json after --overwrite --max-gpus 2: %v\n%s", err, data)
	}

	file := filepath.Join(tmp, "file")
	os.WriteFile(file, nil, 0o644)
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--output-dir", file}, "error: --output-dir " + file + " exists and is not a directory\n"},
		{[]string{"--output-dir", ""}, "error: --output-dir must not be empty; leave it out to write into --results\n"},
	} {
		code, _, errs := runCLI(t, append([]string{"report", "--results", dir}, tc.args...)...)
		if code != exitConfigError || errs != tc.msg {
			t.Errorf("%q: exit %d %q; want exit 2 and %q", tc.args, code, errs, tc.msg)
		}
	}
}

// TestReportMaxRejectedRatio reports two points, one ok and one degraded that rejected 1 of its
// 10 offered requests and dominates the first: the degraded point is a candidate only when the
// maximum rejected ratio (--max-rejected-ratio, else sweep.json's, else 0) is at least 0.1.
// Values outside [0, 1] exit 2 naming the flag or the file.
func TestReportMaxRejectedRatio(t *testing.T) {
	dir := t.TempDir()
	i64 := func(x int64) *int64 { return &x }
	f64 := func(x float64) *float64 { return &x }
	rows := []results.Row{
		{PointID: "okpoint", PointIndex: 0, Status: results.StatusOK, GPUs: 1, CompletedRequests: i64(10), OfferedRequests: i64(10),
			RejectedRequests: i64(0), OutputThroughputPerGPUTokS: f64(10), P99TTFTMs: f64(50), P99ITLMs: f64(5)},
		{PointID: "rejecting", PointIndex: 1, Status: results.StatusDegraded, GPUs: 1, CompletedRequests: i64(9), OfferedRequests: i64(10),
			RejectedRequests: i64(1), OutputThroughputPerGPUTokS: f64(20), P99TTFTMs: f64(40), P99ITLMs: f64(4)},
	}
	if err := results.WriteParquet(filepath.Join(dir, results.ParquetFile), rows); err != nil {
		t.Fatal(err)
	}
	front := func(args ...string) []string {
		t.Helper()
		out := filepath.Join(t.TempDir(), "report")
		code, _, errs := runCLI(t, append([]string{"report", "--results", dir, "--output-dir", out}, args...)...)
		if code != exitOK {
			t.Fatalf("%q: exit %d %q", args, code, errs)
		}
		var ids []string
		for _, p := range readPareto(t, out).Front {
			ids = append(ids, p["point_id"].(string))
		}
		return ids
	}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{nil, []string{"okpoint"}},
		{[]string{"--max-rejected-ratio", "0.05"}, []string{"okpoint"}},
		{[]string{"--max-rejected-ratio", "0.1"}, []string{"rejecting"}},
		{[]string{"--max-rejected-ratio", "1"}, []string{"rejecting"}},
	} {
		if got := front(tc.args...); !slices.Equal(got, tc.want) {
			t.Errorf("%q: front %v, want %v", tc.args, got, tc.want)
		}
	}
	// sweep.json's value is the default; the flag replaces it.
	m := &results.Manifest{Spec: "test.yaml", Settings: optimization.Settings{Target: optimization.TargetPareto, MaxRejectedRatio: 0.2}}
	if err := results.WriteManifest(dir, m); err != nil {
		t.Fatal(err)
	}
	if got := front(); !slices.Equal(got, []string{"rejecting"}) {
		t.Errorf("sweep.json max_rejected_ratio 0.2: front %v, want [rejecting]", got)
	}
	if got := front("--max-rejected-ratio", "0"); !slices.Equal(got, []string{"okpoint"}) {
		t.Errorf("--max-rejected-ratio 0 over sweep.json's 0.2: front %v, want [okpoint]", got)
	}

	for _, v := range []string{"-0.1", "1.5", "NaN", "+Inf"} {
		code, _, errs := runCLI(t, "report", "--results", dir, "--output-dir", t.TempDir(), "--max-rejected-ratio", v)
		if code != exitConfigError || !strings.Contains(errs, "--max-rejected-ratio must be a number from 0 to 1 (") {
			t.Errorf("--max-rejected-ratio %s: exit %d %q", v, code, errs)
		}
	}
	if code, _, errs := runCLI(t, "report", "--results", dir, "--max-rejected-ratio", "half"); code != exitConfigError ||
		!strings.Contains(errs, `--max-rejected-ratio takes a number in decimal notation, got "half"`) {
		t.Errorf("--max-rejected-ratio half: exit %d %q", code, errs)
	}
	m.Settings.MaxRejectedRatio = 3
	if err := results.WriteManifest(dir, m); err != nil {
		t.Fatal(err)
	}
	code, _, errs := runCLI(t, "report", "--results", dir, "--output-dir", t.TempDir())
	if want := "settings.max_rejected_ratio of " + filepath.Join(dir, results.ManifestFile) + " must be a number from 0 to 1"; code != exitConfigError ||
		!strings.Contains(errs, want) || !strings.Contains(errs, "got 3; pass --max-rejected-ratio R to replace it") {
		t.Errorf("sweep.json max_rejected_ratio 3: exit %d %q; want exit 2 and %q", code, errs, want)
	}
}

// Path mistakes are usage errors (exit 2) naming the flag and the way out: --results naming a
// file, a sharded sweep's directory before its merge, merge --output-dir naming a file.
func TestReportAndMergePathMistakes(t *testing.T) {
	tmp := t.TempDir()
	file := filepath.Join(tmp, "spec.yaml")
	if err := os.WriteFile(file, []byte("x: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sharded := filepath.Join(tmp, "sharded")
	if code, _, errs := runCLI(t, append([]string{"sweep", "-q", "--output-dir", sharded, "--shard", "0/2"}, tinyAggregated...)...); code != 0 {
		t.Fatalf("shard: exit %d %s", code, errs)
	}
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"report", "--results", file}, "--results " + file + " is a file"},
		{[]string{"report", "--results", filepath.Join(tmp, "nope")}, "--results " + filepath.Join(tmp, "nope") + " does not exist"},
		{[]string{"report", "--results", sharded}, "run servesweep merge --results " + sharded},
		{[]string{"merge", "--results", sharded, "--output-dir", file}, "--output-dir " + file + " exists and is not a directory"},
	} {
		if code, _, errs := runCLI(t, c.args...); code != exitConfigError || !strings.Contains(errs, c.msg) {
			t.Errorf("%v: exit %d %q; want exit 2 and %q", c.args, code, errs, c.msg)
		}
	}
}

// TestReportWithoutOrWithBrokenManifest checks that report says when DIR/sweep.json is missing
// (the defaults stand in for the sweep's settings: a warning naming them, exit 0, and the
// default objectives in pareto.json), and that a sweep.json that is not JSON is exit 2 naming the
// file for report and for a resumed sweep, never a raw decoder error with exit 1.
func TestReportWithoutOrWithBrokenManifest(t *testing.T) {
	tmp := t.TempDir()
	sweepDir := filepath.Join(tmp, "sweep")
	runTinySweep(t, sweepDir)
	// The printed front says how many points each entry stands for: every point ties on these.
	code, out, errs := runCLI(t, "report", "--results", sweepDir, "--output-dir", filepath.Join(tmp, "ties"),
		"--objective", "min:rejected_requests", "--objective", "min:gpus")
	if code != 0 || !strings.Contains(out, "Pareto front: 1 point of ") || !strings.Contains(out, " tied)\n") {
		t.Errorf("report with all-tied objectives: exit %d %q\n%s; want one front point with its ties counted", code, errs, out)
	}
	bare := filepath.Join(tmp, "bare")
	if err := os.MkdirAll(bare, 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(sweepDir, results.ParquetFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bare, results.ParquetFile), data, 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs = runCLI(t, "report", "--results", bare, "--output-dir", filepath.Join(tmp, "r1"))
	manifest := filepath.Join(bare, results.ManifestFile)
	if code != 0 || !strings.Contains(errs, "warning: "+manifest+" is missing") ||
		!strings.Contains(errs, "max:output_throughput_per_gpu_tok_s min:p99_ttft_ms min:p99_itl_ms") {
		t.Errorf("report without sweep.json: exit %d, stderr %q; want exit 0 and a warning naming the defaults", code, errs)
	}
	if md, err := os.ReadFile(filepath.Join(tmp, "r1", results.ReportFile)); err != nil || !strings.Contains(string(md), "settings: the defaults and the flags given (no sweep.json") {
		t.Errorf("report.md without sweep.json does not say its settings are the defaults (%v):\n%s", err, md)
	}
	var doc struct {
		Settings struct {
			Objectives []optimization.Objective `json:"objectives"`
		} `json:"settings"`
	}
	pj, err := os.ReadFile(filepath.Join(tmp, "r1", "pareto.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(pj, &doc); err != nil || !slices.Equal(doc.Settings.Objectives, optimization.DefaultObjectives()) {
		t.Errorf("pareto.json objectives %v (%v); want the defaults %v", doc.Settings.Objectives, err, optimization.DefaultObjectives())
	}

	// A number where the schema version's string goes says which kinds.
	if err := os.WriteFile(manifest, []byte(`{"schema_version": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs = runCLI(t, "report", "--results", bare, "--output-dir", filepath.Join(tmp, "r2"))
	if code != exitConfigError || !strings.Contains(errs, "field schema_version holds a JSON number where servesweep writes a string") {
		t.Errorf("report with a numeric schema_version: exit %d %q", code, errs)
	}
	// A misspelt key, or a capacity search's setting out of range, is refused, not read as zero.
	for _, c := range []struct{ doc, want string }{
		{`{"schema_version": "1", "settings": {"target": "pareto", "objectivs": []}}`, `unknown field "objectivs", which servesweep does not write`},
		{`{"schema_version": "1", "settings": {"target": "pareto"}, "foo": 1}`, `unknown field "foo"`},
		{`{"schema_version": "1", "settings": {"target": "pareto"}, "capacity_search": {"attainment": 0.9, "min": 1, "max": 64, ` +
			`"relative_tolerence": 0.05, "max_probes": 8}}`, `unknown field "relative_tolerence"`},
		{`{"schema_version": "1", "settings": {"target": "pareto"}, "capacity_search": {"attainment": 0.9, "min": 1, "max": 64, ` +
			`"relative_tolerance": -0.5, "max_probes": 8}}`, "capacity_search.relative_tolerance -0.5 is outside (0, 1)"},
		{`{"schema_version": "1"} {"schema_version": "1"}`, "more than one JSON value"},
		// A newer servesweep's manifest is refused for its version, not for fields this one lacks.
		{`{"schema_version": "2", "settings": {"target": "pareto"}, "a_newer_field": 1}`, `schema_version "2"; this servesweep reads "1"`},
	} {
		if err := os.WriteFile(manifest, []byte(c.doc), 0o644); err != nil {
			t.Fatal(err)
		}
		code, _, errs = runCLI(t, "report", "--results", bare, "--output-dir", filepath.Join(tmp, "r3"))
		if code != exitConfigError || !strings.Contains(errs, c.want) || !strings.Contains(errs, manifest) {
			t.Errorf("report with %s: exit %d %q, want %q naming the file", c.doc, code, errs, c.want)
		}
	}
	// An interrupted sweep's manifest: the printed front says it is partial, and why.
	// (No algorithm key: still a manifest, whose report.md keeps its counts.)
	partial := `{"schema_version": "1", "settings": {"target": "pareto"}, "counts": {"selected_points": 500, "interrupted": true}}`
	if err := os.WriteFile(manifest, []byte(partial), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs = runCLI(t, "report", "--results", bare, "--output-dir", filepath.Join(tmp, "r5"))
	if code != 0 || !strings.Contains(out, "PARTIAL: 80 of 500 selected points have results (the sweep was interrupted)") {
		t.Errorf("report of an interrupted sweep: exit %d %q\n%s", code, errs, out)
	}
	if md, err := os.ReadFile(filepath.Join(tmp, "r5", results.ReportFile)); err != nil || strings.Contains(string(md), "no sweep.json") ||
		!strings.Contains(string(md), "Partial results") {
		t.Errorf("report.md of a manifest without algorithm (%v):\n%s", err, md)
	}
	for _, bad := range []string{"{bad", "{}", "null", "[]", `{"schema_version": "99"}`} {
		if err := os.WriteFile(manifest, []byte(bad), 0o644); err != nil {
			t.Fatal(err)
		}
		code, _, errs = runCLI(t, "report", "--results", bare, "--output-dir", filepath.Join(tmp, "r2"))
		if code != exitConfigError || !strings.Contains(errs, manifest+" is not a sweep manifest") {
			t.Errorf("report with sweep.json %q: exit %d %q; want exit 2 naming %s", bad, code, errs, manifest)
		}
	}
	// Settings read from the manifest are blamed on it, not on flags that were not given.
	for bad, want := range map[string]string{
		`{"schema_version": "1", "settings": {"target": "bogus"}}`:                                     `must be one of [pareto throughput`,
		`{"schema_version": "1", "settings": {"max_candidate_gpus": -3}}`:                              "settings.max_candidate_gpus of " + manifest + ": must be >= 0 (0: no bound), got -3",
		`{"schema_version": "1", "settings": {"objectives": [{"metric": "gpus", "direction": "up"}]}}`: "settings.objectives of " + manifest + `: objective gpus: direction must be maximize or minimize, got "up"`,
	} {
		if err := os.WriteFile(manifest, []byte(bad), 0o644); err != nil {
			t.Fatal(err)
		}
		code, _, errs = runCLI(t, "report", "--results", bare, "--output-dir", filepath.Join(tmp, "r4"))
		if code != exitConfigError || !strings.Contains(errs, want) || !strings.Contains(errs, manifest) {
			t.Errorf("report with sweep.json %s: exit %d %q; want exit 2 with %q naming %s", bad, code, errs, want, manifest)
		}
	}
	if err := os.Remove(manifest); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(manifest, 0o755); err != nil {
		t.Fatal(err)
	}
	code, _, errs = runCLI(t, "report", "--results", bare, "--output-dir", filepath.Join(tmp, "r3"))
	if code != exitConfigError || !strings.Contains(errs, manifest+" is not a sweep manifest") || !strings.Contains(errs, "it is a directory") {
		t.Errorf("report with a sweep.json directory: exit %d %q; want exit 2 naming %s", code, errs, manifest)
	}
	broken := filepath.Join(sweepDir, results.ManifestFile)
	if err := os.WriteFile(broken, []byte("[1, 2"), 0o644); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"sweep", "--output-dir", sweepDir, "-q"}, tinyAggregated...)
	code, _, errs = runCLI(t, args...)
	if code != exitConfigError || !strings.Contains(errs, broken+" is not a sweep manifest") || !strings.Contains(errs, "move that file away to resume") {
		t.Errorf("resume with a broken sweep.json: exit %d %q; want exit 2 naming %s and how to resume", code, errs, broken)
	}
	// A directory in its place is named, with the way out.
	if err := os.Remove(broken); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(broken, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	code, _, errs = runCLI(t, args...)
	if code != exitConfigError || !strings.Contains(errs, broken+" is a directory where the sweep writes its manifest; remove that directory") {
		t.Errorf("resume with a sweep.json directory: exit %d %q", code, errs)
	}
	// Moved away, the sweep resumes from its journal.
	if err := os.RemoveAll(broken); err != nil {
		t.Fatal(err)
	}
	code, out, errs = runCLI(t, args...)
	if code != 0 || !strings.Contains(out, "simulated 0, resumed 80") {
		t.Errorf("resume without sweep.json: exit %d %q\n%s; want every point resumed", code, errs, out)
	}
}

// TestReportListsFilteredPoints runs a small sweep whose aggregated points are all invalid
// (--allow-empty-mode), whole and as two merged shards: report.md lists the filtered points by
// reason with counts and the first reason, then the domain values no valid point takes, and
// sweep, merge and report write the same section.
func TestReportListsFilteredPoints(t *testing.T) {
	tmp := t.TempDir()
	args := append([]string{"sweep", "-q", "--allow-empty-mode", "--set", "engine.hardware=h100_sxm", "--set", "engine.precision.weights=bf16",
		"--set", "router.policy=round_robin", "--set", "engine.workers.aggregated.kv_cache.capacity.memory_fraction=0.01",
		"--set", "engine.workers.aggregated.parallelism.tensor={choices: [1, 8]}",
		"--set", "engine.workers.aggregated.scheduler.max_batched_tokens=8192"}, tinyDefault...)
	run := func(extra ...string) {
		t.Helper()
		if code, out, errs := runCLI(t, append(slices.Clone(args), extra...)...); code != 0 {
			t.Fatalf("%v: exit %d: %s\n%s", extra, code, errs, out)
		}
	}
	single, shared := filepath.Join(tmp, "single"), filepath.Join(tmp, "shared")
	run("--output-dir", single)
	run("--output-dir", shared, "--shard", "0/2")
	run("--output-dir", shared, "--shard", "1/2")
	if code, out, errs := runCLI(t, "merge", "--results", shared); code != 0 {
		t.Fatalf("merge: exit %d: %s\n%s", code, errs, out)
	}
	again := filepath.Join(tmp, "again")
	if code, out, errs := runCLI(t, "report", "--results", single, "--output-dir", again); code != 0 {
		t.Fatalf("report: exit %d: %s\n%s", code, errs, out)
	}
	// Every aggregated point's weights outgrow 1 % of its GPUs' memory; the reason names each
	// point's own GPUs (one error per tensor degree, so not one error of the spec).
	why1 := "examples/default-sweep.yaml: engine.workers.aggregated.kv_cache.capacity: model meta-llama/Llama-3.1-8B (bf16 weights) " +
		"does not fit on 1 × h100_sxm (tensor 1 × pipeline 1): needs 15.0 GiB of weights, has 0.8 GiB (memory_fraction 0.01 × 80 GiB × 1 GPUs); " +
		"raise tensor or pipeline, or quantize"
	why8 := strings.NewReplacer("1 × h100_sxm (tensor 1", "8 × h100_sxm (tensor 8", "0.8 GiB", "6.4 GiB", "× 1 GPUs", "× 8 GPUs").Replace(why1)
	why := why1
	want := "Grid: 44 points before filtering, 25 valid (filtered: gpu_budget 14, invalid_config 5), 25 selected.\n\n" +
		"Filtered before simulation, by reason:\n\n" +
		"- `gpu_budget`: 14 points, e.g. point mode=aggregated aggregated.replicas=2 aggregated.tensor=8: 16 GPUs, outside the budget [1, 8] of optimization.constraints\n" +
		"- `invalid_config`: 5 points, e.g. point mode=aggregated aggregated.replicas=1 aggregated.tensor=1: " + why + "\n\n" +
		"Domain values no valid point takes:\n\n" +
		"- `engine.mode` aggregated: all 8 of its points filtered (gpu_budget 3, invalid_config 5), e.g. point mode=aggregated aggregated.replicas=1 aggregated.tensor=1: " + why + "\n" +
		"- `engine.workers.aggregated.parallelism.replicas` 1: all 2 of its points filtered (invalid_config 2), e.g. point mode=aggregated aggregated.replicas=1 aggregated.tensor=1: " + why + "\n" +
		"- `engine.workers.aggregated.parallelism.replicas` 2: all 2 of its points filtered (gpu_budget 1, invalid_config 1), e.g. point mode=aggregated aggregated.replicas=2 aggregated.tensor=1: " + why + "\n" +
		"- `engine.workers.aggregated.parallelism.replicas` 4: all 2 of its points filtered (gpu_budget 1, invalid_config 1), e.g. point mode=aggregated aggregated.replicas=4 aggregated.tensor=1: " + why + "\n" +
		"- `engine.workers.aggregated.parallelism.replicas` 8: all 2 of its points filtered (gpu_budget 1, invalid_config 1), e.g. point mode=aggregated aggregated.replicas=8 aggregated.tensor=1: " + why + "\n" +
		"- `engine.workers.aggregated.parallelism.tensor` 1: all 4 of its points filtered (invalid_config 4), e.g. point mode=aggregated aggregated.replicas=1 aggregated.tensor=1: " + why + "\n" +
		"- `engine.workers.aggregated.parallelism.tensor` 8: all 4 of its points filtered (gpu_budget 3, invalid_config 1), e.g. point mode=aggregated aggregated.replicas=1 aggregated.tensor=8: " + why8 + "\n\n" +
		"Results: "
	for _, dir := range []string{single, shared, again} {
		report, err := os.ReadFile(filepath.Join(dir, results.ReportFile))
		if err != nil {
			t.Fatal(err)
		}
		_, rest, _ := strings.Cut(string(report), "Grid: ")
		got := "Grid: " + rest
		if dir == shared {
			// The merge says where its rows came from before the section.
			merged := "Merged from 2 parts of a sweep sharded 2 ways (spec hash `"
			i, j := strings.Index(got, merged), strings.Index(got, "removed.\n\n")
			if i < 0 || j < i {
				t.Fatalf("the merged report.md lacks %q:\n%s", merged, got)
			}
			got = got[:i] + got[j+len("removed.\n\n"):]
		}
		if !strings.HasPrefix(got, want) {
			t.Errorf("%s/report.md:\n%s\nwant it to start with\n%s", filepath.Base(dir), got[:min(len(got), len(want)+200)], want)
		}
	}
}

// A finished sweep's results file with fewer rows than its sweep.json counts (rows removed by
// hand, or lost) is reported with a warning naming both files.
func TestReportWarnsOfLostRows(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sweep")
	runTinySweep(t, dir)
	if code, _, errs := runCLI(t, "report", "--results", dir, "--output-dir", filepath.Join(dir, "r1")); code != 0 || strings.Contains(errs, "rows were lost") {
		t.Fatalf("complete results: exit %d, stderr %q", code, errs)
	}
	path := filepath.Join(dir, results.ParquetFile)
	rows, err := results.ReadParquet(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := results.WriteParquet(path, rows[:len(rows)-1]); err != nil {
		t.Fatal(err)
	}
	code, _, errs := runCLI(t, "report", "--results", dir, "--output-dir", filepath.Join(dir, "r2"))
	want := fmt.Sprintf("holds %d rows where %s counts %d selected points of a finished sweep", len(rows)-1,
		filepath.Join(dir, results.ManifestFile), len(rows))
	if code != 0 || !strings.Contains(errs, want) {
		t.Errorf("exit %d, stderr %q, want %q", code, errs, want)
	}
}

// A merge whose parts lack a shard's probe table is incomplete for its probes, not its points:
// report says which.
func TestReportNamesMissingProbeParts(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sharded")
	for _, shard := range []string{"0/2", "1/2"} {
		if code, out, errs := runCLI(t, append([]string{"sweep", "-q", "--output-dir", dir, "--shard", shard}, tinyAggregated...)...); code != 0 {
			t.Fatalf("shard %s: exit %d: %s\n%s", shard, code, errs, out)
		}
	}
	tables, err := filepath.Glob(filepath.Join(dir, "*", "probes-00001-of-00002.parquet"))
	if err != nil || len(tables) != 1 {
		t.Fatalf("probe tables %v (%v)", tables, err)
	}
	if err := os.Remove(tables[0]); err != nil {
		t.Fatal(err)
	}
	runCLI(t, "merge", "--results", dir)
	code, out, errs := runCLI(t, "report", "--results", dir, "--output-dir", filepath.Join(dir, "again"))
	if code != 0 || !strings.Contains(out, "(the merged parts lack the capacity probes of ") || strings.Contains(out, "lack points") {
		t.Errorf("exit %d, stderr %q, stdout:\n%s", code, errs, out)
	}
}

// A report objective whose direction reverses its metric's better one is a warning on stderr
// naming its --objective and the flag that reverses it; without --objective, the sweep's own
// reversed objectives are blamed on the manifest. An objective in its better direction is not.
func TestReportWarnsOfReversedObjective(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sweep")
	runTinySweep(t, dir)
	code, _, errs := runCLI(t, "report", "--results", dir, "--output-dir", filepath.Join(t.TempDir(), "rev"),
		"--objective", "max:p99_ttft_ms", "--objective", "max:output_throughput_tok_s")
	want := "warning: --objective max:p99_ttft_ms: maximize p99_ttft_ms, but a lower p99_ttft_ms (99th percentile of time to first " +
		"token) is better, so this objective favours the deployments that do worst on it; if that was not meant, pass --objective min:p99_ttft_ms\n"
	if code != exitOK || errs != want {
		t.Errorf("exit %d, stderr %q\nwant %q", code, errs, want)
	}
	opts := &reportOptions{set: map[string]bool{}}
	objs := []optimization.Objective{{Metric: "p99_itl_ms", Direction: optimization.Minimize}, {Metric: "sla_attainment", Direction: optimization.Minimize}}
	got := reversedObjectiveWarnings(opts, objs, "out/sweep.json")
	wantManifest := []string{"settings.objectives[1] of out/sweep.json: minimize sla_attainment, but a higher sla_attainment (offered " +
		"requests meeting every SLA bound) is better, so this objective favours the deployments that do worst on it; if that was not " +
		"meant, pass --objective max:sla_attainment (with an --objective for each other objective: the flags replace the list)"}
	if !slices.Equal(got, wantManifest) {
		t.Errorf("from the manifest: %q\nwant %q", got, wantManifest)
	}
}

// plannerBudgetSpec is a small sweep of fixed and autoscaled deployments with fixed timing (a
// prefill pass 15 + 30 ms, a decode pass 30 ms): 1 or 2 replicas, each autoscaled with a planner
// ceiling (planner.max_num_gpus) of 2 or 8 GPUs, or not (the disabled points that differ only in
// the ceiling are duplicates): 6 points, which a GPU budget of 2 cuts to the 4 whose planner
// cannot grow past it.
const plannerBudgetSpec = `traffic:
  source: {type: synthetic, input_tokens: 100, output_tokens: 20}
  load: {type: poisson, requests_per_second: 4, seed: 7}
  stop: {requests: 100}
engine:
  model: meta-llama/Meta-Llama-3.1-8B-Instruct
  hardware: h100_sxm
  context_length: 8192
  workers:
    aggregated:
      parallelism: {replicas: {choices: [1, 2]}, tensor: 1}
      scheduler: {max_batched_tokens: 1000, max_sequences: 8}
      kv_cache: {block_size: 16, capacity: {type: fixed, blocks: 100000}}
      timing: {type: fixed, prefill_ms: 15, decode_ms: 30}
router: {policy: round_robin}
planner: {policy: {choices: [disabled, enabled]}, max_num_gpus: {choices: [2, 8]}, load_adjustment_interval_seconds: 1}
evaluation: {sla: {ttft_ms: 1000, itl_ms: 40}}
optimization: {target: throughput_per_gpu}
`

// report --max-gpus N applies the sweep's GPU budget (max_candidate_gpus N) to autoscaled
// points too: an autoscaled point whose planner may grow past N GPUs is excluded, as the sweep
// filters it, even when it starts within N. The candidates of the report of the whole sweep
// under --max-gpus 2 are the points a sweep with max_candidate_gpus 2 selects, and the report
// says why the others are out (stdout, report.md and pareto.json), as sweep.json does.
func TestReportMaxGPUsIsTheSweepsBudget(t *testing.T) {
	endToEnd(t)
	tmp := t.TempDir()
	spec := filepath.Join(tmp, "planner.yaml")
	if err := os.WriteFile(spec, []byte(plannerBudgetSpec), 0o644); err != nil {
		t.Fatal(err)
	}
	sweep := func(dir string, sets ...string) {
		t.Helper()
		args := append([]string{"sweep", "-c", spec, "--output-dir", dir, "-q"}, sets...)
		if code, out, errs := runCLI(t, args...); code != 0 {
			t.Fatalf("%v: exit %d: %s\n%s", args, code, errs, out)
		}
	}
	whole, budget := filepath.Join(tmp, "whole"), filepath.Join(tmp, "budget")
	sweep(whole)
	sweep(budget, "--set", "optimization.constraints.max_candidate_gpus=2")
	var want []string
	for _, r := range readRows(t, budget) {
		want = append(want, r.PointID)
	}
	first := "" // the first autoscaled point of the whole sweep with a ceiling of 8
	rows := readRows(t, whole)
	for _, r := range rows {
		if r.PeakGPUs != nil && strings.Contains(r.ConfigYAML, "max_num_gpus: 8") {
			first = r.PointID
			break
		}
	}
	if len(rows) != 6 || len(want) != 4 || first == "" {
		t.Fatalf("the whole sweep has %d rows, the budgeted one %d (%v), the first autoscaled point with a ceiling of 8 %q; want 6, 4 and one",
			len(rows), len(want), want, first)
	}
	why := "Excluded by the GPU budget (max 2 GPUs): 2 points, e.g. point " + first +
		": the planner may grow it to 8 GPUs (planner.max_num_gpus), over the budget's 2."

	out := filepath.Join(tmp, "report")
	code, stdout, errs := runCLI(t, "report", "--results", whole, "--output-dir", out, "--max-gpus", "2")
	// stdout wraps its lines, indenting the continuations by two spaces.
	if code != exitOK || !strings.HasPrefix(strings.ReplaceAll(stdout, "\n  ", " "), why+"\n") {
		t.Errorf("report --max-gpus 2: exit %d %q; want exit 0 and stdout starting with %q:\n%s", code, errs, why, stdout)
	}
	md, err := os.ReadFile(filepath.Join(out, results.ReportFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "(excluded: gpu_budget 2).\n\n"+why+"\n") {
		t.Errorf("report.md does not say why 2 points are out (%q):\n%s", why, md)
	}
	code, stdout, errs = runCLI(t, "report", "--results", whole, "--output-dir", filepath.Join(tmp, "json"), "--max-gpus", "2", "--format", "json")
	if code != exitOK {
		t.Fatalf("report --max-gpus 2 --format json: exit %d %q", code, errs)
	}
	var doc struct {
		Pareto struct {
			Candidates       int               `json:"candidates"`
			Excluded         map[string]int    `json:"excluded"`
			ExcludedExamples map[string]string `json:"excluded_examples"`
			Ranking          []struct {
				PointID string `json:"point_id"`
			} `json:"ranking"`
		} `json:"pareto"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range doc.Pareto.Ranking {
		got = append(got, p.PointID)
	}
	slices.Sort(got)
	slices.Sort(want)
	p := doc.Pareto
	wantExample := "point " + first + ": the planner may grow it to 8 GPUs (planner.max_num_gpus), over the budget's 2"
	if !slices.Equal(got, want) || p.Candidates != 4 || !maps.Equal(p.Excluded, map[string]int{results.ExcludedGPUBudget: 2}) ||
		!maps.Equal(p.ExcludedExamples, map[string]string{results.ExcludedGPUBudget: wantExample}) {
		t.Errorf("report --max-gpus 2: candidates %d %v, excluded %v %v; want the sweep's under max_candidate_gpus 2, %v, and gpu_budget 2, %q",
			p.Candidates, got, p.Excluded, p.ExcludedExamples, want, wantExample)
	}
	// Without a maximum every ceiling is within the budget: the six points compete.
	code, stdout, errs = runCLI(t, "report", "--results", whole, "--output-dir", filepath.Join(tmp, "all"), "--max-gpus", "0")
	if code != exitOK || strings.Contains(stdout, "Excluded by the GPU budget") || !strings.Contains(stdout, "(of 6 candidates)") {
		t.Errorf("report --max-gpus 0: exit %d %q:\n%s\nwant all 6 points candidates and no exclusion", code, errs, stdout)
	}
	// A budget no point meets leaves the scalar target's ranking empty: it is still a ranking.
	_, stdout, _ = runCLI(t, "report", "--results", whole, "--output-dir", filepath.Join(tmp, "none"), "--min-gpus", "3")
	if !strings.Contains(stdout, "Best points by throughput_per_gpu (of 0 candidates).") || strings.Contains(stdout, "Pareto front") {
		t.Errorf("report --min-gpus 3:\n%s\nwant an empty ranking by throughput_per_gpu, no Pareto front", stdout)
	}
}

// report's cost and goodput flags replace the sweep's bounds as its spec's constraints would: a
// cost bound keeps only the points within it, and pareto.json's settings record it; a cost bound
// over results without prices, a negative one, and a minimum goodput under a target other than
// min_gpus are refused (exit 2).
func TestReportCostAndGoodputFlags(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sweep")
	runTinySweep(t, dir, "--set", "optimization.cost.gpu_hour_usd={h100_sxm: 2, h200_sxm: 3}")
	cost := map[string]float64{}
	over := 0
	for _, r := range readRows(t, dir) {
		if r.CostUSDPerHour != nil {
			if cost[r.PointID] = *r.CostUSDPerHour; *r.CostUSDPerHour > 5 {
				over++
			}
		}
	}
	if over == 0 || over == len(cost) {
		t.Fatalf("costs %v: want some above 5 USD per hour and some within", cost)
	}
	out := filepath.Join(t.TempDir(), "r")
	if code, _, errs := runCLI(t, "report", "--results", dir, "--output-dir", out, "--max-cost-usd-per-hour", "5"); code != exitOK {
		t.Fatalf("report --max-cost-usd-per-hour 5: exit %d %s", code, errs)
	}
	d := readPareto(t, out)
	if d.Settings.MaxCostUSDPerHour != 5 || len(d.Front) == 0 {
		t.Fatalf("pareto.json settings %+v, %d front entries", d.Settings, len(d.Front))
	}
	for _, e := range d.Front {
		if id, _ := e["point_id"].(string); cost[id] > 5 {
			t.Errorf("front point %s costs %g USD per hour, above the bound 5", id, cost[id])
		}
	}
	bare := filepath.Join(t.TempDir(), "bare")
	runTinySweep(t, bare, "--set", "optimization.cost=null", "--set", "optimization.objectives=[{metric: output_throughput_tok_s, direction: maximize}]")
	for _, c := range []struct {
		dir  string
		args []string
		want string
	}{
		{bare, []string{"--max-cost-usd-per-hour", "5"}, "--max-cost-usd-per-hour: needs cost columns, and the results have none"},
		{bare, []string{"--max-usd-per-million-output-tokens", "0.2"}, "--max-usd-per-million-output-tokens: needs cost columns"},
		{dir, []string{"--max-cost-usd-per-hour", "-1"}, "--max-cost-usd-per-hour must be a number >= 0 (0: no bound), got -1"},
		{dir, []string{"--min-goodput-rps", "NaN"}, "--min-goodput-rps must be a number >= 0"},
		{dir, []string{"--min-goodput-rps", "3"}, "--min-goodput-rps: only valid with target min_gpus, got target pareto: pass --min-goodput-rps 0 to drop the bound, or --target min_gpus"},
	} {
		args := append([]string{"report", "--results", c.dir, "--output-dir", filepath.Join(t.TempDir(), "x")}, c.args...)
		if code, _, errs := runCLI(t, args...); code != exitConfigError || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d %q, want exit 2 and %q", c.args, code, errs, c.want)
		}
	}
}
