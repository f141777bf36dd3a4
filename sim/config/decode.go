package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// This file turns DynoSim prediction YAML (dynosim-spec.md §3) into a Config.
//
// Decoding runs in five steps, and every problem of a step is collected before the step
// returns, so one run reports all of them:
//
//  1. Parse the document into a yaml.Node tree (syntax errors carry the YAML line number).
//  2. Apply the --set overrides to the tree, left to right (dynosim-spec.md §2.3).
//  3. Walk the tree by hand along the schema, tracking the dotted path of every field: unknown
//     and duplicate keys, wrong YAML kinds and search domains are reported here, and the
//     defaults (listed in the Decode doc comment) are filled in once each union's type is known.
//  4. Validate the values and the cross-field rules (Config.Validate, plus knowledge of which
//     fields the YAML spelled out, so that an explicit 0 is "must be > 0" rather than "unset").
//  5. Report values the schema accepts but the simulator cannot run yet (Config.Unsupported).

// Default values (dynosim-spec.md §3); see the table in the Decode doc comment.
const (
	defaultInputTokens      = 1024
	defaultOutputTokens     = 128
	defaultConcurrency      = 10
	defaultStopRequests     = 100
	defaultSessionTurns     = 4
	defaultTraceBlockSize   = 512
	defaultPoissonSeed      = 42
	defaultSpeedup          = 1.0
	defaultMaxBatchedTokens = 8192
	defaultMaxSequences     = 256
	defaultPrefillMaxSeqs   = 1
	defaultMemoryFraction   = 0.9
	sglangMemoryFraction    = 0.88
	defaultTraceFormat      = "mooncake"
	defaultTimingMode       = "destination_missing"
	loadModelNone           = "none"
	loadModelAIC            = "aic"
	plannerDisabled         = "disabled"
	plannerEnabled          = "enabled"
	backendVLLM             = "vllm"
	backendSGLang           = "sglang"
	backendTRTLLM           = "trtllm"
)

// Messages shared by several checks.
const (
	msgDomain = "search domains ({choices: ...}, {range: ...}) belong to servesweep sweep; " +
		"predict needs a concrete value"
	msgPreset = "presets belong to servesweep sweep; predict needs concrete values"
	msgAuto   = "auto is only valid in servesweep sweep; predict needs a concrete value"
)

// LoadFile reads the prediction YAML at path, applies the --set overrides in order, decodes it
// strictly, fills in defaults and validates it; see Decode. A missing or unreadable file is
// also reported as a Error (exit code 2) that wraps the underlying error.
func LoadFile(path string, sets []string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		cause := err
		var pe *fs.PathError
		if errors.As(err, &pe) {
			cause = pe.Err
		}
		return nil, Errors{{File: path, Msg: "cannot read config: " + cause.Error(), Err: err}}
	}
	return Decode(data, path, sets)
}

// Decode turns prediction YAML into a Config. file names the input in error messages. sets
// are --set arguments of the form PATH=YAML, applied left to right to the parsed document
// before decoding (dynosim-spec.md §2.3): PATH is dot-separated, may create missing mappings,
// and may not index sequences; the right-hand side is parsed as YAML.
//
// Decoding is strict: unknown or duplicate keys, wrong YAML kinds (an int must be a YAML int,
// so true, "4" and 4.5 are not ints; floats accept ints but not NaN, Inf or strings), fields a
// tagged union's type does not accept, search domains, presets, `auto`, and the sections
// `execution`, `optimization` and `optimizer` are errors.
//
// Defaults (dynosim-spec.md §3; applied only to omitted fields, after the union type is known):
//
//	traffic (omitted entirely)     source {type: synthetic, input_tokens: 1024, output_tokens: 128},
//	                               load {type: concurrency, concurrency: 10}, stop {requests: 100}.
//	                               A supplied traffic mapping is not merged with this default.
//	traffic.source                 {type: synthetic} when omitted or null
//	  synthetic                    input_tokens 1024, output_tokens 128
//	  synthetic-session            new_input_tokens_per_turn 1024, output_tokens_per_turn 128;
//	                               session (required) turns 4, shared_prefix_ratio 0,
//	                               prefix_groups 0, inter_turn_delay_ms 0
//	  trace                        format mooncake, block_size 512 (none for dynamo/weka)
//	traffic.load                   {type: concurrency, concurrency: 10} when omitted or null
//	  concurrency                  concurrency 10
//	  poisson                      seed 42
//	  trace_timestamps             speedup 1
//	traffic.stop                   no default inside a supplied traffic (synthetic sources need one)
//	engine                         required; mode aggregated, backend vllm,
//	                               context_length "max" (stored as 0), backend_version "" (latest)
//	engine.kv_transfer             timing_mode destination_missing, bytes_per_token auto (0),
//	                               bandwidth_gb_per_second null (no delay)
//	engine.precision               {weights: auto, kv_cache: auto} (stored as ""): a servesweep
//	                               addition; weights bf16|fp8|fp4, kv_cache bf16|fp8; auto takes
//	                               the format the model id (…-FP8, …-NVFP4) or the model
//	                               directory's quantization_config implies, else bf16
//	engine.workers.<role>          a declared role may be {} or null (all defaults)
//	  parallelism                  replicas, tensor, pipeline, attention_data, moe_tensor,
//	                               moe_expert all 1
//	  scheduler                    max_batched_tokens 8192; max_sequences 256 (prefill role: 1)
//	  kv_cache                     block_size vllm 64, sglang 1, trtllm 32; prefix_caching true;
//	                               bytes_per_token auto (0)
//	  kv_cache.capacity            {type: default} when the capacity or its type is omitted;
//	                               default: memory_fraction 0.9 (sglang 0.88)
//	  timing                       {type: default}; `roofline` is an alias of default
//	router                         policy round_robin, prefill_load_model {type: none};
//	                               the kv_router knobs stay nil when omitted (their documented
//	                               defaults are overlap_score_credit 1.0, prefill_load_scale 1.0,
//	                               temperature 0.0)
//	planner                        policy disabled
//	evaluation                     no SLA
//
// A null value for an optional mapping (traffic, its source/load/stop, kv_transfer, parallelism,
// scheduler, kv_cache, capacity, timing, router, prefill_load_model, planner, evaluation, sla,
// speculation) means "omitted"; a null worker role means {}. Nullable scalars are
// backend_version, bandwidth_gb_per_second, timing.prefill_ms/decode_ms, the kv_router knobs,
// the SLA bounds and planner.prefill_min_workers/decode_min_workers; every other scalar must
// be given a value of its kind.
//
// planner: only `policy` is stored. The other planner keys of dynosim-spec.md §3.4 are accepted
// and checked (kind and range) only when policy is `enabled`, which is itself not supported yet;
// with policy `disabled` (or omitted) any other planner key is an error.
//
// On any problem Decode returns a nil Config and a Errors holding every problem found.
// If the config is valid but uses something the simulator cannot run yet, the Errors
// holds only Unsupported errors (errors.Is(err, errors.ErrUnsupported) is then true).
func Decode(data []byte, file string, sets []string) (*Config, error) {
	c, errs, unsupported := decode(data, file, sets)
	if len(errs) > 0 {
		return nil, errs
	}
	if len(unsupported) > 0 {
		return nil, unsupported
	}
	return c, nil
}

// decode runs steps 1 to 5 and returns the Config (nil when it could not be built), the
// problems of steps 1 to 4, and the not-supported-yet findings of step 5 (only computed when
// there are no other problems).
func decode(data []byte, file string, sets []string) (*Config, Errors, Errors) {
	root, errs := parseDocument(data, file)
	if len(errs) > 0 {
		return nil, errs, nil
	}
	if errs := applySets(root, sets, file); len(errs) > 0 {
		return nil, errs, nil
	}
	d := &decoder{file: file, present: map[string]bool{}}
	c := d.config(root)
	v := &validator{file: file, present: d.present}
	v.config(c)
	v.limits(c)

	all := d.errs
	seen := map[string]bool{}
	for _, e := range all {
		seen[e.Error()] = true
	}
	for _, e := range v.errs {
		if d.isBad(e.Path) || seen[e.Error()] {
			continue
		}
		seen[e.Error()] = true
		all = append(all, e)
	}
	if len(all) > 0 {
		return c, all, nil
	}
	return c, nil, append(c.Unsupported(), d.unsupported...)
}

// ---------------------------------------------------------------------------------------------
// Step 1: parsing.

// parseDocument parses data into the root mapping node of its single YAML document. An empty
// document (or one that is only null) becomes an empty mapping.
func parseDocument(data []byte, file string) (root *yaml.Node, errs Errors) {
	defer func() {
		if r := recover(); r != nil {
			root, errs = nil, Errors{{File: file, Msg: fmt.Sprintf("invalid YAML: %v", r)}}
		}
	}()
	fail := func(msg string) (*yaml.Node, Errors) {
		return nil, Errors{{File: file, Msg: msg}}
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil && err != io.EOF {
		return fail(yamlErrorMsg(err))
	}
	for {
		var extra yaml.Node
		err := dec.Decode(&extra)
		if err == io.EOF {
			break
		}
		if err != nil {
			return fail(yamlErrorMsg(err))
		}
		if len(extra.Content) > 0 && !isNull(extra.Content[0]) {
			return fail("more than one YAML document; a prediction config is a single document")
		}
	}
	var n *yaml.Node
	if doc.Kind == yaml.DocumentNode && len(doc.Content) > 0 {
		n = resolve(doc.Content[0])
	}
	if isNull(n) {
		return newMapping(), nil
	}
	if n.Kind != yaml.MappingNode {
		return fail("the top level must be a mapping (traffic, engine, router, planner, evaluation), got " +
			describe(n))
	}
	return n, nil
}

// yamlErrorMsg rewrites a yaml.v3 error ("yaml: line 3: ...") as "invalid YAML: line 3: ...".
func yamlErrorMsg(err error) string {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	return "invalid YAML: " + strings.ReplaceAll(msg, "\n", " ")
}

// newMapping returns an empty YAML mapping node.
func newMapping() *yaml.Node { return &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"} }

// resolve follows alias nodes to the node they name.
func resolve(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && n.Alias != nil && i < 64; i++ {
		n = n.Alias
	}
	return n
}

// isNull reports whether n is absent, empty or the YAML null.
func isNull(n *yaml.Node) bool {
	n = resolve(n)
	return n == nil || n.Kind == 0 || (n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null")
}

// describe renders a node for "got ..." in messages.
func describe(n *yaml.Node) string {
	n = resolve(n)
	switch {
	case n == nil || n.Kind == 0:
		return "nothing"
	case n.Kind == yaml.MappingNode:
		return "a mapping"
	case n.Kind == yaml.SequenceNode:
		return "a list"
	case n.Kind != yaml.ScalarNode:
		return "a YAML " + n.ShortTag()
	}
	v := n.Value
	if len(v) > 64 {
		v = v[:64] + "..."
	}
	switch tag := n.ShortTag(); tag {
	case "!!null":
		return "null"
	case "!!str":
		return strconv.Quote(v) + " (string)"
	case "!!int":
		return v + " (int)"
	case "!!float":
		return v + " (float)"
	case "!!bool":
		return v + " (bool)"
	default:
		return strconv.Quote(v) + " (" + tag + ")"
	}
}

// join appends key to a dotted path.
func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// ---------------------------------------------------------------------------------------------
// Step 2: --set overrides.

// applySets applies every --set argument to the root mapping, collecting the malformed ones.
func applySets(root *yaml.Node, sets []string, file string) Errors {
	var errs Errors
	for _, arg := range sets {
		if msg := applySet(root, arg); msg != "" {
			errs = append(errs, &Error{File: file, Msg: fmt.Sprintf("--set %q: %s", arg, msg)})
		}
	}
	return errs
}

// applySet applies one PATH=YAML override and returns "" or what is wrong with it.
func applySet(root *yaml.Node, arg string) string {
	path, rhs, ok := strings.Cut(arg, "=")
	if !ok {
		return "missing '='; use --set PATH=YAML_VALUE"
	}
	path = strings.TrimSpace(path)
	if path == "" {
		return "empty path; use --set PATH=YAML_VALUE"
	}
	segs := strings.Split(path, ".")
	for _, s := range segs {
		if s == "" {
			return fmt.Sprintf("empty segment in path %q", path)
		}
		if isIndex(s) {
			return fmt.Sprintf("sequence indexes are not supported (%s); replace the whole list", path)
		}
	}
	val, msg := parseSetValue(rhs)
	if msg != "" {
		return msg
	}
	cur := root
	for i, seg := range segs[:len(segs)-1] {
		here := strings.Join(segs[:i+1], ".")
		idx := findKey(cur, seg)
		if idx < 0 {
			m := newMapping()
			cur.Content = append(cur.Content, strKey(seg), m)
			cur = m
			continue
		}
		child := cur.Content[idx]
		r := resolve(child)
		switch {
		case isNull(r):
			m := newMapping()
			cur.Content[idx] = m
			cur = m
		case r.Kind == yaml.MappingNode:
			if child.Kind == yaml.AliasNode {
				// Do not edit the anchored original through an alias.
				r = deepCopy(r)
				cur.Content[idx] = r
			}
			cur = r
		case r.Kind == yaml.SequenceNode:
			return fmt.Sprintf("%s is a list; sequence indexes are not supported, replace the whole list", here)
		default:
			return fmt.Sprintf("%s is %s, not a mapping", here, describe(r))
		}
	}
	last := segs[len(segs)-1]
	if idx := findKey(cur, last); idx >= 0 {
		cur.Content[idx] = val
	} else {
		cur.Content = append(cur.Content, strKey(last), val)
	}
	return ""
}

// parseSetValue parses the right-hand side of a --set as YAML; an empty value is null.
func parseSetValue(rhs string) (n *yaml.Node, msg string) {
	defer func() {
		if r := recover(); r != nil {
			n, msg = nil, fmt.Sprintf("invalid YAML value: %v", r)
		}
	}()
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(rhs), &doc); err != nil {
		return nil, "invalid YAML value: " + strings.TrimPrefix(yamlErrorMsg(err), "invalid YAML: ")
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}, ""
	}
	return doc.Content[0], ""
}

// isIndex reports whether a path segment is a sequence index (all digits).
func isIndex(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

// findKey returns the index in m.Content of the value of the first key named key, or -1.
func findKey(m *yaml.Node, key string) int {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if k := resolve(m.Content[i]); k != nil && k.Kind == yaml.ScalarNode && k.Value == key {
			return i + 1
		}
	}
	return -1
}

// strKey returns a string scalar node for a mapping key.
func strKey(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s} }

// deepCopy copies n and its children; aliases inside stay aliases (they are copied again if a
// later --set descends through them).
func deepCopy(n *yaml.Node) *yaml.Node {
	c := *n
	c.Anchor = ""
	if n.Kind != yaml.AliasNode && len(n.Content) > 0 {
		c.Content = make([]*yaml.Node, len(n.Content))
		for i, ch := range n.Content {
			c.Content[i] = deepCopy(ch)
		}
	}
	return &c
}

// ---------------------------------------------------------------------------------------------
// Step 3: walking the node tree.

// decoder walks the node tree along the schema and builds a Config.
type decoder struct {
	file string
	errs Errors
	// bad holds paths whose value was rejected by the walk; validation errors at or below them
	// are dropped, since they would only repeat the cause.
	bad []string
	// present holds the paths of the fields the YAML spelled out with a usable value.
	present map[string]bool
	// unsupported holds "not supported yet" findings that have no Config field to carry them.
	unsupported Errors
}

func (d *decoder) errorf(path, format string, args ...any) {
	d.errs = append(d.errs, &Error{File: d.file, Path: path, Msg: fmt.Sprintf(format, args...)})
}

// badf reports an error and marks path as bad.
func (d *decoder) badf(path, format string, args ...any) {
	d.errorf(path, format, args...)
	d.bad = append(d.bad, path)
}

func (d *decoder) isBad(path string) bool {
	for _, b := range d.bad {
		if path == b || strings.HasPrefix(path, b+".") || strings.HasPrefix(path, b+"[") {
			return true
		}
	}
	return false
}

// isDomain reports whether a mapping node is a search-domain object.
func isDomain(n *yaml.Node) bool {
	return n != nil && n.Kind == yaml.MappingNode && (findKey(n, "choices") >= 0 || findKey(n, "range") >= 0)
}

// mapping reads the mapping n at path. known lists the keys the caller handles; rejected maps
// keys to a specific error message. It reports duplicate keys, merge keys, domain objects and
// rejected keys, and returns the known entries plus the unknown keys (for the caller to report
// with unknownFields, once it knows which keys are valid). ok is false when n is not a mapping.
func (d *decoder) mapping(n *yaml.Node, path string, known []string, rejected map[string]string) (
	m map[string]*yaml.Node, unknown []string, ok bool) {
	n = resolve(n)
	if n == nil || n.Kind != yaml.MappingNode {
		d.badf(path, "must be a mapping, got %s", describe(n))
		return nil, nil, false
	}
	m = map[string]*yaml.Node{}
	seen := map[string]int{}
	domain := false
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := resolve(n.Content[i]), n.Content[i+1]
		if k == nil || k.Kind != yaml.ScalarNode {
			d.errorf(path, "mapping keys must be strings, got %s", describe(k))
			continue
		}
		key := k.Value
		kp := join(path, key)
		if k.ShortTag() == "!!merge" {
			d.errorf(kp, "YAML merge keys are not supported; write the fields out")
			continue
		}
		if line, dup := seen[key]; dup {
			if line > 0 {
				d.errorf(kp, "duplicate key (first defined on line %d)", line)
			} else {
				d.errorf(kp, "duplicate key")
			}
			continue
		}
		seen[key] = k.Line
		switch {
		case slices.Contains(known, key):
			m[key] = v
		case rejected[key] != "":
			d.errorf(kp, "%s", rejected[key])
		case key == "choices" || key == "range":
			if !domain {
				domain = true
				d.badf(path, msgDomain)
			}
		case key == "preset":
			d.errorf(kp, msgPreset)
		default:
			unknown = append(unknown, key)
		}
	}
	return m, unknown, true
}

// unknownFields reports each unknown key of the mapping at path, listing the valid ones.
func (d *decoder) unknownFields(path string, unknown, valid []string) {
	for _, k := range unknown {
		d.errorf(join(path, k), "unknown field; valid fields: %s", strings.Join(valid, ", "))
	}
}

// fields is mapping plus reporting unknown keys against known.
func (d *decoder) fields(n *yaml.Node, path string, known []string, rejected map[string]string) (
	map[string]*yaml.Node, bool) {
	m, unknown, ok := d.mapping(n, path, known, rejected)
	d.unknownFields(path, unknown, known)
	return m, ok
}

// scalar returns the resolved scalar node n, or reports why it is not a concrete scalar.
func (d *decoder) scalar(n *yaml.Node, path, want string) (*yaml.Node, bool) {
	n = resolve(n)
	if isDomain(n) {
		d.badf(path, msgDomain)
		return nil, false
	}
	if n == nil || n.Kind != yaml.ScalarNode {
		d.badf(path, "must be %s, got %s", want, describe(n))
		return nil, false
	}
	if n.ShortTag() == "!!str" && n.Value == "auto" {
		d.badf(path, msgAuto)
		return nil, false
	}
	return n, true
}

// intScalar decodes a YAML int node into v (an *int64 or *uint64), reporting a wrong kind, or a
// value outside v's range as "must be an int between lo and hi".
func (d *decoder) intScalar(n *yaml.Node, path string, v any, lo, hi string) bool {
	s, ok := d.scalar(n, path, "an int")
	if !ok {
		return false
	}
	if s.ShortTag() != "!!int" {
		d.badf(path, "must be an int, got %s", describe(s))
		return false
	}
	if err := s.Decode(v); err != nil {
		d.badf(path, "must be an int between %s and %s, got %s", lo, hi, s.Value)
		return false
	}
	d.present[path] = true
	return true
}

// int64v decodes a YAML int.
func (d *decoder) int64v(n *yaml.Node, path string) (int64, bool) {
	var v int64
	ok := d.intScalar(n, path, &v, strconv.FormatInt(math.MinInt64, 10), strconv.FormatInt(math.MaxInt64, 10))
	return v, ok
}

// intv decodes a YAML int that fits in an int.
func (d *decoder) intv(n *yaml.Node, path string) (int, bool) {
	v, ok := d.int64v(n, path)
	if ok && int64(int(v)) != v {
		delete(d.present, path)
		d.badf(path, "must be an int between %d and %d, got %d", math.MinInt, math.MaxInt, v)
		return 0, false
	}
	return int(v), ok
}

// uintv decodes a YAML int >= 0 that fits in a uint64.
func (d *decoder) uintv(n *yaml.Node, path string) (uint64, bool) {
	var v uint64
	ok := d.intScalar(n, path, &v, "0", strconv.FormatUint(math.MaxUint64, 10))
	return v, ok
}

// floatv decodes a finite YAML float or int.
func (d *decoder) floatv(n *yaml.Node, path string) (float64, bool) {
	s, ok := d.scalar(n, path, "a number")
	if !ok {
		return 0, false
	}
	if t := s.ShortTag(); t != "!!int" && t != "!!float" {
		d.badf(path, "must be a number, got %s", describe(s))
		return 0, false
	}
	var v float64
	if err := s.Decode(&v); err != nil {
		d.badf(path, "must be a number, got %s", describe(s))
		return 0, false
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		d.badf(path, "must be a finite number, got %s", describe(s))
		return 0, false
	}
	d.present[path] = true
	return v, true
}

// boolv decodes a YAML bool (true or false; not yes/no, not "true").
func (d *decoder) boolv(n *yaml.Node, path string) (bool, bool) {
	s, ok := d.scalar(n, path, "a bool (true or false)")
	if !ok {
		return false, false
	}
	var v bool
	if s.ShortTag() != "!!bool" || s.Decode(&v) != nil {
		d.badf(path, "must be a bool (true or false), got %s", describe(s))
		return false, false
	}
	d.present[path] = true
	return v, true
}

// strv decodes a YAML string.
func (d *decoder) strv(n *yaml.Node, path string) (string, bool) {
	s, ok := d.scalar(n, path, "a string")
	if !ok {
		return "", false
	}
	if s.ShortTag() != "!!str" {
		d.badf(path, "must be a string, got %s; quote it if it is meant as text", describe(s))
		return "", false
	}
	d.present[path] = true
	return s.Value, true
}

// intOrWord decodes an int or the string word (e.g. "auto", "max"); isWord reports the latter.
// Only an int marks the path present.
func (d *decoder) intOrWord(n *yaml.Node, path, word string) (v int64, isWord, ok bool) {
	r := resolve(n)
	if r != nil && r.Kind == yaml.ScalarNode && r.ShortTag() == "!!str" && r.Value == word {
		return 0, true, true
	}
	if isDomain(r) {
		d.badf(path, msgDomain)
		return 0, false, false
	}
	if r == nil || r.Kind != yaml.ScalarNode || r.ShortTag() != "!!int" {
		d.badf(path, "must be an int > 0 or %q, got %s", word, describe(r))
		return 0, false, false
	}
	v, ok = d.int64v(r, path)
	return v, false, ok
}

// The set* helpers decode m[key], if present, into *dst; a bad value leaves *dst unchanged.

func (d *decoder) setInt(m map[string]*yaml.Node, path, key string, dst *int) {
	if n, has := m[key]; has {
		if v, ok := d.intv(n, join(path, key)); ok {
			*dst = v
		}
	}
}

func (d *decoder) setFloat(m map[string]*yaml.Node, path, key string, dst *float64) {
	if n, has := m[key]; has {
		if v, ok := d.floatv(n, join(path, key)); ok {
			*dst = v
		}
	}
}

func (d *decoder) setBool(m map[string]*yaml.Node, path, key string, dst *bool) {
	if n, has := m[key]; has {
		if v, ok := d.boolv(n, join(path, key)); ok {
			*dst = v
		}
	}
}

func (d *decoder) setStr(m map[string]*yaml.Node, path, key string, dst *string) {
	if n, has := m[key]; has {
		if v, ok := d.strv(n, join(path, key)); ok {
			*dst = v
		}
	}
}

// setOptFloat decodes a nullable float: null leaves *dst nil.
func (d *decoder) setOptFloat(m map[string]*yaml.Node, path, key string, dst **float64) {
	if n, has := m[key]; has && !isNull(n) {
		if v, ok := d.floatv(n, join(path, key)); ok {
			*dst = &v
		}
	}
}

// unionType reads the `type` of a tagged union: def when omitted, "" when not a string (the
// path is then marked bad), otherwise the string as written (checked by validation).
func (d *decoder) unionType(m map[string]*yaml.Node, path, def string) string {
	n, has := m["type"]
	if !has {
		return def
	}
	t, ok := d.strv(n, join(path, "type"))
	if !ok {
		d.bad = append(d.bad, path)
		return ""
	}
	return t
}

// validFor returns the accepted keys of a union type, or all keys when the type is unknown.
func validFor(variants map[string][]string, typ string, all []string) []string {
	if v, ok := variants[typ]; ok {
		return v
	}
	return all
}

// Root ----------------------------------------------------------------------------------------

var (
	rootKeys     = []string{"traffic", "engine", "router", "planner", "evaluation"}
	rootRejected = map[string]string{
		"execution": "host resource limits (execution) are not supported by servesweep predict; " +
			"remove the section",
		"optimization": "optimization belongs to servesweep sweep; predict evaluates one concrete config",
		"optimizer":    "optimizer belongs to servesweep sweep; predict evaluates one concrete config",
	}
)

func (d *decoder) config(n *yaml.Node) *Config {
	c := &Config{
		File:    d.file,
		Traffic: defaultTraffic(),
		Router:  Router{Policy: PolicyRoundRobin, PrefillLoadModel: PrefillLoadModel{Type: loadModelNone}},
		Planner: Planner{Policy: plannerDisabled},
	}
	m, ok := d.fields(n, "", rootKeys, rootRejected)
	if !ok {
		return c
	}
	if v, has := m["traffic"]; has && !isNull(v) {
		c.Traffic = d.traffic(v, "traffic")
	}
	if v, has := m["engine"]; has && !isNull(v) {
		c.Engine = d.engine(v, "engine")
	} else {
		d.badf("engine", "required: the simulated deployment (mode, model, hardware, backend, workers)")
	}
	_, c.HasRouter = m["router"]
	_, c.HasPlanner = m["planner"]
	if v, has := m["router"]; has && !isNull(v) {
		c.Router = d.router(v, "router")
	}
	if v, has := m["planner"]; has && !isNull(v) {
		c.Planner = d.planner(v, "planner")
	}
	if v, has := m["evaluation"]; has && !isNull(v) {
		c.Evaluation = d.evaluation(v, "evaluation")
	}
	return c
}

// Traffic -------------------------------------------------------------------------------------

func defaultTraffic() Traffic {
	return Traffic{
		Source: Source{Type: SourceSynthetic, InputTokens: defaultInputTokens, OutputTokens: defaultOutputTokens},
		Load:   Load{Type: LoadConcurrency, Concurrency: defaultConcurrency},
		Stop:   Stop{Requests: defaultStopRequests},
	}
}

func (d *decoder) traffic(n *yaml.Node, p string) Traffic {
	t := defaultTraffic()
	t.Stop = Stop{}
	m, ok := d.fields(n, p, []string{"source", "load", "stop"}, nil)
	if !ok {
		return defaultTraffic()
	}
	if v, has := m["source"]; has && !isNull(v) {
		t.Source = d.source(v, join(p, "source"))
	}
	if v, has := m["load"]; has && !isNull(v) {
		t.Load = d.load(v, join(p, "load"))
	}
	if v, has := m["stop"]; has && !isNull(v) {
		t.Stop = d.stop(v, join(p, "stop"))
	}
	return t
}

var (
	sourceAll = []string{"type", "input_tokens", "output_tokens", "new_input_tokens_per_turn",
		"output_tokens_per_turn", "session", "paths", "format", "block_size"}
	sourceVariants = map[string][]string{
		SourceSynthetic:        {"type", "input_tokens", "output_tokens"},
		SourceSyntheticSession: {"type", "new_input_tokens_per_turn", "output_tokens_per_turn", "session"},
		SourceTrace:            {"type", "paths", "format", "block_size"},
	}
	traceFormats = []string{"mooncake", "mooncake-delta", "agentic_mooncake", "applied_compute_agentic",
		"dynamo", "weka"}
)

func (d *decoder) source(n *yaml.Node, p string) Source {
	m, unknown, ok := d.mapping(n, p, sourceAll, nil)
	if !ok {
		return Source{}
	}
	s := Source{Type: d.unionType(m, p, SourceSynthetic)}
	d.unknownFields(p, unknown, validFor(sourceVariants, s.Type, sourceAll))
	switch s.Type {
	case SourceSynthetic:
		s.InputTokens, s.OutputTokens = defaultInputTokens, defaultOutputTokens
	case SourceSyntheticSession:
		s.NewInputTokensPerTurn, s.OutputTokensPerTurn = defaultInputTokens, defaultOutputTokens
	case SourceTrace:
		s.Format = defaultTraceFormat
	}
	d.setInt(m, p, "input_tokens", &s.InputTokens)
	d.setInt(m, p, "output_tokens", &s.OutputTokens)
	d.setInt(m, p, "new_input_tokens_per_turn", &s.NewInputTokensPerTurn)
	d.setInt(m, p, "output_tokens_per_turn", &s.OutputTokensPerTurn)
	if v, has := m["session"]; has && !isNull(v) {
		s.Session = d.session(v, join(p, "session"))
	}
	if v, has := m["paths"]; has {
		s.Paths = d.strList(v, join(p, "paths"))
	}
	d.setStr(m, p, "format", &s.Format)
	if s.Type == SourceTrace && s.Format != "dynamo" && s.Format != "weka" {
		s.BlockSize = defaultTraceBlockSize
	}
	d.setInt(m, p, "block_size", &s.BlockSize)
	return s
}

// strList decodes a list of strings; the result is non-nil when the value is a list.
func (d *decoder) strList(n *yaml.Node, p string) []string {
	r := resolve(n)
	if isDomain(r) {
		d.badf(p, msgDomain)
		return nil
	}
	if r == nil || r.Kind != yaml.SequenceNode {
		d.badf(p, "must be a list of strings, got %s", describe(r))
		return nil
	}
	out := make([]string, 0, len(r.Content))
	okAll := true
	for i, e := range r.Content {
		ep := fmt.Sprintf("%s[%d]", p, i)
		s, ok := d.strv(e, ep)
		okAll = okAll && ok
		out = append(out, s)
	}
	if okAll {
		d.present[p] = true
	}
	return out
}

func (d *decoder) session(n *yaml.Node, p string) *SessionShape {
	sh := &SessionShape{Turns: defaultSessionTurns}
	m, ok := d.fields(n, p, []string{"turns", "shared_prefix_ratio", "prefix_groups", "inter_turn_delay_ms"}, nil)
	if !ok {
		return sh
	}
	d.setInt(m, p, "turns", &sh.Turns)
	d.setFloat(m, p, "shared_prefix_ratio", &sh.SharedPrefixRatio)
	d.setInt(m, p, "prefix_groups", &sh.PrefixGroups)
	d.setFloat(m, p, "inter_turn_delay_ms", &sh.InterTurnDelayMs)
	return sh
}

var (
	loadAll      = []string{"type", "concurrency", "requests_per_second", "sessions_per_second", "seed", "speedup"}
	loadVariants = map[string][]string{
		LoadConcurrency:     {"type", "concurrency"},
		LoadConstantRate:    {"type", "requests_per_second", "sessions_per_second"},
		LoadPoisson:         {"type", "requests_per_second", "sessions_per_second", "seed"},
		LoadTraceTimestamps: {"type", "speedup"},
	}
)

func (d *decoder) load(n *yaml.Node, p string) Load {
	m, unknown, ok := d.mapping(n, p, loadAll, nil)
	if !ok {
		return Load{}
	}
	l := Load{Type: d.unionType(m, p, LoadConcurrency)}
	d.unknownFields(p, unknown, validFor(loadVariants, l.Type, loadAll))
	switch l.Type {
	case LoadConcurrency:
		l.Concurrency = defaultConcurrency
	case LoadPoisson:
		l.Seed = defaultPoissonSeed
	case LoadTraceTimestamps:
		l.Speedup = defaultSpeedup
	}
	d.setInt(m, p, "concurrency", &l.Concurrency)
	d.setFloat(m, p, "requests_per_second", &l.RequestsPerSecond)
	d.setFloat(m, p, "sessions_per_second", &l.SessionsPerSecond)
	if v, has := m["seed"]; has {
		if s, ok := d.uintv(v, join(p, "seed")); ok {
			l.Seed = s
		}
	}
	d.setFloat(m, p, "speedup", &l.Speedup)
	return l
}

var stopKeys = []string{"requests", "requests_per_load_unit", "sessions", "sessions_per_load_unit",
	"max_virtual_time_seconds"}

func (d *decoder) stop(n *yaml.Node, p string) Stop {
	var s Stop
	m, ok := d.fields(n, p, stopKeys, nil)
	if !ok {
		return s
	}
	d.setInt(m, p, "requests", &s.Requests)
	d.setFloat(m, p, "requests_per_load_unit", &s.RequestsPerLoadUnit)
	d.setInt(m, p, "sessions", &s.Sessions)
	d.setFloat(m, p, "sessions_per_load_unit", &s.SessionsPerLoadUnit)
	d.setFloat(m, p, "max_virtual_time_seconds", &s.MaxVirtualTimeSeconds)
	return s
}

// Engine --------------------------------------------------------------------------------------

var (
	engineKeys = []string{"mode", "model", "hardware", "backend", "backend_version", "context_length",
		"speculation", "enable_chunked_prefill", "kv_transfer", "precision", "workers"}
	roleKeys     = []string{"hardware", "startup_seconds", "parallelism", "scheduler", "kv_cache", "timing"}
	roleRejected = map[string]string{
		"model":           "per-role overrides are not allowed; set engine.model",
		"backend":         "per-role overrides are not allowed; set engine.backend",
		"backend_version": "per-role overrides are not allowed; set engine.backend_version",
		"context_length":  "per-role overrides are not allowed; set engine.context_length",
	}
	parallelismKeys = []string{"replicas", "tensor", "pipeline", "attention_data", "moe_tensor", "moe_expert"}
	kvCacheKeys     = []string{"block_size", "prefix_caching", "bytes_per_token", "capacity"}
	capacityAll     = []string{"type", "blocks", "memory_fraction"}
	capacityVariant = map[string][]string{
		CapacityFixed:   {"type", "blocks"},
		CapacityDefault: {"type", "memory_fraction"},
	}
	timingAll     = []string{"type", "prefill_ms", "decode_ms"}
	timingVariant = map[string][]string{
		TimingFixed:      {"type", "prefill_ms", "decode_ms"},
		TimingPolynomial: {"type"},
		TimingDefault:    {"type"},
	}
)

func (d *decoder) engine(n *yaml.Node, p string) Engine {
	e := Engine{Mode: ModeAggregated, Backend: backendVLLM}
	m, ok := d.fields(n, p, engineKeys, nil)
	if !ok {
		return e
	}
	d.setStr(m, p, "mode", (*string)(&e.Mode))
	d.setStr(m, p, "model", &e.Model)
	d.setStr(m, p, "hardware", &e.Hardware)
	d.setStr(m, p, "backend", &e.Backend)
	if v, has := m["backend_version"]; has && !isNull(v) {
		d.setStr(m, p, "backend_version", &e.BackendVersion)
	}
	if v, has := m["context_length"]; has {
		if x, _, ok := d.intOrWord(v, join(p, "context_length"), "max"); ok {
			if int64(int(x)) != x {
				d.badf(join(p, "context_length"), "must be an int > 0 or \"max\", got %d", x)
			} else {
				e.ContextLength = int(x)
			}
		}
	}
	if v, has := m["speculation"]; has && !isNull(v) {
		d.speculation(v, join(p, "speculation"))
	}
	if v, has := m["enable_chunked_prefill"]; has {
		if b, ok := d.boolv(v, join(p, "enable_chunked_prefill")); ok {
			e.EnableChunkedPrefill = &b
		}
	}
	if v, has := m["kv_transfer"]; has && !isNull(v) {
		e.KVTransfer = d.kvTransfer(v, join(p, "kv_transfer"))
	}
	if v, has := m["precision"]; has && !isNull(v) {
		pp := join(p, "precision")
		if pm, ok := d.fields(v, pp, []string{"weights", "kv_cache"}, nil); ok {
			for _, f := range []struct {
				key string
				dst *string
			}{{"weights", &e.Precision.Weights}, {"kv_cache", &e.Precision.KVCache}} {
				n, has := pm[f.key]
				if !has {
					continue
				}
				// "auto" is a value here (the format the model implies), not a sweep marker.
				if r := resolve(n); r != nil && r.Kind == yaml.ScalarNode && r.ShortTag() == "!!str" && r.Value == PrecisionAuto {
					continue
				}
				d.setStr(pm, pp, f.key, f.dst)
			}
		}
	}
	if v, has := m["workers"]; has && !isNull(v) {
		e.Workers = d.workers(v, join(p, "workers"), e.Backend)
	}
	return e
}

// speculation checks engine.speculation. There is no Config field for it, so a valid block is
// recorded as not supported yet (dynosim-spec.md §3.2: vLLM op-level timing only).
func (d *decoder) speculation(n *yaml.Node, p string) {
	m, ok := d.fields(n, p, []string{"kind", "num_speculative_tokens", "acceptance_rates", "seed"}, nil)
	if !ok {
		return
	}
	before := len(d.errs)
	kind := ""
	if v, has := m["kind"]; has {
		if k, ok := d.strv(v, join(p, "kind")); ok {
			kind = k
			if k != "ngram" {
				d.errorf(join(p, "kind"), "must be one of ngram, got %q", k)
			}
		}
	} else {
		d.errorf(join(p, "kind"), "required: ngram")
	}
	num := 0
	if v, has := m["num_speculative_tokens"]; has {
		if x, ok := d.intv(v, join(p, "num_speculative_tokens")); ok {
			num = x
			if x < 1 || x > 5 {
				d.errorf(join(p, "num_speculative_tokens"), "must be in [1, 5], got %d", x)
			}
		}
	} else {
		d.errorf(join(p, "num_speculative_tokens"), "required: an int in [1, 5]")
	}
	rp := join(p, "acceptance_rates")
	if v, has := m["acceptance_rates"]; has {
		r := resolve(v)
		if r == nil || r.Kind != yaml.SequenceNode {
			d.badf(rp, "must be a list of numbers in [0, 1], got %s", describe(r))
		} else {
			for i, e := range r.Content {
				ep := fmt.Sprintf("%s[%d]", rp, i)
				if x, ok := d.floatv(e, ep); ok && (x < 0 || x > 1) {
					d.errorf(ep, "must be in [0, 1], got %s", fmtFloat(x))
				}
			}
			if num > 0 && len(r.Content) != num {
				d.errorf(rp, "must have one rate per draft token (num_speculative_tokens = %d), got %d",
					num, len(r.Content))
			}
		}
	} else {
		d.errorf(rp, "required: one acceptance rate in [0, 1] per draft token")
	}
	if v, has := m["seed"]; has {
		d.uintv(v, join(p, "seed"))
	}
	if len(d.errs) == before && kind != "" {
		d.unsupported = append(d.unsupported, &Error{File: d.file, Path: p, Unsupported: true,
			Msg: kind + " speculation is not supported yet; remove engine.speculation"})
	}
}

func (d *decoder) kvTransfer(n *yaml.Node, p string) *KVTransfer {
	kt := &KVTransfer{TimingMode: defaultTimingMode}
	m, ok := d.fields(n, p, []string{"bytes_per_token", "bandwidth_gb_per_second", "timing_mode"}, nil)
	if !ok {
		return kt
	}
	if v, has := m["bytes_per_token"]; has {
		if x, _, ok := d.intOrWord(v, join(p, "bytes_per_token"), "auto"); ok {
			kt.BytesPerToken = x
		}
	}
	d.setOptFloat(m, p, "bandwidth_gb_per_second", &kt.BandwidthGBps)
	d.setStr(m, p, "timing_mode", &kt.TimingMode)
	return kt
}

func (d *decoder) workers(n *yaml.Node, p, backend string) Workers {
	var w Workers
	m, ok := d.fields(n, p, []string{string(RoleAggregated), string(RolePrefill), string(RoleDecode)},
		map[string]string{"encoder": "encoder workers (analytical EPD) are not supported by servesweep"})
	if !ok {
		return w
	}
	for _, r := range []struct {
		role Role
		dst  **WorkerRole
	}{{RoleAggregated, &w.Aggregated}, {RolePrefill, &w.Prefill}, {RoleDecode, &w.Decode}} {
		if v, has := m[string(r.role)]; has {
			*r.dst = d.role(v, join(p, string(r.role)), r.role, backend)
		}
	}
	return w
}

// kvDefaults returns the backend's default KV block size and memory fraction.
func kvDefaults(backend string) (blockSize int, memoryFraction float64) {
	switch backend {
	case backendSGLang:
		return 1, sglangMemoryFraction
	case backendTRTLLM:
		return 32, defaultMemoryFraction
	default:
		return 64, defaultMemoryFraction
	}
}

func (d *decoder) role(n *yaml.Node, p string, name Role, backend string) *WorkerRole {
	bs, mf := kvDefaults(backend)
	r := &WorkerRole{
		Parallelism: Parallelism{Replicas: 1, Tensor: 1, Pipeline: 1, AttentionData: 1, MoeTensor: 1, MoeExpert: 1},
		Scheduler:   Scheduler{MaxBatchedTokens: defaultMaxBatchedTokens, MaxSequences: defaultMaxSequences},
		KVCache: KVCache{BlockSize: bs, PrefixCaching: true,
			Capacity: KVCapacity{Type: CapacityDefault, MemoryFraction: mf}},
		Timing: Timing{Type: TimingDefault},
	}
	if name == RolePrefill {
		r.Scheduler.MaxSequences = defaultPrefillMaxSeqs
	}
	if isNull(n) {
		return r
	}
	m, ok := d.fields(n, p, roleKeys, roleRejected)
	if !ok {
		return r
	}
	d.setStr(m, p, "hardware", &r.Hardware)
	d.setFloat(m, p, "startup_seconds", &r.StartupSeconds)
	if v, has := m["parallelism"]; has && !isNull(v) {
		pp := join(p, "parallelism")
		if pm, ok := d.fields(v, pp, parallelismKeys, nil); ok {
			par := &r.Parallelism
			for i, dst := range []*int{&par.Replicas, &par.Tensor, &par.Pipeline, &par.AttentionData,
				&par.MoeTensor, &par.MoeExpert} {
				d.setInt(pm, pp, parallelismKeys[i], dst)
			}
		}
	}
	if v, has := m["scheduler"]; has && !isNull(v) {
		sp := join(p, "scheduler")
		if sm, ok := d.fields(v, sp, []string{"max_batched_tokens", "max_sequences"}, nil); ok {
			d.setInt(sm, sp, "max_batched_tokens", &r.Scheduler.MaxBatchedTokens)
			d.setInt(sm, sp, "max_sequences", &r.Scheduler.MaxSequences)
		}
	}
	if v, has := m["kv_cache"]; has && !isNull(v) {
		d.kvCache(v, join(p, "kv_cache"), mf, &r.KVCache)
	}
	if v, has := m["timing"]; has && !isNull(v) {
		r.Timing = d.timing(v, join(p, "timing"))
	}
	return r
}

func (d *decoder) kvCache(n *yaml.Node, p string, mf float64, kv *KVCache) {
	m, ok := d.fields(n, p, kvCacheKeys, nil)
	if !ok {
		return
	}
	d.setInt(m, p, "block_size", &kv.BlockSize)
	d.setBool(m, p, "prefix_caching", &kv.PrefixCaching)
	if v, has := m["bytes_per_token"]; has {
		if x, _, ok := d.intOrWord(v, join(p, "bytes_per_token"), "auto"); ok {
			kv.BytesPerToken = x
		}
	}
	v, has := m["capacity"]
	if !has || isNull(v) {
		return
	}
	cp := join(p, "capacity")
	cm, unknown, ok := d.mapping(v, cp, capacityAll, nil)
	if !ok {
		return
	}
	c := KVCapacity{Type: d.unionType(cm, cp, CapacityDefault)}
	d.unknownFields(cp, unknown, validFor(capacityVariant, c.Type, capacityAll))
	if c.Type == CapacityDefault {
		c.MemoryFraction = mf
	}
	d.setInt(cm, cp, "blocks", &c.Blocks)
	d.setFloat(cm, cp, "memory_fraction", &c.MemoryFraction)
	kv.Capacity = c
}

func (d *decoder) timing(n *yaml.Node, p string) Timing {
	m, unknown, ok := d.mapping(n, p, timingAll, nil)
	if !ok {
		return Timing{}
	}
	t := Timing{Type: d.unionType(m, p, TimingDefault)}
	if t.Type == "roofline" {
		t.Type = TimingDefault
	}
	d.unknownFields(p, unknown, validFor(timingVariant, t.Type, timingAll))
	d.setOptFloat(m, p, "prefill_ms", &t.PrefillMs)
	d.setOptFloat(m, p, "decode_ms", &t.DecodeMs)
	return t
}

// Router, planner, evaluation -----------------------------------------------------------------

var routerKeys = []string{"policy", "prefill_load_model", "overlap_score_credit", "prefill_load_scale", "temperature"}

func (d *decoder) router(n *yaml.Node, p string) Router {
	r := Router{Policy: PolicyRoundRobin, PrefillLoadModel: PrefillLoadModel{Type: loadModelNone}}
	m, ok := d.fields(n, p, routerKeys, nil)
	if !ok {
		return r
	}
	d.setStr(m, p, "policy", (*string)(&r.Policy))
	if v, has := m["prefill_load_model"]; has && !isNull(v) {
		pp := join(p, "prefill_load_model")
		if pm, ok := d.fields(v, pp, []string{"type"}, nil); ok {
			d.setStr(pm, pp, "type", &r.PrefillLoadModel.Type)
		}
	}
	d.setOptFloat(m, p, "overlap_score_credit", &r.OverlapScoreCredit)
	d.setOptFloat(m, p, "prefill_load_scale", &r.PrefillLoadScale)
	d.setOptFloat(m, p, "temperature", &r.Temperature)
	return r
}

// plannerKey is one enabled-planner key of dynosim-spec.md §3.4 with its check. These keys have
// no Config field; they are checked so that a wrong value is reported, then dropped (policy
// enabled is itself not supported yet).
type plannerKey struct {
	name  string
	check func(d *decoder, n *yaml.Node, path string)
}

func plannerEnum(values ...string) func(*decoder, *yaml.Node, string) {
	return func(d *decoder, n *yaml.Node, path string) {
		if s, ok := d.strv(n, path); ok && !slices.Contains(values, s) {
			d.errorf(path, "must be one of %s, got %q", strings.Join(values, ", "), s)
		}
	}
}

func plannerBool(d *decoder, n *yaml.Node, path string) { d.boolv(n, path) }

// plannerInt checks an int >= lo; allowMinus1 also admits -1 ("unlimited"/"unset").
func plannerInt(lo int, allowMinus1, nullable bool) func(*decoder, *yaml.Node, string) {
	return func(d *decoder, n *yaml.Node, path string) {
		if nullable && isNull(n) {
			return
		}
		x, ok := d.intv(n, path)
		switch {
		case !ok, x >= lo, allowMinus1 && x == -1:
		case allowMinus1:
			d.errorf(path, "must be >= %d or -1, got %d", lo, x)
		default:
			d.errorf(path, "must be >= %d, got %d", lo, x)
		}
	}
}

func plannerPosFloat(d *decoder, n *yaml.Node, path string) {
	if x, ok := d.floatv(n, path); ok && x <= 0 {
		d.errorf(path, "must be > 0, got %s", fmtFloat(x))
	}
}

func plannerNonNegFloat(d *decoder, n *yaml.Node, path string) {
	if x, ok := d.floatv(n, path); ok && x < 0 {
		d.errorf(path, "must be >= 0, got %s", fmtFloat(x))
	}
}

var plannerKeys = []plannerKey{
	{"target", plannerEnum("throughput", "latency", "sla", "load")},
	{"enable_throughput_scaling", plannerBool},
	{"enable_load_scaling", plannerBool},
	{"throughput_adjustment_interval_seconds", plannerPosFloat},
	{"load_adjustment_interval_seconds", plannerPosFloat},
	{"max_num_fpm_samples", plannerInt(1, false, false)},
	{"fpm_sample_bucket_size", func(d *decoder, n *yaml.Node, path string) {
		x, ok := d.intv(n, path)
		if !ok {
			return
		}
		r := 0
		if x > 0 && x < 1<<40 {
			r = int(math.Sqrt(float64(x)))
			for r*r > x {
				r--
			}
			for (r+1)*(r+1) <= x {
				r++
			}
		}
		if x <= 0 || r*r != x {
			d.errorf(path, "must be a perfect square > 0, got %d", x)
		}
	}},
	{"load_scaling_down_sensitivity", func(d *decoder, n *yaml.Node, path string) {
		if x, ok := d.floatv(n, path); ok && (x < 0 || x > 100) {
			d.errorf(path, "must be in [0, 100], got %s", fmtFloat(x))
		}
	}},
	{"load_min_observations", plannerInt(1, false, false)},
	{"load_predictor", plannerEnum("constant", "arima", "prophet", "kalman")},
	{"load_predictor_log1p", plannerBool},
	{"prophet_window_size", plannerInt(1, false, false)},
	{"kalman_q_level", plannerNonNegFloat},
	{"kalman_q_trend", plannerNonNegFloat},
	{"kalman_r", plannerNonNegFloat},
	{"kalman_min_points", plannerInt(1, false, false)},
	{"max_num_gpus", plannerInt(1, true, false)},
	{"min_num_gpus", plannerInt(1, true, false)},
	{"min_workers", plannerInt(0, false, false)},
	{"prefill_min_workers", plannerInt(1, false, true)},
	{"decode_min_workers", plannerInt(1, false, true)},
}

func (d *decoder) planner(n *yaml.Node, p string) Planner {
	pl := Planner{Policy: plannerDisabled}
	known := []string{"policy"}
	for _, k := range plannerKeys {
		known = append(known, k.name)
	}
	m, ok := d.fields(n, p, known, nil)
	if !ok {
		return pl
	}
	d.setStr(m, p, "policy", &pl.Policy)
	for _, k := range plannerKeys {
		v, has := m[k.name]
		if !has {
			continue
		}
		kp := join(p, k.name)
		if pl.Policy != plannerEnabled {
			d.errorf(kp, "only valid when planner.policy is enabled (got %q); remove it", pl.Policy)
			continue
		}
		k.check(d, v, kp)
	}
	return pl
}

func (d *decoder) evaluation(n *yaml.Node, p string) Evaluation {
	var ev Evaluation
	m, ok := d.fields(n, p, []string{"sla"}, nil)
	if !ok {
		return ev
	}
	if v, has := m["sla"]; has && !isNull(v) {
		sp := join(p, "sla")
		if sm, ok := d.fields(v, sp, []string{"ttft_ms", "itl_ms", "e2e_ms"}, nil); ok {
			sla := &SLA{}
			d.setOptFloat(sm, sp, "ttft_ms", &sla.TTFTMs)
			d.setOptFloat(sm, sp, "itl_ms", &sla.ITLMs)
			d.setOptFloat(sm, sp, "e2e_ms", &sla.E2EMs)
			ev.SLA = sla
		}
	}
	return ev
}

// ---------------------------------------------------------------------------------------------
// Step 4: validation.

// Validate checks every value and cross-field rule of dynosim-spec.md §3 on c and returns a
// Errors listing all violations, or nil. It does not fill in defaults: a Config built by
// hand must set every union type, policy and defaulted count itself (Decode does). Zero means
// "unset" for the optional numeric fields (stop counts, load rates, bytes_per_token,
// context_length = "max"). Values that are valid but not supported yet are reported by
// Unsupported, not by Validate.
func (c *Config) Validate() error {
	v := &validator{file: c.File}
	v.config(c)
	return v.errs.err()
}

// validator checks a Config. present, when non-nil, holds the paths the YAML spelled out, so
// that an explicit zero in a field where zero means "unset" is still checked.
type validator struct {
	file    string
	present map[string]bool
	errs    Errors
}

func (v *validator) errorf(path, format string, args ...any) {
	v.errs = append(v.errs, &Error{File: v.file, Path: path, Msg: fmt.Sprintf(format, args...)})
}

// has reports whether the field at path is set: non-zero, or written in the YAML.
func (v *validator) has(path string, nonzero bool) bool { return nonzero || v.present[path] }

func fmtFloat(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

func (v *validator) enum(path, val string, allowed ...string) bool {
	return oneOf(v, path, val, allowed...)
}

// oneOf reports whether val is one of allowed, else records "must be one of ..." at path.
func oneOf[T ~string](v *validator, path string, val T, allowed ...T) bool {
	if slices.Contains(allowed, val) {
		return true
	}
	names := make([]string, len(allowed))
	for i, a := range allowed {
		names[i] = string(a)
	}
	v.errorf(path, "must be one of %s, got %q", strings.Join(names, ", "), val)
	return false
}

// posInt reports an int field that is not positive, in the words of the spec's "int>0"
// (dynosim-spec.md §3).
func (v *validator) posInt(path string, x int) {
	if x <= 0 {
		v.errorf(path, "must be an int > 0, got %d", x)
	}
}

func (v *validator) posFloat(path string, x float64) {
	switch {
	case !finite(x):
		v.errorf(path, "must be a finite number > 0, got %s", fmtFloat(x))
	case x <= 0:
		v.errorf(path, "must be > 0, got %s", fmtFloat(x))
	}
}

func (v *validator) nonNegFloat(path string, x float64) {
	switch {
	case !finite(x):
		v.errorf(path, "must be a finite number >= 0, got %s", fmtFloat(x))
	case x < 0:
		v.errorf(path, "must be >= 0, got %s", fmtFloat(x))
	}
}

func (v *validator) optNonNeg(path string, x *float64) {
	if x != nil {
		v.nonNegFloat(path, *x)
	}
}

func (v *validator) optPos(path string, x *float64) {
	if x != nil {
		v.posFloat(path, *x)
	}
}

// members reports the set fields of a union that its type does not accept.
func (v *validator) members(path, typ string, all, accepted []string, set map[string]bool) {
	var extra []string
	for _, k := range all {
		if set[k] && !slices.Contains(accepted, k) {
			extra = append(extra, k)
		}
	}
	if len(extra) > 0 {
		v.errorf(path, "%s.type='%s' does not accept [%s]; accepted keys: %s",
			path, typ, strings.Join(extra, ", "), strings.Join(accepted, ", "))
	}
}

func (v *validator) config(c *Config) {
	v.traffic(&c.Traffic)
	v.engine(&c.Engine)
	v.router(&c.Router)
	v.enum("planner.policy", c.Planner.Policy, plannerDisabled, plannerEnabled)
	v.evaluation(&c.Evaluation)
}

func (v *validator) traffic(t *Traffic) {
	const p = "traffic.source"
	s := &t.Source
	src := s.Type
	if !v.enum(p+".type", s.Type, SourceSynthetic, SourceSyntheticSession, SourceTrace) {
		src = ""
	} else {
		set := map[string]bool{
			"input_tokens":              v.has(p+".input_tokens", s.InputTokens != 0),
			"output_tokens":             v.has(p+".output_tokens", s.OutputTokens != 0),
			"new_input_tokens_per_turn": v.has(p+".new_input_tokens_per_turn", s.NewInputTokensPerTurn != 0),
			"output_tokens_per_turn":    v.has(p+".output_tokens_per_turn", s.OutputTokensPerTurn != 0),
			"session":                   s.Session != nil,
			"paths":                     v.has(p+".paths", s.Paths != nil),
			"format":                    v.has(p+".format", s.Format != ""),
			"block_size":                v.has(p+".block_size", s.BlockSize != 0),
		}
		v.members(p, s.Type, sourceAll, sourceVariants[s.Type], set)
		switch s.Type {
		case SourceSynthetic:
			v.posInt(p+".input_tokens", s.InputTokens)
			v.posInt(p+".output_tokens", s.OutputTokens)
		case SourceSyntheticSession:
			v.posInt(p+".new_input_tokens_per_turn", s.NewInputTokensPerTurn)
			v.posInt(p+".output_tokens_per_turn", s.OutputTokensPerTurn)
			if s.Session == nil {
				v.errorf(p+".session", "required for synthetic-session sources: "+
					"{turns, shared_prefix_ratio, prefix_groups, inter_turn_delay_ms}")
			} else {
				v.session(p+".session", s.Session)
			}
		case SourceTrace:
			v.trace(p, s)
		}
	}
	v.load(&t.Load, src, s.Format)
	v.stop(&t.Stop, src, s.Format)
}

func (v *validator) session(p string, sh *SessionShape) {
	if sh.Turns < 2 {
		v.errorf(p+".turns", "must be >= 2, got %d", sh.Turns)
	}
	if r := sh.SharedPrefixRatio; !finite(r) || r < 0 || r > 1 {
		v.errorf(p+".shared_prefix_ratio", "must be in [0, 1], got %s", fmtFloat(r))
	}
	if sh.PrefixGroups < 0 {
		v.errorf(p+".prefix_groups", "must be >= 0, got %d", sh.PrefixGroups)
	} else if sh.PrefixGroups == 0 && sh.SharedPrefixRatio > 0 {
		v.errorf(p+".prefix_groups", "prefix_groups must be positive when shared_prefix_ratio is positive, got 0")
	}
	v.nonNegFloat(p+".inter_turn_delay_ms", sh.InterTurnDelayMs)
}

func (v *validator) trace(p string, s *Source) {
	v.enum(p+".format", s.Format, traceFormats...)
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
	if s.Format == "dynamo" || s.Format == "weka" {
		if v.has(p+".block_size", s.BlockSize != 0) {
			v.posInt(p+".block_size", s.BlockSize)
		}
	} else {
		v.posInt(p+".block_size", s.BlockSize)
	}
}

func (v *validator) load(l *Load, src, format string) {
	const p = "traffic.load"
	if l.Type == "kv_capacity_fraction" {
		v.errorf(p+".type", "kv_capacity_fraction is only valid in servesweep sweep; predict needs one of "+
			"concurrency, constant_rate, poisson, trace_timestamps")
		return
	}
	if !v.enum(p+".type", l.Type, LoadConcurrency, LoadConstantRate, LoadPoisson, LoadTraceTimestamps) {
		return
	}
	rps := v.has(p+".requests_per_second", l.RequestsPerSecond != 0)
	sps := v.has(p+".sessions_per_second", l.SessionsPerSecond != 0)
	set := map[string]bool{
		"concurrency":         v.has(p+".concurrency", l.Concurrency != 0),
		"requests_per_second": rps,
		"sessions_per_second": sps,
		"seed":                v.has(p+".seed", l.Seed != 0),
		"speedup":             v.has(p+".speedup", l.Speedup != 0),
	}
	v.members(p, l.Type, loadAll, loadVariants[l.Type], set)
	switch l.Type {
	case LoadConcurrency:
		v.posInt(p+".concurrency", l.Concurrency)
	case LoadConstantRate, LoadPoisson:
		if rps {
			v.posFloat(p+".requests_per_second", l.RequestsPerSecond)
		}
		if sps {
			v.posFloat(p+".sessions_per_second", l.SessionsPerSecond)
		}
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
		v.posFloat(p+".speedup", l.Speedup)
		if src == SourceSynthetic || src == SourceSyntheticSession {
			v.errorf(p+".type", "trace_timestamps needs a trace source; %s sources use concurrency, "+
				"constant_rate or poisson", src)
		}
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

func (v *validator) stop(s *Stop, src, format string) {
	const p = "traffic.stop"
	set := map[string]bool{
		"requests":                 v.has(p+".requests", s.Requests != 0),
		"requests_per_load_unit":   v.has(p+".requests_per_load_unit", s.RequestsPerLoadUnit != 0),
		"sessions":                 v.has(p+".sessions", s.Sessions != 0),
		"sessions_per_load_unit":   v.has(p+".sessions_per_load_unit", s.SessionsPerLoadUnit != 0),
		"max_virtual_time_seconds": v.has(p+".max_virtual_time_seconds", s.MaxVirtualTimeSeconds != 0),
	}
	if set["requests"] {
		v.posInt(p+".requests", s.Requests)
	}
	if set["requests_per_load_unit"] {
		v.posFloat(p+".requests_per_load_unit", s.RequestsPerLoadUnit)
	}
	if set["sessions"] {
		v.posInt(p+".sessions", s.Sessions)
	}
	if set["sessions_per_load_unit"] {
		v.posFloat(p+".sessions_per_load_unit", s.SessionsPerLoadUnit)
	}
	if set["max_virtual_time_seconds"] {
		v.posFloat(p+".max_virtual_time_seconds", s.MaxVirtualTimeSeconds)
	}
	countStop := func(kind string, own, other []string) {
		for _, k := range other {
			if set[k] {
				v.errorf(p+"."+k, "%s sources stop on %s, not %s", kind, strings.Join(own, " or "), k)
			}
		}
		if set["max_virtual_time_seconds"] {
			v.errorf(p+".max_virtual_time_seconds", "%s sources reject max_virtual_time_seconds; stop on %s",
				kind, strings.Join(own, " or "))
		}
		n := 0
		for _, k := range own {
			if set[k] {
				n++
			}
		}
		switch n {
		case 0:
			v.errorf(p, "%s sources need exactly one of %s, got none", kind, strings.Join(own, ", "))
		case 2:
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
		for _, k := range append(reqs, sess...) {
			if set[k] {
				v.errorf(p+"."+k, "trace sources accept only max_virtual_time_seconds")
			}
		}
		if set["max_virtual_time_seconds"] && (format == "agentic_mooncake" || format == "weka") {
			v.errorf(p+".max_virtual_time_seconds", "%s traces reject max_virtual_time_seconds", format)
		}
	}
}

func (v *validator) engine(e *Engine) {
	const p = "engine"
	modeOK := oneOf(v, p+".mode", e.Mode, Modes()...)
	if e.Model == "" {
		v.errorf(p+".model", "required: a model id such as meta-llama/Meta-Llama-3.1-8B-Instruct")
	}
	v.hardware(p+".hardware", e.Hardware, true)
	backendOK := v.enum(p+".backend", e.Backend, backendVLLM, backendSGLang, backendTRTLLM)
	if v.has(p+".context_length", e.ContextLength != 0) && e.ContextLength <= 0 {
		v.errorf(p+".context_length", "must be an int > 0 or \"max\", got %d", e.ContextLength)
	}
	if e.EnableChunkedPrefill != nil && !*e.EnableChunkedPrefill && e.Backend == backendSGLang {
		v.errorf(p+".enable_chunked_prefill", "false is not supported by the sglang backend")
	}
	if kt := e.KVTransfer; kt != nil {
		if e.Mode == ModeAggregated {
			v.errorf(p+".kv_transfer", "aggregated mode rejects kv_transfer")
		}
		kp := p + ".kv_transfer"
		if v.has(kp+".bytes_per_token", kt.BytesPerToken != 0) && kt.BytesPerToken <= 0 {
			v.errorf(kp+".bytes_per_token", "must be an int > 0 or \"auto\", got %d", kt.BytesPerToken)
		}
		v.optPos(kp+".bandwidth_gb_per_second", kt.BandwidthGBps)
		v.enum(kp+".timing_mode", kt.TimingMode, "destination_missing", "full_prompt")
	}
	if e.Precision.Weights != "" {
		v.enum(p+".precision.weights", e.Precision.Weights, PrecisionAuto, PrecisionBF16, PrecisionFP8, PrecisionFP4)
	}
	if e.Precision.KVCache != "" {
		v.enum(p+".precision.kv_cache", e.Precision.KVCache, PrecisionAuto, PrecisionBF16, PrecisionFP8)
	}
	w := &e.Workers
	wp := p + ".workers"
	if modeOK {
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
			if e.Backend == backendTRTLLM {
				v.errorf(p+".backend", "TensorRT-LLM disaggregated mode is unsupported; "+
					"use aggregated mode or backend vllm or sglang")
			}
		}
	}
	backend := e.Backend
	if !backendOK {
		backend = ""
	}
	for _, r := range []struct {
		name Role
		role *WorkerRole
	}{{RoleAggregated, w.Aggregated}, {RolePrefill, w.Prefill}, {RoleDecode, w.Decode}} {
		if r.role != nil {
			v.role(wp+"."+string(r.name), r.name, r.role, backend)
		}
	}
}

// hardware checks a hardware id; required says whether "" is an error.
func (v *validator) hardware(path, hw string, required bool) {
	switch {
	case hw == "" && required:
		v.errorf(path, "required: a hardware id such as h200_sxm")
	case hw == "auto":
		v.errorf(path, msgAuto)
	}
}

func (v *validator) role(p string, name Role, r *WorkerRole, backend string) {
	if r.Hardware != "" {
		if name == RoleAggregated {
			v.errorf(p+".hardware", "only prefill and decode roles may override hardware; set engine.hardware")
		} else {
			v.hardware(p+".hardware", r.Hardware, false)
		}
	}
	v.nonNegFloat(p+".startup_seconds", r.StartupSeconds)
	par := r.Parallelism
	for i, x := range []int{par.Replicas, par.Tensor, par.Pipeline, par.AttentionData, par.MoeTensor, par.MoeExpert} {
		v.posInt(p+".parallelism."+parallelismKeys[i], x)
	}
	v.posInt(p+".scheduler.max_batched_tokens", r.Scheduler.MaxBatchedTokens)
	v.posInt(p+".scheduler.max_sequences", r.Scheduler.MaxSequences)

	kp := p + ".kv_cache"
	kv := r.KVCache
	switch {
	case kv.BlockSize <= 0:
		v.errorf(kp+".block_size", "must be an int > 0, got %d", kv.BlockSize)
	case kv.BlockSize < 2 && (backend == backendVLLM || backend == backendTRTLLM):
		v.errorf(kp+".block_size", "must be >= 2 for the %s backend, got %d", backend, kv.BlockSize)
	}
	if v.has(kp+".bytes_per_token", kv.BytesPerToken != 0) && kv.BytesPerToken <= 0 {
		v.errorf(kp+".bytes_per_token", "must be an int > 0 or \"auto\", got %d", kv.BytesPerToken)
	}
	cp := kp + ".capacity"
	c := kv.Capacity
	if v.enum(cp+".type", c.Type, CapacityDefault, CapacityFixed) {
		blocks := v.has(cp+".blocks", c.Blocks != 0)
		fraction := v.has(cp+".memory_fraction", c.MemoryFraction != 0)
		switch c.Type {
		case CapacityFixed:
			if blocks {
				v.posInt(cp+".blocks", c.Blocks)
			} else {
				v.errorf(cp+".blocks", "fixed KV capacity requires blocks")
			}
			if fraction {
				v.errorf(cp+".memory_fraction", "fixed KV capacity rejects memory_fraction")
			}
		case CapacityDefault:
			if blocks {
				v.errorf(cp+".blocks", "default KV capacity rejects blocks")
			}
			if f := c.MemoryFraction; !finite(f) || f <= 0 || f > 1 {
				v.errorf(cp+".memory_fraction", "must be in (0, 1], got %s", fmtFloat(f))
			}
		}
	}

	tp := p + ".timing"
	t := r.Timing
	if v.enum(tp+".type", t.Type, TimingDefault, TimingFixed, TimingPolynomial) {
		if t.Type == TimingFixed {
			if t.PrefillMs == nil || t.DecodeMs == nil {
				v.errorf(tp, "fixed timing requires prefill_ms and decode_ms")
			}
			v.optNonNeg(tp+".prefill_ms", t.PrefillMs)
			v.optNonNeg(tp+".decode_ms", t.DecodeMs)
		} else if t.PrefillMs != nil || t.DecodeMs != nil {
			v.errorf(tp, "%s timing rejects fixed timing values", t.Type)
		}
	}
}

func (v *validator) router(r *Router) {
	const p = "router"
	oneOf(v, p+".policy", r.Policy, Policies()...)
	v.enum(p+".prefill_load_model.type", r.PrefillLoadModel.Type, loadModelNone, loadModelAIC)
	knobs := []struct {
		name string
		x    *float64
	}{{"overlap_score_credit", r.OverlapScoreCredit}, {"prefill_load_scale", r.PrefillLoadScale},
		{"temperature", r.Temperature}}
	for _, k := range knobs {
		v.optNonNeg(p+"."+k.name, k.x)
	}
	if r.Policy != PolicyKVRouter {
		for _, k := range knobs {
			if k.x != nil {
				v.errorf(p+"."+k.name, "only valid with router.policy kv_router, got %s; "+
					"remove it or set router.policy: kv_router", r.Policy)
			}
		}
		if r.PrefillLoadModel.Type == loadModelAIC {
			v.errorf(p+".prefill_load_model.type", "aic requires router.policy kv_router, got %s; "+
				"use prefill_load_model.type: none or router.policy: kv_router", r.Policy)
		}
	}
}

func (v *validator) evaluation(e *Evaluation) {
	const p = "evaluation.sla"
	s := e.SLA
	if s == nil {
		return
	}
	v.optPos(p+".ttft_ms", s.TTFTMs)
	v.optPos(p+".itl_ms", s.ITLMs)
	v.optPos(p+".e2e_ms", s.E2EMs)
	if s.E2EMs != nil && (s.TTFTMs != nil || s.ITLMs != nil) {
		v.errorf(p+".e2e_ms", "sla.e2e_ms is mutually exclusive with sla.ttft_ms/itl_ms")
	}
}

// ---------------------------------------------------------------------------------------------
// Step 5: not supported yet.

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
	if s := c.Traffic.Source; s.Type == SourceTrace && s.Format != defaultTraceFormat {
		add("traffic.source.format", s.Format, "use format: mooncake")
	}
	e := &c.Engine
	if e.Backend == backendSGLang || e.Backend == backendTRTLLM {
		add("engine.backend", e.Backend, "use backend: vllm")
	}
	if e.EnableChunkedPrefill != nil && !*e.EnableChunkedPrefill {
		add("engine.enable_chunked_prefill", "false", "omit it or set it to true")
	}
	if c.Router.PrefillLoadModel.Type == loadModelAIC {
		add("router.prefill_load_model.type", loadModelAIC, "use type: none")
	}
	if c.Planner.Policy == plannerEnabled {
		add("planner.policy", plannerEnabled, "use policy: disabled")
	}
	return errs
}

// ApplySets applies --set arguments (PATH=YAML, applied left to right, exactly as Decode applies
// them; see Decode) to root, a YAML mapping node, in place. It lets a caller apply the
// same overrides to a document it decodes itself. Malformed arguments are
// returned as Errors naming file and the argument.
func ApplySets(root *yaml.Node, file string, sets []string) error {
	if root == nil || root.Kind != yaml.MappingNode {
		return Errors{{File: file, Msg: "the top level must be a mapping"}}
	}
	return applySets(root, sets, file).err()
}
