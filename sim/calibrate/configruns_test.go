package calibrate

import (
	"context"
	"slices"
	"strings"
	"testing"
)

// groupRuns gives each distinct config one run holding its rows in file order, skips the rows
// that were not planned, and puts the costlier run first whatever its place in the file.
func TestGroupRunsOneRunPerConfigCostliestFirst(t *testing.T) {
	small := "a,vllm,0.12,meta-llama/Llama-3.1-8B-Instruct,h100_sxm,,,agg,512,32,8,,4,1,1,,,,,,,,,,,,,,,,,,60.5,8.5\n"
	repeat := strings.Replace(strings.Replace(small, "a,", "a2,", 1), ",60.5,8.5", ",70,9", 1)
	large := strings.Replace(strings.Replace(small, "a,", "b,", 1), ",512,32,8,", ",512,32,16,", 1)
	rows, err := ReadCSV(strings.NewReader(header+small+large+small+repeat), "group.csv")
	if err != nil {
		t.Fatal(err)
	}
	plans := make([]*Plan, len(rows))
	for i, r := range rows {
		if i == 2 {
			continue // as a row PlanRow refused
		}
		if plans[i], err = PlanRow(r, Options{}); err != nil {
			t.Fatalf("row %d: %v", i, err)
		}
	}
	runs := groupRuns(rows, plans)
	if len(runs) != 2 || !slices.Equal(runs[0].rows, []int{1}) || !slices.Equal(runs[1].rows, []int{0, 3}) {
		t.Fatalf("runs %+v, want rows [1] then [0 3]", runs)
	}
	if runs[0].cost != 2*runs[1].cost {
		t.Errorf("costs %v and %v: twice the concurrency sends twice the requests of the same lengths", runs[0].cost, runs[1].cost)
	}
}

// A row that repeats another's every setting under another id scores exactly as the first does
// alone, and its own measured values are kept.
func TestValidateRepeatedRowsShareTheRun(t *testing.T) {
	first := "a,vllm,0.12,meta-llama/Llama-3.1-8B-Instruct,h100_sxm,,,agg,512,32,8,,4,1,1,,,,,,,,,,,,,,,,,,60.5,8.5\n"
	repeat := strings.Replace(strings.Replace(first, "a,", "a2,", 1), ",60.5,8.5", ",70,9", 1)
	rows, err := ReadCSV(strings.NewReader(header+first+repeat), "repeat.csv")
	if err != nil {
		t.Fatal(err)
	}
	both, err := Validate(context.Background(), rows, Options{Parallelism: 2})
	if err != nil {
		t.Fatal(err)
	}
	alone, err := Validate(context.Background(), rows[:1], Options{})
	if err != nil {
		t.Fatal(err)
	}
	a, r, want := both.Rows[0], both.Rows[1], alone.Rows[0]
	if a.Skipped || r.Skipped || a.PredictedTTFTMs != want.PredictedTTFTMs || r.PredictedTTFTMs != want.PredictedTTFTMs ||
		r.PredictedTPOTMs != want.PredictedTPOTMs || r.ID != "a2" || r.MeasuredTTFTMs != 70 || r.Line != 3 {
		t.Errorf("rows %+v and %+v, the first alone %+v", a, r, want)
	}
	if r.TTFTAPEPct == a.TTFTAPEPct {
		t.Errorf("the repeat's APE %v is the first's: it must be scored on its own measurement", r.TTFTAPEPct)
	}
}
