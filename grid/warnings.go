package grid

import (
	"fmt"
	"strings"

	"github.com/servesweep/servesweep/results"
)

// emptyValuesWarning is one warning for the domain values of vs, none of which any valid point
// takes: emptyWarning's for a single value; for several, one line that counts them, names each
// as a short path=value with its point count, and gives the first value's example (sweep.json's
// empty_values has every value's filter counts). A 70B sweep whose small TP and large replica counts cannot hold the
// weights says so once rather than once per value.
func emptyValuesWarning(vs []results.EmptyValue) string {
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
