package results

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
	m := &Manifest{Spec: "test.yaml", Algorithm: "grid", Settings: Settings{Target: TargetThroughput, Objectives: DefaultObjectives()},
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
