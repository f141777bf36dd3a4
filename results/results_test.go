package results

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/servesweep/servesweep/sim/optimization"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/gofrs/flock"
	"github.com/parquet-go/parquet-go"
	"github.com/servesweep/servesweep/sim"
	"github.com/servesweep/servesweep/sim/config"
)

const smallConfig = `traffic:
  source: {type: synthetic, input_tokens: 256, output_tokens: 16}
  load: {type: concurrency, concurrency: 4}
  stop: {requests: 20}
engine:
  mode: aggregated
  model: meta-llama/Meta-Llama-3.1-8B-Instruct
  hardware: h200_sxm
  backend: vllm
  context_length: 4096
  workers:
    aggregated:
      parallelism: {replicas: 2, tensor: 2}
      kv_cache: {block_size: 16, capacity: {type: fixed, blocks: 512}}
      timing: {type: polynomial}
router: {policy: round_robin}
evaluation: {sla: {ttft_ms: 500, itl_ms: 50}}
`

// simulatedRow runs smallConfig (with --set overrides) and returns its row.
func simulatedRow(t *testing.T, id string, index int, sets ...string) Row {
	t.Helper()
	cfg, err := config.Decode([]byte(smallConfig), "small.yaml", sets)
	if err != nil {
		t.Fatal(err)
	}
	res, err := sim.Run(context.Background(), cfg, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	gpus := cfg.Engine.Workers.Aggregated.Parallelism.GPUs()
	rec := Record{PointID: id, Status: StatusOK, WallTimeMs: 1.5, Summary: SummaryValues(res.Summary)}
	return NewRow(PointInfo{ID: id, Index: index, Config: cfg, YAML: []byte(smallConfig), GPUs: gpus}, rec)
}

func TestNewRowCarriesConfigAndMetrics(t *testing.T) {
	r := simulatedRow(t, "abc", 3)
	if r.Mode != "aggregated" || r.GPUs != 4 || *r.AggReplicas != 2 || *r.AggTensor != 2 || *r.AggGPUs != 4 {
		t.Errorf("config columns wrong: mode %s gpus %d replicas %v tensor %v", r.Mode, r.GPUs, *r.AggReplicas, *r.AggTensor)
	}
	if r.PrefillReplicas != nil || r.DecodeTensor != nil {
		t.Error("roles the mode does not use must be null")
	}
	if r.LoadConcurrency == nil || *r.LoadConcurrency != 4 || r.LoadSpeedup != nil || r.LoadRampSeconds != nil {
		t.Errorf("load columns wrong: %v %v %v", r.LoadConcurrency, r.LoadSpeedup, r.LoadRampSeconds)
	}
	if r.WarmupSeconds != nil || r.WarmupRequests != nil || r.SteadyWindowMs != nil {
		t.Errorf("warm-up columns of a run without one: %v %v %v; want null", r.WarmupSeconds, r.WarmupRequests, r.SteadyWindowMs)
	}
	if ramped := simulatedRow(t, "ramped", 4, "traffic.load.ramp_seconds=0"); ramped.LoadRampSeconds == nil || *ramped.LoadRampSeconds != 0 {
		t.Errorf("load_ramp_seconds of an explicit ramp_seconds: 0 is %v, want 0", ramped.LoadRampSeconds)
	}
	if r.CompletedRequests == nil || *r.CompletedRequests != 20 || r.P99TTFTMs == nil || *r.P99TTFTMs <= 0 {
		t.Fatalf("metric columns not filled: completed %v p99 TTFT %v", r.CompletedRequests, r.P99TTFTMs)
	}
	if r.GoodputCompletedRequests == nil {
		t.Error("goodput columns must be set when the config has an SLA")
	}
	// A static pool of 4 GPUs: avg_gpus is 4 and per-GPU throughput a quarter of the total.
	if d := *r.AvgGPUs - 4; d*d > 1e-18 {
		t.Errorf("avg_gpus = %v, want 4", *r.AvgGPUs)
	}
	if d := *r.OutputThroughputPerGPUTokS*4 - *r.OutputThroughputTokS; d*d > 1e-12 {
		t.Errorf("per-GPU throughput %v is not a quarter of %v", *r.OutputThroughputPerGPUTokS, *r.OutputThroughputTokS)
	}
	failed := NewRow(PointInfo{ID: "x", Config: nil}, Record{PointID: "x", Status: StatusFailed, Reason: "panic: boom"})
	if failed.P99TTFTMs != nil || failed.CompletedRequests != nil || failed.Reason != "panic: boom" {
		t.Error("a failed row must have null metrics and keep its reason")
	}
}

// TestInteractivityIsOneOverMedianTPOT checks interactivity_tok_s_per_user by hand: a median
// TPOT of 12.5 ms is 1000 / 12.5 = 80 output tokens/s per user, whatever the per-gap rates say
// (here a mean of 1000 / gap of 95 tokens/s, as when a few long stalls sit among short decode
// steps); it is null without a TPOT sample, with a median of 0 ms, and for a point where no
// request completed, and survives a Parquet round trip.
func TestInteractivityIsOneOverMedianTPOT(t *testing.T) {
	row := func(summary map[string]float64) Row {
		base := map[string]float64{"num_requests": 10, "offered_requests": 10, "completed_requests": 10,
			"duration_ms": 2000, "gpu_hours": 8 * 2.0 / 3600, "output_throughput_tok_s": 5000}
		for k, v := range summary {
			base[k] = v
		}
		return NewRow(PointInfo{ID: "i", GPUs: 8}, Record{PointID: "i", Status: StatusOK, Summary: base})
	}
	r := row(map[string]float64{"num_tpot_samples": 10, "median_tpot_ms": 12.5, "mean_tpot_ms": 14,
		"num_itl_samples": 1000, "mean_output_token_throughput_per_user": 95})
	if r.InteractivityTokSPerUser == nil || *r.InteractivityTokSPerUser != 80 {
		t.Errorf("interactivity at a median TPOT of 12.5 ms = %v, want 80 tokens/s per user", r.InteractivityTokSPerUser)
	}
	path := filepath.Join(t.TempDir(), ParquetFile)
	if err := WriteParquet(path, []Row{r}); err != nil {
		t.Fatal(err)
	}
	back, err := ReadParquet(path)
	if err != nil || len(back) != 1 || back[0].InteractivityTokSPerUser == nil || *back[0].InteractivityTokSPerUser != 80 {
		t.Fatalf("round trip: %v %+v", err, back)
	}
	for name, summary := range map[string]map[string]float64{
		"no TPOT sample (one output token each)": {"num_tpot_samples": 0, "median_tpot_ms": 0},
		"a median TPOT of 0 ms":                  {"num_tpot_samples": 10, "median_tpot_ms": 0},
		"no completed request":                   {"completed_requests": 0, "num_tpot_samples": 0, "median_tpot_ms": 0},
	} {
		if got := row(summary).InteractivityTokSPerUser; got != nil {
			t.Errorf("%s: interactivity = %v, want null", name, *got)
		}
	}
	if err := CheckMetric("interactivity_tok_s_per_user"); err != nil {
		t.Errorf("interactivity_tok_s_per_user is not an objective metric: %v", err)
	}
}

// TestEverySummaryKeyHasAColumn checks that every prediction.json key has a results.parquet
// column, also the keys only some runs write (speculative decoding, an agentic trace's
// trajectories), and that a row carries those runs' values.
func TestEverySummaryKeyHasAColumn(t *testing.T) {
	var keys []string
	for _, c := range Columns() {
		if c.SummaryKey != "" {
			keys = append(keys, c.SummaryKey)
		}
	}
	agentic := []string{"traffic={source: {type: trace, format: agentic_mooncake, paths: [../sim/traffic/testdata/agentic.jsonl], block_size: 16}, " +
		"load: {type: trace_timestamps}, stop: {}}"}
	for _, run := range []struct {
		name string
		sets []string
		want map[string]float64 // values the row must carry
	}{
		{"plain", nil, nil},
		{"speculation", []string{"engine.speculation={kind: ngram, num_speculative_tokens: 2, acceptance_rates: [0.7, 0.5], seed: 42}"},
			map[string]float64{"num_speculative_rounds": -1, "num_draft_tokens": -1, "num_accepted_draft_tokens": -1, "mean_accepted_length": -1}},
		{"agentic", agentic, map[string]float64{"total_trajectories": 2, "completed_trajectories": 2, "incomplete_trajectories": 0}},
		// A 1 ms warm-up leaves out exactly the first wave: the 4 requests that start at 0.
		{"warm-up", []string{"traffic.load.warmup_seconds=0.001"},
			map[string]float64{"warmup_seconds": 0.001, "warmup_requests": 4, "steady_window_ms": -1, "num_requests": 16}},
	} {
		cfg, err := config.Decode([]byte(smallConfig), "small.yaml", run.sets)
		if err != nil {
			t.Fatalf("%s: %v", run.name, err)
		}
		res, err := sim.Run(context.Background(), cfg, sim.Options{})
		if err != nil {
			t.Fatalf("%s: %v", run.name, err)
		}
		for k := range res.Summary.Map() {
			switch k {
			case "power_w", "power_coverage", "wall_time_ms": // no power model; wall time is measured by the sweep
				continue
			}
			if !slices.Contains(keys, k) && !slices.ContainsFunc(keys, func(c string) bool { return strings.HasPrefix(c, k+".") }) {
				t.Errorf("%s: prediction.json key %s has no results.parquet column", run.name, k)
			}
		}
		summary := SummaryValues(res.Summary)
		row := NewRow(PointInfo{ID: run.name, Config: cfg, YAML: []byte(smallConfig), GPUs: 4},
			Record{PointID: run.name, Status: StatusOK, Summary: summary})
		for k, want := range run.want {
			got, present, known := numericValue(&row, columnFor(t, k))
			if !known || !present || (want >= 0 && got != want) || got != summary[k] {
				t.Errorf("%s: column for %s = %v (present %v); want the summary's %v", run.name, k, got, present, summary[k])
			}
		}
	}
}

// columnFor returns the results.parquet column of the summary key k.
func columnFor(t *testing.T, k string) string {
	t.Helper()
	for _, c := range Columns() {
		if c.SummaryKey == k {
			return c.Name
		}
	}
	t.Fatalf("no column for summary key %s", k)
	return ""
}

// TestSchemaDocumented checks that doc.go names every column (the latency statistics as the
// {mean,...}_{family} pattern).
func TestSchemaDocumented(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	stat := regexp.MustCompile(`^(mean|min|max|median|p75|p90|p95|p99|std)_(ttft_ms|ttst_ms|tpot_ms|itl_ms|e2e_latency_ms|output_token_throughput_per_user_tok_s|trajectory_e2e_latency_ms)$`)
	role := regexp.MustCompile(`^(agg|prefill|decode)(_.*)$`)
	for _, c := range Columns() {
		name := c.Name
		if stat.MatchString(name) {
			continue
		}
		if m := role.FindStringSubmatch(name); m != nil && !strings.Contains(name, "gpus_per_worker") && !strings.Contains(name, "worker_seconds") {
			name = m[2]
		}
		if !bytes.Contains(doc, []byte(name)) {
			t.Errorf("column %s is not documented in doc.go", c.Name)
		}
	}
}

func TestParquetRoundTrip(t *testing.T) {
	rows := []Row{simulatedRow(t, "aaa", 0), simulatedRow(t, "bbb", 1, "engine.workers.aggregated.parallelism.replicas=1"),
		NewRow(PointInfo{ID: "ccc", Index: 2}, Record{PointID: "ccc", Status: StatusFailed, Reason: "panic: boom", WallTimeMs: 2})}
	path := filepath.Join(t.TempDir(), ParquetFile)
	if err := WriteParquet(path, rows); err != nil {
		t.Fatal(err)
	}
	got, err := ReadParquet(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, rows) {
		t.Fatalf("read back %d rows that differ from the %d written", len(got), len(rows))
	}
	// The file's schema has the documented names and nullability, read with the generic reader.
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	if pf.NumRows() != 3 {
		t.Errorf("NumRows = %d, want 3", pf.NumRows())
	}
	fields := pf.Schema().Fields()
	if len(fields) != len(Columns()) {
		t.Errorf("schema has %d columns, Columns() %d", len(fields), len(Columns()))
	}
	for i, c := range Columns() {
		if fields[i].Name() != c.Name || fields[i].Optional() != c.Optional {
			t.Errorf("column %d: file has %s (optional %v), want %s (optional %v)", i, fields[i].Name(), fields[i].Optional(), c.Name, c.Optional)
		}
	}
}

// TestParquetRecordsResolvedIDs checks that results.parquet records the catalog ids an alias
// resolves to (hardware h200 → h200_sxm, model mistralai/Mistral-7B →
// mistralai/Mistral-7B-Instruct-v0.3), and other names as given.
func TestParquetRecordsResolvedIDs(t *testing.T) {
	rows := []Row{
		simulatedRow(t, "aaa", 0, "engine.hardware=h200", "engine.model=mistralai/Mistral-7B"),
		simulatedRow(t, "bbb", 1, "engine.hardware=a100"),
		simulatedRow(t, "ccc", 2, "engine.hardware=my_gpu", "engine.model=acme/Unknown-7B"),
	}
	path := filepath.Join(t.TempDir(), ParquetFile)
	if err := WriteParquet(path, rows); err != nil {
		t.Fatal(err)
	}
	got, err := ReadParquet(path)
	if err != nil {
		t.Fatal(err)
	}
	want := [][2]string{
		{"h200_sxm", "mistralai/Mistral-7B-Instruct-v0.3"},
		{"a100_sxm", "meta-llama/Meta-Llama-3.1-8B-Instruct"},
		{"my_gpu", "acme/Unknown-7B"},
	}
	if len(got) != len(want) {
		t.Fatalf("read %d rows, want %d", len(got), len(want))
	}
	for i, r := range got {
		if r.Hardware != want[i][0] || r.Model != want[i][1] {
			t.Errorf("row %s: hardware %q, model %q; want %q, %q", r.PointID, r.Hardware, r.Model, want[i][0], want[i][1])
		}
	}
}

func TestJournalResumeAndTornTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), JournalFile)
	j, recs, err := OpenJournal(path)
	if err != nil || len(recs) != 0 {
		t.Fatalf("new journal: %v, %d records", err, len(recs))
	}
	for _, r := range []Record{
		{PointID: "a", Status: StatusTimedOut, Reason: "slow"},
		{PointID: "b", Status: StatusOK, Summary: map[string]float64{"p99_ttft_ms": 12.5}},
		{PointID: "a", Status: StatusOK, Summary: map[string]float64{"p99_ttft_ms": 3}},
	} {
		if err := j.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	j.Close()
	// A crash mid-write leaves a line without its newline.
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"point_id":"c","status":"o`)
	f.Close()
	j, recs, err = OpenJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || recs["a"].Status != StatusOK || recs["b"].Summary["p99_ttft_ms"] != 12.5 {
		t.Errorf("records = %+v; want a (last record wins: ok) and b", recs)
	}
	if err := j.Append(Record{PointID: "c", Status: StatusFailed, Reason: "x"}); err != nil {
		t.Fatal(err)
	}
	j.Close()
	j, recs, err = OpenJournal(path)
	if err != nil || recs["c"].Status != StatusFailed || len(recs) != 3 {
		t.Fatalf("after truncating the torn tail and appending: %v, %+v", err, recs)
	}
	j.Close()
	if !(Record{Status: StatusFailed}).Finished() || (Record{Status: StatusTimedOut}).Finished() {
		t.Error("failed points are final, timed-out ones are retried")
	}
	// A corrupt line in the middle is an error naming the line.
	os.WriteFile(path, []byte("{\"point_id\":\"a\",\"status\":\"failed\"}\nnot json\n{\"point_id\":\"b\",\"status\":\"failed\"}\n"), 0o644)
	if _, _, err := OpenJournal(path); err == nil || !strings.Contains(err.Error(), ":2:") {
		t.Errorf("corrupt journal: err = %v, want one naming line 2", err)
	}
}

func TestWriteOutputsRecommendationsDecode(t *testing.T) {
	dir := t.TempDir()
	rows := []Row{simulatedRow(t, "aaa", 0), simulatedRow(t, "bbb", 1, "engine.workers.aggregated.parallelism.replicas=1"),
		simulatedRow(t, "ccc", 2, "engine.workers.aggregated.parallelism.tensor=1")}
	for i := range rows { // give each row its own config text, as a sweep does
		rows[i].ConfigYAML = strings.Replace(smallConfig, "replicas: 2, tensor: 2",
			[]string{"replicas: 2, tensor: 2", "replicas: 1, tensor: 2", "replicas: 2, tensor: 1"}[i], 1)
	}
	// Stale files from an earlier report are replaced; other files are kept.
	os.MkdirAll(filepath.Join(dir, RecommendationsDir), 0o755)
	os.WriteFile(filepath.Join(dir, RecommendationsDir, "0099.yaml"), []byte("old"), 0o644)
	os.WriteFile(filepath.Join(dir, RecommendationsDir, "notes.txt"), []byte("mine"), 0o644)
	m := &Manifest{Spec: "test.yaml", Algorithm: "grid", Settings: optimization.Settings{Target: optimization.TargetPareto, Objectives: optimization.DefaultObjectives()},
		Counts: Counts{GridPoints: 3, ValidPoints: 3, SelectedPoints: 3}}
	a, w, err := WriteOutputs(dir, rows, m)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Front) == 0 || len(w.Recommendations) != len(a.Front) {
		t.Fatalf("front %v, recommendations %v", a.Front, w.Recommendations)
	}
	for _, p := range w.Recommendations {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := config.Decode(data, p, nil); err != nil {
			t.Errorf("recommendation %s does not decode: %v", p, err)
		}
	}
	// pareto.json holds exactly the bytes of ParetoDocument, which names each front point's
	// recommendation file.
	doc, err := ParetoDocument(rows, a, m, w.RecommendedRows)
	if err != nil {
		t.Fatal(err)
	}
	if onDisk, _ := os.ReadFile(w.Pareto); !bytes.Equal(onDisk, doc) {
		t.Errorf("pareto.json differs from ParetoDocument:\n%s\nwant\n%s", onDisk, doc)
	}
	first := fmt.Sprintf(`"point_id": %q,`, rows[a.Front[0]].PointID)
	if !bytes.Contains(doc, []byte(first)) || !bytes.Contains(doc, []byte(`"recommendation": "recommendations/0001.yaml"`)) {
		t.Errorf("the document lacks the first front point %s or its recommendation:\n%s", rows[a.Front[0]].PointID, doc)
	}
	// Each entry names its hardware as report.md does, so entries of one shape on two GPUs differ.
	if hw := fmt.Sprintf("%s\n      \"hardware\": %q,", first, Hardware(&rows[a.Front[0]])); !bytes.Contains(doc, []byte(hw)) {
		t.Errorf("the first front entry lacks its hardware %q:\n%s", Hardware(&rows[a.Front[0]]), doc)
	}
	if _, err := os.Stat(filepath.Join(dir, RecommendationsDir, "0099.yaml")); !os.IsNotExist(err) {
		t.Error("stale recommendation 0099.yaml was not removed")
	}
	if _, err := os.Stat(filepath.Join(dir, RecommendationsDir, "notes.txt")); err != nil {
		t.Error("a user file in recommendations/ was removed")
	}
	for _, name := range []string{ParquetFile, ManifestFile, ParetoFile, ReportFile, PlotFile} {
		if st, err := os.Stat(filepath.Join(dir, name)); err != nil || st.Size() == 0 {
			t.Errorf("%s missing or empty: %v", name, err)
		}
	}
	png, _ := os.ReadFile(filepath.Join(dir, PlotFile))
	if !bytes.HasPrefix(png, []byte("\x89PNG")) {
		t.Error("the plot is not a PNG")
	}
	report, _ := os.ReadFile(filepath.Join(dir, ReportFile))
	for _, want := range []string{"## Pareto front", "## Best point per objective", "`" + rows[a.Front[0]].PointID + "`", "pareto.png"} {
		if !bytes.Contains(report, []byte(want)) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	back, err := ReadManifest(dir)
	if err != nil || back == nil || back.Settings.Target != optimization.TargetPareto || len(back.Settings.Objectives) != 3 {
		t.Errorf("manifest round trip: %+v, %v", back, err)
	}
	wantFiles := []string{ParetoFile, ReportFile, PlotFile, HTMLFile}
	for i := range w.Recommendations {
		wantFiles = append(wantFiles, fmt.Sprintf("%s/%04d.yaml", RecommendationsDir, i+1))
	}
	if got, err := ReportFilesIn(dir); err != nil || !slices.Equal(got, wantFiles) {
		t.Errorf("ReportFilesIn = %v, %v; want %v", got, err, wantFiles)
	}
	if err := RemoveOutputs(dir); err != nil {
		t.Fatal(err)
	}
	if got, err := ReportFilesIn(dir); err != nil || len(got) != 0 {
		t.Errorf("after RemoveOutputs, ReportFilesIn = %v, %v; want none", got, err)
	}
	if got, err := ReportFilesIn(filepath.Join(dir, "missing")); err != nil || len(got) != 0 {
		t.Errorf("a missing directory: ReportFilesIn = %v, %v; want none", got, err)
	}
	if _, err := os.Stat(filepath.Join(dir, ParquetFile)); !os.IsNotExist(err) {
		t.Error("RemoveOutputs left results.parquet")
	}
	if _, err := os.Stat(filepath.Join(dir, RecommendationsDir, "notes.txt")); err != nil {
		t.Error("RemoveOutputs removed a user file")
	}
}

// TestWriteReportWithoutCandidates: a sweep whose points all failed still gets a report, a plot
// and no recommendation.
func TestWriteReportWithoutCandidates(t *testing.T) {
	dir := t.TempDir()
	rows := []Row{NewRow(PointInfo{ID: "aaa"}, Record{PointID: "aaa", Status: StatusFailed, Reason: "boom"})}
	a, w, err := WriteOutputs(dir, rows, &Manifest{Settings: optimization.Settings{Target: optimization.TargetPareto}})
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Front) != 0 || len(w.Recommendations) != 0 || a.Excluded[ExcludedFailed] != 1 {
		t.Errorf("front %v recommendations %v excluded %v", a.Front, w.Recommendations, a.Excluded)
	}
	report, _ := os.ReadFile(filepath.Join(dir, ReportFile))
	if !strings.Contains(string(report), "No candidate point") {
		t.Errorf("report.md:\n%s", report)
	}
	if _, _, err := WriteOutputs(dir, nil, &Manifest{}); err != nil {
		t.Errorf("no rows at all: %v", err)
	}
}

// TestJournalLock checks that a journal has one writer at a time: a second open while the first
// is open is refused with a *JournalLockedError (as for another process: flock locks belong to
// the open file), and succeeds once the first is closed.
func TestJournalLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), JournalFile)
	j, _, err := OpenJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = OpenJournal(path)
	var le *JournalLockedError
	if !errors.As(err, &le) || le.Path != path || !strings.Contains(err.Error(), "another servesweep process is writing it") {
		t.Fatalf("second open: err = %v, want a *JournalLockedError", err)
	}
	if err := CheckJournalUnlocked(path); !errors.As(err, &le) {
		t.Errorf("CheckJournalUnlocked while open: %v", err)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	if err := CheckJournalUnlocked(path); err != nil {
		t.Errorf("CheckJournalUnlocked after close: %v", err)
	}
	j2, _, err := OpenJournal(path)
	if err != nil {
		t.Fatalf("open after the first closed: %v", err)
	}
	j2.Close()
}

// TestJournalLockOutcomes checks how a lock attempt's outcome is mapped: a lock held elsewhere
// is a *JournalLockedError naming the journal, a file system without lock support (ENOSYS,
// EOPNOTSUPP, ENOLCK, EINVAL, errors.ErrUnsupported, also wrapped) gives no lock and no error so
// the journal opens unlocked, an interrupted call is retried, and any other error is returned
// naming the lock file.
func TestJournalLockOutcomes(t *testing.T) {
	path := filepath.Join(t.TempDir(), JournalFile)
	lock := flock.New(path + LockSuffix)
	fail := func(err error) func(*flock.Flock) (bool, error) {
		return func(*flock.Flock) (bool, error) { return false, err }
	}
	for _, err := range []error{syscall.ENOSYS, syscall.EOPNOTSUPP, syscall.ENOLCK, syscall.EINVAL, errors.ErrUnsupported,
		&fs.PathError{Op: "flock", Path: path + LockSuffix, Err: syscall.ENOLCK}} {
		if got, gotErr := acquireLock(lock, fail(err)); got != nil || gotErr != nil {
			t.Errorf("%v: lock %v, error %v; want no lock and no error (open unlocked)", err, got, gotErr)
		}
	}
	_, err := acquireLock(lock, fail(nil))
	var le *JournalLockedError
	if !errors.As(err, &le) || le.Path != path {
		t.Errorf("held elsewhere: %v, want a *JournalLockedError for %s", err, path)
	}
	_, err = acquireLock(lock, fail(syscall.EIO))
	if !errors.Is(err, syscall.EIO) || errors.As(err, &le) || !strings.Contains(err.Error(), "locking "+path+LockSuffix+": ") {
		t.Errorf("EIO: %v, want an error naming %s", err, path+LockSuffix)
	}
	calls := 0
	got, err := acquireLock(lock, func(*flock.Flock) (bool, error) {
		if calls++; calls < 3 {
			return false, syscall.EINTR
		}
		return true, nil
	})
	if got != lock || err != nil || calls != 3 {
		t.Errorf("EINTR twice then locked: lock %v, error %v after %d calls; want the lock after 3 calls", got, err, calls)
	}
}

// TestNoSamplesRow checks that an ok point where no request completed keeps status ok but gets
// the no_samples reason and null latency and throughput columns (not 0, which would sort first),
// keeps its counts and duration, survives a Parquet round trip, and stays off the front.
func TestNoSamplesRow(t *testing.T) {
	rec := Record{PointID: "z", Status: StatusOK, Summary: map[string]float64{
		"num_requests": 8, "completed_requests": 0, "duration_ms": 1000, "gpu_hours": 1.0 / 3600,
		"p99_ttft_ms": 0, "mean_tpot_ms": 0, "mean_e2e_latency_ms": 0, "p99_itl_ms": 0,
		"output_throughput_tok_s": 0, "request_throughput_rps": 0, "mean_output_token_throughput_per_user": 0,
		"processed_tokens_per_s": 5}}
	r := NewRow(PointInfo{ID: "z", GPUs: 1}, rec)
	if r.Status != StatusOK || r.Reason != NoSamplesReason || !strings.HasPrefix(r.Reason, "no_samples") {
		t.Errorf("status %q reason %q", r.Status, r.Reason)
	}
	for name, p := range map[string]*float64{"p99_ttft_ms": r.P99TTFTMs, "mean_tpot_ms": r.MeanTPOTMs, "mean_e2e_latency_ms": r.MeanE2ELatencyMs,
		"p99_itl_ms": r.P99ITLMs, "output_throughput_tok_s": r.OutputThroughputTokS, "request_throughput_rps": r.RequestThroughputRPS,
		"mean_output_token_throughput_per_user_tok_s": r.MeanOutputTokenThroughputPerUser,
		"output_throughput_per_gpu_tok_s":             r.OutputThroughputPerGPUTokS} {
		if p != nil {
			t.Errorf("%s = %v, want null", name, *p)
		}
	}
	if r.CompletedRequests == nil || *r.CompletedRequests != 0 || r.NumRequests == nil || *r.NumRequests != 8 ||
		r.DurationMs == nil || r.AvgGPUs == nil || r.ProcessedTokensPerS == nil {
		t.Error("counts, duration, avg_gpus and host-time columns must be kept")
	}
	path := filepath.Join(t.TempDir(), ParquetFile)
	if err := WriteParquet(path, []Row{r}); err != nil {
		t.Fatal(err)
	}
	back, err := ReadParquet(path)
	if err != nil || len(back) != 1 || back[0].P99TTFTMs != nil || back[0].Reason != NoSamplesReason {
		t.Fatalf("round trip: %v %+v", err, back)
	}
	a, err := Analyze([]Row{r}, optimization.Settings{Target: optimization.TargetPareto})
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Candidates) != 0 || a.Excluded[ExcludedNoSamples] != 1 {
		t.Errorf("candidates %v excluded %v; want the row excluded as no_samples", a.Candidates, a.Excluded)
	}
}

// TestTrajectoryLatencyNullWithoutCompletedTrajectory checks that an agentic run whose requests
// completed but none of whose trajectories did has null trajectory latencies (prediction.json's
// 0.0 for an empty population), while a completed trajectory's are kept.
func TestTrajectoryLatencyNullWithoutCompletedTrajectory(t *testing.T) {
	summary := func(completed float64) map[string]float64 {
		return map[string]float64{"completed_requests": 3, "num_e2e_latency_samples": 3, "mean_e2e_latency_ms": 20, "duration_ms": 100,
			"total_trajectories": 2, "completed_trajectories": completed, "incomplete_trajectories": 2 - completed,
			"p99_trajectory_e2e_latency_ms": 40 * completed, "p50_trajectory_e2e_latency_ms": 40 * completed}
	}
	none := NewRow(PointInfo{ID: "a", GPUs: 1}, Record{PointID: "a", Status: StatusOK, Summary: summary(0)})
	if none.P99TrajectoryE2ELatencyMs != nil || none.P50TrajectoryE2ELatencyMs != nil || none.MeanE2ELatencyMs == nil ||
		none.CompletedTrajectories == nil || *none.CompletedTrajectories != 0 {
		t.Errorf("no completed trajectory: p99 %v p50 %v (want null), request E2E %v and count %v kept",
			none.P99TrajectoryE2ELatencyMs, none.P50TrajectoryE2ELatencyMs, none.MeanE2ELatencyMs, none.CompletedTrajectories)
	}
	one := NewRow(PointInfo{ID: "b", GPUs: 1}, Record{PointID: "b", Status: StatusOK, Summary: summary(1)})
	if one.P99TrajectoryE2ELatencyMs == nil || *one.P99TrajectoryE2ELatencyMs != 40 {
		t.Errorf("one completed trajectory: p99 %v, want 40", one.P99TrajectoryE2ELatencyMs)
	}
}

// TestRejectedWithoutSamplesKeepsItsReason checks that a point whose every request was rejected
// is degraded with the rejections first in its reason, then no_samples, and null metrics.
func TestRejectedWithoutSamplesKeepsItsReason(t *testing.T) {
	rec := Record{PointID: "r", Status: StatusOK, Summary: map[string]float64{
		"num_requests": 8, "offered_requests": 8, "rejected_requests": 8, "rejected_requests_by_reason.context_length": 8,
		"completed_requests": 0, "duration_ms": 1000, "p99_ttft_ms": 0, "output_throughput_tok_s": 0}}
	r := NewRow(PointInfo{ID: "r", GPUs: 1}, rec)
	want := "rejected_requests: 8 of 8 offered requests rejected (context_length 8); " + NoSamplesReason
	if r.Status != StatusDegraded || r.Reason != want {
		t.Errorf("status %q reason %q; want degraded, %q", r.Status, r.Reason, want)
	}
	if r.P99TTFTMs != nil || r.OutputThroughputTokS != nil {
		t.Errorf("metrics kept: p99 TTFT %v, throughput %v; want null", r.P99TTFTMs, r.OutputThroughputTokS)
	}
	// Some rejected, the rest completed in 0 ms: degraded, rejections first, then zero_duration.
	zero := NewRow(PointInfo{ID: "z", GPUs: 1}, Record{PointID: "z", Status: StatusOK, Summary: map[string]float64{
		"num_requests": 8, "offered_requests": 8, "rejected_requests": 2, "rejected_requests_by_reason.context_length": 2,
		"completed_requests": 6, "duration_ms": 0, "output_throughput_tok_s": 1e12}})
	if want := "rejected_requests: 2 of 8 offered requests rejected (context_length 2); " + ZeroDurationReason; zero.Status != StatusDegraded ||
		zero.Reason != want || zero.OutputThroughputTokS != nil {
		t.Errorf("status %q reason %q throughput %v; want degraded, %q, null", zero.Status, zero.Reason, zero.OutputThroughputTokS, want)
	}
}

// TestZeroDurationRow checks that an ok point whose requests all completed at 0 ms (every pass
// took 0 ms) keeps status ok but gets the zero_duration reason and null throughput columns
// instead of completed / 1e-9 s (100 requests × 128 tokens would read 1.28e13 tokens/s), keeps
// its counts and 0 ms latencies, survives a Parquet round trip, and stays off the front even when
// every objective is a latency.
func TestZeroDurationRow(t *testing.T) {
	rec := Record{PointID: "zd", Status: StatusOK, Summary: map[string]float64{
		"num_requests": 100, "completed_requests": 100, "total_output_tokens": 12800, "duration_ms": 0, "gpu_hours": 0,
		"p99_ttft_ms": 0, "mean_e2e_latency_ms": 0, "p99_itl_ms": 0, "mean_tpot_ms": 0,
		"output_throughput_tok_s": 1.28e13, "request_throughput_rps": 1e11, "input_throughput_tok_s": 2.048e14,
		"total_throughput_tok_s": 2.176e14, "mean_output_token_throughput_per_user": 0, "goodput_output_throughput_tok_s": 1.28e13,
		"processed_tokens_per_s": 5}}
	r := NewRow(PointInfo{ID: "zd", GPUs: 2}, rec)
	if r.Status != StatusOK || r.Reason != ZeroDurationReason || !strings.HasPrefix(r.Reason, "zero_duration") {
		t.Errorf("status %q reason %q", r.Status, r.Reason)
	}
	for name, p := range map[string]*float64{"output_throughput_tok_s": r.OutputThroughputTokS, "request_throughput_rps": r.RequestThroughputRPS,
		"input_throughput_tok_s": r.InputThroughputTokS, "total_throughput_tok_s": r.TotalThroughputTokS,
		"goodput_output_throughput_tok_s":             r.GoodputOutputThroughputTokS,
		"mean_output_token_throughput_per_user_tok_s": r.MeanOutputTokenThroughputPerUser,
		"output_throughput_per_gpu_tok_s":             r.OutputThroughputPerGPUTokS} {
		if p != nil {
			t.Errorf("%s = %v, want null", name, *p)
		}
	}
	for name, p := range map[string]*float64{"p99_ttft_ms": r.P99TTFTMs, "mean_e2e_latency_ms": r.MeanE2ELatencyMs, "p99_itl_ms": r.P99ITLMs,
		"duration_ms": r.DurationMs, "processed_tokens_per_s": r.ProcessedTokensPerS} {
		if p == nil {
			t.Errorf("%s is null, want kept", name)
		}
	}
	if r.CompletedRequests == nil || *r.CompletedRequests != 100 || r.TotalOutputTokens == nil || *r.TotalOutputTokens != 12800 {
		t.Error("counts must be kept")
	}
	path := filepath.Join(t.TempDir(), ParquetFile)
	if err := WriteParquet(path, []Row{r}); err != nil {
		t.Fatal(err)
	}
	back, err := ReadParquet(path)
	if err != nil || len(back) != 1 || back[0].OutputThroughputTokS != nil || back[0].P99TTFTMs == nil || back[0].Reason != ZeroDurationReason {
		t.Fatalf("round trip: %v %+v", err, back)
	}
	for _, s := range []optimization.Settings{{Target: optimization.TargetPareto}, {Target: optimization.TargetPareto, Objectives: []optimization.Objective{{Metric: "p99_ttft_ms", Direction: optimization.Minimize}, {Metric: "gpus", Direction: optimization.Minimize}}}} {
		a, err := Analyze(back, s)
		if err != nil {
			t.Fatal(err)
		}
		if len(a.Candidates) != 0 || len(a.Front) != 0 || a.Excluded[ExcludedZeroDuration] != 1 {
			t.Errorf("objectives %v: candidates %v excluded %v; want the row excluded as zero_duration", s.Objectives, a.Candidates, a.Excluded)
		}
	}

	// The same point with a 1 ms duration is an ordinary candidate with its throughputs.
	rec.Summary["duration_ms"] = 1
	r = NewRow(PointInfo{ID: "zd", GPUs: 2}, rec)
	if r.Reason != "" || r.OutputThroughputTokS == nil {
		t.Fatalf("1 ms run: reason %q, output throughput %v", r.Reason, r.OutputThroughputTokS)
	}
}

// Columns record what the run used: the kv_router knobs with their defaults (1, 1, 0) when the
// YAML leaves them out, null under round_robin; the KV capacity a `default` capacity derives
// (the same count the simulator sizes its pool with); null, not 0, for the per-role summary
// columns of the prefill role aggregated serving does not have, and for an empty reason.
func TestColumnsRecordValuesInEffect(t *testing.T) {
	r := simulatedRow(t, "kv", 0, "router.policy=kv_router")
	if r.RouterOverlapScoreCredit == nil || *r.RouterOverlapScoreCredit != 1 || *r.RouterPrefillLoadScale != 1 || *r.RouterTemperature != 0 {
		t.Errorf("kv_router knobs %v %v %v, want 1 1 0", r.RouterOverlapScoreCredit, r.RouterPrefillLoadScale, r.RouterTemperature)
	}
	if rr := simulatedRow(t, "rr", 1); rr.RouterOverlapScoreCredit != nil || rr.RouterTemperature != nil || rr.RouterSeed != nil {
		t.Error("round_robin has no kv_router knobs and draws nothing: the columns must be null")
	}
	// The router's seed: 42 unset, its value set, under the policies that draw.
	if r.RouterSeed == nil || *r.RouterSeed != 42 {
		t.Errorf("kv_router's router_seed %v, want the default 42", r.RouterSeed)
	}
	if rs := simulatedRow(t, "rs", 3, "router={policy: random, seed: 7}"); rs.RouterSeed == nil || *rs.RouterSeed != 7 {
		t.Errorf("router_seed %v, want 7", rs.RouterSeed)
	}
	cfg, err := config.Decode([]byte(smallConfig), "small.yaml", []string{"engine.workers.aggregated.kv_cache.capacity={type: default}"})
	if err != nil {
		t.Fatal(err)
	}
	want, err := sim.CapacityBlocks(cfg, config.RoleAggregated)
	if err != nil || want <= 0 {
		t.Fatalf("derived capacity %d, %v", want, err)
	}
	d := simulatedRow(t, "dflt", 2, "engine.workers.aggregated.kv_cache.capacity={type: default}")
	if d.AggKVCapacityBlocks == nil || *d.AggKVCapacityBlocks != int64(want) {
		t.Errorf("agg_kv_capacity_blocks %v, want the derived %d", d.AggKVCapacityBlocks, want)
	}
	if r.PrefillWorkerSeconds != nil || r.PrefillGPUsPerWorker != nil || r.DecodeWorkerSeconds == nil {
		t.Errorf("aggregated point: prefill_worker_seconds %v, prefill_gpus_per_worker %v (want null), decode_worker_seconds %v",
			r.PrefillWorkerSeconds, r.PrefillGPUsPerWorker, r.DecodeWorkerSeconds)
	}
}

// A recommendation names its trace by an absolute path, so that it runs from any directory; a
// config without a relative path is copied as it is.
func TestAbsTracePaths(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	in := "traffic:\n  source:\n    type: trace\n    paths:\n      - traces/t.jsonl\n      - /abs/u.jsonl\n"
	want := "traffic:\n  source:\n    type: trace\n    paths:\n      - " + filepath.Join(wd, "traces/t.jsonl") + "\n      - /abs/u.jsonl\n"
	if got := absTracePaths(in); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	// A model directory named by a relative path (a --set one: the spec's are absolute already).
	model := "engine:\n  model: ./llama8b\n"
	if got, want := absTracePaths(model), "engine:\n  model: "+filepath.Join(wd, "llama8b")+"\n"; got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	plain := "traffic:\n  source: {type: synthetic}\nengine:\n  model: meta-llama/Llama-3.1-8B\n"
	if got := absTracePaths(plain); got != plain {
		t.Errorf("a config without paths changed:\n%s", got)
	}
}

// Shape names every parallel degree above 1 in the field's terms, MoE ones included, so two
// points that differ only in how the experts are split read differently.
func TestShapeNamesEveryDegree(t *testing.T) {
	one, two, eight := int64(1), int64(2), int64(8)
	agg := &Row{Mode: "aggregated", AggReplicas: &one, AggTensor: &two, AggPipeline: &one, AggAttentionData: &eight,
		AggMoeTensor: &one, AggMoeExpert: &eight}
	if got := Shape(agg); got != "1× TP2 DP8 EP8" {
		t.Errorf("EP shape %q", got)
	}
	agg.AggMoeTensor, agg.AggMoeExpert = &eight, &two
	if got := Shape(agg); got != "1× TP2 DP8 EP2 MoE-TP8" {
		t.Errorf("MoE-TP shape %q", got)
	}
	dis := &Row{Mode: "disaggregated", PrefillReplicas: &two, PrefillTensor: &eight, PrefillPipeline: &one, PrefillMoeExpert: &eight,
		DecodeReplicas: &one, DecodeTensor: &one, DecodePipeline: &two}
	if got := Shape(dis); got != "P 2× TP8 EP8 + D 1× TP1 PP2" {
		t.Errorf("disaggregated shape %q", got)
	}
}

// A sweep over models names the model beside the GPU; a single-model sweep does not.
func TestHardwareForNamesTheModelWhenItVaries(t *testing.T) {
	rows := []Row{{Model: "a/One", Hardware: "h100_sxm"}, {Model: "a/One", Hardware: "h200_sxm"}}
	if got := HardwareFor(&rows[1], rows); got != "h200_sxm" {
		t.Errorf("single model: %q", got)
	}
	rows[0].Model = "b/Two"
	if got := HardwareFor(&rows[1], rows); got != "a/One on h200_sxm" {
		t.Errorf("two models: %q", got)
	}
}

// DiscardEmptyJournal removes an empty journal and its spec file but never the lock file, and
// leaves alone a journal another open holds (even empty) and one that records a point.
func TestDiscardEmptyJournal(t *testing.T) {
	path := filepath.Join(t.TempDir(), JournalFile)
	exists := func(p string) bool { _, err := os.Stat(p); return err == nil }
	if err := ClaimJournalSpec(path, "h1"); err != nil {
		t.Fatal(err)
	}
	j, _, err := OpenJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	if removed, err := DiscardEmptyJournal(path); removed || err != nil || !exists(path) || !exists(path+SpecSuffix) {
		t.Fatalf("while another open holds it: removed %v, err %v, journal kept %v, spec kept %v", removed, err, exists(path), exists(path+SpecSuffix))
	}
	if err := j.Append(Record{PointID: "p1", Status: StatusOK}); err != nil {
		t.Fatal(err)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	if removed, err := DiscardEmptyJournal(path); removed || err != nil || !exists(path) {
		t.Fatalf("with a record: removed %v, err %v, journal kept %v", removed, err, exists(path))
	}
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	if removed, err := DiscardEmptyJournal(path); !removed || err != nil {
		t.Fatalf("empty and unheld: removed %v, err %v; want removed", removed, err)
	}
	if exists(path) || exists(path+SpecSuffix) || !exists(path+LockSuffix) {
		t.Fatalf("after discarding: journal %v, spec %v, lock file %v; want only the lock file", exists(path), exists(path+SpecSuffix), exists(path+LockSuffix))
	}
	// A claim whose run stopped before opening the journal: the spec file alone goes, or a
	// corrected spec in the directory would be refused as another sweep's.
	if err := ClaimJournalSpec(path, "h2"); err != nil {
		t.Fatal(err)
	}
	if removed, err := DiscardEmptyJournal(path); !removed || err != nil || exists(path+SpecSuffix) {
		t.Fatalf("a claim without a journal: removed %v, err %v, spec kept %v; want it removed", removed, err, exists(path+SpecSuffix))
	}
	if err := ClaimJournalSpec(path, "h3"); err != nil {
		t.Fatalf("claiming for another spec after the discard: %v", err)
	}
}

// TestNoSamplesRowKeepsItsSLA: clearing a no-samples row's latencies leaves its evaluation.sla
// bound columns, whose names end like latencies (sla_ttft_ms, sla_p99_itl_ms), so the report
// still states the SLA of a sweep whose rows measured nothing.
func TestNoSamplesRowKeepsItsSLA(t *testing.T) {
	cfg := percentileConfig(t, "{ttft_ms: 500, itl_ms: 50, p99_itl_ms: 40}")
	rec := Record{PointID: "z", Status: StatusOK, Summary: map[string]float64{
		"num_requests": 0, "completed_requests": 0, "duration_ms": 0, "gpu_hours": 0, "p99_itl_ms": 0,
		"num_ttft_samples": 0, "num_itl_samples": 0}}
	r := NewRow(PointInfo{ID: "z", GPUs: 1, Config: cfg}, rec)
	if r.P99ITLMs != nil || r.SLATTFTMs == nil || *r.SLATTFTMs != 500 || r.SLAITLMs == nil || *r.SLAITLMs != 50 ||
		r.SLAP99ITLMs == nil || *r.SLAP99ITLMs != 40 {
		t.Fatalf("p99_itl_ms %v; sla_ttft_ms %v sla_itl_ms %v sla_p99_itl_ms %v; want null, 500, 50, 40",
			r.P99ITLMs, r.SLATTFTMs, r.SLAITLMs, r.SLAP99ITLMs)
	}
	if got := SLAText([]Row{r}, nil); !strings.Contains(got, "ttft_ms 500") || !strings.Contains(got, "p99_itl_ms 40") {
		t.Errorf("SLAText = %q", got)
	}
}

// A record no sweep writes (a journal edited by hand) is refused as a *NotJournalError naming
// the file, the line and what is wrong; nothing is resumed from it.
func TestOpenJournalRefusesRecordsNoSweepWrites(t *testing.T) {
	for _, c := range []struct{ line, want string }{
		{`{"point_id":"a","status":"done"}`, `status "done": a record's status is ok, failed or timed_out`},
		{`{"point_id":"a","status":"ok","summary":{}}`, "status ok without summary values"},
		{`{"point_id":"a","status":"ok","summary":{"p99_ttft_ms":3,"output_throughput_tok_s":-5}}`, "summary.output_throughput_tok_s -5: must be >= 0"},
		{`{"point_id":"a","status":"failed","wall_time_ms":-1}`, "wall_time_ms -1: must be >= 0"},
	} {
		path := filepath.Join(t.TempDir(), JournalFile)
		good := `{"point_id":"z","status":"ok","summary":{"p99_ttft_ms":3}}`
		if err := os.WriteFile(path, []byte(good+"\n"+c.line+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		j, recs, err := OpenJournal(path)
		var nj *NotJournalError
		if !errors.As(err, &nj) || nj.Line != 2 || j != nil || recs != nil {
			t.Errorf("%s: OpenJournal = %v, %v, %v; want a *NotJournalError at line 2", c.line, j, recs, err)
			continue
		}
		if want := path + ":2: " + c.want + "; the sweep cannot resume from this file"; err.Error() != want {
			t.Errorf("error %q, want %q", err, want)
		}
	}
}

// A journal with a line that is no record is refused as a *NotJournalError naming the file and
// the line; nothing is resumed from it.
func TestOpenJournalRefusesOtherFiles(t *testing.T) {
	path := filepath.Join(t.TempDir(), JournalFile)
	if err := os.WriteFile(path, []byte(`{"point_id":"a","status":"failed","reason":"x"}`+"\nhello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	j, recs, err := OpenJournal(path)
	var nj *NotJournalError
	if !errors.As(err, &nj) || nj.Path != path || nj.Line != 2 || j != nil || recs != nil {
		t.Fatalf("OpenJournal = %v, %v, %v; want a *NotJournalError at line 2", j, recs, err)
	}
	if want := path + ":2: not a sweep journal record; the sweep cannot resume from this file"; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
}

// Another Parquet table in results.parquet's place (the front's ties table, a probe table, another
// tool's) is refused naming the columns it lacks: read as results, its rows would decode as failed
// points of no configuration.
func TestReadParquetRefusesAnotherTable(t *testing.T) {
	type tie struct {
		FrontRank   int    `parquet:"front_rank"`
		PointID     string `parquet:"point_id"`
		TiedPointID string `parquet:"tied_point_id"`
	}
	path := filepath.Join(t.TempDir(), ParquetFile)
	if err := writeTable(path, []tie{{1, "a", "b"}}); err != nil {
		t.Fatal(err)
	}
	_, err := ReadParquet(path)
	want := path + ": not a servesweep results table: it has no point_index, status, config_yaml columns (its columns: front_rank, point_id, tied_point_id)"
	if err == nil || err.Error() != want {
		t.Errorf("err = %v\nwant %s", err, want)
	}
	if err := WriteParquet(path, []Row{{PointID: "p", Status: StatusOK}}); err != nil {
		t.Fatal(err)
	}
	if rows, err := ReadParquet(path); err != nil || len(rows) != 1 {
		t.Errorf("a results table: %d rows, %v", len(rows), err)
	}
}

// SpecChanges names each part of two spec identities that differs, once, in the recorded
// identity's order, and nothing when either is unknown or they agree.
func TestSpecChanges(t *testing.T) {
	have := []string{"points 3 aaaa", "target pareto", "objective max:x", "gpus 0 32", "build sha256:1",
		"trace data/a b.jsonl d1", "trace old.jsonl d2", "gpu_hour_usd h100_sxm 2.5"}
	want := []string{"points 2 bbbb", "target pareto", "objective max:y", "gpus 0 32", "build sha256:2",
		"trace data/a b.jsonl d9", "trace new.jsonl d3", "capacity_search 0.99 1 4096 0.05 16", "gpu_hour_usd h100_sxm 3"}
	got := SpecChanges(have, want)
	wantChanges := []string{
		"the grid's points (3 then, 2 now: the spec's domains, filters or fields, or how this servesweep version expands them)",
		"optimization.objectives (max:x then, max:y now)",
		"the servesweep build (sha256:1 then, sha256:2 now)",
		"the contents of trace file data/a b.jsonl",
		"trace file old.jsonl (not read now)",
		"optimization.cost.gpu_hour_usd.h100_sxm (2.5 then, 3 now)",
		"trace file new.jsonl (not read then)",
		"optimization.capacity_search (attainment, min, max, relative_tolerance, max_probes) (none then, 0.99 1 4096 0.05 16 now)",
	}
	if !slices.Equal(got, wantChanges) {
		t.Errorf("SpecChanges:\n%q\nwant\n%q", got, wantChanges)
	}
	if got := SpecChanges([]string{"points 3 aaaa"}, []string{"points 3 cccc"}); len(got) != 1 || !strings.HasPrefix(got[0], "the grid's points (3 then and now, not the same ones") {
		t.Errorf("same count, other points: %q", got)
	}
	if got := SpecChanges(have, have); got != nil {
		t.Errorf("equal identities: %q", got)
	}
	if got := SpecChanges(nil, want); got != nil {
		t.Errorf("an unknown identity: %q", got)
	}
	// Each analysis setting is named with its values; a moved GPU bound may account for the
	// points.
	got = SpecChanges([]string{"points 6 aaaa", "target pareto", "objective max:x", "objective min:y", "gpus 0 8", "strict_sla false"},
		[]string{"points 4 bbbb", "target throughput", "objective max:x", "gpus 2 4", "strict_sla true"})
	wantChanges = []string{
		"the grid's points (6 then, 4 now: the GPU bounds, or the spec's domains, filters or fields, or how this servesweep version expands them)",
		"optimization.target (pareto then, throughput now)",
		"optimization.objectives (max:x, min:y then, max:x now)",
		"the GPU bounds (max_candidate_gpus 8 then, min_candidate_gpus 2, max_candidate_gpus 4 now)",
		"optimization.strict_sla (false then, true now)",
	}
	if !slices.Equal(got, wantChanges) {
		t.Errorf("SpecChanges of settings:\n%q\nwant\n%q", got, wantChanges)
	}
	if got := ChangesText(nil); got != "" {
		t.Errorf("ChangesText(nil) = %q", got)
	}
}

// A journal's claim records the spec's identity beside its hash; a claim under another hash says
// what differs, and one over a file of the hash alone (an older servesweep's) just refuses.
func TestClaimJournalSpecIdentity(t *testing.T) {
	path := filepath.Join(t.TempDir(), JournalFile)
	if err := ClaimJournalSpec(path, "h1", "points 2 aaaa", "build b1"); err != nil {
		t.Fatal(err)
	}
	if h, id, err := ReadJournalSpec(path); err != nil || h != "h1" || !slices.Equal(id, []string{"points 2 aaaa", "build b1"}) {
		t.Fatalf("read back: %q %q %v", h, id, err)
	}
	if err := ClaimJournalSpec(path, "h1", "points 2 aaaa", "build b1"); err != nil {
		t.Fatalf("the same spec again: %v", err)
	}
	var se *JournalSpecError
	err := ClaimJournalSpec(path, "h2", "points 2 aaaa", "build b2")
	if !errors.As(err, &se) || !slices.Equal(se.Changes, []string{"the servesweep build (b1 then, b2 now)"}) ||
		!strings.Contains(err.Error(), "(spec hash h1, this one h2; what differs: the servesweep build (b1 then, b2 now)): resuming would mix the two") {
		t.Fatalf("another build: %v", err)
	}
	old := filepath.Join(t.TempDir(), JournalFile)
	if err := os.WriteFile(old+SpecSuffix, []byte("h1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err = ClaimJournalSpec(old, "h2", "points 2 aaaa")
	if !errors.As(err, &se) || se.Changes != nil || !se.HashOnly || !strings.Contains(err.Error(), "(spec hash h1, this one h2; "+
		old+SpecSuffix+" records that hash alone (an older servesweep wrote it), not the points, settings, prices or bounds it covers, "+
		"so what differs cannot be told): resuming") {
		t.Fatalf("a hash-only spec file: %v", err)
	}
	if err := ClaimJournalSpec(old, "h1"); err != nil {
		t.Fatalf("a hash-only spec file, same hash: %v", err)
	}
}

// A spec file whose first line is no hash, or that is larger than any identity, is damaged, not
// another spec's; a claim over a hash-only file of the same spec records the identity; points in
// another order are named so, and odd bytes of a hand-edited file are quoted.
func TestJournalSpecDamagedAndUpgraded(t *testing.T) {
	path := filepath.Join(t.TempDir(), JournalFile)
	var de *JournalSpecDamagedError
	for _, text := range []string{"", "points 3 aaaa bbbb\nbuild b\n"} {
		if err := os.WriteFile(path+SpecSuffix, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := ClaimJournalSpec(path, "h1", "points 3 aaaa bbbb"); !errors.As(err, &de) ||
			!strings.Contains(err.Error(), "is damaged (its first line is not a spec hash): it records which spec") {
			t.Errorf("spec file %q: %v", text, err)
		}
	}
	if err := os.WriteFile(path+SpecSuffix, bytes.Repeat([]byte("a"), maxSpecFileBytes+1), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := ClaimJournalSpec(path, "h1"); !errors.As(err, &de) || !strings.Contains(err.Error(), "more than a spec identity's") {
		t.Errorf("an oversized spec file: %v", err)
	}
	if err := os.WriteFile(path+SpecSuffix, []byte("h1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := ClaimJournalSpec(path, "h1", "points 3 aaaa bbbb", "build b1"); err != nil {
		t.Fatal(err)
	}
	if h, id, err := ReadJournalSpec(path); err != nil || h != "h1" || !slices.Equal(id, []string{"points 3 aaaa bbbb", "build b1"}) {
		t.Errorf("a hash-only claim resumed: %q %q %v; want the identity recorded", h, id, err)
	}
	if got := SpecChanges([]string{"points 3 aaaa bbbb"}, []string{"points 3 cccc bbbb"}); !slices.Equal(got,
		[]string{"the grid's points (the same 3 in another order: a domain's values listed in another order)"}) {
		t.Errorf("reordered points: %q", got)
	}
	if got := SpecChanges([]string{"points 3 aaaa bbbb", "build x\x00y"}, []string{"points 3 aaaa bbbb", "build z"}); !slices.Equal(got,
		[]string{`the servesweep build ("x\x00y" then, z now)`}) {
		t.Errorf("a control character: %q", got)
	}
}
