package sim

import (
	"errors"
	"fmt"
	"strings"

	"github.com/servesweep/servesweep/sim/config"
	"github.com/servesweep/servesweep/sim/engine"
	"github.com/servesweep/servesweep/sim/timing"
	"github.com/servesweep/servesweep/sim/timing/opdb"
)

// deployment resolves, once per run and only when something needs them, the model architecture,
// the GPUs and the precisions that `default` timing, `default` KV capacity and
// `bytes_per_token: auto` derive values from. fixed/polynomial timing with a fixed capacity
// never asks, so such runs work with any model and hardware name.
type deployment struct {
	cfg *config.Config
	eff timing.Efficiency
	// effGiven says eff was given (sim.Options.Efficiency) rather than the shipped factors: the
	// op_level model then uses it as it is, else its own fixed costs
	// (timing.CalibratedOpLevelEfficiency).
	effGiven bool
	// db is the performance database of `default` timing and of the aic prefill-load model
	// (Options.Systems; nil: none configured).
	db *opdb.DB
	// autoForwardModel is what forward_model auto uses ("": timing.AutoForwardModel; tests set
	// it through Options.reference).
	autoForwardModel string
	// providers records, per role, the timing model built for it (Result.TimingProvider);
	// notes why a role fell back from the database to the roofline, or has a fixed KV pool its
	// GPU could not hold (Result.TimingNotes).
	providers map[config.Role]string
	notes     []string
	// pools are the fixed KV pools larger than their GPUs' memory beside the weights, one error
	// each at engine.workers.ROLE.kv_cache.capacity.blocks (checkWeightsFit; a note too).
	pools config.Errors

	modelDone bool
	model     timing.ModelSpec
	modelErr  error
}

// modelFor returns the model; need says what needs it (for the error message).
func (d *deployment) modelFor(need string) (timing.ModelSpec, error) {
	if !d.modelDone {
		d.modelDone = true
		d.model, d.modelErr = timing.ResolveModel(d.cfg.Engine.Model)
	}
	if d.modelErr != nil {
		return timing.ModelSpec{}, &config.Error{File: d.cfg.File, Path: "engine.model",
			Msg: fmt.Sprintf("%v (servesweep list models prints the catalog and the spellings it takes); needed because %s derives values from the model's architecture", d.modelErr, need)}
	}
	return d.model, nil
}

// hardwareFor returns the GPU of role name (its override, else engine.hardware).
func (d *deployment) hardwareFor(name config.Role, role *config.WorkerRole, need string) (timing.Hardware, error) {
	id, path := d.cfg.Engine.Hardware, "engine.hardware"
	if role.Hardware != "" {
		id, path = role.Hardware, "engine.workers."+string(name)+".hardware"
	}
	hw, err := timing.LookupHardware(id)
	if err != nil {
		return timing.Hardware{}, &config.Error{File: d.cfg.File, Path: path,
			Msg: fmt.Sprintf("%s derives values from the GPU: %v", need, err)}
	}
	return hw, nil
}

// Precisions returns the weight, KV-cache and attention formats a run of cfg uses: engine.precision with
// auto filled from the model (its id or config.json), as default timing, default capacity and
// auto bytes_per_token see them. Errors: an unknown model when a field is auto (*config.Error on
// engine.model), or an unsupported format.
func Precisions(cfg *config.Config) (timing.Precisions, error) {
	d := &deployment{cfg: cfg, eff: timing.CalibratedEfficiency()}
	set := cfg.Engine.Precision
	var m timing.ModelSpec
	if set.Weights == "" || set.Weights == config.PrecisionAuto || set.KVCache == "" || set.KVCache == config.PrecisionAuto {
		var err error
		if m, err = d.modelFor("engine.precision (auto)"); err != nil {
			return timing.Precisions{}, err
		}
	}
	return d.precisions(m)
}

// precisions returns engine.precision with auto fields filled from the model m.
func (d *deployment) precisions(m timing.ModelSpec) (timing.Precisions, error) {
	p := m.Precisions
	if p.Weights == "" {
		p.Weights = timing.BF16
	}
	if p.KVCache == "" {
		p.KVCache = timing.BF16
	}
	set := d.cfg.Engine.Precision
	for _, f := range []struct {
		val, path string
		dst       *timing.Precision
	}{{set.Weights, "engine.precision.weights", &p.Weights}, {set.KVCache, "engine.precision.kv_cache", &p.KVCache},
		{set.Attention, "engine.precision.attention", &p.Attention}} {
		if f.val == "" || f.val == config.PrecisionAuto {
			continue
		}
		x, err := timing.ParsePrecision(f.val)
		if err != nil {
			return p, &config.Error{File: d.cfg.File, Path: f.path, Msg: err.Error()}
		}
		*f.dst = x
	}
	if p.KVCache == timing.FP4 {
		return p, &config.Error{File: d.cfg.File, Path: "engine.precision.kv_cache", Msg: "must be bf16 or fp8, got fp4"}
	}
	return p, nil
}

// shape is the timing shape of a role: one attention-DP rank's tensor × pipeline GPUs, with the
// worker's attention-DP and MoE degrees.
func shape(role *config.WorkerRole) timing.Shape {
	p := role.Parallelism
	return timing.Shape{Tensor: p.Tensor, Pipeline: p.Pipeline, AttentionData: p.AttentionData, MoETensor: p.MoeTensor, MoEExpert: p.MoeExpert,
		RedundantExperts: p.RedundantExperts}
}

// checkShape reports, naming the parallelism field, a role shape model m cannot be split into
// (timing.ModelSpec.ShapeErrors): a *config.Error, or config.Errors when several fields are at
// fault.
func (d *deployment) checkShape(name config.Role, role *config.WorkerRole, m timing.ModelSpec) error {
	var errs config.Errors
	for _, se := range m.ShapeErrors(shape(role)) {
		errs = append(errs, d.cfg.At("engine.workers."+string(name)+".parallelism."+se.Field, se.Msg))
	}
	return oneOrAll(errs)
}

// oneOrAll returns errs as an error: nil when empty, its *config.Error when it holds one, else
// errs itself.
func oneOrAll(errs config.Errors) error {
	switch len(errs) {
	case 0:
		return nil
	case 1:
		return errs[0]
	}
	return errs
}

// gather appends the configuration errors of err (a *config.Error or a config.Errors) to all;
// ok is false when err is another error, which the caller returns as it is.
func gather(all config.Errors, err error) (_ config.Errors, ok bool) {
	var one *config.Error
	var many config.Errors
	switch {
	case errors.As(err, &many):
		return append(all, many...), true
	case errors.As(err, &one):
		return append(all, one), true
	}
	return all, err == nil
}

// checkMoE refuses moe_tensor or moe_expert above 1, or redundant_experts other than 0, unless
// the model is a mixture-of-experts model split legally (timing.ModelSpec.ShapeErrors); the
// model must then resolve, whatever the timing, since only its architecture says whether it has
// experts.
func (d *deployment) checkMoE(name config.Role, role *config.WorkerRole) error {
	par := role.Parallelism
	if par.MoeTensor <= 1 && par.MoeExpert <= 1 && par.RedundantExperts == 0 {
		return nil
	}
	field := "moe_expert"
	switch {
	case par.MoeTensor > 1:
		field = "moe_tensor"
	case par.MoeExpert <= 1:
		field = "redundant_experts"
	}
	m, err := d.modelFor("engine.workers." + string(name) + ".parallelism." + field + " > 1")
	if err != nil {
		return err
	}
	return d.checkShape(name, role, m)
}

// checkShapes reports, over every role of the mode at once, the parallel shapes the model cannot
// be split into: for a role with moe_tensor or moe_expert above 1 (checkMoE), or whose timing
// or KV capacity prices the model (default or roofline timing, default capacity). A role whose
// model does not resolve is left to the check that needs it. Nil, a *config.Error or a
// config.Errors of every fault.
func (d *deployment) checkShapes() error {
	var all config.Errors
	for _, name := range d.cfg.Engine.Mode.Roles() {
		role := d.cfg.Engine.Workers.Role(name)
		if role == nil {
			continue
		}
		var err error
		switch {
		case role.Parallelism.MoeTensor > 1 || role.Parallelism.MoeExpert > 1 || role.Parallelism.RedundantExperts != 0:
			err = d.checkMoE(name, role)
		case role.Timing.Type == config.TimingDefault || role.Timing.Type == config.TimingRoofline || role.KVCache.Capacity.Type == config.CapacityDefault:
			if m, merr := d.modelFor(""); merr == nil {
				err = d.checkShape(name, role, m)
			}
		default:
			// The timing does not price the shape, so the run goes on; but no engine runs it.
			if m, merr := d.modelFor(""); merr == nil {
				if serr := d.checkShape(name, role, m); serr != nil {
					d.notes = append(d.notes, serr.Error()+" (no engine runs this shape; "+string(role.Timing.Type)+" timing does not depend on it)")
				}
			}
		}
		var ok bool
		if all, ok = gather(all, err); !ok {
			return err
		}
	}
	return oneOrAll(all)
}

// timing builds the timing model of role name: its timing type's model, within timing.MTP when
// engine.speculation.kind is mtp (draftModel).
func (d *deployment) timing(name config.Role, role *config.WorkerRole) (timing.Model, error) {
	m, err := d.targetTiming(name, role)
	if err != nil {
		return nil, err
	}
	if s := d.cfg.Engine.Speculation; s != nil && s.Kind == config.SpeculationMTP {
		return d.draftModel(name, role, m, s.NumSpeculativeTokens)
	}
	return m, nil
}

// draftModel wraps target, role name's timing, in timing.MTP with steps draft steps per round,
// each priced like target's forward model (the op-level model when target is one and its
// tables hold the module, else the roofline) on timing.ModelSpec.MTPModule with no per-pass
// host time. Errors (*config.Error on engine.speculation.kind): a fixed or polynomial timing,
// which cannot price the module, and a model without an MTP module.
func (d *deployment) draftModel(name config.Role, role *config.WorkerRole, target timing.Model, steps int) (timing.Model, error) {
	path := "engine.speculation.kind"
	if role.Timing.Type != config.TimingDefault && role.Timing.Type != config.TimingRoofline {
		return nil, &config.Error{File: d.cfg.File, Path: path, Msg: fmt.Sprintf(
			"mtp prices the model's MTP module from its architecture: engine.workers.%s.timing.type must be default or roofline, got %s; use kind ngram for drafts without GPU cost", name, role.Timing.Type)}
	}
	m, hw, prec, err := d.resolve(name, role, path+" (mtp)")
	if err != nil {
		return nil, err
	}
	module, err := m.MTPModule()
	if err != nil {
		return nil, &config.Error{File: d.cfg.File, Path: path, Msg: err.Error() + "; use kind ngram (servesweep list models shows which models have MTP modules)"}
	}
	eff := roleEfficiency(d.eff, role)
	eff.PassOverheadMs, eff.SequenceOverheadUs = 0, 0
	var draft timing.Model
	if _, ok := target.(*timing.OpLevel); ok && d.db != nil {
		olEff := eff
		if !d.effGiven {
			olEff = timing.CalibratedOpLevelEfficiency()
			olEff.PassOverheadMs, olEff.SequenceOverheadUs = 0, 0
		}
		e := &d.cfg.Engine
		if ol, err := timing.NewOpLevel(timing.OpLevelSource{DB: d.db, GPU: hw.ID, Backend: e.Backend, Version: e.BackendVersion},
			module, hw, prec, shape(role), olEff); err == nil {
			draft = ol
		}
	}
	if draft == nil {
		r, err := timing.NewRoofline(module, hw, prec, shape(role), eff)
		if err != nil {
			return nil, &config.Error{File: d.cfg.File, Path: path, Msg: err.Error()}
		}
		draft = r
	}
	return &timing.MTP{Target: target, Draft: draft, Steps: steps}, nil
}

// targetTiming builds the timing model of role name's timing type.
func (d *deployment) targetTiming(name config.Role, role *config.WorkerRole) (timing.Model, error) {
	path := "engine.workers." + string(name) + ".timing"
	switch role.Timing.Type {
	case config.TimingFixed:
		d.provide(name, "fixed")
		return timing.Fixed{PrefillMs: deref(role.Timing.PrefillMs), DecodeMs: deref(role.Timing.DecodeMs)}, nil
	case config.TimingPolynomial:
		d.provide(name, "polynomial")
		return timing.Polynomial{}, nil
	case config.TimingDefault, config.TimingRoofline:
		m, hw, prec, err := d.resolve(name, role, path+" ("+role.Timing.Type+")")
		if err != nil {
			return nil, err
		}
		if note := linkDomainNote(name, role.Parallelism, hw, m.MoE != nil); note != "" {
			d.notes = append(d.notes, note)
		}
		if role.Timing.Type == config.TimingDefault {
			if ol, err := d.opLevel(name, role, m, hw, prec); ol != nil || err != nil {
				return ol, err
			}
		}
		r, err := timing.NewRoofline(m, hw, prec, shape(role), roleEfficiency(d.eff, role))
		if err != nil {
			return nil, &config.Error{File: d.cfg.File, Path: path, Msg: err.Error()}
		}
		if prec.Weights == timing.FP4 && !hw.FP4TensorCores() {
			d.notes = append(d.notes, fmt.Sprintf("engine.workers.%s: %s has no FP4 tensor cores: the roofline prices fp4 weights at its BF16 GEMM peak (weight-only 4-bit kernels dequantize to BF16), streaming their bytes without Blackwell's FP4Memory share", name, hw.ID))
		}
		if d.cfg.Engine.CUDAGraphs == config.CUDAGraphsPiecewise {
			r = r.Piecewise()
		}
		if d.cfg.Engine.Backend == config.BackendSGLang {
			r = r.SGLangPrefill(d.eff.SGLangMoEPrefillScale)
		}
		return d.hostOverlap(name, role, "roofline", r, func() timing.Model { return r.Overlapped() }), nil
	}
	return nil, &config.Error{File: d.cfg.File, Path: path + ".type",
		Msg: fmt.Sprintf("must be one of default, roofline, fixed, polynomial, got %q", role.Timing.Type)}
}

// resolve finds what a hardware-aware model of role name needs: the model (its shape checked
// against the role's parallelism), the role's hardware and the precisions. need names the
// setting that needs them, for errors.
func (d *deployment) resolve(name config.Role, role *config.WorkerRole, need string) (timing.ModelSpec, timing.Hardware, timing.Precisions, error) {
	m, err := d.modelFor(need)
	if err != nil {
		return m, timing.Hardware{}, timing.Precisions{}, err
	}
	if err := d.checkShape(name, role, m); err != nil {
		return m, timing.Hardware{}, timing.Precisions{}, err
	}
	hw, err := d.hardwareFor(name, role, need)
	if err != nil {
		return m, hw, timing.Precisions{}, err
	}
	prec, err := d.precisions(m)
	return m, hw, prec, err
}

// providerName is Result.TimingProvider: the one provider of the roles, or "prefill: X;
// decode: Y" when a disaggregated deployment's roles differ.
func (d *deployment) providerName() string {
	p, q := d.providers[config.RolePrefill], d.providers[config.RoleDecode]
	switch {
	case d.cfg.Engine.Mode != config.ModeDisaggregated:
		return d.providers[config.RoleAggregated]
	case p == q:
		return p
	}
	return "prefill: " + p + "; decode: " + q
}

// fallback records why forward_model auto priced role name with the roofline although a
// performance database is configured (Result.TimingNotes).
func (d *deployment) fallback(name config.Role, err error) {
	d.notes = append(d.notes, fmt.Sprintf("engine.workers.%s.timing: forward_model auto uses the roofline: %v", name, err))
}

// provide records the timing model of role name.
func (d *deployment) provide(name config.Role, provider string) {
	if d.providers == nil {
		d.providers = map[config.Role]string{}
	}
	d.providers[name] = provider
}

// opLevel builds the op_level model of a `default` timing role from the performance database:
// with forward_model auto, nil (the roofline) unless auto is op_level (d.autoForwardModel), and then the
// model when the database is configured and holds every table the role needs, else nil; with op_level, the model or a
// *config.Error on timing.forward_model naming the GPU, backend, version and path searched.
func (d *deployment) opLevel(name config.Role, role *config.WorkerRole, m timing.ModelSpec, hw timing.Hardware,
	prec timing.Precisions) (timing.Model, error) {
	fm := role.Timing.ForwardModel
	auto := d.autoForwardModel
	if auto == "" {
		auto = timing.AutoForwardModel
	}
	if fm != config.ForwardOpLevel && auto != config.ForwardOpLevel {
		// auto is the roofline (timing.AutoForwardModel).
		return nil, nil
	}
	path := "engine.workers." + string(name) + ".timing.forward_model"
	e := &d.cfg.Engine
	if d.db == nil {
		if fm == config.ForwardOpLevel {
			return nil, &config.Error{File: d.cfg.File, Path: path, Err: ErrNoSystems, Msg: fmt.Sprintf(
				"op_level needs a performance database (an AIConfigurator systems folder) for gpu %s, backend %s, version %s, "+
					"and none is configured; configure one, or use forward_model: auto", hw.ID, e.Backend, versionName(e.BackendVersion))}
		}
		return nil, nil
	}
	eff := d.eff
	if !d.effGiven {
		eff = timing.CalibratedOpLevelEfficiency()
	}
	eff = roleEfficiency(eff, role)
	ol, err := timing.NewOpLevel(timing.OpLevelSource{DB: d.db, GPU: hw.ID, Backend: e.Backend, Version: e.BackendVersion},
		m, hw, prec, shape(role), eff)
	var me *opdb.MissingError
	var ue *timing.UnsupportedModelError
	if errors.As(err, &ue) {
		if fm == config.ForwardOpLevel {
			return nil, &config.Error{File: d.cfg.File, Path: path, Msg: err.Error() + "; use forward_model: auto or timing type roofline"}
		}
		d.fallback(name, err)
		return nil, nil
	}
	if errors.As(err, &me) && me.What == "version" && e.BackendVersion != "" {
		// A version the user asked for is never silently replaced, whatever the forward model.
		return nil, &config.Error{File: d.cfg.File, Path: "engine.backend_version", Msg: err.Error()}
	}
	if err != nil {
		// auto falls back only when a table is absent: a broken database is bad input.
		if fm == config.ForwardOpLevel || me == nil {
			return nil, &config.Error{File: d.cfg.File, Path: path, Msg: fmt.Sprintf("%s for gpu %s, backend %s, version %s: %v",
				forwardName(fm), hw.ID, e.Backend, versionName(e.BackendVersion), err)}
		}
		d.fallback(name, err)
		return nil, nil
	}
	if d.cfg.Engine.CUDAGraphs == config.CUDAGraphsPiecewise {
		ol = ol.Piecewise()
	}
	return d.hostOverlap(name, role, ol.Provider, ol, func() timing.Model { return ol.Overlapped() }), nil
}

// hostOverlap records provider as role name's timing model and returns serial, or, when the
// role's engine overlaps scheduling with the GPU (config.Engine.HostOverlap), overlapped() with
// ", overlap scheduling" after the provider's name (Result.TimingProvider). A role with its own
// timing.sequence_overhead_us has ", N µs per sequence" after the name, and an engine with
// piecewise CUDA graphs (config.Engine.CUDAGraphs) ", piecewise CUDA graphs".
func (d *deployment) hostOverlap(name config.Role, role *config.WorkerRole, provider string, serial timing.Model,
	overlapped func() timing.Model) timing.Model {
	if v := role.Timing.SequenceOverheadUs; v != nil {
		provider += fmt.Sprintf(", %g µs per sequence", *v)
	}
	if d.cfg.Engine.CUDAGraphs == config.CUDAGraphsPiecewise {
		provider += ", piecewise CUDA graphs"
	}
	if d.cfg.Engine.HostOverlap(role.Parallelism.Pipeline) {
		d.provide(name, provider+", overlap scheduling")
		return overlapped()
	}
	d.provide(name, provider)
	return serial
}

// prefillLoadMs is the prefill-time predictor of router.prefill_load_model aic for the router of
// role name (router.Options.PrefillMs): the time in ms the op_level model of the role's
// deployment (model, GPU, backend and version, parallel shape, precisions) gives a pass that
// computes only the prefill of newTokens uncached prompt tokens after cachedTokens cached ones
// and samples its first token, whatever timing the role itself uses. nil with load model none and
// for the decode role (its router does not track prefill). Errors (*config.Error on
// router.prefill_load_model.type unless the model or GPU is unknown): no performance database
// configured, or one without the tables the deployment needs. The predictor stands in for the
// router's estimate, not the engine, and stays serial under engine.overlap_scheduling.
func (d *deployment) prefillLoadMs(name config.Role, role *config.WorkerRole) (func(newTokens, cachedTokens int) float64, error) {
	if d.cfg.Router.PrefillLoadModel.Type != "aic" || name == config.RoleDecode {
		return nil, nil
	}
	const path = "router.prefill_load_model.type"
	m, hw, prec, err := d.resolve(name, role, path+" (aic)")
	if err != nil {
		return nil, err
	}
	e := &d.cfg.Engine
	if d.db == nil {
		return nil, &config.Error{File: d.cfg.File, Path: path, Err: ErrNoSystems, Msg: fmt.Sprintf(
			"aic predicts prefill times with the op_level model and needs a performance database (an AIConfigurator systems "+
				"folder) for gpu %s, backend %s, version %s, and none is configured; configure one, or use type: none",
			hw.ID, e.Backend, versionName(e.BackendVersion))}
	}
	eff := d.eff
	if !d.effGiven {
		eff = timing.CalibratedOpLevelEfficiency()
	}
	eff = roleEfficiency(eff, role)
	ol, err := timing.NewOpLevel(timing.OpLevelSource{DB: d.db, GPU: hw.ID, Backend: e.Backend, Version: e.BackendVersion},
		m, hw, prec, shape(role), eff)
	if err != nil {
		return nil, &config.Error{File: d.cfg.File, Path: path, Msg: fmt.Sprintf(
			"aic needs the op_level model for gpu %s, backend %s, version %s: %v; use type: none", hw.ID, e.Backend, versionName(e.BackendVersion), err)}
	}
	return func(n, c int) float64 {
		var b timing.Batch
		b.PrefillRequests, b.PrefillTokens, b.PrefillContextTokens = 1, n, c
		b.PrefillAttentionPairs = int64(n)*int64(c) + int64(n)*int64(n+1)/2
		b.DecodeRequests, b.DecodeKVTokens, b.SampledTokens = 1, n+c, 1
		return ol.PassMs(&b)
	}, nil
}

// forwardName is forward_model for messages ("" = auto).
func forwardName(fm string) string {
	if fm == "" {
		return config.ForwardAuto
	}
	return fm
}

// versionName is engine.backend_version for messages ("" = the newest).
func versionName(v string) string {
	if v == "" {
		return "newest"
	}
	return v
}

// CapacityBlocks is the KV pool per attention-DP rank of role name of cfg, in blocks: the fixed
// count, or the one `default` capacity derives from the model, the GPU, the precisions and the
// worker shape (timing.KVCapacity), capped at max_tokens when given, exactly as Run sizes it. Errors: the role is not declared,
// or its capacity cannot be derived (*config.Error naming the field).
func CapacityBlocks(cfg *config.Config, name config.Role) (int, error) {
	role := cfg.Engine.Workers.Role(name)
	if role == nil {
		return 0, &config.Error{File: cfg.File, Path: "engine.workers." + string(name), Msg: "is not declared"}
	}
	d := &deployment{cfg: cfg, eff: timing.CalibratedEfficiency()}
	return d.capacityBlocks(name, role)
}

// capacityBlocks is the KV pool per attention-DP rank of role name, in blocks.
func (d *deployment) capacityBlocks(name config.Role, role *config.WorkerRole) (int, error) {
	kv := &role.KVCache
	path := "engine.workers." + string(name) + ".kv_cache.capacity"
	switch kv.Capacity.Type {
	case config.CapacityFixed:
		if kv.Capacity.Blocks <= 0 {
			return 0, &config.Error{File: d.cfg.File, Path: path + ".blocks", Msg: "fixed KV capacity requires blocks > 0"}
		}
		if t := role.Timing.Type; t == config.TimingDefault || t == config.TimingRoofline {
			// Timing that prices the model on the GPU needs a shape the weights fit on, whatever
			// the KV pool's size: a sweep must not recommend a deployment that cannot load.
			if err := d.checkWeightsFit(name, role, path+" (fixed, with "+t+" timing)"); err != nil {
				return 0, err
			}
		}
		return kv.Capacity.Blocks, nil
	case config.CapacityDefault:
		need := path + " (default)"
		m, err := d.modelFor(need)
		if err != nil {
			return 0, err
		}
		if err := d.checkShape(name, role, m); err != nil {
			return 0, err
		}
		hw, err := d.hardwareFor(name, role, need)
		if err != nil {
			return 0, err
		}
		prec, err := d.precisions(m)
		if err != nil {
			return 0, err
		}
		c, err := timing.KVCapacity(timing.CapacityInput{
			Model: m, Hardware: hw, Precisions: prec, Shape: shape(role),
			MemoryFraction: kv.Capacity.MemoryFraction, FractionOfFree: d.cfg.Engine.Backend == config.BackendTRTLLM,
			ReserveGiB: kv.Capacity.ReserveGiB,
			BlockSize:  kv.BlockSize, MaxBatchedTokens: passTokens(d.cfg.Engine.Backend, role),
			MaxSequences: role.Scheduler.MaxSequences, KVBytesPerToken: kv.BytesPerToken,
		})
		if err != nil {
			return 0, &config.Error{File: d.cfg.File, Path: path, Msg: err.Error()}
		}
		if n := kv.Capacity.MaxTokens; n > 0 {
			if n < kv.BlockSize {
				return 0, &config.Error{File: d.cfg.File, Path: path + ".max_tokens",
					Msg: fmt.Sprintf("is %d tokens, less than one KV block of %d (kv_cache.block_size); give at least %d", n, kv.BlockSize, kv.BlockSize)}
			}
			return min(c.Blocks, n/kv.BlockSize), nil
		}
		return c.Blocks, nil
	}
	return 0, &config.Error{File: d.cfg.File, Path: path + ".type",
		Msg: fmt.Sprintf("must be one of default, fixed, got %q", kv.Capacity.Type)}
}

// CheckShapes refuses, whatever the timing, a role whose parallel shape cfg's model cannot be
// split into (timing.ModelSpec.ShapeErrors), naming each field: export's check, since no engine
// launches such a shape. Nil when every shape is valid or the model is not in the catalog (then
// nothing says how it splits).
func CheckShapes(cfg *config.Config) error {
	d := &deployment{cfg: cfg, eff: timing.CalibratedEfficiency()}
	m, err := d.modelFor("")
	if err != nil {
		return nil
	}
	var all config.Errors
	for _, name := range cfg.Engine.Mode.Roles() {
		role := cfg.Engine.Workers.Role(name)
		if role == nil {
			continue
		}
		all, _ = gather(all, d.checkShape(name, role, m)) // checkShape returns configuration errors only
	}
	return oneOrAll(all)
}

// CheckSingleNode refuses a role whose worker needs more GPUs than one node of its hardware
// drives (timing.Hardware.NodeGPUs), naming engine.workers.<role>.parallelism: export's check,
// since its launch files start each worker as one single-node process. Nil when every worker
// fits one node or the hardware is not in the catalog.
func CheckSingleNode(cfg *config.Config) error {
	d := &deployment{cfg: cfg}
	var all config.Errors
	for _, name := range cfg.Engine.Mode.Roles() {
		role := cfg.Engine.Workers.Role(name)
		if role == nil {
			continue
		}
		hw, err := d.hardwareFor(name, role, "")
		if err != nil || hw.NodeGPUs == 0 {
			continue
		}
		if n := role.Parallelism.GPUsPerWorker(); n > hw.NodeGPUs {
			all = append(all, &config.Error{File: cfg.File, Path: "engine.workers." + string(name) + ".parallelism",
				Msg: fmt.Sprintf("a worker of %d GPUs (tensor × pipeline × attention_data) spans %d nodes of %d %s GPUs; the export writes "+
					"single-node launches: use workers of at most %d GPUs, or launch this one across nodes by hand",
					n, (n+hw.NodeGPUs-1)/hw.NodeGPUs, hw.NodeGPUs, hw.ID, hw.NodeGPUs)})
		}
	}
	return oneOrAll(all)
}

// DeploymentNotes says what a real deployment of cfg could not do as configured, whatever the
// timing model: for each role with a fixed KV pool, when cfg's model is known, why the role
// cannot be built (weights that do not fit its GPUs, a shape the model cannot be split into) or
// that its pool is larger than the memory beside the weights (checkWeightsFit). export prints
// them: a launch script asks the engine for that pool. Nil when the model is not in the catalog.
func DeploymentNotes(cfg *config.Config) []string {
	d, errs := undeployable(cfg)
	var notes []string
	for _, err := range errs {
		notes = append(notes, err.Error())
	}
	return append(notes, d.notes...)
}

// Deployable is nil when a real deployment of cfg could be built as configured, whatever the
// timing model; else the reason, when cfg's model is in the catalog: a context_length above the
// model's (CheckContextLength), and for each role with a fixed KV pool (the pools `default`
// capacity derives refuse such a deployment themselves) weights that do not fit the role's GPUs'
// whole memory, or a shape the model cannot be split into (checkWeightsFit's refusals;
// *config.Error naming the path, several joined). A model outside the catalog is nil: its
// timing can only run on labels. A sweep filters such points as invalid (a 405B model on one 48 GB GPU is not a deployment to
// recommend, whatever a label-only timing says of it); predict warns and runs them, as the
// reference does.
func Deployable(cfg *config.Config) error {
	_, err := DeployableNotes(cfg)
	return err
}

// DeployableNotes is Deployable's verdict with the notes DeploymentNotes adds to it: the fixed KV
// pools larger than their GPUs' memory beside the weights, which a deployment of cfg could not
// allocate but a run simulates (a sweep prints them once per pool; PoolsBeyondMemory).
func DeployableNotes(cfg *config.Config) ([]string, error) {
	d, errs := undeployable(cfg)
	var all config.Errors
	for _, err := range errs {
		var ok bool
		if all, ok = gather(all, err); !ok {
			return d.notes, err
		}
	}
	return d.notes, oneOrAll(all)
}

// PoolsBeyondMemory returns one *config.Error per worker role of cfg whose fixed KV pool is
// larger than its GPUs' memory beside the weights and a pass's activations, at
// engine.workers.ROLE.kv_cache.capacity.blocks: the GiB of KV cache per GPU the blocks need, the
// GiB the GPU has beside the weights and activations, and the most blocks that fit. An engine
// launched with such a pool fails to allocate it at startup or to run its first full pass, so
// export refuses it; predict and sweep simulate it with a note, as the reference accepts any fixed
// pool. nil when every pool fits, and for a model or a role's GPU outside the catalogs (no memory
// to measure against).
func PoolsBeyondMemory(cfg *config.Config) config.Errors {
	d, _ := undeployable(cfg)
	return d.pools
}

// undeployable runs CheckContextLength, and checkWeightsFit on every role of cfg with a fixed KV
// pool, when cfg's model is in the catalog and the role's GPU too: their refusals, and the
// deployment whose notes hold the pools larger than the memory beside the weights.
func undeployable(cfg *config.Config) (*deployment, []error) {
	d := &deployment{cfg: cfg, eff: timing.CalibratedEfficiency()}
	m, err := d.modelFor("")
	if err != nil {
		return d, nil
	}
	var errs []error
	if err := contextLengthError(cfg, m); err != nil {
		errs = append(errs, err)
	}
	for _, name := range cfg.Engine.Mode.Roles() {
		role := cfg.Engine.Workers.Role(name)
		if role == nil || role.KVCache.Capacity.Type != config.CapacityFixed {
			continue
		}
		if _, err := d.hardwareFor(name, role, ""); err != nil {
			// A GPU servesweep does not know has no memory to check the pool against: under a
			// timing that reads no GPU it is a label (predict says so), and a timing that does
			// refuses it.
			continue
		}
		if err := d.checkWeightsFit(name, role, "engine.workers."+string(name)+".kv_cache.capacity"); err != nil {
			errs = append(errs, err)
		}
	}
	return d, errs
}

// CheckContextLength refuses an engine.context_length above the model's max_position_embeddings
// (timing.ModelSpec.MaxContext) when the model is in the catalog or a config.json directory: no
// engine serves it as configured (vLLM and SGLang refuse a longer max-model-len or
// context-length at startup), so a sweep filters such a point and export writes no launch for it;
// predict warns and runs it (Deployable). A *config.Error naming engine.context_length; nil for
// "max", a length within the limit, or a model servesweep cannot read.
func CheckContextLength(cfg *config.Config) error {
	if cfg.Engine.ContextLength <= 0 {
		return nil
	}
	m, err := timing.ResolveModel(cfg.Engine.Model)
	if err != nil {
		return nil
	}
	return contextLengthError(cfg, m)
}

// contextLengthError is CheckContextLength for cfg's model m, already resolved.
func contextLengthError(cfg *config.Config, m timing.ModelSpec) error {
	n := cfg.Engine.ContextLength
	if n <= 0 || m.MaxContext <= 0 || n <= m.MaxContext {
		return nil
	}
	return &config.Error{File: cfg.File, Path: "engine.context_length",
		Msg: fmt.Sprintf("%d tokens is above %s's max_position_embeddings %d: engines refuse a longer context at startup "+
			"(vLLM's max-model-len, SGLang's context-length); valid: 1 to %d, or max", n, m.ID, m.MaxContext, m.MaxContext)}
}

// checkWeightsFit refuses a role whose weights do not fit its GPUs' whole memory (the check
// `default` capacity makes at its memory fraction), naming path, and notes (Result.TimingNotes)
// a fixed KV pool larger than the memory left beside the weights.
func (d *deployment) checkWeightsFit(name config.Role, role *config.WorkerRole, path string) error {
	m, err := d.modelFor(path)
	if err != nil {
		return err
	}
	if err := d.checkShape(name, role, m); err != nil {
		return err
	}
	hw, err := d.hardwareFor(name, role, path)
	if err != nil {
		return err
	}
	prec, err := d.precisions(m)
	if err != nil {
		return err
	}
	// A fixed pool names no memory fraction: the weights must fit the whole memory.
	kv := &role.KVCache
	c, err := timing.KVCapacity(timing.CapacityInput{
		Model: m, Hardware: hw, Precisions: prec, Shape: shape(role),
		MemoryFraction: 1,
		BlockSize:      kv.BlockSize, MaxBatchedTokens: passTokens(d.cfg.Engine.Backend, role),
		MaxSequences: role.Scheduler.MaxSequences, KVBytesPerToken: kv.BytesPerToken,
	})
	if err != nil && c.WeightsGiB >= c.UsableGiB && c.UsableGiB > 0 {
		return &config.Error{File: d.cfg.File, Path: path, Msg: err.Error()}
	}
	// The fixed pool itself must fit beside the weights and one pass's activations (and a
	// linear-attention state pool); the runtime reserve, which engines size differently, is left
	// aside: with a pool past this bound no engine can run a full pass.
	if c.KVBytesPerTokenPerGPU > 0 && c.UsableGiB > 0 {
		need := float64(kv.Capacity.Blocks) * float64(kv.BlockSize) * float64(c.KVBytesPerTokenPerGPU) / (1 << 30)
		if room := c.UsableGiB - c.WeightsGiB - c.ActivationGiB - c.StateGiB; need > room {
			// The reference accepts any fixed pool (its seed configs use one no GPU holds), so
			// this is a note, not an error: the run simulates a pool the GPU could not have.
			// Export refuses it (PoolsBeyondMemory): the engine could not allocate it.
			blocks := "engine.workers." + string(name) + ".kv_cache.capacity.blocks"
			state := ""
			if c.StateGiB > 0 {
				state = fmt.Sprintf(" and %.1f GiB of linear-attention state", c.StateGiB)
			}
			msg := fmt.Sprintf("%d blocks of %d tokens need %.1f GiB of KV cache per GPU (%d bytes a token), "+
				"but %s has %.1f GiB beside %.1f GiB of weights and %.1f GiB of a pass's activations (max_batched_tokens' and "+
				"max_sequences' sampler logits)%s: this GPU could not hold the pool; "+
				"at most %d blocks fit, or use capacity {type: default} to derive the pool from the memory",
				kv.Capacity.Blocks, kv.BlockSize, need, c.KVBytesPerTokenPerGPU, hw.ID, room, c.WeightsGiB, c.ActivationGiB, state,
				int(max(room, 0)*(1<<30)/(float64(kv.BlockSize)*float64(c.KVBytesPerTokenPerGPU))))
			d.notes = append(d.notes, blocks+": "+msg)
			d.pools = append(d.pools, &config.Error{File: d.cfg.File, Path: blocks, Msg: msg})
		}
	}
	return nil
}

// transferBytesPerToken is kv_transfer.bytes_per_token `auto`: one prefill GPU's share of a
// token's KV, in engine.precision.kv_cache (a numeric prefill kv_cache.bytes_per_token is
// scaled by the same share).
func (d *deployment) transferBytesPerToken(prefill *config.WorkerRole) (float64, error) {
	const need = "engine.kv_transfer.bytes_per_token (auto)"
	m, err := d.modelFor(need)
	if err != nil {
		return 0, err
	}
	prec, err := d.precisions(m)
	if err != nil {
		return 0, err
	}
	s := shape(prefill)
	share := float64(m.KVBytesPerTokenPerGPU(prec.KVCache, s.Tensor, s.Pipeline))
	if whole := prefill.KVCache.BytesPerToken; whole > 0 {
		share *= float64(whole) / float64(m.KVBytesPerTokenAs(prec.KVCache))
	}
	if !(share > 0) {
		return 0, &config.Error{File: d.cfg.File, Path: "engine.kv_transfer.bytes_per_token",
			Msg: "auto needs the model's layers, KV heads and head dim; or give bytes per token"}
	}
	return share, nil
}

// passTokens is the most tokens one pass of role computes: scheduler.max_batched_tokens, or
// under SGLang, which ignores it, its chunked-prefill budget (scheduler.chunked_prefill_size).
func passTokens(backend string, role *config.WorkerRole) int {
	if backend == config.BackendSGLang {
		return engine.DefaultSGLang(1, role.Parallelism.AttentionData, role.Scheduler.ChunkedPrefillSize, 0).ChunkedPrefillSize
	}
	return role.Scheduler.MaxBatchedTokens
}

// MinSGLangBlockTokens is the least number of tokens per KV block an SGLang rank allocates and
// matches prefixes in. SGLang's page size defaults to 1 token; a chained hash per token would
// cost 8 bytes of memory and a hash-table entry per simulated token, so a rank with a smaller
// page size works in blocks of the smallest multiple of the page size that reaches 16 tokens.
// Prefix matches are then whole 16-token blocks (at most 15 tokens shorter than SGLang's
// token-exact radix match) and a request holds at most 15 tokens of KV more than it would;
// chunks and budgets stay in pages (engine.SGLangConfig.PageSize).
const MinSGLangBlockTokens = 16

// rankBlockSize is the KV block size a rank of role works in, in tokens: kv_cache.block_size,
// raised for SGLang to MinSGLangBlockTokens as described there.
func rankBlockSize(backend string, role *config.WorkerRole) int {
	bs := role.KVCache.BlockSize
	if backend != config.BackendSGLang || bs >= MinSGLangBlockTokens {
		return bs
	}
	return bs * ((MinSGLangBlockTokens + bs - 1) / bs)
}

// checkStyle refuses what a backend's scheduler style cannot run (*config.Error naming the
// field): under SGLang a page (kv_cache.block_size) larger than the chunked-prefill budget of
// scheduler.chunked_prefill_size (8192 when 0) / attention_data tokens, which could never hold
// a chunk of a long prompt; under
// TensorRT-LLM a max_batched_tokens below kv_cache.block_size, since a context chunk is a whole
// number of KV blocks.
func (d *deployment) checkStyle(name config.Role, role *config.WorkerRole) error {
	p := "engine.workers." + string(name)
	switch d.cfg.Engine.Backend {
	case config.BackendSGLang:
		total := engine.SGLangChunk(role.Scheduler.ChunkedPrefillSize)
		budget := engine.DefaultSGLang(role.KVCache.BlockSize, role.Parallelism.AttentionData, total, 0).ChunkedPrefillSize
		if role.KVCache.BlockSize > budget {
			return &config.Error{File: d.cfg.File, Path: p + ".kv_cache.block_size", Msg: fmt.Sprintf(
				"is %d tokens, more than SGLang's chunked-prefill budget of %d / attention_data %d = %d tokens; use a page size <= %d, a larger scheduler.chunked_prefill_size or less attention_data",
				role.KVCache.BlockSize, total, role.Parallelism.AttentionData, budget, budget)}
		}
	case config.BackendTRTLLM:
		if role.Scheduler.MaxBatchedTokens < role.KVCache.BlockSize {
			return &config.Error{File: d.cfg.File, Path: p + ".scheduler.max_batched_tokens", Msg: fmt.Sprintf(
				"is %d, below kv_cache.block_size %d: TensorRT-LLM cuts context chunks at whole KV blocks; use at least %d",
				role.Scheduler.MaxBatchedTokens, role.KVCache.BlockSize, role.KVCache.BlockSize)}
		}
	}
	return nil
}

// rankBlocks is the KV pool of one rank of role name in rankBlockSize blocks: the pages of
// capacityBlocks regrouped, whole blocks only. Errors: those of capacityBlocks, and a pool
// smaller than one block, and those of checkStyle.
func (d *deployment) rankBlocks(name config.Role, role *config.WorkerRole) (blocks, blockSize int, err error) {
	if err := d.checkStyle(name, role); err != nil {
		return 0, 0, err
	}
	pages, err := d.capacityBlocks(name, role)
	if err != nil {
		return 0, 0, err
	}
	bs := rankBlockSize(d.cfg.Engine.Backend, role)
	blocks = int(int64(pages) * int64(role.KVCache.BlockSize) / int64(bs))
	if blocks < 1 {
		return 0, 0, &config.Error{File: d.cfg.File, Path: "engine.workers." + string(name) + ".kv_cache.capacity",
			Msg: fmt.Sprintf("holds %d tokens of KV per rank; an SGLang rank needs at least %d", pages*role.KVCache.BlockSize, bs)}
	}
	return blocks, bs, nil
}

// roleEfficiency is eff with the role's own per-sequence host time (timing.sequence_overhead_us)
// when its config gives one.
func roleEfficiency(eff timing.Efficiency, role *config.WorkerRole) timing.Efficiency {
	if v := role.Timing.SequenceOverheadUs; v != nil {
		eff.SequenceOverheadUs = *v
	}
	return eff
}

// linkDomainNote is the note for a worker of role name with parallelism p on GPUs hw whose GPUs
// span more than one link domain (Hardware.WorkerSpansLinkDomain), "" for one that does not: which
// of its collectives cross nodes and how the roofline prices them (all-reduces at the network
// port's bandwidth and timing.NetworkAllReduceLatencyUs; all-to-alls at the port's bandwidth and
// the per-GPU AllToAllPeerLatencyUs, not the network's own latency; pipeline sends at the GPU
// link's bandwidth and latency), and the bias measured on such workers (timing.MultiNodeBias). moe says whether the model has experts (its
// moe_tensor and moe_expert groups).
func linkDomainNote(name config.Role, p config.Parallelism, hw timing.Hardware, moe bool) string {
	n := p.GPUsPerWorker()
	if !hw.WorkerSpansLinkDomain(n) {
		return ""
	}
	port := fmt.Sprintf("each GPU's %g GB/s network port", hw.NetworkGBps)
	if !(hw.NetworkGBps > 0) {
		port = fmt.Sprintf("the GPU link's %g GB/s (the catalog gives %s no network port)", hw.LinkGBps, hw.ID)
	}
	var crossing []string
	if g := max(p.Tensor, moeGroup(moe, p.MoeTensor)); hw.WorkerSpansLinkDomain(g) {
		crossing = append(crossing, fmt.Sprintf("its all-reduces over %d GPUs, priced at %s and %.3g µs each (NCCL's inter-node latency)", g, port,
			timing.NetworkAllReduceLatencyUs(g, hw.LinkDomainGPUs)))
	}
	if g := moeGroup(moe, p.MoeExpert); hw.WorkerSpansLinkDomain(g) {
		crossing = append(crossing, fmt.Sprintf("its all-to-alls over %d GPUs, priced at %s and a fixed latency per GPU beyond the %d the kernel tables measure, not the network's own",
			g, port, timing.AllToAllTableGPUs))
	}
	if p.Pipeline > 1 {
		crossing = append(crossing, "its pipeline sends, priced at the GPU link's bandwidth and latency, not the network's")
	}
	if len(crossing) == 0 {
		crossing = append(crossing, "its collectives, priced as within one domain")
	}
	return fmt.Sprintf("engine.workers.%s: a worker of %d %s GPUs spans more than one link domain of %d; between nodes run %s: "+
		"its times are optimistic (%s): do not rank it against shapes within one link domain on these figures alone",
		name, n, hw.ID, hw.LinkDomainGPUs, strings.Join(crossing, "; "), timing.MultiNodeBias)
}

// moeGroup is g for a model with experts and 1 for one without (whose moe_tensor and
// moe_expert are unused).
func moeGroup(moe bool, g int) int {
	if moe {
		return g
	}
	return 1
}
