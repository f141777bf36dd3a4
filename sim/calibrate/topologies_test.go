package calibrate

import (
	"context"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/servesweep/servesweep/sim/timing"
)

// The embedded table parses, and its lines say what the public configuration listed: the
// B300 FP4 TensorRT-LLM entry of 2026-01-28 (commit d8cc89778) ran, at 1k/1k and concurrency
// 654, one DEP2 prefill worker and one DEP8 decode worker with MTP (the file's lines 16-28 at
// that commit, read by hand).
func TestInferenceXDisaggTable(t *testing.T) {
	table, err := InferenceXDisagg()
	if err != nil {
		t.Fatal(err)
	}
	if len(table) < 800 {
		t.Fatalf("%d items, want the 875 of the table as generated (2026-07-02 history)", len(table))
	}
	var found bool
	for _, it := range table {
		if it.Entry == "dsr1-fp4-b300-dynamo-trt" && it.ISL == 1024 && it.OSL == 1024 && len(it.Concurrencies) == 1 && it.Concurrencies[0] == 654 &&
			it.inForce("2026-01-28") {
			found = true
			want := DisaggTopology{ixItem: ixItem{SpecDecoding: "mtp"}, Prefill: TopologyRole{Workers: 1, TP: 2, EP: 2, DPAttention: true}, Decode: TopologyRole{Workers: 1, TP: 8, EP: 8, DPAttention: true}}
			if it.Prefill != want.Prefill || it.Decode != want.Decode || it.SpecDecoding != want.SpecDecoding || it.MTPDrafts != 3 ||
				!strings.HasSuffix(it.Recipe, "ctx1_gen1_dep8_batch64_eplb0_mtp3.yaml") || it.Runner != "b300" || it.Precision != "fp4" {
				t.Errorf("item %+v, want P %v, D %v, mtp, recipe ctx1_gen1_dep8_batch64_eplb0_mtp3", it, want.Prefill, want.Decode)
			}
		}
		if it.Prefill.Workers < 1 || it.Decode.Workers < 1 || len(it.Concurrencies) == 0 || it.FromCommit == "" {
			t.Errorf("item %+v: a role without workers, no concurrency or no commit", it)
		}
	}
	if !found {
		t.Error("the B300 FP4 TensorRT-LLM item at concurrency 654 of 2026-01-28 is missing")
	}
	// Draft lengths from the other two sources, read by hand: the GB200 FP4 item of 2025-12-05
	// (93e1b3ca) at 8k/1k, 8 prefill workers and one DEP16 decode worker, sets
	// DECODE_MTP_SIZE=2; SGLang's B200 FP8 1k/1k max-tpt-dep8-1p2d recipe runs
	// speculative-num-steps 1.
	drafts := map[string]int{}
	for _, it := range table {
		switch {
		case it.Entry == "dsr1-fp4-gb200-dynamo-trt" && it.SpecDecoding == "mtp" && it.ISL == 8192 && it.Prefill.Workers == 8 && it.Decode.TP == 16 && strings.HasPrefix(it.FromCommit, "93e1b3ca"):
			drafts["gb200"] = it.MTPDrafts
		case strings.HasSuffix(it.Recipe, "b200-fp8/1k1k/mtp/max-tpt-dep8-1p2d.yaml"):
			drafts["sglang"] = it.MTPDrafts
		}
		if it.SpecDecoding == "mtp" && (it.MTPDrafts < 1 || it.MTPDrafts > 5) || it.SpecDecoding == "none" && it.MTPDrafts != 0 {
			t.Errorf("item %s %v: spec %s with %d drafts", it.Entry, it.Concurrencies, it.SpecDecoding, it.MTPDrafts)
		}
	}
	if drafts["gb200"] != 2 || drafts["sglang"] != 1 {
		t.Errorf("draft lengths %v, want gb200 2 and sglang 1", drafts)
	}
	// The GB200 launcher's call of 2025-11 (runners/launch_gb200-nv.sh at 450d834a9, read by
	// hand): 1k/1k without MTP, one context server, four TEP8 generation servers of batch 128,
	// listed concurrencies 1 to 141 run per generation server (Dynamo release/0.5.1-rc0.20251105),
	// so the client's are 4 to 564; the prefill limits (4 requests, 4608 tokens) of the
	// configuration's item that took it over. The gpt-oss-120b GB200 item of three DEP4 decode
	// workers (2026-01-07) keeps its listed 3072.
	var launcher, gptoss bool
	for _, it := range table {
		if it.File == ixLauncherPath && it.ISL == 1024 && it.SpecDecoding == "none" && it.Decode.Workers == 4 && it.inForce("2025-11-17") {
			launcher = true
			if !slices.Equal(it.Concurrencies, []int{4, 8, 16, 32, 64, 128, 256, 564}) || !it.PerDecodeWorker ||
				it.Prefill != (TopologyRole{Workers: 1, TP: 4, EP: 4, MaxBatch: 4, MaxTokens: 4608}) ||
				it.Decode != (TopologyRole{Workers: 4, TP: 8, EP: 8, MaxBatch: 128, MaxTokens: 128}) {
				t.Errorf("launcher item %+v", it)
			}
		}
		if it.Entry == "gptoss-fp4-gb200-dynamo-trt" && it.Decode.Workers == 3 && it.inForce("2026-01-07") {
			gptoss = true
			if !slices.Equal(it.Concurrencies, []int{3072}) || it.PerDecodeWorker || it.File != ixConfigPath {
				t.Errorf("gpt-oss item %+v, want its listed 3072", it)
			}
		}
	}
	if !launcher || !gptoss {
		t.Errorf("launcher item found %v, gpt-oss item found %v", launcher, gptoss)
	}
}

// A role's shape: DP-attention spreads attention over the worker's GPUs, the experts over EP of
// them and tensor parallelism over the rest.
func TestTopologyRoleShape(t *testing.T) {
	for _, tc := range []struct {
		role TopologyRole
		want WorkerShape
	}{
		{TopologyRole{Workers: 5, TP: 8, EP: 8, DPAttention: true}, WorkerShape{Workers: 5, Tensor: 1, Pipeline: 1, AttentionData: 8, MoEExpert: 8, MoETensor: 1}},  // DEP8
		{TopologyRole{Workers: 2, TP: 8, EP: 8, DPAttention: false}, WorkerShape{Workers: 2, Tensor: 8, Pipeline: 1, AttentionData: 1, MoEExpert: 8, MoETensor: 1}}, // TEP8
		{TopologyRole{Workers: 1, TP: 4, EP: 1, DPAttention: false}, WorkerShape{Workers: 1, Tensor: 4, Pipeline: 1, AttentionData: 1, MoEExpert: 1, MoETensor: 4}}, // TP4
		{TopologyRole{Workers: 3, TP: 8, EP: 4, DPAttention: false}, WorkerShape{Workers: 3, Tensor: 8, Pipeline: 1, AttentionData: 1, MoEExpert: 4, MoETensor: 2}},
	} {
		if got := tc.role.Shape(); got != tc.want {
			t.Errorf("%v: shape %+v, want %+v", tc.role, got, tc.want)
		}
	}
}

// inForce: an item is in force from the end of the day its first version was committed (UTC)
// until the day before a version without it.
func TestDisaggTopologyInForce(t *testing.T) {
	item := func(from, until string) DisaggTopology {
		table, err := parseDisaggTSV(strings.Join([]string{"c", from, "", until, "e", "dsr1", "b300", "fp4", "dynamo-trt", "img", "1024", "1024",
			"none", "64", "1", "2", "2", "true", "1", "8", "8", "true", "", "0", "0", "0", "0", "0", "false", ixConfigPath, "0", "0"}, "\t"))
		if err != nil || len(table) != 1 {
			t.Fatalf("%v, %d items", err, len(table))
		}
		return table[0]
	}
	it := item("2026-02-03T12:27:57-08:00", "2026-02-10T01:00:00+00:00")
	for day, want := range map[string]bool{"2026-02-02": false, "2026-02-03": true, "2026-02-09": true, "2026-02-10": false, "2026-03-01": false, "": false, "2026-2-5": false} {
		if got := it.inForce(day); got != want {
			t.Errorf("in force on %q: %v, want %v", day, got, want)
		}
	}
	it = item("2026-02-03T12:27:57-08:00", "")
	if !it.inForce("2027-01-01") {
		t.Error("an item the newest version lists is not in force later")
	}
}

// DisaggFromInferenceX on hand-made tables: one deployment, an MTP one (with and without a draft
// length in its recipe's name), two that differ (in MTP, shape or draft length), one that
// contradicts the row's shape columns, one without parallel degrees, none.
func TestDisaggFromInferenceX(t *testing.T) {
	const head = "# comment\n"
	drafts := "0"
	perWorker := "false"
	line := func(entry, spec, concs, p, d string) string {
		return strings.Join([]string{"aaaaaaaaaaaa", "2026-01-01T00:00:00Z", "", "", entry, "dsr1", "b300", "fp4", "dynamo-trt", "img", "1024", "1024",
			spec, concs, p, d, "recipe.yaml", drafts, "0\t0\t0\t0", perWorker, ixConfigPath, "0", "0"}, "\t") + "\n"
	}
	perDecodeWorker := func(entry, spec, concs, p, d string) string {
		perWorker = "true"
		defer func() { perWorker = "false" }()
		return line(entry, spec, concs, p, d)
	}
	mtp := func(entry, concs, p, d, n string) string {
		drafts = n
		defer func() { drafts = "0" }()
		return line(entry, "mtp", concs, p, d)
	}
	dep2, dep8, tep8, tp1 := "1\t2\t2\ttrue", "2\t8\t8\ttrue", "3\t8\t8\tfalse", "4\t1\t1\ttrue"
	row := Row{Model: "deepseek-ai/DeepSeek-R1", System: "b300_sxm", Backend: "trtllm", Precision: "fp4", Mode: "disagg", ISL: 1024, OSL: 1024,
		Concurrency: 64, Source: "inferencex", MeasuredAt: "2026-02-01"}
	for _, tc := range []struct {
		name, table string
		row         func(*Row)
		want        string // "" = found; else a substring of the error
	}{
		{"one", line("dsr1-fp4-b300-dynamo-trt", "none", "32,64", dep2, dep8), nil, ""},
		{"mtp", mtp("dsr1-fp4-b300-dynamo-trt", "64", dep2, dep8, "3"), nil, ""},
		{"mtp without length", line("dsr1-fp4-b300-dynamo-trt", "mtp", "64", dep2, dep8), nil,
			`with MTP speculative decoding, and neither it nor its recipe ("recipe.yaml") gives the draft length`},
		{"two MTP lengths", mtp("dsr1-fp4-b300-dynamo-trt", "64", dep2, dep8, "3") + mtp("dsr1-fp4-b300-dynamo-trt", "64", dep2, dep8, "1"), nil,
			"MTP deployments with different draft lengths at the row's concurrency (dsr1-fp4-b300-dynamo-trt: recipes recipe.yaml, recipe.yaml)"},
		{"mtp or not", line("dsr1-fp4-b300-dynamo-trt", "none", "64", dep2, dep8) + line("dsr1-fp4-b300-dynamo-trt", "mtp", "64", dep2, tep8), nil,
			"an MTP and a non-MTP deployment"},
		{"two MTP", mtp("dsr1-fp4-b300-dynamo-trt", "64", dep2, dep8, "2") + mtp("dsr1-fp4-b300-dynamo-trt", "64", dep2, tep8, "2"), nil,
			"deployments of different shapes at the row's concurrency"},
		{"two shapes", line("dsr1-fp4-b300-dynamo-trt", "none", "64", dep2, dep8) + line("dsr1-fp4-b300-dynamo-trt", "none", "64", dep2, tep8), nil,
			"deployments of different shapes at the row's concurrency (dsr1-fp4-b300-dynamo-trt: P 1 × (TP2 EP2 DP-attention), D 2 × (TP8 EP8 DP-attention)"},
		{"case", line("dsr1-fp4-b300-dynamo-trt", "none", "64", dep2, dep8), func(r *Row) {
			r.Model, r.System, r.Backend, r.Precision = "DeepSeek-AI/deepseek-r1", "B300_SXM", " TRTLLM", "FP4"
		}, ""},
		{"bad date", line("dsr1-fp4-b300-dynamo-trt", "none", "64", dep2, dep8), func(r *Row) { r.MeasuredAt = "2026-2-5" }, `measured_at "2026-2-5" is not a date`},
		{"no date", line("dsr1-fp4-b300-dynamo-trt", "none", "64", dep2, dep8), func(r *Row) { r.MeasuredAt = "" }, `measured_at "" is not a date`},
		{"same twice", line("dsr1-fp4-b300-dynamo-trt", "none", "64", dep2, dep8) + line("dsr1-fp4-b300-dynamo-trt", "none", "64,128", dep2, dep8), nil, ""},
		{"contradicts", line("dsr1-fp4-b300-dynamo-trt", "none", "64", dep2, dep8), func(r *Row) { r.Decode.Tensor = 16 }, "contradicts its prefill_tp_size"},
		{"agrees", line("dsr1-fp4-b300-dynamo-trt", "none", "64", dep2, dep8), func(r *Row) { r.Prefill.Tensor, r.Prefill.MoEExpert, r.Decode.Tensor = 2, 2, 8 }, ""},
		// A benchmark that ran each listed concurrency per decode worker: 32 on 2 decode workers
		// is the client's 64, and the listed 64 is not.
		{"per decode worker", perDecodeWorker("dsr1-fp4-b300-dynamo-trt", "none", "32", dep2, dep8), nil, ""},
		{"per decode worker, listed value", perDecodeWorker("dsr1-fp4-b300-dynamo-trt", "none", "64", dep2, dep8), nil, "lists no deployment"},
		// The export's total-GPU form: 18 = 1 × 2 + 2 × 8 in both roles' tp_size.
		{"total GPUs", line("dsr1-fp4-b300-dynamo-trt", "none", "64", dep2, dep8), func(r *Row) { r.Prefill.Tensor, r.Decode.Tensor = 18, 18 }, ""},
		{"other total", line("dsr1-fp4-b300-dynamo-trt", "none", "64", dep2, dep8), func(r *Row) { r.Prefill.Tensor, r.Decode.Tensor = 16, 16 }, "contradicts"},
		// ... which sets apart the item of 26 GPUs (1 × 2 + 3 × 8) listed at the same concurrency.
		{"total GPUs pick one", line("dsr1-fp4-b300-dynamo-trt", "none", "64", dep2, dep8) + line("dsr1-fp4-b300-dynamo-trt", "mtp", "64", dep2, tep8),
			func(r *Row) { r.Prefill.Tensor, r.Decode.Tensor = 18, 18 }, ""},
		{"placeholder", line("dsr1-fp4-b300-dynamo-trt", "none", "64", tp1, dep8), nil, "without its parallel degrees"},
		{"other concurrency", line("dsr1-fp4-b300-dynamo-trt", "none", "32", dep2, dep8), nil, "lists no deployment"},
		{"later", line("dsr1-fp4-b300-dynamo-trt", "none", "64", dep2, dep8), func(r *Row) { r.MeasuredAt = "2025-12-31" }, "lists no deployment"},
		{"other GPU", line("dsr1-fp4-b300-dynamo-trt", "none", "64", dep2, dep8), func(r *Row) { r.System = "gb300" }, "lists no deployment"},
		{"unknown model", line("dsr1-fp4-b300-dynamo-trt", "none", "64", dep2, dep8), func(r *Row) { r.Model = "x/y" }, "lists no deployment for x/y under trtllm"},
	} {
		table, err := parseDisaggTSV(head + tc.table)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		r := row
		if tc.row != nil {
			tc.row(&r)
		}
		got, err := disaggFrom(table, r)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want == "" && (got.Prefill != TopologyRole{Workers: 1, TP: 2, EP: 2, DPAttention: true} || got.Decode != TopologyRole{Workers: 2, TP: 8, EP: 8, DPAttention: true}):
			t.Errorf("%s: P %v, D %v, want P 1 × DEP2, D 2 × DEP8", tc.name, got.Prefill, got.Decode)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}

// A malformed table line is an error naming the line.
func TestParseDisaggTSVErrors(t *testing.T) {
	for text, want := range map[string]string{
		"# c\na\tb\n": "line 2: 2 columns, want 32",
		"# c\n" + strings.Repeat("x\t", 10) + "notanumber\t" + strings.Repeat("1\t", 11) + "r\t0\n": "line 2:",
	} {
		if _, err := parseDisaggTSV(text); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want %q", text, err, want)
		}
	}
}

// FuzzParseDisaggTSV: any text parses or is refused without a panic, and every item parsed has
// its 4 role fields and at least one concurrency.
func FuzzParseDisaggTSV(f *testing.F) {
	f.Add(inferenceXDisaggTSV[:min(len(inferenceXDisaggTSV), 4000)])
	f.Add("# c\n\n")
	f.Fuzz(func(t *testing.T, text string) {
		items, err := parseDisaggTSV(text)
		if err != nil {
			return
		}
		for _, it := range items {
			if len(it.Concurrencies) == 0 {
				t.Fatalf("item without concurrencies: %+v", it)
			}
		}
	})
}

// PlanRow gives a disaggregated InferenceX row without worker counts the deployment of the
// embedded table: B300 FP4 TensorRT-LLM at 1k/1k and concurrency 110 on 2026-01-28 ran one DEP2
// prefill worker and five TEP8 decode workers without MTP (the item of recipe
// ctx1_gen5_tep8_batch64_eplb0_mtp0); with the one-worker reading asked for it still does.
func TestPlanRowTopologyFromInferenceX(t *testing.T) {
	r := Row{Line: 7, Model: "deepseek-ai/DeepSeek-R1", System: "b300_sxm", Backend: "trtllm", Precision: "fp4", Mode: "disagg", ISL: 1024, OSL: 1024,
		Concurrency: 110, Source: "inferencex", MeasuredAt: "2026-01-28", Prefill: WorkerShape{Tensor: 2, MoEExpert: 2}, Decode: WorkerShape{Tensor: 8}}
	for _, one := range []bool{false, true} {
		p, err := PlanRow(r, Options{OneWorkerPerRole: one})
		if err != nil {
			t.Fatal(err)
		}
		pre, dec := p.Config.Engine.Workers.Prefill.Parallelism, p.Config.Engine.Workers.Decode.Parallelism
		if pre.Replicas != 1 || pre.Tensor != 1 || pre.AttentionData != 2 || pre.MoeExpert != 2 ||
			dec.Replicas != 5 || dec.Tensor != 8 || dec.AttentionData != 1 || dec.MoeExpert != 8 {
			t.Errorf("one-worker reading %v: prefill %+v, decode %+v; want 1 × DEP2 and 5 × TEP8", one, pre, dec)
		}
		if !strings.Contains(strings.Join(p.Notes, "\n"), "deployment from InferenceX dsr1-fp4-b300-dynamo-trt") {
			t.Errorf("notes %q name no InferenceX deployment", p.Notes)
		}
	}
	// gemm_quant_mode nvfp4 is the precision fp4; fp8 is another format, and the row says two things.
	r.GEMMQuant = "nvfp4"
	if _, err := PlanRow(r, Options{}); err != nil {
		t.Errorf("gemm_quant_mode nvfp4 with precision fp4: %v", err)
	}
	r.GEMMQuant = "fp8"
	if _, err := PlanRow(r, Options{}); err == nil || !strings.Contains(err.Error(), `precision "fp4" and gemm_quant_mode "fp8" name different weight formats`) {
		t.Errorf("gemm_quant_mode fp8 with precision fp4: %v, want the disagreement named", err)
	}
	r.GEMMQuant = ""
	// The recipe's name gives the decode batch limit per rank.
	p, err := PlanRow(r, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Config.Engine.Workers.Decode.Scheduler.MaxSequences; got != 64 {
		t.Errorf("decode max_sequences %d, want the recipe's batch64", got)
	}
	// The recipe folder's prefill limits (b300-fp4/1k1k: max_batch_size 8, max_num_tokens 10240
	// per rank) replace the engines' defaults, and the note says so; a row's own
	// prefill_batch_size that differs is noted and replaced.
	if s := p.Config.Engine.Workers.Prefill.Scheduler; s.MaxSequences != 8 || s.MaxBatchedTokens != 10240 {
		t.Errorf("prefill scheduler %+v, want the recipe's 8 requests and 10240 tokens per pass", s)
	}
	if !strings.Contains(strings.Join(p.Notes, "\n"), "prefill_batch_size empty: 8 per rank and 10240 tokens per pass (max_batch_size and max_num_tokens of the recipe's prefill workers)") {
		t.Errorf("notes %q do not name the recipe's prefill limits", p.Notes)
	}
	r.Prefill.BatchSize = 1
	if p, err = PlanRow(r, Options{}); err != nil || p.Config.Engine.Workers.Prefill.Scheduler.MaxSequences != 8 ||
		!strings.Contains(strings.Join(p.Notes, "\n"), "the row's prefill_batch_size 1 differs from 8 per rank and 10240 tokens per pass") {
		t.Errorf("prefill_batch_size 1: %v, plan %+v", err, p)
	}
	r.Prefill.BatchSize = 0
	// At concurrency 60 the same file lists an MTP deployment too: the row does not say which ran,
	// and the one-worker reading does not paper over it.
	r.Concurrency = 60
	for _, one := range []bool{false, true} {
		if _, err := PlanRow(r, Options{OneWorkerPerRole: one}); err == nil || !strings.Contains(err.Error(), "an MTP and a non-MTP deployment") {
			t.Errorf("concurrency 60, one-worker reading %v: %v, want the ambiguity named", one, err)
		}
	}
	// At a concurrency the file never listed, the one-worker reading applies when asked for, and
	// says why.
	r.Concurrency = 3
	if _, err := PlanRow(r, Options{}); err == nil || !strings.Contains(err.Error(), NoIXDeployment) {
		t.Errorf("concurrency 3: %v, want %q", err, NoIXDeployment)
	}
	p, err = PlanRow(r, Options{OneWorkerPerRole: true})
	if err != nil || p.Config.Engine.Workers.Decode.Parallelism.Replicas != 1 ||
		!strings.Contains(strings.Join(p.Notes, "\n"), "lists no deployment for the row") {
		t.Errorf("concurrency 3 with the one-worker reading: %v, notes %v", err, p)
	}
}

// recipeBatch reads the batch of a recipe's file name.
func TestRecipeBatch(t *testing.T) {
	for recipe, want := range map[string]int{
		"recipes/trtllm/b300-fp4/1k1k/stp/ctx1_gen5_tep8_batch64_eplb0_mtp0.yaml": 64,
		"recipes/x/ctx3_gen1_dep8_batch1024_eplb0_mtp0_12.yaml":                   1024,
		"recipes/b200-fp4/1k1k/stp/low-latency-dep4-1p-tep8-5d.yaml":              0,
		"recipes/batch64/ctx1.yaml":                                               0, "a_batchx_b.yaml": 0, "": 0, "a_batch0_b": 0,
	} {
		if got := recipeBatch(recipe); got != want {
			t.Errorf("recipeBatch(%q) = %d, want %d", recipe, got, want)
		}
	}
}

// A deployment whose expert parallelism does not divide the model's experts places redundant
// experts, as its recipe says: GB200 FP4 SGLang at 8k/1k and concurrency 512 on 2026-03-01 ran
// six prefill workers and one DEP48 decode worker (recipes/gb200-fp4/8k1k/mid-curve.yaml, 32
// redundant experts on the decode worker: 288 slots, 6 per GPU). Without the recipe's count the
// row is an unsupported feature, named, not a shape error blamed on the row's columns.
func TestPlanRowRedundantExperts(t *testing.T) {
	r := Row{Model: "deepseek-ai/DeepSeek-R1", System: "gb200", Backend: "sglang", Precision: "fp4", Mode: "disagg", ISL: 8192, OSL: 1024,
		Concurrency: 512, Source: "inferencex", MeasuredAt: "2026-03-01"}
	p, err := PlanRow(r, Options{})
	if err != nil {
		t.Fatal(err)
	}
	pre, dec := p.Config.Engine.Workers.Prefill.Parallelism, p.Config.Engine.Workers.Decode.Parallelism
	if dec.MoeExpert != 48 || dec.RedundantExperts != 32 || pre.RedundantExperts != 0 {
		t.Errorf("prefill %+v, decode %+v; want DEP48 decode with 32 redundant experts, none on prefill", pre, dec)
	}
	if !strings.Contains(p.Shape, "EP48 +32 redundant experts") {
		t.Errorf("shape %q does not show the redundant experts", p.Shape)
	}
	// The recipe's pools: --max-total-tokens 131072 and --mem-fraction-static 0.95 on the
	// prefill workers, 524288 and 0.83 on the decode worker.
	pc, dc := p.Config.Engine.Workers.Prefill.KVCache.Capacity, p.Config.Engine.Workers.Decode.KVCache.Capacity
	if pc.MaxTokens != 131072 || pc.MemoryFraction != 0.95 || dc.MaxTokens != 524288 || dc.MemoryFraction != 0.83 {
		t.Errorf("prefill capacity %+v, decode %+v; want the recipe's max-total-tokens and mem-fraction-static", pc, dc)
	}
	// A shape column that disagrees with the deployment is named, with the value simulated.
	r.Decode.MoEExpert = 8
	if p, err = PlanRow(r, Options{}); err != nil || !slices.Contains(p.Notes, "the row's decode_moe_ep_size 8 where the deployment has 48: the deployment's values are simulated") {
		t.Errorf("decode_moe_ep_size 8: err %v, notes %q", err, p.Notes)
	}
	r.Decode.MoEExpert = 0
	saved := sglangRedundantExperts["recipes/gb200-fp4/8k1k/mid-curve.yaml"]
	delete(sglangRedundantExperts, "recipes/gb200-fp4/8k1k/mid-curve.yaml")
	defer func() { sglangRedundantExperts["recipes/gb200-fp4/8k1k/mid-curve.yaml"] = saved }()
	_, err = PlanRow(r, Options{OneWorkerPerRole: true})
	if err == nil || !strings.Contains(err.Error(), "unsupported feature: expert parallelism over 48 GPUs, which does not divide deepseek-ai/DeepSeek-R1's 256 experts + 0 redundant") {
		t.Errorf("error %v, want the redundant experts named as an unsupported feature", err)
	}
}

// RecipeRedundantExperts: SGLang's recipes from the table, TensorRT-LLM's decode slots beyond
// the model's experts from the name's _eplbN.
func TestRecipeRedundantExperts(t *testing.T) {
	for _, c := range []struct {
		recipe   string
		experts  int
		pre, dec int
	}{
		{"recipes/gb200-fp8/8k1k/max_tpt.yaml", 256, 32, 32},
		{"recipes/gb300-fp4/1k1k/max_tpt.yaml", 256, 0, 32},
		{"recipes/trtllm/gb200-fp4/1k1k/mtp/ctx3_gen1_dep32_batch64_eplb288_mtp1.yaml", 256, 0, 32},
		{"recipes/trtllm/gb200-fp4/1k1k/stp/ctx2_gen1_dep16_batch256_eplb256_mtp0.yaml", 256, 0, 0},
		{"recipes/trtllm/b300-fp4/1k1k/stp/ctx1_gen5_tep8_batch64_eplb0_mtp0.yaml", 256, 0, 0},
		{"recipes/b200-fp4/1k1k/stp/low-latency-dep4-1p-tep8-5d.yaml", 256, 0, 0},
		{"", 256, 0, 0},
	} {
		if pre, dec := RecipeRedundantExperts(c.recipe, c.experts); pre != c.pre || dec != c.dec {
			t.Errorf("RecipeRedundantExperts(%q, %d) = %d, %d; want %d, %d", c.recipe, c.experts, pre, dec, c.pre, c.dec)
		}
	}
}

// RecipePrefillLimits: a TensorRT-LLM recipe's folder gives its prefill workers' limits (the
// configuration's "recipies/" misspelling too), the one recipe that differs from its folder is
// read by file, a 1k8k recipe takes its 1k1k sibling's, and other recipes give none.
func TestRecipePrefillLimits(t *testing.T) {
	for _, c := range []struct {
		recipe        string
		batch, tokens int
		from          string
		ok            bool
	}{
		{"recipes/trtllm/b300-fp4/1k1k/stp/ctx1_gen5_tep8_batch64_eplb0_mtp0.yaml", 8, 10240, "recipes/trtllm/b300-fp4/1k1k", true},
		{"recipies/trtllm/b300-fp4/8k1k/mtp/ctx1_gen3_tep8_batch16_eplb0_mtp3.yaml", 2, 16896, "recipes/trtllm/b300-fp4/8k1k", true},
		{"recipes/trtllm/b200-fp8/8k1k/stp/ctx1_gen1_tp8_batch1_eplb0_mtp0_1.yaml", 64, 8320,
			"recipes/trtllm/b200-fp8/8k1k/stp/ctx1_gen1_tp8_batch1_eplb0_mtp0_1.yaml", true},
		{"recipes/trtllm/b200-fp8/8k1k/stp/ctx1_gen1_dep8_batch64_eplb0_mtp0.yaml", 1, 8320, "recipes/trtllm/b200-fp8/8k1k", true},
		{"recipes/trtllm/gb300-fp4/1k8k/stp/ctx1_gen4_dep8_batch512_eplb0_mtp0.yaml", 16, 16384, "recipes/trtllm/gb300-fp4/1k1k", true},
		{"recipes/kimi2.5/trtllm_dynamo/disagg/gb200Nvfp4/ISL8K_OSL1K/STP/ctx1dep4_gen1dep16_batch32_eplb0_mtp0.yaml", 2, 16384,
			"recipes/kimi2.5/trtllm_dynamo/disagg/gb200Nvfp4/ISL8K_OSL1K", true},
		{"recipes/gb200-fp8/8k1k/max_tpt.yaml", 0, 0, "", false},
		{"recipes/trtllm/b300-fp4/2k1k/stp/x.yaml", 0, 0, "", false},
		{"", 0, 0, "", false},
	} {
		b, tok, from, ok := RecipePrefillLimits(c.recipe)
		if b != c.batch || tok != c.tokens || from != c.from || ok != c.ok {
			t.Errorf("RecipePrefillLimits(%q) = %d, %d, %q, %v; want %d, %d, %q, %v", c.recipe, b, tok, from, ok, c.batch, c.tokens, c.from, c.ok)
		}
	}
}

// MTPAcceptance: 0.85, then × 0.856 per position; seven drafts give the expected accepted
// length 3.20 the constants' comment cites.
func TestMTPAcceptance(t *testing.T) {
	if got := MTPAcceptance(3); !slices.Equal(got, []float64{0.85, 0.728, 0.623}) {
		t.Errorf("3 drafts: %v", got)
	}
	sum, prod := 1.0, 1.0
	for _, p := range MTPAcceptance(7) {
		prod *= p
		sum += prod
	}
	if math.Abs(sum-3.20) > 0.005 {
		t.Errorf("expected accepted length of 7 drafts %v, want 3.20", sum)
	}
}

// An MTP deployment is simulated with its draft length and MTPAcceptance: the B300 FP4 item of
// 2026-01-28 at 1k/1k and concurrency 654 ran one DEP2 prefill worker and one DEP8 decode worker
// with recipe ctx1_gen1_dep8_batch64_eplb0_mtp3 (3 drafts, 64 requests per rank).
func TestPlanRowMTP(t *testing.T) {
	r := Row{Line: 9, Model: "deepseek-ai/DeepSeek-R1", System: "b300_sxm", Backend: "trtllm", Precision: "fp4", Mode: "disagg", ISL: 1024, OSL: 1024,
		Concurrency: 654, Source: "inferencex", MeasuredAt: "2026-01-28"}
	p, err := PlanRow(r, Options{})
	if err != nil {
		t.Fatal(err)
	}
	sp := p.Config.Engine.Speculation
	if sp == nil || sp.Kind != "mtp" || sp.NumSpeculativeTokens != 3 || !slices.Equal(sp.AcceptanceRates, []float64{0.85, 0.728, 0.623}) {
		t.Fatalf("speculation %+v, want mtp with 3 drafts at 0.85, 0.728, 0.623", sp)
	}
	pre, dec := p.Config.Engine.Workers.Prefill.Parallelism, p.Config.Engine.Workers.Decode.Parallelism
	if pre.Replicas != 1 || pre.AttentionData != 2 || dec.Replicas != 1 || dec.AttentionData != 8 || dec.MoeExpert != 8 ||
		p.Config.Engine.Workers.Decode.Scheduler.MaxSequences != 64 {
		t.Errorf("prefill %+v, decode %+v (max_sequences %d); want 1 × DEP2, 1 × DEP8 at 64 per rank", pre, dec, p.Config.Engine.Workers.Decode.Scheduler.MaxSequences)
	}
	if !strings.Contains(strings.Join(p.Notes, "\n"), "MTP speculative decoding, draft tokens per round 3") {
		t.Errorf("notes %q do not say MTP runs", p.Notes)
	}
	if err := p.Config.Validate(); err != nil {
		t.Errorf("the built config does not validate: %v", err)
	}
}

// listedFor: a row that gives its worker counts is matched by the items of its worker counts
// and GPUs per worker, whichever way the row writes a DEP worker (tp 1 × attention_dp 4, or the
// item's tp 4 with dp-attn).
func TestListedForRowsWithWorkerCounts(t *testing.T) {
	table, err := parseDisaggTSV(strings.Join([]string{
		"c1\t2026-04-18T18:00:00Z\t\t\tkimik2.5-fp4-gb200-dynamo-trt\tkimik2.5\tgb200\tfp4\tdynamo-trt\timg\t1024\t1024\tnone\t5,15,30,55\t1\t4\t4\ttrue\t5\t4\t4\tfalse\trecipes/a_batch8.yaml\t0\t0\t0\t0\t0\tfalse\tf\t0\t0",
		"c1\t2026-04-18T18:00:00Z\t\t\tkimik2.5-fp4-gb200-dynamo-trt\tkimik2.5\tgb200\tfp4\tdynamo-trt\timg\t1024\t1024\tnone\t4,192\t1\t4\t4\ttrue\t4\t8\t8\tfalse\trecipes/b_batch128.yaml\t0\t0\t0\t0\t0\tfalse\tf\t0\t0",
	}, "\n"))
	if err != nil {
		t.Fatal(err)
	}
	row := Row{Model: "moonshotai/Kimi-K2.5", System: "gb200", Precision: "FP4 ", Backend: "trtllm", Mode: "disagg", MeasuredAt: "2026-04-18",
		ISL: 1024, OSL: 1024, Concurrency: 55, Source: HarnessInferenceX,
		Prefill: WorkerShape{Workers: 1, Tensor: 1, AttentionData: 4, MoEExpert: 4}, Decode: WorkerShape{Workers: 5, Tensor: 4, MoEExpert: 4, BatchSize: 11}}
	for _, c := range []struct {
		name   string
		edit   func(*Row)
		recipe string
	}{
		{"DEP4 as tp 1 × dp 4", func(*Row) {}, "recipes/a_batch8.yaml"},
		{"DEP4 as tp 4 × dp 1", func(r *Row) { r.Prefill.Tensor, r.Prefill.AttentionData = 4, 1 }, "recipes/a_batch8.yaml"},
		{"other decode workers", func(r *Row) { r.Decode.Workers = 4 }, ""},
		{"other decode GPUs", func(r *Row) { r.Decode.Tensor = 8 }, ""},
		{"concurrency not listed", func(r *Row) { r.Concurrency = 60 }, ""},
		{"before the item", func(r *Row) { r.MeasuredAt = "2026-04-17" }, ""},
		{"the other item", func(r *Row) { r.Concurrency, r.Decode.Workers, r.Decode.Tensor = 192, 4, 8 }, "recipes/b_batch128.yaml"},
	} {
		r := row
		c.edit(&r)
		got := listedFor(table, r)
		switch {
		case c.recipe == "" && len(got) != 0:
			t.Errorf("%s: matched %v, want none", c.name, got)
		case c.recipe != "" && (len(got) != 1 || got[0].Recipe != c.recipe):
			t.Errorf("%s: matched %v, want the item of %s", c.name, got, c.recipe)
		}
	}
}

// A disaggregated InferenceX row that gives its worker counts keeps its deployment and takes its
// recipe's limits from the embedded table: Kimi-K2.5 on GB200 at 1k/1k and concurrency 55
// (2026-04-18) ran ctx1dep4_gen5tep4_batch8: five TEP4 decode workers of at most 8 requests,
// where the file writes the concurrency share, 11.
func TestRowWithWorkerCountsTakesItsRecipe(t *testing.T) {
	r := Row{Model: "moonshotai/Kimi-K2.5", System: "gb200", Precision: "fp4", Backend: "trtllm", Mode: "disagg", MeasuredAt: "2026-04-18",
		ISL: 1024, OSL: 1024, Concurrency: 55, Source: HarnessInferenceX,
		Prefill: WorkerShape{Workers: 1, Tensor: 1, AttentionData: 4, MoETensor: 1, MoEExpert: 4},
		Decode:  WorkerShape{Workers: 5, Tensor: 4, MoETensor: 1, MoEExpert: 4, BatchSize: 11}}
	p, err := PlanRow(r, Options{})
	if err != nil {
		t.Fatal(err)
	}
	d := p.Config.Engine.Workers.Decode
	notes := strings.Join(p.Notes, "\n")
	if d.Parallelism.Replicas != 5 || d.Parallelism.Tensor != 4 || d.Scheduler.MaxSequences != 8 ||
		!strings.Contains(notes, "ctx1dep4_gen5tep4_batch8") || !strings.Contains(notes, "the row's decode_batch_size differs from the deployment's batch per rank (the recipe's name), which is simulated: 11 against 8") {
		t.Errorf("decode %d × TP%d, %d sequences; notes %q", d.Parallelism.Replicas, d.Parallelism.Tensor, d.Scheduler.MaxSequences, p.Notes)
	}
	// An empty concurrency is the decode batch × ranks × workers the row gives: 11 × 1 × 5 = 55.
	empty := r
	empty.Concurrency = 0
	if p, err := PlanRow(empty, Options{}); err != nil {
		t.Fatal(err)
	} else if n := p.Config.Engine.Workers.Decode.Scheduler.MaxSequences; n != 8 || p.Concurrency != 55 {
		t.Errorf("empty concurrency: decode max_sequences %d at concurrency %d, want the recipe's 8 at 55", n, p.Concurrency)
	}
	// A measured_at that is not a date is the skip reason.
	bad := r
	bad.MeasuredAt = "April 18"
	if _, err := PlanRow(bad, Options{}); err == nil || !strings.Contains(err.Error(), `measured_at "April 18" is not a date`) {
		t.Errorf("bad date: %v", err)
	}
	// Without InferenceX as its source the row is simulated from its columns alone.
	r.Source = "aic-gap-analysis"
	if p, err = PlanRow(r, Options{}); err != nil {
		t.Fatal(err)
	} else if n := p.Config.Engine.Workers.Decode.Scheduler.MaxSequences; n != 11 {
		t.Errorf("another source: decode max_sequences %d, want the row's 11", n)
	}
}

// Several listed deployments of the row's worker counts with different recipes: none applies,
// and a note says so; the row's columns stand.
func TestListedRecipeAmbiguous(t *testing.T) {
	line := "c1\t2026-04-18T18:00:00Z\t\t\tkimik2.5-fp4-gb200-dynamo-trt\tkimik2.5\tgb200\tfp4\tdynamo-trt\timg\t1024\t1024\tnone\t55\t1\t4\t4\ttrue\t5\t4\t4\tfalse\trecipes/%s.yaml\t0\t0\t0\t0\t0\tfalse\tf\t0\t0"
	table, err := parseDisaggTSV(fmt.Sprintf(line, "a_batch8_eplb0") + "\n" + fmt.Sprintf(line, "b_batch16_eplb0"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := timing.ResolveModel("moonshotai/Kimi-K2.5")
	if err != nil {
		t.Fatal(err)
	}
	r := Row{Model: "moonshotai/Kimi-K2.5", System: "gb200", Precision: "fp4", Backend: "trtllm", Mode: "disagg", MeasuredAt: "2026-04-18",
		ISL: 1024, OSL: 1024, Concurrency: 55, Source: HarnessInferenceX,
		Prefill: WorkerShape{Workers: 1, Tensor: 1, AttentionData: 4, MoEExpert: 4}, Decode: WorkerShape{Workers: 5, Tensor: 4, MoEExpert: 4, BatchSize: 11}}
	notes, drafts, err := ixListedRecipeIn(table, &r, m)
	if err != nil || drafts != 0 || len(notes) != 1 || !strings.Contains(notes[0], "several deployments") || r.Decode.BatchSize != 11 {
		t.Errorf("notes %q, drafts %d, err %v, decode batch %d; want the ambiguity note and the row's 11", notes, drafts, err, r.Decode.BatchSize)
	}
	// One of them: its recipe's batch.
	one := table[:1]
	if notes, _, err = ixListedRecipeIn(one, &r, m); err != nil || r.Decode.BatchSize != 8 {
		t.Errorf("one item: notes %q, err %v, decode batch %d, want 8", notes, err, r.Decode.BatchSize)
	}
	// An MTP and a non-MTP item of the row's worker counts: which ran is not known, so the row
	// is skipped (the GB300 FP8 TEP8 items of ctx1_gen4_tep8_batch4_eplb0_mtp3 and _mtp0).
	f := strings.Split(fmt.Sprintf(line, "c_batch8_eplb0_mtp3"), "\t")
	f[12], f[23] = "mtp", "3" // spec_decoding, mtp_drafts
	table, err = parseDisaggTSV(fmt.Sprintf(line, "a_batch8_eplb0") + "\n" + strings.Join(f, "\t"))
	if err != nil {
		t.Fatal(err)
	}
	r.Decode.BatchSize = 11
	_, _, err = ixListedRecipeIn(table, &r, m)
	if err == nil || !strings.Contains(err.Error(), "with and without MTP or with different draft lengths (kimik2.5-fp4-gb200-dynamo-trt: no MTP, MTP with 3 drafts)") {
		t.Errorf("an MTP and a non-MTP item: %v, want the undetermined-speculation skip", err)
	}
}

// A deployment whose own settings give its servers' limits (the GB200 TensorRT-LLM items of
// 2025-12, launched with PREFILL_MAX_BATCH_SIZE 4, PREFILL_MAX_NUM_TOKENS 4608 and
// DECODE_MAX_BATCH_SIZE 256 at 1k/1k and concurrency 2252, one DEP4 prefill and one DEP8 decode
// worker, MTP with one draft) is simulated with them: 4 prompts and 4608 tokens per prefill
// pass on each rank, 256 running requests per decode rank where the concurrency's share is
// ceil(2252 / 8) = 282, so 204 requests wait for a slot as they did.
func TestPlanRowServerLimitsFromTheDeployment(t *testing.T) {
	r := Row{Line: 3, Model: "deepseek-ai/DeepSeek-R1", System: "gb200", Backend: "trtllm", Precision: "fp4", Mode: "disagg", ISL: 1024, OSL: 1024,
		Concurrency: 2252, Source: "inferencex", MeasuredAt: "2025-12-19"}
	p, err := PlanRow(r, Options{})
	if err != nil {
		t.Fatal(err)
	}
	pre, dec := p.Config.Engine.Workers.Prefill, p.Config.Engine.Workers.Decode
	if pre.Parallelism.AttentionData != 4 || dec.Parallelism.AttentionData != 8 ||
		pre.Scheduler.MaxSequences != 4 || pre.Scheduler.MaxBatchedTokens != 4608 || dec.Scheduler.MaxSequences != 256 {
		t.Errorf("prefill DP%d at %d sequences and %d tokens, decode DP%d at %d sequences; want DP4 at 4 and 4608, DP8 at 256",
			pre.Parallelism.AttentionData, pre.Scheduler.MaxSequences, pre.Scheduler.MaxBatchedTokens, dec.Parallelism.AttentionData, dec.Scheduler.MaxSequences)
	}
	notes := strings.Join(p.Notes, "\n")
	for _, want := range []string{"prefill_batch_size empty: 4 per rank and 4608 tokens per pass (the deployment's PREFILL_MAX_BATCH_SIZE",
		"decode_batch_size empty: 256 per rank, from the deployment's DECODE_MAX_BATCH_SIZE",
		"no other server flags tabulated for this model, engine and date: servesweep's engine defaults for the rest"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes %q lack %q", p.Notes, want)
		}
	}
	if err := p.Config.Validate(); err != nil {
		t.Errorf("the built config does not validate: %v", err)
	}
}

// Two items of one shape that differ only in their limits leave the row's deployment undecided:
// the error names both.
func TestDisaggLimitsAmbiguous(t *testing.T) {
	line := "c1\t2025-12-01T00:00:00Z\t\t\tdsr1-fp4-gb200-dynamo-trt\tdsr1\tgb200\tfp4\tdynamo-trt\timg\t1024\t1024\tnone\t64\t1\t4\t4\ttrue\t1\t8\t8\ttrue\t\t0\t%d\t4608\t64\t64\tfalse\tf\t0\t0"
	table, err := parseDisaggTSV(fmt.Sprintf(line, 4) + "\n" + fmt.Sprintf(line, 8))
	if err != nil {
		t.Fatal(err)
	}
	if table[0].Prefill.MaxBatch != 4 || table[0].Prefill.MaxTokens != 4608 || table[0].Decode.MaxBatch != 64 || table[1].Prefill.MaxBatch != 8 {
		t.Fatalf("limits read %+v, %+v", table[0].Prefill, table[1].Prefill)
	}
	r := Row{Model: "deepseek-ai/DeepSeek-R1", System: "gb200", Backend: "trtllm", Precision: "fp4", Mode: "disagg", ISL: 1024, OSL: 1024,
		Concurrency: 64, Source: "inferencex", MeasuredAt: "2025-12-02"}
	_, err = disaggFrom(table, r)
	if err == nil || !strings.Contains(err.Error(), "different batch limits at its concurrency (dsr1-fp4-gb200-dynamo-trt: prefill 4 requests and 4608 tokens, decode 64 and 64;") {
		t.Errorf("err %v; want the two items' limits named", err)
	}
}

// The GB200 SGLang items that give nodes in place of parallel degrees (tp 1, ep 1 with dp-attn,
// PREFILL_NODES and DECODE_NODES): each worker is DEP over its share of the nodes' GPUs (4 per
// GB200 node), with the FP8 script's 32 redundant experts, and the export's rows of those runs,
// which copy the placeholders (tp 1), match them; a role of tp 1 without dp-attn stays
// undetermined, and so does a TensorRT-LLM item's TP1 role on a node.
func TestSGLangDegreesFromNodes(t *testing.T) {
	line := func(precision, framework, pdp string, pNodes, dNodes int) string {
		return strings.Join([]string{"c1", "2025-12-05T00:00:00Z", "", "", "dsr1-" + precision + "-gb200-" + framework, "dsr1", "gb200", precision, framework, "img",
			"1024", "1024", "none", "1024,2048", "3", "1", "1", pdp, "1", "1", "1", "true", "", "0", "0", "0", "0", "0", "false", ixConfigPath,
			fmt.Sprint(pNodes), fmt.Sprint(dNodes)}, "\t")
	}
	table, err := parseDisaggTSV(line("fp8", "dynamo-sglang", "true", 6, 12))
	if err != nil {
		t.Fatal(err)
	}
	p, d := table[0].Prefill, table[0].Decode
	if p.TP != 8 || p.EP != 8 || !p.FromNodes || p.RedundantExperts != 32 || d.TP != 48 || d.EP != 48 || d.RedundantExperts != 32 {
		t.Errorf("P %+v, D %+v; want 3 × DEP8 and 1 × DEP48, 32 redundant experts each", p, d)
	}
	r := Row{Model: "deepseek-ai/DeepSeek-R1", System: "gb200", Backend: "sglang", Precision: "fp8", Mode: "disagg", ISL: 1024, OSL: 1024,
		Concurrency: 2048, Source: "inferencex", MeasuredAt: "2025-12-05",
		Prefill: WorkerShape{Tensor: 1, MoEExpert: 1}, Decode: WorkerShape{Tensor: 1, MoEExpert: 1}}
	if got, err := disaggFrom(table, r); err != nil || got.Decode.TP != 48 {
		t.Errorf("the export's row of the run: %v, %v; want the DEP48 decode worker", got.Decode, err)
	}
	r.Decode.Tensor = 16
	if _, err := disaggFrom(table, r); err == nil || !strings.Contains(err.Error(), "contradicts") {
		t.Errorf("a row of decode TP16: %v, want the contradiction", err)
	}
	for _, c := range []struct{ name, line string }{
		{"prefill without dp-attn", line("fp4", "dynamo-sglang", "false", 6, 12)},
		{"nodes that do not divide", line("fp8", "dynamo-sglang", "true", 5, 12)},
	} {
		table, err := parseDisaggTSV(c.line)
		if err != nil {
			t.Fatal(err)
		}
		r.Precision, r.Decode.Tensor = table[0].Precision, 0
		if _, err := disaggFrom(table, r); err == nil || !strings.Contains(err.Error(), "without its parallel degrees (tp 1, ep 1") {
			t.Errorf("%s: %v, want the placeholder reason", c.name, err)
		}
	}
	if table, _ := parseDisaggTSV(line("fp4", "dynamo-trt", "true", 6, 12)); table[0].Prefill.TP != 1 || table[0].Prefill.FromNodes {
		t.Errorf("a TensorRT-LLM role read from its nodes: %+v", table[0].Prefill)
	}
	if table, _ := parseDisaggTSV(line("fp4", "dynamo-sglang", "true", 3, 8)); table[0].Prefill.RedundantExperts != 0 || table[0].Prefill.TP != 4 {
		t.Errorf("an FP4 item's role %+v, want DEP4 without redundant experts", table[0].Prefill)
	}
}

// Rows of one InferenceX database configuration (config_id) ran one speculative-decoding
// method: a row whose worker counts match an MTP and a non-MTP item takes the method that every
// row of its configuration has a listed item for, with a note; a configuration whose rows allow
// both, or none in common, settles nothing, and a row without a config_id is matched alone.
func TestSpecMethodsByConfig(t *testing.T) {
	line := "c1\t2026-04-18T18:00:00Z\t\t\tkimik2.5-fp4-gb200-dynamo-trt\tkimik2.5\tgb200\tfp4\tdynamo-trt\timg\t1024\t1024\t%s\t%s\t1\t4\t4\ttrue\t5\t4\t4\tfalse\trecipes/%s.yaml\t%s\t0\t0\t0\t0\tfalse\tf\t0\t0"
	// Concurrency 55: a non-MTP and an MTP item; 110: the non-MTP item only; 220: MTP only.
	table, err := parseDisaggTSV(fmt.Sprintf(line, "none", "55,110", "a_batch8_eplb0", "0") + "\n" +
		fmt.Sprintf(line, "mtp", "55,220", "c_batch8_eplb0_mtp3", "3"))
	if err != nil {
		t.Fatal(err)
	}
	row := func(conc int, config string) Row {
		return Row{Model: "moonshotai/Kimi-K2.5", System: "gb200", Precision: "fp4", Backend: "trtllm", Mode: "disagg", MeasuredAt: "2026-04-18",
			ISL: 1024, OSL: 1024, Concurrency: conc, Source: HarnessInferenceX, ConfigID: config,
			Prefill: WorkerShape{Workers: 1, Tensor: 1, AttentionData: 4, MoEExpert: 4}, Decode: WorkerShape{Workers: 5, Tensor: 4, MoEExpert: 4}}
	}
	rows := []Row{
		row(55, "7"), row(110, "7"), // configuration 7: no MTP, by its row at 110
		row(55, "8"), row(220, "8"), // configuration 8: MTP, by its row at 220
		row(55, "9"), row(55, "9"), // configuration 9: both rows allow both
		row(110, "10"), row(220, "10"), // configuration 10: no method in common
		row(55, ""),                   // no configuration
		row(440, "11"), row(55, "11"), // a row with no listed item does not constrain
	}
	specMethodsByConfig(table, rows)
	want := []string{"none", "none", "mtp", "mtp", "", "", "", "", "", "", ""}
	for i, r := range rows {
		if r.SpecMethod != want[i] {
			t.Errorf("row %d (concurrency %d, config %q): SpecMethod %q, want %q", i, r.Concurrency, r.ConfigID, r.SpecMethod, want[i])
		}
	}
	m, err := timing.ResolveModel("moonshotai/Kimi-K2.5")
	if err != nil {
		t.Fatal(err)
	}
	// Settled: the row at 55 of configuration 7 is simulated without MTP and says why; that of
	// configuration 8 takes the MTP item; that of 9 stays undetermined.
	r := rows[0]
	notes, drafts, err := ixListedRecipeIn(table, &r, m)
	if err != nil || drafts != 0 || len(notes) < 2 || !strings.Contains(notes[0], "speculative decoding: no MTP") ||
		!strings.Contains(notes[0], "config_id 7") || !strings.Contains(notes[1], "a_batch8_eplb0") {
		t.Errorf("configuration 7: notes %q, drafts %d, err %v; want no MTP, settled by config_id 7, recipe a", notes, drafts, err)
	}
	r = rows[2] // the MTP item, which Kimi-K2.5 (no MTP module in the catalog) cannot run
	if _, _, err = ixListedRecipeIn(table, &r, m); err == nil || !strings.Contains(err.Error(), "MTP speculative decoding, and moonshotai/Kimi-K2.5 has no MTP module") {
		t.Errorf("configuration 8: %v, want the MTP item's unsupported-feature skip", err)
	}
	r = rows[4]
	if _, _, err = ixListedRecipeIn(table, &r, m); err == nil || !strings.Contains(err.Error(), "with and without MTP") {
		t.Errorf("configuration 9: %v, want the undetermined-speculation skip", err)
	}
	// A row at 110 of configuration 7 needs no settling: no note.
	r = rows[1]
	if notes, _, err = ixListedRecipeIn(table, &r, m); err != nil || strings.Contains(strings.Join(notes, " "), "speculative decoding:") {
		t.Errorf("configuration 7 at 110: notes %q, err %v; want no settling note", notes, err)
	}
	// Without worker counts the same: DisaggFromInferenceX picks the configuration's method.
	r = rows[0]
	r.Prefill, r.Decode = WorkerShape{}, WorkerShape{}
	got, err := disaggFrom(table, r)
	if err != nil || got.SpecDecoding != "none" || got.SettledByConfig != "7" {
		t.Errorf("configuration 7 without worker counts: %s %q, err %v; want the non-MTP item settled by 7", got.SpecDecoding, got.SettledByConfig, err)
	}
	r.SpecMethod = ""
	if _, err = disaggFrom(table, r); err == nil || !strings.Contains(err.Error(), "an MTP and a non-MTP deployment") {
		t.Errorf("unsettled without worker counts: %v, want the undetermined-speculation skip", err)
	}
}

// Two measurements of a deployment the configuration lists with and without MTP are the runs of
// the two: the faster by at least minPairTPOTRatio is the MTP run, each row naming the other; a
// measurement repeated by a second export snapshot counts once; one measurement, three, or two
// too close to order settle nothing, and a row settled by its config_id is left as it is.
func TestSpecMethodsByPair(t *testing.T) {
	line := "c1\t2026-04-18T18:00:00Z\t\t\tkimik2.5-fp4-gb200-dynamo-trt\tkimik2.5\tgb200\tfp4\tdynamo-trt\timg\t1024\t1024\t%s\t%s\t1\t4\t4\ttrue\t5\t4\t4\tfalse\trecipes/%s.yaml\t%s\t0\t0\t0\t0\tfalse\tf\t0\t0"
	// Concurrencies 55, 60, 65, 70 and 75: a non-MTP and an MTP item; 110: the non-MTP item only.
	table, err := parseDisaggTSV(fmt.Sprintf(line, "none", "55,60,65,70,75,110", "a_batch8_eplb0", "0") + "\n" +
		fmt.Sprintf(line, "mtp", "55,60,65,70,75", "c_batch8_eplb0_mtp3", "3"))
	if err != nil {
		t.Fatal(err)
	}
	n := 1
	row := func(conc int, tpot float64, config string) Row {
		n++
		return Row{Line: n, Model: "moonshotai/Kimi-K2.5", System: "gb200", Precision: "fp4", Backend: "trtllm", Mode: "disagg",
			MeasuredAt: "2026-04-18", ISL: 1024, OSL: 1024, Concurrency: conc, Source: HarnessInferenceX, ConfigID: config,
			TTFTMs: 300, TPOTMs: tpot}
	}
	rows := []Row{
		row(55, 10, ""), row(55, 6, ""), // a pair: 6 ms is the MTP run
		row(60, 9, ""), row(60, 5, ""), row(60, 9, ""), row(60, 5, ""), // the pair in two snapshots
		row(65, 10, ""), row(65, 9.5, ""), // too close to order
		row(70, 8, ""),                                 // alone
		row(75, 8, ""), row(75, 6, ""), row(75, 4, ""), // three measurements
		row(110, 8, ""), row(110, 5, ""), // one listed method: nothing to settle
	}
	specMethodsByPair(table, rows)
	want := []string{"none", "mtp", "none", "mtp", "none", "mtp", "", "", "", "", "", "", "", ""}
	for i, r := range rows {
		if r.SpecMethod != want[i] {
			t.Errorf("row %d (concurrency %d, TPOT %g): SpecMethod %q, want %q", i, r.Concurrency, r.TPOTMs, r.SpecMethod, want[i])
		}
	}
	if p := rows[0].SpecPair; p.Line != rows[1].Line || p.TPOTMs != 6 {
		t.Errorf("the non-MTP row's pair: %+v, want line %d at 6 ms", p, rows[1].Line)
	}
	if p := rows[5].SpecPair; p.TPOTMs != 9 || (p.Line != rows[2].Line && p.Line != rows[4].Line) {
		t.Errorf("a repeated MTP measurement's pair: %+v", p)
	}
	// A row settled by its configuration keeps that method.
	settled := []Row{row(55, 10, "7"), row(55, 6, "7")}
	settled[0].SpecMethod, settled[1].SpecMethod = "none", "none"
	specMethodsByPair(table, settled)
	if settled[1].SpecMethod != "none" || settled[1].SpecPair.Line != 0 {
		t.Errorf("a row settled by config_id: %q %+v", settled[1].SpecMethod, settled[1].SpecPair)
	}
	// The deployment chosen, with the note that says how.
	got, err := disaggFrom(table, rows[0])
	if err != nil || got.SpecDecoding != "none" || !got.SettledByPair {
		t.Fatalf("the slower row: %s %v, err %v; want the non-MTP item settled by its pair", got.SpecDecoding, got.SettledByPair, err)
	}
	if note := settledNote(rows[1]); note != fmt.Sprintf("speculative decoding: MTP, the faster of the two measurements of its deployment "+
		"(mean TPOT 6 ms here, 10 ms at line %d), for which the public configuration lists an MTP and a non-MTP run", rows[0].Line) {
		t.Errorf("the MTP row's note: %q", note)
	}
}

// A row whose speculative decoding only the other rows of its config_id settle, validated
// without them, is skipped with a reason that says those rows would settle it (the MoE file's
// first row that its own columns leave open; skipped without the file).
func TestUnsettledRowNamesItsConfigID(t *testing.T) {
	if _, err := os.Stat(moeCalibrationFile); err != nil {
		t.Skipf("MoE calibration file not available at %s: %v", moeCalibrationFile, err)
	}
	rows, err := ReadCSVFile(moeCalibrationFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if r.ConfigID == "" || r.SpecMethod == "" {
			continue
		}
		r.SpecMethod = "" // as a file of this row alone reads it
		if _, err := PlanRow(r, Options{}); err == nil || !strings.Contains(err.Error(), "speculative-decoding column") {
			continue // its own columns settle it
		}
		rep, err := Validate(context.Background(), []Row{r}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Rows) != 1 || !rep.Rows[0].Skipped ||
			!strings.Contains(rep.Rows[0].Reason, "the file has no speculative-decoding column to say which ran; the other rows of its config_id "+r.ConfigID+" in the file settle it") {
			t.Errorf("line %d alone: %+v, want it skipped naming config_id %s", r.Line, rep.Rows, r.ConfigID)
		}
		return
	}
	t.Fatal("no row of the MoE file has its speculative decoding settled by its config_id")
}
