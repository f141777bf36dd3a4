package calibrate

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/servesweep/servesweep/sim/config"
)

// header is the calibration file's header (measured_dense_calibration.csv).
const header = "id,backend,backend_version,model_path,system,precision,gemm_quant_mode,mode,isl,osl,concurrency," +
	"moe_quant_mode,batch_size,tp_size,pp_size,attention_dp_size,moe_tp_size,moe_ep_size,prefill_batch_size," +
	"prefill_num_workers,prefill_tp_size,prefill_pp_size,prefill_attention_dp_size,prefill_moe_tp_size," +
	"prefill_moe_ep_size,decode_batch_size,decode_num_workers,decode_tp_size,decode_pp_size," +
	"decode_attention_dp_size,decode_moe_tp_size,decode_moe_ep_size,silicon_ttft_ms,silicon_tpot_ms\n"

// smallCSV has an aggregated vLLM row with 2 replicas, a TensorRT-LLM FP8 row, a disaggregated
// SGLang row, a row with an unknown model and a row with a malformed cell.
const smallCSV = header +
	"a,vllm,0.12,meta-llama/Llama-3.1-8B-Instruct,h100_sxm,,,agg,512,32,8,,4,1,1,,,,,,,,,,,,,,,,,,60.5,8.5\n" +
	"b,trtllm,1.2,Qwen/Qwen3-32B,h100_sxm,fp8,fp8,agg,1024,16,4,,4,2,1,1,,,,,,,,,,,,,,,,,120,12\n" +
	"c,sglang,0.5,Qwen/Qwen3-8B,h100_sxm,fp8,fp8_block,disagg,1024,16,,,,,,,,,1,2,1,1,1,1,1,8,1,2,1,1,1,1,200,10\n" +
	"d,vllm,0.12,acme/Unknown-7B,h100_sxm,,,agg,512,32,8,,8,1,1,,,,,,,,,,,,,,,,,,60,8\n" +
	"e,vllm,0.12,Qwen/Qwen3-8B,h100_sxm,,,agg,many,32,8,,8,1,1,,,,,,,,,,,,,,,,,,60,8\n"

func readSmall(t *testing.T) []Row {
	t.Helper()
	rows, err := ReadCSV(strings.NewReader(smallCSV), "small.csv")
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

func TestReadCSV(t *testing.T) {
	rows := readSmall(t)
	if len(rows) != 5 {
		t.Fatalf("%d rows", len(rows))
	}
	a := rows[0]
	if a.Line != 2 || a.Backend != "vllm" || a.Model != "meta-llama/Llama-3.1-8B-Instruct" || a.ISL != 512 || a.OSL != 32 ||
		a.Concurrency != 8 || a.Agg != (WorkerShape{BatchSize: 4, Tensor: 1, Pipeline: 1, AttentionData: 1}) ||
		a.TTFTMs != 60.5 || a.TPOTMs != 8.5 || a.Problem != "" {
		t.Errorf("row a = %+v", a)
	}
	c := rows[2]
	if c.Concurrency != 0 || c.Prefill != (WorkerShape{BatchSize: 1, Workers: 2, Tensor: 1, Pipeline: 1, AttentionData: 1, MoETensor: 1, MoEExpert: 1}) ||
		c.Decode != (WorkerShape{BatchSize: 8, Workers: 1, Tensor: 2, Pipeline: 1, AttentionData: 1, MoETensor: 1, MoEExpert: 1}) {
		t.Errorf("row c = %+v", c)
	}
	if e := rows[4]; e.Line != 6 || e.Problem != `isl: must be an int > 0, got "many"` {
		t.Errorf("row e problem = %q (line %d)", e.Problem, e.Line)
	}
	// An explicit 0 in a batch, worker count, tensor or pipeline column is a problem naming it;
	// 0 in attention_dp_size or moe_* is the files' "not used".
	zeros, err := ReadCSV(strings.NewReader("id,backend,model_path,system,mode,isl,osl,batch_size,tp_size,moe_ep_size,silicon_ttft_ms,silicon_tpot_ms\n"+
		"z1,vllm,m,h100_sxm,agg,512,32,0,1,0,60,8\nz2,vllm,m,h100_sxm,agg,512,32,4,0,0,60,8\nz3,vllm,m,h100_sxm,agg,512,32,4,2,0,60,8\n"), "zeros.csv")
	if err != nil || zeros[0].Problem != "batch_size: must be >= 1 (or empty when not given), got 0" ||
		zeros[1].Problem != "tp_size: must be >= 1 (or empty when not given), got 0" || zeros[2].Problem != "" {
		t.Errorf("zero cells: %v %q %q %q", err, zeros[0].Problem, zeros[1].Problem, zeros[2].Problem)
	}
	// A latency beyond a float's range is named as such, not as "not > 0"; a literal infinity is
	// not finite, not out of range.
	huge, err := ReadCSV(strings.NewReader("id,backend,model_path,system,mode,isl,osl,batch_size,silicon_ttft_ms,silicon_tpot_ms\n"+
		"h1,vllm,m,h100_sxm,agg,512,32,4,60,1e400\nh2,vllm,m,h100_sxm,agg,512,32,4,60,-1\nh3,vllm,m,h100_sxm,agg,512,32,4,60,Inf\n"), "huge.csv")
	if err != nil || huge[0].Problem != `silicon_tpot_ms: must be a finite number > 0, got "1e400" (beyond a 64-bit float's range)` ||
		huge[1].Problem != `silicon_tpot_ms: must be a number > 0, got "-1"` || huge[2].Problem != `silicon_tpot_ms: must be a finite number > 0, got "Inf"` {
		t.Errorf("huge cells: %v %q %q %q", err, huge[0].Problem, huge[1].Problem, huge[2].Problem)
	}
	// Go's digit separators and hexadecimal floats, which strconv.ParseFloat reads ("6_0" as 60),
	// are typos in a CSV of measurements: a problem naming the column, in a time and in a count.
	sep, err := ReadCSV(strings.NewReader("id,backend,model_path,system,mode,isl,osl,batch_size,silicon_ttft_ms,silicon_tpot_ms\n"+
		"s1,vllm,m,h100_sxm,agg,512,32,4,6_0,8\ns2,vllm,m,h100_sxm,agg,512,32,4,60,0x1p3\ns3,vllm,m,h100_sxm,agg,5_12,32,4,60,8\n"+
		"s4,vllm,m,h100_sxm,agg,512,32,4,6e1,8.0\n"), "sep.csv")
	if err != nil || sep[0].Problem != `silicon_ttft_ms: must be a number > 0, got "6_0"` ||
		sep[1].Problem != `silicon_tpot_ms: must be a number > 0, got "0x1p3"` || sep[2].Problem != `isl: must be an int > 0, got "5_12"` ||
		sep[3].Problem != "" || sep[3].TTFTMs != 60 {
		t.Errorf("separator cells: %v %q %q %q %q %v", err, sep[0].Problem, sep[1].Problem, sep[2].Problem, sep[3].Problem, sep[3].TTFTMs)
	}
	// A measured time under one microsecond (a denormal 1e-310 made every error and ratio against
	// it +Inf) is a problem naming the column; one microsecond itself is read.
	tiny, err := ReadCSV(strings.NewReader("id,backend,model_path,system,mode,isl,osl,batch_size,silicon_ttft_ms,silicon_tpot_ms\n"+
		"t1,vllm,m,h100_sxm,agg,512,32,4,1e-310,8\nt2,vllm,m,h100_sxm,agg,512,32,4,60,0.0009\nt3,vllm,m,h100_sxm,agg,512,32,4,60,0.001\n"), "tiny.csv")
	if err != nil || tiny[0].Problem != `silicon_ttft_ms: a measured mean time must be at least 0.001 ms (one microsecond), got "1e-310"; give it in milliseconds` ||
		tiny[1].Problem != `silicon_tpot_ms: a measured mean time must be at least 0.001 ms (one microsecond), got "0.0009"; give it in milliseconds` ||
		tiny[2].Problem != "" || tiny[2].TPOTMs != 0.001 {
		t.Errorf("tiny cells: %v %q %q %q %v", err, tiny[0].Problem, tiny[1].Problem, tiny[2].Problem, tiny[2].TPOTMs)
	}
	// A row with fewer or more fields than the header is marked, not read by position.
	ragged, err := ReadCSV(strings.NewReader("id,backend,model_path,system,mode,isl,osl,silicon_ttft_ms,silicon_tpot_ms\n"+
		"r1,vllm,meta-llama/Llama-3.1-8B-Instruct,h100_sxm,agg,512,32\nr2,vllm,m,h100_sxm,agg,512,32,60,8,extra\n"), "ragged.csv")
	if err != nil || len(ragged) != 2 || ragged[0].Problem != "has 7 fields, the header 9: its cells cannot be matched to columns" ||
		ragged[1].Problem != "has 10 fields, the header 9: its cells cannot be matched to columns" || ragged[1].Line != 3 {
		t.Errorf("ragged rows: %v %+v", err, ragged)
	}
	// A row repeating an earlier row's id is one measurement listed twice: marked, scored once.
	dup, err := ReadCSV(strings.NewReader("id,backend,model_path,system,mode,isl,osl,silicon_ttft_ms,silicon_tpot_ms\n"+
		"d1,vllm,m,h100_sxm,agg,512,32,60,8\nd2,vllm,m,h100_sxm,agg,512,32,60,8\nd1,vllm,m,h100_sxm,agg,512,32,60,8\n"+
		"d2,vllm,m,h100_sxm,agg,512,32,99,8\n"), "dup.csv")
	if err != nil || len(dup) != 4 || dup[0].Problem != "" || dup[1].Problem != "" ||
		dup[2].Problem != `repeats the id "d1" of line 2: a measurement listed twice is scored once` ||
		dup[3].Problem != `has the id "d2" of line 3 with other measurements (TTFT 99 against 60 ms, TPOT 8 against 8 ms): an id names one measurement; only line 3 is scored` {
		t.Errorf("repeated id: %v %+v", err, dup)
	}
	for _, c := range []struct{ csv, frag string }{
		{"", "small.csv: empty file"},
		{"backend,model_path\nvllm,x\n", "small.csv: line 1: missing column(s) system, mode, isl, osl, silicon_ttft_ms, silicon_tpot_ms"},
		{header, "small.csv: no data rows"},
		{header + "\"unterminated,vllm\n", "small.csv:"},
		{"isl,backend,model_path,system,mode,isl,osl,silicon_ttft_ms,silicon_tpot_ms\n1,vllm,x,h100_sxm,agg,2,3,4,5\n",
			`small.csv: line 1: column "isl" appears twice (fields 1 and 6)`},
		// A misspelt column (tp_size) would read as absent, every row at TP1: refused, with the
		// nearest known name; a name far from every known one gets no guess.
		{"backend,model_path,system,mode,isl,osl,tp_sz,silicon_ttft_ms,silicon_tpot_ms\nvllm,x,h100_sxm,agg,2,3,2,4,5\n",
			`small.csv: line 1: unknown column "tp_sz" (field 7; did you mean "tp_size"?): a misspelt column would read as absent; the columns are id, backend,`},
		{"backend,model_path,system,mode,isl,osl,comment,silicon_ttft_ms,silicon_tpot_ms\nvllm,x,h100_sxm,agg,2,3,ok,4,5\n",
			`small.csv: line 1: unknown column "comment" (field 7): a misspelt`},
		// A known column in another case is named as itself, not as the nearer "id".
		{"backend,model_path,system,mode,ISL,osl,silicon_ttft_ms,silicon_tpot_ms\nvllm,x,h100_sxm,agg,2,3,4,5\n",
			`small.csv: line 1: unknown column "ISL" (field 5; did you mean "isl"?)`},
		// The field's other name for a column names the column; a short name three edits from an
		// unrelated one ("gpu" from "id") gets no guess.
		{"backend,model_path,gpu,mode,isl,osl,silicon_ttft_ms,silicon_tpot_ms\nvllm,x,h100_sxm,agg,2,3,4,5\n",
			`small.csv: line 1: unknown column "gpu" (field 3; did you mean "system"?)`},
		{"backend,model_path,system,mode,isl,osl,foo,silicon_ttft_ms,silicon_tpot_ms\nvllm,x,h100_sxm,agg,2,3,1,4,5\n",
			`small.csv: line 1: unknown column "foo" (field 7): a misspelt`},
		// A binary file's first field is quoted by its first 40 characters only.
		{"\x7fELF" + strings.Repeat("\x00\x01", 200) + ",backend,model_path,system,mode,isl,osl,silicon_ttft_ms,silicon_tpot_ms\nx\n",
			fmt.Sprintf("small.csv: line 1: unknown column %q (field 1): a misspelt", "\x7fELF"+strings.Repeat("\x00\x01", 18)+"…")},
	} {
		if _, err := ReadCSV(strings.NewReader(c.csv), "small.csv"); err == nil || !strings.Contains(err.Error(), c.frag) {
			t.Errorf("%q: err = %v, want %q", c.csv, err, c.frag)
		}
	}
	// Backend and system are read in lower case, as the catalogs name them.
	if up, err := ReadCSV(strings.NewReader("backend,model_path,system,mode,isl,osl,silicon_ttft_ms,silicon_tpot_ms\n"+
		" TRTLLM ,x,H100_SXM,agg,2,3,4,5\n"), "small.csv"); err != nil || up[0].Backend != "trtllm" || up[0].System != "h100_sxm" {
		t.Errorf("upper-case backend and system: %v %+v", err, up)
	}
	// A concurrency of 0 and one of -4 get the same rule (an int > 0, or empty).
	conc, err := ReadCSV(strings.NewReader("backend,model_path,system,mode,isl,osl,concurrency,silicon_ttft_ms,silicon_tpot_ms\n"+
		"vllm,x,h100_sxm,agg,2,3,0,4,5\nvllm,x,h100_sxm,agg,2,3,-4,4,5\n"), "small.csv")
	if err != nil || len(conc) != 2 {
		t.Fatalf("concurrency rows: %v", err)
	}
	for i, v := range []string{"0", "-4"} {
		if want := `concurrency: must be an int > 0 (or empty: then batch_size, or decode_batch_size × decode_num_workers), got "` + v + `"`; conc[i].Problem != want {
			t.Errorf("concurrency %s: problem %q, want %q", v, conc[i].Problem, want)
		}
	}
	if _, err := ReadCSVFile("/nonexistent/x.csv"); err == nil {
		t.Error("missing file accepted")
	}
}

// MoE rows carry their expert split (moe_tp_size, moe_ep_size and the prefill_/decode_ forms);
// a disaggregated row without worker counts is skipped, or one prefill and one decode worker when
// asked (Options.OneWorkerPerRole).
func TestPlanRowMoE(t *testing.T) {
	const moe = header +
		"r,trtllm,1.0,deepseek-ai/DeepSeek-R1,h100_sxm,fp8,fp8,agg,1024,128,16,fp8,16,8,1,1,1,8,,,,,,,,,,,,,,,500,30\n" +
		"s,trtllm,1.0,deepseek-ai/DeepSeek-R1,h100_sxm,fp8,fp8,disagg,1024,128,64,fp8,,,,,,,,,16,1,1,1,16,,,16,1,1,1,16,900,40\n" +
		"t,vllm,0.12,meta-llama/Llama-3.1-70B,h100_sxm,,,agg,512,32,8,,8,2,1,1,2,1,,,,,,,,,,,,,,,60,8\n"
	rows, err := ReadCSV(strings.NewReader(moe), "moe.csv")
	if err != nil {
		t.Fatal(err)
	}
	p, err := PlanRow(rows[0], Options{})
	if err != nil {
		t.Fatal(err)
	}
	par := p.Config.Engine.Workers.Aggregated.Parallelism
	if par.Tensor != 8 || par.MoeExpert != 8 || par.MoeTensor != 1 || p.Shape != "agg 1 × (TP8 EP8)" {
		t.Errorf("agg MoE plan: %+v, shape %q", par, p.Shape)
	}
	if _, err := PlanRow(rows[1], Options{}); err == nil || !strings.Contains(err.Error(), "needs prefill_num_workers and decode_num_workers, both empty") ||
		err.Error() != NoWorkerCounts {
		t.Errorf("disagg MoE row without workers, by default: %v", err)
	}
	if p, err := PlanRow(rows[1], Options{OneWorkerPerRole: true}); err != nil || p.Shape != "disagg P 1 × (TP16 EP16) / D 1 × (TP16 EP16)" {
		t.Errorf("disagg MoE row without workers, one worker per role: %v", err)
	}
	if rows[1].Decode.MoEExpert != 16 || rows[1].Prefill.Tensor != 16 {
		t.Errorf("disagg MoE shapes: %+v / %+v", rows[1].Prefill, rows[1].Decode)
	}
	// An MoE row with no split (moe_tp_size and moe_ep_size empty) splits each expert over the
	// worker's GPUs, and says so.
	noSplit := rows[0]
	noSplit.Agg.MoETensor, noSplit.Agg.MoEExpert = 0, 0
	p, err = PlanRow(noSplit, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if par := p.Config.Engine.Workers.Aggregated.Parallelism; par.MoeTensor != 8 || par.MoeExpert != 1 ||
		!slices.Contains(p.Notes, "moe_tp_size and moe_ep_size empty or 0: moe_tensor 8") {
		t.Errorf("MoE row without a split: %+v, notes %q", par, p.Notes)
	}
	// A dense row's moe_tp_size repeats its tensor degree; it does not split anything.
	p, err = PlanRow(rows[2], Options{})
	if err != nil {
		t.Fatal(err)
	}
	if par := p.Config.Engine.Workers.Aggregated.Parallelism; par.Tensor != 2 || par.MoeTensor != 1 || par.MoeExpert != 1 {
		t.Errorf("dense row with moe_tp_size 2: %+v", par)
	}
}

func TestPlanRow(t *testing.T) {
	rows := readSmall(t)
	// Concurrency 8 over batch_size 4: two replicas; bf16.
	p, err := PlanRow(rows[0], Options{})
	if err != nil {
		t.Fatal(err)
	}
	agg := p.Config.Engine.Workers.Aggregated
	// No source column: the assumed harness, 20 requests per unit of concurrency, fixed lengths.
	if agg.Parallelism.Replicas != 2 || agg.Scheduler.MaxSequences != 4 || p.Concurrency != 8 || p.Harness.Name != HarnessAssumed ||
		p.Config.Traffic.Stop.Requests != 20*8 || p.Precisions.Weights != "bf16" || len(p.Notes) != 3 || p.Notes[0] != BF16Note ||
		p.Notes[1] != ReplicasNote+": concurrency 8 = batch_size 4 × attention_dp_size 1 × 2 replicas" ||
		p.Config.Traffic.Source.InputTokensDist != nil || *p.Config.Traffic.Load.RampSeconds != 0 ||
		agg.Timing.Type != config.TimingDefault || agg.KVCache.Capacity.Type != config.CapacityDefault {
		t.Errorf("plan a: %+v, role %+v", p, agg)
	}
	// TensorRT-LLM: its own scheduler style and defaults (block size 32, guaranteed_no_evict), FP8
	// weights and KV.
	p, err = PlanRow(rows[1], Options{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Config.Engine.Backend != "trtllm" || p.Config.Engine.Workers.Aggregated.KVCache.BlockSize != 32 ||
		p.Config.Engine.Workers.Aggregated.KVCache.Capacity.MemoryFraction != 0.9 ||
		p.Config.Engine.Workers.Aggregated.Scheduler.CapacityPolicy != config.CapacityGuaranteedNoEvict ||
		p.Precisions.Weights != "fp8" || p.Precisions.KVCache != "fp8" || len(p.Notes) != 1 || p.Shape != "agg 1 × (TP2)" {
		t.Errorf("plan b: %+v", p)
	}
	// Disaggregated: concurrency = decode batch × attention DP × decode workers = 8; transfer at
	// RDMA speed.
	p, err = PlanRow(rows[2], Options{})
	if err != nil {
		t.Fatal(err)
	}
	w := p.Config.Engine.Workers
	if p.Config.Engine.Mode != config.ModeDisaggregated || w.Prefill.Parallelism.Replicas != 2 || w.Prefill.Scheduler.MaxSequences != 1 ||
		w.Decode.Parallelism.Tensor != 2 || w.Decode.Scheduler.MaxSequences != 8 || p.Concurrency != 8 ||
		*p.Config.Engine.KVTransfer.BandwidthGBps != RDMAGBps || p.Shape != "disagg P 2 × (TP1) / D 1 × (TP2)" ||
		p.Config.Engine.Backend != "sglang" || p.Config.Engine.Workers.Decode.KVCache.BlockSize != 1 ||
		!slices.Equal(p.Notes, []string{"concurrency empty: decode_batch_size 8 × 1 decode attention-DP ranks × 1 decode workers = 8",
			AssumedHarness().describe(8)}) {
		t.Errorf("plan c: %+v", p)
	}
	if _, err := PlanRow(rows[3], Options{}); err == nil || !strings.Contains(err.Error(), `unknown model "acme/Unknown-7B"`) {
		t.Errorf("plan d: err = %v", err)
	}
	if _, err := PlanRow(rows[4], Options{}); err == nil || !strings.Contains(err.Error(), "isl: must be an int") {
		t.Errorf("plan e: err = %v", err)
	}
	bad := rows[0]
	bad.System = "tpu_v9"
	if _, err := PlanRow(bad, Options{}); err == nil || !strings.Contains(err.Error(), "known hardware") {
		t.Errorf("unknown system: err = %v", err)
	}
	bad = rows[0]
	bad.Mode = "afd"
	if _, err := PlanRow(bad, Options{}); err == nil || !strings.Contains(err.Error(), `mode "afd" is not agg or disagg`) {
		t.Errorf("bad mode: err = %v", err)
	}
}

// TestValidateSmall checks the report: simulated rows have predictions and APEs, skipped rows a
// reason, the summary counts both, and the JSON has the documented keys. Reports do not depend on
// the number of parallel rows.
func TestValidateSmall(t *testing.T) {
	rows := readSmall(t)
	rep, err := Validate(context.Background(), rows, Options{Parallelism: 2})
	if err != nil {
		t.Fatal(err)
	}
	s := rep.Summary
	if s.RowsSimulated != 3 || s.RowsSkipped != 2 || len(rep.Rows) != 5 {
		t.Fatalf("summary %+v", s)
	}
	for _, r := range rep.Rows[:3] {
		if r.Skipped || !(r.PredictedTTFTMs > 0) || !(r.PredictedTPOTMs > 0) || r.Scheduler != r.Backend {
			t.Errorf("row %d: %+v", r.Line, r)
		}
	}
	if r := rep.Rows[3]; !r.Skipped || !strings.Contains(r.Reason, "unknown model") {
		t.Errorf("row 5: %+v", r)
	}
	if len(s.Groups) != 3 || s.Groups[0].Model != "Qwen/Qwen3-32B" || len(s.LargestTTFTErrors) != 3 {
		t.Errorf("groups %+v worst %+v", s.Groups, s.LargestTTFTErrors)
	}
	data, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Rows    []map[string]any `json:"rows"`
		Summary map[string]any   `json:"summary"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"ttft_mape_pct", "tpot_mape_pct", "rows_simulated", "rows_skipped", "groups"} {
		if _, ok := doc.Summary[k]; !ok {
			t.Errorf("summary lacks %q", k)
		}
	}
	for _, k := range []string{"line", "predicted_ttft_ms", "measured_tpot_ms", "ttft_ape_pct", "skipped"} {
		if _, ok := doc.Rows[0][k]; !ok {
			t.Errorf("row lacks %q", k)
		}
	}
	one, err := Validate(context.Background(), rows, Options{Parallelism: 1})
	if err != nil {
		t.Fatal(err)
	}
	data1, _ := json.Marshal(one)
	if string(data1) != string(data) {
		t.Error("report differs between Parallelism 1 and 2")
	}
}

func TestValidateCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Validate(ctx, readSmall(t), Options{}); err == nil {
		t.Error("cancelled validation returned no error")
	}
}

// calibrationFile is the measured calibration set, used only from ../shared (never committed).
const calibrationFile = "../../../shared/data/silicon/measured_dense_calibration.csv"

// TestCalibrationAccuracy checks the shipped factors on the dense calibration file: at least
// 95 % of its rows simulate, and the headline (its InferenceX rows, benchmarked by a known
// harness) scores TPOT MAPE <= 12 % and TTFT MAPE <= 25 % in sample; docs/validation.md gives the
// left-out figures. It skips when the file is absent, and under the race detector (which makes
// the ~900 simulations take minutes; run go test ./sim/calibrate).
func TestCalibrationAccuracy(t *testing.T) {
	if _, err := os.Stat(calibrationFile); err != nil {
		t.Skipf("calibration file not available at %s: %v", calibrationFile, err)
	}
	if raceEnabled {
		t.Skip("skipped under -race: run go test ./sim/calibrate -run Accuracy")
	}
	if testing.Short() {
		t.Skip("skipped in -short mode")
	}
	rows, err := ReadCSVFile(calibrationFile)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Validate(context.Background(), rows, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := rep.Summary
	t.Logf("%s", s)
	for _, g := range s.Groups {
		t.Logf("%-34s %-9s %-7s %4d rows: TTFT MAPE %5.1f%% (median %5.1f%%), TPOT MAPE %5.1f%% (median %5.1f%%)",
			g.Model, g.System, g.Backend, g.Rows, g.TTFTMAPEPct, g.TTFTMedianAPEPct, g.TPOTMAPEPct, g.TPOTMedianAPEPct)
	}
	simulated := 0
	for _, src := range s.Sources {
		simulated += src.RowsSimulated
		t.Logf("source %q (harness %s): %d rows simulated, %d skipped", src.Source, src.Harness, src.RowsSimulated, src.RowsSkipped)
	}
	if n := len(rows); float64(simulated) < 0.95*float64(n) {
		t.Errorf("simulated %d of %d rows, want >= 95%%: %v", simulated, n, rep.SkippedReasons())
	}
	if s.Headline != HeadlineKnownHarness || s.RowsSimulated != 309 {
		t.Errorf("headline %q over %d rows, want the 309 InferenceX rows", s.Headline, s.RowsSimulated)
	}
	if s.TPOTMAPEPct == nil || s.TTFTMAPEPct == nil {
		t.Fatalf("no MAPE: %s", s)
	}
	if *s.TPOTMAPEPct > 12 {
		t.Errorf("TPOT MAPE %.1f%% > 12%%", *s.TPOTMAPEPct)
	}
	if *s.TTFTMAPEPct > 25 {
		t.Errorf("TTFT MAPE %.1f%% > 25%%", *s.TTFTMAPEPct)
	}
}

// unsupportedCSV has only rows that cannot be simulated: two of an unknown model, one of another
// unknown model, one on an unknown GPU and one with a malformed cell.
const unsupportedCSV = header +
	"u1,vllm,0.12,acme/Unknown-7B,h100_sxm,,,agg,512,32,8,,8,1,1,,,,,,,,,,,,,,,,,,60,8\n" +
	"u2,vllm,0.12,acme/Unknown-7B,h100_sxm,,,agg,1024,32,8,,8,1,1,,,,,,,,,,,,,,,,,,90,9\n" +
	"g1,vllm,0.12,meta-llama/Llama-3.1-8B-Instruct,tpu_v9,,,agg,512,32,4,,4,1,1,,,,,,,,,,,,,,,,,,60,8\n" +
	"o1,vllm,0.12,acme/Other-3B,h100_sxm,,,agg,512,32,8,,8,1,1,,,,,,,,,,,,,,,,,,60,8\n" +
	"m1,vllm,0.12,Qwen/Qwen3-8B,h100_sxm,,,agg,many,32,8,,8,1,1,,,,,,,,,,,,,,,,,,60,8\n"

// TestValidateNoRowSimulated checks that a file of which no row simulates has no accuracy: the
// MAPEs are nil (null in JSON, N/A in the headline, which still counts the rows) and
// CheckSimulated fails naming the skip reasons with their counts, most frequent first.
func TestValidateNoRowSimulated(t *testing.T) {
	rows, err := ReadCSV(strings.NewReader(unsupportedCSV), "unsupported.csv")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Validate(context.Background(), rows, Options{Parallelism: 2})
	if err != nil {
		t.Fatal(err)
	}
	s := rep.Summary
	if s.RowsSimulated != 0 || s.RowsSkipped != 5 {
		t.Fatalf("simulated %d, skipped %d; want 0 and 5", s.RowsSimulated, s.RowsSkipped)
	}
	if s.TTFTMAPEPct != nil || s.TPOTMAPEPct != nil || s.TTFTMedianAPEPct != nil || s.TPOTMedianAPEPct != nil {
		t.Errorf("MAPEs of nothing: %+v", s)
	}
	if got, want := s.String(), "all rows: TTFT MAPE N/A, TPOT MAPE N/A, 0 rows simulated, 5 skipped"; got != want {
		t.Errorf("headline %q, want %q", got, want)
	}
	data, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, frag := range []string{`"ttft_mape_pct":null`, `"tpot_mape_pct":null`, `"ttft_median_ape_pct":null`,
		`"tpot_median_ape_pct":null`, `"rows_simulated":0`, `"rows_skipped":5`} {
		if !strings.Contains(string(data), frag) {
			t.Errorf("summary JSON lacks %s: %s", frag, data)
		}
	}
	if got := Objective(s); !math.IsInf(got, 1) {
		t.Errorf("Objective of no simulated row = %v, want +Inf", got)
	}
	err = rep.CheckSimulated()
	if err == nil {
		t.Fatal("CheckSimulated accepted a report without a simulated row")
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != 5 || lines[0] != "no row could be simulated: all 5 rows were skipped; by reason, most frequent first:" ||
		!strings.HasPrefix(lines[1], `  2 × model_path: unknown model "acme/Unknown-7B"`) ||
		!strings.HasPrefix(lines[2], `  1 × `) || !strings.HasPrefix(lines[3], `  1 × `) ||
		lines[4] != "  ... and 1 more reason" {
		t.Errorf("CheckSimulated error:\n%v", err)
	}
	if reasons := rep.SkippedReasons(); len(reasons) != 4 || !strings.HasPrefix(reasons[0], "2 × ") {
		t.Errorf("skipped reasons %q: want 4, the double one first", reasons)
	}
}

// TestSummaryHandComputed checks the overall MAPEs and median APEs on hand-made row results:
// TTFT APEs 10, 40, 20 give MAPE 70/3 and median 20; TPOT APEs 4, 6, 14 give MAPE 8 and median 6.
// The skipped row (APE 1000) counts only as skipped; the one with MTP also counts apart. The
// medians of predicted ÷ measured: TTFT 110/100, 60/100, 80/100 → 0.8; TPOT 10.4/10, 11.4/10,
// 9.4/10 → 1.04 (the MTP row alone: 0.8 and 0.94).
func TestSummaryHandComputed(t *testing.T) {
	rows := []RowResult{
		{Line: 2, Model: "m", System: "s", Backend: "vllm", TTFTAPEPct: 10, TPOTAPEPct: 4,
			MeasuredTTFTMs: 100, PredictedTTFTMs: 110, MeasuredTPOTMs: 10, PredictedTPOTMs: 10.4},
		{Line: 3, Model: "m", System: "s", Backend: "vllm", TTFTAPEPct: 40, TPOTAPEPct: 14,
			MeasuredTTFTMs: 100, PredictedTTFTMs: 60, MeasuredTPOTMs: 10, PredictedTPOTMs: 11.4},
		{Line: 4, Skipped: true, Reason: "boom", TTFTAPEPct: 1000, TPOTAPEPct: 1000, MeasuredTTFTMs: 1, PredictedTTFTMs: 11},
		{Line: 5, Model: "m", System: "s", Backend: "vllm", TTFTAPEPct: 20, TPOTAPEPct: 6, Speculation: "mtp 2",
			MeasuredTTFTMs: 100, PredictedTTFTMs: 80, MeasuredTPOTMs: 10, PredictedTPOTMs: 9.4},
	}
	s := summarize(rows, 10)
	rep := &Report{Rows: rows, Summary: s}
	// The speculative row counts in the headline and, alone, in its own line.
	if len(s.Speculative) != 1 || s.Speculative[0].RowsSimulated != 1 || s.Speculative[0].RowsSkipped != 0 ||
		*s.Speculative[0].TTFTMAPEPct != 20 || *s.Speculative[0].TPOTMAPEPct != 6 {
		t.Errorf("speculative rows %+v, want one at TTFT 20 %%, TPOT 6 %%", s.Speculative)
	}
	if s.TTFTMAPEPct == nil || s.TPOTMAPEPct == nil || s.TTFTMedianAPEPct == nil || s.TPOTMedianAPEPct == nil ||
		s.TTFTMedianRatio == nil || s.TPOTMedianRatio == nil || len(s.Sources) != 1 || s.Sources[0].TTFTMedianRatio == nil ||
		len(s.Groups) != 1 || s.Speculative[0].TTFTMedianRatio == nil || s.Speculative[0].TPOTMedianRatio == nil {
		t.Fatalf("missing MAPE: %+v", s)
	}
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"TTFT MAPE", *s.TTFTMAPEPct, 70.0 / 3},
		{"TTFT median", *s.TTFTMedianAPEPct, 20},
		{"TPOT MAPE", *s.TPOTMAPEPct, 8},
		{"TPOT median", *s.TPOTMedianAPEPct, 6},
		{"TTFT ratio", *s.TTFTMedianRatio, 0.8},
		{"TPOT ratio", *s.TPOTMedianRatio, 1.04},
		{"source TTFT ratio", *s.Sources[0].TTFTMedianRatio, 0.8},
		{"group TPOT ratio", s.Groups[0].TPOTMedianRatio, 1.04},
		{"MTP TTFT ratio", *s.Speculative[0].TTFTMedianRatio, 0.8},
		{"MTP TPOT ratio", *s.Speculative[0].TPOTMedianRatio, 0.94},
	} {
		if math.Abs(c.got-c.want) > 1e-12 {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if got, want := s.String(), "all rows: TTFT MAPE 23.3% (median APE 20.0%, predicted ÷ measured 0.80), TPOT MAPE 8.0% (median APE 6.0%, predicted ÷ measured 1.04), 3 rows simulated, 1 skipped"; got != want {
		t.Errorf("headline %q, want %q", got, want)
	}
	if err := rep.CheckSimulated(); err != nil {
		t.Errorf("CheckSimulated with 3 simulated rows: %v", err)
	}
}

// Skip reasons name the CSV column, not the simulated config's field, and carry no line
// number, so rows with the same problem group into one reason: two DeepSeek-R1 rows whose
// tp_size 6 does not divide its 128 heads (lines 2 and 3), a moe_ep_size that does not match the
// GPUs (line 4) and an unknown gemm_quant_mode (line 5).
func TestSkipReasonsNameColumns(t *testing.T) {
	const r1 = "vllm,0.19.0,deepseek-ai/DeepSeek-R1,h200_sxm,fp8,"
	csv := header +
		"a," + r1 + "fp8,agg,1024,128,8,fp8,8,6,1,1,6,1,,,,,,,,,,,,,,,100,10\n" +
		"b," + r1 + "fp8,agg,2048,128,8,fp8,8,6,1,1,6,1,,,,,,,,,,,,,,,100,10\n" +
		"c," + r1 + "fp8,agg,1024,128,8,fp8,8,8,1,1,1,3,,,,,,,,,,,,,,,100,10\n" +
		"d," + r1 + "fp9,agg,1024,128,8,fp8,8,8,1,1,1,8,,,,,,,,,,,,,,,100,10\n" +
		"e," + r1 + "fp8,disagg,1024,128,8,fp8,,,,,,,1,1,1,1,1,1,1,8,1,8,1,1,1,8,100,10\n"
	rows, err := ReadCSV(strings.NewReader(csv), "r1.csv")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Validate(context.Background(), rows, Options{Parallelism: 2})
	if err != nil {
		t.Fatal(err)
	}
	got := rep.SkippedReasons()
	want := []string{
		"2 × tp_size: tensor 6 does not divide deepseek-ai/DeepSeek-R1's 128 attention heads",
		`1 × gemm_quant_mode: unknown precision "fp9"`,
		"1 × moe_ep_size: moe_tensor × moe_expert (1 × 3 = 3) must equal tensor × attention_data (8 × 1 = 8)",
		"1 × prefill_tp_size × prefill_pp_size (KV capacity): model deepseek-ai/DeepSeek-R1 (fp8 weights) does not fit on 1 × h200_sxm",
	}
	if len(got) != len(want) {
		t.Fatalf("reasons %q, want %d", got, len(want))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("reason %d = %q, want prefix %q", i, got[i], want[i])
		}
	}
	// Each reason names its rows' lines, so that a summary without the per-row table still says
	// where to look.
	if !strings.HasSuffix(got[0], " (lines 2, 3)") || !strings.HasSuffix(got[1], ")") || !strings.Contains(got[1], "(line ") {
		t.Errorf("reasons %q do not name their lines", got[:2])
	}
	for lines, want := range map[string]string{"4": "line 4", "4 9": "lines 4, 9", "1 2 3 4 5 6 7": "lines 1, 2, 3, 4, 5 and 2 more"} {
		var ls []int
		for _, f := range strings.Fields(lines) {
			n, _ := strconv.Atoi(f)
			ls = append(ls, n)
		}
		if got := lineList(ls); got != want {
			t.Errorf("lineList(%v) = %q, want %q", ls, got, want)
		}
	}
}

// Batch sizes are per attention-DP rank (concurrency = batch × attention_dp_size × replicas in the
// measured files): an aggregated row of batch 64 on 8 DP ranks at concurrency 512 is one replica
// of 8 ranks with 64 sequences each; a disaggregated decode batch of 256 on 32 ranks holds 8,192.
func TestPlanRowAttentionDP(t *testing.T) {
	csv := header +
		"a,sglang,0.5,deepseek-ai/DeepSeek-R1,h200_sxm,fp8,fp8,agg,1024,128,512,fp8,64,1,1,8,1,8,,,,,,,,,,,,,,,100,10\n" +
		"b,sglang,0.5,deepseek-ai/DeepSeek-R1,gb200,fp8,fp8,disagg,1024,1024,8192,fp8,,,,,,,1,4,1,1,4,1,4,256,1,1,1,32,1,32,100,10\n"
	rows, err := ReadCSV(strings.NewReader(csv), "dp.csv")
	if err != nil {
		t.Fatal(err)
	}
	p, err := PlanRow(rows[0], Options{})
	if err != nil {
		t.Fatal(err)
	}
	if a := p.Config.Engine.Workers.Aggregated; a.Parallelism.Replicas != 1 || a.Parallelism.AttentionData != 8 || a.Scheduler.MaxSequences != 64 {
		t.Errorf("agg: replicas %d, attention_data %d, max_sequences %d; want 1, 8, 64", a.Parallelism.Replicas, a.Parallelism.AttentionData, a.Scheduler.MaxSequences)
	}
	p, err = PlanRow(rows[1], Options{})
	if err != nil {
		t.Fatal(err)
	}
	if d := p.Config.Engine.Workers.Decode; d.Parallelism.Replicas != 1 || d.Parallelism.AttentionData != 32 || d.Scheduler.MaxSequences != 256 {
		t.Errorf("decode: replicas %d, attention_data %d, max_sequences %d; want 1, 32, 256", d.Parallelism.Replicas, d.Parallelism.AttentionData, d.Scheduler.MaxSequences)
	}
}

// A disaggregated row without worker counts or batch sizes (871 rows of the MoE file) is one
// prefill worker and one decode worker of the given shapes; the prefill ranks run one request
// each and the decode ranks share the concurrency. Hand-computed for DeepSeek-R1 (61 layers, MLA
// latent 512 + 64 values per token and layer) in FP4 weights and FP8 KV on GB200 (TensorRT-LLM,
// 32-token blocks), ISL 1024 + OSL 1024 = 2,048 tokens = 64 blocks a request:
//   - decode TP1 DP16 EP16 at concurrency 4,096: 4,096 / 16 = 256 requests per rank need 256 × 64
//     = 16,384 blocks; a rank's pool is 128,158 blocks (0.9 × (186 − 32.9 GiB of weights − 2.5
//     of activations − 1.5 reserve) / (32 × 35,136 B), 35,136 = 61 × 576 FP8 bytes a token);
//   - concurrency 4,100 does not divide: ceil(4,100 / 16) = 257 per rank;
//   - decode TP16 DP1 (the latent is replicated over the tensor group) at 4,096 needs 4,096 × 64
//     = 262,144 blocks on every GPU, which holds 137,381: refused, naming decode_num_workers;
//   - only one of the two worker counts given: refused, naming the empty one;
//   - without Options.OneWorkerPerRole every row but d is skipped for its worker counts.
func TestPlanRowDisaggWithoutWorkers(t *testing.T) {
	csv := header +
		"a,trtllm,1.0,deepseek-ai/DeepSeek-R1,gb200,fp4,nvfp4,disagg,1024,1024,4096,nvfp4,,,,,,,,,4,1,1,1,4,,,1,1,16,1,16,3000,20\n" +
		"b,trtllm,1.0,deepseek-ai/DeepSeek-R1,gb200,fp4,nvfp4,disagg,1024,1024,4100,nvfp4,,,,,,,,,4,1,1,1,4,,,1,1,16,1,16,3000,20\n" +
		"c,trtllm,1.0,deepseek-ai/DeepSeek-R1,gb200,fp4,nvfp4,disagg,1024,1024,4096,nvfp4,,,,,,,,,4,1,1,1,4,,,16,1,1,1,16,3000,20\n" +
		"d,trtllm,1.0,deepseek-ai/DeepSeek-R1,gb200,fp4,nvfp4,disagg,1024,1024,4096,nvfp4,,,,,,,,2,4,1,1,1,4,,,1,1,16,1,16,3000,20\n" +
		"e,trtllm,1.0,deepseek-ai/DeepSeek-R1,gb200,fp4,nvfp4,disagg,1024,1024,,nvfp4,,,,,,,,,4,1,1,1,4,,,1,1,16,1,16,3000,20\n"
	rows, err := ReadCSV(strings.NewReader(csv), "disagg.csv")
	if err != nil {
		t.Fatal(err)
	}
	one := Options{OneWorkerPerRole: true}
	p, err := PlanRow(rows[0], one)
	if err != nil {
		t.Fatal(err)
	}
	w := p.Config.Engine.Workers
	if w.Prefill.Parallelism != (config.Parallelism{Replicas: 1, Tensor: 4, Pipeline: 1, AttentionData: 1, MoeTensor: 1, MoeExpert: 4}) ||
		w.Decode.Parallelism != (config.Parallelism{Replicas: 1, Tensor: 1, Pipeline: 1, AttentionData: 16, MoeTensor: 1, MoeExpert: 16}) {
		t.Errorf("parallelism: prefill %+v, decode %+v", w.Prefill.Parallelism, w.Decode.Parallelism)
	}
	if w.Prefill.Scheduler.MaxSequences != 1 || w.Decode.Scheduler.MaxSequences != 256 || w.Decode.KVCache.BlockSize != 32 {
		t.Errorf("max_sequences: prefill %d, decode %d (want 1, 256); block size %d (want 32)",
			w.Prefill.Scheduler.MaxSequences, w.Decode.Scheduler.MaxSequences, w.Decode.KVCache.BlockSize)
	}
	if p.Concurrency != 4096 || p.Config.Traffic.Stop.Requests != 20*4096 ||
		p.Shape != "disagg P 1 × (TP4 EP4) / D 1 × (TP1 DP16 EP16)" || *p.Config.Engine.KVTransfer.BandwidthGBps != 900 {
		t.Errorf("plan a: concurrency %d, requests %d, shape %q, transfer %v GB/s", p.Concurrency,
			p.Config.Traffic.Stop.Requests, p.Shape, *p.Config.Engine.KVTransfer.BandwidthGBps)
	}
	want := []string{DisaggWorkersNote, PrefillBatchNote,
		"decode_batch_size empty: concurrency 4096 / (16 decode attention-DP ranks × 1 decode workers) = 256 per rank",
		AssumedHarness().describe(4096)}
	if !slices.Equal(p.Notes, want) {
		t.Errorf("notes %q, want %q", p.Notes, want)
	}
	if p, err = PlanRow(rows[1], one); err != nil || p.Config.Engine.Workers.Decode.Scheduler.MaxSequences != 257 || p.Concurrency != 4100 {
		t.Errorf("plan b: %v, decode max_sequences %d (want 257)", err, p.Config.Engine.Workers.Decode.Scheduler.MaxSequences)
	}
	for _, c := range []struct {
		row  Row
		frag string
	}{
		{rows[2], "decode_num_workers empty, and one decode worker of this shape cannot hold the row's concurrency in KV"},
		{rows[3], "decode_num_workers is empty while prefill_num_workers is 2: give both or neither"},
		{rows[4], "concurrency and decode_batch_size are both empty"},
	} {
		if _, err := PlanRow(c.row, Options{}); err == nil || c.row.ID != "d" && err.Error() != NoWorkerCounts {
			t.Errorf("row %s by default: err = %v, want the row skipped for its worker counts", c.row.ID, err)
		}
		if _, err := PlanRow(c.row, one); err == nil || !strings.Contains(err.Error(), c.frag) {
			t.Errorf("row %s: err = %v, want %q", c.row.ID, err, c.frag)
		}
	}
}

// A skipped row's JSON has null predictions and errors (and a null measured value its cell did
// not give), never zeros that read as a perfect prediction; a simulated row keeps its numbers.
func TestRowResultJSONNulls(t *testing.T) {
	skipped, err := json.Marshal(RowResult{Line: 4, Skipped: true, Reason: "boom", MeasuredTTFTMs: 120})
	if err != nil {
		t.Fatal(err)
	}
	for _, frag := range []string{`"predicted_ttft_ms":null`, `"ttft_ape_pct":null`, `"tpot_ape_pct":null`,
		`"measured_ttft_ms":120`, `"measured_tpot_ms":null`, `"skipped":true`} {
		if !strings.Contains(string(skipped), frag) {
			t.Errorf("skipped row JSON lacks %s: %s", frag, skipped)
		}
	}
	done, _ := json.Marshal(RowResult{Line: 5, MeasuredTTFTMs: 100, PredictedTTFTMs: 110, TTFTAPEPct: 10})
	for _, frag := range []string{`"predicted_ttft_ms":110`, `"ttft_ape_pct":10`, `"tpot_ape_pct":0`} {
		if !strings.Contains(string(done), frag) {
			t.Errorf("simulated row JSON lacks %s: %s", frag, done)
		}
	}
	var back RowResult
	if err := json.Unmarshal(skipped, &back); err != nil || back.Line != 4 || back.PredictedTTFTMs != 0 || !back.Skipped {
		t.Errorf("round trip: %+v, %v", back, err)
	}
}

// Skip reasons name the CSV's columns, not the simulated config's fields.
func TestCSVColumnsInReasons(t *testing.T) {
	for in, want := range map[string]string{
		"traffic.source.input_tokens: must be <= 16777216":              "isl: must be <= 16777216",
		"traffic.source.output_tokens: must be > 0":                     "osl: must be > 0",
		"engine.context_length: prompt of 2000000000 tokens exceeds it": "isl + osl (context length): prompt of 2000000000 tokens exceeds it",
		"engine.workers.decode.parallelism.tensor: tensor 3 ...":        "decode_tp_size: tensor 3 ...",
	} {
		if got := csvColumns(in); got != want {
			t.Errorf("csvColumns(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzReadCSV: any text parses or is refused without a panic; a file that parses named every
// required column and only known ones, and each row either has a problem or positive ISL, OSL
// and measured latencies.
func FuzzReadCSV(f *testing.F) {
	f.Add(header + "a,vllm,0.12,meta-llama/Llama-3.1-8B-Instruct,h100_sxm,,,agg,512,32,2,,2,1,1,,,,,,,,,,,,,,,,,,400,6\n")
	f.Add("backend,model_path,system,mode,isl,osl,tp_sz,silicon_ttft_ms,silicon_tpot_ms\nvllm,x,h100_sxm,agg,2,3,2,4,5\n")
	f.Add("backend,model_path,system,mode,isl,osl,concurrency,silicon_ttft_ms,silicon_tpot_ms\nvllm,x,h100_sxm,agg,2,3,-4,4,5\n")
	f.Fuzz(func(t *testing.T, text string) {
		rows, err := ReadCSV(strings.NewReader(text), "f.csv")
		if err != nil {
			return
		}
		for _, r := range rows {
			if r.Problem == "" && (r.ISL <= 0 || r.OSL <= 0 || !(r.TTFTMs > 0) || !(r.TPOTMs > 0) || r.Concurrency < 0) {
				t.Fatalf("row without a problem has ISL %d, OSL %d, TTFT %v, TPOT %v, concurrency %d", r.ISL, r.OSL, r.TTFTMs, r.TPOTMs, r.Concurrency)
			}
		}
	})
}

// rowPrecisions reads gemm_quant_mode first; a precision beside it must name the same format,
// so that a typo in either column is a skip reason, not read past.
func TestRowPrecisionsBothColumns(t *testing.T) {
	for _, c := range []struct{ precision, gemm, want, err string }{
		{"fp8", "fp8_block", "fp8", ""},
		{"fp4", "nvfp4", "fp4", ""},
		{"", "", "bf16", ""},
		{"bf16", "", "bf16", ""},
		{"fp88", "fp8", "", `precision: unknown precision "fp88"`},
		{"bf16", "fp8", "", `precision "bf16" and gemm_quant_mode "fp8" name different weight formats (bf16 and fp8); make them agree`},
		{"fp8", "fp9", "", `gemm_quant_mode: unknown precision "fp9"`},
	} {
		p, err := rowPrecisions(Row{Precision: c.precision, GEMMQuant: c.gemm})
		switch {
		case c.err == "" && (err != nil || string(p.Weights) != c.want):
			t.Errorf("precision %q, gemm_quant_mode %q: %v, %v; want %s", c.precision, c.gemm, p.Weights, err, c.want)
		case c.err != "" && (err == nil || !strings.HasPrefix(err.Error(), c.err)):
			t.Errorf("precision %q, gemm_quant_mode %q: err %v, want %q", c.precision, c.gemm, err, c.err)
		}
	}
}

// MeasuredWarnings names the rows that cannot be read, with their problem, then InferenceX rows
// without a date (their public settings cannot be looked up) and measured means too small to be
// milliseconds, up to five lines; a row with a Problem says nothing else, and the other
// harnesses' undated rows say nothing.
func TestMeasuredWarnings(t *testing.T) {
	ok := Row{Line: 2, Source: HarnessInferenceX, MeasuredAt: "2026-01-01", TTFTMs: 120, TPOTMs: 9}
	undated := ok
	undated.Line, undated.MeasuredAt = 3, ""
	seconds := ok
	seconds.Line, seconds.TPOTMs = 4, 0.0089
	quick := ok
	quick.Line, quick.TTFTMs = 5, 0.12
	other := undated
	other.Line, other.Source = 6, "aic-gap-analysis"
	bad := seconds
	bad.Line, bad.Problem = 7, "malformed"
	got := MeasuredWarnings([]Row{ok, undated, seconds, quick, other, bad}, "m.csv")
	if len(got) != 3 || got[0] != "m.csv: 1 row(s) are not scored (line 7: malformed); the other rows are scored" ||
		!strings.HasPrefix(got[1], "m.csv: 1 InferenceX row(s) give no measured_at") ||
		!strings.HasPrefix(got[2], "m.csv: line 4 silicon_tpot_ms 0.0089, line 5 silicon_ttft_ms 0.12: a mean TPOT under 0.1 ms") {
		t.Errorf("warnings %q", got)
	}
	var broken []Row
	for i := range 6 {
		r := bad
		r.Line, r.Problem = 20+i, fmt.Sprintf("isl: must be an int > 0, got \"x%d\"", i)
		broken = append(broken, r)
	}
	if got := MeasuredWarnings(broken, "m.csv"); len(got) != 1 || !strings.HasPrefix(got[0], "m.csv: 6 row(s) are not scored (line 20: isl: must be an int > 0, got \"x0\"; line 21:") ||
		!strings.Contains(got[0], `line 24: isl: must be an int > 0, got "x4"; and 1 more); the other rows are scored`) {
		t.Errorf("six malformed rows: %q", got)
	}
	var many []Row
	for i := range 7 {
		r := seconds
		r.Line = 10 + i
		many = append(many, r)
	}
	if got := MeasuredWarnings(many, "m.csv"); len(got) != 1 || !strings.Contains(got[0], "line 14 silicon_tpot_ms 0.0089 and 2 more:") {
		t.Errorf("seven rows: %q", got)
	}
	if got := MeasuredWarnings([]Row{ok}, "m.csv"); got != nil {
		t.Errorf("a dated row of plausible means: %q", got)
	}
}
