package sim

import (
	"slices"
	"strings"
	"testing"

	"github.com/servesweep/servesweep/sim/timing/opdb"
)

// FP4 weights priced by the roofline on a GPU without FP4 tensor cores get a timing note naming
// the role and the GPU (they run at the next lower GEMM peak and stream at the FP8 rate, not at
// Blackwell's FP4Memory share); Blackwell gets none, nor do FP8 weights.
func TestFP4WithoutFP4TensorCoresIsNoted(t *testing.T) {
	t.Setenv(opdb.EnvSystemsDir, "")
	want := "engine.workers.aggregated: h200_sxm has no FP4 tensor cores: the roofline prices fp4 weights at its next lower GEMM peak, streaming at the FP8 rate"
	for _, c := range []struct {
		hardware, weights string
		noted             bool
	}{{"h200_sxm", "fp4", true}, {"b200_sxm", "fp4", false}, {"h200_sxm", "fp8", false}} {
		cfg := mustLoad(t, seedSynthetic, "engine.workers.aggregated.timing={type: default}",
			"engine.hardware="+c.hardware, "engine.precision.weights="+c.weights)
		notes, err := CheckNotes(cfg)
		if err != nil {
			t.Fatal(err)
		}
		hasNote := slices.ContainsFunc(notes, func(n string) bool { return strings.Contains(n, "no FP4 tensor cores") })
		if hasNote != c.noted || c.noted && !slices.Contains(notes, want) {
			t.Errorf("%s %s: notes %q, want the FP4 note %v", c.hardware, c.weights, notes, c.noted)
		}
	}
}
