package grid

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/servesweep/servesweep/results"
)

// An SLA bound that looks like seconds is a warning of the expansion, once for the spec; a
// plausible one is not.
func TestExpandWarnsOfSecondsLikeSLA(t *testing.T) {
	x := expand(t, base, "evaluation.sla={ttft_ms: 2, itl_ms: 50}", "engine.workers.aggregated.parallelism.replicas={choices: [1, 2]}")
	want := "spec.yaml: evaluation.sla.ttft_ms: 2 ms looks like seconds: SLA bounds are in milliseconds, so this asks for 2 ms; " +
		"if 2 s was meant, write ttft_ms: 2000"
	if !slices.Equal(otherWarnings(x), []string{want}) {
		t.Errorf("warnings %q\nwant [%q]", otherWarnings(x), want)
	}
	if x = expand(t, base, "evaluation.sla={ttft_ms: 500, itl_ms: 50}"); len(otherWarnings(x)) != 0 {
		t.Errorf("a plausible SLA warns: %q", otherWarnings(x))
	}
}

// A sweep without a capacity search whose points run fixed lengths (or distributions of one
// value) at a concurrency above 1 is warned once, naming those concurrencies: such a closed loop
// falls into step, ramped or not (ramp_seconds 0 is the default start), and the points measure
// waves. Drawn lengths, a searched distribution parameter, a concurrency of 1, a rate load and a
// capacity search (fixedLengths warns there) are not.
func TestLockstepWarning(t *testing.T) {
	lockstep := func(x *Expansion) []string {
		var out []string
		for _, w := range x.Warnings {
			if strings.Contains(w, "fall into step") && !strings.Contains(w, "capacity search") {
				out = append(out, w)
			}
		}
		return out
	}
	want := "spec.yaml: traffic.source.input_tokens and output_tokens are fixed: under a concurrency load requests of one " +
		"length fall into step (batched together, they finish together and come back together), so every point " +
		"(concurrency 4) measures those waves, not a steady state, and the points' ranking can move with the run's " +
		"length; draw them from a distribution, e.g. output_tokens: {distribution: uniform, min: ..., max: ...}"
	if got := lockstep(expand(t, base)); !slices.Equal(got, []string{want}) {
		t.Errorf("fixed lengths at concurrency 4: %q\nwant [%q]", got, want)
	}
	for _, tc := range []struct {
		name string
		sets []string
		want string // a substring of the one warning, or "" for none
	}{
		{"ramped", []string{"traffic.load.ramp_seconds=5"}, "so every point (concurrency 4) measures those waves"},
		{"some concurrencies above 1", []string{"traffic.load.concurrency={choices: [1, 4, 16]}"}, "so the points at concurrency 4, 16 measure those waves, not a steady state"},
		{"sessions", []string{"traffic.source={type: synthetic-session, new_input_tokens_per_turn: 64, output_tokens_per_turn: 8, session: {turns: 2}}",
			"traffic.stop={sessions: 10}"}, "traffic.source.new_input_tokens_per_turn and output_tokens_per_turn are fixed"},
		{"a --set length", []string{"traffic.source.output_tokens={choices: [16, 32]}"}, "spec.yaml (--set traffic.source.output_tokens={choices: [16, 32]}): traffic.source.input_tokens"},
		{"concurrency 1", []string{"traffic.load.concurrency=1"}, ""},
		{"drawn output lengths", []string{"traffic.source.output_tokens={distribution: uniform, min: 4, max: 8}"}, ""},
		{"an explicit ramp_seconds 0, the default start", []string{"traffic.load.ramp_seconds=0"}, "so every point (concurrency 4) measures"},
		{"a distribution of one value", []string{"traffic.source.output_tokens={distribution: uniform, min: 8, max: 8}"}, "so every point (concurrency 4) measures"},
		{"a normal distribution without spread", []string{"traffic.source.output_tokens={distribution: normal, mean: 8, stddev: 0}"}, "so every point (concurrency 4) measures"},
		{"an empirical distribution of one value", []string{"traffic.source.output_tokens={distribution: empirical, values: [8, 8]}"}, "so every point (concurrency 4) measures"},
		{"a lognormal distribution without spread", []string{"traffic.source.output_tokens={distribution: lognormal, mean: 8, stddev: 0}"}, "so every point (concurrency 4) measures"},
		{"a distribution's bound searched", []string{"traffic.source.output_tokens={distribution: uniform, min: 8, max: {choices: [8, 16]}}"}, ""},
		{"a rate load", []string{"traffic.load={type: poisson, requests_per_second: 2}"}, ""},
		{"a capacity search", []string{"evaluation.sla={ttft_ms: 500, itl_ms: 50}", "optimization.capacity_search={}",
			"traffic.stop={requests_per_load_unit: 10}"}, ""},
	} {
		got := lockstep(expand(t, base, tc.sets...))
		if (tc.want == "") != (len(got) == 0) || len(got) > 1 || (tc.want != "" && !strings.Contains(got[0], tc.want)) {
			t.Errorf("%s: %q, want one containing %q", tc.name, got, tc.want)
		}
	}
}

// A capacity search over a searched length-distribution parameter is not warned about fixed
// lengths from its first point, whose distribution may be of one value where the others' are not.
func TestCapacityFixedLengthsWithASearchedDistribution(t *testing.T) {
	sets := []string{"evaluation.sla={ttft_ms: 500, itl_ms: 50}", "optimization.capacity_search={}", "traffic.stop={requests_per_load_unit: 10}",
		"traffic.source.output_tokens={distribution: uniform, min: 8, max: {choices: [8, 16]}}"}
	for _, w := range expand(t, base, sets...).Warnings {
		if strings.Contains(w, "are fixed") {
			t.Errorf("warned: %s", w)
		}
	}
	fixed := expand(t, base, append(sets[:3:3], "traffic.source.output_tokens={distribution: uniform, min: 8, max: 8}")...)
	if !slices.ContainsFunc(fixed.Warnings, func(w string) bool { return strings.Contains(w, "output_tokens are fixed") }) {
		t.Errorf("a distribution of one value under a capacity search: %q, want the fixed-lengths warning", fixed.Warnings)
	}
}

// A sweep without a capacity search whose concurrency load stops at a fixed count giving some
// concurrency fewer than SteadyCyclesPerSlot per slot is warned once, naming those concurrencies:
// sweep runs them as configured. base: 10 requests at concurrency 4 (2.5 per slot). A
// per-load-unit stop (lengthened where short), a count of 6 per slot, ramp_seconds 0, a rate load
// and a capacity search are not; an explicit ramp is (its points run as configured too).
func TestShortFixedRunWarning(t *testing.T) {
	short := func(x *Expansion) (out []string) {
		for _, w := range x.Warnings {
			if strings.Contains(w, "too few to spread the first wave") {
				out = append(out, w)
			}
		}
		return out
	}
	want := "spec.yaml: traffic.stop.requests: 10 gives the points at concurrency 4 fewer than 6 per slot, too few to spread " +
		"the first wave, leave a warm-up out and measure a steady state: they run as configured, their first wave at once " +
		"or over the ramp given, and their tail latencies can move with the run's length; set traffic.stop.requests_per_load_unit instead (lengthened where " +
		"short) or a count of at least 6 × the concurrency, or ramp_seconds: 0 to run every point that way"
	if got := short(expand(t, base)); !slices.Equal(got, []string{want}) {
		t.Errorf("10 requests at concurrency 4: %q\nwant [%q]", got, want)
	}
	for _, tc := range []struct {
		name string
		sets []string
		want string
	}{
		{"some concurrencies", []string{"traffic.load.concurrency={choices: [1, 2, 4]}"}, "the points at concurrency 2, 4 fewer than 6"},
		{"sessions", []string{"traffic.source={type: synthetic-session, new_input_tokens_per_turn: 64, output_tokens_per_turn: 8, session: {turns: 2}}",
			"traffic.stop={sessions: 23}"}, "traffic.stop.sessions: 23 gives the points at concurrency 4"},
		{"6 per slot", []string{"traffic.stop={requests: 24}"}, ""},
		{"6 per slot at some concurrencies", []string{"traffic.load.concurrency={choices: [1, 4, 50]}", "traffic.stop={requests: 24}"}, "the points at concurrency 50 fewer than 6"},
		{"per load unit", []string{"traffic.stop={requests_per_load_unit: 2}"}, ""},
		{"the synchronized start asked for", []string{"traffic.load.ramp_seconds=0"}, ""},
		{"an explicit ramp", []string{"traffic.load.ramp_seconds=2"}, "fewer than 6 per slot"},
		{"rate load", []string{"traffic.load={type: poisson, requests_per_second: 2}"}, ""},
		{"capacity search", []string{"evaluation.sla={ttft_ms: 500, itl_ms: 50}", "optimization.capacity_search={}"}, ""},
	} {
		got := short(expand(t, base, tc.sets...))
		if (tc.want == "") != (len(got) == 0) || len(got) > 1 || (tc.want != "" && !strings.Contains(got[0], tc.want)) {
			t.Errorf("%s: %q, want one containing %q", tc.name, got, tc.want)
		}
	}
}

// A fixed count that gives every concurrency SteadyCyclesPerSlot per slot but leaves some fewer
// than MinMeasuredRequests(0.99) = 200 requests measured after the two cycles of ramp and warm-up
// and before the last is warned, naming those concurrencies with their measured counts: 300
// requests at concurrency 10, 40 and 50 measure 270, 180 and 150 (at 60, 5 per slot, the other
// warning names it). Two-turn sessions count their turns: 60 sessions at concurrency 10 measure
// 30 sessions of 2 turns, 60 requests.
func TestThinFixedRunWarning(t *testing.T) {
	thin := func(x *Expansion) (out []string) {
		for _, w := range x.Warnings {
			if strings.Contains(w, "fewer requests measured in steady state") {
				out = append(out, w)
			}
		}
		return out
	}
	want := "spec.yaml (--set traffic.stop={requests: 300}): traffic.stop.requests: 300 leaves the points at concurrency 40 (about 180), 50 (about 150) fewer requests " +
		"measured in steady state (after 2 cycles per slot of ramp and warm-up, before the last) than the 200 an attainment of " +
		"0.99 needs to allow two misses: their tail latencies rest on their few slowest requests and can move with the run's " +
		"length; set traffic.stop.requests_per_load_unit instead (lengthened where short) or a larger count"
	x := expand(t, base, "traffic.load.concurrency={choices: [10, 40, 50, 60]}", "traffic.stop={requests: 300}")
	if got := thin(x); !slices.Equal(got, []string{want}) {
		t.Errorf("300 requests: %q\nwant [%q]", got, want)
	}
	// Under a p99 ITL bound the floor is 1,000 measured requests (PercentileFloorAttainment): 400
	// requests leave concurrency 10 about 370 and 64 about 208 (a user trial's 400 at 64, unwarned).
	x = expand(t, base, "traffic.load.concurrency={choices: [10, 64]}", "traffic.stop={requests: 400}", "evaluation.sla={p99_itl_ms: 100}")
	if got := thin(x); len(got) != 1 || !strings.Contains(got[0], "concurrency 10 (about 370), 64 (about 208) fewer requests") ||
		!strings.Contains(got[0], "than the 1000 evaluation.sla's percentile bounds need") {
		t.Errorf("400 requests under p99_itl_ms: %q", got)
	}
	for _, tc := range []struct {
		name string
		sets []string
		want string
	}{
		{"sessions", []string{"traffic.source={type: synthetic-session, new_input_tokens_per_turn: 64, output_tokens_per_turn: 8, session: {turns: 2}}",
			"traffic.load.concurrency=10", "traffic.stop={sessions: 60}"}, "concurrency 10 (about 60) fewer"},
		{"enough", []string{"traffic.load.concurrency=10", "traffic.stop={requests: 230}"}, ""},
		{"per load unit", []string{"traffic.stop={requests_per_load_unit: 6}"}, ""},
		{"the synchronized start asked for", []string{"traffic.load.ramp_seconds=0", "traffic.stop={requests: 30}"}, ""},
		{"capacity search", []string{"evaluation.sla={ttft_ms: 500, itl_ms: 50}", "optimization.capacity_search={}", "traffic.stop={requests: 30}"}, ""},
	} {
		got := thin(expand(t, base, tc.sets...))
		if (tc.want == "") != (len(got) == 0) || len(got) > 1 || (tc.want != "" && !strings.Contains(got[0], tc.want)) {
			t.Errorf("%s: %q, want one containing %q", tc.name, got, tc.want)
		}
	}
}

// A concurrency load with ramp_seconds: 0 is warned once, with or without a capacity search: its
// synchronized start and drain move each point with the run's length. An omitted or positive
// ramp and an open loop are not.
func TestBurstStartWarning(t *testing.T) {
	burst := func(x *Expansion) (out []string) {
		for _, w := range x.Warnings {
			if strings.Contains(w, "sends every point's first wave at once") {
				out = append(out, w)
			}
		}
		return out
	}
	want := "spec.yaml (--set traffic.load.ramp_seconds=0): traffic.load.ramp_seconds: 0 sends every point's first " +
		"wave at once and measures it with that start and its drain, as a benchmark that sends it so counts them: each point's " +
		"throughput and tail latencies then move with the run's length, and so can the answer; omit ramp_seconds to measure " +
		"each point in steady state (its first wave spread over a request lifetime and left out with its warm-up and drain)"
	if got := burst(expand(t, base, "traffic.load.ramp_seconds=0")); !slices.Equal(got, []string{want}) {
		t.Errorf("ramp_seconds 0: %q\nwant [%q]", got, want)
	}
	for _, tc := range []struct {
		name string
		sets []string
		want int
	}{
		{"capacity search", []string{"traffic.load.ramp_seconds=0", "evaluation.sla={ttft_ms: 500, itl_ms: 50}", "optimization.capacity_search={}"}, 1},
		{"omitted", nil, 0},
		{"a ramp", []string{"traffic.load.ramp_seconds=2"}, 0},
		{"rate load", []string{"traffic.load={type: poisson, requests_per_second: 2}"}, 0},
	} {
		if got := burst(expand(t, base, tc.sets...)); len(got) != tc.want {
			t.Errorf("%s: %q, want %d", tc.name, got, tc.want)
		}
	}
}

// A worker role or engine.kv_transfer the spec gives that no mode of the grid uses is dropped
// from every point with one warning naming the sections, the mode and the --set that gave them
// (predict refuses the same sections on a config of that mode); a mode domain over both modes,
// a section of the mode in use, an explicit null and a --set of the mode alone narrowing a file
// that gives both modes' sections are not warned about.
func TestUnusedModeSectionWarning(t *testing.T) {
	unused := func(x *Expansion) []string {
		var out []string
		for _, w := range x.Warnings {
			if strings.Contains(w, "dropped from every point: engine.mode") {
				out = append(out, w)
			}
		}
		return out
	}
	for _, tc := range []struct {
		name string
		spec string
		sets []string
		want string // the one warning, or "" for none
	}{
		{"a prefill role and kv_transfer by --set on an aggregated spec", base,
			[]string{"engine.workers.prefill={parallelism: {replicas: 4, tensor: 2}}", "engine.kv_transfer={bandwidth_gb_per_second: 5}"},
			"spec.yaml: engine.workers.prefill (--set engine.workers.prefill={parallelism: {replicas: 4, tensor: 2}}), " +
				"engine.kv_transfer (--set engine.kv_transfer={bandwidth_gb_per_second: 5}): dropped from every point: " +
				"engine.mode is aggregated, which has no prefill workers or KV transfer; remove them, or set engine.mode: " +
				"disaggregated (or {choices: [aggregated, disaggregated]}) to use them"},
		{"one --set below the section", base, []string{"engine.kv_transfer.bandwidth_gb_per_second=5"},
			"spec.yaml (--set engine.kv_transfer.bandwidth_gb_per_second=5): engine.kv_transfer: dropped from every point: " +
				"engine.mode is aggregated, which has no KV transfer; remove it, or set engine.mode: disaggregated " +
				"(or {choices: [aggregated, disaggregated]}) to use it"},
		{"a both-mode file of a concrete mode", both, nil,
			"spec.yaml: engine.workers.prefill, engine.workers.decode: dropped from every point: engine.mode is aggregated, " +
				"which has no prefill workers or decode workers; remove them, or set engine.mode: disaggregated " +
				"(or {choices: [aggregated, disaggregated]}) to use them"},
		{"a both-mode spec narrowed by a --set of the mode", both, []string{"engine.mode=aggregated"}, ""},
		{"a mode domain of one mode by --set", both, []string{"engine.mode={choices: [disaggregated]}"}, ""},
		{"narrowed, and a section by --set", both, []string{"engine.mode={choices: [disaggregated]}", "engine.workers.aggregated.parallelism.replicas=2"},
			"spec.yaml (--set engine.workers.aggregated.parallelism.replicas=2): engine.workers.aggregated: dropped from every point: " +
				"engine.mode's only choice is disaggregated (--set engine.mode={choices: [disaggregated]}), which has no aggregated " +
				"workers; remove it, or set engine.mode: aggregated (or {choices: [aggregated, disaggregated]}) to use it"},
		{"a mode domain of both modes", both, []string{"engine.mode={choices: [aggregated, disaggregated]}", "engine.kv_transfer={bandwidth_gb_per_second: 5}"}, ""},
		{"the aggregated spec as it is", base, nil, ""},
		{"an explicit null", base, []string{"engine.kv_transfer=null"}, ""},
	} {
		got := unused(expand(t, tc.spec, tc.sets...))
		if (tc.want == "" && len(got) != 0) || (tc.want != "" && !slices.Equal(got, []string{tc.want})) {
			t.Errorf("%s: %q\nwant %q", tc.name, got, tc.want)
		}
	}
}

// An objective of the spec whose direction reverses its metric's better one is warned about at
// its field, with the --set that gave it and the direction to write; the default objectives and
// an objective in its metric's better direction are not.
func TestObjectiveWarnings(t *testing.T) {
	set := "optimization.objectives=[{metric: p99_ttft_ms, direction: maximize}, {metric: output_throughput_tok_s, direction: minimize}, " +
		"{metric: gpus, direction: maximize}]"
	s := mustParse(t, base, set)
	at := "spec.yaml (--set " + set + "): "
	want := []string{
		at + "optimization.objectives[0].direction: maximize p99_ttft_ms, but a lower p99_ttft_ms (99th percentile of time to first " +
			"token) is better, so this objective favours the deployments that do worst on it; if that was not meant, write direction: minimize",
		at + "optimization.objectives[1].direction: minimize output_throughput_tok_s, but a higher output_throughput_tok_s (output " +
			"tokens per second) is better, so this objective favours the deployments that do worst on it; if that was not meant, " +
			"write direction: maximize",
	}
	if got := s.ObjectiveWarnings(results.ReversedObjective); !slices.Equal(got, want) {
		t.Errorf("warnings %q\nwant %q", got, want)
	}
	spec := base + "optimization:\n  objectives: [{metric: p99_itl_ms, direction: max}]\n"
	want = []string{"spec.yaml: optimization.objectives[0].direction: maximize p99_itl_ms, but a lower p99_itl_ms (99th percentile " +
		"of inter-token latency (every gap of every request)) is better, so this objective favours the deployments that do worst on it; " +
		"if that was not meant, write direction: minimize"}
	if got := mustParse(t, spec).ObjectiveWarnings(results.ReversedObjective); !slices.Equal(got, want) {
		t.Errorf("from the file: %q\nwant %q", got, want)
	}
	for _, sets := range [][]string{nil, {"optimization.objectives=[{metric: p99_ttft_ms, direction: minimize}]"}} {
		if got := mustParse(t, base, sets...).ObjectiveWarnings(results.ReversedObjective); len(got) != 0 {
			t.Errorf("%v: %q, want none", sets, got)
		}
	}
}

// An explicit KV size far from the model's (sim.KVBytesWarnings) is one warning per field for the
// whole grid, with the --set that gave it and a count of the other model, precision and shape
// combinations that differ too; a size that matches is not warned about. Llama-3.1-8B's token
// KV is 131,072 bytes in BF16; one prefill GPU holds 65,536 of it in FP8 at TP1, 32,768 at TP2.
func TestKVBytesWarnings(t *testing.T) {
	kvWarnings := func(x *Expansion) []string {
		var out []string
		for _, w := range x.Warnings {
			if strings.Contains(w, "bytes_per_token: ") {
				out = append(out, w)
			}
		}
		return out
	}
	x := expand(t, base, "engine.workers.aggregated.kv_cache.bytes_per_token=1", "engine.workers.aggregated.parallelism.replicas={choices: [1, 2]}")
	want := []string{"spec.yaml (--set engine.workers.aggregated.kv_cache.bytes_per_token=1): engine.workers.aggregated.kv_cache.bytes_per_token: " +
		"1 byte a token is 1/131072 of the 131072 bytes a token that meta-llama/Meta-Llama-3.1-8B-Instruct's KV cache in bf16 takes over " +
		"all layers (what auto derives); the run keeps 1, which sizes this role's default KV pool and an auto kv_transfer: write auto, or " +
		"keep the value if it is deliberate"}
	if got := kvWarnings(x); !slices.Equal(got, want) {
		t.Errorf("aggregated:\n got %q\nwant %q", got, want)
	}
	disagg := []string{"engine.mode=disaggregated", "engine.kv_transfer={bytes_per_token: 131072, bandwidth_gb_per_second: 400}",
		"engine.precision.kv_cache=fp8", "engine.workers.prefill.parallelism.tensor={choices: [1, 2]}"}
	want = []string{"spec.yaml (--set engine.kv_transfer={bytes_per_token: 131072, bandwidth_gb_per_second: 400}): " +
		"engine.kv_transfer.bytes_per_token: 131072 bytes a token is 2 times the 65536 bytes a token that " +
		"meta-llama/Meta-Llama-3.1-8B-Instruct's KV cache in fp8 puts on one prefill GPU of tensor 1, pipeline 1 (what auto derives); " +
		"the run keeps 131072, which sets every transfer's time: write auto, or keep the value if it is deliberate " +
		"(also at 1 other combination of model, KV precision and shape in the grid)"}
	if got := kvWarnings(expand(t, both, disagg...)); !slices.Equal(got, want) {
		t.Errorf("disaggregated:\n got %q\nwant %q", got, want)
	}
	if got := kvWarnings(expand(t, both, disagg[:2]...)); len(got) != 0 {
		t.Errorf("BF16's size at TP1: %q, want none", got)
	}
}

// A sweep without a capacity search over multi-turn sessions with a constant think time under a
// concurrency load is warned whatever the router; a spread, ramp_seconds 0, a rate load
// and a capacity search (which has its own, under kv_router) are not.
func TestThinkTimeWarning(t *testing.T) {
	think := func(x *Expansion) (out []string) {
		for _, w := range x.Warnings {
			if strings.Contains(w, "inter_turn_delay_ms is a constant") {
				out = append(out, w)
			}
		}
		return out
	}
	sessions := "traffic.source={type: synthetic-session, new_input_tokens_per_turn: {distribution: uniform, min: 80, max: 120}, " +
		"output_tokens_per_turn: {distribution: uniform, min: 8, max: 12}, session: {turns: 3, inter_turn_delay_ms: 500}}"
	want := "spec.yaml (--set " + sessions + "): traffic.source.session.inter_turn_delay_ms is a constant 500 ms: sessions whose " +
		"turns end together come back together after it, and over a long run the closed loop drifts into step, so the points' " +
		"tail latencies and ranking move with the run's length; draw the think times with " +
		"traffic.source.session.inter_turn_delay_stddev_ms, e.g. half the mean"
	stop := "traffic.stop={sessions_per_load_unit: 10}"
	if got := think(expand(t, base, sessions, stop)); !slices.Equal(got, []string{want}) {
		t.Errorf("constant think time: %q\nwant [%q]", got, want)
	}
	for _, sets := range [][]string{
		{sessions, stop, "traffic.source.session.inter_turn_delay_stddev_ms=250"},
		{sessions, stop, "traffic.load.ramp_seconds=0"},
		{sessions, stop, "traffic.load={type: poisson, sessions_per_second: 2}"},
		{sessions, stop, "evaluation.sla={ttft_ms: 500, itl_ms: 50}", "optimization.capacity_search={}"},
	} {
		if got := think(expand(t, base, sets...)); len(got) != 0 {
			t.Errorf("%v: %q, want no think-time warning", sets[2:], got)
		}
	}
}

// PercentileFloorAttainment, hand-computed: 1 − (1 − P/100)/5 for an ITL term, /25 for a term over
// requests, never below DefaultCapacityAttainment; the floors are MinMeasuredRequests of them.
func TestPercentileFloorAttainment(t *testing.T) {
	for _, c := range []struct {
		sla   string
		want  float64
		floor int
	}{
		{"{ttft_ms: 500}", DefaultCapacityAttainment, 200},
		{"{p90_itl_ms: 50}", DefaultCapacityAttainment, 200}, // 0.98
		{"{p95_itl_ms: 50}", 0.99, 200},
		{"{p99_itl_ms: 50}", 0.998, 1000},
		{"{p90_ttft_ms: 500}", 0.996, 500},
		{"{p95_tpot_ms: 30, p90_itl_ms: 50}", 0.998, 1000},
	} {
		x := expand(t, base, "evaluation.sla="+c.sla)
		got := PercentileFloorAttainment(x.Points[0].Config)
		if math.Abs(got-c.want) > 1e-12 || MinMeasuredRequests(got) != c.floor {
			t.Errorf("%s: %v (floor %d), want %v (%d)", c.sla, got, MinMeasuredRequests(got), c.want, c.floor)
		}
	}
}

// An open loop's fixed count below the floor a point measures after its warm-up is warned (a
// user trial: poisson, 100 requests, measured whole with its fill); a per-load-unit stop, a count
// at the floor and a capacity search are not.
func TestShortOpenLoopWarning(t *testing.T) {
	open := func(x *Expansion) (out []string) {
		for _, w := range x.Warnings {
			if strings.Contains(w, "under an open loop: each is measured whole") {
				out = append(out, w)
			}
		}
		return out
	}
	load := "traffic.load={type: poisson, requests_per_second: {choices: [4, 8]}, seed: 1}"
	want := "spec.yaml (--set traffic.stop={requests: 100}): traffic.stop.requests: 100 brings each point fewer than the 1000 " +
		"requests a point without a capacity search measures after its warm-up under an open loop: each is measured whole, its " +
		"fill of an empty deployment included, and its rate and tail latencies move with the count; set " +
		"traffic.stop.requests_per_load_unit instead (lengthened where short) or a count of at least 1000"
	if got := open(expand(t, base, load, "traffic.stop={requests: 100}")); !slices.Equal(got, []string{want}) {
		t.Errorf("100 requests: %q\nwant [%q]", got, want)
	}
	for _, stop := range []string{"traffic.stop={requests: 1000}", "traffic.stop={requests_per_load_unit: 10}"} {
		if got := open(expand(t, base, load, stop)); len(got) != 0 {
			t.Errorf("%s: %q, want no warning", stop, got)
		}
	}
}
