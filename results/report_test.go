package results

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/servesweep/servesweep/sim/optimization"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// LoadFor names the token counts only when the rows differ in them.
func TestLoadForNamesSweptLengths(t *testing.T) {
	i64 := func(v int64) *int64 { return &v }
	c := int64(8)
	a := Row{LoadConcurrency: &c, SourceInputTokens: i64(512), SourceOutputTokens: i64(128)}
	b := Row{LoadConcurrency: &c, SourceInputTokens: i64(1024), SourceOutputTokens: i64(128)}
	if got := LoadFor(&a, []Row{a, a}); got != "concurrency 8" {
		t.Errorf("same lengths: %q", got)
	}
	if got := LoadFor(&a, []Row{a, b}); got != "concurrency 8, ISL 512 / OSL 128" {
		t.Errorf("swept lengths: %q", got)
	}
	s := Row{LoadConcurrency: &c, SourceNewInputTokensPerTurn: i64(64), SourceOutputTokensPerTurn: i64(16)}
	if got := LoadFor(&s, []Row{s, a}); got != "concurrency 8, 64 new / 16 output tokens a turn" {
		t.Errorf("sessions: %q", got)
	}
}

// Labels.Shape names the roles' max_batched_tokens and max_sequences only when the rows differ in
// them, so front entries that differ only there read apart.
func TestLabelsShapeNamesSweptSchedulerKnobs(t *testing.T) {
	i64 := func(v int64) *int64 { return &v }
	a := Row{Mode: "aggregated", AggReplicas: i64(1), AggTensor: i64(1), AggMaxBatchedTokens: i64(2048), AggMaxSequences: i64(128)}
	b := a
	b.AggMaxBatchedTokens = i64(8192)
	if got := LabelsFor([]Row{a, a}).Shape(&a); got != "1× TP1" {
		t.Errorf("same knobs: %q", got)
	}
	if got := LabelsFor([]Row{a, b}).Shape(&b); got != "1× TP1 (max_batched_tokens 8192, max_sequences 128)" {
		t.Errorf("swept max_batched_tokens: %q", got)
	}
	d := Row{Mode: "disaggregated", PrefillReplicas: i64(2), PrefillTensor: i64(1), PrefillMaxBatchedTokens: i64(8192), PrefillMaxSequences: i64(16),
		DecodeReplicas: i64(1), DecodeTensor: i64(2), DecodeMaxBatchedTokens: i64(8192), DecodeMaxSequences: i64(256)}
	e := d
	e.DecodeMaxSequences = i64(64)
	if got := LabelsFor([]Row{d, e}).Shape(&e); got != "P 2× TP1 + D 1× TP2 (P max_batched_tokens 8192, max_sequences 16; D max_batched_tokens 8192, max_sequences 64)" {
		t.Errorf("swept decode max_sequences: %q", got)
	}
	// Rows of two modes with one setting each: an aggregated row has no prefill role, which is
	// no difference in the knobs.
	if got := LabelsFor([]Row{a, d, a, d}).Shape(&d); got != "P 2× TP1 + D 1× TP2" {
		t.Errorf("two modes, one setting each: %q", got)
	}
}

// A capacity whose probes also met above it, past a miss (p99 ITL not monotone in load: met at
// 106, 301 and 309 sessions, missed at 139), says so with the highest such load; one whose
// probes above it all missed, or a bounded one, does not.
func TestLoadNamesAMeetAboveTheCapacity(t *testing.T) {
	c := int64(106)
	capLoad := 106.0
	r := Row{LoadConcurrency: &c, CapacityLoad: &capLoad, Probes: []ProbeRow{
		{Load: 32, MeetsSLA: true}, {Load: 301, MeetsSLA: true}, {Load: 309, MeetsSLA: true}, {Load: 139, MeetsSLA: false}, {Load: 106, MeetsSLA: true}}}
	if got, want := Load(&r), "capacity concurrency 106 (a probe also met at 309 above a miss: the SLA is not monotone in load here)"; got != want {
		t.Errorf("Load = %q, want %q", got, want)
	}
	if MetAbove(&r) != 309 {
		t.Errorf("MetAbove = %g, want 309", MetAbove(&r))
	}
	r.Probes = []ProbeRow{{Load: 32, MeetsSLA: true}, {Load: 106, MeetsSLA: true}, {Load: 139, MeetsSLA: false}, {Load: 256, MeetsSLA: false}}
	if got := Load(&r); got != "capacity concurrency 106" {
		t.Errorf("monotone: Load = %q", got)
	}
	if MetAbove(&Row{LoadConcurrency: &c}) != 0 {
		t.Error("a row without a capacity met above it")
	}
}

// A capacity whose probes measured SLA headroom within 5 % of 1 over loads 1.5 times apart is a
// knife edge (the built-in sweep's H100 BF16 1× TP1 kv_router deployment, 2026-12-06: 37 to 56
// sessions at 0.957-1.004, capacity 53); Load and the capacity paragraph say so. The same
// probes with the least one at 38 span 1.47 times (not flagged), as do steep ones and a bounded
// capacity.
func TestKnifeEdgeCapacity(t *testing.T) {
	c, n, unit := int64(53), int64(7), "concurrency"
	capLoad := 53.0
	h := func(v float64) *float64 { return &v }
	probes := []ProbeRow{{Load: 4, MeetsSLA: true, SLAHeadroom: h(0.31)}, {Load: 37, MeetsSLA: true, SLAHeadroom: h(0.957)},
		{Load: 48, MeetsSLA: true, SLAHeadroom: h(0.987)}, {Load: 53, MeetsSLA: true, SLAHeadroom: h(0.994)},
		{Load: 55, MeetsSLA: false, SLAHeadroom: h(1.004)}, {Load: 56, MeetsSLA: false, SLAHeadroom: h(1.002)},
		{Load: 120, MeetsSLA: false, SLAHeadroom: h(1.6)}}
	r := Row{PointID: "p1", LoadConcurrency: &c, CapacityLoad: &capLoad, CapacityProbes: &n, CapacityLoadUnit: &unit, Probes: probes}
	if got, want := KnifeEdge(&r), (KnifeEdgeRange{Lo: 37, Hi: 56, MinHeadroom: 0.957, MaxHeadroom: 1.004}); got != want {
		t.Errorf("KnifeEdge = %+v, want %+v", got, want)
	}
	if got, want := Load(&r), "capacity concurrency 53 (knife edge: its binding latency stays at 96-100 % of the SLA bound from 37 to 56)"; got != want {
		t.Errorf("Load = %q, want %q", got, want)
	}
	var b bytes.Buffer
	capacityMarkdown(&b, []Row{r}, nil)
	if want := "1 deployment sits on a knife edge: probes at loads 1.5 times apart or more measured its binding latency within 5 % of " +
		"the SLA's bound (`p1`: capacity 53 concurrency, at 96-100 % of the bound from 37 to 56), so an SLA a few % tighter, or a few % " +
		"of timing error, moves such a capacity across that range: before choosing one, sweep it again with the SLA's bounds 5 % tighter."; !strings.Contains(b.String(), want) {
		t.Errorf("paragraph %q lacks %q", b.String(), want)
	}
	b.Reset()
	capacityMarkdown(&b, []Row{r, r}, nil)
	if want := "2 deployments sit on a knife edge: probes at loads 1.5 times apart or more measured their binding latency within 5 % of " +
		"the SLA's bound (e.g. `p1`: capacity 53 concurrency,"; !strings.Contains(b.String(), want) {
		t.Errorf("paragraph %q lacks %q", b.String(), want)
	}
	narrow := slices.Clone(probes)
	narrow[1].Load = 38
	steep := slices.Clone(probes)
	for i, v := range []float64{0.31, 0.8, 0.9, 0.97, 1.06, 1.1, 1.6} {
		steep[i].SLAHeadroom = h(v)
	}
	bounded := true
	for name, q := range map[string]Row{"38 to 56": {CapacityLoad: &capLoad, Probes: narrow}, "steep": {CapacityLoad: &capLoad, Probes: steep},
		"bounded": {CapacityLoad: &capLoad, CapacityBounded: &bounded, Probes: probes}, "no capacity": {Probes: probes}} {
		if k := KnifeEdge(&q); k != (KnifeEdgeRange{}) {
			t.Errorf("%s: KnifeEdge = %+v, want none", name, k)
		}
	}
}

// TestReportMarksTiesAtObjectiveDigits checks that report.md's ranking table marks a row whose
// objective values equal an earlier row's at ObjectiveDigits as "(ties #k)", as the front's tie
// folding does, also when the raw values differ in their last bits.
func TestReportMarksTiesAtObjectiveDigits(t *testing.T) {
	rows := []Row{simulatedRow(t, "aaa", 0), simulatedRow(t, "bbb", 1), simulatedRow(t, "ccc", 2, "traffic.load.concurrency=2")}
	for i, x := range []float64{1000, 1000.0000000000001, 10} {
		v := x
		rows[i].OutputThroughputTokS = &v
	}
	// bbb's per-GPU throughput (an objective of the table) differs from aaa's in its last bit only.
	perGPU := math.Nextafter(*rows[0].OutputThroughputPerGPUTokS, math.Inf(1))
	rows[1].OutputThroughputPerGPUTokS = &perGPU
	dir := t.TempDir()
	m := &Manifest{Spec: "test.yaml", Algorithm: "grid", Settings: optimization.Settings{Target: optimization.TargetThroughput, Objectives: optimization.DefaultObjectives()},
		Counts: Counts{GridPoints: 3, ValidPoints: 3, SelectedPoints: 3}}
	if _, _, err := WriteOutputs(dir, rows, m); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, ReportFile))
	if err != nil {
		t.Fatal(err)
	}
	report := string(data)
	if !strings.Contains(report, "`aaa` (ties #1)") && !strings.Contains(report, "`bbb` (ties #1)") {
		t.Errorf("report.md does not mark the second of two rows equal at nine digits as tied:\n%s", report)
	}
	if strings.Contains(report, "`ccc` (ties") {
		t.Errorf("report.md marks a distinct row as tied:\n%s", report)
	}
}

// report.md lists the filtered points by reason (a count of one is "1 point") with the first
// point's reason, and at most 20 domain values without a valid point; sweep.json keeps both, so
// a report rebuilt from it lists the same.
func TestReportListsFilteredReasons(t *testing.T) {
	rows := []Row{simulatedRow(t, "aaa", 0)}
	m := &Manifest{Spec: "test.yaml", Algorithm: "grid", Settings: optimization.Settings{Target: optimization.TargetPareto, Objectives: optimization.DefaultObjectives()},
		Counts:           Counts{GridPoints: 26, ValidPoints: 1, SelectedPoints: 1, Filtered: map[string]int{"invalid_config": 24, "duplicate": 1}},
		FilteredExamples: map[string]string{"invalid_config": "point tensor=3: bad", "duplicate": "point tensor=1: same"}}
	for i := range 22 {
		m.EmptyValues = append(m.EmptyValues, EmptyValue{Path: "a.b", Value: strings.Repeat("x", i+1), Points: 1,
			Filtered: map[string]int{"invalid_config": 1}, Example: "point tensor=3: bad"})
	}
	dir := t.TempDir()
	if _, _, err := WriteOutputs(dir, rows, m); err != nil {
		t.Fatal(err)
	}
	back, err := ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	if back.FilteredExamples["duplicate"] != "point tensor=1: same" || len(back.EmptyValues) != 22 || back.EmptyValues[21].Value != strings.Repeat("x", 22) ||
		back.EmptyValues[0].Filtered["invalid_config"] != 1 {
		t.Errorf("sweep.json lost the filter notes: %+v %+v", back.FilteredExamples, back.EmptyValues)
	}
	data, err := os.ReadFile(filepath.Join(dir, ReportFile))
	if err != nil {
		t.Fatal(err)
	}
	want := "Grid: 26 points before filtering, 1 valid (filtered: duplicate 1, invalid_config 24), 1 selected.\n\n" +
		"Filtered before simulation, by reason:\n\n" +
		"- `duplicate`: 1 point, e.g. point tensor=1: same\n" +
		"- `invalid_config`: 24 points, e.g. point tensor=3: bad\n\n" +
		"Domain values no valid point takes:\n\n" +
		"- `a.b` x: all 1 of its points filtered (invalid_config 1), e.g. point tensor=3: bad\n"
	if !strings.Contains(string(data), want) {
		t.Errorf("report.md lacks\n%s\ngot\n%s", want, data)
	}
	last := "- `a.b` " + strings.Repeat("x", 20) + ": all 1 of its points filtered (invalid_config 1), e.g. point tensor=3: bad\n" +
		"- ... and 2 more (sweep.json lists them in empty_values)\n\nResults: "
	if !strings.Contains(string(data), last) || strings.Contains(string(data), strings.Repeat("x", 21)) {
		t.Errorf("report.md does not stop at 20 values:\n%s", data)
	}
	// Without filtered points there is no section.
	m.Counts.Filtered, m.FilteredExamples, m.EmptyValues = nil, nil, nil
	if _, _, err := WriteOutputs(dir, rows, m); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, ReportFile)); strings.Contains(string(data), "Filtered before simulation") {
		t.Errorf("a sweep without filtered points lists them:\n%s", data)
	}
}

// TestTiedFrontIsCapped: a front of 3 tie groups of 1, 149 and 102 rows (in interleaved point
// order) lists at most MaxTiedPointIDs tied IDs per entry, the first in point order, with
// tied_point_count the group's size less one; pareto_ties.parquet holds every tie, and a report
// without ties removes it.
func TestTiedFrontIsCapped(t *testing.T) {
	var rows []Row
	group := func(i int) int { // 0: one row; 1: 149 rows; 2: 102 rows
		switch {
		case i == 0:
			return 0
		case i%2 == 1 || i > 204:
			return 1
		}
		return 2
	}
	for i := range 252 {
		g := float64(group(i))
		r := row(fmt.Sprintf("p%03d", i), 1, 100+g, 10+g, 5)
		r.PointIndex = int64(i)
		rows = append(rows, r)
	}
	dir := t.TempDir()
	s := optimization.Settings{Target: optimization.TargetPareto, Objectives: []optimization.Objective{{Metric: "output_throughput_tok_s", Direction: optimization.Maximize}, {Metric: "p99_ttft_ms", Direction: optimization.Minimize}}}
	a, err := Analyze(rows, s)
	if err != nil {
		t.Fatal(err)
	}
	w, err := WriteReport(dir, rows, a, nil)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Front []struct {
			PointID        string   `json:"point_id"`
			TiedPointIDs   []string `json:"tied_point_ids"`
			TiedPointCount int      `json:"tied_point_count"`
		} `json:"front"`
		TiesFile string `json:"ties_file"`
	}
	data, _ := os.ReadFile(w.Pareto)
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	// Group 2 (throughput 102) is best on throughput, then group 1, then group 0.
	want := []struct {
		id           string
		listed, tied int
		second       string
	}{{"p002", 100, 101, "p004"}, {"p001", 100, 148, "p003"}, {"p000", 0, 0, ""}}
	if len(doc.Front) != len(want) || doc.TiesFile != TiesFile || w.Ties != filepath.Join(dir, TiesFile) {
		t.Fatalf("front %+v, ties file %q (%q)", doc.Front, doc.TiesFile, w.Ties)
	}
	for k, f := range doc.Front {
		if f.PointID != want[k].id || len(f.TiedPointIDs) != want[k].listed || f.TiedPointCount != want[k].tied ||
			(want[k].listed > 0 && f.TiedPointIDs[0] != want[k].second) {
			t.Errorf("entry %d: %s with %d listed (%v...) of %d tied; want %+v", k, f.PointID, len(f.TiedPointIDs),
				f.TiedPointIDs[:min(2, len(f.TiedPointIDs))], f.TiedPointCount, want[k])
		}
	}
	ties, err := parquet.ReadFile[TieRow](w.Ties)
	if err != nil {
		t.Fatal(err)
	}
	if len(ties) != 249 || ties[0] != (TieRow{1, "p002", "p004"}) || ties[248] != (TieRow{2, "p001", "p251"}) {
		t.Errorf("%d ties, first %+v, last %+v", len(ties), ties[0], ties[len(ties)-1])
	}
	report, _ := os.ReadFile(w.Report)
	if !bytes.Contains(report, []byte("(+148 tied)")) || !bytes.Contains(report, []byte(TiesFile)) {
		t.Errorf("report.md lacks the tie count or the ties file:\n%s", report)
	}
	// Without ties the file goes.
	a, err = Analyze(rows[:1], s)
	if err != nil {
		t.Fatal(err)
	}
	if w, err = WriteReport(dir, rows[:1], a, nil); err != nil || w.Ties != "" {
		t.Fatalf("%v, ties %q", err, w.Ties)
	}
	if _, err := os.Stat(filepath.Join(dir, TiesFile)); !os.IsNotExist(err) {
		t.Errorf("a stale %s was left: %v", TiesFile, err)
	}
}

// A bound too small for milliseconds (typed in seconds) is named with its value in ms and what
// the seconds would be; plausible bounds and rows without an SLA give no hint.
func TestSLAUnitHint(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	if got, want := SLAUnitHint([]Row{{}, {SLATTFTMs: f(1), SLAITLMs: f(0.05)}}),
		"; the SLA's bounds are in ms: ttft_ms 1 asks for 1 ms (1 s is ttft_ms: 1000), itl_ms 0.05 asks for 0.05 ms (0.05 s is itl_ms: 50)"; got != want {
		t.Errorf("hint %q, want %q", got, want)
	}
	for _, rows := range [][]Row{nil, {{}}, {{SLATTFTMs: f(500), SLAITLMs: f(50), SLAP99ITLMs: f(50)}}} {
		if got := SLAUnitHint(rows); got != "" {
			t.Errorf("%d rows: hint %q, want none", len(rows), got)
		}
	}
}

// TestNoFeasibleHint: a point excluded for rejected requests names itself, its reason, the
// constraint that admits it and the rows command, as does the first truncating, backlogged,
// overloaded and drained point under its own key; without one the hint is SLAUnitHint's alone.
func TestNoFeasibleHint(t *testing.T) {
	r := partRow("p1", 0, StatusDegraded, 0)
	r.Reason = "rejected_requests: 2 of 10 offered requests rejected (context_length 2)"
	r.OfferedRequests, r.RejectedRequests = iptr(10), iptr(2)
	rows := []Row{r}
	a, err := Analyze(rows, optimization.Settings{Objectives: optimization.DefaultObjectives()})
	if err != nil {
		t.Fatal(err)
	}
	want := "; 1 point rejected requests, e.g. p1 (" + r.Reason + "): such points stay off the front beyond " +
		"optimization.constraints.max_rejected_ratio (0 now); servesweep rows --results out --columns point_id,status,reason " +
		"lists every point's reason"
	if got := NoFeasibleHint(rows, a, "out"); got != want {
		t.Errorf("hint %q\nwant %q", got, want)
	}
	// An overloaded and a drained point are named under their own keys, after the rejections,
	// with what to change.
	over := partRow("p3", 1, StatusDegraded, 0)
	over.Reason = "overloaded: its system held 66 more requests at its last arrival than when its measured window began, ..."
	over.OfferedRequests, over.WindowArrivedRequests, over.BacklogGrowthRequests = iptr(600), iptr(564), iptr(66)
	drained := partRow("p4", 2, StatusDegraded, 0)
	drained.Reason = "drained: its system held 584 fewer requests at its last arrival than when its measured window began ..."
	drained.OfferedRequests, drained.WindowArrivedRequests, drained.BacklogGrowthRequests = iptr(6000), iptr(4512), iptr(-584)
	drained.RequestThroughputRPS, drained.MeanE2ELatencyMs, drained.CompletedRequests = f64(44.7), f64(14300), iptr(4512)
	drained.PeakGPUs = iptr(3) // autoscaled: only a planner's run drains
	rows = []Row{over, r, drained}
	if a, err = Analyze(rows, optimization.Settings{Objectives: optimization.DefaultObjectives()}); err != nil {
		t.Fatal(err)
	}
	want = "; 1 point rejected requests, e.g. p1 (" + r.Reason + "); 1 point fell behind the open-loop " +
		"arrivals (overloaded: lower the load, add workers or search for each deployment's capacity with " +
		"optimization.capacity_search), e.g. p3 (" + over.Reason + "); 1 point drained work queued before the measured window " +
		"(drained: lengthen the run), e.g. p4 (" + drained.Reason + "): such points stay off the front beyond " +
		"optimization.constraints.max_rejected_ratio (0 now); servesweep rows --results out --columns point_id,status,reason " +
		"lists every point's reason"
	if got := NoFeasibleHint(rows, a, "out"); got != want {
		t.Errorf("hint %q\nwant %q", got, want)
	}
	// A truncating point and one stopped with a backlog are named under theirs, between the
	// rejections and the overloaded point.
	trunc := partRow("p5", 3, StatusDegraded, 0)
	trunc.Reason = "truncated_requests: 4 of 10 completed requests stopped short of their requested output (80 output tokens not generated)"
	trunc.OfferedRequests, trunc.CompletedRequests, trunc.TruncatedRequests = iptr(10), iptr(10), iptr(4)
	behind := partRow("p6", 4, StatusDegraded, 0)
	behind.Reason = "unfinished_requests: 88 of 95 offered requests unfinished when the run stopped ..."
	behind.OfferedRequests, behind.CompletedRequests, behind.UnfinishedRequests = iptr(95), iptr(7), iptr(88)
	behind.RequestThroughputRPS, behind.MeanE2ELatencyMs = f64(2.5), f64(1400)
	rows = []Row{behind, trunc, over}
	if a, err = Analyze(rows, optimization.Settings{Objectives: optimization.DefaultObjectives()}); err != nil {
		t.Fatal(err)
	}
	want = "; 1 point stopped requests short of their requested output (truncated_requests), e.g. p5 (" + trunc.Reason + "); " +
		"1 point left a backlog of requests unfinished when the run stopped (unfinished_requests: lower the load, add workers or " +
		"lengthen traffic.stop.max_virtual_time_seconds), e.g. p6 (" + behind.Reason + "); 1 point fell behind the open-loop " +
		"arrivals (overloaded: lower the load, add workers or search for each deployment's capacity with " +
		"optimization.capacity_search), e.g. p3 (" + over.Reason + "): such points stay off the front beyond " +
		"optimization.constraints.max_rejected_ratio (0 now); servesweep rows --results out --columns point_id,status,reason " +
		"lists every point's reason"
	if got := NoFeasibleHint(rows, a, "out"); got != want {
		t.Errorf("hint %q\nwant %q", got, want)
	}
	if want := map[string]int{ExcludedTruncated: 1, ExcludedUnfinished: 1, ExcludedOverloaded: 1}; !maps.Equal(a.Excluded, want) {
		t.Errorf("excluded %v, want %v", a.Excluded, want)
	}
	ok := partRow("p2", 1, StatusOK, 5)
	a, _ = Analyze([]Row{ok}, optimization.Settings{Objectives: optimization.DefaultObjectives()})
	if got := NoFeasibleHint([]Row{ok}, a, "out"); got != "" {
		t.Errorf("no rejection: hint %q, want none", got)
	}
}

// The capacity paragraph counts the deployments whose probes met the SLA above their capacity and
// names one; a sweep read back attaches its probes table (none when the file is missing).
func TestCapacityMarkdownCountsMeetsAboveTheCapacity(t *testing.T) {
	c, n, unit := 106.0, int64(3), "concurrency"
	rows := []Row{{PointID: "p1", CapacityLoad: &c, CapacityProbes: &n, CapacityLoadUnit: &unit,
		Probes: []ProbeRow{{Load: 106, MeetsSLA: true}, {Load: 139, MeetsSLA: false}, {Load: 309, MeetsSLA: true}}}}
	var b bytes.Buffer
	capacityMarkdown(&b, rows, nil)
	if want := "1 met the SLA again above their capacity, past a load that missed (e.g. `p1`: capacity 106, also met at 309)"; !strings.Contains(b.String(), want) {
		t.Errorf("paragraph %q lacks %q", b.String(), want)
	}
	rows[0].Probes = rows[0].Probes[:2]
	b.Reset()
	capacityMarkdown(&b, rows, nil)
	if strings.Contains(b.String(), "met the SLA again") {
		t.Errorf("monotone probes: %q", b.String())
	}
	if err := AttachProbeTable(filepath.Join(t.TempDir(), ProbesFile), rows); err != nil || len(rows[0].Probes) != 2 {
		t.Errorf("a missing probes table: err %v, probes %d (want them left as they were)", err, len(rows[0].Probes))
	}
}

// An objective no row has a value of (decode_tensor of aggregated rows) is named in the "no
// feasible point" hint; one some rows lack is named as leaving them out.
func TestNoFeasibleHintNamesAMissingObjective(t *testing.T) {
	rows := []Row{partRow("p1", 0, StatusOK, 100), partRow("p2", 1, StatusOK, 200)}
	for i := range rows {
		rows[i].CompletedRequests, rows[i].GPUs = i64(10), 1
	}
	obj := func(m string) optimization.Settings {
		return optimization.Settings{Target: optimization.TargetPareto, Objectives: []optimization.Objective{
			{Metric: "p99_ttft_ms", Direction: optimization.Minimize}, {Metric: m, Direction: optimization.Maximize}}}
	}
	a, err := Analyze(rows, obj("decode_tensor"))
	if err != nil || len(a.Candidates) != 0 || a.Excluded[ExcludedMissingMetric] != 2 {
		t.Fatalf("decode_tensor on aggregated rows: err %v, candidates %v, excluded %v", err, a.Candidates, a.Excluded)
	}
	if got, want := NoFeasibleHint(rows, a, "out"), "; no row has a value of the objective decode_tensor, so no point can be ranked by it: "+
		"choose another (servesweep list metrics)"; got != want {
		t.Errorf("hint %q\nwant %q", got, want)
	}
	rows[1].DecodeTensor = i64(2)
	a, _ = Analyze(rows, obj("decode_tensor"))
	if got, want := NoFeasibleHint(rows, a, "out"), "; missing_metric: points without a value of the objective decode_tensor are left out"; got != want {
		t.Errorf("hint %q\nwant %q", got, want)
	}
}
