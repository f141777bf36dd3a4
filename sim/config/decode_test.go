package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// seedSynthetic is /tmp/dynosim-synthetic.yaml from the DynoSim "Run a simulation" guide.
const seedSynthetic = `traffic:
  source: {type: synthetic, input_tokens: 2048, output_tokens: 128}
  load: {type: concurrency, concurrency: 16}
  stop: {requests: 100}
engine:
  mode: aggregated
  model: meta-llama/Meta-Llama-3.1-8B-Instruct
  hardware: h200_sxm
  backend: vllm
  context_length: 8192
  workers:
    aggregated:
      parallelism: {replicas: 2, tensor: 1, pipeline: 1, attention_data: 1, moe_tensor: 1, moe_expert: 1}
      scheduler: {max_batched_tokens: 8192, max_sequences: 256}
      kv_cache: {block_size: 64, prefix_caching: true, capacity: {type: fixed, blocks: 32768}}
      timing: {type: polynomial}
router:
  policy: round_robin
  prefill_load_model: {type: none}
planner: {policy: disabled}
`

// seedDisaggregated is /tmp/dynosim-disaggregated.yaml from the same guide.
const seedDisaggregated = `traffic:
  source: {type: trace, format: mooncake, paths: [/tmp/toolagent_trace.jsonl], block_size: 512}
  load: {type: trace_timestamps, speedup: 1.0}
  stop: {max_virtual_time_seconds: 3600}
engine:
  mode: disaggregated
  model: meta-llama/Meta-Llama-3.1-8B-Instruct
  hardware: h200_sxm
  backend: vllm
  context_length: 8192
  kv_transfer: {bytes_per_token: 131072, bandwidth_gb_per_second: 400, timing_mode: destination_missing}
  workers:
    prefill:
      parallelism: {replicas: 2, tensor: 1, pipeline: 1, attention_data: 1, moe_tensor: 1, moe_expert: 1}
      scheduler: {max_batched_tokens: 8192, max_sequences: 64}
      kv_cache: {block_size: 64, prefix_caching: true, capacity: {type: fixed, blocks: 32768}}
      timing: {type: polynomial}
    decode:
      parallelism: {replicas: 2, tensor: 1, pipeline: 1, attention_data: 1, moe_tensor: 1, moe_expert: 1}
      scheduler: {max_batched_tokens: 8192, max_sequences: 256}
      kv_cache: {block_size: 64, prefix_caching: true, capacity: {type: fixed, blocks: 32768}}
      timing: {type: polynomial}
router:
  policy: kv_router
  prefill_load_model: {type: none}
planner: {policy: disabled}
`

// minimalEngine is the smallest config that decodes without errors: everything else defaults.
const minimalEngine = `engine:
  model: m
  hardware: h200_sxm
  workers:
    aggregated:
      kv_cache: {capacity: {type: fixed, blocks: 1000}}
      timing: {type: polynomial}
`

// The --set overrides of the guide.
var (
	setSession = []string{
		`traffic.source={type: synthetic-session, new_input_tokens_per_turn: 1024, output_tokens_per_turn: 128, session: {turns: 3, shared_prefix_ratio: 0.5, prefix_groups: 8, inter_turn_delay_ms: 250}}`,
		`traffic.stop={sessions: 50}`,
	}
	setTrace = []string{
		`traffic.source={type: trace, format: mooncake, paths: [/tmp/toolagent_trace.jsonl], block_size: 512}`,
		`traffic.load={type: trace_timestamps, speedup: 1.0}`,
		`traffic.stop={max_virtual_time_seconds: 3600}`,
	}
	setKVRouter = append(append([]string{}, setTrace...),
		`router.policy=kv_router`,
		`engine.workers.aggregated.parallelism.replicas=4`)
)

// wholeTrafficDefault is the traffic of a config without one (dynosim-spec.md §3.1).
var wholeTrafficDefault = Traffic{
	Source: Source{Type: SourceSynthetic, InputTokens: 1024, OutputTokens: 128},
	Load:   Load{Type: LoadConcurrency, Concurrency: 10},
	Stop:   Stop{Requests: 100},
}

func mustDecode(t *testing.T, src string, sets ...string) *Config {
	t.Helper()
	c, err := Decode([]byte(src), "test.yaml", sets)
	if err != nil {
		t.Fatalf("Decode: unexpected error:\n%v", err)
	}
	if err := c.Validate(); err != nil {
		t.Fatalf("Validate after Decode:\n%v", err)
	}
	return c
}

// decodeErrs decodes src and returns its Errors, failing if there are none.
func decodeErrs(t *testing.T, src string, sets ...string) Errors {
	t.Helper()
	c, err := Decode([]byte(src), "test.yaml", sets)
	if err == nil {
		t.Fatalf("Decode: expected an error, got config %+v", c)
	}
	if c != nil {
		t.Errorf("Decode returned a config together with an error")
	}
	var ces Errors
	if !errors.As(err, &ces) || len(ces) == 0 {
		t.Fatalf("Decode error is not a non-empty Errors: %T %v", err, err)
	}
	var ce *Error
	if !errors.As(err, &ce) {
		t.Fatalf("errors.As(*Error) failed on %v", err)
	}
	return ces
}

// decodeLenient decodes src and returns the config even when it is not supported yet, failing
// on any other error.
func decodeLenient(t *testing.T, src string, sets ...string) (*Config, Errors) {
	t.Helper()
	c, errs, uns := decode([]byte(src), "test.yaml", sets)
	if len(errs) > 0 {
		t.Fatalf("decode: unexpected errors:\n%v", errs)
	}
	return c, uns
}

func findErr(es Errors, path, frag string) *Error {
	for _, e := range es {
		if e.Path == path && strings.Contains(e.Msg, frag) {
			return e
		}
	}
	return nil
}

func TestDecodeSeedSynthetic(t *testing.T) {
	c := mustDecode(t, seedSynthetic)
	role := &WorkerRole{
		Parallelism: Parallelism{Replicas: 2, Tensor: 1, Pipeline: 1, AttentionData: 1, MoeTensor: 1, MoeExpert: 1},
		Scheduler:   Scheduler{MaxBatchedTokens: 8192, MaxSequences: 256, CapacityPolicy: CapacityGuaranteedNoEvict},
		KVCache:     KVCache{BlockSize: 64, PrefixCaching: true, Capacity: KVCapacity{Type: CapacityFixed, Blocks: 32768}},
		Timing:      Timing{Type: TimingPolynomial},
	}
	want := &Config{
		File:      "test.yaml",
		HasRouter: true, HasPlanner: true,
		Traffic: Traffic{
			Source: Source{Type: SourceSynthetic, InputTokens: 2048, OutputTokens: 128},
			Load:   Load{Type: LoadConcurrency, Concurrency: 16},
			Stop:   Stop{Requests: 100},
		},
		Engine: Engine{
			Mode: ModeAggregated, Model: "meta-llama/Meta-Llama-3.1-8B-Instruct", Hardware: "h200_sxm",
			Backend: "vllm", ContextLength: 8192, Workers: Workers{Aggregated: role},
		},
		Router:  Router{Policy: PolicyRoundRobin, PrefillLoadModel: PrefillLoadModel{Type: "none"}},
		Planner: Planner{Policy: "disabled"},
	}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("config mismatch:\n got %+v\nwant %+v", c, want)
	}
	if c.Engine.Workers.Aggregated.Parallelism.GPUs() != 2 {
		t.Errorf("GPUs = %d, want 2", c.Engine.Workers.Aggregated.Parallelism.GPUs())
	}
}

func TestDecodeSeedDisaggregated(t *testing.T) {
	if _, err := Decode([]byte(seedDisaggregated), "test.yaml", nil); err != nil {
		t.Fatalf("Decode: %v", err)
	}
	// Every backend is simulated, disaggregated too; SGLang's page size default is 1 token.
	for _, backend := range []string{"sglang", "trtllm", "vllm"} {
		kv := "kv_cache={prefix_caching: true, capacity: {type: fixed, blocks: 32768}}"
		c := mustDecode(t, seedDisaggregated, "engine.backend="+backend, "engine.workers.prefill."+kv, "engine.workers.decode."+kv)
		bs, mf := KVDefaults(backend)
		if got := c.Engine.Workers.Decode.KVCache.BlockSize; got != bs {
			t.Errorf("%s: decode block_size = %d, want %d", backend, got, bs)
		}
		if backend == "sglang" && (bs != 1 || mf != 0.88) {
			t.Errorf("sglang defaults = %d, %g; want 1, 0.88", bs, mf)
		}
	}

	// The schema accepts it: check the decoded values.
	c, uns := decodeLenient(t, seedDisaggregated)
	if len(uns) != 0 {
		t.Errorf("unsupported = %v, want none", uns)
	}
	kt := c.Engine.KVTransfer
	if kt == nil || kt.BytesPerToken != 131072 || kt.BandwidthGBps == nil || *kt.BandwidthGBps != 400 ||
		kt.TimingMode != "destination_missing" {
		t.Errorf("kv_transfer = %+v", kt)
	}
	w := c.Engine.Workers
	if w.Aggregated != nil || w.Prefill == nil || w.Decode == nil {
		t.Fatalf("workers = %+v", w)
	}
	if w.Prefill.Scheduler.MaxSequences != 64 || w.Decode.Scheduler.MaxSequences != 256 {
		t.Errorf("max_sequences prefill %d decode %d", w.Prefill.Scheduler.MaxSequences, w.Decode.Scheduler.MaxSequences)
	}
	if err := c.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
}

func TestSetSeedSessionOverride(t *testing.T) {
	c := mustDecode(t, seedSynthetic, setSession...)
	wantSrc := Source{Type: SourceSyntheticSession, NewInputTokensPerTurn: 1024, OutputTokensPerTurn: 128,
		Session: &SessionShape{Turns: 3, SharedPrefixRatio: 0.5, PrefixGroups: 8, InterTurnDelayMs: 250}}
	if !reflect.DeepEqual(c.Traffic.Source, wantSrc) {
		t.Errorf("source = %+v (session %+v)", c.Traffic.Source, c.Traffic.Source.Session)
	}
	if c.Traffic.Stop != (Stop{Sessions: 50}) {
		t.Errorf("stop = %+v", c.Traffic.Stop)
	}
	if !reflect.DeepEqual(c.Traffic.Load, Load{Type: LoadConcurrency, Concurrency: 16}) {
		t.Errorf("load = %+v", c.Traffic.Load)
	}
}

func TestSetSeedTraceOverride(t *testing.T) {
	c := mustDecode(t, seedSynthetic, setTrace...)
	wantSrc := Source{Type: SourceTrace, Format: "mooncake", Paths: []string{"/tmp/toolagent_trace.jsonl"}, BlockSize: 512}
	if !reflect.DeepEqual(c.Traffic.Source, wantSrc) {
		t.Errorf("source = %+v", c.Traffic.Source)
	}
	if !reflect.DeepEqual(c.Traffic.Load, Load{Type: LoadTraceTimestamps, Speedup: 1}) {
		t.Errorf("load = %+v", c.Traffic.Load)
	}
	if c.Traffic.Stop != (Stop{MaxVirtualTimeSeconds: 3600}) {
		t.Errorf("stop = %+v", c.Traffic.Stop)
	}
	// The engine's KV block size is independent of the trace block size.
	if bs := c.Engine.Workers.Aggregated.KVCache.BlockSize; bs != 64 {
		t.Errorf("kv block size = %d, want 64", bs)
	}
}

func TestSetSeedKVRouterOverride(t *testing.T) {
	c := mustDecode(t, seedSynthetic, setKVRouter...)
	if c.Router.Policy != PolicyKVRouter || c.Engine.Workers.Aggregated.Parallelism.Replicas != 4 {
		t.Errorf("router %+v replicas %d", c.Router, c.Engine.Workers.Aggregated.Parallelism.Replicas)
	}
	if c.Router.OverlapScoreCredit != nil {
		t.Errorf("kv_router knobs should stay nil when omitted")
	}
}

// TestDecodeRampAndWarmupPresence: ramp_seconds and warmup_seconds are nil when omitted (or
// null) and hold an explicit 0, which a capacity search keeps (an omitted ramp it chooses);
// warmup_seconds is accepted under every load type.
func TestDecodeRampAndWarmupPresence(t *testing.T) {
	for _, tc := range []struct {
		name           string
		sets           []string
		ramp, warmup   *float64
		rampS, warmupS float64
	}{
		{"omitted", nil, nil, nil, 0, 0},
		{"null", []string{"traffic.load.ramp_seconds=null", "traffic.load.warmup_seconds=null"}, nil, nil, 0, 0},
		{"explicit zero", []string{"traffic.load.ramp_seconds=0", "traffic.load.warmup_seconds=0"}, ptr(0.0), ptr(0.0), 0, 0},
		{"given", []string{"traffic.load.ramp_seconds=5", "traffic.load.warmup_seconds=2.5"}, ptr(5.0), ptr(2.5), 5, 2.5},
		{"warmup under poisson", []string{"traffic.load={type: poisson, requests_per_second: 2, warmup_seconds: 3}"}, nil, ptr(3.0), 0, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := mustDecode(t, seedSynthetic, tc.sets...)
			l := c.Traffic.Load
			if !reflect.DeepEqual(l.RampSeconds, tc.ramp) || !reflect.DeepEqual(l.WarmupSeconds, tc.warmup) {
				t.Errorf("ramp %v warmup %v, want %v %v", l.RampSeconds, l.WarmupSeconds, tc.ramp, tc.warmup)
			}
			if l.Ramp() != tc.rampS || l.Warmup() != tc.warmupS {
				t.Errorf("Ramp() %g Warmup() %g, want %g %g", l.Ramp(), l.Warmup(), tc.rampS, tc.warmupS)
			}
		})
	}
}

func TestDecodeDefaults(t *testing.T) {
	c := mustDecode(t, minimalEngine)
	want := wholeTrafficDefault
	if !reflect.DeepEqual(c.Traffic, want) {
		t.Errorf("traffic = %+v, want %+v", c.Traffic, want)
	}
	e := c.Engine
	if e.Mode != ModeAggregated || e.Backend != "vllm" || e.ContextLength != 0 || e.BackendVersion != "" ||
		e.EnableChunkedPrefill != nil || e.KVTransfer != nil {
		t.Errorf("engine = %+v", e)
	}
	r := e.Workers.Aggregated
	wantRole := &WorkerRole{
		Parallelism: Parallelism{1, 1, 1, 1, 1, 1, 0},
		Scheduler:   Scheduler{MaxBatchedTokens: 8192, MaxSequences: 256, CapacityPolicy: CapacityGuaranteedNoEvict},
		KVCache:     KVCache{BlockSize: 64, PrefixCaching: true, Capacity: KVCapacity{Type: CapacityFixed, Blocks: 1000}},
		Timing:      Timing{Type: TimingPolynomial},
	}
	if !reflect.DeepEqual(r, wantRole) {
		t.Errorf("role = %+v, want %+v", r, wantRole)
	}
	if c.Router != (Router{Policy: PolicyRoundRobin, PrefillLoadModel: PrefillLoadModel{Type: "none"}}) {
		t.Errorf("router = %+v", c.Router)
	}
	if c.Planner.Policy != "disabled" || c.Evaluation.SLA != nil {
		t.Errorf("planner %+v evaluation %+v", c.Planner, c.Evaluation)
	}
}

func TestDecodeDefaultsPerUnionType(t *testing.T) {
	// A supplied traffic is not merged with the default: omitted load defaults to concurrency 10,
	// omitted source to synthetic 1024/128.
	c := mustDecode(t, minimalEngine+"traffic: {stop: {requests: 7}}\n")
	if !reflect.DeepEqual(c.Traffic.Source, Source{Type: SourceSynthetic, InputTokens: 1024, OutputTokens: 128}) ||
		!reflect.DeepEqual(c.Traffic.Load, Load{Type: LoadConcurrency, Concurrency: 10}) || c.Traffic.Stop != (Stop{Requests: 7}) {
		t.Errorf("traffic = %+v", c.Traffic)
	}
	c = mustDecode(t, minimalEngine, `traffic={source: {type: synthetic}, load: {type: poisson, requests_per_second: 2}, stop: {requests_per_load_unit: 3}}`)
	if !reflect.DeepEqual(c.Traffic.Load, Load{Type: LoadPoisson, RequestsPerSecond: 2, Seed: 42}) {
		t.Errorf("poisson load = %+v", c.Traffic.Load)
	}
	c = mustDecode(t, minimalEngine, `traffic={source: {type: synthetic-session, session: {}}, load: {type: constant_rate, sessions_per_second: 0.5}, stop: {sessions: 3}}`)
	wantSrc := Source{Type: SourceSyntheticSession, NewInputTokensPerTurn: 1024, OutputTokensPerTurn: 128,
		Session: &SessionShape{Turns: 4}}
	if !reflect.DeepEqual(c.Traffic.Source, wantSrc) || !reflect.DeepEqual(c.Traffic.Load, Load{Type: LoadConstantRate, SessionsPerSecond: 0.5}) {
		t.Errorf("session traffic = %+v %+v", c.Traffic.Source, c.Traffic.Source.Session)
	}
	c = mustDecode(t, minimalEngine, `traffic={source: {type: trace, paths: [t.jsonl]}, load: {type: trace_timestamps}}`)
	if !reflect.DeepEqual(c.Traffic.Source, Source{Type: SourceTrace, Paths: []string{"t.jsonl"}, Format: "mooncake", BlockSize: 512}) ||
		!reflect.DeepEqual(c.Traffic.Load, Load{Type: LoadTraceTimestamps, Speedup: 1}) || c.Traffic.Stop != (Stop{}) {
		t.Errorf("trace traffic = %+v", c.Traffic)
	}
	c = mustDecode(t, minimalEngine, `traffic={source: {type: trace, paths: [t.jsonl]}}`)
	if !reflect.DeepEqual(c.Traffic.Load, Load{Type: LoadConcurrency, Concurrency: 10}) {
		t.Errorf("trace default load = %+v", c.Traffic.Load)
	}

	// context_length "max" is 0; fixed timing; roofline alias; default capacity per backend.
	c = mustDecode(t, minimalEngine, `engine.context_length=max`,
		`engine.workers.aggregated.timing={type: fixed, prefill_ms: 0, decode_ms: 2.5}`)
	if c.Engine.ContextLength != 0 {
		t.Errorf("context_length = %d", c.Engine.ContextLength)
	}
	if tm := c.Engine.Workers.Aggregated.Timing; tm.Type != TimingFixed || *tm.PrefillMs != 0 || *tm.DecodeMs != 2.5 {
		t.Errorf("timing = %+v", tm)
	}

	c, uns := decodeLenient(t, minimalEngine, `engine.workers.aggregated={}`)
	wantRole := &WorkerRole{
		Parallelism: Parallelism{1, 1, 1, 1, 1, 1, 0},
		Scheduler:   Scheduler{MaxBatchedTokens: 8192, MaxSequences: 256, CapacityPolicy: CapacityGuaranteedNoEvict},
		KVCache:     KVCache{BlockSize: 64, PrefixCaching: true, Capacity: KVCapacity{Type: CapacityDefault, MemoryFraction: 0.9}},
		Timing:      Timing{Type: TimingDefault, ForwardModel: ForwardAuto},
	}
	if !reflect.DeepEqual(c.Engine.Workers.Aggregated, wantRole) {
		t.Errorf("empty role = %+v", c.Engine.Workers.Aggregated)
	}
	if len(uns) != 0 {
		t.Errorf("default timing and capacity are supported, got unsupported = %v", uns)
	}

	c, _ = decodeLenient(t, minimalEngine, `engine.workers.aggregated=`, `engine.backend=sglang`)
	if kv := c.Engine.Workers.Aggregated.KVCache; kv.BlockSize != 1 || kv.Capacity.MemoryFraction != 0.88 {
		t.Errorf("sglang kv defaults = %+v", kv)
	}
	c, _ = decodeLenient(t, minimalEngine, `engine.backend=trtllm`, `engine.workers.aggregated.timing={type: roofline}`,
		`engine.workers.aggregated.kv_cache.capacity={memory_fraction: 0.5}`)
	if kv := c.Engine.Workers.Aggregated.KVCache; kv.BlockSize != 32 || kv.Capacity != (KVCapacity{Type: CapacityDefault, MemoryFraction: 0.5}) {
		t.Errorf("trtllm kv = %+v", kv)
	}
	if tm := c.Engine.Workers.Aggregated.Timing; tm != (Timing{Type: TimingRoofline}) {
		t.Errorf("roofline: timing = %+v, want the roofline type without a forward model", tm)
	}

	// Disaggregated roles: prefill max_sequences defaults to 1 only when omitted.
	c, _ = decodeLenient(t, minimalEngine, `engine.mode=disaggregated`, `engine.workers={prefill: {}, decode: null}`,
		`engine.kv_transfer={}`)
	if c.Engine.Workers.Prefill.Scheduler.MaxSequences != 1 || c.Engine.Workers.Decode.Scheduler.MaxSequences != 256 {
		t.Errorf("max_sequences prefill %d decode %d", c.Engine.Workers.Prefill.Scheduler.MaxSequences,
			c.Engine.Workers.Decode.Scheduler.MaxSequences)
	}
	if kt := c.Engine.KVTransfer; *kt != (KVTransfer{TimingMode: "destination_missing"}) {
		t.Errorf("kv_transfer = %+v", kt)
	}
	c, _ = decodeLenient(t, seedDisaggregated, `engine.workers.prefill.scheduler={max_batched_tokens: 4096}`,
		`engine.kv_transfer={bytes_per_token: auto, bandwidth_gb_per_second: null, timing_mode: full_prompt}`)
	if c.Engine.Workers.Prefill.Scheduler != (Scheduler{MaxBatchedTokens: 4096, MaxSequences: 1, CapacityPolicy: CapacityGuaranteedNoEvict}) {
		t.Errorf("prefill scheduler = %+v", c.Engine.Workers.Prefill.Scheduler)
	}
	if kt := c.Engine.KVTransfer; *kt != (KVTransfer{TimingMode: "full_prompt"}) {
		t.Errorf("kv_transfer = %+v", kt)
	}
}

func TestDecodeUnsupportedValues(t *testing.T) {
	cases := []struct {
		sets []string
		path string
		frag string
	}{
		{[]string{"engine.workers.aggregated.timing={type: default, forward_model: fpm}"}, "engine.workers.aggregated.timing.forward_model", "fpm is not supported yet"},
		{[]string{"planner={policy: enabled, target: sla, load_predictor: prophet, fpm_sample_bucket_size: 16, max_num_gpus: -1, prefill_min_workers: null}",
			"evaluation.sla={ttft_ms: 500, itl_ms: 50}"}, "planner.load_predictor", "prophet is not supported yet; use constant, arima or kalman"},
		{[]string{"traffic={source: {type: trace, format: weka, paths: [x]}, load: {type: trace_timestamps}}"}, "traffic.source.format", "weka is not supported yet"},
	}
	for _, tc := range cases {
		errs := decodeErrs(t, seedSynthetic, tc.sets...)
		if e := findErr(errs, tc.path, tc.frag); e == nil || !e.Unsupported {
			t.Errorf("sets %q: want unsupported %s: %q, got:\n%v", tc.sets, tc.path, tc.frag, errs)
		}
		for _, e := range errs {
			if !e.Unsupported {
				t.Errorf("sets %q: unexpected error %v", tc.sets, e)
			}
		}
		if !errors.Is(errs, errors.ErrUnsupported) {
			t.Errorf("sets %q: not errors.ErrUnsupported", tc.sets)
		}
	}
	// explicit auto is the default and is fine; default timing and capacity and a numeric
	// bytes_per_token are supported.
	mustDecode(t, seedSynthetic, "engine.workers.aggregated.kv_cache.bytes_per_token=auto")
	mustDecode(t, seedSynthetic, "engine.workers.aggregated.timing.type=default",
		"engine.workers.aggregated.kv_cache.capacity={type: default, memory_fraction: 0.8}",
		"engine.workers.aggregated.kv_cache.bytes_per_token=131072")
	mustDecode(t, seedSynthetic, "engine.workers.aggregated.timing.type=roofline")
}

func TestDecodePrecision(t *testing.T) {
	c := mustDecode(t, seedSynthetic)
	if c.Engine.Precision != (Precision{}) {
		t.Errorf("omitted precision = %+v, want auto (empty)", c.Engine.Precision)
	}
	c = mustDecode(t, seedSynthetic, "engine.precision={weights: fp8, kv_cache: fp8}")
	if c.Engine.Precision != (Precision{Weights: "fp8", KVCache: "fp8"}) {
		t.Errorf("precision = %+v", c.Engine.Precision)
	}
	c = mustDecode(t, seedSynthetic, "engine.precision={weights: auto, kv_cache: auto}")
	if c.Engine.Precision != (Precision{}) {
		t.Errorf("explicit auto = %+v, want empty", c.Engine.Precision)
	}
	c = mustDecode(t, seedSynthetic, "engine.precision={weights: fp4}")
	if c.Engine.Precision != (Precision{Weights: "fp4"}) {
		t.Errorf("precision = %+v", c.Engine.Precision)
	}
	for _, tc := range []struct {
		set, path, frag string
	}{
		{"engine.precision.weights=int8", "engine.precision.weights", `must be one of auto, bf16, fp8, fp4, got "int8"`},
		{"engine.precision.kv_cache=fp4", "engine.precision.kv_cache", `must be one of auto, bf16, fp8, got "fp4"`},
		{"engine.precision.weights=8", "engine.precision.weights", "must be a string"},
		{"engine.precision.activations=fp8", "engine.precision.activations", "unknown field; valid fields: weights, kv_cache"},
	} {
		errs := decodeErrs(t, seedSynthetic, tc.set)
		if findErr(errs, tc.path, tc.frag) == nil {
			t.Errorf("%s: want %s: %q, got:\n%v", tc.set, tc.path, tc.frag, errs)
		}
	}
}

func TestDecodeBadConfigs(t *testing.T) {
	const agg = "engine.workers.aggregated."
	cases := []struct {
		name string
		src  string // "" means seedSynthetic
		sets []string
		path string
		frag string
	}{
		{"unknown field", "", []string{agg + "scheduler.schedulr=1"}, agg + "scheduler.schedulr",
			"unknown field; valid fields: max_batched_tokens, max_sequences"},
		{"unknown role field", "", []string{agg + "schedulr={}"}, agg + "schedulr",
			"unknown field; valid fields: hardware, startup_seconds, parallelism, scheduler, kv_cache, timing"},
		{"unknown root field", "", []string{"foo=1"}, "foo", "unknown field; valid fields: traffic, engine"},
		{"unknown union field", "", []string{"traffic.load.rate=1"}, "traffic.load.rate", "unknown field; valid fields: type, concurrency"},
		{"concurrency zero", "", []string{"traffic.load.concurrency=0"}, "traffic.load.concurrency", "must be an int > 0, got 0"},
		{"mode enum", "", []string{"engine.mode=agg"}, "engine.mode", `must be one of aggregated, disaggregated, got "agg"`},
		{"int as string", "", []string{`traffic.load.concurrency="4"`}, "traffic.load.concurrency", `must be an int, got "4" (string)`},
		{"int as bool", "", []string{"traffic.load.concurrency=true"}, "traffic.load.concurrency", "must be an int, got true (bool)"},
		{"int as float", "", []string{"traffic.load.concurrency=4.5"}, "traffic.load.concurrency", "must be an int, got 4.5 (float)"},
		{"int as float 4.0", "", []string{"traffic.source.input_tokens=4.0"}, "traffic.source.input_tokens", "must be an int"},
		{"float NaN", "", []string{"traffic.load={type: poisson, requests_per_second: .nan}"}, "traffic.load.requests_per_second", "must be a finite number"},
		{"float Inf", "", []string{"traffic.stop={requests_per_load_unit: .inf}"}, "traffic.stop.requests_per_load_unit", "must be a finite number"},
		{"float as string", "", []string{`traffic.load={type: poisson, requests_per_second: "8"}`}, "traffic.load.requests_per_second", "must be a number"},
		// YAML reads a numeral beyond float64 as a string; quoted, it is one.
		{"float out of range", "", []string{"traffic.load={type: poisson, requests_per_second: 1e400}"}, "traffic.load.requests_per_second",
			"must be a finite number, got 1e400, which is out of range"},
		{"quoted float out of range", "", []string{`traffic.load={type: poisson, requests_per_second: "1e400"}`}, "traffic.load.requests_per_second",
			`must be a number, got "1e400" (string)`},
		{"bool as string", "", []string{agg + "kv_cache.prefix_caching=yes"}, agg + "kv_cache.prefix_caching", "must be a bool"},
		{"string as int", "", []string{"engine.model=5"}, "engine.model", "must be a string, got 5 (int)"},
		{"union rejects field", "", []string{"traffic.load.type=poisson", "traffic.load.requests_per_second=2"}, "traffic.load",
			"traffic.load.type='poisson' does not accept [concurrency]; accepted keys: type, warmup_seconds, cooldown, requests_per_second, sessions_per_second, profile, seed"},
		{"poisson needs rate", "", []string{"traffic.load={type: poisson}"}, "traffic.load.requests_per_second", "required"},
		{"constant rate needs rate", "", []string{"traffic.load={type: constant_rate}"}, "traffic.load.requests_per_second", "required"},
		{"rate zero", "", []string{"traffic.load={type: constant_rate, requests_per_second: 0}"}, "traffic.load.requests_per_second", "must be > 0, got 0"},
		{"rate unit synthetic", "", []string{"traffic.load={type: poisson, sessions_per_second: 2}"}, "traffic.load.sessions_per_second",
			"synthetic sources take requests_per_second"},
		{"rate unit session", "", append(setSession[:2:2], "traffic.load={type: poisson, requests_per_second: 2}"),
			"traffic.load.requests_per_second", "synthetic-session sources take sessions_per_second"},
		{"synthetic rejects trace_timestamps", "", []string{"traffic.load={type: trace_timestamps}"}, "traffic.load.type",
			"trace_timestamps needs a trace source"},
		{"trace rejects poisson", "", append(setTrace[:3:3], "traffic.load={type: poisson, requests_per_second: 1}"),
			"traffic.load.type", "trace sources accept only trace_timestamps or concurrency"},
		{"speedup with concurrency", "", []string{"traffic.load.speedup=2"}, "traffic.load", "does not accept [speedup]"},
		{"kv_capacity_fraction", "", []string{"traffic.load={type: kv_capacity_fraction}"}, "traffic.load.type",
			`must be one of concurrency, constant_rate, poisson, trace_timestamps, got "kv_capacity_fraction"`},
		{"load type enum", "", []string{"traffic.load={type: burst}"}, "traffic.load.type", "must be one of concurrency, constant_rate, poisson, trace_timestamps"},
		{"source type enum", "", []string{"traffic.source={type: image}"}, "traffic.source.type", `got "image"`},
		{"stop missing", "", []string{"traffic.stop="}, "traffic.stop", "synthetic sources need exactly one of requests, requests_per_load_unit, got none"},
		{"stop both", "", []string{"traffic.stop={requests: 1, requests_per_load_unit: 2}"}, "traffic.stop", "got both"},
		{"stop sessions for synthetic", "", []string{"traffic.stop={requests: 1, sessions: 2}"}, "traffic.stop.sessions", "synthetic sources stop on requests"},
		{"stop vtime for synthetic", "", []string{"traffic.stop={requests: 1, max_virtual_time_seconds: 2}"}, "traffic.stop.max_virtual_time_seconds",
			"synthetic sources reject max_virtual_time_seconds"},
		{"stop requests zero", "", []string{"traffic.stop={requests: 0}"}, "traffic.stop.requests", "must be an int > 0, got 0"},
		{"session stop needs sessions", "", setSession[:1], "traffic.stop.requests", "synthetic-session sources stop on sessions"},
		{"trace stop requests", "", setTrace[:2], "traffic.stop.requests", "trace sources accept only max_virtual_time_seconds and max_trace_seconds"},
		{"stop trace seconds for synthetic", "", []string{"traffic.stop={requests: 1, max_trace_seconds: 2}"}, "traffic.stop.max_trace_seconds",
			"synthetic sources reject max_trace_seconds"},
		{"trace seconds under concurrency", "", []string{setTrace[0], "traffic.load={type: concurrency, concurrency: 4}",
			"traffic.stop={max_trace_seconds: 60}"}, "traffic.stop.max_trace_seconds", "needs traffic.load.type trace_timestamps"},
		{"trace seconds zero", "", []string{setTrace[0], setTrace[1], "traffic.stop={max_trace_seconds: 0}"}, "traffic.stop.max_trace_seconds",
			"must be > 0"},
		{"agentic stop trace seconds", "", []string{"traffic.source={type: trace, paths: [a], format: agentic_mooncake}", "traffic.load={type: trace_timestamps}",
			"traffic.stop={max_trace_seconds: 60}"}, "traffic.stop.max_trace_seconds",
			"agentic_mooncake traces take no traffic.stop (the run ends when the trace does); remove max_trace_seconds"},
		// An agentic trace takes no stop at all: the same words for every stop key.
		{"weka stop requests", "", []string{"traffic.source={type: trace, paths: [a], format: weka}", "traffic.load={type: trace_timestamps}",
			"traffic.stop={requests: 5}"}, "traffic.stop.requests", "weka traces take no traffic.stop (the run ends when the trace does); remove requests"},
		{"agentic stop time", "", []string{"traffic.source={type: trace, paths: [a], format: agentic_mooncake}", "traffic.load={type: trace_timestamps}",
			"traffic.stop={max_virtual_time_seconds: 60}"}, "traffic.stop.max_virtual_time_seconds",
			"agentic_mooncake traces take no traffic.stop (the run ends when the trace does); remove max_virtual_time_seconds"},
		{"trace two paths", "", []string{"traffic.source={type: trace, paths: [a, b]}", "traffic.load={type: trace_timestamps}", "traffic.stop={}"},
			"traffic.source.paths", "mooncake traces take exactly one path, got 2"},
		{"trace empty path", "", []string{`traffic.source={type: trace, paths: [""]}`, "traffic.load={type: trace_timestamps}", "traffic.stop={}"},
			"traffic.source.paths[0]", "must be a non-empty path"},
		{"trace no paths", "", []string{"traffic.source={type: trace}", "traffic.stop={}"}, "traffic.source.paths", "at least one"},
		{"trace format enum", "", []string{"traffic.source={type: trace, paths: [a], format: csv}", "traffic.stop={}"},
			"traffic.source.format", "must be one of mooncake"},
		{"trace rejects synthetic fields", "", []string{"traffic.source={type: trace, paths: [a], input_tokens: 5}", "traffic.stop={}"},
			"traffic.source", "traffic.source.type='trace' does not accept [input_tokens]"},
		{"synthetic rejects session", "", []string{"traffic.source.session={turns: 3}"}, "traffic.source",
			"traffic.source.type='synthetic' does not accept [session]"},
		{"session required", "", []string{"traffic.source={type: synthetic-session}", "traffic.stop={sessions: 1}"},
			"traffic.source.session", "required for synthetic-session sources"},
		{"session ratio", "", append(setSession[:2:2], "traffic.source.session.shared_prefix_ratio=1.5"),
			"traffic.source.session.shared_prefix_ratio", "must be in [0, 1], got 1.5"},
		{"session groups", "", append(setSession[:2:2], "traffic.source.session.prefix_groups=0"),
			"traffic.source.session.prefix_groups", "prefix_groups must be positive when shared_prefix_ratio is positive"},
		{"session turns", "", append(setSession[:2:2], "traffic.source.session.turns=1"),
			"traffic.source.session.turns", "must be >= 2, got 1"},
		{"session delay", "", append(setSession[:2:2], "traffic.source.session.inter_turn_delay_ms=-1"),
			"traffic.source.session.inter_turn_delay_ms", "must be >= 0, got -1"},
		{"session delay spread", "", append(setSession[:2:2], "traffic.source.session.inter_turn_delay_stddev_ms=-5"),
			"traffic.source.session.inter_turn_delay_stddev_ms", "must be >= 0, got -5"},
		{"input tokens", "", []string{"traffic.source.input_tokens=-3"}, "traffic.source.input_tokens", "must be an int > 0, got -3"},
		{"agg rejects prefill", "", []string{"engine.workers.prefill={}"}, "engine.workers", "aggregated mode rejects prefill/decode workers"},
		{"agg requires role", "", []string{"engine.workers={}"}, "engine.workers", "aggregated mode requires workers.aggregated"},
		{"agg rejects kv_transfer", "", []string{"engine.kv_transfer={}"}, "engine.kv_transfer", "aggregated mode rejects kv_transfer"},
		{"disagg rejects agg", "", []string{"engine.mode=disaggregated"}, "engine.workers", "disaggregated mode rejects aggregated workers"},
		{"disagg requires roles", "", []string{"engine.mode=disaggregated"}, "engine.workers", "disaggregated mode requires prefill and decode workers"},
		{"capacity policy", "", []string{agg + "scheduler.capacity_policy=static_batch"}, agg + "scheduler.capacity_policy",
			"must be one of guaranteed_no_evict, max_utilization"},
		{"negative interval", "", []string{agg + "scheduler.prefill_decode_interval=-1"}, agg + "scheduler.prefill_decode_interval",
			"must be >= 0"},
		{"fixed requires blocks", "", []string{agg + "kv_cache.capacity={type: fixed}"}, agg + "kv_cache.capacity.blocks",
			"fixed KV capacity requires blocks"},
		{"fixed rejects fraction", "", []string{agg + "kv_cache.capacity.memory_fraction=0.5"}, agg + "kv_cache.capacity.memory_fraction",
			"fixed KV capacity rejects memory_fraction"},
		{"default rejects blocks", "", []string{agg + "kv_cache.capacity={blocks: 10}"}, agg + "kv_cache.capacity.blocks",
			"default KV capacity rejects blocks"},
		{"memory fraction range", "", []string{agg + "kv_cache.capacity={type: default, memory_fraction: 1.5}"},
			agg + "kv_cache.capacity.memory_fraction", "must be in (0, 1], got 1.5"},
		{"memory fraction zero", "", []string{agg + "kv_cache.capacity={memory_fraction: 0}"},
			agg + "kv_cache.capacity.memory_fraction", "must be in (0, 1], got 0"},
		{"capacity type enum", "", []string{agg + "kv_cache.capacity.type=bytes"}, agg + "kv_cache.capacity.type", "must be one of default, fixed"},
		{"blocks zero", "", []string{agg + "kv_cache.capacity.blocks=0"}, agg + "kv_cache.capacity.blocks", "must be an int > 0, got 0"},
		{"block size vllm", "", []string{agg + "kv_cache.block_size=1"}, agg + "kv_cache.block_size", "must be >= 2 for the vllm backend, got 1"},
		{"block size zero", "", []string{agg + "kv_cache.block_size=0"}, agg + "kv_cache.block_size", "must be an int > 0, got 0"},
		{"bytes per token zero", "", []string{agg + "kv_cache.bytes_per_token=0"}, agg + "kv_cache.bytes_per_token", `must be an int > 0 or "auto", got 0`},
		{"bytes per token word", "", []string{agg + "kv_cache.bytes_per_token=max"}, agg + "kv_cache.bytes_per_token", `must be an int > 0 or "auto"`},
		{"fixed timing needs values", "", []string{agg + "timing={type: fixed, prefill_ms: 5}"}, agg + "timing",
			"fixed timing requires prefill_ms and decode_ms"},
		{"polynomial rejects values", "", []string{agg + "timing.decode_ms=5"}, agg + "timing", "polynomial timing does not accept decode_ms"},
		{"fixed rejects sequence_overhead_us", "", []string{agg + "timing.type=fixed", agg + "timing.prefill_ms=1", agg + "timing.decode_ms=1", agg + "timing.sequence_overhead_us=50"}, agg + "timing", "fixed timing does not accept sequence_overhead_us"},
		{"negative sequence_overhead_us", "", []string{agg + "timing.type=roofline", agg + "timing.sequence_overhead_us=-1"}, agg + "timing.sequence_overhead_us", ">= 0"},
		{"fixed timing negative", "", []string{agg + "timing={type: fixed, prefill_ms: -1, decode_ms: 1}"}, agg + "timing.prefill_ms", "must be >= 0, got -1"},
		{"timing type enum", "", []string{agg + "timing.type=aic"}, agg + "timing.type", "must be one of default, fixed, polynomial"},
		{"timing unknown field", "", []string{agg + "timing.forward=fpm"}, agg + "timing.forward", "unknown field; valid fields: type"},
		{"forward model on polynomial", "", []string{agg + "timing.forward_model=op_level"}, agg + "timing.forward_model",
			"applies to timing type default only"},
		{"forward model unknown", "", []string{agg + "timing={type: default, forward_model: aic}"}, agg + "timing.forward_model",
			"must be one of auto, op_level, fpm"},
		{"parallelism zero", "", []string{agg + "parallelism.tensor=0"}, agg + "parallelism.tensor", "must be an int > 0, got 0"},
		{"parallelism context", "", []string{agg + "parallelism.prefill_context=2"}, agg + "parallelism.prefill_context", "unknown field"},
		{"max sequences negative", "", []string{agg + "scheduler.max_sequences=-1"}, agg + "scheduler.max_sequences", "must be an int > 0, got -1"},
		{"startup negative", "", []string{agg + "startup_seconds=-1"}, agg + "startup_seconds", "must be in [0, 86400], got -1"},
		{"startup a day", "", []string{agg + "startup_seconds=1e12"}, agg + "startup_seconds", "must be in [0, 86400], got 1e+12"},
		{"frontend negative", "", []string{"engine.frontend.overhead_ms=-1"}, "engine.frontend.overhead_ms", "must be >= 0, got -1"},
		{"frontend unknown field", "", []string{"engine.frontend.jitter_ms=1"}, "engine.frontend.jitter_ms", "unknown field; valid fields: overhead_ms"},
		{"ramp negative", "", []string{"traffic.load.ramp_seconds=-3"}, "traffic.load.ramp_seconds", "must be >= 0, got -3"},
		{"ramp open loop", "", []string{"traffic.load={type: poisson, requests_per_second: 2, ramp_seconds: 1}"}, "traffic.load",
			"does not accept [ramp_seconds]"},
		{"warmup negative", "", []string{"traffic.load.warmup_seconds=-1"}, "traffic.load.warmup_seconds", "must be >= 0, got -1"},
		{"warmup beyond the bound", "", []string{"traffic.load.warmup_seconds=1e9"}, "traffic.load.warmup_seconds", "must be between 0 and 1e+07, got 1e+09"},
		{"warmup a string", "", []string{"traffic.load.warmup_seconds=soon"}, "traffic.load.warmup_seconds", `must be a number, got "soon" (string)`},
		{"agg role hardware", "", []string{agg + "hardware=h100_sxm"}, agg + "hardware", "only prefill and decode roles may override hardware"},
		{"role model override", "", []string{agg + "model=x"}, agg + "model", "per-role overrides are not allowed; set engine.model"},
		{"encoder role", "", []string{"engine.workers.encoder={}"}, "engine.workers.encoder", "encoder workers"},
		{"backend enum", "", []string{"engine.backend=tgi"}, "engine.backend", "must be one of vllm, sglang, trtllm"},
		{"model required", "", []string{"engine.model="}, "engine.model", "must be a string, got null"},
		{"model empty", "", []string{`engine.model=""`}, "engine.model", "required"},
		{"replicas auto", "", []string{agg + "parallelism.replicas=auto"}, agg + "parallelism.replicas", `must be an int, got "auto" (string)`},
		{"context length word", "", []string{"engine.context_length=big"}, "engine.context_length", `must be an int > 0 or "max", got "big" (string)`},
		{"context length zero", "", []string{"engine.context_length=0"}, "engine.context_length", `must be an int > 0 or "max", got 0`},
		{"sglang chunked", "", []string{"engine.backend=sglang", "engine.enable_chunked_prefill=false", agg + "kv_cache.block_size=1"},
			"engine.enable_chunked_prefill", "false is not supported by the sglang backend"},
		{"kv_transfer bytes zero", seedDisaggregated, []string{"engine.kv_transfer.bytes_per_token=0"}, "engine.kv_transfer.bytes_per_token", `must be an int > 0 or "auto", got 0`},
		{"kv_transfer bandwidth zero", seedDisaggregated, []string{"engine.kv_transfer.bandwidth_gb_per_second=0"},
			"engine.kv_transfer.bandwidth_gb_per_second", "must be > 0, got 0"},
		{"kv_transfer timing mode", seedDisaggregated, []string{"engine.kv_transfer.timing_mode=eager"}, "engine.kv_transfer.timing_mode",
			"must be one of destination_missing, full_prompt"},
		{"round robin knob", "", []string{"router.temperature=0.5"}, "router.temperature", "only valid with router.policy kv_router"},
		{"round robin aic", "", []string{"router.prefill_load_model.type=aic"}, "router.prefill_load_model.type", "aic requires router.policy kv_router"},
		{"kv knob negative", "", []string{"router={policy: kv_router, overlap_score_credit: -1}"}, "router.overlap_score_credit", "must be >= 0, got -1"},
		{"router policy enum", "", []string{"router.policy=hash"}, "router.policy", "must be one of round_robin, kv_router, random, least_loaded"},
		{"random policy rejects kv knobs", "", []string{"router={policy: random, temperature: 0.5}"}, "router.temperature", "only valid with router.policy kv_router, got random"},
		{"round robin seed", "", []string{"router.seed=7"}, "router.seed", "only valid with router.policy kv_router or random, got round_robin; remove it or set router.policy to kv_router or random"},
		{"least loaded seed", "", []string{"router={policy: least_loaded, seed: 7}"}, "router.seed", "only valid with router.policy kv_router or random, got least_loaded"},
		{"router seed negative", "", []string{"router={policy: random, seed: -1}"}, "router.seed", "got -1"},
		{"router seed a word", "", []string{"router={policy: kv_router, seed: lucky}"}, "router.seed", `got "lucky" (string)`},
		{"router seed past 64 bits", "", []string{"router={policy: kv_router, seed: 18446744073709551616}"}, "router.seed",
			"must be an int between 0 and 18446744073709551615, got 18446744073709551616, which is out of range"},
		{"load seed past 64 bits", "", []string{"traffic.load={type: poisson, requests_per_second: 2, seed: 99999999999999999999}"}, "traffic.load.seed",
			"must be an int between 0 and 18446744073709551615, got 99999999999999999999, which is out of range"},
		{"load model enum", "", []string{"router.prefill_load_model.type=fpm"}, "router.prefill_load_model.type", "must be one of none, aic"},
		{"planner policy enum", "", []string{"planner.policy=auto"}, "planner.policy", `must be one of disabled, enabled, got "auto"`},
		{"planner key when disabled", "", []string{"planner.target=sla"}, "planner.target", "only valid when planner.policy is enabled"},
		{"planner bucket square", "", []string{"planner={policy: enabled, fpm_sample_bucket_size: 15}"}, "planner.fpm_sample_bucket_size", "perfect square"},
		{"sla exclusive", "", []string{"evaluation.sla={ttft_ms: 100, e2e_ms: 1000}"}, "evaluation.sla.e2e_ms",
			"sla.e2e_ms is mutually exclusive with sla.ttft_ms/itl_ms"},
		{"sla zero", "", []string{"evaluation.sla.ttft_ms=0"}, "evaluation.sla.ttft_ms", "must be > 0, got 0"},
		{"sla percentile zero", "", []string{"evaluation.sla={ttft_ms: 500, p99_itl_ms: 0}"}, "evaluation.sla.p99_itl_ms", "must be > 0, got 0"},
		{"sla percentile negative", "", []string{"evaluation.sla.p50_e2e_ms=-1"}, "evaluation.sla.p50_e2e_ms", "must be > 0, got -1"},
		{"sla percentile unknown", "", []string{"evaluation.sla.p98_itl_ms=40"}, "evaluation.sla.p98_itl_ms",
			"unknown field; valid fields: ttft_ms, itl_ms, e2e_ms, p50_ttft_ms, p90_ttft_ms, p95_ttft_ms, p99_ttft_ms, p50_itl_ms"},
		{"execution rejected", "", []string{"execution={resources: {cpu_limit: 4}}"}, "execution", "not supported by servesweep predict"},
		// Without a Marker, the constructs of a sweep spec are plain schema errors (grid's
		// ConcreteMarker names them; see grid's TestConcreteMarker).
		{"optimization unknown", "", []string{"optimization={target: throughput}"}, "optimization",
			"unknown field; valid fields: traffic, engine, router, planner, evaluation"},
		{"optimizer unknown", "", []string{"optimizer={algorithm: random}"}, "optimizer", "unknown field; valid fields: traffic"},
		{"choices domain", "", []string{"traffic.load.concurrency={choices: [8, 16]}"}, "traffic.load.concurrency",
			"must be an int, got a mapping"},
		{"range domain on mapping", "", []string{"traffic.load={range: {min: 1, max: 4}}"}, "traffic.load.range",
			"unknown field; valid fields: type, concurrency"},
		{"preset", "", []string{agg + "parallelism.preset=default"}, agg + "parallelism.preset",
			"unknown field; valid fields: replicas, tensor, pipeline, attention_data, moe_tensor, moe_expert, redundant_experts"},
		{"speculation bad", "", []string{"engine.speculation={kind: eagle, num_speculative_tokens: 6, acceptance_rates: [0.5]}"},
			"engine.speculation.num_speculative_tokens", "must be in [1, 5], got 6"},
		{"seed negative", "", []string{"traffic.load={type: poisson, requests_per_second: 1, seed: -1}"}, "traffic.load.seed", "must be an int between 0 and"},
		{"seed with concurrency", "", []string{"traffic.load.seed=0"}, "traffic.load", "does not accept [seed]"},
		{"not a mapping", "", []string{"engine.workers.aggregated.parallelism=[1, 2]"}, agg + "parallelism", "must be a mapping, got a list"},
		{"paths not a list", "", []string{"traffic.source={type: trace, paths: a.jsonl}", "traffic.stop={}"}, "traffic.source.paths",
			`must be a list of strings, got "a.jsonl" (string)`},
		{"engine missing", "traffic: {stop: {requests: 1}}\n", nil, "engine", "required"},
		{"duplicate key", "engine:\n  model: a\n  model: b\n", nil, "engine.model", "duplicate key (first defined on line 2, again on line 3)"},
		{"merge key", "engine:\n  <<: {model: a}\n", nil, "engine.<<", "merge keys are not supported"},
		{"yaml syntax", "engine: [\n", nil, "", "invalid YAML: line"},
		// yaml.v3 says line 3 (the mapping's); the tab is on line 4.
		{"tab in the indentation", "traffic:\n  source:\n    type: synthetic\n\tinput_tokens: 5\n", nil, "",
			"invalid YAML: line 4: a tab character in the indentation (YAML indents with spaces only)"},
		// A line that begins with a tab: yaml.v3 says "found character that cannot start any token".
		{"tab beginning a line", "traffic:\n\tsource: {type: synthetic}\n", nil, "",
			"invalid YAML: line 2: a tab character in the indentation (YAML indents with spaces only)"},
		// A Latin-1 byte: yaml.v3 names no line.
		{"not UTF-8", "engine:\n  model: synth\xe9tic\n", nil, "",
			"invalid YAML: line 2: byte 0xE9 is not UTF-8 (the file was saved in another encoding, e.g. Latin-1); save it as UTF-8"},
		{"top level list", "- a\n", nil, "", "the top level must be a mapping"},
		{"two documents", seedSynthetic + "---\nengine: {}\n", nil, "", "more than one YAML document (a second begins on line " +
			strconv.Itoa(strings.Count(seedSynthetic, "\n")+2) + ")"},
	}
	if len(cases) < 30 {
		t.Fatalf("only %d cases", len(cases))
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			src := tc.src
			if src == "" {
				src = seedSynthetic
			}
			errs := decodeErrs(t, src, tc.sets...)
			e := findErr(errs, tc.path, tc.frag)
			if e == nil {
				t.Fatalf("want error at %q containing %q, got:\n%v", tc.path, tc.frag, errs)
			}
			if e.Unsupported {
				t.Errorf("error %v is marked Unsupported", e)
			}
			if errors.Is(errs, errors.ErrUnsupported) {
				t.Errorf("a schema error must not report errors.ErrUnsupported")
			}
			if e.File != "test.yaml" {
				t.Errorf("File = %q", e.File)
			}
		})
	}
}

// A token count of 0 in a synthetic source is one config error naming the field and what is valid:
// dynosim-spec.md §3.1.1 has input_tokens, output_tokens, new_input_tokens_per_turn and
// output_tokens_per_turn all "int>0".
func TestDecodeZeroTokenCounts(t *testing.T) {
	for _, c := range []struct {
		field   string
		session bool // a synthetic-session source (setSession) rather than the seed's synthetic one
	}{
		{"input_tokens", false},
		{"output_tokens", false},
		{"new_input_tokens_per_turn", true},
		{"output_tokens_per_turn", true},
	} {
		var sets []string
		if c.session {
			sets = slices.Clone(setSession)
		}
		sets = append(sets, "traffic.source."+c.field+"=0")
		errs := decodeErrs(t, seedSynthetic, sets...)
		want := "test.yaml (--set traffic.source." + c.field + "=0): traffic.source." + c.field + ": must be an int > 0, got 0"
		if len(errs) != 1 || errs[0].Path != "traffic.source."+c.field || errs.Error() != want {
			t.Errorf("%s = 0: got\n%v\nwant exactly %s", c.field, errs, want)
		}
	}
}

func TestDecodeCollectsAllErrors(t *testing.T) {
	errs := decodeErrs(t, seedSynthetic,
		"traffic.load.concurrency=0",
		"engine.mode=agg",
		"engine.workers.aggregated.scheduler.schedulr=1",
		`engine.workers.aggregated.parallelism.tensor="2"`)
	want := []string{
		"test.yaml (--set traffic.load.concurrency=0): traffic.load.concurrency: must be an int > 0, got 0",
		`test.yaml (--set engine.mode=agg): engine.mode: must be one of aggregated, disaggregated, got "agg"`,
		"test.yaml (--set engine.workers.aggregated.scheduler.schedulr=1): engine.workers.aggregated.scheduler.schedulr: unknown field; valid fields: max_batched_tokens, max_sequences",
		`test.yaml (--set engine.workers.aggregated.parallelism.tensor="2"): engine.workers.aggregated.parallelism.tensor: must be an int, got "2" (string)`,
	}
	for _, w := range want {
		if !strings.Contains(errs.Error(), w) {
			t.Errorf("missing %q in:\n%v", w, errs)
		}
	}
	if len(errs) != len(want) {
		t.Errorf("got %d errors, want %d:\n%v", len(errs), len(want), errs)
	}
	if n := strings.Count(errs.Error(), "\n"); n != len(errs)-1 {
		t.Errorf("Error() should print one error per line")
	}
}

// A misspelt key in the middle of a --set path is reported at that key, and blamed on the
// --set, not on the file.
func TestDecodeMisspeltSetPathNamesTheSet(t *testing.T) {
	errs := decodeErrs(t, seedSynthetic, "engine.precison.weights=fp4")
	want := "test.yaml (--set engine.precison.weights=fp4): engine.precison: unknown field"
	if len(errs) != 1 || !strings.Contains(errs.Error(), want) {
		t.Errorf("errors = %v, want one containing %q", errs, want)
	}
}

func TestDecodeNoCascadeFromBadType(t *testing.T) {
	// A bad union type reports only itself, not every rule that depends on it.
	errs := decodeErrs(t, seedSynthetic, "traffic.source={type: [trace], paths: [a]}")
	if len(errs) != 1 || errs[0].Path != "traffic.source.type" {
		t.Errorf("errors = %v", errs)
	}
	errs = decodeErrs(t, seedSynthetic, "traffic.load=5")
	if len(errs) != 1 || errs[0].Path != "traffic.load" {
		t.Errorf("errors = %v", errs)
	}
}

func TestSetCreatesPath(t *testing.T) {
	// router and the scheduler are absent from minimalEngine; --set creates them.
	c := mustDecode(t, minimalEngine, "router.policy=round_robin",
		"engine.workers.aggregated.scheduler.max_sequences=64",
		"evaluation.sla.ttft_ms=250")
	if c.Engine.Workers.Aggregated.Scheduler != (Scheduler{MaxBatchedTokens: 8192, MaxSequences: 64, CapacityPolicy: CapacityGuaranteedNoEvict}) {
		t.Errorf("scheduler = %+v", c.Engine.Workers.Aggregated.Scheduler)
	}
	if c.Evaluation.SLA == nil || c.Evaluation.SLA.TTFTMs == nil || *c.Evaluation.SLA.TTFTMs != 250 {
		t.Errorf("sla = %+v", c.Evaluation.SLA)
	}
	// A null intermediate is replaced by a mapping.
	c = mustDecode(t, minimalEngine+"router:\n", "router.policy=round_robin")
	if c.Router.Policy != PolicyRoundRobin {
		t.Errorf("router = %+v", c.Router)
	}
	// An empty file plus --set.
	c = mustDecode(t, "", "engine.model=m", "engine.hardware=h", "engine.workers.aggregated.timing.type=polynomial",
		"engine.workers.aggregated.kv_cache.capacity={type: fixed, blocks: 5}")
	if c.Engine.Model != "m" || c.Engine.Workers.Aggregated.KVCache.Capacity.Blocks != 5 {
		t.Errorf("engine = %+v", c.Engine)
	}
	// The value is split at the first '='.
	c = mustDecode(t, minimalEngine, "engine.model=org/a=b")
	if c.Engine.Model != "org/a=b" {
		t.Errorf("model = %q", c.Engine.Model)
	}
	// An empty right-hand side is null: an omitted optional mapping.
	c = mustDecode(t, seedSynthetic, "router=", "traffic=")
	if c.Router.Policy != PolicyRoundRobin || !reflect.DeepEqual(c.Traffic, wholeTrafficDefault) {
		t.Errorf("router %+v traffic %+v", c.Router, c.Traffic)
	}
}

func TestSetLastWriteWins(t *testing.T) {
	c := mustDecode(t, seedSynthetic, "traffic.load.concurrency=32", "traffic.load.concurrency=64")
	if c.Traffic.Load.Concurrency != 64 {
		t.Errorf("concurrency = %d", c.Traffic.Load.Concurrency)
	}
	c = mustDecode(t, seedSynthetic, "traffic.load={type: poisson, requests_per_second: 8}", "traffic.load={type: concurrency}")
	if !reflect.DeepEqual(c.Traffic.Load, Load{Type: LoadConcurrency, Concurrency: 10}) {
		t.Errorf("load = %+v", c.Traffic.Load)
	}
}

func TestSetReplacesTaggedUnion(t *testing.T) {
	c := mustDecode(t, seedSynthetic, "traffic.load={type: constant_rate, requests_per_second: 8}")
	if !reflect.DeepEqual(c.Traffic.Load, Load{Type: LoadConstantRate, RequestsPerSecond: 8}) {
		t.Errorf("load = %+v", c.Traffic.Load)
	}
	// Setting only the type keeps the old variant's fields, which the new type rejects.
	errs := decodeErrs(t, seedSynthetic, "traffic.load.type=constant_rate", "traffic.load.requests_per_second=8")
	if findErr(errs, "traffic.load", "traffic.load.type='constant_rate' does not accept [concurrency]") == nil {
		t.Errorf("errors = %v", errs)
	}
	c = mustDecode(t, seedSynthetic, "engine.workers.aggregated.kv_cache.capacity={type: fixed, blocks: 7}")
	if c.Engine.Workers.Aggregated.KVCache.Capacity != (KVCapacity{Type: CapacityFixed, Blocks: 7}) {
		t.Errorf("capacity = %+v", c.Engine.Workers.Aggregated.KVCache.Capacity)
	}
}

func TestSetMalformed(t *testing.T) {
	cases := []struct {
		set  string
		frag string
	}{
		{"traffic.source.paths.0=/tmp/x.jsonl", "sequence indexes are not supported (traffic.source.paths.0)"},
		{"0=1", "sequence indexes are not supported"},
		{"traffic.source.components[0].weight=2", "sequence indexes are not supported (traffic.source.components[0].weight)"},
		{"engine.model", "missing '='"},
		{"=5", "empty path"},
		{" =5", "empty path"},
		{"engine..model=x", "empty segment"},
		{"engine.model.", "missing '='"},
		{"engine.model.=x", "empty segment"},
		{"traffic.load={type: [", "invalid YAML value"},
		{"engine.model=caf\xe9", "invalid YAML value: byte 0xE9 is not UTF-8 (the shell passed another encoding, e.g. Latin-1); give it in UTF-8"},
		{"router.policy={choices:[round_robin,kv_router]}", "invalid YAML value: did not find expected ',' or '}'; " +
			"in a {...} mapping a key's colon needs a space after it: {choices: [a, b]}, not {choices:[a,b]}"},
		{"engine.model.name=x", `engine.model is "meta-llama/Meta-Llama-3.1-8B-Instruct" (string), not a mapping`},
		{"traffic.source.paths.first=x", ""},
	}
	for _, tc := range cases {
		src := seedSynthetic
		if strings.HasPrefix(tc.set, "traffic.source.paths.first") {
			src = seedDisaggregated
			tc.frag = "traffic.source.paths is a list; sequence indexes are not supported"
		}
		errs := decodeErrs(t, src, tc.set)
		if len(errs) != 1 || errs[0].Path != "" || !strings.Contains(errs[0].Msg, tc.frag) ||
			!strings.Contains(errs[0].Msg, fmt.Sprintf("--set %q", tc.set)) {
			t.Errorf("--set %q: errors = %v", tc.set, errs)
		}
	}
	// Every malformed --set is reported.
	errs := decodeErrs(t, seedSynthetic, "a", "b.0=1", "c=1")
	if len(errs) != 2 {
		t.Errorf("errors = %v", errs)
	}
}

// An error about a field a --set gave names that --set (the last one covering the field); an
// error about a field of the file does not.
func TestSetErrorsNameTheSet(t *testing.T) {
	errs := decodeErrs(t, seedSynthetic, "traffic.load.concurrency=0", "traffic.load={type: concurrency, concurrency: -1}",
		"engine.bogus=1")
	want := []string{ // schema errors of the walk come before range errors
		"test.yaml (--set engine.bogus=1): engine.bogus: unknown field",
		"test.yaml (--set traffic.load={type: concurrency, concurrency: -1}): traffic.load.concurrency: must be an int > 0, got -1",
	}
	if len(errs) != len(want) {
		t.Fatalf("errors = %v, want %d", errs, len(want))
	}
	for i, w := range want {
		if !strings.HasPrefix(errs[i].Error(), w) {
			t.Errorf("error %d = %q, want prefix %q", i, errs[i].Error(), w)
		}
	}
	// An element of a list the --set gave is the --set's too.
	errs = decodeErrs(t, seedDisaggregated, "traffic.source.paths=['']")
	if len(errs) == 0 || errs[0].Set != "traffic.source.paths=['']" || errs[0].Path != "traffic.source.paths[0]" {
		t.Errorf("list element error: %v", errs)
	}
	// A member the union's variant refuses is reported at the union, and is the --set's.
	set := "engine.workers.aggregated.timing.sequence_overhead_us=50"
	errs = decodeErrs(t, seedSynthetic, set)
	if len(errs) != 1 || errs[0].Set != set || errs[0].Path != "engine.workers.aggregated.timing" {
		t.Errorf("refused union member: %v", errs)
	}
	// A section the mode rejects that a --set below it wrote is the --set's.
	set = "engine.kv_transfer.latency_ms=100"
	errs = decodeErrs(t, seedSynthetic, set)
	if len(errs) != 1 || errs[0].Set != set || errs[0].Path != "engine.kv_transfer" || !strings.Contains(errs[0].Msg, "aggregated mode rejects kv_transfer") {
		t.Errorf("rejected section: %v", errs)
	}
	// A mode's refusal is the --set that chose the mode, not one that wrote into the section.
	errs = decodeErrs(t, seedSynthetic, "engine.workers.aggregated.parallelism.replicas=4", "engine.mode=disaggregated")
	if len(errs) == 0 || errs[0].Set != "engine.mode=disaggregated" || errs[0].Path != "engine.workers" ||
		!strings.Contains(errs[0].Msg, "disaggregated mode rejects aggregated workers") {
		t.Errorf("mode's refusal: %v", errs)
	}
	errs = decodeErrs(t, seedSynthetic, "engine.mode=disaggregated")
	for _, e := range errs {
		if e.Set != "engine.mode=disaggregated" {
			t.Errorf("mode's refusal without another --set: %v, want every error on the mode's --set", e)
		}
	}
	// A field the file leaves out that a --set path through it made a mapping is the --set's.
	set = "router.seed.x=5"
	errs = decodeErrs(t, seedSynthetic, set)
	if len(errs) == 0 || errs[0].Set != set || errs[0].Path != "router.seed" || !strings.Contains(errs[0].Msg, "got a mapping") {
		t.Errorf("a scalar made a mapping: %v", errs)
	}
	errs = decodeErrs(t, strings.Replace(seedSynthetic, "concurrency: 16", "concurrency: 0", 1), "engine.model=x")
	if len(errs) == 0 || !strings.HasPrefix(errs[0].Error(), "test.yaml: traffic.load.concurrency") {
		t.Errorf("a file's own error names the file only: %v", errs)
	}
}

func TestSetThroughAlias(t *testing.T) {
	src := minimalEngine + `
traffic:
  source: &src {type: synthetic, input_tokens: 10, output_tokens: 5}
  load: {type: concurrency, concurrency: 2}
  stop: {requests: 3}
`
	c := mustDecode(t, src)
	if c.Traffic.Source.InputTokens != 10 {
		t.Fatalf("source = %+v", c.Traffic.Source)
	}
	// Aliases are followed when decoding, and a --set through an alias does not edit the anchor.
	shared := `engine:
  mode: disaggregated
  model: m
  hardware: h
  workers:
    prefill: &role
      parallelism: {replicas: 2}
      kv_cache: {capacity: {type: fixed, blocks: 10}}
      timing: {type: polynomial}
    decode: *role
`
	c, _ = decodeLenient(t, shared, "engine.workers.decode.parallelism.replicas=5")
	if c.Engine.Workers.Prefill.Parallelism.Replicas != 2 || c.Engine.Workers.Decode.Parallelism.Replicas != 5 {
		t.Errorf("replicas prefill %d decode %d", c.Engine.Workers.Prefill.Parallelism.Replicas,
			c.Engine.Workers.Decode.Parallelism.Replicas)
	}
	if c.Engine.Workers.Prefill.Scheduler.MaxSequences != 1 || c.Engine.Workers.Decode.Scheduler.MaxSequences != 256 {
		t.Errorf("role defaults through alias: prefill %d decode %d", c.Engine.Workers.Prefill.Scheduler.MaxSequences,
			c.Engine.Workers.Decode.Scheduler.MaxSequences)
	}
}

func TestDecodeLoadFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "dynosim-synthetic.yaml")
	if err := os.WriteFile(path, []byte(seedSynthetic), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := LoadFile(path, setSession)
	if err != nil {
		t.Fatal(err)
	}
	if c.File != path || c.Traffic.Stop.Sessions != 50 {
		t.Errorf("config = %+v", c)
	}
	_, err = LoadFile(filepath.Join(dir, "missing.yaml"), nil)
	var ce *Error
	if !errors.As(err, &ce) || !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "missing.yaml: cannot read config") {
		t.Errorf("missing file error = %v", err)
	}
	if err := os.WriteFile(path, []byte("engine:\n  mode: agg\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = LoadFile(path, nil)
	if err == nil || !strings.Contains(err.Error(), path+`: engine.mode: must be one of aggregated, disaggregated, got "agg"`) {
		t.Errorf("error = %v", err)
	}
}

func TestConfigValidateHandBuilt(t *testing.T) {
	c := mustDecode(t, seedSynthetic)
	c.Traffic.Load = Load{Type: LoadPoisson, RequestsPerSecond: 2, Concurrency: 4}
	c.Engine.Workers.Aggregated.Timing = Timing{Type: TimingFixed}
	err := c.Validate()
	var ces Errors
	if !errors.As(err, &ces) {
		t.Fatalf("Validate = %v", err)
	}
	if findErr(ces, "traffic.load", "does not accept [concurrency]") == nil ||
		findErr(ces, "engine.workers.aggregated.timing", "fixed timing requires prefill_ms and decode_ms") == nil {
		t.Errorf("errors = %v", ces)
	}
	if err := (&Config{}).Validate(); err == nil {
		t.Errorf("zero Config should not validate")
	}
}

func TestErrorFormat(t *testing.T) {
	cases := []struct {
		e    Error
		want string
	}{
		{Error{File: "a.yaml", Path: "engine.mode", Msg: "bad"}, "a.yaml: engine.mode: bad"},
		{Error{File: "a.yaml", Msg: "invalid YAML: line 3: x"}, "a.yaml: invalid YAML: line 3: x"},
		{Error{Path: "engine.mode", Msg: "bad"}, "engine.mode: bad"},
	}
	for _, tc := range cases {
		if got := tc.e.Error(); got != tc.want {
			t.Errorf("Error() = %q, want %q", got, tc.want)
		}
	}
	if errors.Is(&Error{Msg: "x"}, errors.ErrUnsupported) {
		t.Errorf("a plain Error is not ErrUnsupported")
	}
}

// TestFixedTimingBadValuesNotMissing checks that fixed timing values given but refused (a
// negative prefill_ms, a NaN decode_ms) get their own errors and no "requires prefill_ms and
// decode_ms", which would say they were missing.
func TestFixedTimingBadValuesNotMissing(t *testing.T) {
	agg := "engine.workers.aggregated."
	errs := decodeErrs(t, seedSynthetic, agg+"timing={type: fixed, prefill_ms: -1, decode_ms: .nan}")
	if findErr(errs, agg+"timing.prefill_ms", "must be >= 0, got -1") == nil || findErr(errs, agg+"timing.decode_ms", "finite") == nil {
		t.Errorf("want errors at timing.prefill_ms and timing.decode_ms, got:\n%v", errs)
	}
	if e := findErr(errs, agg+"timing", "requires"); e != nil {
		t.Errorf("values given but refused are reported missing: %v", e)
	}
}

// TestSLAPercentileBounds: the 16 percentile keys decode beside the per-request bounds or alone,
// and PercentileBounds lists them by latency, then percentile.
func TestSLAPercentileBounds(t *testing.T) {
	c := mustDecode(t, minimalEngine, "evaluation.sla={p99_itl_ms: 40, p99_ttft_ms: 1000, p50_ttft_ms: 300, p95_tpot_ms: 20, p90_e2e_ms: 5000}")
	var got []string
	for _, b := range c.Evaluation.SLA.PercentileBounds() {
		got = append(got, fmt.Sprintf("%s=%g", b.Key(), b.Ms))
	}
	if want := "p50_ttft_ms=300 p99_ttft_ms=1000 p99_itl_ms=40 p95_tpot_ms=20 p90_e2e_ms=5000"; strings.Join(got, " ") != want {
		t.Errorf("bounds %s, want %s", strings.Join(got, " "), want)
	}
	if c.Evaluation.SLA.HasRequestBounds() {
		t.Error("HasRequestBounds with percentile bounds only")
	}
	c = mustDecode(t, minimalEngine, "evaluation.sla={ttft_ms: 500, e2e_ms: null, p90_itl_ms: 30, p95_itl_ms: 35, p50_tpot_ms: 10, p90_tpot_ms: 12, "+
		"p99_tpot_ms: 15, p95_ttft_ms: 900, p90_ttft_ms: 800, p50_itl_ms: 25, p99_itl_ms: 40, p50_e2e_ms: 1, p95_e2e_ms: 2, p99_e2e_ms: 3}")
	if s := c.Evaluation.SLA; !s.HasRequestBounds() || len(s.PercentileBounds()) != 12 || *s.TTFTMs != 500 || *s.P95TTFTMs != 900 {
		t.Errorf("sla %+v: %d percentile bounds, want 12", s, len(s.PercentileBounds()))
	}
	if (*SLA)(nil).PercentileBounds() != nil || (*SLA)(nil).HasRequestBounds() {
		t.Error("nil SLA has bounds")
	}
}

// kv_cache.capacity.max_tokens: null reads as omitted (no cap), as reserve_gib's null does; a
// number is the cap.
func TestDecodeMaxTokensNull(t *testing.T) {
	const path = "engine.workers.aggregated.kv_cache.capacity"
	for _, tc := range []struct {
		set  string
		want int
	}{
		{path + "={type: default, max_tokens: null}", 0},
		{path + "={type: default, reserve_gib: null, max_tokens: 4096}", 4096},
	} {
		c := mustDecode(t, seedSynthetic, tc.set)
		if got := c.Engine.Workers.Aggregated.KVCache.Capacity; got.MaxTokens != tc.want || got.ReserveGiB != nil {
			t.Errorf("%s: max_tokens %d, reserve_gib %v; want %d and nil", tc.set, got.MaxTokens, got.ReserveGiB, tc.want)
		}
	}
}

// kv_cache.capacity.memory_fraction: null reads as omitted, as reserve_gib's and max_tokens' null
// do: the backend's default fraction (vLLM 0.9, SGLang 0.88); under a fixed capacity it is
// accepted as an omitted key.
func TestDecodeMemoryFractionNull(t *testing.T) {
	const path = "engine.workers.aggregated.kv_cache.capacity"
	for _, tc := range []struct {
		sets []string
		want float64
	}{
		{[]string{path + "={type: default, memory_fraction: null}"}, 0.9},
		{[]string{path + "={type: default, memory_fraction: null}", "engine.backend=sglang"}, 0.88},
		{[]string{path + "={type: default, memory_fraction: null, reserve_gib: null, max_tokens: null}"}, 0.9},
		{[]string{path + "={type: fixed, blocks: 3, memory_fraction: null}"}, 0},
	} {
		c := mustDecode(t, seedSynthetic, tc.sets...)
		if got := c.Engine.Workers.Aggregated.KVCache.Capacity; got.MemoryFraction != tc.want {
			t.Errorf("%v: memory_fraction %g, want %g", tc.sets, got.MemoryFraction, tc.want)
		}
	}
}

// A traffic section that leaves its load or a synthetic source's lengths out takes their
// defaults, and DefaultedTrafficNote names each with the value it took; a complete section, or
// none at all (DefaultTrafficNote's case), has no such note.
func TestDefaultedTrafficNote(t *testing.T) {
	const engine = "engine: {mode: aggregated, model: m, hardware: h, backend: vllm, workers: {aggregated: {}}}\n"
	for _, c := range []struct{ yaml, want string }{
		{"traffic: {source: {type: synthetic}, stop: {requests: 5}}\n" + engine,
			"d.yaml: not given, so the run takes the default: traffic.load (concurrency, concurrency 10), traffic.source.input_tokens (1024), " +
				"traffic.source.output_tokens (128) (docs/predict.md); give them to choose"},
		{"traffic: {source: {type: synthetic, input_tokens: 64}, load: {type: concurrency, concurrency: 2}, stop: {requests: 5}}\n" + engine,
			"d.yaml: not given, so the run takes the default: traffic.source.output_tokens (128) (docs/predict.md); give them to choose"},
		{"traffic: {source: {type: synthetic, input_tokens: 64, output_tokens: 8}, load: {type: concurrency, concurrency: 2}, stop: {requests: 5}}\n" + engine, ""},
		{engine, ""},
	} {
		cfg, err := Decode([]byte(c.yaml), "d.yaml", nil)
		if err != nil {
			t.Fatalf("%s: %v", c.yaml, err)
		}
		if got := DefaultedTrafficNote(cfg); got != c.want {
			t.Errorf("%s: note %q, want %q", c.yaml, got, c.want)
		}
	}
}

// TestYAMLParserErrorsAtTheirLines checks the lines of yaml.v3's parser errors, which it reports
// one line early (the 0-based line of the construct they arose in), hand-read from each document.
func TestYAMLParserErrorsAtTheirLines(t *testing.T) {
	cases := []struct{ doc, want string }{
		// A flow mapping left open on line 2.
		{"traffic:\n  source: {type: synthetic, input_tokens: 100\n  load: {type: concurrency}\n",
			"line 2: did not find expected ',' or '}'"},
		// A key on line 4 indented less than the mapping of line 3 it would belong to.
		{"traffic:\n  source:\n    type: synthetic\n   load: 3\n",
			"line 4: did not find expected key (in the mapping that begins on line 2)"},
		// A key on line 3 inside the list that begins on line 2.
		{"a:\n  - 1\n  b: 2\n", "line 3: did not find expected '-' indicator (in the list that begins on line 2)"},
		// A list item after a mapping's key on line 1: yaml.v3 says line 1.
		{"a: 1\n- 2\n", "line 2: did not find expected key"},
		// On the first line, yaml.v3 gives no line at all.
		{"a: [1, 2]]\n", "line 1: did not find expected key"},
		// A flow list opened on line 4 and never closed.
		{"traffic:\n  source:\n    type: synthetic\n    input_tokens: [1,\n      2\n  load: 1\n",
			"line 5: did not find expected ',' or ']' (in the list that begins on line 4)"},
		// Scanner errors keep yaml.v3's lines, which are right.
		{"a: 1\nb: 2\n  c: 3\n", "line 3: mapping values are not allowed in this context"},
		// A scanner error that begins like a parser's, numbered right by yaml.v3: kept.
		{"a: 1\nb: *\nc: 3\n", "line 2: did not find expected alphabetic or numeric character"},
		// An alias of no anchor, which yaml.v3 reports at no line, at its first use (*y, not *yy).
		{"a: &yy 1\nb: *yy\nc: [*y, 2]\n", "line 3: unknown anchor 'y' referenced (no &y defines it before this line)"},
	}
	for _, c := range cases {
		_, err := Decode([]byte(c.doc), "c.yaml", nil)
		if want := "c.yaml: invalid YAML: " + c.want; err == nil || err.Error() != want {
			t.Errorf("%q:\n got %v\nwant %s", c.doc, err, want)
		}
	}
}
