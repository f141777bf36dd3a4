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
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	w := &walker{file: file, marker: o.marker, given: map[string]bool{}}
	c := &Config{File: file, HasRouter: declared(root, "router"), HasPlanner: declared(root, "planner")}
	w.mapping(root, "", rootSchema, reflect.ValueOf(c).Elem())
	if !w.given["engine"] && !w.isBad("engine") {
		return nil, false
	}
	if len(w.errs) > 0 || len(w.bad) > 0 {
		return nil, false
	}
	applyDefaults(c, w.given, w.isBad)
	t = &Template{c: c, given: w.given, file: file, marker: o.marker}
	for _, p := range paths {
		s, ok := newSlot(p)
		if !ok || !w.given[p] {
			return nil, false
		}
		t.slots = append(t.slots, s)
	}
	return t, true
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
// of the i-th varied field (NewTemplate's paths[i]) replaced by the scalar node values[i]. ok is
// false when the walk would report a problem with one of those values (a value of the wrong kind
// or out of the field's Go range): the caller decodes that tree itself.
//
// The Config shares its memory with the template except the mappings on the way to a varied
// field: it must be read, not changed.
func (t *Template) Instance(values []*yaml.Node) (cfg *Config, err error, ok bool) {
	c, ok := t.Fill(values)
	if !ok {
		return nil, nil, false
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
func (t *Template) Fill(values []*yaml.Node) (cfg *Config, ok bool) {
	if len(values) != len(t.slots) {
		return nil, false
	}
	c := new(Config)
	*c = *t.c
	w := &walker{file: t.file, marker: t.marker, given: t.given}
	var copied []uintptr // the mappings copied for this instance
	for i, s := range t.slots {
		v := reflect.ValueOf(c).Elem()
		for k, index := range s.steps {
			v = v.Field(index)
			if s.ptr[k] {
				if v.IsNil() {
					return nil, false
				}
				if p := v.Pointer(); !containsPtr(copied, p) {
					n := reflect.New(v.Type().Elem())
					n.Elem().Set(v.Elem())
					v.Set(n)
					copied = append(copied, n.Pointer())
				}
				v = v.Elem()
			}
		}
		dst := v.Field(s.f.index)
		// As walker.field does for a scalar field the YAML gives.
		n := resolve(values[i])
		if msg := w.mark(s.path, n, false); msg != "" {
			return nil, false
		}
		x, good := w.scalar(n, s.path, s.f, s.f.kind)
		if !good || len(w.errs) > 0 {
			return nil, false
		}
		if s.f.ptr {
			p := reflect.New(s.f.typ)
			setScalar(p.Elem(), x)
			dst.Set(p)
		} else {
			setScalar(dst, x)
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
