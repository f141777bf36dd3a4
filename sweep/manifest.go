package sweep

import (
	"github.com/servesweep/servesweep/grid"
	"github.com/servesweep/servesweep/results"
	"os"
	"path/filepath"
)

// NewManifest is the manifest (sweep.json, or a part's metadata) of the expansion x run as out:
// the spec, its optimizer and analysis settings, capacity search and prices (examplePrices says
// they are the built-in spec's example prices), and the counts of the grid and of the run, with
// the filtered points' first examples and the domain values no valid point takes. SpecHash is
// left to the caller (a part records it in its own metadata).
func NewManifest(x *grid.Expansion, out *Outcome, examplePrices bool) results.Manifest {
	spec := x.Spec
	return results.Manifest{Spec: spec.File, Algorithm: spec.Optimizer.Algorithm, Settings: spec.Optimization.Settings(),
		CapacitySearch: spec.Optimization.CapacitySearch, GPUHourUSD: spec.Optimization.Prices(), ExamplePrices: examplePrices,
		Counts: results.Counts{GridPoints: x.GridPoints, ValidPoints: x.Valid, SelectedPoints: len(x.Points),
			Filtered: x.Filtered, Resumed: out.Resumed, Simulated: out.Simulated, OK: out.OK, Degraded: out.Degraded,
			Infeasible: out.Infeasible, Failed: out.Failed, TimedOut: out.TimedOut, Interrupted: out.Interrupted},
		FilteredExamples: x.Examples, EmptyValues: emptyValues(x.EmptyValues), Warnings: x.Warnings}
}

// emptyValues records the grid's values without a valid point as sweep.json lists them.
func emptyValues(vs []grid.EmptyValue) []results.EmptyValue {
	if len(vs) == 0 {
		return nil
	}
	out := make([]results.EmptyValue, len(vs))
	for i, v := range vs {
		out[i] = results.EmptyValue(v)
	}
	return out
}

// DiscardEmptyJournal removes the journal a sweep created in its output directory dir, with its
// spec file and an empty recommendations directory, when it records no point (the sweep stopped
// before any, e.g. on an unreadable trace), so that a corrected spec can run in the same
// directory without starting over. It does so under the journal's lock
// (results.DiscardEmptyJournal): a journal another process has since opened is left alone, as
// is the lock file.
func DiscardEmptyJournal(dir string) {
	if removed, _ := results.DiscardEmptyJournal(filepath.Join(dir, results.JournalFile)); !removed {
		return
	}
	// A run that started over empties the recommendations directory of the sweep it replaced;
	// an empty one left behind would make the directory look like another tool's.
	_ = os.Remove(filepath.Join(dir, results.RecommendationsDir)) // only when empty
}
