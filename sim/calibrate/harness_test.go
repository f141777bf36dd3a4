package calibrate

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/servesweep/servesweep/sim"
	"github.com/servesweep/servesweep/sim/config"
)

// ixHeader is a measured-deployments header with the provenance columns.
const ixHeader = "id,backend,model_path,system,precision,gemm_quant_mode,mode,isl,osl,concurrency,batch_size,tp_size," +
	"silicon_ttft_ms,silicon_tpot_ms,source,measured_at\n"

func readIX(t *testing.T, lines ...string) []Row {
	t.Helper()
	rows, err := ReadCSV(strings.NewReader(ixHeader+strings.Join(lines, "\n")+"\n"), "ix.csv")
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// The vLLM and TensorRT-LLM configs of two InferenceX Llama-3.1-70B rows, field by field against
// the harness facts (InferenceXHarness, InferenceXServerFlags): the client of
// benchmarks/70b_fp8_h100_slurm.sh and the B200 TensorRT-LLM scripts at commit 9596d23d7.
func TestInferenceXPlans(t *testing.T) {
	rows := readIX(t,
		"v,vllm,meta-llama/Llama-3.1-70B,h100_sxm,fp8,fp8,agg,1024,8192,16,16,4,100,12,inferencex,2025-10-29",
		"tr,trtllm,meta-llama/Llama-3.1-70B,b200_sxm,fp4,nvfp4,agg,1024,1024,8,8,2,200,9,inferencex,2025-10-29",
		"t8,trtllm,meta-llama/Llama-3.1-70B,b200_sxm,fp8,fp8,agg,1024,1024,8,8,8,60,5,inferencex,2025-10-29",
		"vb,vllm,meta-llama/Llama-3.1-70B,b200_sxm,fp8,fp8,agg,8192,1024,32,32,2,400,12,inferencex,2025-10-29",
	)
	plan := func(i int) (*Plan, *config.WorkerRole) {
		p, err := PlanRow(rows[i], Options{})
		if err != nil {
			t.Fatalf("row %s: %v", rows[i].ID, err)
		}
		return p, p.Config.Engine.Workers.Aggregated
	}
	// vLLM on H100, TP4, concurrency 16, 1k/8k: --max-num-seqs $CONC, 8,192 batched tokens,
	// no prefix caching, async scheduling, FP8 KV, 0.9 of memory; the client draws ISL from
	// [819, 1024] and OSL from [6553, 8192] (int(0.8 × 8192) = 6553), sends 160 requests, all of
	// the first 16 at once.
	p, w := plan(0)
	e, tr := p.Config.Engine, p.Config.Traffic
	if p.Harness.Name != HarnessInferenceX || !p.Harness.Known || w.Scheduler.MaxBatchedTokens != 8192 || w.Scheduler.MaxSequences != 16 ||
		w.KVCache.PrefixCaching || !*e.OverlapScheduling || !*e.EnableChunkedPrefill || e.Precision.KVCache != "fp8" ||
		e.Precision.Weights != "fp8" || w.KVCache.Capacity.MemoryFraction != 0.9 || w.Scheduler.BatchWaitTimeoutIters != 0 ||
		w.Parallelism.Tensor != 4 || w.Parallelism.Replicas != 1 {
		t.Errorf("vLLM H100 row: harness %+v, engine %+v, role %+v", p.Harness, e, w)
	}
	if d := tr.Source.InputTokensDist; d == nil || d.Distribution != config.DistUniform || d.Min != 819 || d.Max != 1024 {
		t.Errorf("vLLM H100 row: input lengths %+v, want uniform [819, 1024]", d)
	}
	if d := tr.Source.OutputTokensDist; d == nil || d.Min != 6553 || d.Max != 8192 {
		t.Errorf("vLLM H100 row: output lengths %+v, want uniform [6553, 8192]", d)
	}
	if tr.Stop.Requests != 160 || tr.Load.Concurrency != 16 || tr.Load.RampSeconds == nil || *tr.Load.RampSeconds != 0 || tr.Load.WarmupSeconds != nil {
		t.Errorf("vLLM H100 row: load %+v, stop %+v; want 160 requests, concurrency 16, synchronized start, no warm-up", tr.Load, tr.Stop)
	}
	// vLLM on B200: --max-num-seqs 512 (70b_fp8_b200_docker.sh), and the release's FlashInfer
	// backend computes attention in BF16 over the FP8 cache; on H100 (FlashAttention 3) and
	// under TensorRT-LLM attention stays at the cache's format (auto).
	if p, w := plan(3); w.Scheduler.MaxSequences != 512 || p.Config.Engine.Precision.Attention != "bf16" {
		t.Errorf("vLLM B200 row: max_sequences %d, attention %q; want 512 and bf16", w.Scheduler.MaxSequences, p.Config.Engine.Precision.Attention)
	}
	// The B200 script captures decode passes whole (cudagraph_mode FULL_DECODE_ONLY); the H100
	// one sets no compilation config: vLLM 0.10.2's piecewise graphs. TensorRT-LLM: whole.
	for i, want := range []string{config.CUDAGraphsPiecewise, "", "", ""} {
		if p, _ := plan(i); p.Config.Engine.CUDAGraphs != want {
			t.Errorf("row %s: cuda_graphs %q, want %q", rows[i].ID, p.Config.Engine.CUDAGraphs, want)
		}
	}
	// A vLLM row of a GPU whose scripts were not read has no tabulated flags.
	gb := readIX(t, "g,vllm,meta-llama/Llama-3.1-70B,gb200,fp8,fp8,agg,1024,1024,8,8,4,100,8,inferencex,2025-10-29")
	if f, ok := InferenceXServerFlags(gb[0], gb[0].Model); ok {
		t.Errorf("GB200 vLLM row: flags %+v, want none", f)
	}
	for _, i := range []int{0, 1, 2} {
		if p, _ := plan(i); p.Config.Engine.Precision.Attention != "" {
			t.Errorf("row %s: attention %q, want auto (the KV cache's format)", rows[i].ID, p.Config.Engine.Precision.Attention)
		}
	}
	// TensorRT-LLM on B200, TP2, 1k/1k: --max_num_tokens 16384, default max_batch_size 2048, KV
	// block reuse off, FP8 KV, overlap scheduler on, chunked prefill off (the PyTorch executor's
	// defaults), and below TP8 at 1k/1k batch waiting of 20 iterations or 0.9 × 16,384 tokens.
	p, w = plan(1)
	e = p.Config.Engine
	if w.Scheduler.MaxBatchedTokens != 16384 || w.Scheduler.MaxSequences != 2048 || w.KVCache.PrefixCaching ||
		!*e.OverlapScheduling || *e.EnableChunkedPrefill || e.Precision.KVCache != "fp8" || e.Precision.Weights != "fp4" ||
		w.Scheduler.BatchWaitTimeoutIters != 20 || w.Scheduler.BatchWaitMaxTokensRatio != 0.9 || p.Config.Traffic.Stop.Requests != 80 {
		t.Errorf("TensorRT-LLM TP2 row: engine %+v, role %+v", e, w)
	}
	// At TP8 the script leaves batch waiting off.
	if _, w := plan(2); w.Scheduler.BatchWaitTimeoutIters != 0 || w.Scheduler.BatchWaitMaxTokensRatio != 0 {
		t.Errorf("TensorRT-LLM TP8 row: batch waiting %d / %v, want off", w.Scheduler.BatchWaitTimeoutIters, w.Scheduler.BatchWaitMaxTokensRatio)
	}
	// vLLM 0.10.2's per-sequence host time goes into its rows' timing (and their YAML), from the
	// factors; TensorRT-LLM's rows keep the calibrated default.
	for i, want := range map[int]float64{0: CalibratedVLLMSequenceOverheadUs, 3: CalibratedVLLMSequenceOverheadUs, 1: 0, 2: 0} {
		p, err := PlanRow(rows[i], Options{})
		if err != nil {
			t.Fatal(err)
		}
		got := p.Config.Engine.Workers.Aggregated.Timing.SequenceOverheadUs
		y, err := p.YAML()
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case want == 0 && (got != nil || strings.Contains(string(y), "sequence_overhead_us")):
			t.Errorf("row %s: sequence_overhead_us %v, want none", rows[i].ID, got)
		case want > 0 && (got == nil || *got != want || !strings.Contains(string(y), fmt.Sprintf("sequence_overhead_us: %g", want))):
			t.Errorf("row %s: sequence_overhead_us %v, want %v in the config and its YAML:\n%s", rows[i].ID, got, want, y)
		}
		// Its memory outside weights, activations and KV likewise (kv_cache.capacity.reserve_gib),
		// whichever forward model prices the passes.
		op := CalibratedOpLevelFactors()
		if po, err := PlanRow(rows[i], Options{Factors: &op}); err != nil {
			t.Fatal(err)
		} else if res := po.Config.Engine.Workers.Aggregated.KVCache.Capacity.ReserveGiB; (want > 0) != (res != nil && *res == CalibratedVLLMReserveGiB) {
			t.Errorf("row %s with op_level's factors: reserve_gib %v", rows[i].ID, res)
		}
		res := p.Config.Engine.Workers.Aggregated.KVCache.Capacity.ReserveGiB
		wantRes := map[bool]float64{true: CalibratedVLLMReserveGiB}[want > 0]
		switch {
		case wantRes == 0 && (res != nil || strings.Contains(string(y), "reserve_gib")):
			t.Errorf("row %s: reserve_gib %v, want none", rows[i].ID, res)
		case wantRes > 0 && (res == nil || *res != wantRes || !strings.Contains(string(y), fmt.Sprintf("reserve_gib: %g", wantRes))):
			t.Errorf("row %s: reserve_gib %v, want %v in the config and its YAML:\n%s", rows[i].ID, res, wantRes, y)
		}
	}
}

// A row of another source runs the assumed harness: fixed lengths, 20 × concurrency requests,
// the engine defaults; an InferenceX row of a model or date without tabulated flags keeps the
// engine defaults too, with a note.
func TestAssumedHarnessAndUntabulatedFlags(t *testing.T) {
	rows := readIX(t,
		"a,vllm,Qwen/Qwen3-32B,h100_sxm,,,agg,1024,128,8,8,1,100,12,aic-gap-analysis,",
		"u,vllm,Qwen/Qwen3-32B,h100_sxm,,,agg,1024,128,8,8,1,100,12,inferencex,2026-02-01",
	)
	p, err := PlanRow(rows[0], Options{})
	if err != nil {
		t.Fatal(err)
	}
	tr := p.Config.Traffic
	if p.Harness.Known || p.Harness.Name != HarnessAssumed || tr.Stop.Requests != 160 || tr.Source.InputTokensDist != nil ||
		tr.Source.InputTokens != 1024 || tr.Source.OutputTokens != 128 || !p.Config.Engine.Workers.Aggregated.KVCache.PrefixCaching {
		t.Errorf("assumed harness: %+v, traffic %+v", p.Harness, tr)
	}
	p, err = PlanRow(rows[1], Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !p.Harness.Known || p.Config.Traffic.Stop.Requests != 80 || p.Notes[0] != BF16Note || !strings.HasPrefix(p.Notes[1], "server flags not tabulated") {
		t.Errorf("untabulated InferenceX row: %+v, notes %q", p.Harness, p.Notes)
	}
	// One output token leaves TPOT undefined: such a row is refused, not scored.
	one := readIX(t, "o,vllm,Qwen/Qwen3-32B,h100_sxm,,,agg,1024,1,8,8,1,100,12,inferencex,2025-10-29")
	if _, err := PlanRow(one[0], Options{}); err == nil || !strings.Contains(err.Error(), "a row needs osl >= 2") {
		t.Errorf("osl 1: err = %v", err)
	}
	// A length past the simulator's limit names the column and the value as the file gives them.
	huge := readIX(t, "h,vllm,Qwen/Qwen3-32B,h100_sxm,,,agg,999999999999,128,8,8,1,100,12,inferencex,2025-10-29")
	if _, err := PlanRow(huge[0], Options{}); err == nil || err.Error() != "isl: must be <= 16777216 tokens (the longest request servesweep simulates), got 999999999999" {
		t.Errorf("isl 999999999999: err = %v", err)
	}
}

// The YAML of a plan is a prediction config predict runs to the same prediction Validate makes:
// an aggregated InferenceX row, and a disaggregated row (its KV transfer's derived size written
// as auto).
func TestPlanYAMLRunsAsValidated(t *testing.T) {
	rows := readIX(t, "tr,trtllm,meta-llama/Llama-3.1-70B,b200_sxm,fp8,fp8,agg,1024,1024,4,4,2,200,9,inferencex,2025-10-29")
	rows = append(rows, readSmall(t)[2])
	for _, r := range rows {
		p, err := PlanRow(r, Options{})
		if err != nil {
			t.Fatal(err)
		}
		data, err := p.YAML()
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := config.Decode(data, "explain.yaml", nil)
		if err != nil {
			t.Fatalf("row %s: the plan's YAML does not decode: %v\n%s", r.ID, err, data)
		}
		res, err := sim.Run(context.Background(), cfg, sim.Options{})
		if err != nil {
			t.Fatal(err)
		}
		ttft, tpot, n := means(res.Requests)
		rep, err := Validate(context.Background(), []Row{r}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		got := rep.Rows[0]
		if got.Skipped || n != p.Config.Traffic.Stop.Requests || math.Abs(ttft-got.PredictedTTFTMs) > 1e-9 || math.Abs(tpot-got.PredictedTPOTMs) > 1e-9 {
			t.Errorf("row %s: predict on the YAML: %d requests, TTFT %v, TPOT %v; validate: TTFT %v, TPOT %v (%s)\n%s", r.ID, n, ttft, tpot,
				got.PredictedTTFTMs, got.PredictedTPOTMs, got.Reason, data)
		}
	}
}

// The headline scores the rows of a known harness only; every source is reported on its own.
func TestHeadlineKeepsAssumedHarnessApart(t *testing.T) {
	rows := readIX(t,
		"k,vllm,meta-llama/Llama-3.1-70B,h100_sxm,fp8,fp8,agg,1024,1024,4,4,4,80,12,inferencex,2025-10-29",
		"a,vllm,Qwen/Qwen3-32B,h100_sxm,,,agg,1024,128,4,4,1,50,10,aic-gap-analysis,",
		"b,vllm,Qwen/Qwen3-32B,h100_sxm,,,agg,1024,128,4,4,1,5000,1000,aic-gap-analysis,",
	)
	rep, err := Validate(context.Background(), rows, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := rep.Summary
	if s.Headline != HeadlineKnownHarness || s.RowsSimulated != 1 || *s.TTFTMAPEPct != rep.Rows[0].TTFTAPEPct || len(s.Sources) != 2 {
		t.Fatalf("summary %+v", s)
	}
	aic := s.Sources[0]
	if aic.Source != "aic-gap-analysis" || aic.Known || aic.Harness != HarnessAssumed || aic.RowsSimulated != 2 ||
		math.Abs(*aic.TTFTMAPEPct-(rep.Rows[1].TTFTAPEPct+rep.Rows[2].TTFTAPEPct)/2) > 1e-9 {
		t.Errorf("aic source %+v", aic)
	}
	// Without any known-harness row the headline covers every row.
	rep, err = Validate(context.Background(), rows[1:], Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s := rep.Summary; s.Headline != HeadlineAllRows || s.RowsSimulated != 2 {
		t.Errorf("summary without a known harness: %+v", s)
	}
}

// A row whose simulation leaves requests incomplete says so: on two H100s, Llama-3.1-70B FP8
// holds about 220k tokens of KV beside vLLM 0.10.2's 20 GiB reserve, so of the 40 prompts drawn
// from [200,000, 250,000] tokens the ones above that are rejected, and the means cover the rest.
func TestIncompleteRowsAreNoted(t *testing.T) {
	rows := readIX(t, "big,vllm,meta-llama/Llama-3.1-70B,h100_sxm,fp8,fp8,agg,250000,2,4,4,2,1000,20,inferencex,2025-10-29")
	rep, err := Validate(context.Background(), rows, Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := rep.Rows[0]
	last := ""
	if len(r.Notes) > 0 {
		last = r.Notes[len(r.Notes)-1]
	}
	if r.Skipped || !strings.HasPrefix(last, IncompleteNote+": ") || !strings.Contains(last, "of 40 simulated requests did not complete") {
		t.Errorf("row %+v: want a note counting the incomplete requests", r)
	}
	if got := rep.Summary.Notes; len(got) == 0 || !slices.ContainsFunc(got, func(n NoteCount) bool { return n.Note == IncompleteNote && n.Rows == 1 }) {
		t.Errorf("summary notes %+v: want 1 × %s", got, IncompleteNote)
	}
}

// A source that is neither empty nor a known one is noted on its row (a misspelling would
// otherwise move the row out of the headline silently); known ones, in any case, are not.
func TestUnknownSourceNote(t *testing.T) {
	for _, s := range []string{"", "inferencex", "InferenceX", "aic-gap-analysis", "AIC-GAP-ANALYSIS"} {
		if n := UnknownSourceNote(s); n != "" {
			t.Errorf("source %q: note %q, want none", s, n)
		}
	}
	n := UnknownSourceNote("inferncex")
	if !strings.Contains(n, `source "inferncex" is not one servesweep knows (inferencex, aic-gap-analysis)`) || !strings.Contains(n, "assumed harness") {
		t.Errorf("misspelt source: note %q", n)
	}
}

// A row whose backend_version is another release than the one the date's images ran is not
// matched to the date's flags (nor given vLLM 0.10.2's per-sequence time); one that gives none,
// or that release, is.
func TestInferenceXFlagsNeedTheirRelease(t *testing.T) {
	rows := readIX(t, "v,vllm,meta-llama/Llama-3.1-70B,h100_sxm,fp8,fp8,agg,1024,1024,16,16,4,100,12,inferencex,2025-10-29")
	for _, c := range []struct {
		version string
		want    bool
	}{{"", true}, {"0.10.2", true}, {"0.12.0", false}} {
		r := rows[0]
		r.BackendVersion = c.version
		if _, ok := InferenceXServerFlags(r, r.Model); ok != c.want {
			t.Errorf("backend_version %q: flags matched %v, want %v", c.version, ok, c.want)
		}
		p, err := PlanRow(r, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Config.Engine.Workers.Aggregated.Timing.SequenceOverheadUs != nil; got != c.want {
			t.Errorf("backend_version %q: sequence_overhead_us set %v, want %v", c.version, got, c.want)
		}
	}
	r := rows[0]
	r.Backend, r.BackendVersion = "trtllm", "1.1.0rc2.post2"
	if _, ok := InferenceXServerFlags(r, r.Model); !ok {
		t.Error("TensorRT-LLM 1.1.0rc2.post2: flags not matched")
	}
}

// Aggregated MoE rows of the single-node scripts get those scripts' flags, checked by hand
// against the InferenceX files named in singleNodeScripts; a row of another date, or wider than
// the script's one node, keeps the engine defaults.
func TestSingleNodeServerFlags(t *testing.T) {
	mk := func(model, system, precision, backend, date string, tp, isl, conc int) Row {
		return Row{Model: model, System: system, Precision: precision, Backend: backend, Mode: "agg", MeasuredAt: date,
			ISL: isl, OSL: 1024, Concurrency: conc, Agg: WorkerShape{Tensor: tp}, Source: HarnessInferenceX}
	}
	// minimaxm2.5_fp8_b300.sh (340d7854c): --max-num-batched-tokens $((ISL * 2)), no
	// --max-num-seqs (vLLM's 1024), --block-size=32, --kv-cache-dtype fp8, 0.90 of memory.
	r := mk("MiniMaxAI/MiniMax-M2.5", "b300_sxm", "fp8", "vllm", "2026-04-17", 4, 1024, 512)
	f, ok := InferenceXServerFlags(r, r.Model)
	if !ok || f.MaxBatchedTokens != 2048 || f.MaxSequences != 1024 || f.BlockSize != 32 || f.KVCache != "fp8" ||
		f.MemoryFraction != 0.9 || f.PrefixCaching || !f.OverlapScheduling || f.VLLM0102 {
		t.Errorf("MiniMax-M2.5 FP8 B300 vLLM: %+v, %v", f, ok)
	}
	p, err := PlanRow(r, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if w := p.Config.Engine.Workers.Aggregated; w.Scheduler.MaxBatchedTokens != 2048 || w.Scheduler.MaxSequences != 1024 ||
		w.KVCache.BlockSize != 32 || w.KVCache.PrefixCaching || !*p.Config.Engine.OverlapScheduling {
		t.Errorf("MiniMax-M2.5 FP8 B300 vLLM plan: %+v", w)
	}
	// The mode spelt out, as PlanRow reads it too, is the same row.
	r.Mode = "Aggregated"
	if f2, ok := InferenceXServerFlags(r, r.Model); !ok || f2.Source != f.Source {
		t.Errorf("mode Aggregated: %+v, %v", f2, ok)
	}
	// Before the script was in the repository (the 2026-04-03 runs): not tabulated.
	r.MeasuredAt = "2026-04-03"
	if _, ok := InferenceXServerFlags(r, r.Model); ok {
		t.Error("MiniMax-M2.5 on 2026-04-03: flags matched")
	}
	// kimik2.5_fp4_b300.sh: --max-num-seqs $CONC, KV dtype left at auto (BF16).
	r = mk("moonshotai/Kimi-K2.5", "b300_sxm", "fp4", "vllm", "2026-04-20", 8, 1024, 16)
	if f, ok := InferenceXServerFlags(r, r.Model); !ok || f.MaxSequences != -1 || f.MaxBatchedTokens != 8192 || f.KVCache != "bf16" {
		t.Errorf("Kimi-K2.5 FP4 B300 vLLM: %+v, %v", f, ok)
	}
	// dsr1_fp8_b300.sh (5b302f147) for DeepSeek-V3: TP8 --max-running-requests 128,
	// --mem-fraction-static 0.82, --chunked-prefill-size 32768, --scheduler-recv-interval 30 from
	// concurrency 16; TP4 32, 0.95, 8192 and 10.
	r = mk("deepseek-ai/DeepSeek-V3", "b300_sxm", "fp8", "sglang", "2026-04-17", 8, 1024, 64)
	if f, ok := InferenceXServerFlags(r, r.Model); !ok || f.MaxSequences != 128 || f.MemoryFraction != 0.82 || f.KVCache != "fp8" ||
		f.RecvInterval != 30 || f.ChunkedPrefillSize != 32768 {
		t.Errorf("DeepSeek-V3 FP8 B300 SGLang TP8: %+v, %v", f, ok)
	}
	p, err = PlanRow(r, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s := p.Config.Engine.Workers.Aggregated.Scheduler; s.RecvInterval != 30 || s.ChunkedPrefillSize != 32768 || s.MaxSequences != 128 {
		t.Errorf("DeepSeek-V3 FP8 B300 SGLang TP8 plan: scheduler %+v", s)
	}
	r.Agg.Tensor, r.Concurrency = 4, 4
	if f, ok := InferenceXServerFlags(r, r.Model); !ok || f.MaxSequences != 32 || f.MemoryFraction != 0.95 ||
		f.RecvInterval != 10 || f.ChunkedPrefillSize != 8192 {
		t.Errorf("DeepSeek-V3 FP8 B300 SGLang TP4: %+v, %v", f, ok)
	}
	// TP16 cannot be the single-node script's deployment.
	r = mk("deepseek-ai/DeepSeek-V3", "b300_sxm", "fp4", "sglang", "2026-04-17", 16, 1024, 64)
	if _, ok := InferenceXServerFlags(r, r.Model); ok {
		t.Error("DeepSeek-V3 FP4 TP16: flags matched")
	}
}

// The measured file writes InferenceX's vLLM expert-parallel entries {tp: T, ep: T} as tp_size
// T, attention_dp_size T, moe_ep_size T²; the scripts ran T GPUs with the experts split T ways,
// attention data-parallel only where the entry says dp-attn and the script has that branch
// (minimaxm2.5_fp4_b300.sh; the FP8 B300 and H100 scripts have none).
func TestExpertParallelRowsRunTheScriptsShape(t *testing.T) {
	for _, c := range []struct {
		system, precision, date string
		isl, tp, conc           int
		tensor, dp, ep          int
	}{
		{"b300_sxm", "fp4", "2026-04-21", 1024, 2, 512, 1, 2, 2}, // dp-attn 256-2048 (633fd2377)
		{"b300_sxm", "fp4", "2026-04-21", 1024, 2, 256, 1, 2, 2},
		{"b300_sxm", "fp4", "2026-04-21", 1024, 2, 128, 2, 1, 2}, // {tp: 2, ep: 2} without dp-attn
		{"b300_sxm", "fp4", "2026-04-17", 1024, 2, 256, 2, 1, 2}, // dp-attn at 512 only then
		{"b300_sxm", "fp4", "2026-04-17", 8192, 2, 512, 2, 1, 2},
		{"b300_sxm", "fp4", "2026-04-21", 8192, 2, 512, 1, 2, 2},
		{"b300_sxm", "fp4", "2026-04-21", 1024, 4, 128, 4, 1, 4},
		{"b300_sxm", "fp8", "2026-04-21", 1024, 2, 1024, 2, 1, 2}, // dp-attn entry, no DP branch
		{"h100_sxm", "fp8", "2026-03-28", 1024, 4, 64, 4, 1, 4},
	} {
		r := Row{Model: "MiniMaxAI/MiniMax-M2.5", System: c.system, Precision: c.precision, Backend: "vllm", Mode: "agg",
			MeasuredAt: c.date, ISL: c.isl, OSL: 1024, Concurrency: c.conc, Source: HarnessInferenceX,
			Agg: WorkerShape{Tensor: c.tp, AttentionData: c.tp, MoETensor: 1, MoEExpert: c.tp * c.tp, BatchSize: c.conc / c.tp}}
		p, err := PlanRow(r, Options{})
		if err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
		w := p.Config.Engine.Workers.Aggregated
		if pa := w.Parallelism; pa.Tensor != c.tensor || pa.AttentionData != c.dp || pa.MoeExpert != c.ep || pa.MoeTensor != 1 ||
			pa.Replicas != 1 || p.Config.GPUs() != c.tp {
			t.Errorf("%+v: parallelism %+v, %d GPUs; want tensor %d, attention_data %d, moe_expert %d on %d GPUs",
				c, pa, p.Config.GPUs(), c.tensor, c.dp, c.ep, c.tp)
		}
	}
	// Outside every tabulated script's dates, the plain expert-parallel worker of InferenceX's
	// vLLM scripts (--enable-expert-parallel over tp_size GPUs), said so.
	ep := Row{Model: "MiniMaxAI/MiniMax-M2.5", System: "h100_sxm", Precision: "fp8", Backend: "vllm", Mode: "agg",
		MeasuredAt: "2026-06-01", ISL: 1024, OSL: 1024, Concurrency: 64, Source: HarnessInferenceX,
		Agg: WorkerShape{Tensor: 4, AttentionData: 4, MoETensor: 1, MoEExpert: 16}}
	p, err := PlanRow(ep, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if pa := p.Config.Engine.Workers.Aggregated.Parallelism; pa.Tensor != 4 || pa.AttentionData != 1 || pa.MoeExpert != 4 ||
		!strings.Contains(strings.Join(p.Notes, "\n"), "none tabulated") {
		t.Errorf("untabulated date: parallelism %+v, notes %q", pa, p.Notes)
	}
	// A measured_at that is not a date names itself; an attention_dp_size other than tp_size
	// is not the file's expert-parallel form and stays as written.
	bad := ep
	bad.MeasuredAt = "2026-13-45"
	if _, err := PlanRow(bad, Options{}); err == nil || !strings.Contains(err.Error(), `measured_at "2026-13-45" is not a date`) {
		t.Errorf("bad measured_at: %v", err)
	}
	// (On 2026-04-21 InferenceX's configuration lists no 6-GPU deployment: the row is skipped;
	// on 2026-04-03, before its FP4 entry, it is simulated as written.)
	odd := ep
	odd.System, odd.Precision, odd.MeasuredAt = "b300_sxm", "fp4", "2026-04-21"
	odd.Agg = WorkerShape{Tensor: 2, AttentionData: 3, MoETensor: 1, MoEExpert: 6}
	if _, err := PlanRow(odd, Options{}); err == nil || !strings.HasPrefix(err.Error(), NotInIXConfig) {
		t.Errorf("tp 2, attention_dp 3 on 2026-04-21: %v, want the %q skip", err, NotInIXConfig)
	}
	odd.MeasuredAt = "2026-04-03"
	if p, err := PlanRow(odd, Options{}); err != nil {
		t.Fatal(err)
	} else if pa := p.Config.Engine.Workers.Aggregated.Parallelism; pa.Tensor != 2 || pa.AttentionData != 3 || pa.MoeExpert != 6 {
		t.Errorf("tp 2, attention_dp 3: parallelism %+v, want as written", pa)
	}
	// A shape the file writes otherwise is left as it is.
	r := Row{Model: "MiniMaxAI/MiniMax-M2.5", System: "b300_sxm", Precision: "fp4", Backend: "vllm", Mode: "agg",
		MeasuredAt: "2026-04-21", ISL: 1024, OSL: 1024, Concurrency: 64, Source: HarnessInferenceX, Agg: WorkerShape{Tensor: 4, MoETensor: 4}}
	p, err = PlanRow(r, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if pa := p.Config.Engine.Workers.Aggregated.Parallelism; pa.Tensor != 4 || pa.MoeTensor != 4 || pa.MoeExpert != 1 || pa.AttentionData != 1 {
		t.Errorf("TP4 row: parallelism %+v", pa)
	}
}

// The measured file writes an SGLang script's search-space entry {tp: T, ep: E} as tp_size
// T × E, moe_tp_size T, moe_ep_size E; the script ran T GPUs with --ep-size E
// (dsr1_fp4_b300.sh, qwen3.5_fp4_b300.sh). Shapes no script's entries list stay as written.
func TestSGLangExpertParallelRowsRunTheScriptsShape(t *testing.T) {
	for _, c := range []struct {
		model, precision, date    string
		tp, moeTP, moeEP          int
		tensor, wantMoETP, wantEP int
		script                    string
	}{
		{"deepseek-ai/DeepSeek-V3", "fp4", "2026-04-17", 16, 4, 4, 4, 1, 4, "dsr1_fp4_b300.sh"},
		{"deepseek-ai/DeepSeek-R1", "fp4", "2026-05-01", 64, 8, 8, 8, 1, 8, "dsr1_fp4_b300.sh"},
		{"Qwen/Qwen3.5-397B-A17B", "fp4", "2026-04-18", 4, 2, 2, 2, 1, 2, "qwen3.5_fp4_b300.sh"},
		// Not an entry of the day's configs: as the file writes them.
		{"Qwen/Qwen3.5-397B-A17B", "fp4", "2026-06-01", 4, 2, 2, 4, 2, 2, ""},
		{"Qwen/Qwen3.5-397B-A17B", "fp8", "2026-04-03", 4, 1, 4, 4, 1, 4, ""},
		{"deepseek-ai/DeepSeek-V3", "fp8", "2026-04-17", 8, 8, 1, 8, 8, 1, ""},
		{"deepseek-ai/DeepSeek-V3", "fp4", "2026-04-17", 4, 2, 2, 4, 2, 2, ""}, // {2, 2} is no dsr1 entry
	} {
		r := Row{Model: c.model, System: "b300_sxm", Precision: c.precision, Backend: "sglang", Mode: "agg",
			MeasuredAt: c.date, ISL: 1024, OSL: 1024, Concurrency: 32, Source: HarnessInferenceX,
			Agg: WorkerShape{Tensor: c.tp, AttentionData: 1, MoETensor: c.moeTP, MoEExpert: c.moeEP, BatchSize: 32}}
		p, err := PlanRow(r, Options{})
		if err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
		pa := p.Config.Engine.Workers.Aggregated.Parallelism
		if pa.Tensor != c.tensor || pa.MoeTensor != c.wantMoETP || pa.MoeExpert != c.wantEP || pa.AttentionData != 1 ||
			p.Config.GPUs() != c.tensor {
			t.Errorf("%+v: parallelism %+v on %d GPUs; want tensor %d, moe_tensor %d, moe_expert %d", c, pa, p.Config.GPUs(),
				c.tensor, c.wantMoETP, c.wantEP)
		}
		notes := strings.Join(p.Notes, "\n")
		if got := strings.Contains(notes, "shape from "+c.script); c.script != "" && !got {
			t.Errorf("%+v: notes %q do not name the script's shape", c, p.Notes)
		} else if c.script == "" && strings.Contains(notes, "shape from") {
			t.Errorf("%+v: notes %q replace a shape written as it ran", c, p.Notes)
		}
		if c.script != "" && !strings.Contains(notes, "server flags: InferenceX") {
			t.Errorf("%+v: the script's flags were not applied: %q", c, p.Notes)
		}
	}
}
