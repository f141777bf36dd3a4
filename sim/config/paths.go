package config

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/servesweep/servesweep/sim/timing"
	"gopkg.in/yaml.v3"
)

// filePathFields are the dotted paths of the fields that name files (traffic.source.paths): each
// is a string or a list of strings. A relative path a YAML file gives in one of them resolves
// against that file's folder (ResolvePaths).
var filePathFields = []string{"traffic.source.paths"}

// ResolvePaths rewrites, in root (the parsed top-level mapping of the YAML file file), every
// relative path of the fields that name files (traffic.source.paths), and an engine.model that
// names a model directory by a relative path (RelativeModelDir), to the absolute path of it joined to dir, the file's
// folder (made absolute against the working directory when relative), so that a file's paths
// name the files beside it from any working directory. Call it before applying --set overrides:
// a path an override gives stays as typed and resolves against the working directory. Absolute
// paths, empty strings, values other than strings and values that begin with a ${NAME}
// reference (a sweep spec's environment variable, whose value is used as it is) are left alone.
// Aliased nodes are rewritten once. The only error is a working directory that cannot be read,
// reported as Errors naming file.
func ResolvePaths(root *yaml.Node, file, dir string) error {
	return resolvePaths(root, file, dir).err()
}

// resolvePaths is ResolvePaths with its problem as Errors.
func resolvePaths(root *yaml.Node, file, dir string) Errors {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return Errors{{File: file, Msg: "cannot resolve the relative paths of the file against its folder " + dir + ": " + err.Error(), Err: err}}
	}
	for _, f := range filePathFields {
		n := resolve(root)
		for _, key := range strings.Split(f, ".") {
			n = resolve(MappingValue(n, key))
		}
		if n == nil {
			continue
		}
		values := []*yaml.Node{n}
		if n.Kind == yaml.SequenceNode {
			values = n.Content
		}
		for _, v := range values {
			v = resolve(v)
			if v == nil || v.Kind != yaml.ScalarNode || v.ShortTag() != "!!str" || v.Value == "" ||
				filepath.IsAbs(v.Value) || strings.HasPrefix(v.Value, "${") {
				continue
			}
			v.Value = filepath.Join(abs, v.Value)
		}
	}
	resolveModelDirs(root, abs)
	return nil
}

// resolveModelDirs rewrites, in root, each engine.model value (fixed, or a sweep spec's choices)
// that names a model directory by a relative path (RelativeModelDir) to its absolute path joined
// to dir, as resolvePaths does for trace paths.
func resolveModelDirs(root *yaml.Node, dir string) {
	n := resolve(MappingValue(resolve(MappingValue(resolve(root), "engine")), "model"))
	values := []*yaml.Node{n}
	if n != nil && n.Kind == yaml.MappingNode {
		values = nil
		if c := resolve(MappingValue(n, "choices")); c != nil && c.Kind == yaml.SequenceNode {
			values = c.Content
		}
	}
	for _, v := range values {
		if v = resolve(v); v != nil && v.Kind == yaml.ScalarNode && v.ShortTag() == "!!str" && RelativeModelDir(v.Value, dir) {
			v.Value = filepath.Join(dir, v.Value)
		}
	}
}

// RelativeModelDir reports whether the engine.model value id names a model directory by a path
// relative to dir (a YAML file's folder, or the working directory for a --set value): a path
// written as one (./llama8b, ../models/x: timing.IsModelPath), or a relative name of a directory
// that exists under dir. A catalog id (meta-llama/Llama-3.1-8B) is no path unless such a
// directory exists; an absolute path, ~ (not expanded) and a ${NAME} reference are left alone.
func RelativeModelDir(id, dir string) bool {
	if id == "" || filepath.IsAbs(id) || strings.HasPrefix(id, "~") || strings.HasPrefix(id, "${") ||
		strings.TrimSpace(id) != id {
		return false
	}
	if timing.IsModelPath(id) {
		return true
	}
	st, err := os.Stat(filepath.Join(dir, id))
	return err == nil && st.IsDir()
}
