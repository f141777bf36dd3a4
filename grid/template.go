package grid

import (
	"bytes"
	"crypto/sha256"
	"encoding"
	"encoding/hex"
	"encoding/json"
	"hash"
	"strconv"
	"strings"
	"sync"

	"github.com/servesweep/servesweep/sim/config"
	"gopkg.in/yaml.v3"
)

// This file expands a grid from templates: the points of a branch (one combination of the values
// of the domains that are not numbers: engine.mode, router.policy, planner.policy, models, GPUs,
// any enum) differ only in the values of the numeric domains, so the branch's tree is decoded once
// (config.Template) and each point's config is that template with its numbers set and validated.
// Its point ID and class are the SHA-256 of the template's canonical JSON with the point's numbers
// spliced in, which are the bytes PointID would encode. A point the template cannot give exactly
// (a value the walk refuses, an invalid or unsupported config, whose messages name the lines of
// its YAML) is built by point, the reference path, as is every point of a branch without a
// template.

// A branch is the template of one branch of the grid.
type branch struct {
	// tmpl is nil when the branch's points are built by point.
	tmpl *config.Template
	// numeric are the indexes of the numeric domains that apply to the branch's points, in Domains
	// order (the template's varied fields); engine marks those under engine., which the simulator
	// checks read.
	numeric []int
	engine  []bool
	// values[i][j] is numeric domain i's value j as the template takes it.
	values [][]config.Value
	// gpus counts a point's GPUs as quickGPUs counts them on its tree.
	gpus gpuPlan
	// ids are the splices of PointID (0) and of CanonicalKey for a single worker (1) or several
	// (2), each built once on first use (a splice with ok false: use PointID).
	once [3]sync.Once
	ids  [3]*splice
}

// templates holds the branches of an expansion: the branch of a point is found from its picks of
// the non-numeric domains.
type templates struct {
	spec *Spec
	// numeric[k] reports whether Domains[k] takes numbers (an int or float field).
	numeric []bool
	// radix is each non-numeric domain's number of values + 1 (its -1 counts), for branch keys.
	branches map[string]*branch
	// quick[k][j] is the int value of Domains[k].Values[j] as quickGPUs reads a parallelism value,
	// -1 when it would give up on it.
	quick [][]int
}

// newTemplates builds the branches of the n points of combos (see Spec.combos), or returns nil
// when no domain is numeric or the grid has more than one branch per two points (a template would
// be decoded for one point).
func (s *Spec) newTemplates(combos []int32, n int) *templates {
	d := len(s.Domains)
	t := &templates{spec: s, numeric: make([]bool, d), branches: map[string]*branch{}, quick: make([][]int, d)}
	any := false
	for k, dom := range s.Domains {
		f, ok := config.Lookup(dom.Path)
		t.numeric[k] = ok && (f.Kind == config.KindInt || f.Kind == config.KindFloat) && !strings.Contains(dom.Path, "[")
		any = any || t.numeric[k]
		t.quick[k] = make([]int, len(dom.Values))
		for j, v := range dom.Values {
			t.quick[k][j] = quickInt(v)
		}
	}
	if !any || d == 0 {
		return nil
	}
	var key []byte
	for i := range n {
		pick := combos[i*d : i*d+d]
		key = t.key(key[:0], pick)
		if _, ok := t.branches[string(key)]; ok {
			continue
		}
		if 2*(len(t.branches)+1) > n {
			return nil
		}
		t.branches[string(key)] = t.build(pick)
	}
	return t
}

// key appends the branch key of a point's picks to b: its picks of the non-numeric domains, and
// which numeric domains apply.
func (t *templates) key(b []byte, pick []int32) []byte {
	for k, j := range pick {
		switch {
		case !t.numeric[k]:
			b = strconv.AppendInt(b, int64(j), 10)
		case j < 0:
			b = append(b, '-')
		default:
			b = append(b, '+')
		}
		b = append(b, ',')
	}
	return b
}

// build decodes the template of the branch of the point with picks pick.
func (t *templates) build(pick []int32) *branch {
	s := t.spec
	nodes := make([]*yaml.Node, len(pick))
	b := &branch{}
	var paths []string
	varAt := map[string]int{}
	for k, j := range pick {
		if j < 0 {
			continue
		}
		nodes[k] = s.Domains[k].Values[j]
		if t.numeric[k] {
			varAt[s.Domains[k].Path] = len(b.numeric)
			b.numeric = append(b.numeric, k)
			b.engine = append(b.engine, strings.HasPrefix(s.Domains[k].Path, "engine."))
			paths = append(paths, s.Domains[k].Path)
		}
	}
	root := s.tree(nodes, s.controller(pathMode), s.controller(pathPolicy))
	tmpl, ok := config.NewTemplate(root, s.File, paths, config.WithMarker(ConcreteMarker))
	if !ok || len(b.numeric) > maxSentinels {
		return b
	}
	b.tmpl = tmpl
	b.gpus = newGPUPlan(root, varAt)
	b.values = make([][]config.Value, len(b.numeric))
	for i, k := range b.numeric {
		b.values[i] = make([]config.Value, len(s.Domains[k].Values))
		for j, v := range s.Domains[k].Values {
			b.values[i][j] = tmpl.Value(i, v)
		}
	}
	return b
}

// quickInt is the value quickGPUs reads from a parallelism value node, or -1 where it gives up.
func quickInt(v *yaml.Node) int {
	var x int
	if v.Kind != yaml.ScalarNode || v.ShortTag() != "!!int" || v.Decode(&x) != nil || x <= 0 || x > 1<<20 {
		return -1
	}
	return x
}

// gpuPlan is quickGPUs for the trees of a branch: per role the mode uses, the factors of its GPU
// count in quickGPUs' order, each a constant or a numeric domain's value.
type gpuPlan struct {
	ok    bool
	roles [][]gpuFactor
}

// gpuFactor is a constant c, or (var >= 0) the value of the branch's numeric domain var.
type gpuFactor struct {
	c, v int
}

// newGPUPlan reads root as quickGPUs does, with the parallelism values at the paths of varAt
// left to each point (the index of its numeric domain).
func newGPUPlan(root *yaml.Node, varAt map[string]int) gpuPlan {
	engine := child(root, "engine")
	if engine == nil || engine.Kind != yaml.MappingNode {
		return gpuPlan{}
	}
	roles, ok := treeRoles(engine)
	if !ok {
		return gpuPlan{}
	}
	plan := gpuPlan{ok: true}
	workers := child(engine, "workers")
	for _, name := range roles {
		role := child(workers, name)
		if role == nil || (role.Kind != yaml.MappingNode && role.ShortTag() != "!!null") {
			return gpuPlan{}
		}
		par := child(role, "parallelism")
		if par != nil && par.Kind != yaml.MappingNode && par.ShortTag() != "!!null" {
			return gpuPlan{}
		}
		var factors []gpuFactor
		for _, k := range []string{"replicas", "tensor", "pipeline", "attention_data"} {
			if i, ok := varAt["engine.workers."+name+".parallelism."+k]; ok {
				factors = append(factors, gpuFactor{v: i})
				continue
			}
			v := child(par, k)
			if v == nil {
				continue
			}
			x := quickInt(v)
			if x < 0 {
				return gpuPlan{}
			}
			factors = append(factors, gpuFactor{c: x, v: -1})
		}
		plan.roles = append(plan.roles, factors)
	}
	return plan
}

// count returns quickGPUs of the point whose numeric domains take the value indexes vi (indexed
// by domain), ok false where quickGPUs gives up.
func (t *templates) count(b *branch, vi []int) (n int, ok bool) {
	if !b.gpus.ok {
		return 0, false
	}
	for _, factors := range b.gpus.roles {
		g := 1
		for _, f := range factors {
			x := f.c
			if f.v >= 0 {
				k := b.numeric[f.v]
				if x = t.quick[k][vi[k]]; x < 0 {
					return 0, false
				}
			}
			g *= x
		}
		n += g
	}
	return n, true
}

// maxSentinels bounds a branch's numeric domains (the sentinel values are sentinelBase + i).
const (
	maxSentinels = 100
	sentinelBase = 1_987_654_000
)

// splice is a point ID's canonical JSON cut at the values of a branch's numeric domains: the
// JSON of a point is segs[0], the value of numeric domain order[0], segs[1], ..., segs[len].
type splice struct {
	ok    bool
	segs  [][]byte
	order []int
	// head is the SHA-256 state (encoding.BinaryMarshaler's) after pointIDPrefix and the whole
	// blocks of segs[0]; rest is the part of segs[0] after them.
	head []byte
	rest []byte
	// vals[i][j] is the JSON of numeric domain i's value j (nil: the point's ID is encoded whole).
	vals [][][]byte
}

// variant transforms a branch's config into the config whose PointID is wanted: the point's own
// (0) or its class's, for a single worker (1) or several (2).
func variant(cfg *config.Config, v int, ids catalogIDs) *config.Config {
	c := *cfg
	if v > 0 {
		c, _ = canonicalAs(cfg, v == 1, ids)
	}
	c.File, c.HasRouter, c.HasPlanner = "", false, false
	return &c
}

// newSplice cuts the JSON of variant v of the branch's configs at its numeric values: with each
// numeric domain set to a sentinel (a number no other field holds, found exactly once, or, in a
// class's config that drops the field, not at all), then each domain's every value in turn, whose
// JSON must differ from the sentinels' only in that field's text. ok is false when a cut fails.
func (t *templates) newSplice(b *branch, v int) *splice {
	s := t.spec
	ids := memoIDs()
	sentinels := make([]config.Value, len(b.numeric))
	texts := make([][]byte, len(b.numeric))
	for i := range sentinels {
		sentinels[i] = b.tmpl.Value(i, intNode(int64(sentinelBase+i)))
		texts[i] = []byte(strconv.Itoa(sentinelBase + i))
	}
	marshal := func(values []config.Value) ([]byte, bool) {
		c, ok := b.tmpl.Fill(values)
		if !ok {
			return nil, false
		}
		data, err := json.Marshal(variant(c, v, ids))
		return data, err == nil
	}
	base, ok := marshal(sentinels)
	if !ok {
		return &splice{}
	}
	type cut struct{ at, end, i int }
	var cuts []cut
	for i, text := range texts {
		found := 0
		for at := 0; ; {
			j := bytes.Index(base[at:], text)
			if j < 0 {
				break
			}
			j += at
			end := j + len(text)
			if j == 0 || base[j-1] != ':' || end == len(base) || base[end] != ',' && base[end] != '}' {
				return &splice{} // the sentinel's digits elsewhere than a field's whole value
			}
			found++
			cuts = append(cuts, cut{j, end, i})
			at = end
		}
		if found > 1 || found == 0 && v == 0 {
			return &splice{}
		}
	}
	// cuts in JSON order
	for i := 1; i < len(cuts); i++ {
		for j := i; j > 0 && cuts[j].at < cuts[j-1].at; j-- {
			cuts[j], cuts[j-1] = cuts[j-1], cuts[j]
		}
	}
	sp := &splice{ok: true, vals: make([][][]byte, len(b.numeric))}
	prev := 0
	for _, c := range cuts {
		sp.segs = append(sp.segs, base[prev:c.at])
		sp.order = append(sp.order, c.i)
		prev = c.end
	}
	sp.segs = append(sp.segs, base[prev:])
	first := append([]byte(pointIDPrefix), sp.segs[0]...)
	whole := len(first) / sha256.BlockSize * sha256.BlockSize
	h := sha256.New()
	h.Write(first[:whole])
	head, err := h.(encoding.BinaryMarshaler).MarshalBinary()
	if err != nil {
		return &splice{}
	}
	sp.head, sp.rest = head, first[whole:]
	at := map[int]cut{}
	for _, c := range cuts {
		at[c.i] = c
	}
	values := make([]config.Value, len(sentinels))
	for i, k := range b.numeric {
		sp.vals[i] = make([][]byte, len(s.Domains[k].Values))
		for j := range s.Domains[k].Values {
			copy(values, sentinels)
			values[i] = b.values[i][j]
			data, ok := marshal(values)
			if !ok {
				continue // such a point is decoded by point
			}
			c, cut := at[i]
			if !cut {
				if !bytes.Equal(data, base) {
					return &splice{}
				}
				sp.vals[i][j] = []byte{}
				continue
			}
			tail := len(base) - c.end
			if len(data) < c.at+tail || !bytes.Equal(data[:c.at], base[:c.at]) || !bytes.Equal(data[len(data)-tail:], base[c.end:]) {
				return &splice{}
			}
			sp.vals[i][j] = data[c.at : len(data)-tail]
		}
	}
	return sp
}

// id returns the PointID of variant v of the point whose numeric domains take the value indexes
// vi, writing its text in buf and hashing it with h (a SHA-256 hash, reset from the splice's
// head), or ok false when the splice cannot give it.
func (t *templates) id(b *branch, v int, vi []int, buf *[]byte, h hash.Hash) (string, bool) {
	b.once[v].Do(func() { b.ids[v] = t.newSplice(b, v) })
	sp := b.ids[v]
	if !sp.ok {
		return "", false
	}
	// The text after the head: the rest of segs[0], then each value and the segment after it.
	out := append((*buf)[:0], sp.rest...)
	for i, n := range sp.order {
		val := sp.vals[n][vi[b.numeric[n]]]
		if val == nil {
			return "", false
		}
		out = append(append(out, val...), sp.segs[i+1]...)
	}
	*buf = out
	if err := h.(encoding.BinaryUnmarshaler).UnmarshalBinary(sp.head); err != nil {
		return "", false
	}
	h.Write(out)
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	return hex.EncodeToString(sum[:6]), true
}

// templateState is one goroutine's scratch space for building points from templates.
type templateState struct {
	t          *templates
	mi, pi     int
	key, check []byte
	values     []config.Value
	buf        []byte
	sha        hash.Hash
	// scratch holds the config of the point being built (admit reads it; the point drops it).
	scratch config.Scratch
}

func (t *templates) newState() *templateState {
	s := t.spec
	return &templateState{t: t, mi: s.controller(pathMode), pi: s.controller(pathPolicy), values: make([]config.Value, len(s.Domains)),
		sha: sha256.New()}
}

// point is Spec.point of the combination combo (value indexes, -1 for a domain that does not
// apply; pick and vi as point takes them) built from its branch's template: the same point, reason
// and messages.
func (ts *templateState) point(combo []int32, pick []*yaml.Node, vi []int, check checkFunc, ids catalogIDs) (Point, string, string, string) {
	t, s := ts.t, ts.t.spec
	ts.key = t.key(ts.key[:0], combo)
	b := t.branches[string(ts.key)]
	if b == nil || b.tmpl == nil {
		return s.point(pick, vi, ts.mi, ts.pi, check, ids)
	}
	p := s.newPoint(pick, vi)
	o := s.Optimization
	// As point: the GPU budget first, where quickGPUs would count the point's GPUs on its tree.
	if g, ok := t.count(b, vi); ok {
		if why := budgetMsg(g, o); why != "" {
			return p, FilteredGPUBudget, why, ""
		}
	}
	values := ts.values[:len(b.numeric)]
	for i, k := range b.numeric {
		values[i] = b.values[i][vi[k]]
	}
	cfg, err, ok := b.tmpl.InstanceIn(&ts.scratch, values)
	if !ok || err != nil {
		// Its messages name the lines of its YAML: point decodes it.
		return s.point(pick, vi, ts.mi, ts.pi, check, ids)
	}
	// The simulator's checks read the engine section and the router's prefill-load model: the
	// branch and the values of its engine domains.
	ts.check = append(append(ts.check[:0], 't'), ts.key...)
	for i, k := range b.numeric {
		if b.engine[i] {
			ts.check = strconv.AppendInt(append(ts.check, ','), int64(vi[k]), 10)
		}
	}
	keys := func(v int) (string, bool) { return t.id(b, v, vi, &ts.buf, ts.sha) }
	p, reason, msg, full := s.admit(p, cfg, check, ts.check, ids, keys)
	p.Config = nil // it is the scratch config; Materialize decodes the points that run
	return p, reason, msg, full
}
