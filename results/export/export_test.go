package export

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/servesweep/servesweep/sim"
	"github.com/servesweep/servesweep/sim/config"
	"gopkg.in/yaml.v3"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// goldenCases are the reviewed exports: one per target, and Dynamo for each mode and for
// TensorRT-LLM's ConfigMap.
var goldenCases = []struct{ config, target string }{
	{"vllm-agg", TargetVLLM},
	{"vllm-agg", TargetDynamo},
	{"sglang-agg", TargetSGLang},
	{"trtllm-agg", TargetTRTLLM},
	{"dynamo-disagg", TargetDynamo},
	{"dynamo-trtllm", TargetDynamo},
}

func load(t *testing.T, name string, sets ...string) *config.Config {
	t.Helper()
	cfg, err := config.LoadFile(filepath.Join("testdata", name+".yaml"), sets)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// render concatenates an export's files, each under a header line naming it.
func render(files []File) []byte {
	var b bytes.Buffer
	for _, f := range files {
		mode := ""
		if f.Executable {
			mode = " (executable)"
		}
		b.WriteString("==> " + f.Name + mode + " <==\n")
		b.Write(f.Data)
	}
	return b.Bytes()
}

func TestExportGolden(t *testing.T) {
	for _, c := range goldenCases {
		t.Run(c.config+"/"+c.target, func(t *testing.T) {
			files, err := Export(load(t, c.config), c.target, Options{Name: c.config})
			if err != nil {
				t.Fatal(err)
			}
			got := render(files)
			path := filepath.Join("testdata", "golden", c.config+"."+c.target+".txt")
			if *update {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./export -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("export differs from %s (review, then go test ./export -update):\n%s", path, got)
			}
		})
	}
}

// Invariant beside the goldens: every export ends with aiperf.sh, scripts are executable, and
// the same config exports the same bytes twice.
func TestExportInvariants(t *testing.T) {
	for _, c := range goldenCases {
		cfg := load(t, c.config)
		a, err := Export(cfg, c.target, Options{})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := Export(cfg, c.target, Options{})
		if !bytes.Equal(render(a), render(b)) {
			t.Errorf("%s/%s: two exports differ", c.config, c.target)
		}
		for _, f := range a {
			if !strings.HasSuffix(f.Name, ".yaml") {
				continue
			}
			dec := yaml.NewDecoder(bytes.NewReader(f.Data))
			for {
				var doc map[string]any
				if err := dec.Decode(&doc); err != nil {
					if err != io.EOF {
						t.Errorf("%s/%s: %s is not valid YAML: %v", c.config, c.target, f.Name, err)
					}
					break
				}
			}
		}
		last := a[len(a)-1]
		if last.Name != AIPerfFile || !last.Executable || !strings.Contains(string(last.Data), "aiperf profile") {
			t.Errorf("%s/%s: last file is %s, want an executable %s", c.config, c.target, last.Name, AIPerfFile)
		}
	}
}

func TestExportInexpressible(t *testing.T) {
	cases := []struct {
		name, config, target string
		sets                 []string
		path, want           string
	}{
		{"backend mismatch", "vllm-agg", TargetSGLang, nil, "engine.backend", "for target vllm or dynamo"},
		{"vllm block size", "vllm-agg", TargetVLLM, []string{"engine.workers.aggregated.kv_cache.block_size=48"},
			"engine.workers.aggregated.kv_cache.block_size", "--block-size takes one of [8 16 32 64 128]"},
		{"kv router on bare engine", "vllm-agg", TargetVLLM, []string{"router.policy=kv_router"}, "router.policy", "use target dynamo"},
		{"least loaded on dynamo", "vllm-agg", TargetDynamo, []string{"router.policy=least_loaded"}, "router.policy", "round-robin, random or kv"},
		{"old version", "vllm-agg", TargetVLLM, []string{"engine.backend_version=0.6.3"}, "engine.backend_version", "0.9 and later"},
		{"async scheduling before vllm 0.10", "vllm-agg", TargetVLLM, []string{"engine.backend_version=0.9.2", "engine.overlap_scheduling=true"},
			"engine.overlap_scheduling", "needs vLLM 0.10 or later"},
		{"whole decode graphs before vllm 0.10.2", "vllm-agg", TargetVLLM, []string{"engine.backend_version=0.10.1"},
			"engine.cuda_graphs", "full cannot be expressed for target vllm: vLLM before 0.10.2 captures decode passes only in piecewise CUDA graphs; " +
				"set engine.cuda_graphs: piecewise to price them, or a backend_version of 0.10.2 or later"},
		{"fp4 from bf16", "vllm-agg", TargetVLLM, []string{"engine.precision.weights=fp4"}, "engine.precision.weights",
			"name a fp4 checkpoint as engine.model (e.g. one whose id ends in -FP4 or -NVFP4)"},
		{"fp4 from fp8", "vllm-agg", TargetVLLM, []string{"engine.model=nvidia/Llama-3.1-8B-Instruct-FP8", "engine.precision.weights=fp4"},
			"engine.precision.weights", "is a fp8 checkpoint and vLLM cannot turn it into fp4 at load time; name a fp4 checkpoint as engine.model (e.g. one whose id ends in -FP4 or -NVFP4)"},
		{"trtllm online fp8", "dynamo-trtllm", TargetDynamo, []string{"engine.precision.weights=fp8"}, "engine.precision.weights", "cannot turn it into fp8"},
		{"trtllm attention dp with tensor", "trtllm-agg", TargetTRTLLM,
			[]string{"engine.workers.aggregated.parallelism={replicas: 1, tensor: 2, attention_data: 2}"},
			"engine.workers.aggregated.parallelism.attention_data", "use tensor 1"},
		{"sglang prefill interval", "sglang-agg", TargetSGLang, []string{"engine.workers.aggregated.scheduler.prefill_decode_interval=4"},
			"engine.workers.aggregated.scheduler.prefill_decode_interval", "use 0"},
		{"trtllm block size", "trtllm-agg", TargetTRTLLM, []string{"engine.workers.aggregated.kv_cache.block_size=48"},
			"engine.workers.aggregated.kv_cache.block_size", "power of 2"},
		{"planner", "vllm-agg", TargetDynamo, []string{"planner={policy: enabled}", "evaluation.sla={ttft_ms: 500}"},
			"planner.policy", "carry fixed worker counts"},
		{"sglang speculation", "sglang-agg", TargetSGLang, []string{"engine.speculation={kind: ngram, num_speculative_tokens: 2, acceptance_rates: [0.5, 0.5]}"},
			"engine.speculation", "exported for vLLM only"},
		{"trtllm speculation", "trtllm-agg", TargetTRTLLM, []string{"engine.speculation={kind: ngram, num_speculative_tokens: 2, acceptance_rates: [0.5, 0.5]}"},
			"engine.speculation", "exported for vLLM only"},
		{"vllm mtp", "vllm-agg", TargetVLLM, []string{"engine.speculation={kind: mtp, num_speculative_tokens: 2, acceptance_rates: [0.5, 0.5]}"},
			"engine.speculation.kind", "MTP drafting is not exported to any target"},
		{"sglang mtp", "sglang-agg", TargetSGLang, []string{"engine.speculation={kind: mtp, num_speculative_tokens: 2, acceptance_rates: [0.5, 0.5]}"},
			"engine.speculation.kind", "MTP drafting is not exported to any target"},
		{"vllm redundant experts before 0.11", "vllm-agg", TargetVLLM, []string{"engine.backend_version=0.10.2", "engine.model=deepseek-ai/DeepSeek-R1", "engine.precision.weights=fp8",
			"engine.workers.aggregated.parallelism={replicas: 1, tensor: 1, attention_data: 8, moe_expert: 8, redundant_experts: 32}"},
			"engine.workers.aggregated.parallelism.redundant_experts", "needs vLLM 0.11 or later"},
		{"attention apart from the kv cache", "vllm-agg", TargetVLLM, []string{"engine.precision.kv_cache=fp8", "engine.precision.attention=bf16"},
			"engine.precision.attention", "another format than the KV cache's (fp8, --kv-cache-dtype)"},
		{"attention apart from the kv cache on dynamo", "dynamo-trtllm", TargetDynamo, []string{"engine.precision.attention=fp8", "engine.precision.kv_cache=bf16"},
			"engine.precision.attention", "remove the field or set it to auto"},
		// 1,000,000 blocks of 32 tokens at 32 KiB a token per GPU (the config's FP8 KV over its GPUs):
		// 976.6 GiB, where an H200 has about 132 GiB beside the weights and a pass's activations.
		{"a fixed pool its GPU cannot hold", "vllm-agg", TargetVLLM, []string{"engine.workers.aggregated.kv_cache.capacity={type: fixed, blocks: 1000000}"},
			"engine.workers.aggregated.kv_cache.capacity.blocks", "the engine could not run a full pass with this pool: 1000000 blocks of 32 tokens need 976.6 GiB of KV cache per GPU (32768 bytes a token), but h200_sxm has "},
		{"a decode pool its GPU cannot hold", "dynamo-disagg", TargetDynamo, []string{"engine.workers.decode.kv_cache.capacity={type: fixed, blocks: 1000000}"},
			"engine.workers.decode.kv_cache.capacity.blocks", "this GPU could not hold the pool; at most"},
		{"vllm batched tokens below sequences", "vllm-agg", TargetVLLM, []string{"engine.workers.aggregated.scheduler={max_batched_tokens: 64, max_sequences: 256}"},
			"engine.workers.aggregated.scheduler.max_batched_tokens", "vLLM refuses --max-num-batched-tokens below --max-num-seqs (scheduler.max_sequences 256) at startup; raise it to at least 256"},
		{"roles on two GPUs on dynamo", "dynamo-disagg", TargetDynamo, []string{"engine.workers.prefill.hardware=h100_sxm"},
			"engine.hardware", "not the h200_sxm it was timed and priced on beside the other role's h100_sxm"},
		{"a role on its own GPU beside the engine's on dynamo", "dynamo-disagg", TargetDynamo, []string{"engine.workers.decode.hardware=h100"},
			"engine.workers.decode.hardware", "not the h100_sxm it was timed and priced on beside the other role's h200_sxm"},
		{"trtllm redundant experts", "trtllm-agg", TargetTRTLLM, []string{"engine.model=deepseek-ai/DeepSeek-R1", "engine.precision.weights=fp8",
			"engine.workers.aggregated.parallelism={replicas: 1, tensor: 1, attention_data: 8, moe_expert: 8, redundant_experts: 32}"},
			"engine.workers.aggregated.parallelism.redundant_experts", "MoE load balancer"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Export(load(t, c.config, c.sets...), c.target, Options{})
			var errs config.Errors
			if !errors.As(err, &errs) {
				t.Fatalf("err = %v, want config.Errors", err)
			}
			for _, e := range errs {
				if e.Path == c.path && strings.Contains(e.Msg, c.want) && strings.HasSuffix(e.File, c.config+".yaml") {
					return
				}
			}
			t.Errorf("no error at %s containing %q; got:\n%v", c.path, c.want, err)
		})
	}
}

// TestExportAttentionOfTheCachesFormat: engine.precision.attention equal to the KV cache's format
// (what auto means) exports the same files as leaving it unset.
func TestExportAttentionOfTheCachesFormat(t *testing.T) {
	for _, kv := range []string{"fp8", "bf16"} {
		plain, err := Export(load(t, "vllm-agg", "engine.precision.kv_cache="+kv), TargetVLLM, Options{})
		if err != nil {
			t.Fatal(err)
		}
		same, err := Export(load(t, "vllm-agg", "engine.precision.kv_cache="+kv, "engine.precision.attention="+kv), TargetVLLM, Options{})
		if err != nil {
			t.Fatalf("attention %s over a %s cache: %v", kv, kv, err)
		}
		// aiperf.sh's scoring comment names the --sets; the rest must not change.
		unscored := func(files []File) []byte {
			var keep []string
			for _, line := range strings.Split(string(render(files)), "\n") {
				if !strings.HasPrefix(line, "#   servesweep validate --aiperf") {
					keep = append(keep, line)
				}
			}
			return []byte(strings.Join(keep, "\n"))
		}
		if !bytes.Equal(unscored(plain), unscored(same)) {
			t.Errorf("attention %s over a %s cache changed the exported files", kv, kv)
		}
		if a := string(same[len(same)-1].Data); !strings.Contains(a, " --set engine.precision.kv_cache="+kv+" --set engine.precision.attention="+kv+"\n") {
			t.Errorf("aiperf.sh's scoring comment leaves out the --sets of the exported deployment:\n%s", a)
		}
	}
}

func TestExportUnknownTarget(t *testing.T) {
	_, err := Export(load(t, "vllm-agg"), "tgi", Options{})
	if err == nil || !strings.Contains(err.Error(), "vllm, sglang, trtllm, dynamo") {
		t.Errorf("err = %v", err)
	}
}

func TestDNSLabel(t *testing.T) {
	for in, want := range map[string]string{"": "servesweep", "0001": "servesweep-0001", "My_Run.v2": "my-run-v2", "--x--": "x",
		strings.Repeat("1234567890", 4): "servesweep-12345678901234567890123456789", // 40 characters with the prefix
		strings.Repeat("ab", 30):        strings.Repeat("ab", 20),
		"llama-8b-tp2":                  "llama-8b-tp2"} {
		got := DNSLabel(in)
		if got != want {
			t.Errorf("DNSLabel(%q) = %q, want %q", in, got, want)
		}
		if len(got) > 40 || DNSLabel(got) != got {
			t.Errorf("DNSLabel(%q) = %q: longer than 40 or not a fixed point", in, got)
		}
	}
}

// The simulated scheduler's choices reach the launch command: unchunked prefill and n-gram
// speculative decoding on vLLM (and Dynamo's vLLM workers), unchunked prefill on TensorRT-LLM,
// overlap scheduling (vLLM's pinned either way, SGLang's only when off, TensorRT-LLM's only when
// set).
func TestExportPrefillAndSpeculation(t *testing.T) {
	const spec = "engine.speculation={kind: ngram, num_speculative_tokens: 3, acceptance_rates: [0.8, 0.6, 0.4]}"
	// sglang-agg's fixed pool (4,096 blocks, 4.3 GiB a GPU for DeepSeek-R1) fits beside
	// DeepSeek-R1's weights on eight H200s, not on eight H100s (1.7 GiB left): export refuses it there.
	const h200 = "engine.hardware=h200_sxm"
	for _, c := range []struct {
		config, target string
		sets           []string
		want, not      []string
	}{
		{"vllm-agg", TargetVLLM, []string{"engine.enable_chunked_prefill=false", spec},
			[]string{"--no-enable-chunked-prefill", `--speculative-config '{"method":"ngram","num_speculative_tokens":3,"prompt_lookup_max":4}'`},
			[]string{"--enable-chunked-prefill "}},
		{"vllm-agg", TargetDynamo, []string{"engine.enable_chunked_prefill=false", spec},
			[]string{"--no-enable-chunked-prefill", "--speculative-config"}, nil},
		{"vllm-agg", TargetVLLM, nil, []string{"--enable-chunked-prefill"}, []string{"--no-enable-chunked-prefill", "--speculative-config"}},
		{"trtllm-agg", TargetTRTLLM, []string{"engine.enable_chunked_prefill=false"}, []string{"enable_chunked_prefill: false"}, []string{"enable_chunked_prefill: true"}},
		// engine.overlap_scheduling: vLLM's async scheduling asked for when on and turned off from
		// 0.14 (its default since), SGLang's overlap scheduler disabled only when off,
		// TensorRT-LLM's only when set.
		{"vllm-agg", TargetVLLM, []string{"engine.overlap_scheduling=true"}, []string{"--async-scheduling"}, []string{"--no-async-scheduling"}},
		{"vllm-agg", TargetVLLM, nil, nil, []string{"async-scheduling"}}, // 0.11.0: off by default
		{"vllm-agg", TargetVLLM, []string{"engine.backend_version="}, []string{"--no-async-scheduling"}, []string{" --async-scheduling"}},
		{"vllm-agg", TargetVLLM, []string{"engine.backend_version=0.14.1"}, []string{"--no-async-scheduling"}, nil},
		{"vllm-agg", TargetDynamo, []string{"engine.overlap_scheduling=true"}, []string{"--async-scheduling"}, []string{"--no-async-scheduling"}},
		{"sglang-agg", TargetSGLang, []string{"engine.overlap_scheduling=false"}, []string{"--disable-overlap-schedule"}, nil},
		// engine.cuda_graphs: vLLM's cudagraph_mode where it is not the release's default:
		// PIECEWISE from 0.11, FULL_AND_PIECEWISE (whole decode graphs) on 0.10.2 to 0.10.x.
		{"vllm-agg", TargetVLLM, []string{"engine.cuda_graphs=piecewise"}, []string{`--compilation-config '{"cudagraph_mode":"PIECEWISE"}'`}, nil},
		{"vllm-agg", TargetVLLM, []string{"engine.cuda_graphs=piecewise", "engine.backend_version=0.10.2"}, nil, []string{"--compilation-config"}},
		{"vllm-agg", TargetVLLM, []string{"engine.cuda_graphs=piecewise", "engine.backend_version=0.9.2"}, nil, []string{"--compilation-config"}},
		{"vllm-agg", TargetVLLM, []string{"engine.cuda_graphs=full"}, nil, []string{"--compilation-config"}},
		// Whole decode graphs on 0.10.2 to 0.10.x, whose default is PIECEWISE.
		{"vllm-agg", TargetVLLM, []string{"engine.backend_version=0.10.2"}, []string{`--compilation-config '{"cudagraph_mode":"FULL_AND_PIECEWISE"}'`}, nil},
		{"vllm-agg", TargetDynamo, []string{"engine.backend_version=v0.10.5"}, []string{"- --compilation-config\n", `- "{\"cudagraph_mode\":\"FULL_AND_PIECEWISE\"}"`}, nil},
		{"vllm-agg", TargetVLLM, []string{"engine.backend_version=0.11.0"}, nil, []string{"--compilation-config"}},
		{"sglang-agg", TargetSGLang, nil, nil, []string{"--disable-overlap-schedule"}},
		// SGLang's chunked-prefill size and receive interval as simulated: a size above
		// 16,384 raises --max-prefill-tokens with it; an interval of 0 or 1 is SGLang's default.
		{"sglang-agg", TargetSGLang, []string{"engine.workers.aggregated.scheduler.chunked_prefill_size=32768",
			"engine.workers.aggregated.scheduler.recv_interval=30"},
			[]string{"--chunked-prefill-size 32768", "--max-prefill-tokens 32768", "--scheduler-recv-interval 30"}, nil},
		{"sglang-agg", TargetSGLang, []string{"engine.workers.aggregated.scheduler.recv_interval=1"},
			[]string{"--chunked-prefill-size 8192"}, []string{"--scheduler-recv-interval", "--max-prefill-tokens"}},
		{"trtllm-agg", TargetTRTLLM, nil, nil, []string{"disable_overlap_scheduler"}},
		{"trtllm-agg", TargetTRTLLM, []string{"engine.overlap_scheduling=false"}, []string{"disable_overlap_scheduler: true"}, nil},
		{"trtllm-agg", TargetTRTLLM, []string{"engine.overlap_scheduling=true"}, []string{"disable_overlap_scheduler: false"}, nil},
		// DeepSeek-R1 is an FP8 checkpoint (the catalog's format, whatever its id says): fp8 weights
		// need no quantization at load time, on vLLM and on TensorRT-LLM.
		{"vllm-agg", TargetVLLM, []string{"engine.model=deepseek-ai/DeepSeek-R1", "engine.precision.weights=fp8",
			"engine.workers.aggregated.parallelism={replicas: 1, tensor: 8, moe_expert: 8}"}, []string{"deepseek-ai/DeepSeek-R1"}, []string{"--quantization"}},
		{"trtllm-agg", TargetTRTLLM, []string{"engine.model=deepseek-ai/DeepSeek-R1", "engine.precision.weights=fp8",
			"engine.workers.aggregated.parallelism={replicas: 1, tensor: 8, moe_expert: 8}"}, []string{"deepseek-ai/DeepSeek-R1"}, nil},
		// An FP4 checkpoint named by an alias spelled with its format is served as named, FP4.
		{"sglang-agg", TargetSGLang, []string{"engine.model=nvidia/DeepSeek-R1-0528-NVFP4", "engine.precision.weights=fp4", h200,
			"engine.workers.aggregated.parallelism={replicas: 1, tensor: 8, moe_expert: 8}"}, []string{"--model-path nvidia/DeepSeek-R1-0528-NVFP4"}, []string{"--quantization"}},
		// Redundant experts: SGLang's and vLLM's expert-parallel load balancers place them.
		{"sglang-agg", TargetSGLang, []string{"engine.model=deepseek-ai/DeepSeek-R1", "engine.precision.weights=fp8", h200,
			"engine.workers.aggregated.parallelism={replicas: 1, tensor: 1, attention_data: 8, moe_expert: 8, redundant_experts: 32}"},
			[]string{"--ep-size 8", "--enable-eplb", "--ep-num-redundant-experts 32"}, nil},
		{"vllm-agg", TargetVLLM, []string{"engine.model=deepseek-ai/DeepSeek-R1", "engine.precision.weights=fp8",
			"engine.workers.aggregated.parallelism={replicas: 1, tensor: 1, attention_data: 8, moe_expert: 8, redundant_experts: 32}"},
			[]string{"--enable-expert-parallel", "--enable-eplb", `--eplb-config '{"num_redundant_experts": 32}'`}, nil},
		{"sglang-agg", TargetSGLang, []string{"engine.model=deepseek-ai/DeepSeek-R1", "engine.precision.weights=fp8", h200,
			"engine.workers.aggregated.parallelism={replicas: 1, tensor: 8, moe_expert: 8}"}, []string{"--ep-size 8"}, []string{"eplb", "redundant"}},
	} {
		files, err := Export(load(t, c.config, c.sets...), c.target, Options{})
		if err != nil {
			t.Fatalf("%s %s %v: %v", c.config, c.target, c.sets, err)
		}
		var all strings.Builder
		for _, f := range files {
			all.Write(f.Data)
		}
		for _, w := range c.want {
			if !strings.Contains(all.String(), w) {
				t.Errorf("%s --target %s %v: no %q", c.config, c.target, c.sets, w)
			}
		}
		for _, w := range c.not {
			if strings.Contains(all.String(), w) {
				t.Errorf("%s --target %s %v: unexpected %q", c.config, c.target, c.sets, w)
			}
		}
	}
}

// A default KV capacity with reserve_gib has no engine flag: every target gets the fixed pool it
// derives (sim.CapacityBlocks), so the deployment runs the pool servesweep simulated, and no
// memory fraction that would size another one.
func TestExportPinsAReservedPool(t *testing.T) {
	const capacity = "engine.workers.aggregated.kv_cache.capacity={type: default, memory_fraction: 0.9, reserve_gib: 20}"
	for _, c := range []struct {
		config, target string
		want           func(blocks, blockSize int) []string
		not            string
	}{
		{"vllm-agg", TargetVLLM, func(b, _ int) []string { return []string{fmt.Sprintf("--num-gpu-blocks-override %d", b)} }, "--gpu-memory-utilization"},
		// The manifest lists each argument on its own line.
		{"vllm-agg", TargetDynamo, func(b, _ int) []string {
			return []string{"- --num-gpu-blocks-override\n", fmt.Sprintf("- \"%d\"\n", b)}
		}, "--gpu-memory-utilization"},
		{"sglang-agg", TargetSGLang, func(b, bs int) []string { return []string{fmt.Sprintf("--max-total-tokens %d", b*bs)} }, "--mem-fraction-static"},
		{"trtllm-agg", TargetTRTLLM, func(b, bs int) []string { return []string{fmt.Sprintf("max_tokens: %d", b*bs)} }, "free_gpu_memory_fraction"},
	} {
		cfg := load(t, c.config, capacity)
		blocks, err := sim.CapacityBlocks(cfg, config.RoleAggregated)
		if err != nil {
			t.Fatal(err)
		}
		cfg20 := load(t, c.config, capacity, "engine.workers.aggregated.kv_cache.capacity.reserve_gib=1.5")
		if b15, err := sim.CapacityBlocks(cfg20, config.RoleAggregated); err != nil || b15 <= blocks {
			t.Fatalf("%s: %d blocks with a 1.5 GiB reserve, want more than the %d of 20 GiB (%v)", c.config, b15, blocks, err)
		}
		files, err := Export(cfg, c.target, Options{})
		if err != nil {
			t.Fatalf("%s --target %s: %v", c.config, c.target, err)
		}
		all := string(render(files))
		for _, w := range c.want(blocks, cfg.Engine.Workers.Aggregated.KVCache.BlockSize) {
			if !strings.Contains(all, w) || strings.Contains(all, c.not) {
				t.Errorf("%s --target %s: want %q and no %q in\n%s", c.config, c.target, w, c.not, all)
			}
		}
	}
}

// A default KV capacity with max_tokens is exported as the fixed pool it derives: the cap
// rounded down to whole blocks when it is below the memory-derived pool (4,100 tokens in blocks
// of 16: 256 blocks, 4,096 tokens), and the memory-derived pool when the cap is above it.
func TestExportPinsACappedPool(t *testing.T) {
	const capacity = "engine.workers.aggregated.kv_cache.capacity={type: default, memory_fraction: 0.9, max_tokens: 4100}"
	for _, c := range []struct {
		config, target, want, not string
	}{
		{"vllm-agg", TargetVLLM, "--num-gpu-blocks-override 256", "--gpu-memory-utilization"},
		{"sglang-agg", TargetSGLang, "--max-total-tokens 4096", "--mem-fraction-static"},
		{"trtllm-agg", TargetTRTLLM, "max_tokens: 4096", "free_gpu_memory_fraction"},
	} {
		cfg := load(t, c.config, capacity, "engine.workers.aggregated.kv_cache.block_size=16")
		if b, err := sim.CapacityBlocks(cfg, config.RoleAggregated); err != nil || b != 256 {
			t.Fatalf("%s: %d blocks (%v), want 4100 / 16 = 256", c.config, b, err)
		}
		files, err := Export(cfg, c.target, Options{})
		if err != nil {
			t.Fatalf("%s --target %s: %v", c.config, c.target, err)
		}
		if all := string(render(files)); !strings.Contains(all, c.want) || strings.Contains(all, c.not) {
			t.Errorf("%s --target %s: want %q and no %q in\n%s", c.config, c.target, c.want, c.not, all)
		}
		uncapped, err := sim.CapacityBlocks(load(t, c.config, "engine.workers.aggregated.kv_cache.block_size=16",
			"engine.workers.aggregated.kv_cache.capacity={type: default, memory_fraction: 0.9}"), config.RoleAggregated)
		if err != nil {
			t.Fatal(err)
		}
		high := load(t, c.config, "engine.workers.aggregated.kv_cache.block_size=16",
			fmt.Sprintf("engine.workers.aggregated.kv_cache.capacity={type: default, memory_fraction: 0.9, max_tokens: %d}", 16*uncapped+100))
		if b, err := sim.CapacityBlocks(high, config.RoleAggregated); err != nil || b != uncapped {
			t.Errorf("%s: a cap above the pool gives %d blocks (%v), want the derived %d", c.config, b, err, uncapped)
		}
	}
}

// aiperf.sh of an engine target with several workers says its default --url is the first worker's
// (the launch script starts each on its own port); an --url given (a load balancer) needs no note,
// nor does Dynamo, whose frontend routes.
func TestAIPerfNotesTheFirstWorkersURL(t *testing.T) {
	note := "is the first worker's port: the simulated load is spread over the 2 workers"
	for _, c := range []struct {
		target, url string
		want        bool
	}{{TargetVLLM, "", true}, {TargetVLLM, "lb.example:80", false}, {TargetDynamo, "", false}} {
		files, err := Export(load(t, "vllm-agg"), c.target, Options{URL: c.url})
		if err != nil {
			t.Fatal(err)
		}
		bench := files[len(files)-1]
		if got := strings.Contains(string(bench.Data), note); bench.Name != AIPerfFile || got != c.want {
			t.Errorf("%s --url %q: note %v, want %v:\n%s", c.target, c.url, got, c.want, bench.Data)
		}
	}
}

// aiperf.sh of a prediction that leaves requests out of its statistics (a capacity probe's
// warm-up and drain) says that AIPerf counts them and validate simulates the whole run; one that
// counts every request says nothing.
func TestAIPerfNotesTheSteadyWindow(t *testing.T) {
	for _, c := range []struct {
		sets []string
		want string
	}{
		{nil, ""},
		{[]string{"traffic.load.warmup_seconds=2.5"}, "The prediction leaves the requests that arrive in its first 2.5 s (traffic.load.warmup_seconds) out of its statistics;"},
		{[]string{"traffic.load.warmup_seconds=3", "traffic.load.cooldown=true"}, "The prediction leaves the requests that arrive in its first 3 s " +
			"(traffic.load.warmup_seconds) and those of the drain after the last session starts (traffic.load.cooldown) out of its statistics;"},
		{[]string{"traffic.load.cooldown=true"}, "The prediction leaves the requests of the drain after the last session starts " +
			"(traffic.load.cooldown) out of its statistics;"},
	} {
		files, err := Export(load(t, "vllm-agg", c.sets...), TargetVLLM, Options{})
		if err != nil {
			t.Fatal(err)
		}
		bench := string(files[len(files)-1].Data)
		has := strings.Contains(bench, "AIPerf's summary counts every request")
		if has != (c.want != "") || !strings.Contains(bench, c.want) {
			t.Errorf("%v: note %v, want %q:\n%s", c.sets, has, c.want, bench)
		}
		if strings.Contains(bench, "--warmup") {
			t.Errorf("%v: AIPerf's warm-up phase drains before profiling, not the simulated window:\n%s", c.sets, bench)
		}
	}
}

// aiperf.sh sends the request count the simulation ran: round(per load unit × unit), as
// config.ResolveCount counts it (3.7 req/s × 16 = 59.2 → 59; concurrency 48 × 1.4 = 67.2 → 67).
func TestAIPerfRequestCountIsTheSimulated(t *testing.T) {
	for _, c := range []struct {
		sets []string
		want string
	}{
		{[]string{"traffic.load={type: poisson, requests_per_second: 3.7}", "traffic.stop={requests_per_load_unit: 16}"}, "--request-count 59"},
		{[]string{"traffic.load={type: concurrency, concurrency: 48}", "traffic.stop={requests_per_load_unit: 1.4}"}, "--request-count 67"},
	} {
		files, err := Export(load(t, "vllm-agg", c.sets...), TargetVLLM, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if bench := string(files[len(files)-1].Data); !strings.Contains(bench, c.want+" ") && !strings.Contains(bench, c.want+"\n") {
			t.Errorf("%v: aiperf.sh lacks %q:\n%s", c.sets, c.want, bench)
		}
	}
}

// aiperf.sh replays the segment of the trace the simulation replayed: its end in trace ms, the
// speedup × max_virtual_time_seconds or max_trace_seconds, whichever ends first.
func TestAIPerfTraceEndOffset(t *testing.T) {
	trace := []string{"traffic.source={type: trace, format: mooncake, paths: [/tmp/trace.jsonl], block_size: 512}"}
	for _, c := range []struct {
		load, stop, want string
		note             bool
	}{
		{"{type: trace_timestamps, speedup: 2}", "{max_virtual_time_seconds: 300}", "--fixed-schedule-end-offset 600000", false},
		{"{type: trace_timestamps, speedup: 2}", "{max_trace_seconds: 450}", "--fixed-schedule-end-offset 450000", true},
		{"{type: trace_timestamps, speedup: 2}", "{max_virtual_time_seconds: 100, max_trace_seconds: 450}", "--fixed-schedule-end-offset 200000", true},
	} {
		files, err := Export(load(t, "vllm-agg", append(trace, "traffic.load="+c.load, "traffic.stop="+c.stop)...), TargetVLLM, Options{})
		if err != nil {
			t.Fatal(err)
		}
		bench := string(files[len(files)-1].Data)
		if !strings.Contains(bench, c.want) || strings.Contains(bench, "keeps every turn of a session") != c.note {
			t.Errorf("%s: aiperf.sh lacks %q (or the note is %v, want %v):\n%s", c.stop, c.want, !c.note, c.note, bench)
		}
	}
}

func TestTrimFloat(t *testing.T) {
	for x, want := range map[float64]string{0: "0", 2.5: "2.5", 0.00001: "0.00001", 1.23456: "1.2346", -0.00001: "-0.00001", 100: "100"} {
		if got := trimFloat(x); got != want {
			t.Errorf("trimFloat(%g) = %q, want %q", x, got, want)
		}
	}
}

// versionParts reads the leading digits of MAJOR, MINOR and PATCH (0 when the patch is missing
// or not numeric); vllmPatchBefore compares all three, an unset or unreadable version being no
// older than any.
func TestVersionParts(t *testing.T) {
	for _, c := range []struct {
		v                   string
		major, minor, patch int
		ok                  bool
	}{
		{"0.10.2", 0, 10, 2, true}, {"v0.10.5", 0, 10, 5, true}, {"0.10", 0, 10, 0, true},
		{"1.0.0rc3", 1, 0, 0, true}, {"0.5.1.post1", 0, 5, 1, true}, {"0.10.post1", 0, 10, 0, true},
		{"0.10.x", 0, 10, 0, true}, {"latest", 0, 0, 0, false}, {"", 0, 0, 0, false}, {".1.2", 0, 0, 0, false},
	} {
		ma, mi, pa, ok := versionParts(c.v)
		if ok != c.ok || ok && (ma != c.major || mi != c.minor || pa != c.patch) {
			t.Errorf("versionParts(%q) = %d, %d, %d, %v; want %d, %d, %d, %v", c.v, ma, mi, pa, ok, c.major, c.minor, c.patch, c.ok)
		}
	}
	for v, want := range map[string]bool{"0.10.1": true, "0.10": true, "0.9.9": true, "0.10.2": false, "0.10.3": false, "0.11.0": false, "": false} {
		x := &exporter{cfg: &config.Config{Engine: config.Engine{BackendVersion: v}}}
		if got := x.vllmPatchBefore(0, 10, 2); got != want {
			t.Errorf("%q before 0.10.2: %v, want %v", v, got, want)
		}
	}
}
