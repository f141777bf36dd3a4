package config

// Config is one concrete prediction: a workload (Traffic) against one simulated deployment
// (Engine, Router). It mirrors the DynoSim prediction YAML (dynosim-spec.md §3) key for key.
// Build it with Decode or LoadFile, which apply defaults and validate every field; a Config
// built by hand must pass Validate before Run.
type Config struct {
	// File is the path the config was read from; it prefixes every error message. Not a YAML key.
	File string `yaml:"-"`
	// HasRouter and HasPlanner record whether the YAML declared those sections (set by Decode).
	// They belong to the dynamo stack's adapters; the engine stack rejects them.
	HasRouter, HasPlanner bool `yaml:"-"`

	Traffic    Traffic    `yaml:"traffic"`
	Engine     Engine     `yaml:"engine"`
	Router     Router     `yaml:"router"`
	Planner    Planner    `yaml:"planner"`
	Evaluation Evaluation `yaml:"evaluation"`
}

// Traffic says which requests exist (Source), when they start (Load) and when the run ends (Stop).
// When the YAML omits `traffic`, the default is synthetic 1024/128 tokens, concurrency 10,
// 100 requests (dynosim-spec.md §3.1); a supplied mapping is not merged with that default.
type Traffic struct {
	Source Source `yaml:"source"`
	Load   Load   `yaml:"load"`
	Stop   Stop   `yaml:"stop"`
}

// Source types (traffic.source.type).
const (
	SourceSynthetic        = "synthetic"
	SourceSyntheticSession = "synthetic-session"
	SourceTrace            = "trace"
)

// Source is the tagged union traffic.source. Only the fields of Type are meaningful; the decoder
// rejects fields that belong to another type.
type Source struct {
	Type string `yaml:"type"`

	// synthetic: every request has InputTokens prompt tokens (ISL) and OutputTokens (OSL).
	// Defaults 1024 and 128.
	InputTokens  int `yaml:"input_tokens,omitempty"`
	OutputTokens int `yaml:"output_tokens,omitempty"`

	// synthetic-session: turn k (0-based) has k*(NewInputTokensPerTurn+OutputTokensPerTurn)+
	// NewInputTokensPerTurn prompt tokens. Defaults 1024 and 128.
	NewInputTokensPerTurn int           `yaml:"new_input_tokens_per_turn,omitempty"`
	OutputTokensPerTurn   int           `yaml:"output_tokens_per_turn,omitempty"`
	Session               *SessionShape `yaml:"session,omitempty"`

	// trace: exactly one path; Format "mooncake"; BlockSize is the trace's hash granularity in
	// tokens per hash id (default 512), independent of the engine's KV block size.
	Paths     []string `yaml:"paths,omitempty"`
	Format    string   `yaml:"format,omitempty"`
	BlockSize int      `yaml:"block_size,omitempty"`
}

// SessionShape is traffic.source.session for synthetic-session sources.
type SessionShape struct {
	// Turns per session, >= 2 (default 4).
	Turns int `yaml:"turns"`
	// SharedPrefixRatio in [0, 1]: the fraction of a session's first prompt that is shared with
	// every other session of its prefix group (default 0).
	SharedPrefixRatio float64 `yaml:"shared_prefix_ratio"`
	// PrefixGroups >= 0; must be > 0 when SharedPrefixRatio > 0. Session i belongs to group
	// i mod PrefixGroups.
	PrefixGroups int `yaml:"prefix_groups"`
	// InterTurnDelayMs >= 0: think time between a turn's completion and the next turn's arrival.
	InterTurnDelayMs float64 `yaml:"inter_turn_delay_ms"`
}

// Load types (traffic.load.type).
const (
	LoadConcurrency     = "concurrency"
	LoadConstantRate    = "constant_rate"
	LoadPoisson         = "poisson"
	LoadTraceTimestamps = "trace_timestamps"
)

// Load is the tagged union traffic.load.
type Load struct {
	Type string `yaml:"type"`
	// Concurrency: closed loop, requests (or sessions) kept in flight; > 0, default 10.
	Concurrency int `yaml:"concurrency,omitempty"`
	// RequestsPerSecond (synthetic) or SessionsPerSecond (synthetic-session): open-loop rate, > 0.
	RequestsPerSecond float64 `yaml:"requests_per_second,omitempty"`
	SessionsPerSecond float64 `yaml:"sessions_per_second,omitempty"`
	// Seed for poisson inter-arrival gaps, >= 0 (default 42).
	Seed uint64 `yaml:"seed,omitempty"`
	// Speedup divides all trace timing (arrivals and inter-turn delays); > 0, default 1.
	Speedup float64 `yaml:"speedup,omitempty"`
}

// Unit is the load unit of the *_per_load_unit stops (dynosim-spec.md §3.1.3): the concurrency
// under a concurrency load, else the open-loop rate in requests or sessions per second (only
// the one matching the source is set); 0 for trace_timestamps.
func (l *Load) Unit() float64 {
	if l.Type == LoadConcurrency {
		return float64(l.Concurrency)
	}
	return l.RequestsPerSecond + l.SessionsPerSecond
}

// Stop is traffic.stop. Zero means unset.
type Stop struct {
	Requests              int     `yaml:"requests,omitempty"`
	RequestsPerLoadUnit   float64 `yaml:"requests_per_load_unit,omitempty"`
	Sessions              int     `yaml:"sessions,omitempty"`
	SessionsPerLoadUnit   float64 `yaml:"sessions_per_load_unit,omitempty"`
	MaxVirtualTimeSeconds float64 `yaml:"max_virtual_time_seconds,omitempty"`
}

// Mode is engine.mode: how a deployment splits prefill and decode.
type Mode string

// Engine modes: aggregated workers run prefill and decode; disaggregated serving runs them on
// separate prefill and decode workers with a KV transfer in between.
const (
	ModeAggregated    Mode = "aggregated"
	ModeDisaggregated Mode = "disaggregated"
)

// Modes lists the engine modes in schema order.
func Modes() []Mode { return []Mode{ModeAggregated, ModeDisaggregated} }

// Role is a worker role, the key of engine.workers.<role>.
type Role string

// Worker roles: aggregated (prefill and decode on one worker), prefill and decode
// (disaggregated serving).
const (
	RoleAggregated Role = "aggregated"
	RolePrefill    Role = "prefill"
	RoleDecode     Role = "decode"
)

// Roles lists the worker roles in schema order.
func Roles() []Role { return []Role{RoleAggregated, RolePrefill, RoleDecode} }

// Roles returns the roles mode m runs: aggregated, or prefill then decode.
func (m Mode) Roles() []Role {
	if m == ModeDisaggregated {
		return []Role{RolePrefill, RoleDecode}
	}
	return []Role{RoleAggregated}
}

// Role returns the declared role r (nil when it is not declared).
func (w *Workers) Role(r Role) *WorkerRole {
	switch r {
	case RoleAggregated:
		return w.Aggregated
	case RolePrefill:
		return w.Prefill
	case RoleDecode:
		return w.Decode
	}
	return nil
}

// Engine is the simulated deployment: model, GPU, backend and worker roles.
type Engine struct {
	Mode           Mode   `yaml:"mode"`
	Model          string `yaml:"model"`
	Hardware       string `yaml:"hardware"`
	Backend        string `yaml:"backend"`
	BackendVersion string `yaml:"backend_version,omitempty"`
	// ContextLength is the prompt-plus-output limit in tokens. 0 means "max" (the model's own
	// maximum); a prompt of ContextLength tokens or more is rejected, and generation stops when
	// prompt plus output reaches it (dynosim-spec.md §3.2.6).
	ContextLength int `yaml:"context_length"`
	// EnableChunkedPrefill: nil means the backend default (on).
	EnableChunkedPrefill *bool `yaml:"enable_chunked_prefill,omitempty"`
	// KVTransfer is disaggregated-only; nil when omitted.
	KVTransfer *KVTransfer `yaml:"kv_transfer,omitempty"`
	// Precision is the numeric format of the weights and of the KV cache (a servesweep
	// addition to the DynoSim schema); it matters to `default` timing, `default` KV capacity and
	// `bytes_per_token: auto`.
	Precision Precision `yaml:"precision"`
	Workers   Workers   `yaml:"workers"`
}

// Precision values (engine.precision.weights and .kv_cache); "" stands for auto.
const (
	PrecisionAuto = "auto"
	PrecisionBF16 = "bf16"
	PrecisionFP8  = "fp8"
	PrecisionFP4  = "fp4"
)

// Precision is engine.precision. An empty field means auto: the format the model id implies
// (an id naming FP8, e.g. nvidia/Llama-3.1-8B-Instruct-FP8, means fp8 weights and KV cache; one
// naming FP4/NVFP4 means fp4 weights and an fp8 KV cache; otherwise bf16), or, for a local model
// directory, its config.json quantization_config (timing.DefaultPrecisions, timing.LoadModelDir).
type Precision struct {
	// Weights is the format of the GEMM weights and GEMM math: bf16, fp8 or fp4 ("" = auto).
	// Embeddings and lm_head stay bf16.
	Weights string `yaml:"weights,omitempty"`
	// KVCache is the format of the KV cache: bf16 or fp8 ("" = auto).
	KVCache string `yaml:"kv_cache,omitempty"`
}

// KVTransfer is engine.kv_transfer (disaggregated mode).
type KVTransfer struct {
	// BytesPerToken of KV moved per prompt token; 0 means "auto": one prefill GPU's share of a
	// token's KV (its pipeline stage's layers and its tensor share of the KV heads, in
	// engine.precision.kv_cache), as every GPU sends its share over its own link.
	BytesPerToken int64 `yaml:"bytes_per_token"`
	// BandwidthGBps in decimal GB/s; nil means no transfer delay.
	BandwidthGBps *float64 `yaml:"bandwidth_gb_per_second"`
	// TimingMode is "destination_missing" (default) or "full_prompt".
	TimingMode string `yaml:"timing_mode"`
}

// Workers holds the worker roles; a nil role was not declared.
type Workers struct {
	Aggregated *WorkerRole `yaml:"aggregated,omitempty"`
	Prefill    *WorkerRole `yaml:"prefill,omitempty"`
	Decode     *WorkerRole `yaml:"decode,omitempty"`
}

// WorkerRole is engine.workers.<role>: the shape and limits of every worker in that role.
type WorkerRole struct {
	// Hardware overrides engine.hardware (prefill/decode roles only); "" inherits.
	Hardware       string      `yaml:"hardware,omitempty"`
	StartupSeconds float64     `yaml:"startup_seconds,omitempty"`
	Parallelism    Parallelism `yaml:"parallelism"`
	Scheduler      Scheduler   `yaml:"scheduler"`
	KVCache        KVCache     `yaml:"kv_cache"`
	Timing         Timing      `yaml:"timing"`
}

// Parallelism is a worker's shape. Every field is > 0 and defaults to 1.
// GPUs of the role = Replicas × Tensor × Pipeline × AttentionData (dynosim-spec.md §3.2.2);
// MoeTensor and MoeExpert repartition those GPUs and add none.
type Parallelism struct {
	Replicas      int `yaml:"replicas"`
	Tensor        int `yaml:"tensor"`
	Pipeline      int `yaml:"pipeline"`
	AttentionData int `yaml:"attention_data"`
	MoeTensor     int `yaml:"moe_tensor"`
	MoeExpert     int `yaml:"moe_expert"`
}

// GPUsPerWorker is Tensor × Pipeline × AttentionData.
func (p Parallelism) GPUsPerWorker() int { return p.Tensor * p.Pipeline * p.AttentionData }

// GPUs is Replicas × GPUsPerWorker.
func (p Parallelism) GPUs() int { return p.Replicas * p.GPUsPerWorker() }

// Scheduler is the per-attention-DP-rank batching limit of a worker.
type Scheduler struct {
	// MaxBatchedTokens is the token budget of one forward pass (default 8192).
	MaxBatchedTokens int `yaml:"max_batched_tokens"`
	// MaxSequences caps running requests (default 256; prefill role 1).
	MaxSequences int `yaml:"max_sequences"`
}

// KVCache is a rank's KV block pool.
type KVCache struct {
	// BlockSize in tokens per KV block (vLLM default 64, must be >= 2).
	BlockSize int `yaml:"block_size"`
	// PrefixCaching enables reuse of cached prompt blocks (default true).
	PrefixCaching bool `yaml:"prefix_caching"`
	// BytesPerToken of KV per token over all layers and KV heads, before tensor/pipeline
	// sharding (the mocker's layers × 2 × kv_heads × head_dim × dtype bytes); 0 means "auto"
	// (from the model and engine.precision.kv_cache). It sizes a `default` capacity and an
	// `auto` kv_transfer.bytes_per_token; a `fixed` capacity ignores it.
	BytesPerToken int64      `yaml:"bytes_per_token,omitempty"`
	Capacity      KVCapacity `yaml:"capacity"`
}

// Capacity types (kv_cache.capacity.type).
const (
	CapacityFixed   = "fixed"
	CapacityDefault = "default"
)

// KVCapacity sizes the pool: `fixed` gives Blocks per rank directly; `default` derives it from
// MemoryFraction of GPU memory, the model's weights and KV bytes per token, the precisions and
// the worker shape (timing.KVCapacity).
type KVCapacity struct {
	Type           string  `yaml:"type"`
	Blocks         int     `yaml:"blocks,omitempty"`
	MemoryFraction float64 `yaml:"memory_fraction,omitempty"`
}

// Timing types (timing.type).
const (
	TimingFixed      = "fixed"
	TimingPolynomial = "polynomial"
	TimingDefault    = "default"
)

// Timing picks the forward-pass time model of a role.
type Timing struct {
	Type string `yaml:"type"`
	// PrefillMs and DecodeMs are required by `fixed` (>= 0 ms) and rejected by other types.
	PrefillMs *float64 `yaml:"prefill_ms,omitempty"`
	DecodeMs  *float64 `yaml:"decode_ms,omitempty"`
}

// Policy is router.policy: how requests are placed on replicas.
type Policy string

// Router policies: round_robin (the default), kv_router (prefix overlap against load,
// dynosim-spec.md §3.3), and two baselines servesweep adds: random (uniform, seeded) and
// least_loaded (fewest active tokens).
const (
	PolicyRoundRobin  Policy = "round_robin"
	PolicyKVRouter    Policy = "kv_router"
	PolicyRandom      Policy = "random"
	PolicyLeastLoaded Policy = "least_loaded"
)

// Policies lists the router policies in schema order.
func Policies() []Policy {
	return []Policy{PolicyRoundRobin, PolicyKVRouter, PolicyRandom, PolicyLeastLoaded}
}

// Router is the request placement policy across replicas: round_robin (default), kv_router
// (prefix overlap against load, dynosim-spec.md §3.3), and two baselines servesweep adds: random
// (uniform, seeded) and least_loaded (fewest active tokens).
type Router struct {
	Policy           Policy           `yaml:"policy"`
	PrefillLoadModel PrefillLoadModel `yaml:"prefill_load_model"`
	// kv_router knobs; nil when unset (round_robin rejects them).
	OverlapScoreCredit *float64 `yaml:"overlap_score_credit,omitempty"`
	PrefillLoadScale   *float64 `yaml:"prefill_load_scale,omitempty"`
	Temperature        *float64 `yaml:"temperature,omitempty"`
}

// PrefillLoadModel is router.prefill_load_model; Type "none" (default) or "aic".
type PrefillLoadModel struct {
	Type string `yaml:"type"`
}

// Planner is the autoscaler section. Only Policy "disabled" (fixed worker counts) is simulated.
type Planner struct {
	Policy string `yaml:"policy"`
}

// Evaluation holds the SLA that defines goodput.
type Evaluation struct {
	SLA *SLA `yaml:"sla,omitempty"`
}

// SLA bounds in ms; nil = unset. E2EMs is exclusive with TTFTMs and ITLMs.
type SLA struct {
	TTFTMs *float64 `yaml:"ttft_ms,omitempty"`
	ITLMs  *float64 `yaml:"itl_ms,omitempty"`
	E2EMs  *float64 `yaml:"e2e_ms,omitempty"`
}

// RequireNoAdapters fails when the config declares a router or planner section: those are
// adapters of the dynamo stack, and the engine stack has none (dynosim-spec.md §2.1).
func (c *Config) RequireNoAdapters() error {
	var errs Errors
	for _, s := range []struct {
		has  bool
		name string
	}{{c.HasRouter, "router"}, {c.HasPlanner, "planner"}} {
		if s.has {
			errs = append(errs, &Error{File: c.File, Path: s.name,
				Msg: "needs the dynamo stack's " + s.name + " adapter; run with --stack dynamo or remove the section"})
		}
	}
	return errs.err()
}
