package config

import (
	"fmt"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"
)

// This file applies --set overrides (dynosim-spec.md §2.3) to a parsed document, before it is
// walked.
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
		if isIndex(s) || strings.ContainsAny(s, "[]") {
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
	if _, b, bad := firstInvalidUTF8([]byte(rhs)); bad {
		// yaml.v3 would say only "incomplete UTF-8 octet sequence".
		return nil, fmt.Sprintf("invalid YAML value: byte 0x%02X is not UTF-8 (the shell passed another encoding, e.g. Latin-1); give it in UTF-8", b)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(rhs), &doc); err != nil {
		msg := "invalid YAML value: " + strings.TrimPrefix(yamlErrorMsg(err), "invalid YAML: ")
		if strings.HasPrefix(strings.TrimSpace(rhs), "{") && colonWithoutSpace.MatchString(rhs) {
			msg += "; in a {...} mapping a key's colon needs a space after it: {choices: [a, b]}, not {choices:[a,b]}"
		}
		return nil, msg
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}, ""
	}
	return doc.Content[0], ""
}

// colonWithoutSpace finds a key written against its value (choices:[...], type:fixed), which YAML
// reads as one plain scalar inside a {...} mapping.
var colonWithoutSpace = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*:[^\s/:]`)

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

// MappingValue returns the value of key in the YAML mapping m, or nil when m is nil, not a
// mapping, or has no such key (aliased keys are resolved).
func MappingValue(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	if i := findKey(m, key); i >= 0 {
		return m.Content[i]
	}
	return nil
}
