package grid

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/servesweep/servesweep/sim"
	"github.com/servesweep/servesweep/sim/config"
	"github.com/servesweep/servesweep/sim/optimization"
	"github.com/servesweep/servesweep/sim/timing"
	"gopkg.in/yaml.v3"
)

// Filter reasons of Expansion.Filtered: why a grid point is not simulated.
const (
	// FilteredInvalid: the point's config breaks a schema or cross-field rule.
	FilteredInvalid = "invalid_config"
	// FilteredUnsupported: the point uses something the simulator cannot run yet.
	FilteredUnsupported = "unsupported"
	// FilteredGPUBudget: the point's GPU count is outside optimization.constraints.
	// It is the reason results.FilteredGPUBudget names in a sweep's report.
	FilteredGPUBudget = "gpu_budget"
	// FilteredDuplicate: the point's concrete config equals an earlier point's (for example
	// when a policy without kv_router drops the kv_router knobs).
	FilteredDuplicate = "duplicate"
)

// Value is one domain's value at a point.
type Value struct {
	// Path is the domain's field path and Value its value as YAML text.
	Path, Value string
}

// Point is one concrete configuration of the grid.
type Point struct {
	// Index is the point's 0-based position in the grid's enumeration order (stable for a spec:
	// domains in Spec.Domains order, the first varying slowest). Filtered points keep their
	// index, so indexes of valid points have gaps.
	Index int
	// ID is the point's stable ID (see PointID).
	ID string
	// Values are the point's domain values, in Spec.Domains order (domains that do not apply
	// to the point, such as the prefill role's for an aggregated point, are left out).
	Values []Value
	// Config is the decoded concrete config and YAML its text, a prediction config that
	// `servesweep predict` accepts (nil after ExpandLazy until Expansion.Materialize).
	Config *config.Config
	YAML   []byte
	// GPUs is the point's GPU count (Σ replicas × tensor × pipeline × attention_data over the
	// roles the mode uses).
	GPUs int
	// EquivalentTo is the ID of the representative of the point's class among the selected
	// points (same CanonicalKey: they simulate identically; markEquivalents says which member
	// represents, whatever the order of a domain's choices); "" on the representative itself.
	EquivalentTo string
	// Class is the point's CanonicalKey: points of one class simulate identically.
	Class string
	// offCanonical counts the canonicalization rules that change the point's config (0: it is
	// its class's canonical config): the fewest represent a class (markEquivalents).
	offCanonical int
	// CostUSDPerHour is the point's price per hour from optimization.cost, in USD: Σ over its
	// roles of GPUs × the role hardware's USD per GPU-hour (0: no cost section).
	CostUSDPerHour float64
	// PrefillGPUHourUSD and DecodeGPUHourUSD are the USD per GPU-hour of the hardware of the
	// prefill role and of the decode role (the aggregated role's under aggregated serving, as the
	// summary reports it as decode); 0 without a cost section or for a role the mode does not
	// use. An autoscaled point is priced from its provisioned GPU-hours at these prices.
	PrefillGPUHourUSD, DecodeGPUHourUSD float64

	// picks are the point's value indices into each Spec.Domains entry's Values (-1: the
	// domain does not apply), from which Materialize rebuilds its YAML.
	picks []int32
	// hardware is roleHardware of Config, kept for pricing (optimization.cost) when ExpandLazy
	// drops the Config.
	hardware *roleHW
}

// roleHW is what roleHardware returns: per role the point uses, its hardware id and GPUs.
type roleHW struct {
	roles []config.Role
	ids   []string
	gpus  []int
}

// CanonicalKey identifies the class of configs that simulate identically to cfg, by exactly these
// rules: the router policy and its knobs do not matter when every role the mode uses has one
// worker with one attention-data rank (there is nowhere else to route); the kv_router knobs do not
// matter under another policy; router.seed 42 is the unset one (config.DefaultRouterSeed); a hardware alias is its catalog id (h100 is h100_sxm), and a model
// name is its catalog id when it reads as the same architecture and formats
// (timing.CanonicalModelID: Llama-3.1-8B, meta-llama/Meta-Llama-3.1-8B-Instruct and
// meta-llama/Llama-3.1-8B are one model; an id with a weight-format suffix reads as another);
// a KV capacity's reserve_gib equal to timing.RuntimeReserveGiB is the null (default) one; and
// an engine.precision field that names the format auto takes for the model (bf16 weights and KV
// cache for meta-llama/Llama-3.1-8B, fp8 for nvidia/Llama-3.1-8B-Instruct-FP8; the attention
// format the KV cache's) is auto.
// (Roles a mode does not use are already absent from a point.) It is a PointID of the canonical
// config.
func CanonicalKey(cfg *config.Config) string {
	c, changed := canonical(cfg, catalogIDs{timing.ResolveHardwareID, timing.CanonicalModelID, modelFormats})
	if !changed {
		return PointID(cfg)
	}
	return PointID(&c)
}

// catalogIDs resolves hardware aliases and model spellings to the names CanonicalKey uses
// (timing.ResolveHardwareID and timing.CanonicalModelID, or memos of them), and a model to the
// formats engine.precision's auto fields take for it (modelFormats, or a memo of it).
type catalogIDs struct {
	hardware, model func(string) (string, bool)
	formats         func(string) (timing.Precisions, bool)
}

// modelFormats is the weights and KV-cache formats engine.precision's auto fields take for model
// (its id or config.json, as a run resolves them: bf16 where the model implies none); ok is false
// for a model servesweep cannot read (a label of a timing that does not need it).
func modelFormats(model string) (timing.Precisions, bool) {
	m, err := timing.ResolveModel(model)
	if err != nil {
		return timing.Precisions{}, false
	}
	p := m.Precisions
	if p.Weights == "" {
		p.Weights = timing.BF16
	}
	if p.KVCache == "" {
		p.KVCache = timing.BF16
	}
	return p, true
}

// memoIDs returns catalogIDs that resolve each name once (a model name costs a file-system
// lookup); for one goroutine.
func memoIDs() catalogIDs {
	memo := func(f func(string) (string, bool)) func(string) (string, bool) {
		m := map[string]string{}
		return func(id string) (string, bool) {
			r, ok := m[id]
			if !ok {
				r, _ = f(id)
				m[id] = r
			}
			return r, r != id
		}
	}
	type read struct {
		p  timing.Precisions
		ok bool
	}
	formats := map[string]read{}
	return catalogIDs{memo(timing.ResolveHardwareID), memo(timing.CanonicalModelID), func(model string) (timing.Precisions, bool) {
		r, seen := formats[model]
		if !seen {
			r.p, r.ok = modelFormats(model)
			formats[model] = r
		}
		return r.p, r.ok
	}}
}

// canonical returns the canonical config of cfg's class (see CanonicalKey), resolving aliases
// with ids; changed is false when it equals cfg, whose PointID is then its CanonicalKey.
func canonical(cfg *config.Config, ids catalogIDs) (c config.Config, changed bool) {
	c, n := canonicalAs(cfg, SingleWorker(cfg), ids)
	return c, n > 0
}

// isCanonical reports whether cfg is the canonical config of its class (canonical changes
// nothing), without the copy escaping.
func isCanonical(cfg *config.Config, ids catalogIDs) bool {
	_, changed := canonical(cfg, ids)
	return !changed
}

// SingleWorker reports whether every role cfg's mode uses has one worker with one attention-data
// rank, so that its router has nowhere to choose.
func SingleWorker(cfg *config.Config) bool {
	for _, r := range cfg.Engine.Mode.Roles() {
		if role := cfg.Engine.Workers.Role(r); role == nil || role.Parallelism.Replicas*role.Parallelism.AttentionData != 1 {
			return false
		}
	}
	return true
}

// canonicalAs is canonical with SingleWorker(cfg) given as single; changes counts the rules
// that changed cfg (0: cfg is canonical), which ranks a class's members (markEquivalents).
func canonicalAs(cfg *config.Config, single bool, ids catalogIDs) (c config.Config, changes int) {
	c = *cfg
	if single {
		r := config.Router{Policy: config.PolicyRoundRobin, PrefillLoadModel: config.PrefillLoadModel{Type: "none"}}
		if !reflect.DeepEqual(c.Router, r) {
			changes++
		}
		c.Router = r
	}
	if c.Router.Policy != config.PolicyKVRouter {
		if c.Router.OverlapScoreCredit != nil || c.Router.PrefillLoadScale != nil || c.Router.Temperature != nil {
			changes++
		}
		c.Router.OverlapScoreCredit, c.Router.PrefillLoadScale, c.Router.Temperature = nil, nil, nil
	}
	if s := c.Router.Seed; s != nil && *s == config.DefaultRouterSeed {
		c.Router.Seed = nil // the seed an unset one draws from
		changes++
	}
	// An alias names the same GPU as its catalog id, a spelling the same model.
	resolve := func(s *string, id func(string) (string, bool)) {
		if r, _ := id(*s); r != *s {
			*s = r
			changes++
		}
	}
	resolve(&c.Engine.Hardware, ids.hardware)
	if autoPrecision(&c.Engine.Precision, c.Engine.Model, ids.formats) {
		changes++
	}
	resolve(&c.Engine.Model, ids.model)
	for _, role := range []**config.WorkerRole{&c.Engine.Workers.Aggregated, &c.Engine.Workers.Prefill, &c.Engine.Workers.Decode} {
		if *role == nil {
			continue
		}
		if (*role).Hardware != "" {
			if id, _ := ids.hardware((*role).Hardware); id != (*role).Hardware {
				r := **role
				r.Hardware = id
				*role = &r
				changes++
			}
		}
		// An explicit reserve_gib equal to the default is the default (null) one.
		if g := (*role).KVCache.Capacity.ReserveGiB; g != nil && *g == timing.RuntimeReserveGiB {
			r := **role
			r.KVCache.Capacity.ReserveGiB = nil
			*role = &r
			changes++
		}
	}
	return c, changes
}

// autoPrecision rewrites as auto ("") each field of p that names the format auto gives for model
// (formats), and an explicit "auto" too; the attention format is auto when it is the KV cache's.
// It reports whether it changed p.
func autoPrecision(p *config.Precision, model string, formats func(string) (timing.Precisions, bool)) (changed bool) {
	auto := func(f *string, want timing.Precision) {
		if *f == config.PrecisionAuto {
			*f, changed = "", true
		} else if x, err := timing.ParsePrecision(*f); *f != "" && err == nil && x == want {
			*f, changed = "", true
		}
	}
	if p.Weights == "" && p.KVCache == "" && p.Attention == "" {
		return false
	}
	m, ok := formats(model)
	if !ok {
		return false
	}
	kv := m.KVCache
	if x, err := timing.ParsePrecision(p.KVCache); p.KVCache != "" && p.KVCache != config.PrecisionAuto && err == nil {
		kv = x
	}
	auto(&p.Weights, m.Weights)
	auto(&p.KVCache, m.KVCache)
	auto(&p.Attention, kv)
	return changed
}

// markEquivalents sets each point's Class, and EquivalentTo on every point but its class's
// representative: the member whose config the fewest canonicalization rules change (the
// canonical one itself when selected; a one-worker deployment's default round_robin router
// before a kv_router one, a catalog spelling before another), the first in point order among
// equals, so that reordering a domain's choices does not change which point represents it.
func markEquivalents(points []Point) {
	rep := make(map[string]int, len(points)) // class → index of its representative
	for i := range points {
		key := points[i].Class
		if key == "" {
			ids := catalogIDs{timing.ResolveHardwareID, timing.CanonicalModelID, modelFormats}
			c, n := canonicalAs(points[i].Config, SingleWorker(points[i].Config), ids)
			key, points[i].offCanonical = points[i].ID, n
			if n > 0 {
				key = PointID(&c)
			}
		}
		points[i].Class = key
		if j, ok := rep[key]; !ok || points[i].offCanonical < points[j].offCanonical {
			rep[key] = i
		}
	}
	for i := range points {
		if j := rep[points[i].Class]; j != i {
			points[i].EquivalentTo = points[j].ID
		}
	}
}

// Label renders the point's domain values as "path=value, ...", with each path shortened to the
// part after engine.workers. or the first segment; a point of a spec without domains says so.
func (p *Point) Label() string {
	if len(p.Values) == 0 {
		return "(the spec's only point: no search domain)"
	}
	parts := make([]string, len(p.Values))
	for i, v := range p.Values {
		parts[i] = ShortPath(v.Path) + "=" + v.Value
	}
	return strings.Join(parts, " ")
}

// ShortPath shortens a field path for display: engine.workers.aggregated.parallelism.tensor
// becomes aggregated.tensor, traffic.load.concurrency becomes concurrency.
func ShortPath(path string) string {
	if rest, ok := strings.CutPrefix(path, "engine.workers."); ok {
		role, key, _ := strings.Cut(rest, ".")
		_, leaf, found := strings.Cut(key, ".")
		if !found {
			leaf = key
		}
		if key == "kv_cache.block_size" {
			leaf = "block_size"
		}
		return role + "." + leaf
	}
	if i := strings.LastIndexByte(path, '.'); i >= 0 && !strings.HasPrefix(path, "router.") {
		return path[i+1:]
	}
	return path
}

// Expansion is a spec's grid after filtering and the optimizer's selection.
type Expansion struct {
	// Spec is the spec that was expanded.
	Spec *Spec
	// GridPoints is the size of the Cartesian product (Size).
	GridPoints int
	// Valid counts the points that survived filtering.
	Valid int
	// Filtered counts the dropped points by reason (Filtered* constants); Examples holds the
	// first message per reason.
	Filtered map[string]int
	Examples map[string]string
	// Errors holds the full decode errors of the first few invalid or unsupported points
	// (maxErrors), each introduced by its point.
	Errors []string
	// TimingNotes lists, once each and sorted, why points with forward_model auto will be priced
	// by the roofline although a performance database is configured, fixed KV pools larger than
	// their GPU could hold, and roles with FP4 weights on GPUs without FP4 tensor cores
	// (sim.CheckNotes).
	TimingNotes []string
	// Points are the selected points in enumeration order: every valid point for the grid
	// algorithm, MaxTrials of them for random.
	Points []Point
	// Warnings are spec settings that are valid but probably not what was meant (the command
	// prints them on stderr).
	Warnings []string
	// Notes say how the spec's values were read where that may not be what was meant: an
	// engine.model under an organization the catalog does not know for the model it reads as, an
	// engine.precision.weights that overrides the format a model's name gives (the command
	// prints them on stderr as notes).
	Notes []string
	// NeedsSystems says some grid point is an invalid config because a setting of it needs a
	// performance database and Spec.Systems is nil (sim.ErrNoSystems).
	NeedsSystems bool
	// EmptyValues are the domain values that grid points take but no valid point does, in
	// domain and value order; CheckModes refuses an engine.mode among them, and a router.policy
	// or planner.policy whose invalid points share an error of the spec.
	EmptyValues []EmptyValue

	// sameError is the decode error every invalid or unsupported point gave, when they all gave
	// the same one (an error of the spec or a --set, not of a domain's values); "" when they
	// differ or none is invalid. sameErrorDiffers records that two differed.
	sameError        string
	sameErrorDiffers bool
	// modeErrors is, per value of an engine.mode domain, the decode error every invalid or
	// unsupported point of that mode gave ("" once two differed; absent when none gave one):
	// CheckModes reports a mode whose points all fail with it as that error, once.
	// policyErrors is the same per value of a router.policy domain, plannerErrors per value of a
	// planner.policy domain.
	modeErrors, policyErrors, plannerErrors map[string]string

	// pricedHardware is the hardware of the valid points, whose prices (optimization.cost) the
	// spec hash covers: a price for other hardware changes no row (nil: no cost section).
	pricedHardware map[string]bool

	// shardOf is the shard of each of Points (whose first element is shardFirst) among shardCount
	// shards, once asked (shards).
	shardMu    sync.Mutex
	shardCount int
	shardOf    []int32
	shardFirst *Point
}

// CheckModes refuses a sweep in which a mode that engine.mode's domain asks for has no valid
// point (the other modes' points remain): one config.Errors entry (exit 2) at engine.mode per
// such mode, with its filter counts and first reason; when the mode's invalid points (all of
// them, or two or more beside points outside the GPU budget) share one decode error, a
// *SpecError with that error once instead. A GPU budget that rules out a whole mode
// counts too: the user asked for that mode. A value of a router.policy domain without a valid
// point whose invalid points share one decode error is refused the same way (a router knob the
// spec sets wrong, router.seed: -3, would otherwise drop that policy's points with a warning); a
// policy without a valid point for other reasons stays a warning. A value of a planner.policy
// domain (enabled, whose points alone keep the other planner keys) is judged as a router policy
// is: a planner field the spec sets wrong (target: slaa) is refused, not warned of while the
// fixed deployments are swept alone. Expand leaves this check to
// its caller, which may choose to sweep the other modes alone; it reads only the whole grid's
// validity, so every shard of a sharded sweep gets the same answer.
func (x *Expansion) CheckModes() error {
	var errs config.Errors
	for _, v := range x.EmptyValues {
		if errs := map[string]map[string]string{pathPolicy: x.policyErrors, pathPlanner: x.plannerErrors}[v.Path]; errs != nil {
			// Unlike a mode, a router or planner policy without a valid point is otherwise a
			// warning: one invalid point beside points outside the GPU budget is refused too.
			bad := v.Filtered[FilteredInvalid] + v.Filtered[FilteredUnsupported]
			if full := errs[v.Value]; full != "" && bad >= 1 && !x.Spec.domainError(full) {
				return &SpecError{Err: x.Spec.specWideError(full, bad, v.Points, "of "+v.Path+" "+v.Value+" ")}
			}
		}
		if v.Path != pathMode {
			continue
		}
		bad := v.Filtered[FilteredInvalid] + v.Filtered[FilteredUnsupported]
		// The mode's other points, if any, are outside the GPU budget (or duplicates): as for
		// the whole grid (noValidPoint), an error all its invalid points share is the spec's.
		if full := x.modeErrors[v.Value]; full != "" && (bad == v.Points || bad > 1) && !x.Spec.domainError(full) {
			return &SpecError{Err: x.Spec.specWideError(full, bad, v.Points, "of mode "+v.Value+" ")}
		}
		errs = append(errs, &config.Error{File: x.Spec.File, Path: pathMode, Msg: fmt.Sprintf("the mode %s has no valid point: "+
			"all %d of its grid points were filtered (%s), e.g. %s; fix the spec, or drop %s from the choices",
			v.Value, v.Points, countList(v.Filtered), v.Example, v.Value)})
	}
	if len(errs) > 0 {
		return errs
	}
	return nil
}

// domainError reports whether the decode error full (a point's, "file: path: message" lines)
// names a field a domain sets, at or below a domain's path: a value of the domain, not of the
// spec, made it.
func (s *Spec) domainError(full string) bool {
	for _, line := range strings.Split(full, "\n") {
		rest, _ := strings.CutPrefix(line, s.File+": ")
		path, _, ok := strings.Cut(rest, ": ")
		if !ok {
			continue
		}
		for _, d := range s.Domains {
			if path == d.Path || strings.HasPrefix(path, d.Path+".") {
				return true
			}
		}
	}
	return false
}

// SpecError is an error of the spec itself that CheckModes found: every point of a mode (or of
// a router or planner policy) fails with the same error of a field outside the domains, so dropping the mode
// (--allow-empty-mode) is not the fix; Err is that error once (config.Errors).
type SpecError struct{ Err error }

// Error returns Err's text.
func (e *SpecError) Error() string { return e.Err.Error() }

// Unwrap returns Err.
func (e *SpecError) Unwrap() error { return e.Err }

// Size returns the number of grid points before filtering: the Cartesian product of the
// domains, where a domain under a worker role counts only for the modes that use the role (when
// engine.mode is a domain) and the kv_router knobs only for kv_router (when router.policy is a
// domain). The count saturates at 2^62; Parse rejects grids larger than MaxGridPoints.
func (s *Spec) Size() int {
	total := 0
	s.branches(func(active []bool) {
		n := 1
		for i, d := range s.Domains {
			if active[i] {
				n = satMul(n, len(d.Values))
			}
		}
		total = satAdd(total, n)
	})
	return total
}

const saturated = 1 << 62

func satMul(a, b int) int {
	if a == 0 || b == 0 {
		return 0
	}
	if a > saturated/b {
		return saturated
	}
	return a * b
}

func satAdd(a, b int) int { return min(a+b, saturated) }

// branches calls fn once per combination of the controlling domains (engine.mode and
// router.policy, when they are domains) with the other domains that apply in it marked active.
// The controlling domains are marked inactive: each branch is one value of each of them.
func (s *Spec) branches(fn func(active []bool)) {
	mi, pi := s.controller(pathMode), s.controller(pathPolicy)
	modes, policies := []string{""}, []string{""}
	if mi >= 0 {
		modes = s.Domains[mi].ValueStrings()
	}
	if pi >= 0 {
		policies = s.Domains[pi].ValueStrings()
	}
	for _, mode := range modes {
		for _, policy := range policies {
			active := make([]bool, len(s.Domains))
			for i, d := range s.Domains {
				active[i] = s.applies(d.Path, mode, policy)
			}
			if mi >= 0 {
				active[mi] = false // counted once per branch by the loop
			}
			if pi >= 0 {
				active[pi] = false
			}
			fn(active)
		}
	}
}

// controller returns the index of the domain at path, or -1.
func (s *Spec) controller(path string) int {
	return slices.IndexFunc(s.Domains, func(d Domain) bool { return d.Path == path })
}

// applies reports whether the domain at path applies to a point with the given mode and policy
// ("" when that field is not a domain, in which case every domain applies).
func (s *Spec) applies(path, mode, policy string) bool {
	if mode != "" {
		switch {
		case strings.HasPrefix(path, "engine.workers.aggregated."):
			return mode == string(config.ModeAggregated)
		case strings.HasPrefix(path, "engine.workers.prefill."), strings.HasPrefix(path, "engine.workers.decode."):
			return mode == string(config.ModeDisaggregated)
		}
	}
	if policy != "" {
		for _, k := range droppedRouterKnobs(policy) {
			if path == "router."+k || strings.HasPrefix(path, "router."+k+".") {
				return false
			}
		}
	}
	return true
}

// Expand enumerates the grid in order, substitutes each point's values, drops the worker roles
// a point's mode does not use (when engine.mode is a domain; aggregated points also drop
// engine.kv_transfer) and the router knobs a point's policy does not take (when router.policy is a
// domain), decodes each point as servesweep predict does (config.Decode with ConcreteMarker) and filters out the points outside the GPU budget
// (checked first), the invalid, the unsupported and duplicates, counting each reason. The random optimizer then
// keeps MaxTrials valid points, drawn with Seed. Spec-level errors (every point an invalid config,
// strict_sla or a goodput target without evaluation.sla) are config.Errors; a grid whose
// every point is outside the GPU budget is a *NoFeasiblePointError.
func (s *Spec) Expand() (*Expansion, error) {
	x, err := s.expand(context.Background(), true)
	if err != nil {
		return nil, err
	}
	if err := x.Materialize(x.Points); err != nil {
		return nil, err
	}
	return x, nil
}

// ExpandLazy is Expand without the selected points' YAML and decoded configs (Point.YAML and
// Point.Config are nil until Expansion.Materialize, except the first selected point's Config): a
// sweep writes and keeps the configs of the points it runs only, so a point of a large grid
// costs its ID and values, not its config.
func (s *Spec) ExpandLazy() (*Expansion, error) { return s.expand(context.Background(), false) }

// ExpandLazyContext is ExpandLazy that stops when ctx is done (checked every 256 points) and
// returns ctx's error: a grid of a million points takes seconds to expand, and an interrupt must
// not wait for it.
func (s *Spec) ExpandLazyContext(ctx context.Context) (*Expansion, error) {
	return s.expand(ctx, false)
}

// expand is Expand (keep true: every point keeps its Config) or ExpandLazyContext.
func (s *Spec) expand(ctx context.Context, keep bool) (*Expansion, error) {
	x := &Expansion{Spec: s, GridPoints: s.Size(), Filtered: map[string]int{}, Examples: map[string]string{}}
	points, verdicts, notes, needsSystems := s.buildPoints(ctx, keep)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	valid, tally := x.sift(points, verdicts)
	x.Valid = len(valid)
	if len(valid) == 0 {
		return nil, s.noValidPoint(x)
	}
	if err := x.Materialize(valid[:1]); err != nil {
		return nil, err
	}
	if err := s.checkSLA(valid[0].Config); err != nil {
		return nil, err
	}
	if err := s.checkCapacity(&valid[0]); err != nil {
		return nil, err
	}
	costWarnings, priced, err := s.checkCost(valid)
	if err != nil {
		return nil, err
	}
	x.pricedHardware = priced
	x.Warnings = append(s.capacityWarnings(valid[0].Config), costWarnings...)
	x.Warnings = append(x.Warnings, s.labelOnlyWarnings(valid[0].Config)...)
	x.Warnings = append(x.Warnings, s.equivalentChoiceWarnings()...)
	x.Warnings = append(x.Warnings, s.unusedRouterKnobWarnings()...)
	if s.sectionWarning != "" {
		x.Warnings = append(x.Warnings, s.sectionWarning)
	}
	if w := s.lockstepWarning(valid[0].Config); w != "" {
		x.Warnings = append(x.Warnings, w)
	}
	x.Warnings = append(x.Warnings, s.shortFixedRunWarnings(valid[0].Config)...)
	if w := s.burstStartWarning(valid[0].Config); w != "" {
		x.Warnings = append(x.Warnings, w)
	}
	if w := s.thinkTimeWarning(valid[0].Config); w != "" {
		x.Warnings = append(x.Warnings, w)
	}
	if w := s.speedupWindowWarning(valid[0].Config); w != "" {
		x.Warnings = append(x.Warnings, w)
	}
	x.Notes = append(s.modelNotes(), s.precisionNotes()...)
	first := valid[0].Config
	if first.DefaultTraffic {
		x.Notes = append(x.Notes, config.DefaultTrafficNote(first))
	}
	if n := config.DefaultedTrafficNote(first); n != "" {
		x.Notes = append(x.Notes, n)
	}
	for _, name := range first.EmptyRoles {
		x.Notes = append(x.Notes, config.EmptyRoleNote(s.File, name, first.Engine.Workers.Role(name)))
	}
	for _, w := range valid[0].Config.Evaluation.SLA.SecondsLikeBounds("evaluation.sla") { // the SLA takes no domain
		x.Warnings = append(x.Warnings, s.File+": "+w)
	}
	x.EmptyValues = tally.empty(s.Domains)
	var empty []EmptyValue
	for _, v := range x.EmptyValues {
		switch {
		case v.Path == pathMode: // a mode is warned about on its own (CheckModes refuses it unless allowed)
			x.Warnings = append(x.Warnings, emptyWarning(v))
		case !v.BudgetOnly(): // any other value only the GPU budget rules out is the budget's choice
			empty = append(empty, v)
		}
	}
	if len(empty) > 0 {
		x.Warnings = append(x.Warnings, emptyValuesWarning(empty))
	}
	x.Points = valid
	if s.Optimizer.Algorithm == AlgorithmRandom && s.Optimizer.MaxTrials < len(valid) {
		rng := rand.New(rand.NewPCG(s.Optimizer.Seed, 0x5e5e5e5e))
		perm := rng.Perm(len(valid))[:s.Optimizer.MaxTrials]
		slices.Sort(perm)
		x.Points = make([]Point, len(perm))
		for i, j := range perm {
			x.Points[i] = valid[j]
		}
		if err := x.Materialize(x.Points[:1]); err != nil {
			return nil, err
		}
	}
	markEquivalents(x.Points)
	x.NeedsSystems = needsSystems
	var kv []string
	for n := range notes {
		if w, ok := strings.CutPrefix(n, kvBytesMark); ok {
			kv = append(kv, w)
			continue
		}
		x.TimingNotes = append(x.TimingNotes, n)
	}
	slices.Sort(x.TimingNotes)
	x.Warnings = append(x.Warnings, s.kvBytesWarnings(kv)...)
	return x, nil
}

// verdict says why a grid point is filtered: reason ("" for a valid point), msg, and the full
// error text of an invalid config ("" otherwise).
type verdict struct {
	reason, msg, full string
}

// buildPoints builds and decodes every grid point, in parallel, each independent of the others:
// points[i] is point i (its Config dropped unless keep) and verdicts[i] why it is filtered. It
// also returns the timing notes of the points' checks (sim.CheckNotes) and whether a point
// needs a performance database that is not configured (sim.ErrNoSystems).
func (s *Spec) buildPoints(ctx context.Context, keep bool) (points []Point, verdicts []verdict, notes map[string]bool, needsSystems bool) {
	mi, pi := s.controller(pathMode), s.controller(pathPolicy)
	combos := s.combos(mi, pi)
	n, d := len(combos)/max(len(s.Domains), 1), len(s.Domains)
	if d == 0 {
		n = 1
	}
	points = make([]Point, n)
	verdicts = make([]verdict, n)
	notes = map[string]bool{}
	tmpl := s.newTemplates(combos, n)
	if s.noTemplates {
		tmpl = nil
	}
	var mu sync.Mutex
	var next atomic.Int64
	const chunk = 256
	var wg sync.WaitGroup
	var noSystems atomic.Bool
	for range min(runtime.GOMAXPROCS(0), (n+chunk-1)/chunk) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mine := map[string]bool{}
			check := s.checker(mine, &noSystems)
			var ts *templateState
			if tmpl != nil {
				ts = tmpl.newState()
			}
			pick := make([]*yaml.Node, d)
			vi := make([]int, d)
			ids := memoIDs()
			for {
				lo := int(next.Add(chunk)) - chunk
				if lo >= n || ctx.Err() != nil {
					break
				}
				for i := lo; i < min(lo+chunk, n); i++ {
					for k, j := range combos[i*d : i*d+d] {
						pick[k], vi[k] = nil, int(j)
						if j >= 0 {
							pick[k] = s.Domains[k].Values[j]
						}
					}
					p, v := &points[i], &verdicts[i]
					if ts != nil {
						*p, v.reason, v.msg, v.full = ts.point(combos[i*d:i*d+d], pick, vi, check, ids)
					} else {
						*p, v.reason, v.msg, v.full = s.point(pick, vi, mi, pi, check, ids)
					}
					if !keep {
						p.Config = nil // decoded again by Materialize if the point runs
					}
				}
			}
			mu.Lock()
			maps.Copy(notes, mine)
			mu.Unlock()
		}()
	}
	wg.Wait()
	return points, verdicts, notes, noSystems.Load()
}

// checker returns one worker's sim.CheckNotes of a point's config, memoized: sim.Check reads
// only the engine section and the router's prefill-load model, so points that share them (most
// of a grid: the load and router domains) share its verdict. It adds the checks' timing notes to
// notes, and a valid point's sim.KVBytesWarnings marked with kvBytesMark, and sets noSystems
// when a check needs a performance database that is not configured.
func (s *Spec) checker(notes map[string]bool, noSystems *atomic.Bool) checkFunc {
	checked := map[string]error{}
	return func(cfg *config.Config, key []byte) error {
		if key == nil {
			data, err := json.Marshal(struct {
				Engine    *config.Engine
				LoadModel string
			}{&cfg.Engine, cfg.Router.PrefillLoadModel.Type})
			if err != nil {
				return sim.Check(cfg, s.Systems)
			}
			key = data
		}
		e, ok := checked[string(key)]
		if !ok {
			if len(checked) >= maxChecked {
				clear(checked) // a grid of many engines: its memo would only grow
			}
			var ns []string
			ns, e = sim.CheckNotes(cfg, s.Systems)
			if e == nil {
				// A fixed pool no GPU of the point holds is simulated, with a note (sim.DeployableNotes).
				var dn []string
				dn, e = sim.DeployableNotes(cfg)
				ns = append(ns, dn...)
			}
			if e == nil {
				// An explicit KV size far from the model's is a warning, not a timing note.
				for _, w := range sim.KVBytesWarnings(cfg) {
					ns = append(ns, kvBytesMark+w)
				}
			}
			for _, n := range ns {
				notes[n] = true
			}
			if errors.Is(e, sim.ErrNoSystems) {
				noSystems.Store(true)
			}
			checked[string(key)] = e
		}
		return e
	}
}

// sift goes through the built points in order: it numbers them, filters the duplicates, counts
// the filtered points by reason (Expansion.Filtered, Examples, Errors) and tallies each domain
// value's points. It returns the valid points, moved to the front of points (a million-point
// grid holds one array of points, not two), and the tally.
func (x *Expansion) sift(points []Point, verdicts []verdict) ([]Point, *valueTally) {
	s := x.Spec
	d := len(s.Domains)
	seen := make(map[string]bool, len(points))
	valid := points[:0]
	tally := newValueTally(s.Domains)
	pick := make([]*yaml.Node, d)
	vi := make([]int, d)
	modeAt := slices.IndexFunc(s.Domains, func(d Domain) bool { return d.Path == pathMode })
	policyAt := slices.IndexFunc(s.Domains, func(d Domain) bool { return d.Path == pathPolicy })
	plannerAt := slices.IndexFunc(s.Domains, func(d Domain) bool { return d.Path == pathPlanner })
	if x.modeErrors == nil {
		x.modeErrors, x.policyErrors, x.plannerErrors = map[string]string{}, map[string]string{}, map[string]string{}
	}
	for index := range points {
		b := &verdicts[index]
		p, reason, msg, full := points[index], b.reason, b.msg, b.full
		*b, points[index] = verdict{}, Point{}
		for k, j := range p.picks {
			pick[k], vi[k] = nil, int(j)
			if j >= 0 {
				pick[k] = s.Domains[k].Values[j]
			}
		}
		tally.add(pick, vi, reason, func() string { return "point " + p.Label() + ": " + msg })
		if full != "" && !x.sameErrorDiffers {
			if x.sameError == "" {
				x.sameError = full
			} else if full != x.sameError {
				x.sameError, x.sameErrorDiffers = "", true
			}
		}
		for _, c := range []struct {
			at   int
			errs map[string]string
		}{{modeAt, x.modeErrors}, {policyAt, x.policyErrors}, {plannerAt, x.plannerErrors}} {
			if full != "" && c.at >= 0 && pick[c.at] != nil {
				v := pick[c.at].Value
				if prev, ok := c.errs[v]; !ok {
					c.errs[v] = full
				} else if prev != full {
					c.errs[v] = ""
				}
			}
		}
		if full != "" && len(x.Errors) < maxErrors {
			x.Errors = append(x.Errors, "point #"+strconv.Itoa(index)+" "+p.Label()+":\n    "+strings.ReplaceAll(full, "\n", "\n    "))
		}
		p.Index = index
		if reason == "" && seen[p.ID] {
			reason, msg = FilteredDuplicate, "same concrete config as an earlier point ("+p.ID+")"
		}
		if reason != "" {
			x.Filtered[reason]++
			if x.Examples[reason] == "" {
				x.Examples[reason] = "point " + p.Label() + ": " + msg
			}
			continue
		}
		seen[p.ID] = true
		valid = append(valid, p) // at or before index
	}
	if len(valid) < cap(valid)/2 {
		valid = slices.Clone(valid) // most points were filtered: free the array
	}
	return valid, tally
}

// point builds the point of one combination of values (pick[i] is nil for a domain that does
// not apply). reason is "" for a valid point, else a Filtered* reason with its message.
//
// The point's YAML is left nil (Materialize writes it): its config is decoded from the tree, which
// gives the config decoding the YAML would give. A point the tree does not decode is decoded
// again from its YAML, so that its messages name the lines of its YAML, as predict would.
func (s *Spec) point(pick []*yaml.Node, vi []int, mi, pi int, check checkFunc, ids catalogIDs) (p Point, reason, msg, full string) {
	p = s.newPoint(pick, vi)
	root := s.tree(pick, mi, pi)
	o := s.Optimization
	// Most points of a large grid fall outside the GPU budget; counting their GPUs on the tree
	// spares decoding them. Points the shortcut cannot count are decoded and checked below.
	if g, ok := quickGPUs(root); ok {
		if why := budgetMsg(g, o); why != "" {
			return p, FilteredGPUBudget, why, ""
		}
	}
	cfg, err := config.DecodeNode(root, s.File, config.WithMarker(ConcreteMarker))
	if err != nil {
		data, merr := marshal(root)
		if merr != nil {
			return p, FilteredInvalid, "cannot serialize: " + merr.Error(), merr.Error()
		}
		p.YAML = data
		cfg, err = config.Decode(data, s.File, nil, config.WithMarker(ConcreteMarker))
	}
	if err != nil {
		reason := FilteredInvalid
		if errors.Is(err, errors.ErrUnsupported) {
			reason = FilteredUnsupported
		}
		msg := err.Error()
		if first, rest, more := strings.Cut(msg, "\n"); more {
			msg = fmt.Sprintf("%s (and %d more)", first, strings.Count(rest, "\n")+1)
		}
		return p, reason, msg, err.Error()
	}
	return s.admit(p, cfg, check, nil, ids, nil)
}

// pointKeys computes a point's ID, and its class's for a single worker or several (see variant),
// without encoding its config (templates.id); ok false: PointID must.
type pointKeys func(v int) (id string, ok bool)

// admit is the end of point for the valid config cfg of p: its prices, ID and class (from keys
// when it gives them), GPU count and the filters that read the decoded config (the GPU budget, the
// planner's ceiling, the simulator's checks, whose verdict check memoizes under checkKey when it
// is not nil).
func (s *Spec) admit(p Point, cfg *config.Config, check checkFunc, checkKey []byte, ids catalogIDs, keys pointKeys) (_ Point, reason, msg, full string) {
	o := s.Optimization
	p.Config = cfg
	if s.Optimization.Cost != nil {
		roles, ids, gpus := roleHardware(cfg)
		p.hardware = &roleHW{roles, ids, gpus}
	}
	id, ok := "", false
	if keys != nil {
		id, ok = keys(0)
	}
	if !ok {
		id = PointID(cfg)
	}
	p.ID = id
	_, p.offCanonical = canonicalAs(cfg, SingleWorker(cfg), ids)
	if p.offCanonical > 0 {
		class, ok := "", false
		if keys != nil {
			v := 2
			if SingleWorker(cfg) {
				v = 1
			}
			class, ok = keys(v)
		}
		if !ok {
			c, _ := canonical(cfg, ids)
			class = PointID(&c)
		}
		p.Class = class
	} else {
		p.Class = p.ID
	}
	p.GPUs = GPUs(cfg)
	// An autoscaled point may grow to planner.max_num_gpus (−1: no bound) during its run: the
	// budget holds for that ceiling, not only for the GPUs it starts with.
	if why := optimization.GPUBudgetExclusion(cfg.Planner.GPUDemand(p.GPUs), o.MinCandidateGPUs, o.MaxCandidateGPUs, budgetOf); why != "" {
		return p, FilteredGPUBudget, why, ""
	}
	// What only the simulator knows (an unknown model or GPU under default timing, weights that
	// leave no KV room) makes a point invalid here, as predict refuses it, rather than failed;
	// so do weights no GPU of the point holds beside a fixed KV pool (sim.Deployable), which a
	// label-only timing would otherwise rank.
	if err := check(cfg, checkKey); err != nil {
		return p, FilteredInvalid, err.Error(), err.Error()
	}
	return p, "", "", ""
}

// maxChecked bounds a worker's memo of sim.CheckNotes verdicts.
const maxChecked = 4096

// checkFunc runs sim.CheckNotes on cfg, memoized under key (a JSON text of the parts it reads
// when key is nil).
type checkFunc func(cfg *config.Config, key []byte) error

// newPoint returns the point of the domain values pick (value indexes vi) with its picks and
// Values set.
func (s *Spec) newPoint(pick []*yaml.Node, vi []int) (p Point) {
	p.picks = make([]int32, len(pick))
	n := 0
	for _, v := range pick {
		if v != nil {
			n++
		}
	}
	p.Values = make([]Value, 0, n)
	for i, v := range pick {
		p.picks[i] = -1
		if v != nil {
			p.picks[i] = int32(vi[i])
			p.Values = append(p.Values, Value{Path: s.Domains[i].Path, Value: v.Value})
		}
	}
	return p
}

// combos enumerates the grid in order: for each point, one value index per domain (-1 for a
// domain that does not apply to the point's mode or policy), flat, len(s.Domains) per point.
func (s *Spec) combos(mi, pi int) []int32 {
	var out []int32
	cur := make([]int32, len(s.Domains))
	var rec func(k int)
	rec = func(k int) {
		if k == len(s.Domains) {
			out = append(out, cur...)
			return
		}
		mode, policy := "", ""
		if mi >= 0 && k > mi {
			mode = s.Domains[mi].Values[cur[mi]].Value
		}
		if pi >= 0 && k > pi {
			policy = s.Domains[pi].Values[cur[pi]].Value
		}
		if !s.applies(s.Domains[k].Path, mode, policy) {
			cur[k] = -1
			rec(k + 1)
			return
		}
		for j := range s.Domains[k].Values {
			cur[k] = int32(j)
			rec(k + 1)
		}
	}
	rec(0)
	return out
}

// tree builds the YAML tree of the point with the domain values pick (nil for a domain that
// does not apply): the spec with each value substituted, less the roles, sections and knobs
// the point's mode, router policy and planner policy do not use.
func (s *Spec) tree(pick []*yaml.Node, mi, pi int) *yaml.Node {
	subst := make(map[*yaml.Node]*yaml.Node, len(pick))
	for i, v := range pick {
		if v != nil {
			subst[s.Domains[i].node] = v
		}
	}
	root := substitute(s.root, subst, s.copied)
	if mi >= 0 {
		prune(root, pick[mi].Value, "")
	}
	if pi >= 0 {
		prune(root, "", pick[pi].Value)
	}
	if i := s.controller(pathPlanner); i >= 0 && pick[i] != nil && pick[i].Value != "enabled" {
		prunePlanner(root)
	}
	return root
}

// Materialize writes the YAML and the decoded Config of each of points that lacks them, from its
// domain values: the concrete config as `servesweep predict` accepts it. ExpandLazy leaves them
// to the points that will run, so that a large grid costs its points' IDs and not their configs.
// Points not built by this expansion's spec are left alone.
func (x *Expansion) Materialize(points []Point) error {
	return x.MaterializeContext(context.Background(), points)
}

// MaterializeContext is Materialize that stops when ctx is done (checked every 256 points) and
// returns ctx's error: a grid of a million points takes minutes to write and decode, and an
// interrupt must not wait for it. The points done by then keep their YAML and Config.
func (x *Expansion) MaterializeContext(ctx context.Context, points []Point) error {
	s := x.Spec
	mi, pi := s.controller(pathMode), s.controller(pathPolicy)
	pick := make([]*yaml.Node, len(s.Domains))
	for i := range points {
		if i%256 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		p := &points[i]
		if (p.YAML != nil && p.Config != nil) || len(p.picks) != len(s.Domains) {
			continue
		}
		for k, j := range p.picks {
			pick[k] = nil
			if j >= 0 {
				pick[k] = s.Domains[k].Values[j]
			}
		}
		root := s.tree(pick, mi, pi)
		if p.Config == nil {
			// The decode that found the point valid, again: it cannot fail now.
			cfg, err := config.DecodeNode(root, s.File, config.WithMarker(ConcreteMarker))
			if err != nil {
				return fmt.Errorf("point %s: cannot decode its config again: %w", p.ID, err)
			}
			p.Config = cfg
		}
		if p.YAML == nil {
			data, err := marshal(root)
			if err != nil {
				return fmt.Errorf("point %s: cannot serialize its config: %w", p.ID, err)
			}
			p.YAML = data
		}
	}
	return nil
}

// budgetOf names where a sweep's GPU budget comes from, in a filtered point's reason.
const budgetOf = "optimization.constraints"

// budgetMsg is why a point that starts with gpus GPUs is outside o's GPU budget, for the
// shortcuts that count a point's GPUs before decoding it (and so before its planner is known).
func budgetMsg(gpus int, o Optimization) string {
	return optimization.GPUBudgetExclusion(optimization.GPUDemand{GPUs: gpus}, o.MinCandidateGPUs, o.MaxCandidateGPUs, budgetOf)
}

// treeRoles returns the worker roles of the mode of an engine mapping node (aggregated when its
// mode is absent; prefill and decode when disaggregated); ok is false when the mode is not a
// plain string naming a known mode.
func treeRoles(engine *yaml.Node) (roles []string, ok bool) {
	mode := string(config.ModeAggregated)
	if m := child(engine, "mode"); m != nil {
		if m.Kind != yaml.ScalarNode || m.ShortTag() != "!!str" {
			return nil, false
		}
		mode = m.Value
	}
	switch mode {
	case string(config.ModeAggregated):
		return []string{"aggregated"}, true
	case string(config.ModeDisaggregated):
		return []string{"prefill", "decode"}, true
	}
	return nil, false
}

// quickGPUs counts a point's GPUs on its YAML tree, as GPUs counts them on the decoded config.
// ok is false unless every value involved is a plain int (or absent, meaning 1) and the mode a
// known string (or absent, meaning aggregated).
func quickGPUs(root *yaml.Node) (n int, ok bool) {
	engine := child(root, "engine")
	if engine == nil || engine.Kind != yaml.MappingNode {
		return 0, false
	}
	roles, ok := treeRoles(engine)
	if !ok {
		return 0, false
	}
	workers := child(engine, "workers")
	for _, name := range roles {
		role := child(workers, name)
		if role == nil || (role.Kind != yaml.MappingNode && role.ShortTag() != "!!null") {
			return 0, false
		}
		par := child(role, "parallelism")
		if par != nil && par.Kind != yaml.MappingNode && par.ShortTag() != "!!null" {
			return 0, false
		}
		g := 1
		for _, k := range []string{"replicas", "tensor", "pipeline", "attention_data"} {
			v := child(par, k)
			if v == nil {
				continue
			}
			var x int
			if v.Kind != yaml.ScalarNode || v.ShortTag() != "!!int" || v.Decode(&x) != nil || x <= 0 || x > 1<<20 {
				return 0, false
			}
			g *= x
		}
		n += g
	}
	return n, true
}

// marshal renders a YAML tree with 2-space indentation.
func marshal(n *yaml.Node) ([]byte, error) {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(n); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// substitute copies n, replacing each node found in subst by a copy of its value. With copied
// non-nil, only the nodes in it are copied; the others are shared with n, so the result may be
// read but only its copied nodes edited.
func substitute(n *yaml.Node, subst map[*yaml.Node]*yaml.Node, copied map[*yaml.Node]bool) *yaml.Node {
	if v, ok := subst[n]; ok {
		c := *v
		return &c
	}
	if copied != nil && !copied[n] {
		return n
	}
	c := *n
	if len(n.Content) > 0 {
		c.Content = make([]*yaml.Node, len(n.Content))
		for i, ch := range n.Content {
			c.Content[i] = substitute(ch, subst, copied)
		}
	}
	return &c
}

// prune drops, for a point with the given mode, the worker roles and sections the mode does not
// use; for a point with the given policy, the router knobs it does not take (droppedRouterKnobs:
// the kv_router knobs under another policy, the seed under round_robin and least_loaded).
func prune(root *yaml.Node, mode, policy string) {
	if mode != "" {
		engine := child(root, "engine")
		switch mode {
		case string(config.ModeAggregated):
			removeKeys(child(engine, "workers"), "prefill", "decode")
			removeKeys(engine, "kv_transfer")
		case string(config.ModeDisaggregated):
			removeKeys(child(engine, "workers"), "aggregated")
		}
	}
	if policy != "" {
		removeKeys(child(root, "router"), droppedRouterKnobs(policy)...)
	}
}

// prunePlanner drops every planner key but policy, for a point whose planner.policy (a domain)
// is disabled: the other keys (concrete or domains) belong to the enabled points. Disabled
// points that differ only in them are duplicates, filtered as such.
func prunePlanner(root *yaml.Node) {
	m := child(root, "planner")
	if m == nil || m.Kind != yaml.MappingNode {
		return
	}
	var keys []string
	for i := 0; i+1 < len(m.Content); i += 2 {
		if k := m.Content[i].Value; k != "policy" {
			keys = append(keys, k)
		}
	}
	removeKeys(m, keys...)
}

// child returns the value of key in mapping m, or nil (config.MappingValue).
func child(m *yaml.Node, key string) *yaml.Node { return config.MappingValue(m, key) }

// removeKeys deletes keys from mapping m.
func removeKeys(m *yaml.Node, keys ...string) {
	if m == nil || m.Kind != yaml.MappingNode {
		return
	}
	for i := 0; i+1 < len(m.Content); {
		if slices.Contains(keys, m.Content[i].Value) {
			m.Content = slices.Delete(m.Content, i, i+2)
			continue
		}
		i += 2
	}
}

// PointID is the stable ID of a concrete config: the first 12 hex digits of the SHA-256 of a
// versioned canonical JSON encoding of the decoded config (the file name and which optional
// sections were spelled out are left out). Equal configs have equal IDs in any spec; a
// servesweep release that changes what a config means changes the version prefix.
func PointID(cfg *config.Config) string {
	c := *cfg
	c.File, c.HasRouter, c.HasPlanner = "", false, false
	data, err := json.Marshal(&c)
	if err != nil {
		// A Config holds only plain values; Marshal cannot fail on a decoded one.
		data = []byte(fmt.Sprintf("%#v", c))
	}
	sum := sha256.Sum256(append([]byte(pointIDPrefix), data...))
	return hex.EncodeToString(sum[:])[:12]
}

// pointIDPrefix versions PointID's hashed text.
const pointIDPrefix = "servesweep point v1\n"

// GPUs returns a config's GPU count (config.Config.GPUs).
func GPUs(cfg *config.Config) int { return cfg.GPUs() }

// maxErrors is how many full decode errors an Expansion keeps.
const maxErrors = 3

// NoFeasiblePointError is a valid spec whose every point the filters removed (the GPU budget of
// optimization.constraints): there is nothing to simulate, but nothing is wrong with the spec's
// configs, so it is a run failure (exit 1), not a spec error.
type NoFeasiblePointError struct {
	// File is the spec; Msg lists the filter counts.
	File, Msg string
}

// Error formats the error as "<file>: <message>".
func (e *NoFeasiblePointError) Error() string { return e.File + ": " + e.Msg }

// noValidPoint explains a grid in which every point was filtered out. When some point was an
// invalid (or unsupported) config and none was valid, the spec is wrong: a config.Errors
// (exit 2) with the first decode errors in full, or, when they all gave one error or the grid
// has one point (a spec without a domain), that error as the config's own (specWideError), so
// that a command names the --set that gave it. When every point was removed by the GPU
// budget, the spec is valid but has no feasible point: a *NoFeasiblePointError (exit 1) with
// the filter counts.
func (s *Spec) noValidPoint(x *Expansion) error {
	bad := x.Filtered[FilteredInvalid] + x.Filtered[FilteredUnsupported]
	if (bad > 1 || x.GridPoints == 1) && x.sameError != "" {
		return s.specWideError(x.sameError, bad, x.GridPoints, "")
	}
	if bad > 0 {
		var b strings.Builder
		fmt.Fprintf(&b, "no valid point: %d of the %d grid points are invalid configs", bad, x.GridPoints)
		if n := x.GridPoints - bad; n > 0 {
			fmt.Fprintf(&b, " (the other %d are outside the GPU budget)", n)
		}
		fmt.Fprintf(&b, "; the first %d:", len(x.Errors))
		for _, e := range x.Errors {
			b.WriteString("\n  " + e)
		}
		if bad > len(x.Errors) {
			fmt.Fprintf(&b, "\n  ... and %d more", bad-len(x.Errors))
		}
		return config.Errors{{File: s.File, Msg: b.String()}}
	}
	reasons := make([]string, 0, len(x.Filtered))
	for _, r := range []string{FilteredGPUBudget, FilteredDuplicate} {
		if n := x.Filtered[r]; n > 0 {
			reasons = append(reasons, fmt.Sprintf("%d %s, e.g. %s", n, r, x.Examples[r]))
		}
	}
	return &NoFeasiblePointError{File: s.File, Msg: fmt.Sprintf("no feasible point: all %d grid points were filtered out:\n  %s",
		x.GridPoints, strings.Join(reasons, "\n  "))}
}

// checkSLA reports optimization settings that need evaluation.sla when the config has none.
func (s *Spec) checkSLA(cfg *config.Config) error {
	sla := cfg.Evaluation.SLA
	if sla.HasRequestBounds() || len(sla.PercentileBounds()) > 0 {
		return nil
	}
	var errs config.Errors
	o := s.Optimization
	if o.StrictSLA {
		errs = append(errs, &config.Error{File: s.File, Path: "optimization.strict_sla",
			Msg: optimization.SLARequired})
	}
	if optimization.NeedsSLA(o.Target) {
		errs = append(errs, &config.Error{File: s.File, Path: "optimization.target",
			Msg: o.Target + " " + optimization.SLARequired})
	}
	for i, obj := range o.Objectives {
		if optimization.MetricNeedsSLA(obj.Metric) {
			errs = append(errs, &config.Error{File: s.File, Path: fmt.Sprintf("optimization.objectives[%d].metric", i),
				Msg: obj.Metric + " " + optimization.SLARequired})
		}
	}
	if o.CapacitySearch != nil {
		errs = append(errs, &config.Error{File: s.File, Path: "optimization.capacity_search",
			Msg: "needs evaluation.sla (ttft_ms, itl_ms, e2e_ms and/or a percentile bound such as p99_itl_ms): capacity is " +
				"the largest load at which SLA attainment reaches the target and every percentile bound holds"})
	}
	if len(errs) > 0 {
		return errs
	}
	return nil
}

// valueTally counts, for every value of every domain, the grid points that take it and the
// reasons those points were filtered, so that a value no valid point takes is reported rather
// than silently missing from the results.
type valueTally struct {
	points, valid [][]int
	// reasons counts the filter reasons per domain value; example is the message of its first
	// point filtered for a reason other than the GPU budget (of its first filtered point when
	// there is none).
	reasons [][]map[string]int
	example [][]string
}

func newValueTally(domains []Domain) *valueTally {
	t := &valueTally{}
	for _, d := range domains {
		n := len(d.Values)
		t.points, t.valid = append(t.points, make([]int, n)), append(t.valid, make([]int, n))
		t.reasons, t.example = append(t.reasons, make([]map[string]int, n)), append(t.example, make([]string, n))
	}
	return t
}

// add records one point: pick[k] is nil for a domain that does not apply, else value vi[k];
// reason is "" for a valid point (duplicates count as valid: their twin holds the value), msg
// its message otherwise (called only when a value's example needs it).
func (t *valueTally) add(pick []*yaml.Node, vi []int, reason string, msg func() string) {
	for k, v := range pick {
		if v == nil {
			continue
		}
		j := vi[k]
		t.points[k][j]++
		if reason == "" || reason == FilteredDuplicate {
			t.valid[k][j]++
			continue
		}
		if t.reasons[k][j] == nil {
			t.reasons[k][j] = map[string]int{}
		}
		rs := t.reasons[k][j]
		onlyBudget := len(rs) == 0 || len(rs) == 1 && rs[FilteredGPUBudget] > 0
		if t.example[k][j] == "" || reason != FilteredGPUBudget && onlyBudget {
			t.example[k][j] = msg() // the first point filtered for something else than the budget, if any
		}
		rs[reason]++
	}
}

// EmptyValue is a domain value of a sweep that no valid point takes: every grid point with the
// value was filtered out before simulation. Its fields are those of results.EmptyValue, the
// record of it in sweep.json, which converts from it.
type EmptyValue struct {
	// Path is the domain's field path and Value the value as YAML text.
	Path  string
	Value string
	// Points counts the grid points that take the value; Filtered counts them by reason
	// (Filtered* constants), adding up to Points.
	Points   int
	Filtered map[string]int
	// Example is the message of the first of those points filtered for a reason other than the
	// GPU budget (of the first of them when there is none).
	Example string
}

// BudgetOnly reports whether the GPU budget (FilteredGPUBudget) alone ruled the value out.
func (v EmptyValue) BudgetOnly() bool {
	return len(v.Filtered) == 1 && v.Filtered[FilteredGPUBudget] > 0
}

// countList renders a reason → count map as "a 3, b 1", sorted by reason (as report.md's
// summaries do).
func countList(m map[string]int) string {
	keys := slices.Sorted(maps.Keys(m))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}

// empty lists the domain values that grid points take but no valid point does, in domain and
// value order.
func (t *valueTally) empty(domains []Domain) []EmptyValue {
	var out []EmptyValue
	for k, d := range domains {
		for j, v := range d.Values {
			if t.points[k][j] == 0 || t.valid[k][j] > 0 {
				continue
			}
			out = append(out, EmptyValue{Path: d.Path, Value: v.Value, Points: t.points[k][j], Filtered: maps.Clone(t.reasons[k][j]),
				Example: t.example[k][j]})
		}
	}
	return out
}

// emptyWarning says that the value v has no valid point, with its filter counts and first reason.
func emptyWarning(v EmptyValue) string {
	reasons := make([]string, 0, len(v.Filtered))
	for r, n := range v.Filtered {
		reasons = append(reasons, fmt.Sprintf("%d %s", n, r))
	}
	slices.Sort(reasons)
	return fmt.Sprintf("%s: value %s has no valid point (all %d of its points filtered: %s), e.g. %s",
		v.Path, v.Value, v.Points, strings.Join(reasons, ", "), v.Example)
}
