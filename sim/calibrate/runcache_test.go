package calibrate

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// runCache runs each key once, however many rows ask and however many at once, and every asker
// gets that run's outcome; another key runs on its own.
func TestRunCacheRunsEachConfigOnce(t *testing.T) {
	c := &runCache{runs: map[string]*cachedRun{}}
	var calls atomic.Int64
	run := func(v float64) func() runOutcome {
		return func() runOutcome { calls.Add(1); return runOutcome{ttft: v, n: 1, sent: 1} }
	}
	var wg sync.WaitGroup
	got := make([]float64, 16)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i] = c.get(context.Background(), "a", run(float64(i+1))).ttft
		}()
	}
	wg.Wait()
	if calls.Load() != 1 {
		t.Errorf("16 rows of one config ran it %d times, want 1", calls.Load())
	}
	for i := range got {
		if got[i] != got[0] {
			t.Errorf("row %d got TTFT %v, row 0 %v: the repeats must share the one run", i, got[i], got[0])
		}
	}
	if out := c.get(context.Background(), "b", run(99)); out.ttft != 99 || calls.Load() != 2 {
		t.Errorf("another config: TTFT %v after %d runs, want 99 after 2", out.ttft, calls.Load())
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
