package sweep

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/servesweep/servesweep/grid"
	"github.com/servesweep/servesweep/results"
	"github.com/servesweep/servesweep/sim"
)

// A deployment whose lengths are fixed draws nothing that changes its capacity: under the moved
// seeds its capacity search finds the hand-computed 20 and 40 again (fixedSpec), each row's
// config the re-seeded one.
func TestRecheckReproducesADrawFreeCapacity(t *testing.T) {
	s, err := grid.Parse([]byte(fixedSpec), "spec.yaml", nil, nil, results.CheckMetric)
	if err != nil {
		t.Fatal(err)
	}
	x, err := s.Expand()
	if err != nil {
		t.Fatal(err)
	}
	pts := []*grid.Point{&x.Points[0], &x.Points[1]}
	rows, err := Recheck(context.Background(), pts, Options{Parallelism: 2, Capacity: s.Optimization.CapacitySearch})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []float64{20, 40} {
		r, ok := rows[pts[i].ID]
		if !ok || r.CapacityLoad == nil || *r.CapacityLoad != want || r.PointID != pts[i].ID {
			t.Errorf("point %d: %+v, want capacity %g", i, r.CapacityLoad, want)
		}
		if !strings.Contains(r.ConfigYAML, "seed: 43") {
			t.Errorf("point %d's row config is not the re-seeded one:\n%s", i, r.ConfigYAML)
		}
	}
}

// Drawn lengths move with the seeds: each re-seeded row is the solo run of the re-seeded
// config, differs from the sweep's own row, and is the same for any parallelism.
func TestRecheckMovesTheDraws(t *testing.T) {
	spec := strings.Replace(testSpec, "new_input_tokens_per_turn: 128, output_tokens_per_turn: 8",
		"new_input_tokens_per_turn: {distribution: uniform, min: 64, max: 192}, output_tokens_per_turn: {distribution: uniform, min: 4, max: 12}", 1)
	all := points(t, spec)
	pts := []*grid.Point{&all[0], &all[5], &all[11]}
	out, err := Run(context.Background(), all, Options{OutputDir: t.TempDir(), Parallelism: 2})
	if err != nil {
		t.Fatal(err)
	}
	var got [2]map[string]results.Row
	for k, par := range []int{1, 3} {
		if got[k], err = Recheck(context.Background(), pts, Options{Parallelism: par}); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range pts {
		a, b := got[0][p.ID].WithoutHostTime(), got[1][p.ID].WithoutHostTime()
		if !reflect.DeepEqual(a, b) {
			t.Errorf("point %s: parallelism 1 and 3 gave different rows", p.ID)
		}
		q, ok, err := p.Reseeded(SeedOffset)
		if err != nil || !ok {
			t.Fatal(ok, err)
		}
		solo, err := sim.Run(context.Background(), q.Config, sim.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if a.P99TTFTMs == nil || *a.P99TTFTMs != solo.Summary.TTFT.P99 {
			t.Errorf("point %s: re-seeded p99 TTFT %v, its solo run %v", p.ID, a.P99TTFTMs, solo.Summary.TTFT.P99)
		}
		own := out.Rows[p.Index]
		if own.PointID != p.ID || *own.P99TTFTMs == *a.P99TTFTMs && *own.MeanE2ELatencyMs == *a.MeanE2ELatencyMs {
			t.Errorf("point %s: the re-seeded row measures what the sweep's did (p99 TTFT %v)", p.ID, *a.P99TTFTMs)
		}
	}
}
