package results

import (
	"encoding/json"
	"github.com/servesweep/servesweep/sim/config"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/servesweep/servesweep/sim/optimization"
)

// unfinishedRows are two finished candidates (rows 0 and 1), a timed-out and a failed point that
// could have joined them (rows 2 and 3), a timed-out point over the GPU budget of 8 (row 4) and a
// timed-out twin of row 2 (row 5), which row 2 stands for.
func unfinishedRows() []Row {
	deploy := func(r Row, hw string, tp int64) Row {
		r.Hardware, r.WeightPrecision, r.Mode, r.RouterPolicy = hw, strPtr("bf16"), "aggregated", "round_robin"
		r.AggReplicas, r.AggTensor = iptr(1), iptr(tp)
		return r
	}
	return []Row{
		deploy(row("a", 1, 100, 50, 10), "h200_sxm", 1),
		deploy(row("b", 2, 90, 40, 10), "h200_sxm", 2),
		deploy(Row{PointID: "to1", Status: StatusTimedOut, GPUs: 1, Reason: "exceeded the per-point timeout of 100ms (--timeout)"}, "h100_sxm", 1),
		deploy(Row{PointID: "fail1", Status: StatusFailed, GPUs: 2, Reason: "boom"}, "h100_sxm", 2),
		deploy(Row{PointID: "to16", Status: StatusTimedOut, GPUs: 16}, "h100_sxm", 16),
		deploy(Row{PointID: "twin", Status: StatusTimedOut, GPUs: 1, EquivalentTo: "to1"}, "h100_sxm", 1),
	}
}

func strPtr(s string) *string { return &s }

// The timed-out and failed points that could have been candidates are named beside the answer
// (stdout, report.md, report.html) with the remedy, and listed in pareto.json; a point outside
// the GPU budget and a twin are not, and a sweep whose points all finished says nothing.
func TestUnfinishedPointsBesideTheAnswer(t *testing.T) {
	rows := unfinishedRows()
	a, err := Analyze(rows, optimization.Settings{Target: optimization.TargetPareto, MaxGPUs: 8})
	if err != nil {
		t.Fatal(err)
	}
	u := UnfinishedOf(rows, a)
	if !slices.Equal(u.TimedOut, []int{2}) || !slices.Equal(u.Failed, []int{3}) || u.Len() != 2 {
		t.Fatalf("unfinished %+v, want timed out [2], failed [3]", u)
	}
	// 6 rows, of which 4 timed out or failed: 2 finished.
	want := "1 point timed out: to1 (1 GPU, h100_sxm bf16 aggregated 1× TP1 round_robin); 1 point failed: fail1 (2 GPUs, " +
		"h100_sxm bf16 aggregated 1× TP2 round_robin: boom). The answer below is of the 2 points that finished only, and could " +
		"change once they run: rerun the sweep's command (the same --output-dir) with a longer --timeout: timed-out points are " +
		"simulated again on resume, the finished ones kept; a failed point stays failed on resume: its reason says what to change."
	if got := UnfinishedText(rows, a, LabelsFor(rows), false); got != want {
		t.Errorf("text\n%s\nwant\n%s", got, want)
	}
	dir := t.TempDir()
	if _, _, err := WriteOutputs(dir, rows, &Manifest{Settings: a.Settings}); err != nil {
		t.Fatal(err)
	}
	md, _ := os.ReadFile(filepath.Join(dir, ReportFile))
	mdWant := "## Pareto front (2 points)\n\n**Partial answer:** 1 point timed out: `to1` (1 GPU,"
	if !strings.Contains(string(md), mdWant) {
		t.Errorf("report.md lacks %q:\n%s", mdWant, md)
	}
	html, _ := os.ReadFile(filepath.Join(dir, HTMLFile))
	if !strings.Contains(string(html), `<p class="partial answer-note">Partial answer: 1 point timed out: to1 (1 GPU,`) {
		t.Errorf("report.html lacks the note")
	}
	var doc struct {
		TimedOut      []string `json:"timed_out_point_ids"`
		TimedOutCount int      `json:"timed_out_point_count"`
		Failed        []string `json:"failed_point_ids"`
		FailedCount   int      `json:"failed_point_count"`
	}
	data, _ := os.ReadFile(filepath.Join(dir, ParetoFile))
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(doc.TimedOut, []string{"to1"}) || doc.TimedOutCount != 1 || !slices.Equal(doc.Failed, []string{"fail1"}) || doc.FailedCount != 1 {
		t.Errorf("pareto.json: %+v", doc)
	}

	// Only finished points (and ones the budget rules out): no note, no pareto.json keys.
	finished := append(rows[:2:2], rows[4])
	a, err = Analyze(finished, a.Settings)
	if err != nil {
		t.Fatal(err)
	}
	if got := UnfinishedText(finished, a, LabelsFor(finished), true); got != "" {
		t.Errorf("finished sweep: %q", got)
	}
	data, err = ParetoDocument(finished, a, nil, a.Front)
	if err != nil || strings.Contains(string(data), "timed_out_point") || strings.Contains(string(data), "failed_point") {
		t.Errorf("finished sweep's pareto.json (%v):\n%s", err, data)
	}
}

// More timed-out points than UnfinishedText names are counted, not listed.
func TestUnfinishedTextNamesAFew(t *testing.T) {
	rows := []Row{row("a", 1, 100, 50, 10)}
	for _, id := range []string{"t1", "t2", "t3", "t4", "t5"} {
		rows = append(rows, Row{PointID: id, Status: StatusTimedOut, GPUs: 1, Hardware: "h100_sxm", Mode: "aggregated"})
	}
	a, err := Analyze(rows, optimization.Settings{Target: optimization.TargetPareto})
	if err != nil {
		t.Fatal(err)
	}
	got := UnfinishedText(rows, a, LabelsFor(rows), false)
	if !strings.HasPrefix(got, "5 points timed out: t1 (") || !strings.Contains(got, "t3 (") || strings.Contains(got, "t4") ||
		!strings.Contains(got, ", 2 more. The answer below is of the 1 point that finished only, and could change once they run") {
		t.Errorf("text %q", got)
	}
	// With none finished there is no answer to qualify.
	a, err = Analyze(rows[1:], optimization.Settings{Target: optimization.TargetPareto})
	if err != nil {
		t.Fatal(err)
	}
	if got := UnfinishedText(rows[1:], a, LabelsFor(rows[1:]), false); !strings.Contains(got, ", 2 more. No point finished, so there is no answer yet: rerun") {
		t.Errorf("none finished: %q", got)
	}
}

// attainmentRows are three candidates under per-request bounds (ttft_ms 100, itl_ms 5) without a
// capacity search, ranked by throughput c, b, a, of SLA attainment 1, 0.5 and 0.995.
func attainmentRows() []Row {
	mk := func(id string, tput, att float64) Row {
		r := row(id, 1, tput, 50, 10)
		r.SLATTFTMs, r.SLAITLMs, r.SLAAttainment = ptr(100), ptr(5), ptr(att)
		return r
	}
	return []Row{mk("a", 100, 0.995), mk("b", 200, 0.5), mk("c", 300, 1)}
}

// With per-request bounds no filter enforces, the answer states each point's SLA attainment
// and, below 0.99, that the answer can miss the SLA and the settings that enforce it (those not
// in use); a capacity search, or no per-request bound, says nothing.
func TestAttainmentText(t *testing.T) {
	rows := attainmentRows()
	a, err := Analyze(rows, optimization.Settings{Target: optimization.TargetThroughput})
	if err != nil {
		t.Fatal(err)
	}
	want := "SLA attainment of the answer (sla_attainment: the share of each point's offered requests within ttft_ms 100, itl_ms 5): " +
		"#1 1, #2 0.5, #3 0.995. 1 of 3 is under 0.99: nothing holds each request to these bounds here (no capacity search), " +
		"so the answer can be a deployment whose requests miss the SLA. To enforce it, use optimization.capacity_search (each " +
		"deployment at the largest load where at least 99 % of requests meet them), optimization.strict_sla: true (drops points " +
		"whose mean TTFT, mean TPOT or mean E2E latency breaks them), optimization.target: goodput (ranks by the throughput of " +
		"the requests that meet them) or a percentile bound such as evaluation.sla.p99_ttft_ms (a run that misses it is infeasible)."
	if got := AttainmentText(rows, a, &Manifest{Settings: a.Settings}, false); got != want {
		t.Errorf("text\n%s\nwant\n%s", got, want)
	}
	// Under a per-GPU target the goodput target named is the per-GPU one.
	perGPU, err := Analyze(rows, optimization.Settings{Target: optimization.TargetThroughputPerGPU})
	if err != nil {
		t.Fatal(err)
	}
	if got := AttainmentText(rows, perGPU, &Manifest{Settings: perGPU.Settings}, false); !strings.Contains(got, "optimization.target: goodput_per_gpu (") {
		t.Errorf("per-GPU target: %s", got)
	}
	dir := t.TempDir()
	if _, _, err := WriteOutputs(dir, rows, &Manifest{Settings: a.Settings}); err != nil {
		t.Fatal(err)
	}
	md, _ := os.ReadFile(filepath.Join(dir, ReportFile))
	if !strings.Contains(string(md), "\n\nSLA attainment of the answer (`sla_attainment`: the share of each point's offered requests "+
		"within ttft_ms 100, itl_ms 5): #1 1, #2 0.5, #3 0.995. 1 of 3 is under 0.99: ") {
		t.Errorf("report.md lacks the attainment:\n%s", md)
	}
	// Under strict_sla the means are held, not each request; the options drop strict_sla.
	// The row of attainment 0.5 has mean TTFT 25 ms and mean TPOT 10 ms: a strict candidate only
	// when itl_ms is 10 or more.
	for i := range rows {
		rows[i].SLAITLMs = ptr(10)
	}
	s := optimization.Settings{Target: optimization.TargetThroughput, StrictSLA: true}
	if a, err = Analyze(rows, s); err != nil {
		t.Fatal(err)
	}
	got := AttainmentText(rows, a, &Manifest{Settings: s}, true)
	if !strings.Contains(got, "#2 0.5, #3 0.995. 1 of 3 is under 0.99: `optimization.strict_sla` holds only the mean TTFT, mean TPOT "+
		"and mean E2E latency within them, not each request") || strings.Contains(got, "strict_sla: true") {
		t.Errorf("strict: %s", got)
	}
	// All at or above 0.99: the attainment alone.
	good := []Row{rows[0], rows[2]}
	if a, err = Analyze(good, optimization.Settings{Target: optimization.TargetPareto}); err != nil {
		t.Fatal(err)
	}
	if got := AttainmentText(good, a, nil, false); !strings.HasSuffix(got, "itl_ms 10): #1 1.") {
		t.Errorf("all within the target: %s", got)
	}
	if got := AttainmentText(good, a, &Manifest{CapacitySearch: &optimization.CapacitySearch{Attainment: 0.99}}, false); got != "" {
		t.Errorf("under a capacity search: %s", got)
	}
	plain := []Row{row("a", 1, 100, 50, 10)}
	if a, err = Analyze(plain, optimization.Settings{Target: optimization.TargetPareto}); err != nil {
		t.Fatal(err)
	}
	if got := AttainmentText(plain, a, nil, false); got != "" {
		t.Errorf("no SLA: %s", got)
	}
}

// The spec's warnings the sweep printed on stderr are kept in sweep.json's manifest and listed in
// report.md beside the answer; a manifest without them adds nothing.
func TestReportListsTheSpecWarnings(t *testing.T) {
	rows := attainmentRows()
	a, err := Analyze(rows, optimization.Settings{Target: optimization.TargetThroughput})
	if err != nil {
		t.Fatal(err)
	}
	w := "spec.yaml: traffic.source.input_tokens and output_tokens are fixed: ..."
	md := string(reportMarkdown(rows, a, &Manifest{Settings: a.Settings, Warnings: []string{w}}, &Written{}))
	if !strings.Contains(md, "\nWarnings of the spec (printed on stderr when the sweep ran; each can change the answer):\n\n- "+w+"\n") {
		t.Errorf("report.md lacks the warning:\n%s", md)
	}
	if md := string(reportMarkdown(rows, a, &Manifest{Settings: a.Settings}, &Written{})); strings.Contains(md, "Warnings of the spec") {
		t.Errorf("report.md lists warnings the manifest does not have:\n%s", md)
	}
}

// Answer points whose metrics rest on fewer than MinAnswerRequests completed requests are named
// beside the answer with their counts; a point with enough, or none (no_samples, excluded
// anyway), is not.
func TestThinText(t *testing.T) {
	rows := attainmentRows() // by throughput: c, b, a
	rows[2].CompletedRequests = i64(3)
	rows[1].CompletedRequests = i64(29)
	rows[0].CompletedRequests = i64(30)
	a, err := Analyze(rows, optimization.Settings{Target: optimization.TargetThroughput})
	if err != nil {
		t.Fatal(err)
	}
	want := "Few requests measured: 2 points of the answer rest on fewer than 30 completed requests (completed_requests: #1 `c` (3), " +
		"#2 `b` (29)): their percentiles are one of a handful of requests and their ranking can move with any of them; lengthen " +
		"traffic.stop (or shorten traffic.load.warmup_seconds) and sweep again."
	if got := ThinText(rows, a, true); got != want {
		t.Errorf("text\n%s\nwant\n%s", got, want)
	}
	rows[2].CompletedRequests, rows[1].CompletedRequests = i64(30), i64(31)
	if got := ThinText(rows, a, false); got != "" {
		t.Errorf("enough requests: %q", got)
	}
}

// Answer points that ran an open loop without a capacity search and whose window was not judged
// for overload (window_arrived_requests null) are named beside the answer; a judged one, a
// closed loop and a capacity search's row are not.
func TestUnjudgedText(t *testing.T) {
	rows := attainmentRows() // by throughput: c, b, a
	for i := range rows {
		rows[i].LoadType = config.LoadPoisson
	}
	rows[1].WindowArrivedRequests = i64(500) // b judged
	rows[0].LoadType = config.LoadConcurrency
	a, err := Analyze(rows, optimization.Settings{Target: optimization.TargetThroughput})
	if err != nil {
		t.Fatal(err)
	}
	want := "Not judged for overload: the answer's 1 point (#1 `c`): each ran an open loop whose measured window was too short " +
		"to tell whether the deployment keeps up with the offered rate (window_arrived_requests null), so its throughput and " +
		"latencies may be those of a deployment falling behind. Lengthen traffic.stop (a per-load-unit stop is lengthened where " +
		"short) and sweep again."
	if got := UnjudgedText(rows, a, true); got != want {
		t.Errorf("text\n%s\nwant\n%s", got, want)
	}
	rows[2].CapacityLoad = f64(10)
	if got := UnjudgedText(rows, a, false); got != "" {
		t.Errorf("a capacity search's row: %q", got)
	}
}

// Answer points with a worker wider than one link domain of its GPU are named beside the answer
// with the role and size: c's decode of 16 H100s (two nodes of 8) and b's aggregated worker of
// TP8 × PP2 are; a's 8 GB200s, one tray of a 72-GPU rack, and a decode role on another GPU
// (prefill_hardware overriding) within its domain are not.
func TestMultiNodeText(t *testing.T) {
	rows := attainmentRows() // by throughput: c, b, a
	for i := range rows {
		rows[i].Hardware = "h100_sxm"
	}
	rows[2].PrefillTensor, rows[2].PrefillPipeline, rows[2].PrefillAttentionData = i64(8), i64(1), i64(1)
	rows[2].DecodeTensor, rows[2].DecodePipeline, rows[2].DecodeAttentionData = i64(1), i64(1), i64(16)
	rows[1].AggTensor, rows[1].AggPipeline, rows[1].AggAttentionData = i64(8), i64(2), i64(1)
	gb200 := "gb200"
	rows[0].Hardware = "gb200"
	rows[0].AggTensor, rows[0].AggPipeline, rows[0].AggAttentionData = i64(8), i64(1), i64(1)
	a, err := Analyze(rows, optimization.Settings{Target: optimization.TargetThroughput})
	if err != nil {
		t.Fatal(err)
	}
	want := "Across nodes: the answer's 2 points (#1 `c` (decode 16 × h100_sxm), #2 `b` (aggregated 16 × h100_sxm)) run workers " +
		"wider than one NVLink domain, whose collectives between nodes the timing prices optimistically (InferenceX's DeepSeek " +
		"workers over two H100 nodes measured about twice the predicted TPOT): benchmark such a point before preferring it to a " +
		"shape within one NVLink domain."
	if got := MultiNodeText(rows, a, true); got != want {
		t.Errorf("text\n%s\nwant\n%s", got, want)
	}
	rows[2].DecodeHardware = &gb200
	rows[1].AggPipeline = i64(1)
	if got := MultiNodeText(rows, a, false); got != "" {
		t.Errorf("every worker within its domain: %q", got)
	}
}
