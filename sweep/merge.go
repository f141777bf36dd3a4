package sweep

import (
	"os"
	"path/filepath"

	"github.com/servesweep/servesweep/results"
)

// Merged is what Merge leaves: the merged rows, their manifest (with its merge block), the
// analysis and the files written.
type Merged struct {
	Rows     []results.Row
	Manifest *results.Manifest
	Analysis *results.Analysis
	Written  *results.Written
}

// Merge merges the parts at paths (results.FindParts under resultsDir) of a sharded sweep into
// one sweep's outputs in dir (created if missing): the rows in point order without duplicates,
// the probes of the shards' probe tables (a point whose probes are lost makes the merge
// incomplete), the manifest naming the parts relative to resultsDir, then everything
// results.WriteOutputs writes. Errors: a *results.PartError or *results.SpecMismatchError for
// parts that cannot be merged, dir that is not a directory, or a file that cannot be written.
func Merge(paths []string, resultsDir, dir string) (*Merged, error) {
	rows, m, err := results.MergePartFiles(paths)
	if err != nil {
		return nil, err
	}
	for i, p := range m.Merge.Parts {
		if rel, err := filepath.Rel(resultsDir, p); err == nil {
			m.Merge.Parts[i] = filepath.ToSlash(rel)
		}
	}
	if st, err := os.Stat(dir); err == nil && !st.IsDir() {
		return nil, &NotDirError{Path: dir}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	lost, err := results.AttachProbes(resultsDir, rows)
	if err != nil {
		return nil, err
	}
	if len(lost) > 0 {
		m.Merge.MissingProbePoints, m.Merge.Complete = lost, false
	}
	m.SeedCheckSkipped = results.SeedCheckSharded // a merge simulates nothing
	a, w, err := results.WriteOutputs(dir, rows, m)
	if err != nil {
		return nil, err
	}
	return &Merged{Rows: rows, Manifest: m, Analysis: a, Written: w}, nil
}

// NotDirError says an output path exists and is not a directory.
type NotDirError struct {
	Path string
}

// Error names the path.
func (e *NotDirError) Error() string { return e.Path + " exists and is not a directory" }
