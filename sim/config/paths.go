package config

import (
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"
)

// filePathFields are the dotted paths of the fields that name files (traffic.source.paths): each
// is a string or a list of strings. A relative path a YAML file gives in one of them resolves
// against that file's folder (ResolvePaths).
var filePathFields = []string{"traffic.source.paths"}

// ResolvePaths rewrites, in root (the parsed top-level mapping of the YAML file file), every
// relative path of the fields that name files (traffic.source.paths) to the absolute path of it joined to dir, the file's
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
	return nil
}
