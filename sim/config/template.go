package config

import (
	"reflect"
	"strings"

	"gopkg.in/yaml.v3"
)

// A Template decodes once the trees of a family that differ only in the values of some int and
// float fields (the varied fields: a sweep's numeric search domains). Instance then gives each
// member's Config and error, the ones DecodeNode gives for the member's tree, by copying the
// template's decoded config, setting the varied fields and validating the copy: the walk and the
// defaults step are not repeated.
//
// This holds because neither step reads an int or float field's value to decide anything else:
// the walk decodes each scalar on its own (Instance decodes the varied ones again, as the walk
// would), and the defaults step (applyDefaults) reads only which fields were given, strings and
// discriminators, except for a distribution's members, whose mean becomes the token count;
// NewTemplate refuses varied fields inside a distribution or a list. TestTemplateMatchesDecodeNode
// holds Instance to DecodeNode for every sweepable numeric field.
type Template struct {
	c      *Config
	given  map[string]bool
	file   string
	marker Marker
	slots  []slot
	// clean reports whether the template's fields other than the varied ones meet their tags (and
	// no varied field is one its union does not take): then an instance whose values meet theirs
	// (Value.tagged) needs only the cross-field rules checked.
	clean bool
}

// A Value is the value of a varied field as Instance takes it: decoded once (Template.Value) for
// any number of instances.
type Value struct {
	x any
	// ok reports whether the walk takes the value; tagged whether it meets the field's tags.
	ok, tagged bool
}

// slot is one varied field: its path, schema field, and the way to it from the Config.
type slot struct {
	path string
	f    *field
	// steps are the struct field indexes from Config to the field's struct; ptr[i] says step i
	// goes through a pointer (a mapping such as a worker role, copied before it is written).
	steps []int
	ptr   []bool
}

// NewTemplate decodes root as DecodeNode does (file and opts as there), as the template of the
// trees that differ from root only in the scalar values of the int and float fields at paths
// (dotted field paths, e.g. engine.workers.aggregated.parallelism.replicas, each of which root
// gives a value). ok is false, and Instance must not be used, when a member could decode
// differently from the template in more than those values: a path that is not an int or float
// field reached through mappings alone (a list element, a distribution's member), a path root
// does not give, or a walk that reported a problem (a validation problem is fine: Instance
// finds each member's own).
func NewTemplate(root *yaml.Node, file string, paths []string, opts ...Option) (t *Template, ok bool) {
	if root == nil || root.Kind != yaml.MappingNode {
		return nil, false
	}
	w, c := walkRoot(root, file, opts...)
	if !w.given["engine"] && !w.isBad("engine") {
		return nil, false
	}
	if len(w.errs) > 0 || len(w.bad) > 0 {
		return nil, false
	}
	applyDefaults(c, w.given, w.isBad)
	t = &Template{c: c, given: w.given, file: file, marker: w.marker}
	skip := map[string]bool{}
	for _, p := range paths {
		s, ok := newSlot(p)
		if !ok || !w.given[p] {
			return nil, false
		}
		t.slots = append(t.slots, s)
		skip[p] = true
	}
	v := &validator{file: file, given: w.given, isBad: w.isBad, skip: skip}
	v.fields(rootSchema, reflect.ValueOf(c).Elem(), "")
	t.clean = len(v.errs) == 0
	return t, true
}

// Value decodes the scalar node n as the value of the i-th varied field (NewTemplate's paths[i])
// as the walk decodes it, and checks it against the field's tags (its enum, range and limit) as
// validation does.
func (t *Template) Value(i int, n *yaml.Node) Value {
	s := t.slots[i]
	// As walker.field does for a scalar field the YAML gives.
	w := &walker{file: t.file, marker: t.marker, given: t.given}
	n = resolve(n)
	if msg := w.mark(s.path, n, false); msg != "" {
		return Value{}
	}
	x, good := w.scalar(n, s.path, s.f, s.f.kind)
	if !good || len(w.errs) > 0 {
		return Value{}
	}
	// As validator.field does for it: the field is given, so its value is checked.
	rv := reflect.New(s.f.typ).Elem()
	setScalar(rv, x)
	v := &validator{file: t.file, given: t.given}
	v.value(s.f, rv, s.path)
	return Value{x: x, ok: true, tagged: len(v.errs) == 0}
}

// newSlot finds the int or float field at path through struct fields alone.
func newSlot(path string) (slot, bool) {
	s := slot{path: path}
	schema := rootSchema
	keys := strings.Split(path, ".")
	for i, key := range keys {
		j := fieldIndex(schema, key)
		if j < 0 {
			return slot{}, false
		}
		f := schema.fields[j]
		if i == len(keys)-1 {
			if f.kind != kindInt && f.kind != kindFloat || f.discriminator {
				return slot{}, false
			}
			s.f = f
			return s, true
		}
		if f.kind != kindStruct {
			return slot{}, false
		}
		s.steps, s.ptr = append(s.steps, f.index), append(s.ptr, f.ptr)
		schema = f.sub
	}
	return slot{}, false
}

// Instance returns the Config and error DecodeNode returns for the template's tree with the value
// of the i-th varied field (NewTemplate's paths[i]) replaced by values[i] (Template.Value of the
// replacing scalar node). ok is false when the walk would report a problem with one of those
// values (a value of the wrong kind or out of the field's Go range): the caller decodes that tree
// itself.
//
// A config whose every field meets its tags is validated by the cross-field rules alone; one
// that breaks a rule or a tag goes through the whole validation, which gives DecodeNode's errors
// in its order.
//
// The Config shares its memory with the template except the mappings on the way to a varied
// field: it must be read, not changed.
func (t *Template) Instance(values []Value) (cfg *Config, err error, ok bool) {
	return t.InstanceIn(nil, values)
}

// A Scratch is the memory of one instance at a time: InstanceIn fills it instead of allocating a
// config per instance, for a goroutine that reads each instance only until it builds the next.
// The zero value is ready to use.
type Scratch struct {
	c Config
	// copies are the copied mappings, reused by position (the slots' order).
	copies []reflect.Value
}

// InstanceIn is Instance building the config in sc (nil: a new config), which it overwrites on
// the next call with sc.
func (t *Template) InstanceIn(sc *Scratch, values []Value) (cfg *Config, err error, ok bool) {
	c, ok := t.fill(sc, values)
	if !ok {
		return nil, nil, false
	}
	tagged := t.clean
	for _, v := range values {
		tagged = tagged && v.tagged
	}
	if tagged {
		v := &validator{file: t.file, given: t.given}
		v.rules(c)
		if len(v.errs) == 0 {
			if u := attributeSets(c.Unsupported(), nil); len(u) > 0 {
				return nil, u, true
			}
			return c, nil, true
		}
	}
	errs, unsupported := finish(c, &walker{file: t.file, given: t.given}, nil)
	if len(errs) > 0 {
		return nil, errs, true
	}
	if len(unsupported) > 0 {
		return nil, unsupported, true
	}
	return c, nil, true
}

// Fill is Instance without validation: the template's config with the varied fields set to
// values (ok false when the walk would refuse one of them). It shares memory with the template
// as Instance's does.
func (t *Template) Fill(values []Value) (cfg *Config, ok bool) { return t.fill(nil, values) }

// fill is Fill in sc (nil: new memory).
func (t *Template) fill(sc *Scratch, values []Value) (cfg *Config, ok bool) {
	if len(values) != len(t.slots) {
		return nil, false
	}
	var c *Config
	if sc != nil {
		c = &sc.c
	} else {
		c = new(Config)
	}
	*c = *t.c
	var mem [8]uintptr
	copied := mem[:0] // the mappings copied for this instance
	for i, s := range t.slots {
		if !values[i].ok {
			return nil, false
		}
		v := reflect.ValueOf(c).Elem()
		for k, index := range s.steps {
			v = v.Field(index)
			if s.ptr[k] {
				if v.IsNil() {
					return nil, false
				}
				if p := v.Pointer(); !containsPtr(copied, p) {
					var n reflect.Value
					switch k := len(copied); {
					case sc == nil:
						n = reflect.New(v.Type().Elem())
					case k < len(sc.copies) && sc.copies[k].Type() == v.Type():
						n = sc.copies[k]
					default:
						n = reflect.New(v.Type().Elem())
						sc.copies = append(sc.copies[:min(k, len(sc.copies))], n)
					}
					n.Elem().Set(v.Elem())
					v.Set(n)
					copied = append(copied, n.Pointer())
				}
				v = v.Elem()
			}
		}
		dst := v.Field(s.f.index)
		if s.f.ptr {
			p := reflect.New(s.f.typ)
			setScalar(p.Elem(), values[i].x)
			dst.Set(p)
		} else {
			setScalar(dst, values[i].x)
		}
	}
	return c, true
}

func containsPtr(ps []uintptr, p uintptr) bool {
	for _, q := range ps {
		if q == p {
			return true
		}
	}
	return false
}
