package aiperf

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/servesweep/servesweep/sim/config"
	"github.com/servesweep/servesweep/sim/metrics"
)

func TestReadRunsDirectory(t *testing.T) {
	runs, err := ReadRuns(filepath.Join("testdata", "runs"))
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 || !strings.HasSuffix(runs[0].File, filepath.Join("c16", AIPerfFile)) || !strings.HasSuffix(runs[1].File, filepath.Join("c8", AIPerfFile)) {
		t.Fatalf("runs %+v", runs)
	}
	r := runs[0]
	if r.Kind != KindAIPerf || *r.Metrics["time_to_first_token"].P90 != 260 || *r.Load.Concurrency != 16 || *r.Load.RequestCount != 100 {
		t.Errorf("run %+v", r)
	}
	// A null metric is left out, not read as zeros.
	if _, ok := runs[1].Metrics["time_to_second_token"]; ok {
		t.Error("null time_to_second_token was read")
	}
}

func TestReadGenAIPerf(t *testing.T) {
	runs, err := ReadRuns(filepath.Join("testdata", "genai"))
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 || runs[0].Kind != KindGenAIPerf || *runs[0].Load.Concurrency != 16 || *runs[0].Metrics["request_latency"].P50 != 1705 {
		t.Errorf("runs %+v", runs)
	}
}

func TestReadWrongKindOrVersion(t *testing.T) {
	cases := map[string]struct{ path, want string }{
		"csv":          {"profile_export_aiperf.csv", "is not an AIPerf or GenAI-Perf summary: want the JSON object of profile_export_aiperf.json"},
		"records":      {"records-layout.json", "records: is the layout of AIPerf releases before"},
		"schema 2":     {"schema-2.json", `schema_version: "2.0" is not a version servesweep reads: want 1.x`},
		"seconds":      {"seconds.json", `time_to_first_token.unit: "sec": want "ms"`},
		"no streaming": {"no-streaming.json", "time_to_first_token: missing: want a streaming run's summary"},
		"missing":      {"nope.json", "cannot read it"},
		"empty dir":    {".", ""},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join("testdata", c.path)
			if name == "empty dir" {
				path = t.TempDir()
				c.want = "holds no profile_export_aiperf.json (AIPerf) or profile_export_genai_perf.json (GenAI-Perf)"
			}
			_, err := ReadRuns(path)
			var ce *config.Error
			if !errors.As(err, &ce) || ce.File != path || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v; want a config.Error on %s containing %q", err, path, c.want)
			}
		})
	}
}

func TestCompareAndMAPE(t *testing.T) {
	runs, err := ReadRuns(filepath.Join("testdata", "runs"))
	if err != nil {
		t.Fatal(err)
	}
	s := &metrics.Summary{
		TTFT:                 metrics.Stats{Mean: 176, Median: 140, P90: 286, P99: 400},
		TPOT:                 metrics.Stats{Mean: 12.2, Median: 11, P90: 13, P99: 14.1},
		ITL:                  metrics.Stats{Mean: 12, Median: 12, P90: 13, P99: 20},
		E2E:                  metrics.Stats{Mean: 1710, Median: 1700, P90: 1850, P99: 1990},
		OutputThroughputTokS: 1000, RequestThroughputRPS: 9.2,
	}
	cs := Compare(&runs[0], s)
	if len(cs) != 18 {
		t.Fatalf("%d comparisons, want 4 latencies × 4 stats + 2 throughputs: %+v", len(cs), cs)
	}
	first := cs[0]
	if first.Metric != "TTFT" || first.Stat != "mean" || math.Abs(*first.ErrorPct-10) > 1e-9 {
		t.Errorf("first %+v, want TTFT mean +10%%", first)
	}
	var tpot, thr *Comparison
	for i := range cs {
		switch {
		case cs[i].Metric == "TPOT" && cs[i].Stat == "p50":
			tpot = &cs[i]
		case cs[i].Metric == "output throughput":
			thr = &cs[i]
		}
	}
	// AIPerf's inter_token_latency is the simulator's TPOT.
	if tpot == nil || tpot.Measured != "inter_token_latency" || tpot.PredictedValue != 11 {
		t.Errorf("TPOT p50 %+v", tpot)
	}
	if thr == nil || math.Abs(*thr.APEPct-(1177.6-1000)/1177.6*100) > 1e-9 {
		t.Errorf("output throughput %+v", thr)
	}
	// The second run has no inter_chunk_latency: no ITL rows, and the MAPE of TTFT mean pools both.
	cs2 := Compare(&runs[1], s)
	for _, c := range cs2 {
		if c.Metric == "ITL" {
			t.Errorf("ITL compared without inter_chunk_latency: %+v", c)
		}
	}
	m := MAPEs([][]Comparison{cs, cs2})
	if m[0].Metric != "TTFT" || m[0].Stat != "mean" || m[0].Runs != 2 || math.Abs(m[0].MAPEPct-(10+(176-95)/95.0*100)/2) > 1e-9 {
		t.Errorf("MAPE %+v", m[0])
	}
}

// A latency block that is not numbers, or a negative statistic, is an error naming it.
// A bad value is exit 2 naming it, in a latency block and in the run's load (input_config):
// one bad field never silently drops the rest.
func TestReadBadValues(t *testing.T) {
	const ttft = `{"time_to_first_token": {"unit": "ms", "avg": 5}`
	for name, c := range map[string]struct{ doc, want string }{
		"string":   {`{"time_to_first_token": {"unit": "ms", "avg": "abc"}}`, `time_to_first_token: want a metric block {unit: "ms", avg, p50, p90, p99 numbers}`},
		"negative": {`{"time_to_first_token": {"unit": "ms", "avg": -5}}`, "time_to_first_token.avg: -5: a measured value is >= 0"},
		"absurd":   {`{"time_to_first_token": {"unit": "ms", "avg": 1e308}}`, "time_to_first_token.avg: 1e+308: beyond any benchmark's measurement (at most 1e+15)"},
		"throughput unit": {ttft + `, "output_token_throughput": {"unit": "tokens/min", "avg": 60}}`,
			`output_token_throughput.unit: "tokens/min": want "tokens/sec"`},
		"throughput not a number": {ttft + `, "request_throughput": {"unit": "requests/sec", "avg": "fast"}}`,
			`request_throughput: want a metric block {unit: "requests/sec"`},
		"throughput null":      {ttft + `, "request_throughput": null}`, `request_throughput: want a metric block`},
		"negative std":         {`{"time_to_first_token": {"unit": "ms", "avg": 5, "std": -1}}`, "time_to_first_token.std: -1: a measured value is >= 0"},
		"percentiles decrease": {`{"time_to_first_token": {"unit": "ms", "avg": 5, "p50": 9, "p99": 4}}`, "time_to_first_token: percentiles decrease"},
		"null stat": {`{"time_to_first_token": {"unit": "ms", "avg": 5}, "request_latency": {"unit": "ms", "avg": null, "p50": 3}}`,
			"request_latency.avg: want a number of ms, got null"},
		"concurrency string": {ttft + `, "input_config": {"loadgen": {"concurrency": "8"}}}`,
			`input_config.loadgen.concurrency: want a whole number from 1 to 1e9, got "8"`},
		"concurrency fraction": {ttft + `, "input_config": {"loadgen": {"concurrency": 8.7, "request_count": 100}}}`,
			"input_config.loadgen.concurrency: want a whole number from 1 to 1e9, got 8.7"},
		"request_count": {ttft + `, "input_config": {"loadgen": {"concurrency": 8, "request_count": "abc"}}}`,
			`input_config.loadgen.request_count: want a whole number from 1 to 1e9, got "abc"`},
		"top-level rate": {ttft + `, "input_config": {"request_rate": -2}}`, "input_config.request_rate: want requests per second > 0"},
		"loadgen":        {ttft + `, "input_config": {"loadgen": [1]}}`, "input_config.loadgen: want an object, got [1]"},
		"input_config":   {ttft + `, "input_config": "c=64"}`, `input_config: want an object (the run's configuration), got "c=64"`},
		"ramp":           {ttft + `, "input_config": {"loadgen": {"concurrency_ramp_duration": -1}}}`, "input_config.loadgen.concurrency_ramp_duration: want seconds >= 0"},
		"repeated key": {`{"time_to_first_token": {"unit": "ms", "avg": 160, "avg": 99999}}`,
			"time_to_first_token.avg: key appears more than once in its object; give it once"},
	} {
		path := filepath.Join(t.TempDir(), AIPerfFile)
		if err := os.WriteFile(path, []byte(c.doc), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadFile(path); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", name, err, c.want)
		}
	}
	// Good loads: loadgen's fields first, GenAI-Perf's top-level ones, nulls unknown.
	for name, c := range map[string]struct {
		doc        string
		conc, reqs int
		rate       float64
	}{
		"loadgen":   {ttft + `, "input_config": {"loadgen": {"concurrency": 8, "request_count": 100.0, "concurrency_ramp_duration": 2.5}}}`, 8, 100, 0},
		"top level": {ttft + `, "input_config": {"concurrency": null, "request_rate": 2.5, "request_count": 40}}`, 0, 40, 2.5},
	} {
		path := filepath.Join(t.TempDir(), AIPerfFile)
		if err := os.WriteFile(path, []byte(c.doc), 0o644); err != nil {
			t.Fatal(err)
		}
		run, err := ReadFile(path)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		l := run.Load
		if deref(l.Concurrency) != c.conc || deref(l.RequestCount) != c.reqs || (l.RequestRate == nil) != (c.rate == 0) || l.RequestRate != nil && *l.RequestRate != c.rate {
			t.Errorf("%s: load %+v", name, l)
		}
		if ramp := l.RampSeconds; !l.Echoed || (name == "loadgen") != (ramp != nil) || ramp != nil && *ramp != 2.5 {
			t.Errorf("%s: ramp %v, echoed %v", name, ramp, l.Echoed)
		}
	}
}

func deref(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}

// CheckWorkload names what a run measured differently from the config: model, lengths, an
// open-loop load under a concurrency config, cancellation and failed requests; and what its
// summary leaves unscored.
func TestCheckWorkload(t *testing.T) {
	path := filepath.Join(t.TempDir(), AIPerfFile)
	doc := `{"time_to_first_token": {"unit": "ms", "avg": 100},
	  "input_sequence_length": {"unit": "tokens", "avg": 8000}, "output_sequence_length": {"unit": "tokens", "avg": 128},
	  "was_cancelled": true, "error_summary": [{"code": 500, "count": 90}],
	  "input_config": {"endpoint": {"model_names": ["Qwen/Qwen3-32B"]}, "loadgen": {"request_rate": 5}}}`
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	run, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &config.Config{Engine: config.Engine{Model: "meta-llama/Meta-Llama-3.1-8B-Instruct"},
		Traffic: config.Traffic{Source: config.Source{Type: config.SourceSynthetic, InputTokens: 2048, OutputTokens: 128},
			Load: config.Load{Type: config.LoadConcurrency, Concurrency: 16}}}
	got := strings.Join(CheckWorkload(run, cfg), "\n")
	for _, want := range []string{"model_names [Qwen/Qwen3-32B]", "input_sequence_length.avg 8000", "request_rate 5",
		"was_cancelled true", "error_summary: 90 failed requests"} {
		if !strings.Contains(got, want) {
			t.Errorf("warnings %q lack %q", got, want)
		}
	}
	// The summary's gaps: the metrics absent, the mean that is missing or 0.
	for _, want := range []string{"inter_token_latency: absent: not compared", "request_throughput: absent: not compared"} {
		if !strings.Contains(got, want) {
			t.Errorf("warnings %q lack %q", got, want)
		}
	}
	zero, avg := 0.0, 5.0
	gaps := statGaps(&Run{Metrics: map[string]Stat{"time_to_first_token": {Unit: "ms", Avg: &zero}, "inter_token_latency": {Unit: "ms"},
		"request_latency": {Unit: "ms", Avg: &avg}, "output_token_throughput": {Avg: &avg}, "request_throughput": {Avg: &avg}}})
	if want := []string{"time_to_first_token.avg: 0, which no run measures: its error is N/A and the MAPE leaves it out",
		"inter_token_latency.avg: absent: its mean is not compared"}; !slices.Equal(gaps, want) {
		t.Errorf("gaps %q, want %q", gaps, want)
	}
	full := map[string]Stat{}
	for _, tag := range scoredMetrics {
		full[tag] = Stat{Avg: &avg}
	}
	closed := &Run{Load: Load{Concurrency: new(int)}, Metrics: full}
	*closed.Load.Concurrency = 16
	cfg.Traffic.Load = config.Load{Type: config.LoadPoisson, RequestsPerSecond: 5}
	if w := CheckWorkload(closed, cfg); len(w) != 1 || !strings.Contains(w[0], "concurrency 16: the run was a closed loop; simulated at the config's poisson load") {
		t.Errorf("closed-loop run under an open-loop config: %q", w)
	}
	capped := &Run{Load: Load{Concurrency: closed.Load.Concurrency, RequestRate: &avg}, Metrics: full}
	if w := CheckWorkload(capped, cfg); len(w) != 1 || !strings.Contains(w[0], "request_rate 5 with concurrency 16: the run was an open loop capped at 16") {
		t.Errorf("a rate capped by a concurrency: %q", w)
	}
	if strings.Contains(got, "output_sequence_length") {
		t.Errorf("an output length within 10 %% is not a warning: %q", got)
	}
}
