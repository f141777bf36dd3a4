package config

import (
	"math"
	"strconv"
)

// The types below are the prediction schema (dynosim-spec.md §3), one Go field per YAML key. Each
// field's struct tags are its only definition: the walker (decode.go), the defaults step
// (defaults.go), validation (validate.go) and grid's search domains all read them. The tag
// vocabulary is documented in schema.go. A field's doc comment gives its meaning and unit; its
// default and range are the tags' (go doc prints them with the type).

// Config is one concrete prediction: a workload (Traffic) against one simulated deployment
// (Engine, Router). It mirrors the DynoSim prediction YAML (dynosim-spec.md §3) key for key.
// Build it with Decode or LoadFile, which apply defaults and validate every field; a Config
// built by hand must pass Validate before Run.
type Config struct {
	// File is the path the config was read from; it prefixes every error message. Not a YAML key.
	File string `yaml:"-"`
	// Sets are the --set overrides (PATH=YAML) Decode applied after reading File, in order; a
	// message about a field one of them gave names it (At, SetFor). Not a YAML key.
	Sets []string `yaml:"-" json:"-"`
	// HasRouter and HasPlanner record whether the YAML declared those sections (set by Decode).
	// They belong to the dynamo stack's adapters (see Adapters).
	HasRouter, HasPlanner bool `yaml:"-"`
	// DefaultTraffic records that the YAML gave no traffic section, or a null one, so that runs
	// use the default workload of dynosim-spec.md §3.1 (set by Decode; DefaultTrafficNote says
	// so). Not a YAML key, and not part of a point's identity.
	DefaultTraffic bool `yaml:"-" json:"-"`
	// EmptyRoles lists the worker roles the YAML declared without a single setting (null or
	// {}), whose every field took its default (set by Decode; EmptyRoleNote says so). Not a YAML
	// key, and not part of a point's identity.
	EmptyRoles []Role `yaml:"-" json:"-"`
	// DefaultedTraffic lists, for a traffic section the YAML gave, the parts of the workload it
	// left to their defaults: "traffic.load" when it gave no load, and a synthetic source's
	// "traffic.source.input_tokens" and "traffic.source.output_tokens" when it gave no length
	// (set by Decode; DefaultedTrafficNote says so). Not a YAML key, and not part of a point's
	// identity.
	DefaultedTraffic []string `yaml:"-" json:"-"`

	// Traffic is omitted entirely: synthetic 1024/128 tokens, concurrency 10, 100 requests
	// (dynosim-spec.md §3.1); a supplied traffic mapping is not merged with that default.
	Traffic Traffic `yaml:"traffic"`
	// Engine is required.
	Engine     Engine     `yaml:"engine"`
	Router     Router     `yaml:"router"`
	Planner    Planner    `yaml:"planner"`
	Evaluation Evaluation `yaml:"evaluation"`

	_ refused `yaml:"execution" refuse:"host resource limits (execution) are not supported by servesweep predict; remove the section"`
}

// Traffic says which requests exist (Source), when they start (Load) and when the run ends (Stop).
type Traffic struct {
	// Source says which requests or sessions exist.
	Source Source `yaml:"source"`
	// Load says when they arrive.
	Load Load `yaml:"load"`
	// Stop has no default inside a supplied traffic mapping; synthetic sources need one.
	Stop Stop `yaml:"stop"`
}

// Source types (traffic.source.type).
const (
	SourceSynthetic        = "synthetic"
	SourceSyntheticSession = "synthetic-session"
	SourceTrace            = "trace"
	// SourceMixture mixes synthetic sources by weight (a servesweep addition to the schema).
	SourceMixture = "mixture"
)

// Trace formats (traffic.source.format, dynosim-spec.md §3.1.4).
const (
	// FormatMooncake rows are requests or session turns that each carry their full prompt.
	FormatMooncake = "mooncake"
	// FormatMooncakeDelta rows are session turns whose later turns carry only their new input.
	FormatMooncakeDelta = "mooncake-delta"
	// FormatAgenticMooncake rows are the nodes of a dependency graph (wait_for).
	FormatAgenticMooncake = "agentic_mooncake"
	// FormatAppliedCompute rows are whole agentic sessions of num_turns + 1 requests.
	FormatAppliedCompute = "applied_compute_agentic"
	// FormatDynamo files hold dynamo.request.trace.v1 records, possibly gzip-compressed.
	FormatDynamo = "dynamo"
	// FormatWeka is an AgentX corpus (not simulated: see Config.Unsupported).
	FormatWeka = "weka"
)

// Source is the tagged union traffic.source (dynosim-spec.md §3.1.1). Only the fields of Type are
// meaningful; a field of another type is an error.
type Source struct {
	// Type selects the variant: synthetic requests, synthetic sessions, or a trace.
	Type string `yaml:"type" discriminator:"" enum:"synthetic,synthetic-session,trace,mixture" default:"synthetic"`

	// InputTokens (ISL) and OutputTokens (OSL) of every synthetic request, in tokens. Each also
	// accepts a distribution mapping (its `dist` tag names the field that holds it); the int then
	// holds the distribution's mean, rounded (Distribution.Mean).
	InputTokens  int `yaml:"input_tokens,omitempty" union:"synthetic" default:"1024" gt:"0" limit:"MaxTokensPerRequest" sweep:"" dist:"InputTokensDist"`
	OutputTokens int `yaml:"output_tokens,omitempty" union:"synthetic" default:"128" gt:"0" limit:"MaxTokensPerRequest" sweep:"" dist:"OutputTokensDist"`

	// NewInputTokensPerTurn and OutputTokensPerTurn shape synthetic sessions, in tokens: turn k
	// (0-based) has k*(NewInputTokensPerTurn+OutputTokensPerTurn)+NewInputTokensPerTurn prompt
	// tokens. Each also accepts a distribution, drawn anew for every turn.
	NewInputTokensPerTurn int `yaml:"new_input_tokens_per_turn,omitempty" union:"synthetic-session" default:"1024" gt:"0" limit:"MaxTokensPerRequest" sweep:"" dist:"NewInputTokensPerTurnDist"`
	OutputTokensPerTurn   int `yaml:"output_tokens_per_turn,omitempty" union:"synthetic-session" default:"128" gt:"0" limit:"MaxTokensPerRequest" sweep:"" dist:"OutputTokensPerTurnDist"`
	// Session is required by synthetic-session sources.
	Session *SessionShape `yaml:"session,omitempty" union:"synthetic-session"`

	// The distributions of the four token counts above, nil when the YAML gives an int (not
	// YAML keys of their own: the count's key takes either form).
	InputTokensDist, OutputTokensDist                  *Distribution `yaml:"-" json:",omitempty"`
	NewInputTokensPerTurnDist, OutputTokensPerTurnDist *Distribution `yaml:"-" json:",omitempty"`

	// Seed seeds every length and mixture draw of a synthetic or mixture source (a servesweep
	// addition); nil means DefaultSeed. It moves nothing else, and fixed lengths draw nothing.
	Seed *int64 `yaml:"seed,omitempty" union:"synthetic,synthetic-session,mixture" min:"0" json:",omitempty"`
	// Components of a mixture source: each request (or session) is drawn from one component with
	// probability weight / Σ weights. Every component is a synthetic source, or every one a
	// synthetic-session source.
	Components []MixtureComponent `yaml:"components,omitempty" union:"mixture" json:",omitempty"`

	// Paths of the trace: exactly one, except for format dynamo.
	Paths []string `yaml:"paths,omitempty" union:"trace"`
	// Format of the trace (dynosim-spec.md §3.1.4); every format but weka is simulated.
	Format string `yaml:"format,omitempty" union:"trace" enum:"mooncake,mooncake-delta,agentic_mooncake,applied_compute_agentic,dynamo,weka" default:"mooncake"`
	// BlockSize is the trace's hash granularity in tokens per hash id, independent of the
	// engine's KV block size. Default 512, except dynamo and weka traces, whose block size is
	// embedded (an explicit value is then only checked).
	BlockSize int `yaml:"block_size,omitempty" union:"trace" optional:"" gt:"0"`
}

// DefaultSeed is traffic.source.seed when omitted.
const DefaultSeed = 42

// DrawSeed is the seed of the source's length and mixture draws: Seed, else DefaultSeed.
func (s *Source) DrawSeed() uint64 {
	if s.Seed != nil {
		return uint64(*s.Seed)
	}
	return DefaultSeed
}

// Distribution kinds (the `distribution` key of a token-count distribution).
const (
	DistUniform   = "uniform"
	DistNormal    = "normal"
	DistLognormal = "lognormal"
	DistEmpirical = "empirical"
)

// Distribution is a token-count distribution (a servesweep addition to the schema), given where
// a synthetic source takes a token count: {distribution: uniform, min, max} draws an integer
// uniformly in [min, max]; {distribution: normal, mean, stddev, min, max} and {distribution:
// lognormal, mean, stddev, min, max} draw a count whose mean and standard deviation (of the
// token count itself, before rounding and clipping) are mean and stddev, rounded to an integer
// and clipped to [min, max] (min default 1, max default MaxTokensPerRequest); {distribution:
// empirical, values, weights} draws values[i] with probability weights[i] / Σ weights (equal
// weights when omitted).
type Distribution struct {
	// Distribution is the kind; required.
	Distribution string `yaml:"distribution" discriminator:"" enum:"uniform,normal,lognormal,empirical" default:"uniform"`
	// Min and Max clip the draws, in tokens; Max is required by uniform.
	Min int `yaml:"min,omitempty" union:"uniform,normal,lognormal" default:"1" gt:"0" limit:"MaxTokensPerRequest" sweep:""`
	Max int `yaml:"max,omitempty" union:"uniform,normal,lognormal" optional:"" gt:"0" limit:"MaxTokensPerRequest" sweep:""`
	// Mean and Stddev of the token count, in tokens (normal and lognormal; required).
	Mean   float64 `yaml:"mean,omitempty" union:"normal,lognormal" gt:"0" limit:"0,MaxTokensPerRequest" sweep:""`
	Stddev float64 `yaml:"stddev,omitempty" union:"normal,lognormal" min:"0" limit:"0,MaxTokensPerRequest" sweep:""`
	// Values (tokens, required) and their Weights (optional, one per value) of an empirical
	// distribution.
	Values  []int     `yaml:"values,omitempty" union:"empirical" gt:"0" limit:"MaxTokensPerRequest"`
	Weights []float64 `yaml:"weights,omitempty" union:"empirical" gt:"0"`
}

// Expected is the distribution's mean token count before rounding and clipping: (min + max) / 2
// for uniform, Mean for normal and lognormal, Σ weights × values / Σ weights for empirical.
func (d *Distribution) Expected() float64 {
	switch d.Distribution {
	case DistUniform:
		return float64(d.Min+d.Max) / 2
	case DistEmpirical:
		var sum, wsum float64
		for i, v := range d.Values {
			w := 1.0
			if i < len(d.Weights) {
				w = d.Weights[i]
			}
			sum += w * float64(v)
			wsum += w
		}
		if wsum > 0 {
			return sum / wsum
		}
		return 0
	}
	return d.Mean
}

// MixtureComponent is one component of a mixture source.
type MixtureComponent struct {
	// Weight is the component's share of requests (or sessions) before normalisation; required.
	Weight float64 `yaml:"weight" gt:"0" limit:"0,MaxRate" sweep:""`
	// Source is a synthetic or synthetic-session source; required. Its seed is the mixture's.
	Source *Source `yaml:"source"`
}

// SessionShape is traffic.source.session for synthetic-session sources.
type SessionShape struct {
	// Turns per session.
	Turns int `yaml:"turns" default:"4" min:"2" limit:"MaxTurns"`
	// SharedPrefixRatio is the fraction of a session's first prompt that is shared with every
	// other session of its prefix group.
	SharedPrefixRatio float64 `yaml:"shared_prefix_ratio" min:"0" max:"1"`
	// PrefixGroups is the number of prefix groups; session i belongs to group i mod
	// PrefixGroups. It must be > 0 when SharedPrefixRatio > 0.
	PrefixGroups int `yaml:"prefix_groups" min:"0"`
	// InterTurnDelayMs is the think time in ms between a turn's completion and the next turn's
	// arrival: its mean when InterTurnDelayStddevMs > 0.
	InterTurnDelayMs float64 `yaml:"inter_turn_delay_ms" min:"0" limit:"0,MaxMs"`
	// InterTurnDelayStddevMs, when > 0, draws each think time from a normal distribution of mean
	// InterTurnDelayMs and this standard deviation in ms, clipped at 0 (AIPerf's
	// --conversation-turn-delay-mean and --conversation-turn-delay-stddev). 0 (the default): every
	// think time is InterTurnDelayMs. A constant think time lets a closed loop's sessions that
	// share a replica fall into step (docs/sweep.md "Steady state").
	InterTurnDelayStddevMs float64 `yaml:"inter_turn_delay_stddev_ms,omitempty" min:"0" limit:"0,MaxMs"`
}

// Load types (traffic.load.type).
const (
	LoadConcurrency     = "concurrency"
	LoadConstantRate    = "constant_rate"
	LoadPoisson         = "poisson"
	LoadTraceTimestamps = "trace_timestamps"
)

// Load is the tagged union traffic.load (dynosim-spec.md §3.1.2).
type Load struct {
	// Type selects the variant: a closed loop (concurrency), or open-loop arrivals (evenly spaced,
	// poisson, or the trace's own timestamps).
	Type string `yaml:"type" discriminator:"" enum:"concurrency,constant_rate,poisson,trace_timestamps" default:"concurrency"`
	// Concurrency is the closed loop's requests (or sessions) kept in flight.
	Concurrency int `yaml:"concurrency,omitempty" union:"concurrency" default:"10" gt:"0" limit:"MaxRequests" sweep:""`
	// RampSeconds spreads the start of the first `concurrency` sessions evenly over that many
	// seconds (session i starts at i × RampSeconds / concurrency), as a benchmark's concurrency
	// ramp (aiperf --concurrency-ramp-duration) does; later sessions start as earlier ones finish.
	// nil (omitted) or 0 (the reference's behaviour) starts them all at once; Ramp gives the
	// value. A capacity search tells an omitted ramp, which it chooses itself, from an explicit
	// 0, which it keeps (sweep.searchCapacity). A servesweep addition to the DynoSim schema.
	RampSeconds *float64 `yaml:"ramp_seconds,omitempty" json:",omitempty" union:"concurrency" null:"omit" min:"0" limit:"0,MaxSeconds"`
	// WarmupSeconds, in virtual seconds from the start of the run, leaves the requests that
	// arrive before it out of every request statistic of the summary (counts, tokens, latency
	// distributions, goodput count, prefix reuse) and measures the rates over the steady window
	// from it to the last arrival (metrics.Input.WarmupMs). nil (omitted) or 0 counts every
	// request over the whole run; Warmup gives the value. Any load type. A servesweep addition
	// to the DynoSim schema.
	WarmupSeconds *float64 `yaml:"warmup_seconds,omitempty" json:",omitempty" null:"omit" min:"0" limit:"0,MaxSeconds"`
	// Cooldown leaves out the requests that arrive after the run's last session start from every
	// request statistic, as warm-up requests are left out, and ends the steady window at that
	// start (metrics.Input.CooldownFromMs). Under a concurrency load that is the closed loop's
	// drain: from then on fewer than `concurrency` sessions stay in flight. Under an open loop
	// (constant_rate, poisson) of multi-turn sessions it is the later turns of the sessions
	// already started: no new session joins them, so they meet a lighter load than the rate
	// asks for (a single-turn source's last start is its last arrival: nothing is left out). A
	// run whose sessions all start in the first wave has no steady window then. false or nil
	// (omitted) counts them; HasCooldown gives the value. Capacity searches and sweeps set it
	// on the probes of a ramped closed loop and of an open loop of multi-turn sessions unless
	// the spec gives it (sweep's steadyRun). A servesweep addition to the DynoSim schema.
	Cooldown *bool `yaml:"cooldown,omitempty" json:",omitempty" union:"concurrency,constant_rate,poisson"`
	// RequestsPerSecond (synthetic sources) or SessionsPerSecond (synthetic-session sources) is
	// the open-loop arrival rate per second; the one matching the source is required.
	RequestsPerSecond float64 `yaml:"requests_per_second,omitempty" union:"constant_rate,poisson" optional:"" gt:"0" limit:"MinRate,MaxRate" sweep:""`
	SessionsPerSecond float64 `yaml:"sessions_per_second,omitempty" union:"constant_rate,poisson" optional:"" gt:"0" limit:"MinRate,MaxRate" sweep:""`
	// Profile, when given, replaces the single rate with a piecewise-constant one (a servesweep
	// addition to the DynoSim schema): phase i runs from the previous phase's until_seconds (0
	// for the first) to its own at its own rate, and the last phase's rate holds after its end
	// until the stop count is reached. It is exclusive with the top-level rate.
	Profile []LoadPhase `yaml:"profile,omitempty" union:"constant_rate,poisson" json:",omitempty"`
	// Seed of the poisson inter-arrival gaps.
	Seed uint64 `yaml:"seed,omitempty" union:"poisson" default:"42"`
	// Speedup divides all trace timing (arrivals and inter-turn delays).
	Speedup float64 `yaml:"speedup,omitempty" union:"trace_timestamps" default:"1" gt:"0" limit:"MinRate,MaxRate" sweep:""`
}

// Ramp is RampSeconds, 0 when omitted.
func (l *Load) Ramp() float64 {
	if l.RampSeconds == nil {
		return 0
	}
	return *l.RampSeconds
}

// HasCooldown reports whether Cooldown is set and true.
func (l *Load) HasCooldown() bool { return l.Cooldown != nil && *l.Cooldown }

// Warmup is WarmupSeconds, 0 when omitted.
func (l *Load) Warmup() float64 {
	if l.WarmupSeconds == nil {
		return 0
	}
	return *l.WarmupSeconds
}

// LoadPhase is one phase of a load profile (traffic.load.profile[i]).
type LoadPhase struct {
	// UntilSeconds is the phase's end in virtual seconds from the start of the run; the phases'
	// ends increase strictly.
	UntilSeconds float64 `yaml:"until_seconds" gt:"0" limit:"0,MaxSeconds"`
	// RequestsPerSecond (synthetic sources) or SessionsPerSecond (synthetic-session sources) is
	// the phase's arrival rate per second; the one matching the source is required.
	RequestsPerSecond float64 `yaml:"requests_per_second,omitempty" optional:"" gt:"0" limit:"MinRate,MaxRate"`
	SessionsPerSecond float64 `yaml:"sessions_per_second,omitempty" optional:"" gt:"0" limit:"MinRate,MaxRate"`
}

// Rate is the phase's arrival rate per second (requests or sessions, whichever is set).
func (p LoadPhase) Rate() float64 { return p.RequestsPerSecond + p.SessionsPerSecond }

// Unit is the load unit of the *_per_load_unit stops (dynosim-spec.md §3.1.3): the concurrency
// under a concurrency load, else the open-loop rate in requests or sessions per second (only
// the one matching the source is set); 0 for trace_timestamps.
func (l *Load) Unit() float64 {
	if l.Type == LoadConcurrency {
		return float64(l.Concurrency)
	}
	return l.RequestsPerSecond + l.SessionsPerSecond
}

// IntensityField names the field that sets the load's intensity, the value a capacity search
// varies: concurrency (requests or sessions in flight), requests_per_second or
// sessions_per_second (constant_rate and poisson: the one that is set), or speedup
// (trace_timestamps).
func (l *Load) IntensityField() string {
	switch {
	case l.Type == LoadConcurrency:
		return "concurrency"
	case l.Type == LoadTraceTimestamps:
		return "speedup"
	case l.SessionsPerSecond > 0:
		return "sessions_per_second"
	default:
		return "requests_per_second"
	}
}

// Stop is traffic.stop (dynosim-spec.md §3.1.3). Zero means unset; which fields a source needs
// is checked by Validate.
type Stop struct {
	// Requests and Sessions are counts; the *PerLoadUnit fields multiply the load unit
	// (Load.Unit).
	Requests            int     `yaml:"requests,omitempty" optional:"" gt:"0" limit:"MaxRequests"`
	RequestsPerLoadUnit float64 `yaml:"requests_per_load_unit,omitempty" optional:"" gt:"0"`
	Sessions            int     `yaml:"sessions,omitempty" optional:"" gt:"0"`
	SessionsPerLoadUnit float64 `yaml:"sessions_per_load_unit,omitempty" optional:"" gt:"0"`
	// MaxVirtualTimeSeconds is a soft cutoff of trace replay in virtual seconds: the run ends
	// there, and requests still in flight count as unfinished. Under trace_timestamps it replays
	// speedup × MaxVirtualTimeSeconds seconds of the trace, so runs at two speedups replay two
	// segments.
	MaxVirtualTimeSeconds float64 `yaml:"max_virtual_time_seconds,omitempty" optional:"" gt:"0" limit:"0,MaxSeconds"`
	// MaxTraceSeconds (trace sources under a trace_timestamps load, agentic formats excepted; a
	// servesweep addition to the DynoSim schema) replays the segment of the trace whose sessions
	// start within its first MaxTraceSeconds seconds of trace time, before the speedup divides
	// it (traffic.TraceSegment): every turn of those sessions, the same requests at any speedup,
	// and the run lasts until they have all finished (or until MaxVirtualTimeSeconds when that
	// is set too). A capacity search over a trace_timestamps load runs its probes so (grid's
	// AtProbeRun). aiperf.sh sends it as --fixed-schedule-end-offset (in trace ms).
	MaxTraceSeconds float64 `yaml:"max_trace_seconds,omitempty" json:",omitempty" optional:"" gt:"0" limit:"0,MaxSeconds"`
}

// ResolveCount is a stop count as a run resolves it (dynosim-spec.md §3.1.3): n when given (>
// 0), else max(1, round(perLoadUnit × unit)) where unit is the load unit (Load.Unit), else 0
// when neither is set. The simulation and the exported benchmark both count this way, so the
// benchmark sends the requests the prediction simulated.
func ResolveCount(n int, perLoadUnit, unit float64) int {
	switch {
	case n > 0:
		return n
	case perLoadUnit > 0:
		return max(1, int(math.Round(perLoadUnit*unit)))
	}
	return 0
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

// Backends (engine.backend), each with its scheduler style: vLLM's (the running set first, then
// FCFS admission, LIFO preemption), SGLang's (prefill-first with a radix cache and conservative
// admission) and TensorRT-LLM's (vLLM's order with a capacity policy); see sim/engine.
const (
	BackendVLLM   = "vllm"
	BackendSGLang = "sglang"
	BackendTRTLLM = "trtllm"
)

// CUDA-graph modes of Engine.CUDAGraphs ("" is full).
const (
	CUDAGraphsFull      = "full"
	CUDAGraphsPiecewise = "piecewise"
)

// Engine is the simulated deployment: model, GPU, backend and worker roles (dynosim-spec.md §3.2).
type Engine struct {
	// Mode is aggregated or disaggregated serving.
	Mode Mode `yaml:"mode" default:"aggregated" sweep:""`
	// Model is a Hugging Face model id or a local model directory; required.
	Model string `yaml:"model" sweep:""`
	// Hardware is the GPU id of every worker, e.g. h200_sxm; required.
	Hardware string `yaml:"hardware" sweep:""`
	// Backend is the serving engine whose scheduler style and defaults apply: vllm, sglang or
	// trtllm.
	Backend string `yaml:"backend" enum:"vllm,sglang,trtllm" default:"vllm"`
	// BackendVersion selects performance data only; "" (or null) means the latest.
	BackendVersion string `yaml:"backend_version,omitempty" null:"omit"`
	// ContextLength is the prompt-plus-output limit in tokens. 0 means "max" (the model's own
	// maximum); a prompt of ContextLength tokens or more is rejected, and generation stops when
	// prompt plus output reaches it (dynosim-spec.md §3.2.6).
	ContextLength int `yaml:"context_length" word:"max" gt:"0" limit:"MaxTokensPerRequest" sweep:""`
	// Speculation enables speculative decoding; nil when omitted (off).
	Speculation *Speculation `yaml:"speculation,omitempty" json:",omitempty"`
	// EnableChunkedPrefill: nil means the backend default (on).
	EnableChunkedPrefill *bool `yaml:"enable_chunked_prefill,omitempty"`
	// OverlapScheduling makes every worker prepare its next pass on the CPU while the GPU runs
	// the current one, so under default and roofline timing a pass's host time (the scheduling
	// step and the per-sequence sampling bookkeeping: timing.Efficiency's PassOverheadMs and
	// SequenceOverheadUs) hides behind its GPU time: a pass lasts max(host, GPU) instead of host
	// + GPU. fixed and polynomial timing ignore it. nil means the backend's default
	// (Engine.HostOverlap).
	OverlapScheduling *bool `yaml:"overlap_scheduling,omitempty" json:",omitempty"`
	// CUDAGraphs is how the engine captures its decode-only passes in CUDA graphs under default
	// and roofline timing: "" or full (one graph per pass: TensorRT-LLM, SGLang, vLLM 0.11 and
	// later, whose default cudagraph_mode FULL_AND_PIECEWISE captures decode passes whole, and
	// vLLM's FULL_DECODE_ONLY), or piecewise (vLLM's PIECEWISE, its default through 0.10: attention
	// runs between graphs, so every layer of a decode pass adds timing.PiecewiseGraphLayerUs of
	// GPU idle time). vllm only. Passes with prefill tokens are priced alike in both modes
	// (timing.Roofline.Piecewise says why).
	CUDAGraphs string `yaml:"cuda_graphs,omitempty" enum:"full,piecewise" optional:"" json:",omitempty"`
	// KVTransfer is disaggregated-only; nil when omitted: no bandwidth delay, and the default
	// hand-off latency (KVTransfer.LatencyMs).
	KVTransfer *KVTransfer `yaml:"kv_transfer,omitempty"`
	// Frontend is the API front end in front of the workers; nil when omitted (its defaults).
	Frontend *Frontend `yaml:"frontend,omitempty" null:"empty"`
	// Precision is the numeric format of the weights and of the KV cache (a servesweep
	// addition to the DynoSim schema); it matters to `default` timing, `default` KV capacity and
	// `bytes_per_token: auto`.
	Precision Precision `yaml:"precision"`
	Workers   Workers   `yaml:"workers"`
}

// Speculation is engine.speculation (dynosim-spec.md §3.2): speculative decoding, run by every
// backend's scheduler and priced by every timing model (engine.Speculation). Kind,
// NumSpeculativeTokens and AcceptanceRates are required; AcceptanceRates has exactly
// NumSpeculativeTokens entries, each in [0, 1].
type Speculation struct {
	// Kind of drafting: ngram (prompt lookup: drafting costs no GPU time) or mtp (the model's own
	// multi-token-prediction module drafts, num_speculative_tokens steps of one decoder layer
	// and the lm_head after every pass: timing.MTP; the model must have one, e.g. DeepSeek-V3/R1).
	Kind string `yaml:"kind" optional:"" enum:"ngram,mtp"`
	// NumSpeculativeTokens is the number of draft tokens per decode round.
	NumSpeculativeTokens int `yaml:"num_speculative_tokens" optional:"" min:"1" max:"5"`
	// AcceptanceRates holds one acceptance probability per draft token.
	// p_i is the probability that draft i is accepted given that drafts 1..i−1 were.
	AcceptanceRates []float64 `yaml:"acceptance_rates" min:"0" max:"1"`
	// Seed drives the acceptance draws (default 42).
	Seed uint64 `yaml:"seed" default:"42"`
}

// Precision values (engine.precision.weights, .kv_cache and .attention); "" stands for auto.
const (
	PrecisionAuto = "auto"
	PrecisionBF16 = "bf16"
	PrecisionFP8  = "fp8"
	PrecisionFP4  = "fp4"
)

// Speculation kinds (engine.speculation.kind).
const (
	SpeculationNGram = "ngram"
	SpeculationMTP   = "mtp"
)

// Precision is engine.precision. An empty field means auto: the format the model id implies
// (an id naming FP8, e.g. nvidia/Llama-3.1-8B-Instruct-FP8, means fp8 weights and KV cache; one
// naming FP4/NVFP4 means fp4 weights and an fp8 KV cache; otherwise bf16), or, for a local model
// directory, its config.json quantization_config (timing.DefaultPrecisions, timing.LoadModelDir).
type Precision struct {
	// Weights is the format of the GEMM weights and GEMM math ("" = auto). Embeddings and
	// lm_head stay bf16.
	Weights string `yaml:"weights,omitempty" word:"auto" enum:"auto,bf16,fp8,fp4" sweep:""`
	// KVCache is the format of the KV cache ("" = auto).
	KVCache string `yaml:"kv_cache,omitempty" word:"auto" enum:"auto,bf16,fp8" sweep:""`
	// Attention is the format the attention kernels compute in ("" = auto: the KV cache's). An
	// FP8 KV cache does not make every engine's attention FP8: vLLM's FlashInfer backend on
	// Blackwell read an FP8 cache with a BF16 query and computed in BF16, at half the FP8 tensor
	// rate, until its pull request 23647 (2025-09; before it, the TensorRT-LLM kernels that take
	// an FP8 query ran only over a BF16 cache: pull request 22378). It sets the rate of
	// attention's FLOPs: prefill's, which are compute-bound, and decode's, which mostly stay
	// bound by reading the cache (in its own format). Unset, it is left out of a point's ID
	// (grid.PointID), so configs that do not set it keep the IDs they had before it.
	Attention string `yaml:"attention,omitempty" json:",omitempty" word:"auto" enum:"auto,bf16,fp8"`
}

// Frontend is engine.frontend, a servesweep addition to the DynoSim schema: the API front end
// between the clients and the workers.
type Frontend struct {
	// OverheadMs is the time in ms between a client sending a request and a worker receiving it
	// (HTTP handling, chat template and tokenization in the API server, routing), which no
	// forward pass accounts for: it adds to every TTFT and E2E latency, never to ITL or TPOT.
	// Nil (omitted or null) means the default: timing.CalibratedFrontendOverheadMs when the role
	// a request enters first (aggregated, or prefill in disaggregated mode) uses `default`
	// timing, else 0, so that `fixed` and `polynomial` runs keep the reference's exact times.
	OverheadMs *float64 `yaml:"overhead_ms,omitempty" null:"omit" min:"0" limit:"0,MaxMs"`
}

// KVTransfer is engine.kv_transfer (disaggregated mode, dynosim-spec.md §3.2.5).
type KVTransfer struct {
	// BytesPerToken of KV moved per prompt token; 0 means "auto": one prefill GPU's share of a
	// token's KV (its pipeline stage's layers and its tensor share of the KV heads, in
	// engine.precision.kv_cache), as every GPU sends its share over its own link.
	BytesPerToken int64 `yaml:"bytes_per_token" word:"auto" gt:"0"`
	// BandwidthGBps in decimal GB/s; nil (null) means no delay for the bytes (LatencyMs still
	// applies).
	BandwidthGBps *float64 `yaml:"bandwidth_gb_per_second" null:"omit" gt:"0" limit:"MinRate,MaxRate" sweep:""`
	// TimingMode: destination_missing charges the prompt tokens the decode worker does not
	// cache; full_prompt charges the whole prompt.
	TimingMode string `yaml:"timing_mode" enum:"destination_missing,full_prompt" default:"destination_missing"`
	// LatencyMs, a servesweep addition to the schema, is the fixed time in ms of every hand-off
	// on top of moving its bytes: the control path between the decode and the prefill worker
	// (the remote-prefill request, the exchange of KV block layouts, the completion notice and
	// the decode side's pickup of the arrived KV). It adds to the TTFT of every request that
	// reaches a decode worker, never to ITL or TPOT. Nil (omitted or null) means the default:
	// timing.CalibratedKVTransferLatencyMs when the prefill and the decode role both use `default`
	// timing, else 0, so that `fixed` and `polynomial` runs keep the reference's exact times.
	LatencyMs *float64 `yaml:"latency_ms,omitempty" null:"omit" min:"0" limit:"0,MaxMs"`
}

// Workers holds the worker roles; a nil role was not declared, and a declared role may be {} or
// null (all defaults).
type Workers struct {
	// Aggregated workers serve aggregated mode; Prefill and Decode workers serve disaggregated
	// mode.
	Aggregated *WorkerRole `yaml:"aggregated,omitempty" null:"empty"`
	Prefill    *WorkerRole `yaml:"prefill,omitempty" null:"empty"`
	Decode     *WorkerRole `yaml:"decode,omitempty" null:"empty"`

	_ refused `yaml:"encoder" refuse:"encoder workers (analytical EPD) are not supported by servesweep"`
}

// WorkerRole is engine.workers.<role>: the shape and limits of every worker in that role.
type WorkerRole struct {
	// Hardware overrides engine.hardware (prefill/decode roles only); "" inherits.
	Hardware string `yaml:"hardware,omitempty"`
	// StartupSeconds is the delay before a worker added during the run is ready, in seconds.
	StartupSeconds float64     `yaml:"startup_seconds,omitempty" min:"0" max:"86400"`
	Parallelism    Parallelism `yaml:"parallelism"`
	Scheduler      Scheduler   `yaml:"scheduler"`
	KVCache        KVCache     `yaml:"kv_cache"`
	Timing         Timing      `yaml:"timing"`

	// The language roles share these engine settings (dynosim-spec.md §3.2).
	_ refused `yaml:"model" refuse:"per-role overrides are not allowed; set engine.model"`
	_ refused `yaml:"backend" refuse:"per-role overrides are not allowed; set engine.backend"`
	_ refused `yaml:"backend_version" refuse:"per-role overrides are not allowed; set engine.backend_version"`
	_ refused `yaml:"context_length" refuse:"per-role overrides are not allowed; set engine.context_length"`
}

// Parallelism is a worker's shape (dynosim-spec.md §3.2.2).
// GPUs of the role = Replicas × Tensor × Pipeline × AttentionData; MoeTensor and MoeExpert
// repartition those GPUs and add none. Replicas × AttentionData is at most MaxRanksPerRole.
type Parallelism struct {
	// Replicas is the number of workers; Tensor, Pipeline and AttentionData the tensor-parallel,
	// pipeline-parallel and attention data-parallel degrees of each (in GPUs, stages and rank
	// schedulers); MoeTensor and MoeExpert the tensor- and expert-parallel degrees of MoE layers.
	Replicas      int `yaml:"replicas" default:"1" gt:"0" limit:"MaxParallelism" sweep:""`
	Tensor        int `yaml:"tensor" default:"1" gt:"0" limit:"MaxParallelism" sweep:""`
	Pipeline      int `yaml:"pipeline" default:"1" gt:"0" limit:"MaxParallelism" sweep:""`
	AttentionData int `yaml:"attention_data" default:"1" gt:"0" limit:"MaxParallelism" sweep:""`
	MoeTensor     int `yaml:"moe_tensor" default:"1" gt:"0" limit:"MaxParallelism" sweep:""`
	MoeExpert     int `yaml:"moe_expert" default:"1" gt:"0" limit:"MaxParallelism" sweep:""`
	// RedundantExperts is the expert slots expert-parallel load balancing adds to each MoE layer
	// beside the model's experts (replicas of the most-loaded ones; SGLang's
	// --ep-num-redundant-experts): each of the moe_expert GPUs holds (experts + redundant) /
	// moe_expert slots. 0 (the default) places none; above 0 needs moe_expert > 1 and forward
	// model roofline (timing.Shape.RedundantExperts). Left out of the config's encodings when 0,
	// so a config without it keeps its point ID (grid.PointID).
	RedundantExperts int `yaml:"redundant_experts,omitempty" default:"0" min:"0" limit:"MaxParallelism" json:",omitempty" sweep:""`
}

// GPUsPerWorker is Tensor × Pipeline × AttentionData.
func (p Parallelism) GPUsPerWorker() int { return p.Tensor * p.Pipeline * p.AttentionData }

// GPUs is Replicas × GPUsPerWorker.
func (p Parallelism) GPUs() int { return p.Replicas * p.GPUsPerWorker() }

// GPUs returns the deployment's GPU count: the aggregated role's GPUs, or prefill plus decode
// GPUs (dynosim-spec.md §3.2.2); a role left nil counts 0.
func (c *Config) GPUs() int {
	w := &c.Engine.Workers
	if c.Engine.Mode == ModeDisaggregated {
		n := 0
		if w.Prefill != nil {
			n += w.Prefill.Parallelism.GPUs()
		}
		if w.Decode != nil {
			n += w.Decode.Parallelism.GPUs()
		}
		return n
	}
	if w.Aggregated != nil {
		return w.Aggregated.Parallelism.GPUs()
	}
	return 0
}

// Scheduler is the per-attention-DP-rank batching limit of a worker. Every key is accepted on
// every backend; a key a backend's scheduler style ignores is documented as such.
type Scheduler struct {
	// MaxBatchedTokens is the token budget of one forward pass (vLLM max_num_batched_tokens,
	// TensorRT-LLM max_num_tokens). SGLang ignores it: its prefill budget is chunked_prefill_size
	// 8192 / attention_data tokens (dynosim-spec.md §3.2.3).
	MaxBatchedTokens int `yaml:"max_batched_tokens" default:"8192" gt:"0" limit:"MaxBatchedTokens" sweep:""`
	// MaxSequences caps running requests; the prefill role's default is 1.
	MaxSequences int `yaml:"max_sequences" default:"256" gt:"0" limit:"MaxSequences" sweep:""`
	// PrefillDecodeInterval (SGLang only; vLLM and TensorRT-LLM ignore it) is the least number
	// of decode passes a rank runs between two prefill passes while requests are decoding; 0
	// runs a prefill pass whenever a prefill batch can form (SGLang's prefill-first default).
	PrefillDecodeInterval int `yaml:"prefill_decode_interval" default:"0" min:"0" limit:"MaxSequences" sweep:""`
	// ChunkedPrefillSize (SGLang only; vLLM and TensorRT-LLM ignore it, their budget is
	// MaxBatchedTokens) is SGLang's --chunked-prefill-size: the prefill tokens of one pass,
	// divided by attention_data under attention data parallelism; 0 (the default) is SGLang's
	// 8192. A prefill pass charges at most max(16384, this) prompt tokens (--max-prefill-tokens).
	ChunkedPrefillSize int `yaml:"chunked_prefill_size" default:"0" min:"0" limit:"MaxBatchedTokens" json:",omitempty"`
	// RecvInterval (SGLang only; vLLM and TensorRT-LLM ignore it) is SGLang's
	// --scheduler-recv-interval: a rank running requests takes in newly arrived ones only at
	// every RecvInterval-th decode pass (at once after a prefill pass, or when it runs none), so
	// a new request waits about half that many decode passes more for its first token; on a
	// decode role of disaggregated serving the same holds for hand-offs, whose KV SGLang's
	// decode scheduler preallocates only once it has taken them in. 0 (the default) and 1 take
	// them in at every pass, SGLang's default.
	RecvInterval int `yaml:"recv_interval" default:"0" min:"0" limit:"MaxSequences" json:",omitempty"`
	// CapacityPolicy (TensorRT-LLM only; vLLM and SGLang ignore it) is TensorRT-LLM's
	// capacity_scheduler_policy: guaranteed_no_evict admits a request only when the KV for its
	// whole prompt and output is free after every running request's remaining need, and never
	// preempts; max_utilization admits while the next step fits and preempts the latest admitted
	// request (recompute) when KV runs out.
	CapacityPolicy string `yaml:"capacity_policy" enum:"guaranteed_no_evict,max_utilization" default:"guaranteed_no_evict" sweep:""`
	// BatchWaitTimeoutIters and BatchWaitMaxTokensRatio (TensorRT-LLM only; vLLM and SGLang
	// ignore them) are TensorRT-LLM's batch_wait_timeout_iters and batch_wait_max_tokens_ratio:
	// while a rank is decoding, new requests' prompts are held back for up to
	// BatchWaitTimeoutIters passes in a row, unless the pass would reach BatchWaitMaxTokensRatio ×
	// max_batched_tokens tokens (engine.BatchWait). 0 and 0 (the defaults) never wait.
	BatchWaitTimeoutIters   int     `yaml:"batch_wait_timeout_iters,omitempty" json:",omitempty" default:"0" min:"0" limit:"MaxSequences"`
	BatchWaitMaxTokensRatio float64 `yaml:"batch_wait_max_tokens_ratio,omitempty" json:",omitempty" default:"0" min:"0" max:"1"`
}

// TensorRT-LLM capacity policies (scheduler.capacity_policy).
const (
	CapacityGuaranteedNoEvict = "guaranteed_no_evict"
	CapacityMaxUtilization    = "max_utilization"
)

// KVCache is a rank's KV block pool.
type KVCache struct {
	// BlockSize in tokens per KV block; default vllm 64, sglang 1, trtllm 32; vllm and trtllm
	// need >= 2.
	BlockSize int `yaml:"block_size" gt:"0" limit:"MaxBlockSize" sweep:""`
	// PrefixCaching enables reuse of cached prompt blocks.
	PrefixCaching bool `yaml:"prefix_caching" default:"true"`
	// BytesPerToken of KV per token over all layers and KV heads, before tensor/pipeline
	// sharding (the mocker's layers × 2 × kv_heads × head_dim × dtype bytes); 0 means "auto"
	// (from the model and engine.precision.kv_cache). It sizes a `default` capacity and an
	// `auto` kv_transfer.bytes_per_token; a `fixed` capacity ignores it.
	BytesPerToken int64      `yaml:"bytes_per_token,omitempty" word:"auto" gt:"0"`
	Capacity      KVCapacity `yaml:"capacity"`
}

// Capacity types (kv_cache.capacity.type).
const (
	CapacityFixed   = "fixed"
	CapacityDefault = "default"
)

// KVCapacity sizes the pool: `fixed` gives Blocks per rank directly (required); `default`
// derives it from MemoryFraction of GPU memory, the model's weights and KV bytes per token, the
// precisions and the worker shape (timing.KVCapacity).
type KVCapacity struct {
	// Type selects how the pool is sized: fixed or default.
	Type string `yaml:"type" discriminator:"" enum:"default,fixed" default:"default" reject:"{type} KV capacity rejects {key}; blocks belongs to type fixed; memory_fraction, reserve_gib and max_tokens belong to type default"`
	// Blocks per rank of a fixed capacity, in KV blocks.
	Blocks int `yaml:"blocks,omitempty" union:"fixed" optional:"" gt:"0" limit:"MaxBlocks"`
	// MemoryFraction of GPU memory the worker may use; omitted or null: vllm and trtllm 0.9,
	// sglang 0.88 (null means not set, as for ReserveGiB and MaxTokens).
	MemoryFraction float64 `yaml:"memory_fraction,omitempty" union:"default" null:"omit" gt:"0" max:"1" sweep:""`
	// ReserveGiB is the memory per GPU in GiB (2^30 bytes) the engine holds outside weights,
	// activations and the KV cache: CUDA context, communication and GEMM workspaces, CUDA-graph
	// pools, and whatever else a release keeps. nil means timing.RuntimeReserveGiB (1.5); a value
	// that leaves no room for one KV block is the capacity error naming the numbers. validate sets
	// it for the InferenceX rows of vLLM 0.10.2 (calibrate.Factors.VLLMReserveGiB).
	ReserveGiB *float64 `yaml:"reserve_gib,omitempty" union:"default" null:"omit" min:"0" limit:"0,MaxGiB" sweep:"" json:",omitempty"`
	// MaxTokens caps the derived pool of each rank at this many tokens, rounded down to whole
	// blocks (0, omitted or null: no cap): SGLang's --max-total-tokens and TensorRT-LLM's kv_cache_config
	// max_tokens, which size the pool as the smaller of the memory-derived one and the cap. A
	// cap below one block is a configuration error.
	MaxTokens int `yaml:"max_tokens,omitempty" union:"default" null:"omit" optional:"" gt:"0" limit:"MaxBlocks" sweep:"" json:",omitempty"`
}

// Timing types (timing.type).
const (
	TimingFixed      = "fixed"
	TimingPolynomial = "polynomial"
	TimingDefault    = "default"
	TimingRoofline   = "roofline"
)

// Forward models of `default` timing (timing.forward_model).
const (
	ForwardAuto    = "auto"
	ForwardOpLevel = "op_level"
	ForwardFPM     = "fpm"
)

// Timing picks the forward-pass time model of a role (dynosim-spec.md §3.2.4).
type Timing struct {
	// Type selects the model: default (hardware-aware: the roofline, or composed from a
	// per-operation performance database, see ForwardModel),
	// roofline (always servesweep's analytical model), fixed, or polynomial (the mocker's closed
	// form).
	Type string `yaml:"type" discriminator:"" enum:"default,fixed,polynomial,roofline" default:"default" rejectUnion:"{type} timing does not accept {key} (prefill_ms and decode_ms belong to fixed timing, sequence_overhead_us to default and roofline)"`
	// ForwardModel (type default only; "" means auto) picks how default timing prices a pass:
	// auto uses the forward model that scores better on measured deployments left out of its fit
	// (timing.AutoForwardModel: the roofline today); op_level composes it from the performance
	// database (--systems-dir or SERVESWEEP_SYSTEMS_DIR), which it requires; fpm is not
	// supported yet.
	ForwardModel string `yaml:"forward_model,omitempty" enum:"auto,op_level,fpm" optional:""`
	// PrefillMs and DecodeMs, the cost of every prefill and decode pass in ms, are required by
	// `fixed`.
	PrefillMs *float64 `yaml:"prefill_ms,omitempty" union:"fixed" null:"omit" min:"0" limit:"0,MaxMs"`
	DecodeMs  *float64 `yaml:"decode_ms,omitempty" union:"fixed" null:"omit" min:"0" limit:"0,MaxMs"`
	// SequenceOverheadUs (default and roofline only; nil means the calibrated value,
	// timing.CalibratedEfficiency's SequenceOverheadUs, or op_level's own) is the host time per
	// sampled sequence per pass in µs that the next pass waits for: sampling and each request's
	// output bookkeeping, which differ between engine releases. validate sets it for the
	// InferenceX rows of vLLM 0.10.2 (calibrate.Factors.VLLMSequenceOverheadUs).
	SequenceOverheadUs *float64 `yaml:"sequence_overhead_us,omitempty" union:"default,roofline" null:"omit" min:"0" limit:"0,MaxMs" json:",omitempty"`
}

// HardwareAware reports whether the timing derives pass times from the model and the GPU
// (default or roofline), as opposed to fixed and polynomial times the reference defines exactly.
func (t Timing) HardwareAware() bool { return t.Type == TimingDefault || t.Type == TimingRoofline }

// LabelsOnly reports whether nothing a run of c computes reads engine.hardware or engine.model:
// every worker role of its mode times passes with a timing that reads neither (fixed or
// polynomial: Timing.HardwareAware false) and keeps a fixed KV pool (a `default` pool is sized
// from the GPU's memory and the model's weights). A role the mode needs but c leaves out counts
// as reading them (its defaults do).
func (c *Config) LabelsOnly() bool {
	for _, name := range c.Engine.Mode.Roles() {
		role := c.Engine.Workers.Role(name)
		if role == nil || role.Timing.HardwareAware() || role.KVCache.Capacity.Type != CapacityFixed {
			return false
		}
	}
	return true
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

// Router is the request placement policy across replicas (dynosim-spec.md §3.3).
type Router struct {
	// Policy places the requests; the knobs below belong to kv_router.
	Policy Policy `yaml:"policy" discriminator:"" default:"round_robin" sweep:"" reject:"only valid with router.policy {variants}, got {type}; remove it or set router.policy to {variants}"`
	// PrefillLoadModel says how long a routed prompt counts as prefill load.
	PrefillLoadModel PrefillLoadModel `yaml:"prefill_load_model"`
	// The kv_router knobs; nil when unset (documented defaults 1.0, 1.0 and 0.0).
	OverlapScoreCredit *float64 `yaml:"overlap_score_credit,omitempty" union:"kv_router" null:"omit" min:"0" sweep:""`
	PrefillLoadScale   *float64 `yaml:"prefill_load_scale,omitempty" union:"kv_router" null:"omit" min:"0" sweep:""`
	Temperature        *float64 `yaml:"temperature,omitempty" union:"kv_router" null:"omit" min:"0" sweep:""`
	// Seed seeds the router's random draws: kv_router's choice among workers of equal cost
	// (temperature 0) or its softmin sample (temperature > 0), and the random policy's picks.
	// nil when unset: the router then draws from DefaultRouterSeed. The policies that draw
	// nothing (round_robin, least_loaded) reject it. A servesweep addition to the DynoSim schema,
	// whose router has no seed; the seed check of a sweep moves it (grid.Point.Reseeded). Not
	// encoded in the point ID's JSON when unset, so configs without it keep their IDs.
	Seed *uint64 `yaml:"seed,omitempty" json:",omitempty" union:"kv_router,random" null:"omit"`
}

// DefaultRouterSeed is the seed of the router's random draws when router.seed is unset: 42, the
// reference's default seed (dynosim-spec.md gives 42 for the poisson load's and the
// speculation's seeds; its router has none).
const DefaultRouterSeed = 42

// RandomSeed is the seed the router draws from: Seed, or DefaultRouterSeed when it is unset.
func (r *Router) RandomSeed() uint64 {
	if r.Seed == nil {
		return DefaultRouterSeed
	}
	return *r.Seed
}

// PrefillLoadModel is router.prefill_load_model; aic needs router.policy kv_router.
type PrefillLoadModel struct {
	// Type is none (the load counts until the first token) or aic (it decays over a predicted
	// prefill time).
	Type string `yaml:"type" enum:"none,aic" default:"none" sweep:""`
}

// Planner values (planner.policy).
const (
	plannerDisabled = "disabled"
	plannerEnabled  = "enabled"
)

// Planner is the autoscaler section (dynosim-spec.md §3.4): with policy enabled the simulation
// adds and removes workers during the run (see package sim, planner.go). The other keys are
// valid only with policy enabled; nil or "" means unset, and Settings gives their defaults.
// max_num_fpm_samples, fpm_sample_bucket_size and prophet_window_size are checked but do not
// change the simulation (no forward-pass-metric regression, no prophet predictor).
type Planner struct {
	// Policy is disabled (fixed worker counts) or enabled (autoscaling).
	Policy string `yaml:"policy" discriminator:"" enum:"disabled,enabled" default:"disabled" reject:"only valid when planner.policy is enabled (got \"{type}\"); remove it" sweep:""`

	// Target, the scaling flags and the knobs below are the planner keys of dynosim-spec.md §3.4.
	Target                  string `yaml:"target,omitempty" json:",omitempty" union:"enabled" optional:"" enum:"throughput,latency,sla,load" sweep:""`
	EnableThroughputScaling *bool  `yaml:"enable_throughput_scaling,omitempty" json:",omitempty" union:"enabled"`
	EnableLoadScaling       *bool  `yaml:"enable_load_scaling,omitempty" json:",omitempty" union:"enabled"`
	// The adjustment intervals in seconds.
	ThroughputAdjustmentIntervalSeconds *float64 `yaml:"throughput_adjustment_interval_seconds,omitempty" json:",omitempty" union:"enabled" min:"0.01" sweep:""`
	LoadAdjustmentIntervalSeconds       *float64 `yaml:"load_adjustment_interval_seconds,omitempty" json:",omitempty" union:"enabled" min:"0.01" sweep:""`
	MaxNumFPMSamples                    *int     `yaml:"max_num_fpm_samples,omitempty" json:",omitempty" union:"enabled" min:"1"`
	// FPMSampleBucketSize must be a perfect square.
	FPMSampleBucketSize        *int     `yaml:"fpm_sample_bucket_size,omitempty" json:",omitempty" union:"enabled"`
	LoadScalingDownSensitivity *float64 `yaml:"load_scaling_down_sensitivity,omitempty" json:",omitempty" union:"enabled" min:"0" max:"100" sweep:""`
	LoadMinObservations        *int     `yaml:"load_min_observations,omitempty" json:",omitempty" union:"enabled" min:"1" sweep:""`
	LoadPredictor              string   `yaml:"load_predictor,omitempty" json:",omitempty" union:"enabled" optional:"" enum:"constant,arima,prophet,kalman" sweep:""`
	LoadPredictorLog1p         *bool    `yaml:"load_predictor_log1p,omitempty" json:",omitempty" union:"enabled"`
	ProphetWindowSize          *int     `yaml:"prophet_window_size,omitempty" json:",omitempty" union:"enabled" min:"1"`
	KalmanQLevel               *float64 `yaml:"kalman_q_level,omitempty" json:",omitempty" union:"enabled" min:"0"`
	KalmanQTrend               *float64 `yaml:"kalman_q_trend,omitempty" json:",omitempty" union:"enabled" min:"0"`
	KalmanR                    *float64 `yaml:"kalman_r,omitempty" json:",omitempty" union:"enabled" min:"0"`
	KalmanMinPoints            *int     `yaml:"kalman_min_points,omitempty" json:",omitempty" union:"enabled" min:"1"`
	// MaxNumGPUs and MinNumGPUs are GPU counts; -1 means unlimited (max) or unset (min).
	MaxNumGPUs        *int `yaml:"max_num_gpus,omitempty" json:",omitempty" union:"enabled" min:"1" or:"-1" sweep:""`
	MinNumGPUs        *int `yaml:"min_num_gpus,omitempty" json:",omitempty" union:"enabled" min:"1" or:"-1"`
	MinWorkers        *int `yaml:"min_workers,omitempty" json:",omitempty" union:"enabled" min:"0" sweep:""`
	PrefillMinWorkers *int `yaml:"prefill_min_workers,omitempty" json:",omitempty" union:"enabled" null:"omit" min:"1"`
	DecodeMinWorkers  *int `yaml:"decode_min_workers,omitempty" json:",omitempty" union:"enabled" null:"omit" min:"1"`
}

// Evaluation holds the SLA that defines goodput (dynosim-spec.md §3.5).
type Evaluation struct {
	// SLA is nil when omitted (no goodput).
	SLA *SLA `yaml:"sla,omitempty"`
}

// SLA bounds in ms; nil = unset. E2EMs is exclusive with TTFTMs and ITLMs.
//
// TTFTMs, ITLMs and E2EMs are per-request bounds (dynosim-spec.md §4.2.2): a request meets them
// or not, and goodput and SLA attainment count the requests that meet them all. The P<n><Latency>Ms
// fields (p50_, p90_, p95_ and p99_ followed by ttft_ms, itl_ms, tpot_ms or e2e_ms; a servesweep
// addition) are percentile bounds over the run: the run's percentile of that latency distribution
// (prediction.json's median_ or p<n>_ key: TTFT, TPOT and E2E over completed requests, ITL over
// every inter-token gap) must not exceed the bound. They do not change goodput; PercentileBounds
// lists the ones set. An SLA may hold percentile bounds only.
type SLA struct {
	// TTFTMs bounds the time to first token, ITLMs the inter-token latency and E2EMs the
	// end-to-end latency of a request, in ms.
	TTFTMs *float64 `yaml:"ttft_ms,omitempty" null:"omit" gt:"0"`
	ITLMs  *float64 `yaml:"itl_ms,omitempty" null:"omit" gt:"0"`
	E2EMs  *float64 `yaml:"e2e_ms,omitempty" null:"omit" gt:"0"`

	// Percentile bounds in ms over the run (nil = unset): p50, p90, p95 and p99 of TTFT, ITL
	// (every inter-token gap), TPOT and E2E latency. Unset, they are left out of the config's
	// JSON encoding, so that the point IDs (grid.PointID) of configs without them are unchanged.
	P50TTFTMs *float64 `yaml:"p50_ttft_ms,omitempty" null:"omit" gt:"0" json:",omitempty"`
	P90TTFTMs *float64 `yaml:"p90_ttft_ms,omitempty" null:"omit" gt:"0" json:",omitempty"`
	P95TTFTMs *float64 `yaml:"p95_ttft_ms,omitempty" null:"omit" gt:"0" json:",omitempty"`
	P99TTFTMs *float64 `yaml:"p99_ttft_ms,omitempty" null:"omit" gt:"0" json:",omitempty"`
	P50ITLMs  *float64 `yaml:"p50_itl_ms,omitempty" null:"omit" gt:"0" json:",omitempty"`
	P90ITLMs  *float64 `yaml:"p90_itl_ms,omitempty" null:"omit" gt:"0" json:",omitempty"`
	P95ITLMs  *float64 `yaml:"p95_itl_ms,omitempty" null:"omit" gt:"0" json:",omitempty"`
	P99ITLMs  *float64 `yaml:"p99_itl_ms,omitempty" null:"omit" gt:"0" json:",omitempty"`
	P50TPOTMs *float64 `yaml:"p50_tpot_ms,omitempty" null:"omit" gt:"0" json:",omitempty"`
	P90TPOTMs *float64 `yaml:"p90_tpot_ms,omitempty" null:"omit" gt:"0" json:",omitempty"`
	P95TPOTMs *float64 `yaml:"p95_tpot_ms,omitempty" null:"omit" gt:"0" json:",omitempty"`
	P99TPOTMs *float64 `yaml:"p99_tpot_ms,omitempty" null:"omit" gt:"0" json:",omitempty"`
	P50E2EMs  *float64 `yaml:"p50_e2e_ms,omitempty" null:"omit" gt:"0" json:",omitempty"`
	P90E2EMs  *float64 `yaml:"p90_e2e_ms,omitempty" null:"omit" gt:"0" json:",omitempty"`
	P95E2EMs  *float64 `yaml:"p95_e2e_ms,omitempty" null:"omit" gt:"0" json:",omitempty"`
	P99E2EMs  *float64 `yaml:"p99_e2e_ms,omitempty" null:"omit" gt:"0" json:",omitempty"`
}

// PercentileBound is one percentile bound of evaluation.sla.
type PercentileBound struct {
	// Percentile is 50, 90, 95 or 99.
	Percentile int
	// Latency is the distribution bounded: "ttft", "itl", "tpot" or "e2e" (PercentileLatencies).
	Latency string
	// Ms is the bound in ms (> 0 in a validated config).
	Ms float64
}

// Key is the bound's evaluation.sla key, e.g. p99_itl_ms.
func (b PercentileBound) Key() string {
	return "p" + strconv.Itoa(b.Percentile) + "_" + b.Latency + "_ms"
}

// SLAPercentiles returns the percentiles a percentile bound may name, in the order
// PercentileBounds lists them: 50, 90, 95, 99.
func SLAPercentiles() []int { return []int{50, 90, 95, 99} }

// PercentileLatencies returns the distributions a percentile bound may name, in the order
// PercentileBounds lists them: ttft, itl, tpot, e2e.
func PercentileLatencies() []string { return []string{"ttft", "itl", "tpot", "e2e"} }

// PercentileBounds lists the percentile bounds s sets, by latency (ttft, itl, tpot, e2e) and then
// percentile (50, 90, 95, 99); nil when none is set (or s is nil).
func (s *SLA) PercentileBounds() []PercentileBound {
	if s == nil {
		return nil
	}
	fields := [][]*float64{
		{s.P50TTFTMs, s.P90TTFTMs, s.P95TTFTMs, s.P99TTFTMs},
		{s.P50ITLMs, s.P90ITLMs, s.P95ITLMs, s.P99ITLMs},
		{s.P50TPOTMs, s.P90TPOTMs, s.P95TPOTMs, s.P99TPOTMs},
		{s.P50E2EMs, s.P90E2EMs, s.P95E2EMs, s.P99E2EMs},
	}
	var out []PercentileBound
	for i, lat := range PercentileLatencies() {
		for j, p := range SLAPercentiles() {
			if v := fields[i][j]; v != nil {
				out = append(out, PercentileBound{Percentile: p, Latency: lat, Ms: *v})
			}
		}
	}
	return out
}

// HasRequestBounds reports whether s sets a per-request bound (ttft_ms, itl_ms or e2e_ms).
func (s *SLA) HasRequestBounds() bool {
	return s != nil && (s.TTFTMs != nil || s.ITLMs != nil || s.E2EMs != nil)
}

// Adapters lists the sections the config declares that belong to the dynamo stack's adapters
// (router, planner; dynosim-spec.md §2.1), in that order; the engine stack has none. A caller
// that runs the engine stack reports each one.
func (c *Config) Adapters() []string {
	var out []string
	if c.HasRouter {
		out = append(out, "router")
	}
	if c.HasPlanner {
		out = append(out, "planner")
	}
	return out
}
