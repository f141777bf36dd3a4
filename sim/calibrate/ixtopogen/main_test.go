package main

import (
	"strings"
	"testing"
)

// mtpDrafts: DECODE_MTP_SIZE first, then the recipe name's _mtpN, then the hand-read recipe
// table; 0 when none gives it.
func TestMTPDrafts(t *testing.T) {
	for _, c := range []struct {
		size   int
		recipe string
		want   int
	}{
		{2, "", 2},
		{1, "recipes/trtllm/b200-fp8/8k1k/mtp/ctx2_gen1_dep8_batch32_eplb0_mtp3_288.yaml", 1},
		{0, "recipes/trtllm/b200-fp8/8k1k/mtp/ctx2_gen1_dep8_batch32_eplb0_mtp3_288.yaml", 3},
		{0, "recipes/trtllm/h200/1k1k/mtp/c8_ctx1_gen11_tep8_batch128_eplb0_mtp1.yaml", 1},
		{0, "recipes/trtllm/gb300-fp4/1k1k/mtp/ctx1_gen1_dep32_batch8_eplb0_mtp.yaml", 3},
		{0, "recipes/b200-fp8/1k1k/mtp/max-tpt-dep8-1p2d.yaml", 1},
		{0, "recipes/b200-fp8/1k1k.yaml:zip_override_mtp_lowlat[0]", 2},
		{0, "recipes/unknown/mtp.yaml", 0},
		{0, "", 0},
	} {
		if got := mtpDrafts(c.size, c.recipe); got != c.want {
			t.Errorf("mtpDrafts(%d, %q) = %d, want %d", c.size, c.recipe, got, c.want)
		}
	}
}

// parseAgg reads the single-node entries' items only: TP, EP (1 when absent), dp-attn,
// spec-decoding and the concurrencies of conc-start/conc-end or conc-list; disaggregated and
// multi-node entries and items without a TP are left out.
func TestParseAgg(t *testing.T) {
	yaml := `
gptoss-fp4-h100-vllm:
  image: vllm/vllm-openai:v0.11.2
  model-prefix: gptoss
  runner: h100
  precision: fp4
  framework: vllm
  multinode: false
  seq-len-configs:
  - isl: 1024
    osl: 8192
    search-space:
    - { tp: 2, conc-start: 4, conc-end: 64 }
    - { tp: 8, ep: 8, dp-attn: true, spec-decoding: mtp, conc-list: [256, 1024] }
    - { ep: 2, conc-start: 4, conc-end: 4 }
dsr1-fp4-gb200-dynamo-trt:
  model-prefix: dsr1
  multinode: true
  disagg: true
  seq-len-configs:
  - isl: 1024
    osl: 1024
    search-space:
    - { conc-list: [4], prefill: { num-worker: 1, tp: 4 }, decode: { num-worker: 1, tp: 8 } }
kimik2.5-fp4-gb200-vllm:
  model-prefix: kimik2.5
  multinode: true
  seq-len-configs:
  - isl: 1024
    osl: 1024
    search-space:
    - { tp: 8, conc-start: 4, conc-end: 8 }
`
	items, err := parseAgg([]byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"gptoss-fp4-h100-vllm\tgptoss\th100\tfp4\tvllm\tvllm/vllm-openai:v0.11.2\t1024\t8192\tnone\t4,8,16,32,64\t2\t1\tfalse",
		"gptoss-fp4-h100-vllm\tgptoss\th100\tfp4\tvllm\tvllm/vllm-openai:v0.11.2\t1024\t8192\tmtp\t256,1024\t8\t8\ttrue",
	}
	if len(items) != len(want) {
		t.Fatalf("%d items, want %d: %v", len(items), len(want), items)
	}
	for i, it := range items {
		if got := strings.Join(it.fields(), "\t"); got != want[i] {
			t.Errorf("item %d:\n got %q\nwant %q", i, got, want[i])
		}
	}
}

// parse reads each role's own engine limits from its additional-settings (PREFILL_ for the
// prefill role, DECODE_ for the decode role), and the MTP draft length from the decode role;
// an item without them has zeros in the four last columns.
func TestParseDisaggLimits(t *testing.T) {
	yaml := `
dsr1-fp4-gb200-dynamo-trt:
  image: img
  model-prefix: dsr1
  runner: gb200
  precision: fp4
  framework: dynamo-trt
  disagg: true
  seq-len-configs:
  - isl: 1024
    osl: 1024
    search-space:
    - spec-decoding: mtp
      conc-list: [512, 1075]
      prefill:
        num-worker: 1
        tp: 4
        ep: 4
        dp-attn: true
        additional-settings: ["PREFILL_MAX_NUM_TOKENS=4608", "PREFILL_MAX_BATCH_SIZE=4", "DECODE_MAX_BATCH_SIZE=7"]
      decode:
        num-worker: 1
        tp: 16
        ep: 16
        dp-attn: true
        additional-settings: ["DECODE_MAX_NUM_TOKENS=256", "DECODE_MAX_BATCH_SIZE=64", "DECODE_MTP_SIZE=3"]
    - { conc-list: [4], prefill: { num-worker: 1, tp: 4 }, decode: { num-worker: 2, tp: 8 } }
`
	items, err := parse([]byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"dsr1-fp4-gb200-dynamo-trt\tdsr1\tgb200\tfp4\tdynamo-trt\timg\t1024\t1024\tmtp\t512,1075\t1\t4\t4\ttrue\t1\t16\t16\ttrue\t\t3\t4\t4608\t64\t256\tfalse\t.github/configs/nvidia-master.yaml\t0\t0",
		"dsr1-fp4-gb200-dynamo-trt\tdsr1\tgb200\tfp4\tdynamo-trt\timg\t1024\t1024\tnone\t4\t1\t4\t0\tfalse\t2\t8\t0\tfalse\t\t0\t0\t0\t0\t0\tfalse\t.github/configs/nvidia-master.yaml\t0\t0",
	}
	checkLines(t, items, want)
}

// checkLines fails t unless items are the table lines want, in order.
func checkLines(t *testing.T, items []item, want []string) {
	t.Helper()
	if len(items) != len(want) {
		t.Fatalf("%d items, want %d", len(items), len(want))
	}
	for i, it := range items {
		if got := strings.Join(it.fields(), "\t"); got != want[i] {
			t.Errorf("item %d:\n got %q\nwant %q", i, got, want[i])
		}
	}
}

// parseLauncher reads the GB200 runner script's calls of submit_disagg.sh under their ISL/OSL
// branch (MTP size before EPLB slots, as the script's run_single reads them), both roles
// attention data-parallel in dep mode, the concurrencies per decode worker for the branch that
// runs them so, and the prefill limits of the configuration's item with the same call; a call no
// item took over keeps none, and a script without the DeepSeek-R1 FP4 branch holds no TensorRT-LLM
// item. Its SGLang call gives nodes and workers per role, the placeholder degrees and the
// concurrencies of the list variable it names.
func TestParseLauncher(t *testing.T) {
	script := `export SERVED_MODEL_NAME="deepseek-r1-fp4"
    git checkout release/0.5.1-rc0.20251105
        if [ "$isl" = "1024" ] && [ "$osl" = "1024" ]; then
            if [ "$mtp_mode" = "on" ]; then
                ./submit_disagg.sh "mtp=on" "tep" 1 4 8 32 128 "0.9" 3 0 "1 2 4 8 16 36"
            else
                ./submit_disagg.sh "mtp=off" "dep" 2 1 16 256 256 "0.75" 0 0 "2048 4300"
            fi
        elif [ "$isl" = "8192" ] && [ "$osl" = "1024" ]; then
                ./submit_disagg.sh "mtp=off" "dep" 5 1 8 256 256 "0.8" 0 0 "2150"
        fi
    export MODEL_PATH="/mnt/lustre01/models/deepseek-r1-0528"
    if [ "$ISL" = "8192" ] && [ "$OSL" = "1024" ]; then
        concurrency_list="128x256"
        bash ./submit_disagg.sh 12 6 6 1 8 $ISL $OSL $concurrency_list inf
    fi
`
	listed := []item{{entry: "dsr1-fp4-gb200-dynamo-trt", isl: 1024, osl: 1024, spec: "mtp", mtpDrafts: 3, concs: []int{1, 2, 4, 8, 16, 36},
		prefill: worker{workers: 1, tp: 4, ep: 4, maxBatch: 4, maxTokens: 4608}, decode: worker{workers: 4, tp: 8, ep: 8, maxBatch: 32, maxTokens: 128}}}
	got := parseLauncher(script, listed)
	const head = "dsr1-fp4-gb200-dynamo-trt\tdsr1\tgb200\tfp4\tdynamo-trt\t\t"
	want := []string{
		head + "1024\t1024\tmtp\t1,2,4,8,16,36\t1\t4\t4\tfalse\t4\t8\t8\tfalse\t\t3\t4\t4608\t32\t128\ttrue\trunners/launch_gb200-nv.sh\t0\t0",
		head + "1024\t1024\tnone\t2048,4300\t2\t4\t4\ttrue\t1\t16\t16\ttrue\t\t0\t0\t0\t256\t256\ttrue\trunners/launch_gb200-nv.sh\t0\t0",
		head + "8192\t1024\tnone\t2150\t5\t4\t4\ttrue\t1\t8\t8\ttrue\t\t0\t0\t0\t256\t256\ttrue\trunners/launch_gb200-nv.sh\t0\t0",
		"dsr1-fp8-gb200-dynamo-sglang\tdsr1\tgb200\tfp8\tdynamo-sglang\t\t8192\t1024\tnone\t128,256\t6\t1\t1\ttrue\t1\t1\t1\ttrue\t\t0\t0\t0\t0\t0\tfalse\trunners/launch_gb200-nv.sh\t12\t6",
	}
	checkLines(t, got, want)
	if it := parseLauncher(strings.Replace(script, "20251105", "20260105", 1), nil); len(it) != 4 || it[0].perDecodeWorker {
		t.Errorf("another Dynamo branch: %d items, per decode worker %v; want 4 items, not per decode worker", len(it), len(it) > 0 && it[0].perDecodeWorker)
	}
	if it := parseLauncher(strings.Replace(script, "deepseek-r1-fp4", "other", 1), listed); len(it) != 1 || it[0].framework != "dynamo-sglang" {
		t.Errorf("a script without the DeepSeek-R1 FP4 branch: %d items, want the SGLang one", len(it))
	}
}
