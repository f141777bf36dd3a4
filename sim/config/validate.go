package config

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/servesweep/servesweep/sim/timing"
)

// Validate checks every value and cross-field rule of dynosim-spec.md §3 on c, and the size
// bounds of limits.go, and returns an Errors listing all violations, or nil. It does not fill in
// defaults: a Config built by hand must set every union type, policy and defaulted count itself
// (Decode does). Zero means "unset" for the fields tagged optional (stop counts, load rates,
// bytes_per_token, context_length = "max", ...) and nil for pointers. Values that are valid but
// not supported yet are reported by Unsupported, not by Validate.
func (c *Config) Validate() error {
	v := &validator{file: c.File}
	v.config(c)
	return v.errs.err()
}

// validator checks a Config. given, when non-nil, holds the paths the YAML gave, so that an
// explicit zero in an optional field is still checked; isBad, when non-nil, reports the paths the
// walk rejected, whose members are not reported again.
type validator struct {
	file  string
	given map[string]bool
	isBad func(string) bool
	errs  Errors
	// skip holds paths whose value fields does not check against their tags (a Template's varied
	// fields, whose values it checks one by one).
	skip map[string]bool
}

func (v *validator) errorf(path, format string, args ...any) {
	v.errs = append(v.errs, &Error{File: v.file, Path: path, Msg: fmt.Sprintf(format, args...)})
}

// has reports whether the field at path is set: non-zero, or given by the YAML.
func (v *validator) has(path string, nonzero bool) bool { return nonzero || v.given[path] }

func (v *validator) bad(path string) bool { return v.isBad != nil && v.isBad(path) }

func fmtFloat(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

// config is the whole validation pass: the tags of every field, then the cross-field rules, then
// the cross-field size bounds.
func (v *validator) config(c *Config) {
	v.fields(rootSchema, reflect.ValueOf(c).Elem(), "")
	v.rules(c)
}

// rules checks the cross-field rules and size bounds (config without the tags of every field).
func (v *validator) rules(c *Config) {
	v.traffic(&c.Traffic)
	v.engine(&c.Engine)
	v.traceDeployment(c)
	v.router(&c.Router)
	v.planner(&c.Planner)
	v.plannerRules(c)
	v.evaluation(&c.Evaluation)
	v.limits(c)
}

// ---------------------------------------------------------------------------------------------
// The checks every field's tags define.

// fields checks the struct sv (schema s) at path: the enum, range and limit of each field, and,
// for a tagged union with a valid type, that no member the type does not accept is set.
func (v *validator) fields(s *structSchema, sv reflect.Value, path string) {
	variant, known := "", true
	if d := s.disc; d != nil {
		variant = sv.Field(d.index).String()
		known = slices.Contains(d.enum, variant)
	}
	var extra []string
	paths := childPaths(s, path)
	for i, f := range s.fields {
		fv, fp := sv.Field(f.index), paths[i]
		if f.accepts(variant) {
			if d := distOf(f, sv); d != nil {
				if !v.bad(fp) {
					v.fields(f.distSub, reflect.ValueOf(d).Elem(), fp)
					v.distribution(fp, d)
				}
				continue
			}
			if !v.skip[fp] {
				v.field(f, fv, fp)
			}
			continue
		}
		if !known || !v.isSet(fv, fp) || v.bad(fp) {
			continue
		}
		switch d := s.disc; {
		case d.reject != "":
			v.errorf(fp, "%s", strings.ReplaceAll(fill(d.reject, variant, f.key), "{variants}", strings.Join(f.variants, " or ")))
		default:
			extra = append(extra, f.key)
		}
	}
	if len(extra) == 0 {
		return
	}
	if d := s.disc; d.rejectUnion != "" {
		v.errorf(path, "%s", fill(d.rejectUnion, variant, strings.Join(extra, ", ")))
	} else {
		v.errorf(path, "%s.%s='%s' does not accept [%s]; accepted keys: %s",
			path, d.key, variant, strings.Join(extra, ", "), strings.Join(s.keys(variant), ", "))
	}
}

// rolePaths are the paths of the worker roles (engine.workers.<role>).
var rolePaths = map[Role]string{RoleAggregated: "engine.workers.aggregated", RolePrefill: "engine.workers.prefill",
	RoleDecode: "engine.workers.decode"}

// childPaths returns the paths of the fields of the struct at path (schema s), in s.fields
// order: joined once per process and path, since validation visits every field of every config.
func childPaths(s *structSchema, path string) []string {
	key := pathsKey{s, path}
	if ps, ok := pathsCache.Load(key); ok {
		return ps.([]string)
	}
	ps := make([]string, len(s.fields))
	for i, f := range s.fields {
		ps[i] = join(path, f.key)
	}
	pathsCache.Store(key, ps)
	return ps
}

// pathsKey identifies a struct's place in a config for childPaths.
type pathsKey struct {
	s    *structSchema
	path string
}

// pathsCache holds childPaths' answers; a config has a bounded number of mappings (limits.go), so
// it holds at most that many per distinct list length.
var pathsCache sync.Map

// distOf returns the distribution an int field of sv holds in its mapping form, or nil.
func distOf(f *field, sv reflect.Value) *Distribution {
	if f.distSub == nil {
		return nil
	}
	d, _ := sv.Field(f.dist).Interface().(*Distribution)
	return d
}

// distribution checks the cross-field rules of a token-count distribution at path: uniform
// needs max, normal and lognormal need mean and stddev, min <= max (max defaults to
// MaxTokensPerRequest), a normal or lognormal mean within [min, max]; empirical needs values and
// as many weights as values when weights are given.
func (v *validator) distribution(p string, d *Distribution) {
	switch d.Distribution {
	case DistUniform, DistNormal, DistLognormal:
		if d.Distribution == DistUniform && !v.has(p+".max", d.Max != 0) {
			v.errorf(p+".max", "required: a uniform distribution draws from [min, max]")
		}
		if d.Distribution != DistUniform && v.given != nil { // a decoded config: the YAML's keys are known
			for _, k := range []string{"mean", "stddev"} {
				if !v.given[p+"."+k] && !v.bad(p+"."+k) {
					v.errorf(p+"."+k, "required: a %s distribution takes mean and stddev (of the token count), with optional min and max", d.Distribution)
				}
			}
		}
		hi := d.Max
		if hi == 0 {
			hi = MaxTokensPerRequest
		}
		if d.Max != 0 && d.Min > d.Max {
			v.errorf(p+".min", "must be <= max (%d), got %d", d.Max, d.Min)
		} else if d.Distribution != DistUniform && d.Mean != 0 && (d.Mean < float64(d.Min) || d.Mean > float64(hi)) {
			v.errorf(p+".mean", "must be within [min, max] = [%d, %d], got %g", d.Min, hi, d.Mean)
		}
	case DistEmpirical:
		if len(d.Values) == 0 {
			v.errorf(p+".values", "required: an empirical distribution lists at least one token count")
		}
		if len(d.Weights) > 0 && len(d.Weights) != len(d.Values) {
			v.errorf(p+".weights", "must have one weight per value (%d), got %d", len(d.Values), len(d.Weights))
		}
		sum := 0.0
		for _, w := range d.Weights {
			sum += w
		}
		if math.IsInf(sum, 0) {
			v.errorf(p+".weights", "must sum to a finite number (only their ratios matter; scale them down), got an overflow")
		}
	}
}

// fill expands a reject template.
func fill(tmpl, variant, key string) string {
	return strings.NewReplacer("{type}", variant, "{key}", key).Replace(tmpl)
}

// isSet reports whether a field holds a value: a non-nil pointer, or a non-zero value, or one
// the YAML gave.
func (v *validator) isSet(fv reflect.Value, path string) bool {
	return !fv.IsZero() || v.given[path]
}

// field checks one field's value at path (recursing into mappings).
func (v *validator) field(f *field, fv reflect.Value, path string) {
	if f.ptr {
		if fv.IsNil() {
			return
		}
		fv = fv.Elem()
	}
	switch {
	case f.kind == kindStruct:
		v.fields(f.sub, fv, path)
	case f.kind == kindList && f.elem == kindStruct:
		for i := range fv.Len() {
			v.fields(f.sub, fv.Index(i), fmt.Sprintf("%s[%d]", path, i))
		}
	case f.kind == kindList:
		for i := range fv.Len() {
			v.value(f, fv.Index(i), fmt.Sprintf("%s[%d]", path, i))
		}
	case f.optional && !f.ptr && fv.IsZero() && !v.given[path]:
		// unset
	default:
		v.value(f, fv, path)
	}
}

// value checks a scalar against f's enum, range and limit.
func (v *validator) value(f *field, x reflect.Value, path string) {
	var n float64
	switch x.Kind() {
	case reflect.String:
		s := x.String()
		// An empty string stands for the word default (e.g. "auto") only when the YAML left the
		// key out: an explicit "" is refused like any other value outside the enum.
		if f.enum != nil && (s != "" || f.word == "" || v.given[path]) && !slices.Contains(f.enum, s) {
			v.errorf(path, "must be one of %s, got %q", strings.Join(f.enum, ", "), s)
		}
		return
	case reflect.Int, reflect.Int64, reflect.Uint64, reflect.Float64:
	default:
		return
	}
	switch x.Kind() {
	case reflect.Int, reflect.Int64:
		n = float64(x.Int())
	case reflect.Uint64:
		n = float64(x.Uint())
	case reflect.Float64:
		n = x.Float()
	}
	if !f.inRange(n) {
		got := fmtFloat(n)
		switch x.Kind() {
		case reflect.Int, reflect.Int64:
			got = strconv.FormatInt(x.Int(), 10)
		case reflect.Uint64:
			got = strconv.FormatUint(x.Uint(), 10)
		}
		v.errorf(path, "%s", f.rangeMsg(n, got))
		return
	}
	switch {
	case math.IsNaN(f.limitHi):
	case !math.IsNaN(f.limitLo):
		if n != 0 && (n < f.limitLo || n > f.limitHi) {
			v.errorf(path, "must be between %g and %g, got %g", f.limitLo, f.limitHi, n)
		}
	case x.Kind() != reflect.Float64 && x.Int() > int64(f.limitHi):
		v.errorf(path, "must be <= %d, got %d", int64(f.limitHi), x.Int())
	}
}

// schemaField returns the field at a dotted path of the schema (a mistake in this file panics in
// every test).
func schemaField(path string) *field {
	s := rootSchema
	var f *field
	for seg := range strings.SplitSeq(path, ".") {
		f = s.lookup(seg)
		s = f.sub
	}
	return f
}

// ---------------------------------------------------------------------------------------------
// Cross-field rules (dynosim-spec.md §3).

func (v *validator) traffic(t *Traffic) {
	const p = "traffic.source"
	s := &t.Source
	src := s.Type
	switch src {
	case SourceSyntheticSession:
		if s.Session == nil {
			v.errorf(p+".session", "required for synthetic-session sources: {%s}",
				strings.Join(schemaField(p+".session").sub.keys(""), ", "))
		} else if s.Session.PrefixGroups == 0 && s.Session.SharedPrefixRatio > 0 {
			v.errorf(p+".session.prefix_groups", "prefix_groups must be positive when shared_prefix_ratio is positive, got 0")
		}
	case SourceTrace:
		v.trace(p, s)
	case SourceSynthetic:
	case SourceMixture:
		src = v.mixture(p, s)
	default:
		src = ""
	}
	v.load(&t.Load, src, s.Format)
	v.stop(&t.Stop, src, s.Format, t.Load.Type)
	if len(t.Load.Profile) > 0 {
		for _, k := range []string{"requests_per_load_unit", "sessions_per_load_unit"} {
			if x := "traffic.stop." + k; v.has(x, (k == "requests_per_load_unit" && t.Stop.RequestsPerLoadUnit != 0) ||
				(k == "sessions_per_load_unit" && t.Stop.SessionsPerLoadUnit != 0)) {
				v.errorf(x, "a load profile has no single load unit; stop on %s", strings.TrimSuffix(k, "_per_load_unit"))
			}
		}
	}
}

// mixture checks a mixture source at p and returns the source type its components share ("" when
// they do not): at least one component, each with a synthetic or synthetic-session source of its
// own (with a session shape when synthetic-session) and no seed of its own, all of one type.
func (v *validator) mixture(p string, s *Source) string {
	if len(s.Components) == 0 {
		v.errorf(p+".components", "required: a mixture lists at least one component {weight, source}")
		return ""
	}
	kind := ""
	for i, c := range s.Components {
		cp := fmt.Sprintf("%s.components[%d]", p, i)
		if v.bad(cp) {
			return ""
		}
		if !v.has(cp+".weight", c.Weight != 0) {
			v.errorf(cp+".weight", "required: the component's share, a number > 0")
		}
		if c.Source == nil {
			v.errorf(cp+".source", "required: a synthetic or synthetic-session source")
			return ""
		}
		cs := c.Source
		switch {
		case cs.Type != SourceSynthetic && cs.Type != SourceSyntheticSession:
			v.errorf(cp+".source.type", "a mixture component is a synthetic or synthetic-session source, got %s", cs.Type)
			return ""
		case kind != "" && cs.Type != kind:
			v.errorf(cp+".source.type", "every component of a mixture has the same type (component 0 is %s), got %s", kind, cs.Type)
			return ""
		case cs.Seed != nil:
			v.errorf(cp+".source.seed", "the mixture's traffic.source.seed draws every component; remove this one")
		case cs.Type == SourceSyntheticSession && cs.Session == nil:
			v.errorf(cp+".source.session", "required for synthetic-session sources: {%s}",
				strings.Join(schemaField(p+".session").sub.keys(""), ", "))
		case cs.Session != nil && cs.Session.PrefixGroups == 0 && cs.Session.SharedPrefixRatio > 0:
			v.errorf(cp+".source.session.prefix_groups", "prefix_groups must be positive when shared_prefix_ratio is positive, got 0")
		}
		kind = cs.Type
	}
	return kind
}

func (v *validator) trace(p string, s *Source) {
	switch {
	case len(s.Paths) == 0:
		v.errorf(p+".paths", "must list at least one trace file")
	case s.Format != "dynamo" && len(s.Paths) != 1:
		v.errorf(p+".paths", "%s traces take exactly one path, got %d", s.Format, len(s.Paths))
	}
	for i, path := range s.Paths {
		if strings.TrimSpace(path) == "" {
			v.errorf(fmt.Sprintf("%s.paths[%d]", p, i), "must be a non-empty path")
		}
	}
	if !embeddedBlockSize(s.Format) && !v.has(p+".block_size", s.BlockSize != 0) {
		v.errorf(p+".block_size", "must be an int > 0, got 0")
	}
}

// traceDeployment checks the deployments a trace format can replay on (dynosim-spec.md §3.1.4):
// mooncake-delta needs aggregated serving, agentic_mooncake a vllm or sglang engine, and both
// the planner disabled.
func (v *validator) traceDeployment(c *Config) {
	s := &c.Traffic.Source
	if s.Type != SourceTrace {
		return
	}
	if s.Format == FormatMooncakeDelta && c.Engine.Mode != ModeAggregated {
		v.errorf("engine.mode", "%s traces replay on aggregated deployments only, got %s", s.Format, c.Engine.Mode)
	}
	if s.Format == FormatAgenticMooncake && c.Engine.Backend != BackendVLLM && c.Engine.Backend != BackendSGLang {
		v.errorf("engine.backend", "%s traces replay on vllm or sglang, got %s", s.Format, c.Engine.Backend)
	}
	if (s.Format == FormatMooncakeDelta || s.Format == FormatAgenticMooncake) && c.Planner.Policy == plannerEnabled {
		v.errorf("planner.policy", "%s traces need policy: disabled", s.Format)
	}
}

func (v *validator) load(l *Load, src, format string) {
	const p = "traffic.load"
	rps := v.has(p+".requests_per_second", l.RequestsPerSecond != 0)
	sps := v.has(p+".sessions_per_second", l.SessionsPerSecond != 0)
	if len(l.Profile) == 0 && v.given[p+".profile"] && (l.Type == LoadConstantRate || l.Type == LoadPoisson) {
		v.errorf(p+".profile", "is empty: give at least one phase {until_seconds, requests_per_second | sessions_per_second}, or remove it")
		return
	}
	if len(l.Profile) > 0 && (l.Type == LoadConstantRate || l.Type == LoadPoisson) {
		v.profile(l, src, rps, sps)
		return
	}
	switch l.Type {
	case LoadConcurrency:
	case LoadConstantRate, LoadPoisson:
		switch src {
		case SourceSynthetic:
			if sps {
				v.errorf(p+".sessions_per_second", "synthetic sources take requests_per_second; "+
					"sessions_per_second is for synthetic-session sources")
			}
			if !rps {
				v.errorf(p+".requests_per_second", "required: %s load with a synthetic source needs "+
					"requests_per_second", l.Type)
			}
		case SourceSyntheticSession:
			if rps {
				v.errorf(p+".requests_per_second", "synthetic-session sources take sessions_per_second; "+
					"requests_per_second is for synthetic sources")
			}
			if !sps {
				v.errorf(p+".sessions_per_second", "required: %s load with a synthetic-session source "+
					"needs sessions_per_second", l.Type)
			}
		case SourceTrace:
			v.errorf(p+".type", "trace sources accept only trace_timestamps or concurrency load, got %s", l.Type)
		}
	case LoadTraceTimestamps:
		if src == SourceSynthetic || src == SourceSyntheticSession {
			v.errorf(p+".type", "trace_timestamps needs a trace source; %s sources use concurrency, "+
				"constant_rate or poisson", src)
		}
	default:
		return
	}
	if src == SourceTrace {
		switch {
		case (format == "agentic_mooncake" || format == "weka") && l.Type != LoadTraceTimestamps:
			v.errorf(p+".type", "%s traces need trace_timestamps load, got %s", format, l.Type)
		case format == "applied_compute_agentic" && l.Type != LoadConcurrency:
			v.errorf(p+".type", "applied_compute_agentic traces need concurrency load, got %s", l.Type)
		}
	}
}

// profile checks a load profile: no top-level rate beside it, a synthetic or synthetic-session
// source, each phase with the rate that matches the source (and not the other), and phase ends
// that increase strictly.
func (v *validator) profile(l *Load, src string, rps, sps bool) {
	const p = "traffic.load"
	if rps {
		v.errorf(p+".requests_per_second", "a load profile gives the rate of each phase; remove requests_per_second or the profile")
	}
	if sps {
		v.errorf(p+".sessions_per_second", "a load profile gives the rate of each phase; remove sessions_per_second or the profile")
	}
	want, other := "requests_per_second", "sessions_per_second"
	switch src {
	case SourceSynthetic:
	case SourceSyntheticSession:
		want, other = other, want
	case SourceTrace:
		v.errorf(p+".type", "trace sources accept only trace_timestamps or concurrency load, got %s", l.Type)
		return
	default:
		return
	}
	prev := 0.0
	for i, ph := range l.Profile {
		pp := fmt.Sprintf("%s.profile[%d]", p, i)
		if v.bad(pp) {
			continue
		}
		got := map[string]bool{
			"requests_per_second": v.has(pp+".requests_per_second", ph.RequestsPerSecond != 0),
			"sessions_per_second": v.has(pp+".sessions_per_second", ph.SessionsPerSecond != 0),
		}
		if got[other] {
			v.errorf(pp+"."+other, "%s sources take %s", src, want)
		}
		if !got[want] {
			v.errorf(pp+"."+want, "required: the phase's rate (%s sources take %s)", src, want)
		}
		if ph.UntilSeconds > 0 && ph.UntilSeconds <= prev {
			v.errorf(pp+".until_seconds", "must be > the previous phase's until_seconds (%s), got %s", fmtFloat(prev), fmtFloat(ph.UntilSeconds))
		}
		prev = max(prev, ph.UntilSeconds)
	}
}

func (v *validator) stop(s *Stop, src, format, loadType string) {
	const p = "traffic.stop"
	// Which stop fields are set, in a list rather than a map: every point of a sweep is validated.
	given := [...]struct {
		key string
		on  bool
	}{
		{"requests", v.has(p+".requests", s.Requests != 0)},
		{"requests_per_load_unit", v.has(p+".requests_per_load_unit", s.RequestsPerLoadUnit != 0)},
		{"sessions", v.has(p+".sessions", s.Sessions != 0)},
		{"sessions_per_load_unit", v.has(p+".sessions_per_load_unit", s.SessionsPerLoadUnit != 0)},
		{"max_virtual_time_seconds", v.has(p+".max_virtual_time_seconds", s.MaxVirtualTimeSeconds != 0)},
		{"max_trace_seconds", v.has(p+".max_trace_seconds", s.MaxTraceSeconds != 0)},
	}
	set := func(k string) bool {
		for _, g := range given {
			if g.key == k {
				return g.on
			}
		}
		return false
	}
	bad := false
	if v.isBad != nil {
		for _, g := range given {
			bad = bad || v.bad(p+"."+g.key)
		}
	}
	countStop := func(kind string, own, other []string) {
		for _, k := range other {
			if set(k) {
				v.errorf(p+"."+k, "%s sources stop on %s, not %s", kind, strings.Join(own, " or "), k)
			}
		}
		for _, k := range []string{"max_virtual_time_seconds", "max_trace_seconds"} {
			if set(k) {
				v.errorf(p+"."+k, "%s sources reject %s; stop on %s", kind, k, strings.Join(own, " or "))
			}
		}
		n := 0
		for _, k := range own {
			if set(k) {
				n++
			}
		}
		switch {
		case bad:
			// A stop field the walk rejected counts neither as given nor as missing.
		case n == 0:
			v.errorf(p, "%s sources need exactly one of %s, got none", kind, strings.Join(own, ", "))
		case n == 2:
			v.errorf(p, "%s sources need exactly one of %s, got both", kind, strings.Join(own, ", "))
		}
	}
	reqs := []string{"requests", "requests_per_load_unit"}
	sess := []string{"sessions", "sessions_per_load_unit"}
	switch src {
	case SourceSynthetic:
		countStop(src, reqs, sess)
	case SourceSyntheticSession:
		countStop(src, sess, reqs)
	case SourceTrace:
		// An agentic trace's run ends when its DAG does: it takes no stop at all, which one
		// message says of whichever stop is given.
		agentic := format == "agentic_mooncake" || format == "weka"
		for _, k := range append(reqs, sess...) {
			switch {
			case set(k) && agentic:
				v.errorf(p+"."+k, "%s traces take no traffic.stop (the run ends when the trace does); remove %s", format, k)
			case set(k):
				v.errorf(p+"."+k, "trace sources accept only max_virtual_time_seconds and max_trace_seconds")
			}
		}
		for _, k := range []string{"max_virtual_time_seconds", "max_trace_seconds"} {
			if set(k) && agentic {
				v.errorf(p+"."+k, "%s traces take no traffic.stop (the run ends when the trace does); remove %s", format, k)
			}
		}
		if set("max_trace_seconds") && !agentic && loadType != "" && loadType != LoadTraceTimestamps {
			v.errorf(p+".max_trace_seconds", "needs traffic.load.type trace_timestamps (it keeps the sessions that start "+
				"within that much of the trace's own time), got %s; stop on max_virtual_time_seconds", loadType)
		}
	}
}

func (v *validator) engine(e *Engine) {
	const p = "engine"
	if e.Model == "" {
		v.errorf(p+".model", "required: a model id such as meta-llama/Meta-Llama-3.1-8B-Instruct")
	} else if msg := timing.ModelIDProblem(e.Model); msg != "" {
		v.errorf(p+".model", "%s (servesweep list models prints the catalog)", msg)
	}
	if e.Hardware == "" {
		v.errorf(p+".hardware", "required: a hardware id such as h200_sxm")
	}
	if e.EnableChunkedPrefill != nil && !*e.EnableChunkedPrefill && e.Backend == BackendSGLang {
		v.errorf(p+".enable_chunked_prefill", "false is not supported by the sglang backend")
	}
	if e.OverlapScheduling != nil && *e.OverlapScheduling && e.Speculation != nil && e.Speculation.Kind == SpeculationNGram {
		v.errorf(p+".overlap_scheduling", "true does not run with engine.speculation (n-gram drafting): SGLang turns its overlap scheduler off "+
			"and vLLM's asynchronous scheduling refuses n-gram drafting; remove one of the two")
	}
	if e.CUDAGraphs == CUDAGraphsPiecewise && e.Backend != BackendVLLM {
		v.errorf(p+".cuda_graphs", "piecewise is vLLM's cudagraph_mode PIECEWISE; the %s backend captures whole decode passes: "+
			"remove it, or set it to full", e.Backend)
	}
	if e.KVTransfer != nil && e.Mode == ModeAggregated {
		v.errorf(p+".kv_transfer", "aggregated mode rejects kv_transfer: remove it, or set engine.mode: disaggregated")
	}
	if s := e.Speculation; s != nil {
		v.speculation(p+".speculation", s)
	}
	w := &e.Workers
	wp := p + ".workers"
	switch e.Mode {
	case ModeAggregated:
		if w.Aggregated == nil {
			v.errorf(wp, "aggregated mode requires workers.aggregated")
		}
		if w.Prefill != nil || w.Decode != nil {
			v.errorf(wp, "aggregated mode rejects prefill/decode workers")
		}
	case ModeDisaggregated:
		if w.Aggregated != nil {
			v.errorf(wp, "disaggregated mode rejects aggregated workers")
		}
		if w.Prefill == nil || w.Decode == nil {
			v.errorf(wp, "disaggregated mode requires prefill and decode workers")
		}
	}
	for _, name := range Roles() {
		if r := w.Role(name); r != nil {
			v.role(rolePaths[name], name, r, e)
		}
	}
}

// speculation checks the required fields of engine.speculation.
func (v *validator) speculation(p string, s *Speculation) {
	kp, np, rp := p+".kind", p+".num_speculative_tokens", p+".acceptance_rates"
	if !v.has(kp, s.Kind != "") {
		v.errorf(kp, "required: %s", strings.Join(schemaField(kp).enum, ", "))
	}
	if !v.has(np, s.NumSpeculativeTokens != 0) {
		v.errorf(np, "required: an int %s", schemaField(np).bound())
	}
	switch n := s.NumSpeculativeTokens; {
	case s.AcceptanceRates == nil:
		v.errorf(rp, "required: one acceptance rate %s per draft token", schemaField(rp).bound())
	case n > 0 && len(s.AcceptanceRates) != n:
		v.errorf(rp, "must have one rate per draft token (num_speculative_tokens = %d), got %d", n, len(s.AcceptanceRates))
	}
}

func (v *validator) role(p string, name Role, r *WorkerRole, e *Engine) {
	backend := e.Backend
	if r.Hardware != "" && name == RoleAggregated {
		v.errorf(p+".hardware", "only prefill and decode roles may override hardware; set engine.hardware")
	}
	// The paths are joined where they are needed only: every point of a sweep is validated.
	if kv := r.KVCache; kv.BlockSize == 1 && (backend == BackendVLLM || backend == BackendTRTLLM) {
		v.errorf(p+".kv_cache.block_size", "must be >= 2 for the %s backend, got %d", backend, kv.BlockSize)
	}
	if c := r.KVCache.Capacity; c.Type == CapacityFixed && c.Blocks == 0 && !v.given[p+".kv_cache.capacity.blocks"] {
		v.errorf(p+".kv_cache.capacity.blocks", "fixed KV capacity requires blocks")
	}
	// A value given but refused (prefill_ms: -1) has its own error; "requires" is for absent ones.
	if t := r.Timing; t.Type == TimingFixed && (t.PrefillMs == nil && !v.given[p+".timing.prefill_ms"] || t.DecodeMs == nil && !v.given[p+".timing.decode_ms"]) {
		v.errorf(p+".timing", "fixed timing requires prefill_ms and decode_ms")
	}
	if ov := e.OverlapScheduling; ov != nil && *ov && backend == BackendSGLang && r.Parallelism.Pipeline > 1 {
		v.errorf("engine.overlap_scheduling", "true does not run with pipeline parallelism on the sglang backend (%s.parallelism.pipeline is %d: "+
			"SGLang turns its overlap scheduler off); remove it or use pipeline 1", p, r.Parallelism.Pipeline)
	}
	if t := r.Timing; t.ForwardModel != "" && t.Type != TimingDefault {
		v.errorf(p+".timing.forward_model", "applies to timing type default only (roofline is always the analytical model), got type %s; "+
			"remove forward_model or set type: default", t.Type)
	}
}

func (v *validator) router(r *Router) {
	if r.Policy != PolicyKVRouter && r.PrefillLoadModel.Type == loadModelAIC {
		v.errorf("router.prefill_load_model.type", "aic requires router.policy kv_router, got %s; "+
			"use prefill_load_model.type: none or router.policy: kv_router", r.Policy)
	}
}

// loadModelAIC is router.prefill_load_model.type aic.
const loadModelAIC = "aic"

func (v *validator) planner(p *Planner) {
	if x := p.FPMSampleBucketSize; p.Policy == plannerEnabled && x != nil {
		r := 0
		if *x > 0 && *x < 1<<40 {
			r = int(math.Sqrt(float64(*x)))
			for r*r > *x {
				r--
			}
			for (r+1)*(r+1) <= *x {
				r++
			}
		}
		if *x <= 0 || r*r != *x {
			v.errorf("planner.fpm_sample_bucket_size", "must be a perfect square > 0, got %d", *x)
		}
	}
}

func (v *validator) evaluation(e *Evaluation) {
	if s := e.SLA; s != nil && s.E2EMs != nil && (s.TTFTMs != nil || s.ITLMs != nil) {
		v.errorf("evaluation.sla.e2e_ms", "sla.e2e_ms is mutually exclusive with sla.ttft_ms/itl_ms")
	}
}

// ---------------------------------------------------------------------------------------------
// Step 6: not supported yet.

// Unsupported lists the values of a valid config that the schema accepts but the simulator
// cannot run yet, one Error (Unsupported set, message "<value> is not supported yet")
// per value, in document order; nil when everything is supported. Decode calls it after
// validation succeeds. Each check is one independent block below, so support for a feature
// is added by deleting its block.
//
// `default` timing, `default` KV capacity and a numeric kv_cache.bytes_per_token are
// supported; whether the model and hardware they need are known is checked by Run.
func (c *Config) Unsupported() Errors {
	var errs Errors
	add := func(path, value, hint string) {
		msg := value + " is not supported yet"
		if hint != "" {
			msg += "; " + hint
		}
		errs = append(errs, &Error{File: c.File, Path: path, Msg: msg, Unsupported: true})
	}
	if s := c.Traffic.Source; s.Type == SourceTrace && s.Format == FormatWeka {
		add("traffic.source.format", s.Format, "convert the corpus to agentic_mooncake")
	}
	e := &c.Engine
	for _, name := range Roles() {
		if r := e.Workers.Role(name); r != nil && r.Timing.ForwardModel == ForwardFPM {
			add("engine.workers."+string(name)+".timing.forward_model", ForwardFPM, "use forward_model: auto or op_level")
		}
	}
	if p := c.Planner; p.Policy == plannerEnabled && p.LoadPredictor == PredictorProphet {
		add("planner.load_predictor", PredictorProphet, "use constant, arima or kalman")
	}
	return errs
}
