package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// This file turns DynoSim prediction YAML (dynosim-spec.md §3) into a Config.
//
// Decoding runs in six steps, and every problem of a step is collected before the step returns,
// so one run reports all of them:
//
//  1. Parse the document into a yaml.Node tree (syntax errors carry the YAML line number).
//  2. Apply the --set overrides to the tree, left to right (sets.go).
//  3. Walk the tree along the schema of config.go's struct tags (schema.go), tracking the dotted
//     path of every field: unknown, refused and duplicate keys and wrong YAML kinds are reported
//     here, and the caller's Marker is consulted.
//  4. Fill in the defaults of the fields the YAML did not give (defaults.go).
//  5. Validate the values and the cross-field rules (validate.go), knowing which fields the YAML
//     spelled out, so that an explicit 0 is "must be > 0" rather than "unset".
//  6. Report values the schema accepts but the simulator cannot run yet (Config.Unsupported).

// A Marker classifies a value that the prediction schema does not take but another reader of the
// same YAML does: servesweep sweep's search domains, presets and `auto` (grid.ConcreteMarker).
// Decode calls it with the full dotted path before decoding a field's value n (unknown false):
// for every value of a scalar field other than the field's `word`, and for a mapping found where
// a mapping or a list is expected. It also calls it for the value of every key the schema does
// not know (unknown true). A non-empty result is reported as the error at path in place of the
// kind error or "unknown field" Decode would report; a rejected value is not decoded.
type Marker func(path string, n *yaml.Node, unknown bool) string

// An Option adjusts Decode and LoadFile.
type Option func(*options)

type options struct {
	marker Marker
	// dir is the folder the YAML's relative file paths resolve against ("": not resolved).
	dir string
}

// WithMarker makes Decode consult m (see Marker). Without it a search domain where a value is
// expected is a plain kind error ("must be an int, got a mapping"), a `preset` key is an unknown
// field and the string auto is an ordinary string.
func WithMarker(m Marker) Option { return func(o *options) { o.marker = m } }

// WithDir makes Decode resolve the relative file paths the YAML gives against the folder dir,
// before the --set overrides apply (ResolvePaths); LoadFile passes the file's folder. Without it
// every relative path stays as written and resolves against the working directory.
func WithDir(dir string) Option { return func(o *options) { o.dir = dir } }

// LoadFile reads the prediction YAML at path, resolves the relative file paths it gives against
// its folder (WithDir, ResolvePaths), applies the --set overrides in order, decodes it strictly,
// fills in defaults and validates it; see Decode. A missing or unreadable file is also reported
// as a Error (exit code 2) that wraps the underlying error.
func LoadFile(path string, sets []string, opts ...Option) (*Config, error) {
	data, err := ReadFile(path) // not a named pipe nobody writes to, nor a directory
	if err != nil {
		return nil, Errors{{File: path, Msg: "cannot read config: " + PathCause(err).Error(), Err: err}}
	}
	return Decode(data, path, sets, append(opts[:len(opts):len(opts)], WithDir(filepath.Dir(path)))...)
}

// Decode turns prediction YAML into a Config. file names the input in error messages. sets
// are --set arguments of the form PATH=YAML, applied left to right to the parsed document
// before decoding (dynosim-spec.md §2.3): PATH is dot-separated, may create missing mappings,
// and may not index sequences; the right-hand side is parsed as YAML. With WithDir the relative
// file paths the YAML gives (traffic.source.paths) resolve against that folder first; the paths --set
// gives, and all of them without WithDir, stay as written, relative to the working directory.
//
// Decoding is strict (dynosim-spec.md §3): unknown, refused or duplicate keys, YAML merge keys,
// wrong YAML kinds (an int must be a YAML int, so true, "4" and 4.5 are not ints; floats accept
// ints but not NaN, Inf or strings; a bool is true or false, not yes or on), numbers written
// with a leading zero (010, which YAML reads as octal 8: LeadingZeroNumeral; 0o10 is the octal
// form) and fields a tagged union's type does not accept are errors. The field types of config.go define each field's key,
// kind, default and range in their struct tags (schema.go lists the vocabulary).
//
// Defaults are filled in after the walk, once, for the fields the YAML did not give: each
// field's `default` tag (for union members, when the union's type takes the field), then the
// defaults that depend on other fields (applyDefaults in defaults.go: the whole-traffic default,
// the trace block size, and the backend- and role-dependent KV block size, memory fraction and
// prefill max_sequences).
//
// A null value for a mapping means "omitted" (a null worker role means {}); a null scalar is a
// kind error except for the fields tagged null:"omit" in config.go, for which it means omitted.
//
// On any problem Decode returns a nil Config and an Errors holding every problem found.
// If the config is valid but uses something the simulator cannot run yet, the Errors
// holds only Unsupported errors (errors.Is(err, errors.ErrUnsupported) is then true).
func Decode(data []byte, file string, sets []string, opts ...Option) (*Config, error) {
	c, errs, unsupported := decode(data, file, sets, opts...)
	if len(errs) > 0 {
		return nil, errs
	}
	if len(unsupported) > 0 {
		return nil, unsupported
	}
	return c, nil
}

// DecodeNode is Decode of the YAML whose parsed root mapping is root, without --set overrides:
// it gives the Config and errors Decode gives for that text (error positions are root's node
// lines). It reads root without changing it. Callers that hold a tree already (a sweep point)
// skip encoding it to text and parsing it back.
func DecodeNode(root *yaml.Node, file string, opts ...Option) (*Config, error) {
	if root == nil || root.Kind != yaml.MappingNode {
		return nil, Errors{{File: file, Msg: "the top level must be a mapping, got " + describe(root)}}
	}
	c, errs, unsupported := decodeRoot(root, file, nil, opts...)
	if len(errs) > 0 {
		return nil, errs
	}
	if len(unsupported) > 0 {
		return nil, unsupported
	}
	return c, nil
}

// decode runs steps 1 to 6 and returns the Config (nil when it could not be built), the
// problems of steps 1 to 5, and the not-supported-yet findings of step 6 (only computed when
// there are no other problems).
func decode(data []byte, file string, sets []string, opts ...Option) (*Config, Errors, Errors) {
	root, errs := parseDocument(data, file)
	if len(errs) > 0 {
		return nil, errs, nil
	}
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	if o.dir != "" {
		if errs := resolvePaths(root, file, o.dir); len(errs) > 0 {
			return nil, errs, nil
		}
	}
	if errs := applySets(root, sets, file); len(errs) > 0 {
		return nil, errs, nil
	}
	return decodeRoot(root, file, sets, opts...)
}

// walkRoot runs step 3 of decode (the walk of the schema) on the parsed root mapping: the
// walker, with what the YAML gave and every problem it found, and the config it filled.
func walkRoot(root *yaml.Node, file string, opts ...Option) (*walker, *Config) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	w := &walker{file: file, marker: o.marker, given: map[string]bool{}}
	c := &Config{File: file, HasRouter: declared(root, "router"), HasPlanner: declared(root, "planner")}
	w.mapping(root, "", rootSchema, reflect.ValueOf(c).Elem())
	return w, c
}

// decodeRoot runs steps 3 to 6 of decode on the parsed root mapping.
func decodeRoot(root *yaml.Node, file string, sets []string, opts ...Option) (*Config, Errors, Errors) {
	w, c := walkRoot(root, file, opts...)
	c.Sets = slices.Clone(sets)
	if !w.given["engine"] && !w.isBad("engine") {
		w.badf("engine", "required: the simulated deployment (mode, model, hardware, backend, workers)")
	}
	applyDefaults(c, w.given, w.isBad)
	errs, unsupported := finish(c, w, sets)
	return c, errs, unsupported
}

// finish runs steps 5 and 6 of decode on c, the walked and defaulted config of w's walk: the
// problems of steps 3 to 5 (the walk's, then validation's not already said or below a path the
// walk rejected), and the not-supported-yet findings of step 6 when there are none.
func finish(c *Config, w *walker, sets []string) (Errors, Errors) {
	v := &validator{file: w.file, given: w.given, isBad: w.isBad}
	v.config(c)

	all := w.errs
	seen := map[string]bool{}
	for _, e := range all {
		seen[e.Error()] = true
	}
	for _, e := range v.errs {
		if w.isBad(e.Path) || seen[e.Error()] {
			continue
		}
		seen[e.Error()] = true
		all = append(all, e)
	}
	if len(all) > 0 {
		return attributeSets(all, sets), nil
	}
	return nil, attributeSets(c.Unsupported(), sets)
}

// AttributeSets fills Error.Set on the configuration errors in err (an Errors or *Error, possibly
// wrapped) whose field a --set of sets gave, as Decode does for its own errors; commands apply it
// to the errors found after decoding (a deployment the simulator refuses, a sweep spec's domain).
// It returns err.
func AttributeSets(err error, sets []string) error {
	if err == nil || len(sets) == 0 {
		return err
	}
	var es Errors
	if errors.As(err, &es) {
		attributeSets(es, sets)
		return err
	}
	var e *Error
	if errors.As(err, &e) && e.Set == "" {
		attributeSets(Errors{e}, sets)
	}
	return err
}

// unknownField begins the message of an error about a key the schema does not have.
const unknownField = "unknown field"

// attributeSets records in Error.Set the --set argument that gave the field of each error whose
// path is a --set path or lies under one, or that reports an unknown key on a --set path, a
// member of a union its variant does not accept, a section the mode rejects above a --set
// path, or a field above a --set path that the --set made a mapping, the last such --set winning as it does when applied; a mode's refusal goes to the --set
// of engine.mode when there is one. Errors about fields the file gave are unchanged.
func attributeSets(errs Errors, sets []string) Errors {
	for _, e := range errs {
		if e.Path == "" || e.Set != "" {
			continue
		}
		// A mode's refusal (of a section, or of missing workers) is caused by the --set that
		// chose the mode, when one did, before any --set that wrote into the section.
		if strings.Contains(e.Msg, " mode rejects ") || strings.Contains(e.Msg, " mode requires ") {
			if set := SetFor("engine.mode", sets); set != "" {
				e.Set = set
				continue
			}
		}
		for k := len(sets) - 1; k >= 0; k-- {
			p, _, ok := strings.Cut(sets[k], "=")
			p = strings.TrimSpace(p)
			under := setCovers(p, e.Path)
			// A misspelt key in the middle of a --set path is reported at that key, above the path.
			misspelt := strings.HasPrefix(p, e.Path+".") && strings.HasPrefix(e.Msg, unknownField)
			// A member a union's variant refuses is reported once at the union, naming the member.
			refused := false
			if rest, below := strings.CutPrefix(p, e.Path+"."); below {
				key, _, _ := strings.Cut(rest, ".")
				refused = strings.Contains(e.Msg, "does not accept") && strings.Contains(e.Msg, key)
			}
			// A section the mode rejects, which a --set below it wrote into (or changed).
			rejected := strings.HasPrefix(p, e.Path+".") && strings.Contains(e.Msg, " rejects ")
			// A field the file leaves out, made a mapping by a --set path through it
			// (router.seed.x=5 where router.seed is an int).
			made := strings.HasPrefix(p, e.Path+".") && strings.Contains(e.Msg, "got a mapping")
			if ok && (under || misspelt || refused || rejected || made) {
				e.Set = sets[k]
				break
			}
		}
	}
	return errs
}

// setCovers reports whether a --set of setPath wrote the field path: the path itself or a field
// or list element below it.
func setCovers(setPath, path string) bool {
	return path == setPath || strings.HasPrefix(path, setPath+".") || strings.HasPrefix(path, setPath+"[")
}

// At is an Error about field path of c (a dotted path such as engine.hardware) saying msg,
// naming c's file and the --set that gave the field, if one did (SetFor): for a warning or a
// refusal found after decoding.
func (c *Config) At(path, msg string) *Error {
	return &Error{File: c.File, Set: SetFor(path, c.Sets), Path: path, Msg: msg}
}

// SetFor returns the --set argument among sets (PATH=YAML, in the order given) that wrote the
// field path, the last such one winning as it does when applied, or "" when none did: what a
// message about that field should name besides the file (Error.Set).
func SetFor(path string, sets []string) string {
	for k := len(sets) - 1; k >= 0; k-- {
		if p, _, ok := strings.Cut(sets[k], "="); ok && setCovers(strings.TrimSpace(p), path) {
			return sets[k]
		}
	}
	return ""
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
		return fail(YAMLErrorMessage(err, data))
	}
	for {
		var extra yaml.Node
		err := dec.Decode(&extra)
		if err == io.EOF {
			break
		}
		if err != nil {
			return fail(YAMLErrorMessage(err, data))
		}
		if len(extra.Content) > 0 && !isNull(extra.Content[0]) {
			return fail(fmt.Sprintf("more than one YAML document (a second begins on line %d); a prediction config is a single document",
				extra.Content[0].Line))
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
		return fail("the top level must be a mapping (" + strings.Join(rootSchema.keys(""), ", ") + "), got " +
			describe(n))
	}
	return n, nil
}

// YAMLErrorMessage is the message of yaml.v3's error err parsing the document data, as "invalid
// YAML: line N: ...", N 1-based, except that a tab in an indentation, which yaml.v3 reports at
// the line of the construct around it (a line or more before the tab), is named at the first
// line of data whose indentation holds one, from yaml.v3's line on; and that a parser error
// (parserLine), which yaml.v3 reports one line early, is named at its own line.
func YAMLErrorMessage(err error, data []byte) string {
	if msg, ok := parserLine(err, data); ok {
		return msg
	}
	if name, ok := unknownAnchor(err); ok {
		// yaml.v3 names no line: the first use of the alias is where no anchor defined it.
		for i, line := range strings.Split(string(data), "\n") {
			for at := strings.Index(line, "*"+name); at >= 0; {
				end := at + 1 + len(name)
				if end == len(line) || !anchorChar(line[end]) {
					return fmt.Sprintf("invalid YAML: line %d: unknown anchor '%s' referenced (no &%s defines it before this line)",
						i+1, name, name)
				}
				next := strings.Index(line[end:], "*"+name)
				if next < 0 {
					break
				}
				at = end + next
			}
		}
	}
	if strings.Contains(err.Error(), "UTF-8 octet") {
		// yaml.v3 names no line for bytes that are not UTF-8 (a file saved as Latin-1, say).
		if line, b, ok := firstInvalidUTF8(data); ok {
			return fmt.Sprintf("invalid YAML: line %d: byte 0x%02X is not UTF-8 (the file was saved in another encoding, "+
				"e.g. Latin-1); save it as UTF-8", line, b)
		}
	}
	if strings.Contains(err.Error(), "found character that cannot start any token") {
		// A tab that begins a line's content is a tab in its indentation: say so at that line.
		if n := errorLine(err); n > 0 {
			if lines := strings.Split(string(data), "\n"); n <= len(lines) && strings.HasPrefix(strings.TrimLeft(lines[n-1], " "), "\t") {
				return fmt.Sprintf(tabIndentMsg, n)
			}
		}
	}
	if strings.Contains(err.Error(), "found a tab character") {
		// yaml.v3's line comes before the tab's (a tab in a block scalar above it is content).
		from := errorLine(err)
		for i, line := range strings.Split(string(data), "\n") {
			if i+1 < from {
				continue
			}
			if indent := line[:len(line)-len(strings.TrimLeft(line, " \t"))]; strings.Contains(indent, "\t") {
				return fmt.Sprintf(tabIndentMsg, i+1)
			}
		}
	}
	return yamlErrorMsg(err)
}

// firstInvalidUTF8 returns the 1-based line of data's first byte that is not part of valid UTF-8,
// and that byte; ok is false when data is valid UTF-8.
func firstInvalidUTF8(data []byte) (line int, b byte, ok bool) {
	line = 1
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size <= 1 {
			return line, data[i], true
		}
		if data[i] == '\n' {
			line++
		}
		i += size
	}
	return 0, 0, false
}

// tabIndentMsg is the message of a tab in a line's indentation, at line %d.
const tabIndentMsg = "invalid YAML: line %d: a tab character in the indentation (YAML indents with spaces only)"

// errorLine is the line N of yaml.v3's "yaml: line N: ..." error, or 0 when it names none.
func errorLine(err error) int {
	_, rest, ok := strings.Cut(err.Error(), "line ")
	if !ok {
		return 0
	}
	n, _, _ := strings.Cut(rest, ":")
	v, _ := strconv.Atoi(n)
	return v
}

// unknownAnchor returns the anchor name of yaml.v3's "unknown anchor 'NAME' referenced" error.
func unknownAnchor(err error) (string, bool) {
	rest, ok := strings.CutPrefix(strings.TrimPrefix(err.Error(), "yaml: "), "unknown anchor '")
	if !ok {
		return "", false
	}
	name, ok := strings.CutSuffix(rest, "' referenced")
	return name, ok && name != ""
}

// anchorChar reports whether c can continue a YAML anchor or alias name in the documents servesweep
// reads (a space, a flow indicator or a comma ends one; YAML 1.2 §6.9.2).
func anchorChar(c byte) bool {
	return c != ' ' && c != '\t' && c != ',' && c != '[' && c != ']' && c != '{' && c != '}' && c != '\r'
}

// yamlParserProblems are the messages of yaml.v3's parser errors (yaml.v3 parserc.go), as against
// its scanner's, some of which also begin "did not find expected" and are numbered right.
var yamlParserProblems = []string{"did not find expected <stream-start>", "did not find expected <document start>",
	"did not find expected node content", "did not find expected '-' indicator", "did not find expected key",
	"did not find expected ',' or ']'", "did not find expected ',' or '}'", "found undefined tag handle",
	"found duplicate %YAML directive", "found incompatible YAML document", "found duplicate %TAG directive"}

// parserLine returns the message of err, a yaml.v3 parser error parsing data, at its line: yaml.v3
// reports such an error at the 0-based line of the construct it arose in (the mapping, list or
// node being parsed), or of the problem when that construct begins on the first line, and at no
// line when both are there; a scanner's error it reports 1-based (yaml.v3 decode.go's fail).
// The problem's own line is the first, from the construct's on, whose prefix of data fails with the
// same problem (a block key mis-indented on line 4 of a mapping opened on line 2: "line 4: did
// not find expected key (in the mapping that begins on line 2)"), found by a binary search over
// the prefixes; without one, the construct's line. ok is false for any other error.
func parserLine(err error, data []byte) (msg string, ok bool) {
	text := strings.TrimPrefix(err.Error(), "yaml: ")
	construct := 1
	if rest, found := strings.CutPrefix(text, "line "); found {
		n, problem, cut := strings.Cut(rest, ": ")
		line, convErr := strconv.Atoi(n)
		if !cut || convErr != nil {
			return "", false
		}
		construct, text = line+1, problem
	}
	if !slices.Contains(yamlParserProblems, text) {
		return "", false
	}
	// ends[k] is the end of line k+1; a prefix that fails with the problem stays failing as lines
	// are added, so a binary search finds the first (log2 of the lines parses, not one per line).
	var ends []int
	for end := 0; end < len(data); {
		next := bytes.IndexByte(data[end:], '\n')
		if next < 0 {
			next = len(data) - end - 1
		}
		end += next + 1
		ends = append(ends, end)
	}
	at := construct
	lo, hi := construct, len(ends)
	if lo <= hi && yamlProblem(data[:ends[hi-1]]) == text {
		for lo < hi {
			mid := (lo + hi) / 2
			if yamlProblem(data[:ends[mid-1]]) == text {
				hi = mid
			} else {
				lo = mid + 1
			}
		}
		at = lo
	}
	if at > construct {
		what := "construct"
		switch {
		case strings.HasSuffix(text, "expected key"), strings.HasSuffix(text, "'}'"):
			what = "mapping"
		case strings.HasSuffix(text, "'-' indicator"), strings.HasSuffix(text, "']'"):
			what = "list"
		}
		return fmt.Sprintf("invalid YAML: line %d: %s (in the %s that begins on line %d)", at, text, what, construct), true
	}
	return fmt.Sprintf("invalid YAML: line %d: %s", construct, text), true
}

// yamlProblem returns the problem (yaml.v3's message without its line) of the first error parsing
// data as a stream of YAML documents, "" when none.
func yamlProblem(data []byte) (problem string) {
	defer func() {
		if r := recover(); r != nil {
			problem = fmt.Sprint(r)
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var n yaml.Node
		err := dec.Decode(&n)
		if err == io.EOF {
			return ""
		}
		if err != nil {
			text := strings.TrimPrefix(err.Error(), "yaml: ")
			if rest, found := strings.CutPrefix(text, "line "); found {
				if _, p, cut := strings.Cut(rest, ": "); cut {
					text = p
				}
			}
			return text
		}
	}
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

// isString reports whether n is the YAML string s.
func isString(n *yaml.Node, s string) bool {
	return n != nil && n.Kind == yaml.ScalarNode && n.ShortTag() == "!!str" && n.Value == s
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
// Step 3: walking the node tree along the schema.

// walker decodes a node tree into a Config along rootSchema.
type walker struct {
	file   string
	marker Marker
	errs   Errors
	// bad holds paths whose value was rejected by the walk; validation errors at or below them
	// are dropped, since they would only repeat the cause.
	bad []string
	// given holds the paths of the fields the YAML gave (a null mapping or a null optional scalar
	// counts as omitted). Defaults fill in the others; validation checks these even when zero.
	given map[string]bool
}

func (w *walker) errorf(path, format string, args ...any) {
	w.errs = append(w.errs, &Error{File: w.file, Path: path, Msg: fmt.Sprintf(format, args...)})
}

// badf reports an error and marks path as bad.
func (w *walker) badf(path, format string, args ...any) {
	w.errorf(path, format, args...)
	w.bad = append(w.bad, path)
}

func (w *walker) isBad(path string) bool {
	for _, b := range w.bad {
		if path == b || strings.HasPrefix(path, b+".") || strings.HasPrefix(path, b+"[") {
			return true
		}
	}
	return false
}

// mark asks the Marker about the node n at path; "" when there is no Marker or it has nothing
// to say.
func (w *walker) mark(path string, n *yaml.Node, unknown bool) string {
	if w.marker == nil {
		return ""
	}
	return w.marker(path, n, unknown)
}

// mapping decodes the mapping n at path into v, a struct of schema s. Duplicate keys, merge
// keys, refused and unknown keys are reported (unknown ones against the keys of the union
// variant, when s is a tagged union); the union's discriminator is decoded first.
func (w *walker) mapping(n *yaml.Node, path string, s *structSchema, v reflect.Value) {
	n = resolve(n)
	if n == nil || n.Kind != yaml.MappingNode {
		w.badf(path, "must be a mapping, got %s", describe(n))
		return
	}
	nodes := make([]*yaml.Node, len(s.fields))
	lines := map[string]int{}
	var unknown []string
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := resolve(n.Content[i]), n.Content[i+1]
		if k == nil || k.Kind != yaml.ScalarNode {
			w.errorf(path, "mapping keys must be strings, got %s", describe(k))
			continue
		}
		key := k.Value
		kp := join(path, key)
		if k.ShortTag() == "!!merge" {
			w.errorf(kp, "YAML merge keys are not supported; write the fields out")
			continue
		}
		if line, dup := lines[key]; dup {
			if line > 0 {
				w.errorf(kp, "duplicate key (first defined on line %d, again on line %d)", line, k.Line)
			} else {
				w.errorf(kp, "duplicate key")
			}
			continue
		}
		lines[key] = k.Line
		if j := fieldIndex(s, key); j >= 0 {
			nodes[j] = val
		} else if f := s.refusedKey(key); f != nil {
			w.errorf(kp, "%s", f.refuse)
		} else if msg := w.mark(kp, resolve(val), true); msg != "" {
			w.errorf(kp, "%s", msg)
		} else {
			unknown = append(unknown, key)
		}
	}
	variant := ""
	if d := s.disc; d != nil {
		variant = d.def
		if dn := nodes[fieldIndex(s, d.key)]; dn != nil {
			dv := v.Field(d.index)
			if w.field(dn, join(path, d.key), d, dv) {
				variant = dv.String()
			} else {
				variant = ""
				w.bad = append(w.bad, path)
			}
		}
	}
	for _, k := range unknown {
		w.errorf(join(path, k), "%s", unknownFieldMsg(s, variant, k))
	}
	for j, f := range s.fields {
		if nodes[j] == nil || f.discriminator {
			continue
		}
		if r := resolve(nodes[j]); f.distSub != nil && r != nil && r.Kind == yaml.MappingNode {
			w.distribution(r, join(path, f.key), f, v.Field(f.dist))
			continue
		}
		w.field(nodes[j], join(path, f.key), f, v.Field(f.index))
	}
}

// distribution decodes the mapping form r of the int field f at path (its dist tag) into dst,
// the sibling pointer field, unless the Marker claims the mapping (a search domain). A mapping
// without its discriminator (distribution: ...) is an error naming the kinds.
func (w *walker) distribution(r *yaml.Node, path string, f *field, dst reflect.Value) {
	if msg := w.mark(path, r, false); msg != "" {
		w.badf(path, "%s", msg)
		return
	}
	w.given[path] = true
	d := f.distSub.disc
	if findKey(r, d.key) < 0 {
		w.badf(path, "must be an int or a distribution {%s: %s, ...}, got a mapping without %s", d.key, strings.Join(d.enum, "|"), d.key)
		return
	}
	dst.Set(reflect.New(dst.Type().Elem()))
	w.mapping(r, path, f.distSub, dst.Elem())
}

// fieldIndex returns the position of the field named key in s.fields, or -1.
func fieldIndex(s *structSchema, key string) int {
	for j, f := range s.fields {
		if f.key == key {
			return j
		}
	}
	return -1
}

// field decodes n, the value of field f at path, into dst and reports whether it did. A value
// other than an omitting null or the field's word records the path as given.
func (w *walker) field(n *yaml.Node, path string, f *field, dst reflect.Value) bool {
	r := resolve(n)
	null := isNull(r)
	switch {
	case null && f.kind == kindStruct && f.null == "empty":
		dst.Set(reflect.New(f.typ))
		w.given[path] = true
		return true
	case null && (f.kind == kindStruct || f.null == "omit"):
		return false
	case f.word != "" && isString(r, f.word):
		return false
	}
	// The YAML gives the field, even when its value turns out to be wrong: no default replaces
	// it, and a declared mapping exists (so that a wrong role does not also read as a missing one).
	w.given[path] = true
	sv := dst
	if f.kind == kindStruct && f.ptr {
		dst.Set(reflect.New(f.typ))
		sv = dst.Elem()
	}
	// The Marker sees every value of a scalar field and the mappings found where a mapping or a
	// list is expected.
	if f.kind != kindStruct && f.kind != kindList || r != nil && r.Kind == yaml.MappingNode {
		if msg := w.mark(path, r, false); msg != "" {
			w.badf(path, "%s", msg)
			return false
		}
	}
	switch f.kind {
	case kindStruct:
		w.mapping(r, path, f.sub, sv)
		return true
	case kindList:
		return w.list(r, path, f, dst)
	}
	x, ok := w.scalar(r, path, f, f.kind)
	if !ok {
		return false
	}
	if f.ptr {
		dst.Set(reflect.New(f.typ))
		dst = dst.Elem()
	}
	setScalar(dst, x)
	return true
}

// list decodes a YAML sequence of scalars and reports whether every element decoded.
func (w *walker) list(r *yaml.Node, path string, f *field, dst reflect.Value) bool {
	if r == nil || r.Kind != yaml.SequenceNode {
		want := map[kind]string{kindString: "strings", kindFloat: "numbers", kindInt: "ints", kindUint: "ints",
			kindBool: "bools", kindStruct: "mappings"}[f.elem]
		if b := f.bound(); b != "" {
			want += " " + b
		}
		w.badf(path, "must be a list of %s, got %s", want, describe(r))
		return false
	}
	out := reflect.MakeSlice(f.typ, len(r.Content), len(r.Content))
	okAll := true
	for i, e := range r.Content {
		ep := fmt.Sprintf("%s[%d]", path, i)
		e = resolve(e)
		if msg := w.mark(ep, e, false); msg != "" {
			w.badf(ep, "%s", msg)
			okAll = false
			continue
		}
		if f.elem == kindStruct {
			w.mapping(e, ep, f.sub, out.Index(i))
			continue
		}
		x, ok := w.scalar(e, ep, f, f.elem)
		if ok {
			setScalar(out.Index(i), x)
		}
		okAll = okAll && ok
	}
	dst.Set(out)
	return okAll
}

// setScalar stores a decoded scalar (int64, uint64, float64, bool or string) in dst.
func setScalar(dst reflect.Value, x any) {
	switch x := x.(type) {
	case int64:
		dst.SetInt(x)
	case uint64:
		dst.SetUint(x)
	case float64:
		dst.SetFloat(x)
	case bool:
		dst.SetBool(x)
	case string:
		dst.SetString(x)
	}
}

// isWholeNumeral reports whether s is an optionally signed run of decimal digits.
func isWholeNumeral(s string) bool {
	s = strings.TrimPrefix(strings.TrimPrefix(s, "-"), "+")
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// scalar decodes the scalar node r of kind k, reporting a wrong YAML kind or an int that does not
// fit in the field.
func (w *walker) scalar(r *yaml.Node, path string, f *field, k kind) (any, bool) {
	isScalar := r != nil && r.Kind == yaml.ScalarNode
	tag := ""
	if isScalar {
		tag = r.ShortTag()
	}
	switch k {
	case kindInt, kindUint:
		want := "an int"
		if f.word != "" {
			want = fmt.Sprintf("an int %s or %q", f.bound(), f.word)
		}
		// A numeral too large for the field says what the field takes, not the machine's range.
		tooLarge := "an int " + f.intRange(math.MinInt64, math.MaxInt64)
		if k == kindUint {
			tooLarge = fmt.Sprintf("an int between 0 and %d", uint64(math.MaxUint64))
		}
		if f.word != "" {
			tooLarge = want
		}
		if msg := LeadingZeroNumeral(r); msg != "" {
			w.badf(path, "must be %s, got %s", want, msg)
			return nil, false
		}
		if tag == "!!float" && isWholeNumeral(r.Value) {
			if _, err := strconv.ParseInt(r.Value, 10, 64); err == nil {
				// A small whole numeral is a float only through an explicit tag (!!float 2).
				w.badf(path, "must be %s, got %s tagged !!float; write the number without the tag", want, r.Value)
				return nil, false
			}
			// YAML reads an integer numeral beyond 64 bits as a float.
			w.badf(path, "must be %s, got %s, which is out of range", tooLarge, r.Value)
			return nil, false
		}
		if tag != "!!int" {
			w.badf(path, "must be %s, got %s", want, describe(r))
			return nil, false
		}
		if k == kindUint {
			var x uint64
			if r.Decode(&x) != nil {
				w.badf(path, "must be an int between 0 and %d, got %s", uint64(math.MaxUint64), r.Value)
				return nil, false
			}
			return x, true
		}
		var x int64
		if r.Decode(&x) != nil {
			w.badf(path, "must be %s, got %s, which is out of range", tooLarge, r.Value)
			return nil, false
		}
		if f.bits < 64 && int64(int32(x)) != x {
			w.badf(path, "must be an int %s, got %d, which is out of range", f.intRange(math.MinInt32, math.MaxInt32), x)
			return nil, false
		}
		return x, true
	case kindFloat:
		var x float64
		if msg := LeadingZeroNumeral(r); msg != "" {
			w.badf(path, "must be a number, got %s", msg)
			return nil, false
		}
		if _, err := strconv.ParseFloat(r.Value, 64); tag == "!!str" && r.Style == 0 && errors.Is(err, strconv.ErrRange) {
			// YAML reads a numeral beyond float64's range (1e400) as a string.
			w.badf(path, "must be a finite number, got %s, which is out of range", r.Value)
			return nil, false
		}
		if (tag != "!!int" && tag != "!!float") || r.Decode(&x) != nil {
			w.badf(path, "must be a number, got %s", describe(r))
			return nil, false
		}
		if math.IsNaN(x) || math.IsInf(x, 0) {
			w.badf(path, "must be a finite number, got %s", describe(r))
			return nil, false
		}
		return x, true
	case kindBool:
		var x bool
		if tag != "!!bool" || r.Decode(&x) != nil {
			w.badf(path, "must be a bool (true or false), got %s", describe(r))
			return nil, false
		}
		return x, true
	}
	switch {
	case !isScalar:
		w.badf(path, "must be a string, got %s", describe(r))
		return nil, false
	case tag == "!!null" && f.optional:
		w.badf(path, "must be a string, got null; leave the key out for its default")
		return nil, false
	case tag == "!!null":
		w.badf(path, "must be a string, got null")
		return nil, false
	case tag != "!!str":
		w.badf(path, "must be a string, got %s; quote it if it is meant as text", describe(r))
		return nil, false
	}
	if to, ok := f.alias[r.Value]; ok {
		return to, true
	}
	return r.Value, true
}

// declared reports whether mapping m has key with a value other than null: a null section takes
// its default, as if absent (so --set router=null drops a section).
func declared(m *yaml.Node, key string) bool {
	i := findKey(m, key)
	if i < 0 {
		return false
	}
	v := resolve(m.Content[i])
	return v != nil && !(v.Kind == yaml.ScalarNode && v.ShortTag() == "!!null")
}
