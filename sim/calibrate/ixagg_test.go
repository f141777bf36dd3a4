package calibrate

import (
	"slices"
	"strings"
	"testing"
)

// The embedded single-node table parses, and its lines say what the public configuration
// listed, read by hand: on 2025-12-05 (25506e87c) gptoss-fp4-h100-vllm ran TP 2, 4 and 8 at
// 1k/1k, concurrency 4 to 64; on 2026-04-17 dsr1-fp4-b300-sglang ran {tp: 4, ep: 4} at 1k/1k,
// concurrency 4 to 128.
func TestInferenceXAggTable(t *testing.T) {
	table, err := InferenceXAgg()
	if err != nil {
		t.Fatal(err)
	}
	if len(table) < 900 {
		t.Fatalf("%d items, want the 964 of the table as generated (2026-07 history)", len(table))
	}
	gptoss := map[int]bool{}
	var dsr1 bool
	for _, it := range table {
		if it.TP < 1 || it.EP < 1 || len(it.Concurrencies) == 0 || it.FromCommit == "" {
			t.Errorf("item %+v: no TP, EP, concurrency or commit", it)
		}
		switch {
		case it.Entry == "gptoss-fp4-h100-vllm" && it.ISL == 1024 && it.OSL == 1024 && it.inForce("2025-12-05"):
			if !slices.Equal(it.Concurrencies, []int{4, 8, 16, 32, 64}) || it.EP != 1 || it.Framework != "vllm" || it.Runner != "h100" {
				t.Errorf("gptoss item %+v", it)
			}
			gptoss[it.TP] = true
		case it.Entry == "dsr1-fp4-b300-sglang" && it.ISL == 1024 && it.OSL == 1024 && it.TP == 4 && it.inForce("2026-04-17"):
			dsr1 = it.EP == 4 && slices.Equal(it.Concurrencies, []int{4, 8, 16, 32, 64, 128}) && it.Precision == "fp4"
		}
	}
	if len(gptoss) != 3 || !gptoss[2] || !gptoss[4] || !gptoss[8] || !dsr1 {
		t.Errorf("gptoss TPs %v (want 2, 4, 8), dsr1 {tp: 4, ep: 4} found %v", gptoss, dsr1)
	}
}

// aggListedIn: a row of a served model, GPU, engine, precision and ISL/OSL must be listed at its
// concurrency with its GPUs; a row nothing serves stands.
func TestAggListedIn(t *testing.T) {
	table, err := parseAggTSV("# a hand-made table\n" +
		"c1\t2025-12-01T00:00:00Z\tc2\t2026-01-11T12:00:00Z\tgptoss-fp4-h100-vllm\tgptoss\th100\tfp4\tvllm\timg\t1024\t1024\tnone\t4,8,16,32,64\t8\t1\tfalse\n" +
		"c1\t2025-12-01T00:00:00Z\t\t\tgptoss-fp4-h100-vllm\tgptoss\th100\tfp4\tvllm\timg\t1024\t1024\tnone\t4,8\t2\t1\tfalse\n" +
		"c3\t2026-04-01T00:00:00Z\t\t\tminimaxm2.5-fp4-b300-vllm\tminimaxm2.5\tb300\tfp4\tvllm\timg\t1024\t1024\tnone\t256\t2\t2\ttrue\n")
	if err != nil {
		t.Fatal(err)
	}
	row := func(model, system, backend, day string, tp, dp, conc int) Row {
		return Row{Model: model, System: system, Precision: "fp4", Backend: backend, Mode: "agg", MeasuredAt: day,
			ISL: 1024, OSL: 1024, Concurrency: conc, Source: HarnessInferenceX, Agg: WorkerShape{Tensor: tp, AttentionData: dp}}
	}
	const gptoss, minimax = "openai/gpt-oss-120b", "MiniMaxAI/MiniMax-M2.5"
	for _, c := range []struct {
		r      Row
		listed bool
	}{
		{row(gptoss, "h100_sxm", "vllm", "2025-12-05", 8, 1, 64), true},
		{row(gptoss, "h100_sxm", "vllm", "2025-12-05", 8, 1, 512), false},  // concurrency not listed
		{row(gptoss, "h100_sxm", "vllm", "2025-12-05", 2, 1, 16), false},   // TP2 only to 8
		{row(gptoss, "h100_sxm", "vllm", "2025-12-05", 4, 1, 8), false},    // no TP4 item
		{row(gptoss, "h100_sxm", "vllm", "2026-01-10", 8, 1, 64), true},    // in force to the end of the day
		{row(gptoss, "h100_sxm", "vllm", "2026-01-11", 8, 1, 64), false},   // only TP2 then
		{row(gptoss, "h100_sxm", "vllm", "2025-11-30", 8, 1, 512), true},   // before any item: nothing to check
		{row(gptoss, "h100_sxm", "sglang", "2025-12-05", 8, 1, 512), true}, // no SGLang entry
		{row(gptoss, "h200_sxm", "vllm", "2025-12-05", 8, 1, 512), true},   // no H200 entry
		{row(gptoss, "h100_sxm", "vllm", "not a date", 8, 1, 512), true},   // singleNodeShape's error
		{row(minimax, "b300_sxm", "vllm", "2026-04-17", 1, 2, 256), true},  // DP attention over 2 GPUs
		{row(minimax, "b300_sxm", "vllm", "2026-04-17", 2, 2, 256), false},
	} {
		err := aggListedIn(table, c.r)
		if (err == nil) != c.listed {
			t.Errorf("%s %s %s %s TP%d×DP%d c%d: error %v, want listed %v", c.r.Model, c.r.System, c.r.Backend, c.r.MeasuredAt,
				c.r.Agg.Tensor, c.r.Agg.AttentionData, c.r.Concurrency, err, c.listed)
		}
		if err != nil && (!strings.HasPrefix(err.Error(), NotInIXConfig) || !strings.Contains(err.Error(), "lists gptoss-fp4-h100-vllm") &&
			!strings.Contains(err.Error(), "lists minimaxm2.5-fp4-b300-vllm")) {
			t.Errorf("reason %q does not name the entry", err)
		}
	}
	// The embedded table through PlanRow: InferenceX ran gpt-oss-120b on H100 at concurrency 4
	// to 64 on 2025-12-05, never at 512.
	r := row(gptoss, "h100_sxm", "vllm", "2025-12-05", 8, 1, 512)
	if _, err := PlanRow(r, Options{}); err == nil || !strings.HasPrefix(err.Error(), NotInIXConfig) {
		t.Errorf("concurrency 512 on 2025-12-05: %v, want the %q skip", err, NotInIXConfig)
	}
	r.Concurrency = 64
	if _, err := PlanRow(r, Options{}); err != nil {
		t.Errorf("concurrency 64 on 2025-12-05: %v", err)
	}
}

// An empty concurrency is checked as the row runs it (batch_size); an empty table is refused.
func TestAggListedEmptyConcurrencyAndEmptyTable(t *testing.T) {
	r := Row{Model: "openai/gpt-oss-120b", System: "h100_sxm", Precision: "fp4", Backend: "vllm", Mode: "agg", MeasuredAt: "2025-12-05",
		ISL: 1024, OSL: 1024, Source: HarnessInferenceX, Agg: WorkerShape{Tensor: 8, BatchSize: 64}}
	if err := aggListed(r); err != nil {
		t.Errorf("empty concurrency, batch_size 64 (listed): %v", err)
	}
	r.Agg.BatchSize = 512
	if err := aggListed(r); err == nil || !strings.HasPrefix(err.Error(), NotInIXConfig) {
		t.Errorf("empty concurrency, batch_size 512 (never listed): %v", err)
	}
	if _, err := parseAggTSV("# only a header\n"); err == nil || !strings.Contains(err.Error(), "holds no deployment") {
		t.Errorf("empty table: %v", err)
	}
	if _, err := parseDisaggTSV(""); err == nil || !strings.Contains(err.Error(), "holds no deployment") {
		t.Errorf("empty disaggregated table: %v", err)
	}
}

// An aggregated InferenceX row whose worker spans more GPUs than one node holds is a multi-node
// disaggregated run with its total GPUs in tp_size (the file's GB200 rows of 2025-11-17: TRT-LLM
// DeepSeek-R1 8k/1k on 32 and 64 GPUs, context workers of 4 GPUs plus generation GPUs):
// multiNodeAggregated refuses it as aggregated, naming the GPUs and the node, and PlanRow
// simulates the disaggregated run of those GPUs the public record lists; a worker of one node's
// GPUs and the aggregated rows of another harness are not refused.
func TestMultiNodeAggregatedRowSkipped(t *testing.T) {
	row := func(system, source string, tp, dp, conc int) Row {
		return Row{Model: "deepseek-ai/DeepSeek-R1", System: system, Precision: "fp4", Backend: "trtllm", Mode: "agg",
			MeasuredAt: "2025-11-17", ISL: 8192, OSL: 1024, Concurrency: conc, Source: source,
			Agg: WorkerShape{Tensor: tp, AttentionData: dp, BatchSize: conc}}
	}
	for _, c := range []struct {
		r    Row
		want string // "" when the row is not refused as multi-node
	}{
		{row("gb200", HarnessInferenceX, 64, 1, 538), "are more than the 4 of one gb200 node"},
		{row("gb200", HarnessInferenceX, 32, 1, 2150), "are more than the 4 of one gb200 node"},
		{row("gb200", HarnessInferenceX, 1, 8, 64), "are more than the 4 of one gb200 node"},
		{row("b300_sxm", HarnessInferenceX, 16, 1, 64), "are more than the 8 of one b300_sxm node"},
		{row("gb200", HarnessInferenceX, 4, 1, 64), ""},
		{row("b300_sxm", HarnessInferenceX, 8, 1, 64), ""},
		{row("gb200", "aic-gap-analysis", 32, 1, 64), ""}, // another harness: its own rules
	} {
		err := multiNodeAggregated(c.r)
		if c.r.Source != HarnessInferenceX {
			// multiNodeAggregated itself does not look at the harness; singleNodeDeployment does.
			if _, err := singleNodeDeployment(&c.r, c.r.Model); err != nil && strings.HasPrefix(err.Error(), MultiNodeAggregated) {
				t.Errorf("%s row of %d GPUs refused as multi-node: %v", c.r.Source, c.r.Agg.Tensor, err)
			}
			continue
		}
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s TP%d×DP%d: %v, want no multi-node refusal", c.r.System, c.r.Agg.Tensor, c.r.Agg.AttentionData, err)
		case c.want != "" && (err == nil || !strings.HasPrefix(err.Error(), MultiNodeAggregated) || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s TP%d×DP%d: %v, want the %q skip containing %q", c.r.System, c.r.Agg.Tensor, c.r.Agg.AttentionData, err, MultiNodeAggregated, c.want)
		}
	}
	// The TP64 row is the 64-GPU run the GB200 launcher of the day held at 8k/1k and 538: eight
	// 4-GPU context servers and one DEP32 generation server with 3 MTP drafts (8 × 4 + 32; the
	// launcher's non-MTP call at 538 has 48 GPUs). A row of a GPU total no call at its
	// concurrency has is refused, with why.
	p, err := PlanRow(row("gb200", HarnessInferenceX, 64, 1, 538), Options{})
	if err != nil {
		t.Fatalf("PlanRow of the TP64 GB200 row: %v", err)
	}
	notes := strings.Join(p.Notes, "; ")
	for _, want := range []string{"an aggregated row of 64 GPUs, more than one gb200 node holds",
		"(runners/launch_gb200-nv.sh at ", "P 8 × (TP4 EP4 DP-attention), D 1 × (TP32 EP32 DP-attention)"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes %q lack %q", notes, want)
		}
	}
	if s := p.Config.Engine.Speculation; s == nil || s.NumSpeculativeTokens != 3 || p.Concurrency != 538 {
		t.Errorf("speculation %+v at concurrency %d, want 3 MTP drafts at 538", s, p.Concurrency)
	}
	_, err = PlanRow(row("gb200", HarnessInferenceX, 40, 1, 538), Options{})
	if err == nil || !strings.HasPrefix(err.Error(), MultiNodeAggregated) || !strings.Contains(err.Error(), "read so: no disaggregated worker counts") {
		t.Errorf("PlanRow of a TP40 GB200 row at 538: %v, want the %q skip with the disaggregated reason", err, MultiNodeAggregated)
	}
}
