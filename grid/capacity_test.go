package grid

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/servesweep/servesweep/results"
	"github.com/servesweep/servesweep/sim/config"
)

// withSLA is base with an SLA, which capacity search needs.
var withSLA = base + "evaluation: {sla: {ttft_ms: 500, itl_ms: 50}}\n"

func TestCapacitySearchDefaultsAndValues(t *testing.T) {
	s, err := Parse([]byte(withSLA), "spec.yaml", []string{"optimization.capacity_search={}"}, nil, results.CheckMetric)
	if err != nil {
		t.Fatal(err)
	}
	want := CapacitySearch{Attainment: 0.99, Min: 1, Max: 4096, RelativeTolerance: 0.05, MaxProbes: 16}
	if cs := s.Optimization.CapacitySearch; cs == nil || *cs != want {
		t.Fatalf("defaults %+v, want %+v", cs, want)
	}
	s, err = Parse([]byte(withSLA), "spec.yaml", []string{
		"optimization.capacity_search={attainment: 0.9, min: 2, max: 64, relative_tolerance: 0.1, max_probes: 5}"}, nil, results.CheckMetric)
	if err != nil {
		t.Fatal(err)
	}
	want = CapacitySearch{Attainment: 0.9, Min: 2, Max: 64, RelativeTolerance: 0.1, MaxProbes: 5}
	if cs := s.Optimization.CapacitySearch; *cs != want {
		t.Fatalf("values %+v, want %+v", cs, want)
	}
	if s, _ := Parse([]byte(withSLA), "spec.yaml", nil, nil, results.CheckMetric); s.Optimization.CapacitySearch != nil || s.Optimization.Cost != nil {
		t.Error("capacity search or cost on without the section")
	}
	// null and false switch a section off (so that --set can), true is the defaults.
	for _, set := range []string{"optimization.capacity_search=null", "optimization.capacity_search=false", "optimization.capacity_search=~"} {
		s, err := Parse([]byte(withSLA), "spec.yaml", []string{"optimization.capacity_search={}", "optimization.cost={gpu_hour_usd: {h200: 1}}",
			set, "optimization.cost=" + strings.TrimPrefix(set, "optimization.capacity_search=")}, nil, results.CheckMetric)
		if err != nil || s.Optimization.CapacitySearch != nil || s.Optimization.Cost != nil {
			t.Errorf("%s: capacity search %v, cost %v, err %v", set, s.Optimization.CapacitySearch, s.Optimization.Cost, err)
		}
	}
	s, err = Parse([]byte(withSLA), "spec.yaml", []string{"optimization.capacity_search=true"}, nil, results.CheckMetric)
	if err != nil || s.Optimization.CapacitySearch == nil || s.Optimization.CapacitySearch.MaxProbes != DefaultCapacityMaxProbes {
		t.Errorf("capacity_search: true gives %+v (%v), want the defaults", s.Optimization.CapacitySearch, err)
	}
}

// Every invalid capacity_search or cost setting is exit 2 (config.Errors) naming its field.
func TestCapacityAndCostErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		sets []string
		path string
		msg  string
	}{
		{"attainment 0", []string{"optimization.capacity_search={attainment: 0}"}, "optimization.capacity_search.attainment", "in (0, 1]"},
		{"a word", []string{"optimization.capacity_search=yes"}, "optimization.capacity_search",
			`must be true, false, null or a mapping of its settings ({} for the defaults; attainment, min, max, relative_tolerance, max_probes), got "yes" (string)`},
		{"attainment above 1", []string{"optimization.capacity_search={attainment: 1.5}"}, "optimization.capacity_search.attainment", "in (0, 1]"},
		{"min > max", []string{"optimization.capacity_search={min: 64, max: 8}"}, "optimization.capacity_search.min", "must be <= max (8)"},
		{"zero tolerance", []string{"optimization.capacity_search={relative_tolerance: 0}"}, "optimization.capacity_search.relative_tolerance", "> 0"},
		{"tolerance as a percent", []string{"optimization.capacity_search={relative_tolerance: 5}"}, "optimization.capacity_search.relative_tolerance", "must be below 1 (a ratio of the capacity: 0.05 for 5 %), got 5"},
		{"negative min", []string{"optimization.capacity_search={min: -1}"}, "optimization.capacity_search.min", "> 0"},
		{"one probe", []string{"optimization.capacity_search={max_probes: 1}"}, "optimization.capacity_search.max_probes", ">= 2"},
		{"huge max", []string{"optimization.capacity_search={max: 1e300}"}, "optimization.capacity_search.max", "must be from 1e-06 to 1e+09"},
		{"huge price", []string{"optimization.cost={gpu_hour_usd: {h200_sxm: 1e308}}"}, "optimization.cost.gpu_hour_usd.h200_sxm", "at most 1e+06"},
		{"unknown key", []string{"optimization.capacity_search={tolerance: 0.1}"}, "optimization.capacity_search.tolerance", "unknown field"},
		{"octal-looking bound", []string{"optimization.capacity_search={min: 010, max: 256}"}, "optimization.capacity_search.min",
			"got 010, whose leading zero makes YAML read it as octal (8); write 10"},
		{"octal-looking price", []string{"optimization.cost={gpu_hour_usd: {h200_sxm: 010}}"}, "optimization.cost.gpu_hour_usd.h200_sxm", "octal (8)"},
		{"octal-looking attainment", []string{"optimization.capacity_search={attainment: 01}"}, "optimization.capacity_search.attainment", "got 01, whose leading zero"},
		{"domain on the intensity", []string{"optimization.capacity_search={}", "traffic.load.concurrency={choices: [1, 2]}"},
			"traffic.load.concurrency", "cannot be searched together with optimization.capacity_search"},
		{"rate domain", []string{"optimization.capacity_search={}",
			"traffic.load={type: poisson, requests_per_second: {choices: [1, 2]}}"}, "traffic.load.requests_per_second", "capacity_search"},
		{"no prices", []string{"optimization.cost={}"}, "optimization.cost.gpu_hour_usd", "required"},
		{"bad price", []string{"optimization.cost={gpu_hour_usd: {h200_sxm: -2}}"}, "optimization.cost.gpu_hour_usd.h200_sxm", "> 0"},
		{"alias price twice", []string{"optimization.cost={gpu_hour_usd: {h200_sxm: 2, h200: 3}}"}, "optimization.cost.gpu_hour_usd.h200",
			"a second price for hardware h200_sxm (optimization.cost.gpu_hour_usd.h200_sxm priced it first); keep one of the two keys"},
		{"cost objective without cost", []string{"optimization.objectives=[{metric: usd_per_million_output_tokens, direction: minimize}]"},
			"optimization.objectives[0].metric", "needs optimization.cost"},
		{"cost constraint without cost", []string{"optimization.constraints={max_cost_usd_per_hour: 10}"},
			"optimization.constraints.max_cost_usd_per_hour", "needs optimization.cost"},
		{"bad cost constraint", []string{"optimization.cost={gpu_hour_usd: {h200_sxm: 2}}",
			"optimization.constraints={max_usd_per_million_output_tokens: 0}"}, "optimization.constraints.max_usd_per_million_output_tokens", "> 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(withSLA), "spec.yaml", tc.sets, nil, results.CheckMetric)
			checkErrorAt(t, err, tc.path, tc.msg)
		})
	}
}

// checkErrorAt requires err to be config.Errors with an error at path whose message contains msg.
func checkErrorAt(t *testing.T, err error, path, msg string) {
	t.Helper()
	var ces config.Errors
	if !errors.As(err, &ces) {
		t.Fatalf("err = %v, want config.Errors", err)
	}
	for _, e := range ces {
		if e.Path == path && strings.Contains(e.Msg, msg) {
			if e.File != "spec.yaml" {
				t.Errorf("error does not name the file: %v", e)
			}
			return
		}
	}
	t.Errorf("no error at %s containing %q; got:\n%v", path, msg, err)
}

// What only the points can tell is checked at expansion: the SLA, whole-number concurrency
// bounds, loads the config refuses, and a hardware without a price.
func TestCapacityAndCostExpansionErrors(t *testing.T) {
	for _, tc := range []struct {
		name, spec string
		sets       []string
		path, msg  string
	}{
		{"no SLA", base, []string{"optimization.capacity_search={}"}, "optimization.capacity_search", "needs evaluation.sla"},
		{"SLA attainment objective without an SLA", base, []string{"optimization.objectives=[{metric: sla_attainment, direction: maximize}]"},
			"optimization.objectives[0].metric", "sla_attainment needs evaluation.sla"},
		{"fractional concurrency", withSLA, []string{"optimization.capacity_search={min: 1.5}"}, "optimization.capacity_search.min", "whole number"},
		{"concurrency above the requests limit", withSLA, []string{"optimization.capacity_search={max: 3e6}"}, "optimization.capacity_search.max", "at most 2000000"},
		{"max beyond the requests limit", withSLA, []string{"optimization.capacity_search={max: 100000}",
			"traffic.stop={requests_per_load_unit: 100}"}, "optimization.capacity_search.max", "invalid at load 100000"},
		{"a load profile", withSLA, []string{"optimization.capacity_search={}",
			"traffic.load={type: poisson, profile: [{until_seconds: 30, requests_per_second: 5}, {until_seconds: 60, requests_per_second: 60}]}",
			"traffic.stop={requests: 100}"}, "optimization.capacity_search", "cannot search a load whose traffic.load.profile"},
		// (600 − 1.1 × 200) / 30 = 12.67 requests/s: above it 600 requests bring fewer than 1.1 ×
		// the 200 that attainment 0.99 is measured on after a 30 s warm-up.
		{"fixed count after a warm-up", withSLA, []string{"optimization.capacity_search={max: 12.67}",
			"traffic.load={type: poisson, requests_per_second: 1, warmup_seconds: 30}", "traffic.stop={requests: 600}"},
			"optimization.capacity_search.max", "is 12.67 requests/s, above the 12.67 at which traffic.stop.requests (a fixed 600) still brings 1.1 × 200 requests after traffic.load.warmup_seconds (30 s), 200 being the fewest an attainment of 0.99 is measured on: faster probes would measure a handful of requests or none, and the run's length would set the capacity; set max to at most 12.66, or use"},
		// Sessions of 4 turns: (100 − 1.1 × 200 / 4) / 10 = 4.5 sessions/s; below min, no max helps.
		{"fixed sessions after a warm-up", withSLA, []string{"optimization.capacity_search={min: 6, max: 20}",
			"traffic.source={type: synthetic-session, new_input_tokens_per_turn: 100, output_tokens_per_turn: 10, session: {turns: 4}}",
			"traffic.load={type: constant_rate, sessions_per_second: 1, warmup_seconds: 10}", "traffic.stop={sessions: 100}"},
			"optimization.capacity_search.max", "above the 4.5 at which traffic.stop.sessions (a fixed 100) still brings 1.1 × 200 requests after traffic.load.warmup_seconds (10 s), 200 being the fewest an attainment of 0.99 is measured on: faster probes would measure a handful of requests or none, and the run's length would set the capacity; use"},
		{"hardware without a price", withSLA, []string{"engine.hardware={choices: [h200_sxm, h100_sxm]}",
			"optimization.cost={gpu_hour_usd: {h200: 3.5}}"}, "optimization.cost.gpu_hour_usd", "no price for hardware h100_sxm (used by 1 points)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Parse([]byte(tc.spec), "spec.yaml", tc.sets, nil, results.CheckMetric)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			_, err = s.Expand()
			checkErrorAt(t, err, tc.path, tc.msg)
		})
	}
}

func TestCostPricesEachPoint(t *testing.T) {
	x := expand(t, withSLA, "engine.hardware={choices: [h200, h100_sxm]}", "engine.workers.aggregated.parallelism.tensor=2",
		"optimization.cost={gpu_hour_usd: {h200_sxm: 3.5, h100: 2.5}}")
	if len(x.Points) != 2 {
		t.Fatalf("%d points", len(x.Points))
	}
	for _, p := range x.Points {
		want := map[string]float64{"h200": 7, "h100_sxm": 5}[p.Config.Engine.Hardware] // 2 GPUs each
		if p.CostUSDPerHour != want {
			t.Errorf("%s: %g USD per hour, want %g", p.Config.Engine.Hardware, p.CostUSDPerHour, want)
		}
	}
	// Disaggregated roles may run on their own hardware: each role's GPUs at its own price
	// (prefill 1 × TP2 on b200 = 2 × 6; decode 2 × TP1 on h200, inherited = 2 × 3.5).
	disagg := []string{"engine.mode=disaggregated", "engine.workers.prefill.hardware=b200_sxm",
		"engine.workers.prefill.parallelism={replicas: 1, tensor: 2}", "engine.workers.decode.parallelism={replicas: 2, tensor: 1}"}
	x = expand(t, both, append(disagg, "optimization.cost={gpu_hour_usd: {h200_sxm: 3.5, b200_sxm: 6}}")...)
	if got := x.Points[0].CostUSDPerHour; got != 19 {
		t.Errorf("disaggregated on b200 + h200: %g USD per hour, want 19", got)
	}
	// Without a price for the prefill role's hardware the spec is refused, naming it.
	s, err := Parse([]byte(both), "spec.yaml", append(disagg, "optimization.cost={gpu_hour_usd: {h200_sxm: 3.5}}"), nil, results.CheckMetric)
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Expand()
	checkErrorAt(t, err, "optimization.cost.gpu_hour_usd", "no price for hardware b200_sxm")
	// A price no point uses is a warning.
	x = expand(t, withSLA, "optimization.cost={gpu_hour_usd: {h200_sxm: 3.5, tpu_v5: 1}}")
	if len(otherWarnings(x)) != 1 || !strings.Contains(otherWarnings(x)[0], "optimization.cost.gpu_hour_usd.tpu_v5: no point runs on this hardware (a typo?") {
		t.Errorf("warnings %q", otherWarnings(x))
	}
	// A catalog GPU's price no point uses (the hardware narrowed) is unused, not a typo.
	x = expand(t, withSLA, "optimization.cost={gpu_hour_usd: {h200_sxm: 3.5, h100_sxm: 2}}")
	if len(otherWarnings(x)) != 1 || !strings.Contains(otherWarnings(x)[0], "optimization.cost.gpu_hour_usd.h100_sxm: unused, no point runs on h100_sxm (the grid uses h200_sxm)") {
		t.Errorf("warnings %q", otherWarnings(x))
	}
}

// A price no point uses is warned about under the key the spec wrote (b200), not only the
// catalog id it resolves to (b200_sxm), which the user may never have typed.
func TestUnusedPriceNamesSpecKey(t *testing.T) {
	x := expand(t, withSLA, "optimization.cost={gpu_hour_usd: {h200: 3.5, b200: 5}}")
	want := "spec.yaml: optimization.cost.gpu_hour_usd.b200: unused, no point runs on b200 (b200_sxm; the grid uses h200_sxm)"
	if w := otherWarnings(x); len(w) != 1 || w[0] != want {
		t.Errorf("warnings %q, want [%q]", w, want)
	}
	// A key that resolves to no catalog GPU is named as written too.
	x = expand(t, withSLA, "optimization.cost={gpu_hour_usd: {h200: 3.5, b2000: 5}}")
	want = "spec.yaml: optimization.cost.gpu_hour_usd.b2000: no point runs on this hardware (a typo? the grid uses h200_sxm)"
	if w := otherWarnings(x); len(w) != 1 || w[0] != want {
		t.Errorf("warnings %q, want [%q]", w, want)
	}
}

// AtProbe writes the probe's ramp and warm-up into the config, each exactly (the shortest
// decimal that reads back as the float), and leaves a nil one as the point has it.
func TestAtProbe(t *testing.T) {
	x := expand(t, withSLA, "optimization.capacity_search={}")
	p := &x.Points[0]
	ramp, warmup := 11.800614017275556, 23.601228034551113
	cfg, data, err := p.AtProbe(37, &ramp, &warmup)
	if err != nil {
		t.Fatal(err)
	}
	l := cfg.Traffic.Load
	if l.Concurrency != 37 || l.RampSeconds == nil || *l.RampSeconds != ramp || l.WarmupSeconds == nil || *l.WarmupSeconds != warmup ||
		!strings.Contains(string(data), "ramp_seconds: 11.800614017275556, warmup_seconds: 23.601228034551113") {
		t.Errorf("ramp %v warm-up %v, YAML:\n%s", l.RampSeconds, l.WarmupSeconds, data)
	}
	cfg, data, err = p.AtProbe(37, nil, &warmup)
	if err != nil || cfg.Traffic.Load.RampSeconds != nil || strings.Contains(string(data), "ramp_seconds") || cfg.Traffic.Load.Warmup() != warmup {
		t.Errorf("warm-up only: %v, ramp %v, YAML:\n%s", err, cfg.Traffic.Load.RampSeconds, data)
	}
	// A ramp is a concurrency load's: under poisson it is the schema's error.
	rate := expand(t, withSLA, "traffic.load={type: poisson, requests_per_second: 2}")
	if _, _, err := rate.Points[0].AtProbe(3, &ramp, nil); err == nil || !strings.Contains(err.Error(), "does not accept [ramp_seconds]") {
		t.Errorf("ramp under poisson: %v", err)
	}
}

func TestAtLoad(t *testing.T) {
	x := expand(t, withSLA, "optimization.capacity_search={}")
	p := &x.Points[0]
	cfg, data, err := p.AtLoad(37)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Traffic.Load.Concurrency != 37 || !strings.Contains(string(data), "concurrency: 37") {
		t.Errorf("concurrency %d, YAML:\n%s", cfg.Traffic.Load.Concurrency, data)
	}
	if p.Config.Traffic.Load.Concurrency != 4 {
		t.Error("AtLoad changed the point's own config")
	}
	// The rest of the config is unchanged: back at the point's own load, it is the same point.
	back, _, err := p.AtLoad(4)
	if err != nil || PointID(back) != p.ID {
		t.Errorf("AtLoad(4) gives point %s (%v), want %s", PointID(back), err, p.ID)
	}
	for _, tc := range []struct {
		load, unit string
		x          float64
		get        func(*config.Config) float64
	}{
		{"{type: poisson, requests_per_second: 2}", "requests_per_second", 2.5, func(c *config.Config) float64 { return c.Traffic.Load.RequestsPerSecond }},
		{"{type: constant_rate, requests_per_second: 2}", "requests_per_second", 0.125, func(c *config.Config) float64 { return c.Traffic.Load.RequestsPerSecond }},
	} {
		x := expand(t, withSLA, "traffic.load="+tc.load)
		p := &x.Points[0]
		if u := p.Config.Traffic.Load.IntensityField(); u != tc.unit {
			t.Errorf("%s: unit %s, want %s", tc.load, u, tc.unit)
		}
		cfg, _, err := p.AtLoad(tc.x)
		if err != nil || tc.get(cfg) != tc.x {
			t.Errorf("%s at %g: %v, %v", tc.load, tc.x, err, cfg)
		}
	}
	// Under trace_timestamps every probe replays the segment the point's own speedup and time
	// stop give (2 × 30 s of trace time), to its end; a stop's own max_trace_seconds is kept.
	trace := filepath.Join(t.TempDir(), "trace.jsonl")
	if err := os.WriteFile(trace, []byte(`{"timestamp": 0, "input_length": 100, "output_length": 1, "hash_ids": [1]}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ stop, want string }{
		{"{max_virtual_time_seconds: 30}", "stop: {max_trace_seconds: 60}"},
		{"{max_virtual_time_seconds: 30, max_trace_seconds: 45}", "stop: {max_trace_seconds: 45}"},
		{"{max_trace_seconds: 45}", "stop: {max_trace_seconds: 45}"},
	} {
		x = expand(t, withSLA, "traffic.source={type: trace, paths: ["+trace+"], block_size: 128}",
			"traffic.load={type: trace_timestamps, speedup: 2}", "traffic.stop="+tc.stop)
		p := &x.Points[0]
		for _, speedup := range []float64{0.5, 8} {
			cfg, data, err := p.AtLoad(speedup)
			if err != nil || cfg.Traffic.Load.Speedup != speedup || cfg.Traffic.Stop.MaxVirtualTimeSeconds != 0 ||
				!strings.Contains(string(data), tc.want) {
				t.Errorf("stop %s at speedup %g: %v, YAML:\n%s", tc.stop, speedup, err, data)
			}
		}
	}
	// A load the config's bounds refuse is the config error.
	x = expand(t, withSLA, "traffic.stop={requests_per_load_unit: 100}")
	if _, _, err := x.Points[0].AtLoad(1e6); err == nil || !strings.Contains(err.Error(), "2,000,000") && !strings.Contains(err.Error(), "2000000") {
		t.Errorf("AtLoad beyond the request limit: %v", err)
	}
}

func TestCapacityWarnings(t *testing.T) {
	drawn := "traffic.source.output_tokens={distribution: uniform, min: 100, max: 156}"
	x := expand(t, withSLA, "optimization.capacity_search={}", "traffic.stop={requests: 100}", drawn)
	if len(x.Warnings) != 1 || !strings.Contains(x.Warnings[0], "traffic.stop.requests is a fixed 100 while optimization.capacity_search "+
		"goes up to concurrency 4096: above concurrency 25 a probe has fewer than 4 requests per slot, too few to ramp its first wave "+
		"and measure past its warm-up, so a probe above it fails its point; use traffic.stop.requests_per_load_unit to scale the run "+
		"with the load, or a capacity_search.max of at most 25") {
		t.Errorf("fixed stop: %q", x.Warnings)
	}
	// With an explicit ramp the run is as given: up to the count.
	x = expand(t, withSLA, "optimization.capacity_search={max: 200}", "traffic.stop={requests: 100}", "traffic.load.ramp_seconds=0", drawn)
	if len(x.Warnings) != 2 || !strings.Contains(x.Warnings[0], "goes up to concurrency 200: above concurrency 100 the loop never holds "+
		"its load, every request starting at once, so a probe above it fails its point") {
		t.Errorf("fixed stop, explicit ramp: %q", x.Warnings)
	}
	// A min no probe of the count can measure is refused.
	s, err := Parse([]byte(withSLA), "spec.yaml", []string{"optimization.capacity_search={min: 30}", "traffic.stop={sessions: 100}",
		"traffic.source={type: synthetic-session, new_input_tokens_per_turn: 100, output_tokens_per_turn: 10, session: {turns: 2}}"},
		nil, results.CheckMetric)
	if err == nil {
		_, err = s.Expand()
	}
	if err == nil || !strings.Contains(err.Error(), "optimization.capacity_search.min: 30: traffic.stop.sessions is a fixed 100, and above "+
		"concurrency 25 a probe has fewer than 4 sessions per slot") || !strings.Contains(err.Error(), "or a min of at most 25") {
		t.Errorf("min above the count's limit: %v", err)
	}
	// A fixed count after an explicit warm-up: the faster deployments' runs can end within it.
	x = expand(t, withSLA, "optimization.capacity_search={max: 25}", "traffic.stop={requests: 100}", "traffic.load.warmup_seconds=30", drawn)
	if len(x.Warnings) != 1 || !strings.Contains(x.Warnings[0], "traffic.stop.requests is a fixed 100 with traffic.load.warmup_seconds 30 s: "+
		"the faster a deployment serves them, the sooner its run ends") {
		t.Errorf("fixed stop after a warm-up: %q", x.Warnings)
	}
	trace := filepath.Join(t.TempDir(), "trace.jsonl")
	if err := os.WriteFile(trace, []byte(`{"timestamp": 0, "input_length": 100, "output_length": 1, "hash_ids": [1]}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	x = expand(t, withSLA, "optimization.capacity_search={attainment: 0.95}", "traffic.source={type: trace, paths: ["+trace+"], block_size: 128}",
		"traffic.load={type: concurrency, concurrency: 1}", "traffic.stop={max_virtual_time_seconds: 60}")
	// 1 − 0.95 is 0.050000000000000044 in floating point: the share prints as 5 %.
	if len(x.Warnings) != 1 || !strings.Contains(x.Warnings[0], "traffic.stop.max_virtual_time_seconds (60 s) ends each probe") ||
		!strings.Contains(x.Warnings[0], "(with attainment 0.95, at most 5 % of the measured requests") {
		t.Errorf("time stop: %q", x.Warnings)
	}
	// Without a capacity search, points at several speedups under a time stop replay different
	// segments: warned, naming them; a max_trace_seconds stop replays one.
	x = expand(t, withSLA, "traffic.source={type: trace, paths: ["+trace+"], block_size: 128}",
		"traffic.load={type: trace_timestamps, speedup: {choices: [0.5, 2]}}", "traffic.stop={max_virtual_time_seconds: 600}")
	if len(x.Warnings) != 1 || !strings.Contains(x.Warnings[0], "the points at speedup 0.5, 2 replay the first 300, 1200 s of the trace") {
		t.Errorf("speedups over a time stop: %q", x.Warnings)
	}
	x = expand(t, withSLA, "traffic.source={type: trace, paths: ["+trace+"], block_size: 128}",
		"traffic.load={type: trace_timestamps, speedup: {choices: [0.5, 2]}}", "traffic.stop={max_trace_seconds: 600}")
	if len(x.Warnings) != 0 {
		t.Errorf("speedups over a trace segment: %q", x.Warnings)
	}
	// Under trace_timestamps no probe is cut: each replays the stop's segment to its end (AtLoad).
	x = expand(t, withSLA, "optimization.capacity_search={attainment: 0.95}", "traffic.source={type: trace, paths: ["+trace+"], block_size: 128}",
		"traffic.load={type: trace_timestamps}", "traffic.stop={max_virtual_time_seconds: 60}")
	if len(x.Warnings) != 0 {
		t.Errorf("time stop under trace_timestamps: %q", x.Warnings)
	}
	// A time stop beside max_trace_seconds is dropped from every probe: warned, naming where each
	// came from (the file, or the --set that wrote it); without a capacity search it is kept.
	traceSets := []string{"optimization.capacity_search={attainment: 0.95}", "traffic.source={type: trace, paths: [" + trace + "], block_size: 128}",
		"traffic.load={type: trace_timestamps, speedup: 2}"}
	dropped := ": traffic.stop.max_virtual_time_seconds (600 s) beside traffic.stop.max_trace_seconds (1200 s) is dropped from every " +
		"probe of the capacity search: each probe replays the first 1200 s of the trace to its end, whatever its speedup, and ignores " +
		"the time stop (predict of the same config ends at whichever stop comes first); the rows' config_yaml and the recommendations " +
		"carry max_trace_seconds alone; remove max_virtual_time_seconds"
	inFile := strings.Replace(withSLA, "stop: {requests: 10}", "stop: {max_trace_seconds: 1200, max_virtual_time_seconds: 600}", 1)
	for _, tc := range []struct {
		spec string
		sets []string
		at   string
	}{
		{inFile, nil, "spec.yaml"},
		{withSLA, []string{"traffic.stop={max_virtual_time_seconds: 600, max_trace_seconds: 1200}"},
			"spec.yaml (--set traffic.stop={max_virtual_time_seconds: 600, max_trace_seconds: 1200})"},
		{withSLA, []string{"traffic.stop={max_virtual_time_seconds: 600}", "traffic.stop.max_trace_seconds=1200"},
			"spec.yaml (--set traffic.stop.max_trace_seconds=1200, --set traffic.stop={max_virtual_time_seconds: 600})"},
	} {
		x = expand(t, tc.spec, append(slices.Clone(traceSets), tc.sets...)...)
		if want := []string{tc.at + dropped}; !slices.Equal(x.Warnings, want) {
			t.Errorf("%v: warnings %q\nwant %q", tc.sets, x.Warnings, want)
		}
		if p := x.Points[0]; p.Config.Traffic.Stop.MaxVirtualTimeSeconds != 600 {
			t.Errorf("%v: the point's own stop %+v, want its time stop kept", tc.sets, p.Config.Traffic.Stop)
		}
	}
	x = expand(t, inFile, traceSets[1], "traffic.load={type: trace_timestamps, speedup: 1}")
	if len(x.Warnings) != 0 {
		t.Errorf("both stops without a capacity search: %q", x.Warnings)
	}
	if x = expand(t, withSLA, "optimization.capacity_search={}", "traffic.stop={requests_per_load_unit: 10}", drawn); len(x.Warnings) != 0 {
		t.Errorf("a stop that scales with the load: %q", x.Warnings)
	}
	// Fixed lengths under a concurrency load are warned, unless the spec keeps the synchronized
	// start on purpose; session turns too.
	x = expand(t, withSLA, "optimization.capacity_search={}", "traffic.stop={requests_per_load_unit: 10}")
	if len(x.Warnings) != 1 || !strings.Contains(x.Warnings[0], "spec.yaml: traffic.source.input_tokens and output_tokens are fixed") {
		t.Errorf("fixed lengths: %q", x.Warnings)
	}
	// (ramp_seconds 0 is warned of on its own: burstStartWarning.)
	if x = expand(t, withSLA, "optimization.capacity_search={}", "traffic.stop={requests_per_load_unit: 10}", "traffic.load.ramp_seconds=0"); len(x.Warnings) != 1 ||
		!strings.Contains(x.Warnings[0], "sends every point's first wave at once") {
		t.Errorf("fixed lengths with ramp_seconds 0: %q", x.Warnings)
	}
	x = expand(t, withSLA, "optimization.capacity_search={}", "traffic.stop={sessions_per_load_unit: 10}",
		"traffic.source={type: synthetic-session, new_input_tokens_per_turn: 100, output_tokens_per_turn: 10, session: {turns: 2}}")
	if len(x.Warnings) != 1 || !strings.Contains(x.Warnings[0], "traffic.source.new_input_tokens_per_turn and output_tokens_per_turn are fixed") {
		t.Errorf("fixed session turns: %q", x.Warnings)
	}
	// A constant think time is warned under kv_router (fixed or among a domain's values) over two
	// replicas, not under round_robin alone, nor with a spread or no think time, nor over one
	// replica (unless a domain of replicas goes above one), where every policy places alike.
	sessions := "traffic.source={type: synthetic-session, new_input_tokens_per_turn: {distribution: uniform, min: 80, max: 120}, " +
		"output_tokens_per_turn: {distribution: uniform, min: 8, max: 12}, session: {turns: 2, inter_turn_delay_ms: 100}}"
	for _, c := range []struct {
		sets []string
		warn bool
	}{
		{[]string{"router.policy=kv_router"}, true},
		{[]string{"router.policy={choices: [round_robin, kv_router]}"}, true},
		{[]string{"router.policy=round_robin"}, false},
		{[]string{"router.policy=kv_router", "traffic.source.session.inter_turn_delay_stddev_ms=50"}, false},
		{[]string{"router.policy=kv_router", "traffic.source.session.inter_turn_delay_ms=0"}, false},
		{[]string{"router.policy=kv_router", "traffic.load.ramp_seconds=0"}, false},
		{[]string{"router.policy=kv_router", "engine.workers.aggregated.parallelism.replicas=1"}, false},
		{[]string{"router.policy=kv_router", "engine.workers.aggregated.parallelism.replicas={choices: [1, 4]}"}, true},
		{[]string{"router.policy=kv_router", "traffic.source={type: mixture, components: [{weight: 1, source: " +
			strings.TrimPrefix(sessions, "traffic.source=") + "}]}"}, true},
	} {
		sets := append([]string{"optimization.capacity_search={}", "traffic.stop={sessions_per_load_unit: 10}", sessions,
			"engine.workers.aggregated.parallelism.replicas=2"}, c.sets...)
		x = expand(t, withSLA, sets...)
		got := len(x.Warnings) == 1 && strings.Contains(x.Warnings[0],
			"spec.yaml: traffic.source.session.inter_turn_delay_ms is a constant 100 ms under kv_router")
		if got != c.warn || len(x.Warnings) > 1 {
			t.Errorf("%v: warnings %q, want the think-time warning: %v", c.sets, x.Warnings, c.warn)
		}
	}
}
