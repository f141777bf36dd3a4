package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

const aiperfRuns = "../../sim/calibrate/aiperf/testdata/runs"

func TestValidateAIPerf(t *testing.T) {
	code, out, errs := runCLI(t, "validate", "--aiperf", filepath.Join(aiperfRuns, "c16", "profile_export_aiperf.json"),
		"-c", "../../examples/synthetic.yaml")
	if code != exitOK {
		t.Fatalf("exit %d, stderr %s", code, errs)
	}
	for _, want := range []string{"Run 1 of 1: ", "(aiperf)", "TTFT (ms)", "ITL (ms)", "TPOT (ms)", "E2E (ms)",
		"output throughput (tokens/s)", "request throughput (requests/s)", "inter_token_latency", "inter_chunk_latency"} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "Accuracy over") {
		t.Errorf("one run printed a MAPE table:\n%s", out)
	}

	// Two runs (a directory of artifact directories) and a GenAI-Perf one: the MAPE table, and
	// each run simulated at its own concurrency.
	code, out, errs = runCLI(t, "validate", "--aiperf", aiperfRuns, "--aiperf", "../../sim/calibrate/aiperf/testdata/genai",
		"-c", "../../examples/synthetic.yaml", "--format", "json")
	if code != exitOK {
		t.Fatalf("json: exit %d, stderr %s", code, errs)
	}
	var rep aiperfReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	if len(rep.Runs) != 3 || rep.Runs[2].Kind != "genai-perf" || len(rep.MAPE) == 0 || rep.MAPE[0].Runs != 3 {
		t.Fatalf("report %+v", rep)
	}
	// synthetic.yaml runs concurrency 16: the c8 run is simulated at 8.
	if got := strings.Join(rep.Runs[1].Load, " "); got != "traffic.load.concurrency=8" {
		t.Errorf("c8 run load %q", got)
	}
	if len(rep.Runs[0].Load) != 0 {
		t.Errorf("c16 run load %q, want none (the config's)", rep.Runs[0].Load)
	}
	// Each run is simulated at its own load.
	if rep.Runs[0].Comparisons[0].PredictedValue == rep.Runs[1].Comparisons[0].PredictedValue {
		t.Errorf("runs at concurrency 16 and 8 predicted the same mean TTFT %v", rep.Runs[0].Comparisons[0].PredictedValue)
	}
}

func TestValidateAIPerfErrors(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"no config", []string{"--aiperf", aiperfRuns}, "--aiperf needs -c CONFIG.yaml"},
		{"with measured", []string{"--aiperf", aiperfRuns, "--measured", "x.csv", "-c", "../../examples/synthetic.yaml"}, "exclusive"},
		{"csv", []string{"--aiperf", "../../sim/calibrate/aiperf/testdata/profile_export_aiperf.csv", "-c", "../../examples/synthetic.yaml"},
			"profile_export_aiperf.csv: is not an AIPerf or GenAI-Perf summary"},
		{"version", []string{"--aiperf", "../../sim/calibrate/aiperf/testdata/schema-2.json", "-c", "../../examples/synthetic.yaml"},
			"schema-2.json: schema_version: \"2.0\" is not a version servesweep reads: want 1.x"},
		{"config without aiperf", []string{"--measured", "x.csv", "-c", "../../examples/synthetic.yaml"}, "-c and --set give the config of --aiperf runs"},
		{"one run twice", []string{"--aiperf", aiperfRuns + "/c8", "--aiperf", aiperfRuns, "-c", "../../examples/synthetic.yaml"},
			"--aiperf: the run " + aiperfRuns + "/c8/profile_export_aiperf.json is given twice (also as " + aiperfRuns + "/c8/profile_export_aiperf.json)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := runCLI(t, append([]string{"validate"}, c.args...)...)
			if code != exitConfigError || !strings.Contains(errs, c.want) || out != "" {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 with %q", code, out, errs, c.want)
			}
		})
	}
}

// A config that leaves its warm-up and drain out of its statistics (a capacity probe's
// recommendation) is scored against AIPerf's whole run as a whole run: the same prediction as
// the config without them, and the report says so. The run's ramp (none: its input_config has no
// concurrency_ramp_duration) and request count replace the config's, also a per-load-unit stop.
func TestValidateAIPerfCountsTheWholeRun(t *testing.T) {
	run := filepath.Join(aiperfRuns, "c16", "profile_export_aiperf.json")
	predicted := func(sets ...string) aiperfReport {
		t.Helper()
		args := append([]string{"validate", "--aiperf", run, "-c", "../../examples/synthetic.yaml", "--format", "json"}, sets...)
		code, out, errs := runCLI(t, args...)
		if code != exitOK {
			t.Fatalf("%v: exit %d, stderr %s", sets, code, errs)
		}
		var rep aiperfReport
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("%v:\n%s", err, out)
		}
		return rep
	}
	whole := predicted()
	steady := predicted("--set", "traffic.load.warmup_seconds=5", "--set", "traffic.load.cooldown=true", "--set", "traffic.load.ramp_seconds=2",
		"--set", "traffic.stop={requests_per_load_unit: 24}")
	if got := strings.Join(steady.Runs[0].Load, " "); got != "traffic.load.warmup_seconds=0 traffic.load.cooldown=false traffic.load.ramp_seconds=0 "+
		"traffic.stop.requests_per_load_unit=6.25" {
		t.Errorf("load %q, want the warm-up and the drain counted, no ramp and 100 requests (6.25 × 16)", got)
	}
	if len(whole.Runs[0].Load) != 0 {
		t.Errorf("load %q for a config that is the run", whole.Runs[0].Load)
	}
	for i, c := range steady.Runs[0].Comparisons {
		if w := whole.Runs[0].Comparisons[i]; c.PredictedValue != w.PredictedValue {
			t.Errorf("%s %s: predicted %v as a steady window, %v as the run", c.Metric, c.Stat, c.PredictedValue, w.PredictedValue)
		}
	}
	// The config is what the load sets change: a 2 s ramp on its own predicts another TTFT.
	ramped := predicted("--set", "traffic.load.ramp_seconds=2", "--set", "traffic.load.warmup_seconds=5")
	if got := strings.Join(ramped.Runs[0].Load, " "); got != "traffic.load.warmup_seconds=0 traffic.load.ramp_seconds=0" {
		t.Errorf("load %q", got)
	}
}

// A config whose timing ignores the GPU and the model (the seed's polynomial) is scored with a
// warning that says so, once; default timing draws none.
func TestValidateAIPerfWarnsOfBlindTiming(t *testing.T) {
	args := []string{"validate", "--aiperf", aiperfRuns, "-c", "../../examples/synthetic.yaml", "--format", "json"}
	code, out, errs := runCLI(t, args...)
	var rep aiperfReport
	if err := json.Unmarshal([]byte(out), &rep); code != exitOK || err != nil {
		t.Fatalf("exit %d (%v): %s", code, err, errs)
	}
	want := "engine.workers.aggregated.timing is polynomial, which reads neither engine.hardware nor engine.model"
	if len(rep.ConfigWarnings) != 1 || !strings.Contains(rep.ConfigWarnings[0], want) || strings.Count(errs, want) != 1 {
		t.Errorf("config warnings %q, stderr %q; want one naming the polynomial timing", rep.ConfigWarnings, errs)
	}
	code, out, errs = runCLI(t, append(args, "--set", "engine.workers.aggregated.timing={type: default}",
		"--set", "engine.workers.aggregated.kv_cache.capacity={type: default, memory_fraction: 0.9}")...)
	if err := json.Unmarshal([]byte(out), &rep); code != exitOK || err != nil || len(rep.ConfigWarnings) != 0 || strings.Contains(errs, "reads neither") {
		t.Errorf("default timing: exit %d (%v), warnings %q, stderr %q", code, err, rep.ConfigWarnings, errs)
	}
}
