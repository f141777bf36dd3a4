package config

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// This file reads the schema out of the struct tags of the types in config.go, once, into
// structSchema values that the walker, the defaults step and validation share. The tags:
//
//	yaml:"key"          the YAML key (the text before a comma); yaml:"-" is not part of the schema.
//	default:"v"         the value of an omitted field (applied after the walk, defaults.go).
//	enum:"a,b"          the valid strings, in the order messages list them. The typed enums Mode
//	                    and Policy take theirs from Modes and Policies.
//	word:"w"            the string w is also accepted and stored as the zero value
//	                    (context_length "max", bytes_per_token "auto"); implies optional.
//	gt:"x" min:"x"      the value must be > x, or >= x;
//	max:"x" or:"y"      and <= x; y is one more valid value outside that range. For a list the
//	                    range applies to each element.
//	optional:""         zero means unset: the enum and range apply only when the YAML gives the
//	                    field or the value is non-zero. Pointers are optional by nature (nil).
//	null:"omit"         a null value means the field is omitted (mappings always; scalars only
//	                    with this tag, otherwise null is a kind error);
//	null:"empty"        a null value means an empty mapping (a declared worker role).
//	limit:"Name"        a size bound of limits.go: an int must be <= Name; a float with
//	limit:"lo,hi"       lo and hi must be in [lo, hi] unless 0. lo and hi are numbers or names.
//	sweep:""            a sweep may search the field (grid places search domains only here).
//	discriminator:""    the field whose value selects the variant of a tagged union; its enum
//	                    lists the variants.
//	union:"a,b"         the union variants that accept the field (untagged: every variant).
//	reject:"t"          on a discriminator: how a member the variant does not accept is
//	                    reported, at the member's path; {type} is the variant, {key} the member,
//	                    {variants} the variants that accept it ("a or b").
//	rejectUnion:"t"     the same, once at the union's path. Without either the message is
//	                    "<path>.type='<type>' does not accept [<keys>]; accepted keys: <keys>".
//	alias:"a=b"         the discriminator value a is read as b.
//	refuse:"msg"        on a blank field of type refused: the key is known and always refused
//	                    with msg (and not listed among the valid fields).
//	dist:"GoField"      on an int field: the key also takes a mapping, decoded into the sibling
//	                    field GoField (a pointer to a struct, yaml:"-"); the defaults step then
//	                    stores the mapping's Expected() mean, rounded, in the int.
//
// A list holds scalars or mappings (a slice of structs); a list's elements are addressed as
// path[i].

// kind is the Go shape of a schema field.
type kind int

const (
	kindInt    kind = iota // int or int64: a YAML int
	kindUint               // uint64: a YAML int >= 0
	kindFloat              // float64: a finite YAML int or float
	kindBool               // bool: true or false
	kindString             // string (or a string type): a YAML string
	kindList               // a slice of one of the scalar kinds: a YAML sequence
	kindStruct             // a struct or a pointer to one: a YAML mapping
)

// refused is the type of a blank field that names a key the schema recognises and refuses.
type refused struct{}

// field is one schema field.
type field struct {
	key   string
	index int // in the Go struct
	kind  kind
	elem  kind          // element kind of a list
	typ   reflect.Type  // the Go type (a pointer's element for ptr)
	ptr   bool          // held through a pointer: nil means unset
	bits  int           // int size
	sub   *structSchema // of a struct, or of a list's struct elements
	// dist is the index of the sibling field holding the mapping form of an int field (the
	// dist tag), -1 for none; distSub is that mapping's schema.
	dist    int
	distSub *structSchema

	def      string
	hasDef   bool
	enum     []string
	word     string
	lo, hi   float64 // range; NaN when absent
	loOpen   bool    // gt rather than min
	or       *float64
	optional bool
	null     string
	limitLo  float64 // NaN when the limit has no lower end
	limitHi  float64 // NaN when there is no limit
	sweep    bool

	discriminator bool
	variants      []string
	reject        string
	rejectUnion   string
	alias         map[string]string
	refuse        string
}

// structSchema is the schema of one struct type.
type structSchema struct {
	fields  []*field // in declaration order, without the refused keys
	refused []*field
	disc    *field // the discriminator of a tagged union, else nil
}

// typedEnums are the valid values of the typed string enums.
var typedEnums = map[reflect.Type][]string{
	reflect.TypeFor[Mode]():   names(Modes()),
	reflect.TypeFor[Policy](): names(Policies()),
}

func names[T ~string](vs []T) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = string(v)
	}
	return out
}

// rootSchema is the schema of Config. Building it panics on a malformed tag: that is a mistake in
// config.go, caught by every test, never a property of the input.
var rootSchema = buildSchema(reflect.TypeFor[Config](), map[reflect.Type]*structSchema{})

func buildSchema(t reflect.Type, seen map[reflect.Type]*structSchema) *structSchema {
	if s := seen[t]; s != nil {
		return s
	}
	s := &structSchema{}
	seen[t] = s
	for i := range t.NumField() {
		sf := t.Field(i)
		key, _, _ := strings.Cut(sf.Tag.Get("yaml"), ",")
		if key == "" || key == "-" {
			continue
		}
		f, err := newField(sf, key, i, seen)
		if err != nil {
			panic(fmt.Sprintf("config: %s.%s: %v", t.Name(), sf.Name, err))
		}
		if f.refuse != "" {
			s.refused = append(s.refused, f)
			continue
		}
		if name := sf.Tag.Get("dist"); name != "" {
			df, ok := t.FieldByName(name)
			if !ok || f.kind != kindInt || df.Type.Kind() != reflect.Pointer || df.Type.Elem().Kind() != reflect.Struct {
				panic(fmt.Sprintf("config: %s.%s: dist %q must name a pointer-to-struct sibling of an int field", t.Name(), sf.Name, name))
			}
			f.dist, f.distSub = df.Index[0], buildSchema(df.Type.Elem(), seen)
		}
		if f.discriminator {
			s.disc = f
		}
		s.fields = append(s.fields, f)
	}
	return s
}

func newField(sf reflect.StructField, key string, index int, seen map[reflect.Type]*structSchema) (*field, error) {
	tag := sf.Tag
	f := &field{key: key, index: index, typ: sf.Type, lo: math.NaN(), hi: math.NaN(),
		limitLo: math.NaN(), limitHi: math.NaN(), dist: -1}
	if msg, ok := tag.Lookup("refuse"); ok {
		if sf.Type != reflect.TypeFor[refused]() || msg == "" {
			return nil, fmt.Errorf("refuse needs a message on a field of type refused")
		}
		f.refuse = msg
		return f, nil
	}
	if f.typ.Kind() == reflect.Pointer {
		f.ptr, f.typ = true, f.typ.Elem()
	}
	var err error
	if f.kind, f.bits, err = kindOf(f.typ); err != nil {
		return nil, err
	}
	if f.kind == kindList {
		if f.elem, f.bits, err = kindOf(f.typ.Elem()); err != nil || f.elem == kindList {
			return nil, fmt.Errorf("a list holds scalars or structs")
		}
		if f.elem == kindStruct {
			f.sub = buildSchema(f.typ.Elem(), seen)
		}
	}
	if f.kind == kindStruct {
		f.sub = buildSchema(f.typ, seen)
	}
	f.def, f.hasDef = tag.Lookup("default")
	f.word = tag.Get("word")
	f.null = tag.Get("null")
	_, f.optional = tag.Lookup("optional")
	f.optional = f.optional || f.word != "" || f.ptr
	_, f.sweep = tag.Lookup("sweep")
	_, f.discriminator = tag.Lookup("discriminator")
	f.reject, f.rejectUnion = tag.Get("reject"), tag.Get("rejectUnion")
	if v := tag.Get("enum"); v != "" {
		f.enum = strings.Split(v, ",")
	} else if e, ok := typedEnums[f.typ]; ok {
		f.enum = e
	}
	if v := tag.Get("union"); v != "" {
		f.variants = strings.Split(v, ",")
	}
	if v := tag.Get("alias"); v != "" {
		from, to, ok := strings.Cut(v, "=")
		if !ok {
			return nil, fmt.Errorf("alias %q is not from=to", v)
		}
		f.alias = map[string]string{from: to}
	}
	for _, b := range []struct {
		name string
		dst  *float64
		open bool
	}{{"gt", &f.lo, true}, {"min", &f.lo, false}, {"max", &f.hi, false}} {
		if v, ok := tag.Lookup(b.name); ok {
			if *b.dst, err = strconv.ParseFloat(v, 64); err != nil {
				return nil, fmt.Errorf("%s: %v", b.name, err)
			}
			f.loOpen = f.loOpen || b.open
		}
	}
	if v, ok := tag.Lookup("or"); ok {
		x, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return nil, fmt.Errorf("or: %v", err)
		}
		f.or = &x
	}
	if v, ok := tag.Lookup("limit"); ok {
		if f.limitLo, f.limitHi, err = parseLimit(v, f.kind == kindFloat); err != nil {
			return nil, err
		}
	}
	switch {
	case f.null != "" && f.null != "omit" && f.null != "empty":
		return nil, fmt.Errorf("null must be omit or empty, got %q", f.null)
	case f.null == "empty" && f.kind != kindStruct:
		return nil, fmt.Errorf("null:\"empty\" needs a mapping")
	case f.discriminator && (f.kind != kindString || len(f.enum) == 0 || !f.hasDef):
		return nil, fmt.Errorf("a discriminator is a string with an enum and a default")
	case f.enum != nil && f.kind != kindString:
		return nil, fmt.Errorf("enum needs a string field")
	case f.hasDef && (f.ptr || f.kind == kindStruct || f.kind == kindList):
		return nil, fmt.Errorf("a default needs a scalar that is not a pointer")
	}
	if f.hasDef {
		if _, err := parseScalar(f.kind, f.def); err != nil {
			return nil, fmt.Errorf("default %q: %v", f.def, err)
		}
	}
	return f, nil
}

// kindOf maps a Go type to its kind; bits is the size of an int.
func kindOf(t reflect.Type) (kind, int, error) {
	switch t.Kind() {
	case reflect.Int, reflect.Int64:
		return kindInt, t.Bits(), nil
	case reflect.Uint64:
		return kindUint, 64, nil
	case reflect.Float64:
		return kindFloat, 64, nil
	case reflect.Bool:
		return kindBool, 0, nil
	case reflect.String:
		return kindString, 0, nil
	case reflect.Slice:
		return kindList, 0, nil
	case reflect.Struct:
		return kindStruct, 0, nil
	}
	return 0, 0, fmt.Errorf("type %s is not in the schema's vocabulary", t)
}

// parseLimit parses a limit tag: "Name" (an upper bound) or "lo,hi" (a float interval).
func parseLimit(v string, isFloat bool) (lo, hi float64, err error) {
	num := func(s string) (float64, error) {
		if x, ok := boundNames[s]; ok {
			return x, nil
		}
		return strconv.ParseFloat(s, 64)
	}
	a, b, pair := strings.Cut(v, ",")
	if pair != isFloat {
		return 0, 0, fmt.Errorf("limit %q: an int takes one bound, a float two", v)
	}
	lo = math.NaN()
	if pair {
		if lo, err = num(a); err != nil {
			return 0, 0, fmt.Errorf("limit %q: %v", v, err)
		}
		a = b
	}
	if hi, err = num(a); err != nil {
		return 0, 0, fmt.Errorf("limit %q: %v", v, err)
	}
	return lo, hi, nil
}

// parseScalar parses the text of a default tag.
func parseScalar(k kind, s string) (any, error) {
	switch k {
	case kindInt:
		return strconv.ParseInt(s, 10, 64)
	case kindUint:
		return strconv.ParseUint(s, 10, 64)
	case kindFloat:
		return strconv.ParseFloat(s, 64)
	case kindBool:
		return strconv.ParseBool(s)
	case kindString:
		return s, nil
	}
	return nil, fmt.Errorf("no default for this kind")
}

// accepts reports whether the union variant accepts f (fields of a non-union accept everything).
func (f *field) accepts(variant string) bool {
	return f.variants == nil || slices.Contains(f.variants, variant)
}

// keys returns the keys the variant accepts, or every key when the variant is not one of the
// union's (or the struct is no union).
func (s *structSchema) keys(variant string) []string {
	known := s.disc == nil || !slices.Contains(s.disc.enum, variant)
	var out []string
	for _, f := range s.fields {
		if known || f.accepts(variant) {
			out = append(out, f.key)
		}
	}
	return out
}

// lookup returns the field of s named key, or nil.
func (s *structSchema) lookup(key string) *field {
	for _, f := range s.fields {
		if f.key == key {
			return f
		}
	}
	return nil
}

// refusedKey returns the refused field named key, or nil.
func (s *structSchema) refusedKey(key string) *field {
	for _, f := range s.refused {
		if f.key == key {
			return f
		}
	}
	return nil
}

// hasRange reports whether f has a lower or upper bound.
func (f *field) hasRange() bool { return !math.IsNaN(f.lo) || !math.IsNaN(f.hi) }

// inRange reports whether x satisfies f's range (true without one).
func (f *field) inRange(x float64) bool {
	if f.or != nil && x == *f.or {
		return true
	}
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return !f.hasRange()
	}
	switch {
	case !math.IsNaN(f.lo) && (x < f.lo || (f.loOpen && x == f.lo)):
		return false
	case !math.IsNaN(f.hi) && x > f.hi:
		return false
	}
	return true
}

// bound renders f's range after a noun: "> 0", ">= 2", "in [0, 1]", "in (0, 1]".
func (f *field) bound() string {
	switch {
	case !math.IsNaN(f.lo) && !math.IsNaN(f.hi):
		open := "["
		if f.loOpen {
			open = "("
		}
		return fmt.Sprintf("in %s%s, %s]", open, fmtFloat(f.lo), fmtFloat(f.hi))
	case !math.IsNaN(f.hi):
		return "<= " + fmtFloat(f.hi)
	case f.loOpen:
		return "> " + fmtFloat(f.lo)
	case !math.IsNaN(f.lo):
		return ">= " + fmtFloat(f.lo)
	}
	return ""
}

// intRange is the values int field f takes, for a numeral beyond what it can hold: its bound and
// its size limit ("> 0 and <= 2147483647"), or, for a field with neither, "between lo and hi",
// the range of its Go type.
func (f *field) intRange(lo, hi int64) string {
	b := f.bound()
	if !math.IsNaN(f.limitHi) && math.IsNaN(f.hi) {
		limit := "<= " + strconv.FormatFloat(f.limitHi, 'f', -1, 64)
		if b == "" {
			b = limit
		} else {
			b += " and " + limit
		}
	}
	if b == "" {
		return fmt.Sprintf("between %d and %d", lo, hi)
	}
	return b
}

// rangeMsg says why x is outside f's range, in the words of dynosim-spec.md §3: "must be an int >
// 0, got 0" (an int > x), "must be > 0, got 0" (a float), "must be >= 2, got 1", "must be in [0,
// 1], got 1.5", `must be an int > 0 or "max", got 0` (a field with a word), "must be >= 1 or -1,
// got 0".
func (f *field) rangeMsg(x float64, got string) string {
	k := f.kind
	if k == kindList {
		k = f.elem
	}
	want := f.bound()
	switch {
	case k == kindInt && f.loOpen && math.IsNaN(f.hi):
		want = "an int " + want
	case k == kindFloat && (math.IsNaN(x) || math.IsInf(x, 0)) && math.IsNaN(f.hi):
		want = "a finite number " + want
	}
	if f.word != "" {
		want += fmt.Sprintf(" or %q", f.word)
	}
	if f.or != nil {
		want += " or " + fmtFloat(*f.or)
	}
	return "must be " + want + ", got " + got
}

// Kind is the YAML kind of a field's concrete value.
type Kind int

// The kinds of Field.Kind.
const (
	KindInt    Kind = iota + 1 // a YAML int
	KindFloat                  // a finite YAML int or float
	KindBool                   // true or false
	KindString                 // a YAML string; see Field.Enum
	KindList                   // a YAML sequence of scalars
)

// Field describes one concrete-valued field of the prediction schema, as its struct tags in
// config.go define it. Fields and Lookup return them; grid places search domains on the fields
// whose Sweep is true and checks each domain value with Want and InRange.
type Field struct {
	// Path is the dotted YAML path, e.g. engine.workers.prefill.parallelism.tensor.
	Path string
	// Kind is the YAML kind of a value.
	Kind Kind
	// Enum lists the valid strings of an enumerated string field, in schema order (nil otherwise).
	Enum []string
	// Variants lists the values of the enclosing tagged union's discriminator that accept the
	// field (nil: every value, or no union).
	Variants []string
	// Sweep reports whether a sweep may search the field (its `sweep` tag).
	Sweep bool
	// Nullable reports whether a YAML null means the field is not set (its null:"omit" tag on
	// a scalar), so that a sweep may take null as a choice.
	Nullable bool
	// Word is the string the field also accepts in place of a number (its `word` tag, e.g. max
	// for engine.context_length), stored as the zero value; "" for none.
	Word string

	f *field
}

// Want describes a valid value for messages: "an int > 0", `an int > 0 or "max"`, "a number >= 0", "one of
// round_robin, kv_router, random, least_loaded", "a bool".
func (f Field) Want() string {
	if len(f.Enum) > 0 {
		return "one of " + strings.Join(f.Enum, ", ")
	}
	noun := map[Kind]string{KindInt: "an int", KindFloat: "a number", KindBool: "a bool", KindString: "a string",
		KindList: "a list"}[f.Kind]
	if b := f.f.bound(); b != "" {
		noun += " " + b
	}
	if f.Word != "" {
		noun += fmt.Sprintf(" or %q", f.Word)
	}
	return noun
}

// InRange reports whether the number x is within the field's range (its gt, min, max and or tags;
// true for a field without one). It does not check the kind or the limits of limits.go.
func (f Field) InRange(x float64) bool { return f.f.inRange(x) }

func exportField(path string, f *field) Field {
	k := map[kind]Kind{kindInt: KindInt, kindUint: KindInt, kindFloat: KindFloat, kindBool: KindBool,
		kindString: KindString, kindList: KindList}[f.kind]
	return Field{Path: path, Kind: k, Enum: slices.Clone(f.enum), Variants: slices.Clone(f.variants), Sweep: f.sweep,
		Nullable: f.null == "omit" && f.kind != kindStruct, Word: f.word, f: f}
}

// Fields lists every concrete-valued field of the prediction schema in schema order (the order
// of the YAML keys in config.go), with the worker-role fields once per role. Keys the schema
// refuses are not listed.
//
// The fields of a list of mappings are listed under path[] (traffic.source.components[].weight),
// those of an int's mapping form under the int's path (traffic.source.input_tokens.mean); a list
// of mappings already being listed is not entered again (a mixture component's source lists no
// components of its own).
func Fields() []Field {
	var out []Field
	open := map[*structSchema]bool{}
	var walk func(s *structSchema, path string)
	walk = func(s *structSchema, path string) {
		for _, f := range s.fields {
			p := join(path, f.key)
			switch {
			case f.kind == kindStruct:
				walk(f.sub, p)
			case f.kind == kindList && f.elem == kindStruct:
				if !open[f.sub] {
					open[f.sub] = true
					walk(f.sub, p+"[]")
					delete(open, f.sub)
				}
			default:
				out = append(out, exportField(p, f))
				if f.distSub != nil {
					walk(f.distSub, p)
				}
			}
		}
	}
	walk(rootSchema, "")
	return out
}

// Lookup returns the concrete-valued field at the dotted path (e.g.
// engine.workers.decode.scheduler.max_sequences); ok is false when there is none (an unknown
// path, or a mapping such as engine.workers).
//
// An element of a list of mappings is addressed with its index (or [] as Fields lists it), and
// the mapping form of an int through the int's key: traffic.source.components[0].weight,
// traffic.source.input_tokens.mean.
func Lookup(path string) (f Field, ok bool) {
	s := rootSchema
	segs := strings.Split(path, ".")
	for i, seg := range segs {
		key, indexed := seg, false
		if j := strings.IndexByte(seg, '['); j > 0 && strings.HasSuffix(seg, "]") {
			if idx := seg[j+1 : len(seg)-1]; idx != "" { // "[]" is the listing form of Fields
				if _, err := strconv.Atoi(idx); err != nil {
					return Field{}, false
				}
			}
			key, indexed = seg[:j], true
		}
		sf := s.lookup(key)
		last := i == len(segs)-1
		switch {
		case sf == nil:
			return Field{}, false
		case indexed:
			if sf.kind != kindList || sf.elem != kindStruct || last {
				return Field{}, false
			}
			s = sf.sub
		case sf.kind == kindStruct:
			s = sf.sub
		case last:
			return exportField(path, sf), true
		case sf.distSub != nil:
			s = sf.distSub
		default:
			return Field{}, false
		}
	}
	return Field{}, false
}

// Sections lists the top-level keys of the prediction schema (traffic, engine, router, planner,
// evaluation) in schema order.
func Sections() []string {
	out := make([]string, len(rootSchema.fields))
	for i, f := range rootSchema.fields {
		out[i] = f.key
	}
	return out
}

// RefusedSection returns the message Decode gives the top-level key key when the schema refuses
// it (e.g. execution), and whether it does.
func RefusedSection(key string) (msg string, ok bool) {
	if f := rootSchema.refusedKey(key); f != nil {
		return f.refuse, true
	}
	return "", false
}
