package sim

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/servesweep/servesweep/sim/config"
	"github.com/servesweep/servesweep/sim/timing"
)

// defaultConfig is testConfig with `default` timing and KV capacity for model on hardware.
func defaultConfig(model, hardware string, tensor, isl, osl, requests, concurrency int) *config.Config {
	cfg := testConfig(isl, osl, requests, concurrency, 1)
	cfg.Engine.Model, cfg.Engine.Hardware = model, hardware
	role := cfg.Engine.Workers.Aggregated
	role.Parallelism.Tensor = tensor
	role.KVCache = config.KVCache{BlockSize: 64, PrefixCaching: true, Capacity: config.KVCapacity{Type: config.CapacityDefault, MemoryFraction: 0.9}}
	role.Timing = config.Timing{Type: config.TimingDefault}
	return cfg
}

// The seed's configurations run with default timing and capacity (the disaggregated one with a
// synthetic source instead of its trace, and bytes_per_token auto).
func TestSeedConfigsWithDefaultTiming(t *testing.T) {
	sets := func(roles ...string) []string {
		var s []string
		for _, r := range roles {
			s = append(s, "engine.workers."+r+".timing={type: default}", "engine.workers."+r+".kv_cache.capacity={type: default}")
		}
		return s
	}
	c := mustLoad(t, seedSynthetic, sets("aggregated")...)
	res := mustRun(t, c)
	if res.Summary.CompletedRequests != 100 || !(res.Summary.TTFT.Mean > 0) || !(res.Summary.TPOT.Mean > 0) {
		t.Errorf("synthetic: %+v", res.Summary)
	}
	d := mustLoad(t, seedDisaggregated, append(sets("prefill", "decode"),
		"traffic={source: {type: synthetic, input_tokens: 2048, output_tokens: 64}, load: {type: concurrency, concurrency: 8}, stop: {requests: 40}}",
		"engine.kv_transfer.bytes_per_token=auto")...)
	res = mustRun(t, d)
	if res.Summary.CompletedRequests != 40 || res.Summary.TotalOutputTokens != 40*64 {
		t.Errorf("disaggregated: completed %d, output %d; want 40, 2560", res.Summary.CompletedRequests, res.Summary.TotalOutputTokens)
	}
	// Synthetic prompts share no content, so a decode worker never caches a prompt it receives:
	// every hand-off moves all 2048 tokens at the auto bytes_per_token of one Llama-3.1-8B BF16
	// prefill GPU, 32 layers × 2 × 8 KV heads × 128 × 2 bytes = 131072, over 400 GB/s:
	// 2048 × 131072 / 400e9 s = 0.67108864 ms, after the default hand-off latency of default
	// timing (timing.CalibratedKVTransferLatencyMs, 200 ms).
	want := timing.CalibratedKVTransferLatencyMs + 0.67108864
	for i := range res.Handoffs {
		h := &res.Handoffs[i]
		if h.TransferredTokens != 2048 || h.DecodeCachedTokens != 0 || !near(h.DestinationActivatedMs-h.DestinationReservedMs, want) {
			t.Errorf("disaggregated request %d: transferred %d, cached %d, transfer %v ms; want 2048, 0, %v",
				i, h.TransferredTokens, h.DecodeCachedTokens, h.DestinationActivatedMs-h.DestinationReservedMs, want)
		}
	}
	// The roofline alias decodes to default.
	mustRun(t, mustLoad(t, seedSynthetic, "engine.workers.aggregated.timing={type: roofline}"))
}

// With default timing and capacity, Llama-3.1-70B on H200 is faster per token at TP4 than at
// TP2, and its KV pool grows with TP.
func TestDefaultTimingTensorParallelism(t *testing.T) {
	var prevTPOT float64
	prevBlocks := 0
	for _, tp := range []int{2, 4} {
		cfg := defaultConfig("meta-llama/Llama-3.1-70B-Instruct", "h200_sxm", tp, 2048, 128, 64, 16)
		res := mustRun(t, cfg)
		tpot := res.Summary.TPOT.Mean
		dep := &deployment{cfg: cfg, eff: timing.CalibratedEfficiency()}
		blocks, err := dep.capacityBlocks("aggregated", cfg.Engine.Workers.Aggregated)
		if err != nil {
			t.Fatal(err)
		}
		if prevTPOT > 0 && !(tpot < prevTPOT) {
			t.Errorf("TP%d TPOT %.2f ms is not below TP%d's %.2f ms", tp, tpot, tp/2, prevTPOT)
		}
		if blocks <= prevBlocks {
			t.Errorf("TP%d: %d blocks, not more than TP%d's %d", tp, blocks, tp/2, prevBlocks)
		}
		prevTPOT, prevBlocks = tpot, blocks
	}
}

// fixed/polynomial timing with a fixed capacity works with any model and hardware name; default
// timing or capacity with an unknown one is an error naming the field and the known values.
func TestDefaultTimingNeedsKnownModelAndHardware(t *testing.T) {
	cfg := testConfig(128, 8, 4, 2, 1000)
	cfg.Engine.Model, cfg.Engine.Hardware = "acme/secret-model", "tpu_v9"
	mustRun(t, cfg)

	for _, c := range []struct {
		name, model, hw, path, frag string
		timing, capacity            bool
	}{
		{"timing model", "acme/secret-model", "h200_sxm", "engine.model", "known models:", true, false},
		{"capacity model", "acme/secret-model", "h200_sxm", "engine.model", "known models:", false, true},
		{"timing hardware", "Qwen/Qwen3-8B", "tpu_v9", "engine.hardware", "known hardware: a100_sxm, b200_sxm", true, false},
		{"capacity hardware", "Qwen/Qwen3-8B", "tpu_v9", "engine.hardware", "known hardware:", false, true},
	} {
		cfg := testConfig(128, 8, 4, 2, 1000)
		cfg.Engine.Model, cfg.Engine.Hardware = c.model, c.hw
		role := cfg.Engine.Workers.Aggregated
		if c.timing {
			role.Timing = config.Timing{Type: config.TimingDefault}
		}
		if c.capacity {
			role.KVCache.Capacity = config.KVCapacity{Type: config.CapacityDefault, MemoryFraction: 0.9}
		}
		_, err := Run(context.Background(), cfg, Options{})
		var ce *config.Error
		if !errors.As(err, &ce) || ce.Path != c.path || !strings.Contains(ce.Msg, c.frag) {
			t.Errorf("%s: err = %v, want %s: …%s…", c.name, err, c.path, c.frag)
		}
	}
}

// A model that does not fit is a config error naming the numbers.
func TestDefaultCapacityDoesNotFit(t *testing.T) {
	cfg := defaultConfig("meta-llama/Llama-3.1-70B", "h100_sxm", 1, 128, 8, 4, 2)
	_, err := Run(context.Background(), cfg, Options{})
	var ce *config.Error
	if !errors.As(err, &ce) || ce.Path != "engine.workers.aggregated.kv_cache.capacity" ||
		!strings.Contains(ce.Msg, "needs 131.5 GiB of weights, has 72.0 GiB") {
		t.Errorf("err = %v", err)
	}
}

// A fixed KV pool does not excuse weights that cannot load under timing that prices the model on
// the GPU: Llama-3.1-70B in BF16 (131.5 GiB) on one H100 (80 GiB whole) is refused under default
// and roofline timing, runs on two (TP2: 65.7 GiB each), and under fixed timing (which knows
// neither) the pool is taken as given.
func TestFixedCapacityWeightsMustFit(t *testing.T) {
	for _, c := range []struct {
		timing string
		tensor int
		want   string
	}{
		{config.TimingDefault, 1, "needs 131.5 GiB of weights, has 80.0 GiB (memory_fraction 1"},
		{config.TimingRoofline, 1, "needs 131.5 GiB of weights, has 80.0 GiB (memory_fraction 1"},
		{config.TimingRoofline, 2, ""},
		{config.TimingFixed, 1, ""},
	} {
		cfg := defaultConfig("meta-llama/Llama-3.1-70B", "h100_sxm", c.tensor, 128, 8, 4, 2)
		role := cfg.Engine.Workers.Aggregated
		role.KVCache.Capacity = config.KVCapacity{Type: config.CapacityFixed, Blocks: 1024}
		role.Timing = config.Timing{Type: c.timing}
		if c.timing == config.TimingFixed {
			role.Timing.PrefillMs, role.Timing.DecodeMs = f64(30), f64(8)
		}
		_, err := Run(context.Background(), cfg, Options{})
		var ce *config.Error
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s timing, TP%d: %v", c.timing, c.tensor, err)
		case c.want != "" && (!errors.As(err, &ce) || ce.Path != "engine.workers.aggregated.kv_cache.capacity (fixed, with "+c.timing+" timing)" ||
			!strings.Contains(ce.Msg, c.want)):
			t.Errorf("%s timing, TP%d: err = %v, want %q", c.timing, c.tensor, err, c.want)
		}
	}
}

// engine.precision overrides the model's default; fp8 weights make a memory-bound decode faster.
func TestPrecisionChangesTiming(t *testing.T) {
	tpot := func(prec config.Precision) float64 {
		cfg := defaultConfig("meta-llama/Llama-3.1-8B-Instruct", "h100_sxm", 1, 512, 64, 16, 4)
		cfg.Engine.Precision = prec
		return mustRun(t, cfg).Summary.TPOT.Mean
	}
	bf16, fp8 := tpot(config.Precision{}), tpot(config.Precision{Weights: config.PrecisionFP8, KVCache: config.PrecisionFP8})
	if !(fp8 < bf16) {
		t.Errorf("fp8 TPOT %.3f not below bf16 %.3f", fp8, bf16)
	}
	// The FP8 model id implies fp8 too.
	cfg := defaultConfig("nvidia/Llama-3.1-8B-Instruct-FP8", "h100_sxm", 1, 512, 64, 16, 4)
	if got := mustRun(t, cfg).Summary.TPOT.Mean; got != fp8 {
		t.Errorf("FP8 model id TPOT %.3f, want the fp8 precision's %.3f", got, fp8)
	}
}

// bytes_per_token auto is one prefill GPU's share of a token's KV in the KV precision.
func TestTransferBytesPerTokenAuto(t *testing.T) {
	cfg := disaggConfig(128, 4, 1, 1, 1, 1, 0, 100)
	cfg.Engine.Model = "meta-llama/Llama-3.1-8B"
	cfg.Engine.Workers.Prefill.Parallelism.Tensor = 2
	dep := &deployment{cfg: cfg}
	for _, c := range []struct {
		kv   string
		want float64
	}{{"", 65536}, {config.PrecisionFP8, 32768}} {
		cfg.Engine.Precision.KVCache = c.kv
		got, err := dep.transferBytesPerToken(cfg.Engine.Workers.Prefill)
		if err != nil || got != c.want {
			t.Errorf("kv %q: %v, %v; want %v", c.kv, got, err, c.want)
		}
	}
	mustRun(t, cfg)
}

// traffic.load.ramp_seconds spreads the first wave of a concurrency load evenly; later arrivals
// still follow completions.
func TestConcurrencyRamp(t *testing.T) {
	cfg := testConfig(64, 4, 8, 4, 1000)
	ramp := 0.1
	cfg.Traffic.Load.RampSeconds = &ramp
	res, err := Run(context.Background(), cfg, Options{CheckInvariants: true})
	if err != nil {
		t.Fatal(err)
	}
	checkConservation(t, res)
	for i, want := range []float64{0, 25, 50, 75} {
		if got := res.Requests[i].ArrivalMs; got != want {
			t.Errorf("request %d arrived at %v, want %v", i, got, want)
		}
	}
	if got, want := res.Requests[4].ArrivalMs, res.Requests[0].TerminalMs; got != want {
		t.Errorf("request 4 arrived at %v, want request 0's completion %v", got, want)
	}
}

// A fixed KV pool larger than the GPU holds beside the weights and a pass's activations runs (the
// reference accepts any fixed pool) with a note saying so: Llama-3.1-70B TP2 on H100 keeps 80 −
// 65.8 − 1.4 = 12.9 GiB per GPU beside its weights and the activations of a pass, room for 1,320
// blocks of 64 tokens at 160 KiB a token (80 layers × 8 KV heads × 128 × 2 × 2 bytes / 2 GPUs);
// 4,096 blocks need 40 GiB.
func TestFixedCapacityLargerThanTheGPUIsNoted(t *testing.T) {
	for _, c := range []struct {
		blocks int
		note   bool
	}{{4096, true}, {1024, false}} {
		cfg := defaultConfig("meta-llama/Llama-3.1-70B", "h100_sxm", 2, 128, 8, 4, 2)
		role := cfg.Engine.Workers.Aggregated
		role.KVCache.Capacity = config.KVCapacity{Type: config.CapacityFixed, Blocks: c.blocks}
		role.Timing = config.Timing{Type: config.TimingRoofline}
		res, err := Run(context.Background(), cfg, Options{})
		if err != nil {
			t.Fatal(err)
		}
		noted := false
		for _, n := range res.TimingNotes {
			noted = noted || strings.Contains(n, "4096 blocks of 64 tokens need 40.0 GiB of KV cache per GPU") && strings.Contains(n, "at most 1320 blocks fit")
		}
		if noted != c.note {
			t.Errorf("%d blocks: notes %q, note expected %v", c.blocks, res.TimingNotes, c.note)
		}
	}
}

// DeploymentNotes flags, whatever the timing, a fixed pool the GPU could not hold (the seed's
// 32,768 blocks of 64 tokens of Llama-3.1-8B on one H200 under polynomial timing) and weights
// that cannot load (Llama-3.1-405B on one H200), and says nothing of a pool that fits.
func TestDeploymentNotes(t *testing.T) {
	for _, c := range []struct {
		sets []string
		want string
	}{
		{nil, "32768 blocks of 64 tokens need 256.0 GiB of KV cache per GPU"},
		{[]string{"engine.model=meta-llama/Llama-3.1-405B"}, "does not fit on 1 × h200_sxm"},
		{[]string{"engine.workers.aggregated.kv_cache.capacity={type: fixed, blocks: 4096}"}, ""},
		{[]string{"engine.workers.aggregated.kv_cache.capacity={type: fixed, blocks: 4096}", "engine.context_length=400000"},
			"engine.context_length: 400000 tokens is above meta-llama/Llama-3.1-8B's max_position_embeddings 131072: engines refuse " +
				"a longer context at startup (vLLM's max-model-len, SGLang's context-length); valid: 1 to 131072, or max"},
		{[]string{"engine.workers.aggregated.kv_cache.capacity={type: fixed, blocks: 4096}", "engine.context_length=131072"}, ""},
	} {
		cfg, err := config.LoadFile("../examples/synthetic.yaml", c.sets)
		if err != nil {
			t.Fatal(err)
		}
		notes := strings.Join(DeploymentNotes(cfg), "\n")
		if c.want == "" && notes != "" || c.want != "" && !strings.Contains(notes, c.want) {
			t.Errorf("%v: notes %q, want %q", c.sets, notes, c.want)
		}
	}
}

// Under a timing that does not price the shape (polynomial), a shape the model cannot be split
// into still runs, with a note naming the field: no engine runs it.
func TestUnpricedInvalidShapeIsNoted(t *testing.T) {
	cfg := mustLoad(t, seedSynthetic, "engine.workers.aggregated.parallelism={replicas: 1, tensor: 64}")
	notes, err := CheckNotes(cfg, nil)
	want := "engine.workers.aggregated.parallelism.tensor: tensor 64 does not divide meta-llama/Llama-3.1-8B's 32 attention heads"
	if err != nil || !strings.Contains(strings.Join(notes, "\n"), want) || !strings.Contains(strings.Join(notes, "\n"), "polynomial timing does not depend on it") {
		t.Errorf("notes %q, err %v; want %q", notes, err, want)
	}
	if err := CheckShapes(cfg); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("CheckShapes: %v, want %q", err, want)
	}
	if err := CheckShapes(mustLoad(t, seedSynthetic)); err != nil {
		t.Errorf("CheckShapes of the seed: %v", err)
	}
}

// A worker of more GPUs than one link domain (48 B200s: six HGX baseboards of 8) gets a note
// naming the collectives that cross nodes (here its expert-parallel all-to-alls), how they are
// priced, and the bias measured on such workers; the same worker on a GB200 NVL72 rack (72
// GPUs in one NVLink domain) does not. export refuses either when it exceeds one node (8 B200s,
// 4 GB200s).
func TestWorkerBeyondOneLinkDomainIsNoted(t *testing.T) {
	const want = "engine.workers.aggregated: a worker of 48 b200_sxm GPUs spans more than one link domain of 8; between nodes run " +
		"its all-to-alls over 48 GPUs, priced at each GPU's 50 GB/s network port and a fixed latency per GPU beyond the 8 the kernel tables measure, not the network's own: " +
		"its times are optimistic (InferenceX's DeepSeek workers over two H100 nodes measured about twice the predicted TPOT): " +
		"do not rank it against shapes within one link domain on these figures alone"
	for _, c := range []struct {
		hardware string
		noted    bool
	}{{"b200_sxm", true}, {"gb200", false}} {
		cfg := mustLoad(t, seedSynthetic, "engine.model=deepseek-ai/DeepSeek-R1", "engine.hardware="+c.hardware,
			"engine.workers.aggregated.parallelism={replicas: 1, tensor: 1, attention_data: 48, moe_expert: 48, redundant_experts: 32}",
			"engine.workers.aggregated.timing={type: default}", "engine.workers.aggregated.kv_cache.capacity={type: default}")
		notes, err := CheckNotes(cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(strings.Join(notes, "\n"), "spans more than one link domain"); got != c.noted ||
			c.noted && !strings.Contains(strings.Join(notes, "\n"), want) {
			t.Errorf("%s: notes %q, want the link-domain note %v", c.hardware, notes, c.noted)
		}
		if err := CheckSingleNode(cfg); err == nil || !strings.Contains(err.Error(), "engine.workers.aggregated.parallelism: a worker of 48 GPUs") {
			t.Errorf("%s: CheckSingleNode %v, want the worker refused", c.hardware, err)
		}
	}
	if err := CheckSingleNode(mustLoad(t, seedSynthetic)); err != nil {
		t.Errorf("the seed's one-GPU workers: %v", err)
	}
}

// FP4 weights priced by the roofline on a GPU without FP4 tensor cores get a timing note naming
// the role and the GPU (they run at the next lower GEMM peak and stream at the FP8 rate, not at
// Blackwell's FP4Memory share); Blackwell gets none, nor do FP8 weights.
func TestFP4WithoutFP4TensorCoresIsNoted(t *testing.T) {
	want := "engine.workers.aggregated: h200_sxm has no FP4 tensor cores: the roofline prices fp4 weights at its BF16 GEMM peak (weight-only 4-bit kernels dequantize to BF16), streaming their bytes without Blackwell's FP4Memory share"
	for _, c := range []struct {
		hardware, weights string
		noted             bool
	}{{"h200_sxm", "fp4", true}, {"b200_sxm", "fp4", false}, {"h200_sxm", "fp8", false}} {
		cfg := mustLoad(t, seedSynthetic, "engine.workers.aggregated.timing={type: default}",
			"engine.hardware="+c.hardware, "engine.precision.weights="+c.weights)
		notes, err := CheckNotes(cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		hasNote := slices.ContainsFunc(notes, func(n string) bool { return strings.Contains(n, "no FP4 tensor cores") })
		if hasNote != c.noted || c.noted && !slices.Contains(notes, want) {
			t.Errorf("%s %s: notes %q, want the FP4 note %v", c.hardware, c.weights, notes, c.noted)
		}
	}
}

// linkDomainNote names what crosses nodes: Llama-3.1-70B at TP16 on H100 (8 per domain) its
// all-reduces over 16 GPUs at the port and NetworkAllReduceLatencyUs; at TP8 × PP2 only its
// pipeline sends (each stage's all-reduces stay within a node); on L40S, which the catalog gives
// no port, the all-reduces of TP16 at the PCIe link's 32 GB/s; a TP8 worker on one H100 node
// gets no note.
func TestLinkDomainNoteNamesWhatCrossesNodes(t *testing.T) {
	h100, err := timing.LookupHardware("h100_sxm")
	if err != nil {
		t.Fatal(err)
	}
	l40s, err := timing.LookupHardware("l40s")
	if err != nil {
		t.Fatal(err)
	}
	const tail = ": its times are optimistic (InferenceX's DeepSeek workers over two H100 nodes measured about twice the predicted TPOT): " +
		"do not rank it against shapes within one link domain on these figures alone"
	for _, c := range []struct {
		p    config.Parallelism
		hw   timing.Hardware
		want string
	}{
		{config.Parallelism{Replicas: 1, Tensor: 16, Pipeline: 1, AttentionData: 1, MoeTensor: 1, MoeExpert: 1}, h100,
			"engine.workers.aggregated: a worker of 16 h100_sxm GPUs spans more than one link domain of 8; between nodes run " +
				"its all-reduces over 16 GPUs, priced at each GPU's 50 GB/s network port and 25.2 µs each (NCCL's inter-node latency)" + tail},
		{config.Parallelism{Replicas: 1, Tensor: 8, Pipeline: 2, AttentionData: 1, MoeTensor: 1, MoeExpert: 1}, h100,
			"engine.workers.aggregated: a worker of 16 h100_sxm GPUs spans more than one link domain of 8; between nodes run " +
				"its pipeline sends, priced at the GPU link's bandwidth and latency, not the network's" + tail},
		{config.Parallelism{Replicas: 1, Tensor: 16, Pipeline: 1, AttentionData: 1, MoeTensor: 1, MoeExpert: 1}, l40s,
			"engine.workers.aggregated: a worker of 16 l40s GPUs spans more than one link domain of 8; between nodes run " +
				"its all-reduces over 16 GPUs, priced at the GPU link's 32 GB/s (the catalog gives l40s no network port) and 25.2 µs each (NCCL's inter-node latency)" + tail},
		{config.Parallelism{Replicas: 2, Tensor: 8, Pipeline: 1, AttentionData: 1, MoeTensor: 1, MoeExpert: 1}, h100, ""},
	} {
		if got := linkDomainNote(config.RoleAggregated, c.p, c.hw, false); got != c.want {
			t.Errorf("%+v on %s:\n got %q\nwant %q", c.p, c.hw.ID, got, c.want)
		}
	}
}
