package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/servesweep/servesweep/results"
)

// decodeOne parses stdout as exactly one JSON object (one value, then the end of the input) and
// returns its top-level keys in the order printed, and the object.
func decodeOne(t *testing.T, stdout string) ([]string, map[string]any) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(stdout))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("stdout does not start with a JSON object (%v, %v):\n%s", tok, err, stdout)
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatalf("%v:\n%s", err, stdout)
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatalf("value of %q: %v", tok, err)
		}
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		t.Fatalf("the object does not end (%v, %v)", tok, err)
	}
	if tok, err := dec.Token(); !errors.Is(err, io.EOF) {
		t.Fatalf("stdout holds more than one JSON value: then %v (%v)", tok, err)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatal(err)
	}
	return keys, doc
}

// readJSON decodes the JSON file at path.
func readJSON(t *testing.T, path string) any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return v
}

// strs converts a decoded JSON array of strings.
func strs(v any) []string {
	list, _ := v.([]any)
	out := make([]string, len(list))
	for i, x := range list {
		out[i], _ = x.(string)
	}
	return out
}

// TestReportFormatJSON checks report --format json: one object {files, pareto} on stdout, whose
// pareto is the pareto.json written and whose files are the paths written, nothing on stderr;
// and that a refused report prints nothing on stdout.
func TestReportFormatJSON(t *testing.T) {
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "sweep")
	runTinySweep(t, dir)
	out := filepath.Join(tmp, "ranked")
	code, stdout, errs := runCLI(t, "report", "--results", dir, "--output-dir", out, "--target", "throughput", "--format", "json")
	if code != exitOK || errs != "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	keys, doc := decodeOne(t, stdout)
	if !slices.Equal(keys, []string{"files", "pareto"}) {
		t.Errorf("keys %v, want [files pareto]", keys)
	}
	if want := readJSON(t, filepath.Join(out, results.ParetoFile)); !reflect.DeepEqual(doc["pareto"], want) {
		t.Errorf("pareto differs from pareto.json:\n%v\nwant\n%v", doc["pareto"], want)
	}
	pareto := doc["pareto"].(map[string]any)
	// 80 points: 10 shapes × 2 policies × 2 GPUs × 2 weight formats; on the 4 one-replica shapes
	// kv_router is a twin of round_robin and is not ranked, so 64 are.
	if s := pareto["settings"].(map[string]any); s["target"] != "throughput" || len(pareto["ranking"].([]any)) != 64 {
		t.Errorf("pareto settings %v, %d ranked points; want target throughput and 64", s, len(pareto["ranking"].([]any)))
	}
	files := doc["files"].(map[string]any)
	var recs []string
	for i := 1; i <= 10; i++ {
		recs = append(recs, filepath.Join(out, results.RecommendationsDir, fmt.Sprintf("%04d.yaml", i)))
	}
	wantFiles := map[string]any{"pareto": filepath.Join(out, results.ParetoFile), "report": filepath.Join(out, results.ReportFile),
		"plot": filepath.Join(out, results.PlotFile), "html": filepath.Join(out, results.HTMLFile)}
	if readPareto(t, out).TiesFile != "" {
		wantFiles["ties"] = filepath.Join(out, results.TiesFile)
	}
	if got := strs(files["recommendations"]); !slices.Equal(got, recs) {
		t.Errorf("files.recommendations %v, want %v", got, recs)
	}
	delete(files, "recommendations")
	if !reflect.DeepEqual(files, wantFiles) {
		t.Errorf("files %v, want %v", files, wantFiles)
	}
	for _, p := range append(recs, wantFiles["report"].(string), wantFiles["plot"].(string)) {
		if _, err := os.Stat(p); err != nil {
			t.Error(err)
		}
	}

	code, stdout, errs = runCLI(t, "report", "--results", dir, "--format", "json")
	if code != exitConfigError || stdout != "" || !strings.Contains(errs, "already holds a report") {
		t.Errorf("report into the sweep's directory: exit %d, stdout %q, stderr %q; want exit 2, nothing on stdout", code, stdout, errs)
	}
}

// TestSweepFormatJSON runs the tiny aggregated sweep with --format json, then resumes it: one
// object {counts, files, pareto, settings} on stdout each time, whose counts and settings are
// sweep.json's and whose pareto is pareto.json.
func TestSweepFormatJSON(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sweep")
	for _, resumed := range []bool{false, true} {
		code, stdout, errs := runCLI(t, append([]string{"sweep", "--output-dir", dir, "-q", "--format", "json"}, tinyAggregated...)...)
		if code != exitOK || withoutBurstWarning(errs) != "" {
			t.Fatalf("exit %d, stderr %q", code, errs)
		}
		keys, doc := decodeOne(t, stdout)
		if !slices.Equal(keys, []string{"counts", "files", "pareto", "settings"}) {
			t.Errorf("keys %v, want [counts files pareto settings]", keys)
		}
		manifest := readJSON(t, filepath.Join(dir, results.ManifestFile)).(map[string]any)
		if !reflect.DeepEqual(doc["counts"], manifest["counts"]) || !reflect.DeepEqual(doc["settings"], manifest["settings"]) {
			t.Errorf("counts %v, settings %v; sweep.json has %v, %v", doc["counts"], doc["settings"], manifest["counts"], manifest["settings"])
		}
		if want := readJSON(t, filepath.Join(dir, results.ParetoFile)); !reflect.DeepEqual(doc["pareto"], want) {
			t.Errorf("pareto differs from pareto.json")
		}
		c := doc["counts"].(map[string]any)
		simulated, resumedPoints := 80.0, 0.0
		if resumed {
			simulated, resumedPoints = 0, 80
		}
		if c["grid_points"] != 128.0 || c["valid_points"] != 80.0 || c["selected_points"] != 80.0 || c["ok"] != 80.0 ||
			c["degraded"] != 0.0 || c["infeasible"] != 0.0 || c["simulated_points"] != simulated || c["resumed_points"] != resumedPoints ||
			!reflect.DeepEqual(c["filtered"], map[string]any{"gpu_budget": 48.0}) {
			t.Errorf("resumed %v: counts %v", resumed, c)
		}
		files := doc["files"].(map[string]any)
		front := doc["pareto"].(map[string]any)["front"].([]any)
		if recs := strs(files["recommendations"]); len(front) == 0 || len(recs) != len(front) {
			t.Errorf("%d recommendations for a front of %d points", len(recs), len(front))
		}
		delete(files, "recommendations")
		want := map[string]any{}
		for key, name := range map[string]string{"journal": results.JournalFile, "manifest": results.ManifestFile, "pareto": results.ParetoFile,
			"plot": results.PlotFile, "report": results.ReportFile, "results": results.ParquetFile, "probes": results.ProbesFile,
			"html": results.HTMLFile} {
			want[key] = filepath.Join(dir, name)
		}
		if readPareto(t, dir).TiesFile != "" {
			want["ties"] = filepath.Join(dir, results.TiesFile)
		}
		if !reflect.DeepEqual(files, want) {
			t.Errorf("files %v, want %v", files, want)
		}
	}

	// A sweep with no feasible point writes its outputs and exits 1, with nothing on stdout.
	bad := filepath.Join(t.TempDir(), "bad")
	code, stdout, errs := runCLI(t, append([]string{"sweep", "--output-dir", bad, "-q", "--format", "json",
		"--set", "engine.context_length=1024"}, tinyAggregated...)...)
	if code != exitRunFailure || stdout != "" || !strings.Contains(errs, "no feasible point") || strings.Contains(errs, "bounds are in ms") {
		t.Errorf("no feasible point: exit %d, stdout %q, stderr %q", code, stdout, errs)
	}
	// An SLA typed in seconds: the error says the bounds are in ms.
	secs := filepath.Join(t.TempDir(), "secs")
	code, _, errs = runCLI(t, append([]string{"sweep", "--output-dir", secs, "-q", "--set", "evaluation.sla={ttft_ms: 1, itl_ms: 0.05}"},
		tinyAggregated...)...)
	if code != exitRunFailure || !strings.Contains(errs, "the SLA's bounds are in ms: ttft_ms 1 asks for 1 ms (1 s is ttft_ms: 1000)") {
		t.Errorf("SLA in seconds: exit %d, stderr %q", code, errs)
	}
}

// TestSweepDryRunFormatJSON checks sweep --dry-run --format json against the table it replaces:
// the same counts, domains (every value) and first --show points; with a shard, its points and
// a shard object.
func TestSweepDryRunFormatJSON(t *testing.T) {
	code, table, errs := runCLI(t, "sweep", "--dry-run", "--show", "4")
	if code != exitOK {
		t.Fatalf("table: exit %d %q", code, errs)
	}
	// The table wraps its lines at 120 characters (a point's line continues indented by two
	// more spaces): compare the lines whole.
	checkLines(t, "sweep --dry-run", table)
	table = strings.ReplaceAll(table, "\n    ", " ")
	code, stdout, errs := runCLI(t, "sweep", "--dry-run", "--show", "4", "--format", "json")
	if code != exitOK || errs != "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	keys, doc := decodeOne(t, stdout)
	if want := []string{"domains", "equivalent_points", "filtered", "grid_points", "points", "selected_points", "valid_points"}; !slices.Equal(keys, want) {
		t.Errorf("keys %v, want %v", keys, want)
	}
	// One-worker deployments that differ only in their router are twins (grid.CanonicalKey).
	if line := fmt.Sprintf("equivalent: %v selected point(s) simulate as an earlier one", doc["equivalent_points"]); doc["equivalent_points"] != 48.0 || !strings.Contains(table, line) {
		t.Errorf("equivalent_points %v; the table lacks %q", doc["equivalent_points"], line)
	}
	counts := fmt.Sprintf("grid: %v points before filtering, %v valid, %v selected", doc["grid_points"], doc["valid_points"], doc["selected_points"])
	if !strings.Contains(table, counts) || doc["grid_points"] != 544.0 || doc["valid_points"] != 360.0 {
		t.Errorf("the table lacks %q:\n%s", counts, table)
	}
	if f := doc["filtered"].(map[string]any); !strings.Contains(table, fmt.Sprintf("filtered gpu_budget: %v (", f["gpu_budget"])) || len(f) != 1 {
		t.Errorf("filtered %v", f)
	}
	var paths []string
	for _, d := range doc["domains"].([]any) {
		dm := d.(map[string]any)
		paths = append(paths, dm["path"].(string))
		if line := "  " + dm["path"].(string) + ": " + strings.Join(strs(dm["values"]), ", ") + "\n"; !strings.Contains(table, line) {
			t.Errorf("the table lacks the domain line %q", line)
		}
	}
	if !slices.Contains(paths, "engine.mode") || !slices.Contains(paths, "router.policy") {
		t.Errorf("domains %v", paths)
	}
	points := doc["points"].([]any)
	if len(points) != 4 {
		t.Fatalf("%d points, want --show 4", len(points))
	}
	for _, p := range points {
		pm := p.(map[string]any)
		line := fmt.Sprintf("  #%v %v %s: %v\n", pm["point_index"], pm["point_id"], results.Plural(int(pm["gpus"].(float64)), "GPU"), pm["label"])
		if !strings.Contains(table, line) || len(pm) != 4 {
			t.Errorf("point %v: the table lacks %q", pm, line)
		}
	}

	code, stdout, errs = runCLI(t, "sweep", "--dry-run", "--show", "2", "--shard", "1/4", "--format", "json")
	if code != exitOK || errs != "" {
		t.Fatalf("shard: exit %d, stderr %q", code, errs)
	}
	keys, sdoc := decodeOne(t, stdout)
	if !slices.Contains(keys, "shard") || len(keys) != 8 {
		t.Errorf("shard keys %v", keys)
	}
	sh := sdoc["shard"].(map[string]any)
	_, shTable, _ := runCLI(t, "sweep", "--dry-run", "--show", "2", "--shard", "1/4")
	line := fmt.Sprintf("shard 1/4 (from --shard 1/4): %v of %v selected points; spec hash %v", sh["points"], sdoc["selected_points"], sh["spec_hash"])
	if sh["index"] != 1.0 || sh["count"] != 4.0 || sh["source"] != "--shard 1/4" || !strings.Contains(shTable, line) {
		t.Errorf("shard %v; the table lacks %q:\n%s", sh, line, shTable)
	}
	for _, p := range sdoc["points"].([]any) {
		pm := p.(map[string]any)
		if !strings.Contains(shTable, fmt.Sprintf("  #%v %v ", pm["point_index"], pm["point_id"])) {
			t.Errorf("shard point %v is not in the table", pm)
		}
	}
	if len(sdoc["points"].([]any)) != 2 {
		t.Errorf("%d shard points, want 2", len(sdoc["points"].([]any)))
	}

	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"sweep", "--dry-run", "--format", "yaml"}, `--format must be table or json, got "yaml"`},
		{[]string{"report", "--results", "x", "--format", "csv"}, `--format must be table or json, got "csv"`},
		{[]string{"validate", "--measured", "x.csv", "--format", "JSON"}, `--format must be table or json, got "JSON"`},
		{[]string{"sweep", "--dry-run", "--show", "-1"}, "--show must be a whole number >= 0"},
		{[]string{"sweep", "--output-dir", ""}, "--output-dir must not be empty"},
		// Flags that would be ignored are refused rather than dropped.
		{[]string{"sweep", "--show", "3", "--output-dir", "unused"}, "--show lists the points of --dry-run"},
		{[]string{"sweep", "--dry-run", "--export", "vllm"}, "--dry-run simulates nothing to recommend"},
		{[]string{"sweep", "--dry-run", "--format", "json", "--set", "engine.backend={choices: [vllm, sglang]}"},
			"engine.backend: search domains are not allowed on this field"},
	} {
		code, stdout, errs := runCLI(t, tc.args...)
		if code != exitConfigError || stdout != "" || !strings.Contains(errs, tc.msg) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 2, nothing on stdout, %q", tc.args, code, stdout, errs, tc.msg)
		}
	}
}

// TestShardFormatJSON runs one shard of the tiny aggregated sweep with --format json: one object
// {counts, files, settings, shard}, whose files exist and whose counts are the shard's.
func TestShardFormatJSON(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sharded")
	code, stdout, errs := runCLI(t, append([]string{"sweep", "--output-dir", dir, "-q", "--shard", "0/2", "--format", "json"}, tinyAggregated...)...)
	if code != exitOK || withoutBurstWarning(errs) != "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	keys, doc := decodeOne(t, stdout)
	if !slices.Equal(keys, []string{"counts", "files", "settings", "shard"}) {
		t.Errorf("keys %v", keys)
	}
	sh, c := doc["shard"].(map[string]any), doc["counts"].(map[string]any)
	if sh["index"] != 0.0 || sh["count"] != 2.0 || c["simulated_points"] != sh["points"] || c["ok"] != sh["points"] ||
		c["selected_points"] != 80.0 || !(sh["points"].(float64) > 0) {
		t.Errorf("shard %v, counts %v", sh, c)
	}
	files := doc["files"].(map[string]any)
	want := map[string]any{"part": filepath.Join(dir, results.PartsDir, results.PartName(0, 2)),
		"journal": filepath.Join(dir, results.JournalsDir, results.PartJournalName(0, 2)),
		"probes":  filepath.Join(dir, results.ProbesDir, results.ProbesPartName(0, 2))}
	if !reflect.DeepEqual(files, want) {
		t.Errorf("files %v, want %v", files, want)
	}
	for _, p := range want {
		if _, err := os.Stat(p.(string)); err != nil {
			t.Error(err)
		}
	}
}

// TestValidateFormatJSON checks validate --format json: stdout is exactly the report
// --output-json writes (one JSON object) and no table; with no row simulated, exit 1 and nothing
// on stdout.
func TestValidateFormatJSON(t *testing.T) {
	dir := t.TempDir()
	csvPath := filepath.Join(dir, "measured.csv")
	if err := os.WriteFile(csvPath, []byte(measuredCSV), 0o644); err != nil {
		t.Fatal(err)
	}
	jsonPath := filepath.Join(dir, "report.json")
	code, stdout, errs := runCLI(t, "validate", "--measured", csvPath, "--output-json", jsonPath, "--format", "json")
	if code != exitOK || errs != "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	if file, _ := os.ReadFile(jsonPath); string(file) != stdout {
		t.Errorf("stdout differs from --output-json's file:\n%s\nwant\n%s", stdout, file)
	}
	keys, doc := decodeOne(t, stdout)
	if !slices.Equal(keys, []string{"rows", "summary"}) {
		t.Errorf("keys %v, want [rows summary]", keys)
	}
	rows, s := doc["rows"].([]any), doc["summary"].(map[string]any)
	if len(rows) != 2 || s["rows_simulated"] != 1.0 || s["rows_skipped"] != 1.0 || !(s["ttft_mape_pct"].(float64) >= 0) {
		t.Errorf("%d rows, summary %v", len(rows), s)
	}

	bad := filepath.Join(dir, "unsupported.csv")
	if err := os.WriteFile(bad, []byte(unsupportedCSV), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, errs = runCLI(t, "validate", "--measured", bad, "--format", "json")
	if code != exitRunFailure || stdout != "" || !strings.Contains(errs, "no row could be simulated") {
		t.Errorf("no row simulated: exit %d, stdout %q, stderr %q", code, stdout, errs)
	}
}

// A dry run counts the selected points that simulate as an earlier one (a reserve_gib of the
// default 1.5 GiB beside null), in the table with an example and in the JSON.
func TestSweepDryRunCountsEquivalentPoints(t *testing.T) {
	spec := filepath.Join(t.TempDir(), "twins.yaml")
	text := `traffic:
  source: {type: synthetic, input_tokens: {distribution: uniform, min: 512, max: 512}, output_tokens: {distribution: uniform, min: 64, max: 64}}
  load: {type: concurrency, concurrency: 4}
  stop: {requests: 40}
engine:
  model: meta-llama/Llama-3.1-8B
  hardware: h100_sxm
  backend: vllm
  workers:
    aggregated:
      parallelism: {tensor: {choices: [1, 2]}}
      kv_cache: {capacity: {type: default, reserve_gib: {choices: [null, 1.5]}}}
evaluation:
  sla: {ttft_ms: 500, itl_ms: 50}
`
	if err := os.WriteFile(spec, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	code, table, errs := runCLI(t, "sweep", "--dry-run", "-c", spec)
	if code != exitOK {
		t.Fatalf("exit %d %q", code, errs)
	}
	if table = strings.ReplaceAll(table, "\n  ", " "); !strings.Contains(table, "equivalent: 2 selected point(s) simulate as an earlier one (e.g. #1 ") {
		t.Errorf("the table does not count the twins:\n%s", table)
	}
	code, stdout, errs := runCLI(t, "sweep", "--dry-run", "-c", spec, "--format", "json")
	if code != exitOK {
		t.Fatalf("json: exit %d %q", code, errs)
	}
	if _, doc := decodeOne(t, stdout); doc["equivalent_points"] != 2.0 || doc["selected_points"] != 4.0 {
		t.Errorf("equivalent_points %v of %v selected, want 2 of 4", doc["equivalent_points"], doc["selected_points"])
	}
}

// withoutBurstWarning is stderr less the one warning the tiny sweeps' ramp_seconds 0 (tinyDefault's
// synchronized start, kept for speed) draws, which every one of them prints.
func withoutBurstWarning(stderr string) string {
	var kept []string
	for _, line := range strings.SplitAfter(stderr, "\n") {
		if !strings.Contains(line, "traffic.load.ramp_seconds: 0 sends every point's first wave at once") {
			kept = append(kept, line)
		}
	}
	return strings.Join(kept, "")
}
