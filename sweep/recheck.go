package sweep

import (
	"context"
	"runtime"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/servesweep/servesweep/grid"
	"github.com/servesweep/servesweep/results"
	"github.com/servesweep/servesweep/sim"
	"github.com/servesweep/servesweep/sim/traffic"
)

// SeedOffset is how far Recheck moves each seed of a point's config (grid.Point.Reseeded): a
// seed s becomes s + 1, a stream of its own for every generator servesweep seeds (PCG streams of
// neighbouring seeds are unrelated).
const SeedOffset = 1

// Reseed returns, in order, the copies of points whose simulation draws from a seed their
// configs set, each such seed moved by SeedOffset (grid.Point.Reseeded); a point none of whose
// seeds moves its simulation (fixed lengths or a trace, without a poisson load, speculative
// decoding or a router that draws) has no copy. Errors: a point that cannot be re-seeded.
func Reseed(points []*grid.Point) ([]*grid.Point, error) {
	var out []*grid.Point
	for _, p := range points {
		q, ok, err := p.Reseeded(SeedOffset)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, q)
		}
	}
	return out, nil
}

// Recheck simulates each of points (Reseed's copies) again as Run does (its capacity search when
// opts.Capacity is set, under opts.Timeout), opts.Parallelism at a time, and returns their rows
// by point ID (each built as Run builds a row: its config the re-seeded one at its capacity's
// load). Nothing is journaled: the rows say how far the sweep's own move with the seed, and a
// rerun recomputes them. Errors: a workload that cannot be built, a machine failure (as Run's),
// or ctx done, also while the workloads are built (a nil map then).
func Recheck(ctx context.Context, points []*grid.Point, opts Options) (map[string]results.Row, error) {
	par := opts.Parallelism
	if par <= 0 {
		par = max(1, runtime.NumCPU())
	}
	simulate := withSystems(opts.Simulate, opts.Systems)
	cache := NewWorkloadCache()
	for _, q := range points {
		cfg := q.Config
		if _, err := sim.Interruptible(ctx, func() (*traffic.Workload, error) { return cache.Workload(cfg) }); err != nil {
			return nil, err
		}
	}
	out := make(map[string]results.Row, len(points))
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(par)
	for _, q := range points {
		g.Go(func() error {
			rec, ok, fatal := runPoint(gctx, q, cache, simulate, limit{opts.Timeout, opts.TimeoutFrom}, opts.Capacity)
			if fatal != nil {
				return fatal
			}
			if ok {
				mu.Lock()
				out[q.ID] = pointRow(q, rec, opts.Capacity != nil)
				mu.Unlock()
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return out, nil
}
