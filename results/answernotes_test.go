package results

import (
	"encoding/json"
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
}
