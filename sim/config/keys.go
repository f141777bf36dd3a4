package config

import (
	"fmt"
	"strings"

	"github.com/agnivade/levenshtein"
	"gopkg.in/yaml.v3"
)

// KeyFilter tells CheckKeys which entries of the tree are the caller's own. CheckKeys calls it
// for every mapping entry before checking it, with the entry's full dotted path, its value n and
// whether the prediction schema has that key at that place (known). When it returns true the
// entry is neither reported nor entered: a sweep spec uses it for its search domains, whose
// choices and range keys are not keys of the schema, and for the keys it reports itself.
type KeyFilter func(path string, n *yaml.Node, known bool) bool

// CheckKeys walks the YAML tree root (a mapping: a prediction config, or the prediction part of a
// sweep spec) along the prediction schema and reports every key the schema does not have at its
// place, and every key it refuses, each once, as an Error naming file and the key's full dotted
// path. The message is Decode's for the same key: "unknown field; valid fields: <the keys valid
// there>" (for a tagged union, the keys of the variant its discriminator names, or of every
// variant when the discriminator is not a plain known value), or the refusal.
//
// Only keys are checked: values, kinds and the fields a union's variant does not accept are
// left to Decode. Every worker role is checked, whether or not the mode uses it. A value of the
// wrong kind (a scalar where a mapping is expected, a mapping where a scalar is) is not entered.
// skip (nil: none) claims entries for the caller, see KeyFilter. The result is nil when every
// key is known.
func CheckKeys(root *yaml.Node, file string, skip KeyFilter) Errors {
	c := &keyChecker{file: file, skip: skip}
	c.mapping(resolve(root), "", rootSchema)
	return c.errs
}

// keyChecker collects the key errors of one tree.
type keyChecker struct {
	file string
	skip KeyFilter
	errs Errors
}

// mapping checks the keys of the mapping n at path against the schema s and enters the values of
// the known ones.
func (c *keyChecker) mapping(n *yaml.Node, path string, s *structSchema) {
	if n == nil || n.Kind != yaml.MappingNode {
		return
	}
	variant := ""
	if d := s.disc; d != nil {
		variant = d.def
		if i := findKey(n, d.key); i >= 0 {
			variant = ""
			if v := resolve(n.Content[i]); v != nil && v.Kind == yaml.ScalarNode && v.ShortTag() == "!!str" {
				variant = v.Value
				if to, ok := d.alias[variant]; ok {
					variant = to
				}
			}
		}
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := resolve(n.Content[i]), resolve(n.Content[i+1])
		if k == nil || k.Kind != yaml.ScalarNode {
			continue // Decode reports a key that is not a string
		}
		kp := join(path, k.Value)
		f := s.lookup(k.Value)
		if c.skip != nil && c.skip(kp, v, f != nil) {
			continue
		}
		switch {
		case f != nil:
			c.value(v, kp, f)
		case s.refusedKey(k.Value) != nil:
			c.errs = append(c.errs, &Error{File: c.file, Path: kp, Msg: s.refusedKey(k.Value).refuse})
		default:
			c.errs = append(c.errs, &Error{File: c.file, Path: kp, Msg: unknownFieldMsg(s, variant, k.Value)})
		}
	}
}

// value enters the value v of the known field f at path: a mapping, a list of mappings, or the
// mapping form of an int (its dist tag), which is a distribution when it has the distribution's
// discriminator.
func (c *keyChecker) value(v *yaml.Node, path string, f *field) {
	switch {
	case v == nil:
	case f.kind == kindStruct:
		c.mapping(v, path, f.sub)
	case f.kind == kindList && f.elem == kindStruct && v.Kind == yaml.SequenceNode:
		for i, e := range v.Content {
			c.mapping(resolve(e), fmt.Sprintf("%s[%d]", path, i), f.sub)
		}
	case f.distSub != nil && v.Kind == yaml.MappingNode && findKey(v, f.distSub.disc.key) >= 0:
		// Without its discriminator the mapping is no distribution, and Decode reports it whole.
		c.mapping(v, path, f.distSub)
	}
}

// unknownFieldMsg is the message of key, which the schema s does not have: "unknown field; valid
// fields: " and the keys the union variant accepts (every key of s when variant is not one of its
// variants, or s is no union), then " (did you mean K?)" when a valid key K is a close spelling
// of key (NearestName).
func unknownFieldMsg(s *structSchema, variant, key string) string {
	keys := s.keys(variant)
	msg := unknownField + "; valid fields: " + strings.Join(keys, ", ")
	if near := NearestName(key, keys); near != "" {
		msg += " (did you mean " + near + "?)"
	}
	return msg
}

// NearestName is the name of keys closest to key by edit (Levenshtein) distance when that
// distance is at most 2 and less than half key's length (a short name is near too many others to
// suggest one); "" when none is, or two are equally close. It suggests the field, column or
// setting a misspelt name meant.
func NearestName(key string, keys []string) string {
	best, bestD, tie := "", min(3, (len(key)+1)/2), false
	for _, k := range keys {
		switch d := levenshtein.ComputeDistance(key, k); {
		case d < bestD:
			best, bestD, tie = k, d, false
		case d == bestD && best != "":
			tie = true
		}
	}
	if tie {
		return ""
	}
	return best
}
