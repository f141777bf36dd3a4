package grid

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/servesweep/servesweep/sim/config"
)

// emptyValuesWarning is one warning for the domain values of vs, none of which any valid point
// takes: emptyWarning's for a single value; for several, one line that counts them, names each
// as a short path=value with its point count, and gives the first value's example (sweep.json's
// empty_values has every value's filter counts). A 70B sweep whose small TP and large replica counts cannot hold the
// weights says so once rather than once per value.
func emptyValuesWarning(vs []EmptyValue) string {
	if len(vs) == 1 {
		return emptyWarning(vs[0])
	}
	names := make([]string, len(vs))
	for i, v := range vs {
		points := "points"
		if v.Points == 1 {
			points = "point"
		}
		names[i] = fmt.Sprintf("%s=%s (%d %s)", ShortPath(v.Path), v.Value, v.Points, points)
	}
	return fmt.Sprintf("%d domain values have no valid point: %s; e.g. %s", len(vs), strings.Join(names, ", "), vs[0].Example)
}

// specWideError is the error of a grid whose bad invalid or unsupported points (of grid in all,
// or of a mode's: of names it, e.g. "of mode aggregated ") all failed with the same decode error
// full: that error once, as the config.Errors its lines ("<file>: <path>: <msg>") were, so that a
// command can name the --set that gave the field (config.AttributeSets), with the count of
// points it ruled out (none for a grid of one point).
func (s *Spec) specWideError(full string, bad, grid int, of string) error {
	what := fmt.Sprintf("every one of the %d grid points %sfails", grid, of)
	if bad < grid {
		what = fmt.Sprintf("all %d invalid grid points %s(of %d; the others are outside the GPU budget) fail", bad, of, grid)
	}
	note := " (" + what + " with this error: it is in the spec, not in a domain's values)"
	if grid == 1 {
		// One point (a spec without a domain, or a mode or policy with one point) is a config:
		// its error as predict gives it.
		note = ""
	}
	var errs config.Errors
	for _, line := range strings.Split(full, "\n") {
		rest, ok := strings.CutPrefix(line, s.File+": ")
		path, msg, hasPath := strings.Cut(rest, ": ")
		if !ok || !hasPath || !fieldPath.MatchString(path) {
			// Not one field's error: the message as it is, once.
			return config.Errors{{File: s.File, Msg: "no valid point: " + strings.TrimPrefix(full, s.File+": ") + note}}
		}
		errs = append(errs, &config.Error{File: s.File, Path: path, Msg: msg})
	}
	errs[len(errs)-1].Msg += note
	return errs
}

// fieldPath matches a dotted field path such as engine.workers.decode.parallelism.tensor or
// traffic.source.components[0].weight.
var fieldPath = regexp.MustCompile(`^[a-z][a-z0-9_]*(\[[0-9]+\])?(\.[a-z][a-z0-9_]*(\[[0-9]+\])?)*$`)
