package grid

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/servesweep/servesweep/sim/config"
	"github.com/servesweep/servesweep/sim/optimization"
	"github.com/servesweep/servesweep/sim/timing/opdb"

	"gopkg.in/yaml.v3"
)

// MaxGridPoints is the largest grid (Cartesian product before filtering) Expand accepts; a larger
// one is an error naming its size rather than a run that never ends. A grid of this size expands
// in about 5 s and 0.7 GB on 2 cores when its numeric domains take the template path
// (BenchmarkExpand/points=1000000, docs/development.md).
const MaxGridPoints = 1_000_000

// Defaults of the optimization and optimizer sections (dynosim-spec.md §3.7, with servesweep's
// grid algorithm as the default).
const (
	DefaultMaxCandidateGPUs = 32
	DefaultMaxTrials        = 320
	DefaultSeed             = 42
	DefaultCandidateTimeout = 600 * time.Second
	AlgorithmGrid           = "grid"
	AlgorithmRandom         = "random"
)

// maxTreeNodes bounds the YAML tree after expanding aliases (a guard against alias bombs).
const maxTreeNodes = 1 << 16

// Spec is a parsed sweep spec: a prediction YAML whose fields may hold search domains, plus the
// optimization and optimizer sections. Build it with Load or Parse; Expand turns it into points.
type Spec struct {
	// File names the spec in error messages.
	File string
	// Domains are the searched fields in enumeration order: engine.mode first, then
	// router.policy, then the others in document order.
	Domains []Domain
	// Optimization says what a good point is, Optimizer which points to simulate and how.
	Optimization Optimization
	Optimizer    Optimizer
	// Systems is the performance database the sweep's points are checked against (sim.Check)
	// and priced with (nil: none). Parse leaves it nil; the caller sets it before Expand. Its
	// identity is part of the spec hash (Expansion.SpecHash).
	Systems *opdb.DB

	// root is the prediction part of the spec (without optimization and optimizer), aliases
	// expanded and comments removed; the domain nodes are Domain.node.
	root *yaml.Node
	// sets are the --set arguments applied to the file, in order (at names them in messages).
	sets []string
	// sectionWarning is the warning about the worker roles and engine.kv_transfer the spec
	// gives that no mode of the grid uses (unusedSectionWarning; "" when none): taken before a
	// concrete mode prunes them from root.
	sectionWarning string
	// copied are the nodes of root a point's tree copies rather than shares (pointCopies; nil:
	// every node).
	copied map[*yaml.Node]bool
	// noTemplates makes the expansion decode every point's tree (point), the reference the
	// template path is tested against.
	noTemplates bool
	// traceDigests are the trace files' contents as DigestTraces read them (nil: not taken), in
	// TracePaths order; the spec hash covers them.
	traceDigests []traceDigest
	// Build identifies the servesweep build that simulates the points (its release, or its VCS
	// revision; for a modified tree's build, or one that records neither, also the digest of its
	// executable; "" for a test binary). Parse leaves it ""; the caller sets it. The spec hash covers it: rows of two
	// builds may come from two timing models, so a resume or a merge across builds is refused.
	Build string
}

// Domain is one searched field and the values it takes.
type Domain struct {
	// Path is the dotted field path, e.g. engine.workers.aggregated.parallelism.tensor.
	Path string
	// Line is the domain's line in the spec (0 when it came from --set).
	Line int
	// Values are the field's values in order, as YAML scalar nodes.
	Values []*yaml.Node

	node *yaml.Node
}

// ValueStrings returns the domain's values as YAML text.
func (d Domain) ValueStrings() []string {
	out := make([]string, len(d.Values))
	for i, v := range d.Values {
		out[i] = v.Value
	}
	return out
}

// Optimization is the optimization section: what a good point is.
type Optimization struct {
	// Target is optimization.TargetPareto (default) or a scalar target of dynosim-spec.md §5.5.
	Target string
	// Objectives are the Pareto axes (default optimization.DefaultObjectives()).
	Objectives []optimization.Objective
	// MinCandidateGPUs (0: none) and MaxCandidateGPUs (default 32) bound a point's GPU count;
	// points outside are filtered before simulation.
	MinCandidateGPUs, MaxCandidateGPUs int
	// StrictSLA drops points whose mean TTFT/TPOT/E2E break evaluation.sla from the front.
	StrictSLA bool
	// MinGoodputRPS is min_goodput_rps (target min_gpus only; 0: none).
	MinGoodputRPS float64
	// MaxRejectedRatio is max_rejected_ratio in [0, 1]: the largest share of offered requests a
	// degraded point may have rejected or truncated and still be a candidate (default 0).
	MaxRejectedRatio float64
	// MaxCostUSDPerHour and MaxUSDPerMillionOutputTokens are the cost constraints
	// max_cost_usd_per_hour and max_usd_per_million_output_tokens (0: none; they need Cost).
	MaxCostUSDPerHour, MaxUSDPerMillionOutputTokens float64
	// CapacitySearch is optimization.capacity_search (nil: every point runs at its own load).
	CapacitySearch *CapacitySearch
	// Cost is optimization.cost (nil: no cost columns).
	Cost *Cost
}

// Settings returns the analysis settings of the optimization section.
func (o Optimization) Settings() optimization.Settings {
	return optimization.Settings{Target: o.Target, Objectives: slices.Clone(o.Objectives), MinGPUs: o.MinCandidateGPUs,
		MaxGPUs: o.MaxCandidateGPUs, StrictSLA: o.StrictSLA, MinGoodputRPS: o.MinGoodputRPS,
		MaxRejectedRatio: o.MaxRejectedRatio, MaxCostUSDPerHour: o.MaxCostUSDPerHour,
		MaxUSDPerMillionOutputTokens: o.MaxUSDPerMillionOutputTokens}
}

// Optimizer is the optimizer section: which points to simulate and how.
type Optimizer struct {
	// Algorithm is AlgorithmGrid (default: every valid point) or AlgorithmRandom (MaxTrials
	// valid points drawn without replacement with Seed).
	Algorithm string
	// MaxTrials is the number of points random search simulates (default 320).
	MaxTrials int
	// Seed seeds random search (default 42).
	Seed uint64
	// Parallelism is the number of points simulated at once (default runtime.NumCPU()).
	Parallelism int
	// CandidateTimeout is the host-time limit per point (default 600 s); a point past it is
	// recorded as timed_out.
	CandidateTimeout time.Duration
}

// Load reads the sweep spec at path and parses it; see Parse. The relative file paths the spec
// gives (traffic.source.paths) resolve against the spec's folder before the --set overrides
// apply (config.ResolvePaths); those --set gives resolve against the working directory. A missing
// or unreadable file is a config.Errors (exit code 2).
func Load(path string, sets []string, getenv func(string) (string, bool), checkMetric func(string) error) (*Spec, error) {
	data, err := config.ReadFile(path) // not a named pipe nobody writes to, nor a directory
	if err != nil {
		return nil, config.Errors{{File: path, Msg: "cannot read sweep spec: " + config.PathCause(err).Error(), Err: err}}
	}
	return parse(data, path, filepath.Dir(path), sets, getenv, checkMetric)
}

// at is where a message about the field path should say it comes from: the spec's file, with
// the --set argument that wrote the field when one did ("spec.yaml (--set engine.model=...)"),
// as config.Error prints it.
func (s *Spec) at(path string) string {
	if set := config.SetFor(path, s.sets); set != "" {
		return s.File + " (--set " + set + ")"
	}
	return s.File
}

// Parse parses a sweep spec. file names it in error messages (it is not read: the spec's relative
// file paths stay as written and resolve against the working directory, as for the embedded
// built-in spec; Load resolves them against the file's folder); sets are --set PATH=YAML overrides
// applied in order before anything else (so they may also set domains); getenv (nil: no
// environment) resolves ${NAME} references in string values, which lets a spec take a trace
// path from the environment. checkMetric returns an error unless its argument names a metric an
// objective may take (results.CheckMetric: a numeric column of results.parquet, which grid does
// not know); its error becomes the message at optimization.objectives[i].metric. With a nil
// checkMetric the names are left to results.Analyze, which refuses an unknown one when the
// sweep's analysis runs.
//
// A field holds a domain when its value is a mapping with the key choices or range
// (dynosim-spec.md §3.8); a bare list is never a domain. Domains are allowed only on the fields
// whose struct tags in package config say sweep (config.Field.Sweep): engine.mode, every
// parallelism key of every worker role, scheduler.max_batched_tokens and max_sequences,
// kv_cache.block_size, router.policy, router.prefill_load_model.type and the kv_router knobs, and
// the load intensity (traffic.load.concurrency, requests_per_second, sessions_per_second,
// speedup). Each value must be valid for its field (its kind, enum and range tags).
//
//   - {choices: [v1, v2, ...]}: non-empty, unique scalars, each valid for the field; null too on a
//     field whose null means not set (config.Field.Nullable), which that point leaves unset.
//   - {range: {min, max, step, scale}}: finite, min <= max; scale linear (default) or log.
//     A linear range needs step > 0 and yields min, min+step, ... up to max (max included when
//     a step lands on it; int fields need int bounds and step). A log range takes no step and
//     needs min > 0: it yields min, 2·min, 4·min, ... up to max.
//
// Every problem is reported at once as config.Errors naming the file and the field path.
// The point count is checked against MaxGridPoints here.
func Parse(data []byte, file string, sets []string, getenv func(string) (string, bool), checkMetric func(string) error) (*Spec, error) {
	return parse(data, file, "", sets, getenv, checkMetric)
}

// parse is Parse, with the spec's relative file paths resolved against dir first unless dir is "".
func parse(data []byte, file, dir string, sets []string, getenv func(string) (string, bool), checkMetric func(string) error) (*Spec, error) {
	root, err := parseYAML(data, file)
	if err != nil {
		return nil, err
	}
	if errs := duplicateKeys(root, file, ""); len(errs) > 0 {
		// Reported once, at the spec's own lines: each point's config would report it again at
		// the lines of its re-written tree.
		return nil, errs
	}
	if dir != "" {
		if err := config.ResolvePaths(root, file, dir); err != nil {
			return nil, err
		}
	}
	if err := config.ApplySets(root, file, sets); err != nil {
		return nil, err
	}
	p := &parser{file: file, getenv: getenv, checkMetric: checkMetric}
	if root, err = p.flatten(root); err != nil {
		return nil, err
	}
	s := &Spec{File: file, root: root, sets: sets}
	var optN, optzN *yaml.Node
	for i := 0; i+1 < len(root.Content); {
		switch root.Content[i].Value {
		case "optimization":
			optN = root.Content[i+1]
		case "optimizer":
			optzN = root.Content[i+1]
		default:
			i += 2
			continue
		}
		root.Content = slices.Delete(root.Content, i, i+2)
	}
	s.Optimization = p.optimization(optN)
	s.Optimizer = p.optimizer(optzN)
	p.sections(root)
	// Every key is checked once here, on the whole spec (every worker role included, whichever
	// mode uses it): a misspelt key would otherwise make each point that holds it an invalid
	// config, and a spec sweeping several modes would quietly lose every point of one.
	p.badKeys = map[string]bool{}
	for _, e := range config.CheckKeys(root, file, specKeys) {
		p.errs = append(p.errs, e)
		p.badKeys[e.Path] = true
	}
	p.walk(root, "")
	p.checkNames(root)
	if s.Optimization.CapacitySearch != nil {
		p.checkCapacityDomains(p.domains)
	}
	if len(p.errs) > 0 {
		return nil, p.errs
	}
	s.sectionWarning = s.unusedSectionWarning(root, p.domains)
	if m := child(child(root, "engine"), "mode"); m != nil && m.Kind == yaml.ScalarNode &&
		slices.Contains(strs(config.Modes()), m.Value) {
		// A concrete mode drops the roles it does not use, and their domains, as a mode
		// domain does for each of its points.
		prune(root, m.Value, "")
		p.domains = slices.DeleteFunc(p.domains, func(d Domain) bool { return !s.applies(d.Path, m.Value, "") })
	}
	s.Domains = orderDomains(p.domains)
	if n := s.Size(); n > MaxGridPoints {
		return nil, config.Errors{{File: file, Msg: fmt.Sprintf("the grid has %s points before filtering, more than "+
			"the limit of %s; narrow the domains (%s)", groupDigits(n), groupDigits(MaxGridPoints), s.domainSizes())}}
	}
	s.copied = s.pointCopies()
	return s, nil
}

// duplicateKeys returns an error for every key that a mapping of the spec's tree n (at field path
// path) holds twice, naming the line of its first definition in file.
func duplicateKeys(n *yaml.Node, file, path string) config.Errors {
	var errs config.Errors
	switch n.Kind {
	case yaml.MappingNode:
		first := map[string]int{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i].Value
			kp := k
			if path != "" {
				kp = path + "." + k
			}
			if line, dup := first[k]; dup {
				errs = append(errs, &config.Error{File: file, Path: kp, Msg: fmt.Sprintf("duplicate key (first defined on line %d, again on line %d)",
					line, n.Content[i].Line)})
				continue
			}
			first[k] = n.Content[i].Line
			errs = append(errs, duplicateKeys(n.Content[i+1], file, kp)...)
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			errs = append(errs, duplicateKeys(c, file, fmt.Sprintf("%s[%d]", path, i))...)
		}
	}
	return errs
}

// pointCopies returns the nodes of the spec's tree that each point's tree copies: the ancestors
// of every domain and the mappings a point's pruning edits (engine, engine.workers, router,
// planner, and root). The other subtrees are the same in every point and shared with it.
func (s *Spec) pointCopies() map[*yaml.Node]bool {
	set := map[*yaml.Node]bool{s.root: true}
	engine := child(s.root, "engine")
	for _, n := range []*yaml.Node{engine, child(engine, "workers"), child(s.root, "router"), child(s.root, "planner")} {
		if n != nil {
			set[n] = true
		}
	}
	domains := map[*yaml.Node]bool{}
	for _, d := range s.Domains {
		domains[d.node] = true
	}
	var stack []*yaml.Node
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if domains[n] {
			for _, a := range stack {
				set[a] = true
			}
			return
		}
		stack = append(stack, n)
		for _, c := range n.Content {
			walk(c)
		}
		stack = stack[:len(stack)-1]
	}
	walk(s.root)
	return set
}

// parseYAML parses a single YAML document whose top level is a mapping.
func parseYAML(data []byte, file string) (root *yaml.Node, err error) {
	fail := func(msg string) error { return config.Errors{{File: file, Msg: msg}} }
	defer func() {
		if r := recover(); r != nil {
			root, err = nil, fail(fmt.Sprintf("invalid YAML: %v", r))
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil && err != io.EOF {
		return nil, fail(config.YAMLErrorMessage(err, data))
	}
	for {
		// Empty documents after the spec (a trailing "---") are accepted, as a prediction
		// config's are.
		var extra yaml.Node
		err := dec.Decode(&extra)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fail(config.YAMLErrorMessage(err, data))
		}
		if len(extra.Content) > 0 && !(extra.Content[0].Kind == yaml.ScalarNode && extra.Content[0].ShortTag() == "!!null") {
			return nil, fail(fmt.Sprintf("more than one YAML document (a second begins on line %d); a sweep spec is a single document",
				extra.Content[0].Line))
		}
	}
	if len(doc.Content) == 0 || (doc.Content[0].Kind == yaml.ScalarNode && doc.Content[0].ShortTag() == "!!null") {
		return &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}, nil
	}
	n := doc.Content[0]
	if n.Kind != yaml.MappingNode {
		return nil, fail("the top level must be a mapping (traffic, engine, router, planner, evaluation, optimization, optimizer)")
	}
	return n, nil
}

// sections reports each top-level key of the spec that is neither a section of the prediction
// schema nor optimization or optimizer, once for the spec (every point would repeat it), with
// the valid keys; a key the schema refuses gets the schema's message.
func (p *parser) sections(root *yaml.Node) {
	valid := append(config.Sections(), "optimization", "optimizer")
	for i := 0; i+1 < len(root.Content); i += 2 {
		key := root.Content[i].Value
		switch msg, refused := config.RefusedSection(key); {
		case slices.Contains(valid, key):
		case refused:
			p.errorf(key, "%s", msg)
		default:
			p.errorf(key, "unknown field; valid fields: %s", strings.Join(valid, ", "))
		}
	}
}

// specKeys is the config.KeyFilter of a sweep spec: a search domain on a field of the schema is
// that field's values, not keys of the schema, and the keys the parser reports itself are not
// reported twice (a top-level key that is no prediction section, reported by sections; a preset
// key, reported by walk).
func specKeys(path string, n *yaml.Node, known bool) bool {
	switch {
	case known:
		return isDomain(n)
	case !strings.ContainsAny(path, ".["):
		return true
	}
	return path == "preset" || strings.HasSuffix(path, ".preset")
}

// strs returns enum values as strings.
func strs[T ~string](vs []T) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = string(v)
	}
	return out
}

// parser collects the problems of one spec.
type parser struct {
	file   string
	getenv func(string) (string, bool)
	// checkMetric is Parse's checkMetric.
	checkMetric func(string) error
	errs        config.Errors
	domains     []Domain
	nodes       int
	// badKeys holds the paths of the keys config.CheckKeys reported; walk does not enter them.
	badKeys map[string]bool
}

func (p *parser) errorf(path, format string, args ...any) {
	p.errs = append(p.errs, &config.Error{File: p.file, Path: path, Msg: fmt.Sprintf(format, args...)})
}

// flatten returns a copy of n with aliases replaced by copies of their targets, anchors and
// comments removed.
func (p *parser) flatten(n *yaml.Node) (*yaml.Node, error) {
	var cp func(n *yaml.Node, depth int) *yaml.Node
	viaAliases := 0 // the nodes copied from an alias's target
	cp = func(n *yaml.Node, depth int) *yaml.Node {
		for n.Kind == yaml.AliasNode && n.Alias != nil && depth < 64 {
			n, depth = n.Alias, depth+1
		}
		p.nodes++
		if depth > 0 {
			viaAliases++
		}
		if p.nodes > maxTreeNodes || depth >= 64 {
			return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null"}
		}
		c := &yaml.Node{Kind: n.Kind, Style: n.Style &^ (yaml.TaggedStyle), Tag: n.Tag, Value: n.Value,
			Line: n.Line, Column: n.Column}
		if len(n.Content) > 0 {
			c.Content = make([]*yaml.Node, len(n.Content))
			for i, ch := range n.Content {
				c.Content[i] = cp(ch, depth)
			}
		}
		return c
	}
	out := cp(n, 0)
	if p.nodes > maxTreeNodes && p.nodes-viaAliases <= maxTreeNodes {
		return nil, config.Errors{{File: p.file, Msg: fmt.Sprintf("the spec expands to more than %d YAML nodes (keys and values) through its aliases; write it out plainly", maxTreeNodes)}}
	}
	if p.nodes > maxTreeNodes {
		return nil, config.Errors{{File: p.file, Msg: fmt.Sprintf("the spec has more than %d YAML nodes (keys and values), the most a spec may have; "+
			"give a long list of choices as a range ({range: {min, max, step}}), or split the sweep into several specs", maxTreeNodes)}}
	}
	return out, nil
}

var envRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// walk visits the prediction part of the spec: it expands ${NAME} in string values, records the
// domains and reports domains, presets, bare lists and `auto` where they are not allowed.
func (p *parser) walk(n *yaml.Node, path string) {
	switch n.Kind {
	case yaml.MappingNode:
		if isDomain(n) {
			p.domain(n, path)
			return
		}
		keys := mappingKeys(n)
		if f, sub := fieldFor(path), hasSubfields(path); f != nil && (!sub || !slices.Contains(keys, "distribution")) {
			// A searchable field holds a value (a scalar or a list), so a mapping there is a
			// mistyped domain ({choice: [4]}); said once here rather than once per point.
			got := "an empty mapping"
			if len(keys) > 0 {
				got = "a mapping with key(s) " + strings.Join(keys, ", ")
			}
			want := f.Want()
			if sub {
				// A token count: an int, or a distribution mapping (which has the distribution key).
				want += ", a {distribution: ...} mapping"
			}
			domains := "{choices: [...]}"
			if f.Kind == config.KindInt || f.Kind == config.KindFloat {
				domains += " or {range: {...}}"
			}
			p.errorf(path, "must be %s or a domain %s; got %s", want, domains, got)
			return
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			kp := join(path, k.Value)
			switch {
			case p.badKeys[kp]:
				continue
			case k.Value == "preset":
				p.errorf(kp, "presets are not supported by servesweep sweep; put a {choices: [...]} domain on each parallelism key instead")
				continue
			case v.Kind == yaml.SequenceNode && fieldFor(kp) != nil:
				p.errorf(kp, "a bare list is never a domain; write {choices: %s} to search these values, or give one value", flowText(v))
				continue
			}
			p.walk(v, kp)
		}
	case yaml.SequenceNode:
		for i, v := range n.Content {
			p.walk(v, fmt.Sprintf("%s[%d]", path, i))
		}
	case yaml.ScalarNode:
		if n.ShortTag() == "!!str" && (path == "engine.hardware" || strings.HasSuffix(path, ".hardware")) && n.Value == "auto" {
			p.errorf(path, msgAutoHardware)
		}
		if n.ShortTag() == "!!str" && strings.Contains(n.Value, "${") {
			if f, ok := config.Lookup(path); ok && f.Kind != config.KindString && f.Kind != config.KindList {
				// The reference would fill a string, which the field then refuses as one; a field that
				// also takes a word (context_length's max) may take that word from the environment.
				orig := n.Value
				if f.Word == "" {
					p.errorf(path, "%q: an environment reference fills string values only (file paths, names), and this field takes %s; "+
						"write the value, or override the field with %s", orig, f.Want(), setHint(path))
				} else if p.expandEnv(n, path) && n.Value != f.Word {
					p.errorf(path, "%q gives %q: an environment reference fills string values only (file paths, names), so in this "+
						"field it can give only %q; write the number, or override the field with %s", orig, n.Value, f.Word, setHint(path))
				}
				return
			}
			p.expandEnv(n, path)
		}
	}
}

// listIndex matches a trailing list index of a field path, e.g. the "[0]" of traffic.source.paths[0].
var listIndex = regexp.MustCompile(`\[\d+\]$`)

// setHint is the --set that overrides the field at path. --set addresses mappings, not list
// elements, so an element of a list (traffic.source.paths[0]) is overridden by setting the whole
// list: --set 'traffic.source.paths=[/path/to/trace.jsonl]'.
func setHint(path string) string {
	if loc := listIndex.FindStringIndex(path); loc != nil {
		parent, value := path[:loc[0]], "VALUE"
		if field, ok := strings.CutSuffix(parent, ".choices"); ok {
			return "--set '" + field + "={choices: [" + value + "]}'"
		}
		if strings.HasSuffix(parent, ".paths") {
			value = "/path/to/trace.jsonl"
		}
		return "--set '" + parent + "=[" + value + "]'"
	}
	return "--set " + path + "=VALUE"
}

// expandEnv replaces each ${NAME} in the string scalar n with the environment variable's value,
// and reports whether it could (false after an error at path). A "${" that starts no such
// reference (unterminated, or not a name: ${1X}, ${A-B}) is an error at path, said once here
// rather than by every grid point the literal would reach.
func (p *parser) expandEnv(n *yaml.Node, path string) bool {
	if rest := envRef.ReplaceAllString(n.Value, ""); strings.Contains(rest, "${") {
		p.errorf(path, "%q has a \"${\" that starts no environment reference: write ${NAME} (NAME of letters, digits and _, "+
			"not starting with a digit, closed by })", n.Value)
		return false
	}
	ok := true
	n.Value = envRef.ReplaceAllStringFunc(n.Value, func(ref string) string {
		name := envRef.FindStringSubmatch(ref)[1]
		var v string
		set := false
		if p.getenv != nil {
			v, set = p.getenv(name)
		}
		if !set || strings.TrimSpace(v) == "" {
			state := "is not set; export it"
			if set {
				state = "is set but empty or blank; give it a value"
			}
			p.errorf(path, "environment variable %s %s, or override this field with %s", name, state, setHint(path))
			ok = false
			return ref
		}
		return v
	})
	n.Style = yaml.DoubleQuotedStyle
	return ok
}

// hasSubfields reports whether the schema has fields under path, so that a mapping there is a
// value (traffic.source.input_tokens is an int or a {distribution: ...} mapping).
func hasSubfields(path string) bool {
	return parentPaths[anyListIndex.ReplaceAllString(path, "[]")] // Fields lists list elements as name[]
}

// parentPaths holds every proper prefix (at a '.') of a config.Fields path.
var parentPaths = func() map[string]bool {
	m := map[string]bool{}
	for _, f := range config.Fields() {
		for i := range len(f.Path) {
			if f.Path[i] == '.' {
				m[f.Path[:i]] = true
			}
		}
	}
	return m
}()

// anyListIndex matches every list index of a field path, e.g. the [1] of
// traffic.source.components[1].source.input_tokens.
var anyListIndex = regexp.MustCompile(`\[[0-9]+\]`)

// mappingKeys lists the keys of mapping n in document order.
func mappingKeys(n *yaml.Node) []string {
	var keys []string
	for i := 0; i+1 < len(n.Content); i += 2 {
		keys = append(keys, n.Content[i].Value)
	}
	return keys
}

// isDomain reports whether a mapping is a domain object (it has a choices or range key).
func isDomain(n *yaml.Node) bool {
	if n.Kind != yaml.MappingNode {
		return false
	}
	keys := mappingKeys(n)
	return slices.Contains(keys, "choices") || slices.Contains(keys, "range")
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// flowText renders a node in YAML flow style for messages.
func flowText(n *yaml.Node) string {
	c := *n
	c.Style = yaml.FlowStyle
	out, err := yaml.Marshal(&c)
	if err != nil {
		return "[...]"
	}
	return strings.TrimSpace(string(out))
}

// orderDomains puts engine.mode first and router.policy second (the fields that decide which
// other domains apply), the rest in document order.
func orderDomains(ds []Domain) []Domain {
	rank := func(d Domain) int {
		switch d.Path {
		case pathMode:
			return 0
		case pathPolicy:
			return 1
		}
		return 2
	}
	out := slices.Clone(ds)
	slices.SortStableFunc(out, func(a, b Domain) int { return rank(a) - rank(b) })
	return out
}

// groupDigits renders n with thousands separators.
func groupDigits(n int) string {
	s := strconv.Itoa(n)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// domainSizes lists each domain's path and value count, for the oversized-grid message.
func (s *Spec) domainSizes() string {
	parts := make([]string, len(s.Domains))
	for i, d := range s.Domains {
		parts[i] = fmt.Sprintf("%s: %d values", d.Path, len(d.Values))
	}
	return strings.Join(parts, "; ")
}

// defaultParallelism is optimizer.parallelism when unset: one point per CPU.
func defaultParallelism() int { return max(1, runtime.NumCPU()) }

// finite reports whether x is neither NaN nor infinite.
func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
