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

// A deployment whose lengths are fixed sets no seed that moves it: nothing is simulated again.
// With drawn lengths each point's capacity search runs again, its row's config the re-seeded one.
func TestRecheckCapacity(t *testing.T) {
	for _, tc := range []struct {
		spec string
		rows int
	}{
		{fixedSpec, 0},
		{strings.Replace(fixedSpec, "input_tokens: 100", "input_tokens: {distribution: uniform, min: 90, max: 100}", 1), 2},
	} {
		s, err := grid.Parse([]byte(tc.spec), "spec.yaml", nil, nil, results.CheckMetric)
		if err != nil {
			t.Fatal(err)
		}
		x, err := s.Expand()
		if err != nil {
			t.Fatal(err)
		}
		pts := []*grid.Point{&x.Points[0], &x.Points[1]}
		seeded, err := Reseed(pts)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := Recheck(context.Background(), seeded, Options{Parallelism: 2, Capacity: s.Optimization.CapacitySearch})
		if err != nil || len(rows) != tc.rows {
			t.Fatalf("%d rows (%v), want %d", len(rows), err, tc.rows)
		}
		for _, p := range pts[:tc.rows] {
			r := rows[p.ID]
			if r.PointID != p.ID || r.CapacityLoad == nil || *r.CapacityLoad < 10 || !strings.Contains(r.ConfigYAML, "seed: 43") {
				t.Errorf("point %s: no capacity of at least 10, or not the re-seeded config:\n%s", p.ID, r.ConfigYAML)
			}
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
	seeded, err := Reseed(pts)
	if err != nil || len(seeded) != len(pts) {
		t.Fatalf("Reseed: %d of %d points (%v)", len(seeded), len(pts), err)
	}
	var got [2]map[string]results.Row
	for k, par := range []int{1, 3} {
		if got[k], err = Recheck(context.Background(), seeded, Options{Parallelism: par}); err != nil {
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
