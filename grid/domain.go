package grid

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/servesweep/servesweep/sim/config"
	"gopkg.in/yaml.v3"
)

// Paths of the fields that decide which other domains apply to a point.
const (
	pathMode    = "engine.mode"
	pathPolicy  = "router.policy"
	pathPlanner = "planner.policy"
)

// routerKnobs maps each router field that only some policies take to those policies (the
// members of config.Router's union variants: the kv_router knobs, and seed, which kv_router and
// random take), plus prefill_load_model, whose aic type needs kv_router too. A point whose policy
// (from a domain) is not among a field's drops it (droppedRouterKnobs).
var routerKnobs = func() map[string][]string {
	out := map[string][]string{"prefill_load_model": {string(config.PolicyKVRouter)}}
	for _, f := range config.Fields() {
		if key, ok := strings.CutPrefix(f.Path, "router."); ok && len(f.Variants) > 0 && !strings.Contains(key, ".") {
			out[key] = f.Variants
		}
	}
	return out
}()

// droppedRouterKnobs lists, sorted, the routerKnobs a point of the given policy does not take
// (callers must not modify it; nil for a value config.Policies does not list, which Parse
// refuses). Computed once per policy: expansion asks for every point.
func droppedRouterKnobs(policy string) []string { return droppedByPolicy[policy] }

// droppedByPolicy is droppedRouterKnobs of each config.Policies value.
var droppedByPolicy = func() map[string][]string {
	out := map[string][]string{}
	for _, p := range config.Policies() {
		var d []string
		for key, takers := range routerKnobs {
			if !slices.Contains(takers, string(p)) {
				d = append(d, key)
			}
		}
		slices.Sort(d)
		out[string(p)] = d
	}
	return out
}()

// fieldFor returns the field at path if a domain may be placed there (its `sweep` tag in
// package config), else nil.
func fieldFor(path string) *config.Field {
	if f, ok := config.Lookup(path); ok && f.Sweep {
		return &f
	}
	return nil
}

// searchableGroup is the fields of one parent that may hold a domain, written for error
// messages: parent is the parent's path with worker roles as <role> and list items as [],
// text the fields, siblings grouped in braces (e.g. "engine.{mode,model,hardware,context_length}").
type searchableGroup struct{ parent, text string }

// searchableGroups are the sweepable fields of config.Fields by parent, in schema order.
var searchableGroups = func() []searchableGroup {
	var parents []string
	children := map[string][]string{}
	for _, f := range config.Fields() {
		if !f.Sweep {
			continue
		}
		path := schemaPath(f.Path)
		i := strings.LastIndexByte(path, '.')
		parent, key := path[:i], path[i+1:]
		if _, ok := children[parent]; !ok {
			parents = append(parents, parent)
		}
		if !slices.Contains(children[parent], key) {
			children[parent] = append(children[parent], key)
		}
	}
	groups := make([]searchableGroup, len(parents))
	for i, p := range parents {
		if keys := children[p]; len(keys) == 1 {
			groups[i] = searchableGroup{p, p + "." + keys[0]}
		} else {
			groups[i] = searchableGroup{p, p + ".{" + strings.Join(keys, ",") + "}"}
		}
	}
	return groups
}()

// itemIndex matches a list item's index anywhere in a field path.
var itemIndex = regexp.MustCompile(`\[\d*\]`)

// schemaPath writes path as searchableGroups does: worker roles as <role>, list items as [].
func schemaPath(path string) string {
	for _, r := range config.Roles() {
		path = strings.Replace(path, "engine.workers."+string(r)+".", "engine.workers.<role>.", 1)
	}
	return itemIndex.ReplaceAllString(path, "[]")
}

// notSearchable is the error text for a domain at path, which takes none, naming the fields
// nearest to it that do (nearSearchable) and where to find them all.
func notSearchable(path string) string {
	const msg = "search domains are not allowed on this field; it must be a concrete value. "
	const all = "servesweep list fields names every field that takes one"
	p := schemaPath(path)
	if own := searchableUnder(p, false); len(own) > 0 {
		return msg + "Domains may be placed on its fields " + joinGroups(own) + "; " + all
	}
	for a := p; ; {
		i := strings.LastIndexByte(a, '.')
		if i < 0 {
			return msg + "No field of " + a + " takes a domain; " + all
		}
		a = a[:i]
		near := searchableUnder(a, true)
		if len(near) == 0 {
			near = searchableUnder(a, false)
		}
		if len(near) > 0 {
			return msg + "Domains may be placed on " + joinGroups(near) + "; " + all
		}
	}
}

// searchableUnder returns the texts of searchableGroups whose parent is p (children) or lies
// anywhere below p (!children), the shallower first (traffic.load's before traffic.source's
// distributions), in schema order within a depth.
func searchableUnder(p string, children bool) []string {
	var groups []searchableGroup
	for _, g := range searchableGroups {
		if g.parent == p || !children && strings.HasPrefix(g.parent, p+".") {
			groups = append(groups, g)
		}
	}
	slices.SortStableFunc(groups, func(a, b searchableGroup) int {
		return strings.Count(a.parent, ".") - strings.Count(b.parent, ".")
	})
	out := make([]string, len(groups))
	for i, g := range groups {
		out[i] = g.text
	}
	return out
}

// joinGroups joins group texts with "; ", the first four, and says how many more there are.
func joinGroups(texts []string) string {
	const most = 4
	if len(texts) <= most {
		return strings.Join(texts, "; ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(texts[:most], "; "), len(texts)-most)
}

// domain parses the domain object n at path and records it.
func (p *parser) domain(n *yaml.Node, path string) {
	f := fieldFor(path)
	if f == nil {
		p.errorf(path, "%s", notSearchable(path))
		return
	}
	if len(n.Content) != 2 {
		p.errorf(path, "a domain has exactly one key, choices or range; got %s", strings.Join(mappingKeys(n), ", "))
		return
	}
	kind, body := n.Content[0].Value, n.Content[1]
	var values []*yaml.Node
	var ok bool
	if kind == "choices" {
		values, ok = p.choices(body, path+".choices", f)
	} else {
		values, ok = p.rangeValues(body, path+".range", f)
	}
	if ok {
		p.domains = append(p.domains, Domain{Path: path, Line: n.Line, Values: values, node: n})
	}
}

// choices checks a choices list: non-empty, unique, scalars valid for the field.
func (p *parser) choices(n *yaml.Node, path string, f *config.Field) ([]*yaml.Node, bool) {
	if n.Kind != yaml.SequenceNode {
		p.errorf(path, "must be a list of values, e.g. {choices: [1, 2, 4]}")
		return nil, false
	}
	if len(n.Content) == 0 {
		p.errorf(path, "must not be empty")
		return nil, false
	}
	seen := map[string]int{}
	var out []*yaml.Node
	ok := true
	for i, v := range n.Content {
		ep := fmt.Sprintf("%s[%d]", path, i)
		key, val, good := p.value(v, ep, f)
		if !good {
			ok = false
			continue
		}
		if j, dup := seen[key]; dup {
			p.errorf(ep, "duplicate choice %s (same as %s[%d]); choices must be unique", v.Value, path, j)
			ok = false
			continue
		}
		seen[key] = i
		out = append(out, val)
	}
	return out, ok
}

// value checks one choice against the field; key identifies its value for the uniqueness check
// and val is the node to substitute.
func (p *parser) value(v *yaml.Node, path string, f *config.Field) (key string, val *yaml.Node, ok bool) {
	want := choiceWant(*f)
	if v.Kind == yaml.ScalarNode && v.ShortTag() == "!!null" && f.Nullable {
		// A plain config's null on this field means not set: the point leaves it unset.
		return "null", scalar("!!null", "null"), true
	}
	if v.Kind != yaml.ScalarNode || v.ShortTag() == "!!null" {
		p.errorf(path, "must be %s, got %s", want, describe(v))
		return "", nil, false
	}
	if v.ShortTag() == "!!str" && strings.Contains(v.Value, "${") && !p.expandEnv(v, path) {
		// A choice reads ${NAME} from the environment as a plain value does.
		return "", nil, false
	}
	if f.Word != "" && v.ShortTag() == "!!str" && v.Value == f.Word {
		// The word a plain config accepts in place of a number (context_length: max).
		return f.Word, scalar("!!str", f.Word), true
	}
	if msg := config.LeadingZeroNumeral(v); msg != "" && len(f.Enum) == 0 && f.Kind != config.KindString {
		p.errorf(path, "must be %s, got %s", want, msg)
		return "", nil, false
	}
	switch {
	case len(f.Enum) > 0:
		if v.ShortTag() != "!!str" || !slices.Contains(f.Enum, v.Value) {
			p.errorf(path, "must be %s, got %s", want, describe(v))
			return "", nil, false
		}
		return v.Value, scalar("!!str", v.Value), true
	case f.Kind == config.KindString:
		// A free string (a model or hardware id): any non-empty name but the sweep marker auto.
		if v.ShortTag() != "!!str" || strings.TrimSpace(v.Value) == "" || v.Value == "auto" {
			p.errorf(path, "must be a non-empty name such as %s, got %s", example(path), describe(v))
			return "", nil, false
		}
		return v.Value, scalar("!!str", v.Value), true
	case f.Kind == config.KindInt:
		var x int64
		if v.ShortTag() != "!!int" || v.Decode(&x) != nil {
			p.errorf(path, "must be %s, got %s", want, describe(v))
			return "", nil, false
		}
		if !f.InRange(float64(x)) {
			p.errorf(path, "must be %s, got %d", want, x)
			return "", nil, false
		}
		return strconv.FormatInt(x, 10), intNode(x), true
	default:
		x, good := number(v)
		if !good {
			p.errorf(path, "must be %s, got %s", want, describe(v))
			return "", nil, false
		}
		if !f.InRange(x) {
			p.errorf(path, "must be %s, got %s", want, fmtFloat(x))
			return "", nil, false
		}
		return fmtFloat(x), floatNode(x), true
	}
}

// choiceWant describes a valid choice of f: f.Want(), and null for a field whose null means not
// set (config.Field.Nullable).
func choiceWant(f config.Field) string {
	if f.Nullable {
		return f.Want() + ", or null (not set)"
	}
	return f.Want()
}

// rangeValues expands a range object into values.
func (p *parser) rangeValues(n *yaml.Node, path string, f *config.Field) ([]*yaml.Node, bool) {
	if len(f.Enum) > 0 {
		p.errorf(path, "a range needs a numeric field; use {choices: [%s]}", strings.Join(f.Enum, ", "))
		return nil, false
	}
	if f.Kind == config.KindString {
		p.errorf(path, "a range needs a numeric field; use {choices: [%s, ...]}", example(path))
		return nil, false
	}
	if n.Kind != yaml.MappingNode {
		p.errorf(path, "must be a mapping {min, max, step, scale}, got %s", describe(n))
		return nil, false
	}
	m := map[string]*yaml.Node{}
	ok := true
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i].Value
		if !slices.Contains([]string{"min", "max", "step", "scale"}, k) {
			p.errorf(path+"."+k, "unknown field; valid fields: min, max, step, scale")
			ok = false
			continue
		}
		if _, dup := m[k]; dup {
			p.errorf(path+"."+k, "duplicate key")
			ok = false
			continue
		}
		m[k] = n.Content[i+1]
	}
	lo, okLo := p.rangeBound(m, path, "min", true, f)
	hi, okHi := p.rangeBound(m, path, "max", true, f)
	step, hasStep := p.rangeBound(m, path, "step", false, f)
	if _, given := m["step"]; given && !hasStep {
		ok = false
	}
	scale := "linear"
	if v, has := m["scale"]; has {
		if v.Kind != yaml.ScalarNode || v.ShortTag() != "!!str" || (v.Value != "linear" && v.Value != "log") {
			p.errorf(path+".scale", "must be linear or log, got %s", describe(v))
			ok = false
		} else {
			scale = v.Value
		}
	}
	if !ok || !okLo || !okHi {
		return nil, false
	}
	if lo > hi {
		p.errorf(path, "min (%s) must be <= max (%s)", fmtFloat(lo), fmtFloat(hi))
		return nil, false
	}
	var xs []float64
	switch scale {
	case "log":
		if hasStep {
			p.errorf(path+".step", "step is only valid with scale: linear; a log range doubles from min to max")
			return nil, false
		}
		if lo <= 0 {
			p.errorf(path+".min", "a log range needs min > 0, got %s", fmtFloat(lo))
			return nil, false
		}
		for x := lo; x <= hi*(1+1e-12); x *= 2 {
			xs = append(xs, x)
		}
	default:
		if !hasStep {
			if f.Kind == config.KindInt {
				p.errorf(path+".step", "required: an int range needs step (e.g. step: 1)")
			} else {
				p.errorf(path+".step", "required: servesweep enumerates every value, so a linear range needs step > 0 (or use scale: log)")
			}
			return nil, false
		}
		if step <= 0 {
			p.errorf(path+".step", "must be > 0, got %s", fmtFloat(step))
			return nil, false
		}
		count := math.Floor((hi-lo)/step+1e-9) + 1
		if count > MaxGridPoints {
			p.errorf(path, "yields %s values, more than the grid limit of %d; use a larger step", fmtFloat(count), MaxGridPoints)
			return nil, false
		}
		for i := 0; i < int(count); i++ {
			x := lo + float64(i)*step
			if f.Kind == config.KindFloat {
				x, _ = strconv.ParseFloat(strconv.FormatFloat(x, 'g', 12, 64), 64)
			}
			xs = append(xs, x)
		}
	}
	var out []*yaml.Node
	for i, x := range xs {
		if !f.InRange(x) {
			// The first value out of range is min's fault; a later one, max's (the values rise).
			bound := ".min"
			if i > 0 {
				bound = ".max"
			}
			p.errorf(path+bound, "the range yields %s; every value must be %s", fmtFloat(x), f.Want())
			return nil, false
		}
		if f.Kind == config.KindInt {
			out = append(out, intNode(int64(math.Round(x))))
		} else {
			out = append(out, floatNode(x))
		}
	}
	return out, true
}

// rangeBound reads key (min, max or step) of the range mapping m at path as a number of field
// f's kind: ok is false when it is absent (an error when required) or not such a number.
func (p *parser) rangeBound(m map[string]*yaml.Node, path, key string, required bool, f *config.Field) (float64, bool) {
	v, has := m[key]
	if !has {
		if required {
			p.errorf(path+"."+key, "required")
		}
		return 0, false
	}
	if msg := config.LeadingZeroNumeral(v); msg != "" {
		p.errorf(path+"."+key, "must be a number, got %s", msg)
		return 0, false
	}
	if f.Kind == config.KindInt {
		var x int64
		if v.Kind != yaml.ScalarNode || v.ShortTag() != "!!int" || v.Decode(&x) != nil {
			p.errorf(path+"."+key, "must be an int (the field takes ints), got %s", describe(v))
			return 0, false
		}
		if x > 1<<53 || x < -(1<<53) {
			p.errorf(path+"."+key, "must be between -2^53 and 2^53, got %d", x)
			return 0, false
		}
		return float64(x), true
	}
	x, good := number(v)
	if !good {
		p.errorf(path+"."+key, "must be a finite number, got %s", describe(v))
		return 0, false
	}
	return x, true
}

// describeNumber is describe for a field that takes a number: a whole number written with a
// leading zero is described with what YAML reads and what to write (config.LeadingZeroNumeral).
func describeNumber(n *yaml.Node) string {
	if msg := config.LeadingZeroNumeral(n); msg != "" {
		return msg
	}
	return describe(n)
}

// number decodes a YAML int or float scalar as a finite float64; a whole number written with a
// leading zero is none (describeNumber says why).
func number(v *yaml.Node) (float64, bool) {
	if v.Kind != yaml.ScalarNode || (v.ShortTag() != "!!int" && v.ShortTag() != "!!float") || config.LeadingZeroNumeral(v) != "" {
		return 0, false
	}
	var x float64
	if v.Decode(&x) != nil || !finite(x) {
		return 0, false
	}
	return x, true
}

func scalar(tag, value string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: value}
}

func intNode(x int64) *yaml.Node { return scalar("!!int", strconv.FormatInt(x, 10)) }

// floatNode writes x as an int when it is integral (the decoder accepts ints for floats), so
// that 2 and 2.0 give the same YAML and the same point.
func floatNode(x float64) *yaml.Node {
	if x == math.Trunc(x) && math.Abs(x) < 1e15 {
		return intNode(int64(x))
	}
	s := fmtFloat(x)
	if !strings.ContainsAny(s, ".eEn") {
		s += ".0"
	}
	return scalar("!!float", s)
}

// fmtFloat writes x in the shortest fixed notation that reads back exactly (0.0000015, not
// 1.5e-06), as the values are shown in a dry run, point labels and messages.
func fmtFloat(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }

// describe renders a node for "got ..." in messages.
func describe(n *yaml.Node) string {
	switch {
	case n == nil:
		return "nothing"
	case n.Kind == yaml.MappingNode:
		return "a mapping"
	case n.Kind == yaml.SequenceNode:
		return "a list"
	}
	switch n.ShortTag() {
	case "!!null":
		return "null"
	case "!!str":
		return strconv.Quote(n.Value) + " (string)"
	case "!!int":
		return n.Value + " (int)"
	case "!!float":
		return n.Value + " (float)"
	case "!!bool":
		return n.Value + " (bool)"
	}
	return strconv.Quote(n.Value)
}

// example names a typical value of the free-string field at path, for messages.
func example(path string) string {
	if strings.Contains(path, "hardware") {
		return "h200_sxm"
	}
	return "meta-llama/Llama-3.1-8B-Instruct"
}

// onlyNone reports whether a prefill_load_model's type node t is absent, none, or a domain whose
// every value is none.
func onlyNone(t *yaml.Node) bool {
	if t == nil || t.Value == "none" {
		return true
	}
	c := child(t, "choices")
	if c == nil || c.Kind != yaml.SequenceNode || len(c.Content) == 0 {
		return false
	}
	for _, v := range c.Content {
		if v.Value != "none" {
			return false
		}
	}
	return true
}

// unusedRouterKnobWarnings warns, when router.policy is a domain, of each router knob the spec
// gives (a value or a domain) that no policy of the domain takes: every point drops it
// (droppedRouterKnobs), so it changes nothing, which its author may not expect (a seed beside
// round_robin and least_loaded only).
func (s *Spec) unusedRouterKnobWarnings() []string {
	d := findDomain(s.Domains, pathPolicy)
	router := child(s.root, "router")
	if d == nil || router == nil || router.Kind != yaml.MappingNode {
		return nil
	}
	policies := make([]string, len(d.Values))
	for i, v := range d.Values {
		policies[i] = v.Value
	}
	var out []string
	for i := 0; i+1 < len(router.Content); i += 2 {
		key, val := router.Content[i].Value, router.Content[i+1]
		takers, ok := routerKnobs[key]
		if !ok || val.ShortTag() == "!!null" || slices.ContainsFunc(policies, func(p string) bool { return slices.Contains(takers, p) }) {
			continue // an explicit null leaves the knob unset
		}
		if key == "prefill_load_model" && onlyNone(child(val, "type")) {
			continue // the default every policy has
		}
		out = append(out, fmt.Sprintf("%s: router.%s is dropped from every point: only router.policy %s takes it, and the domain's "+
			"policies are %s", s.File, key, strings.Join(takers, " or "), strings.Join(policies, ", ")))
	}
	return out
}
