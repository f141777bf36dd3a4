package opdb

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"

	"github.com/parquet-go/parquet-go"
)

// Table file names (the database's own).
const (
	gemmFile            = "gemm_perf.parquet"
	contextAttnFile     = "context_attention_perf.parquet"
	generationAttnFile  = "generation_attention_perf.parquet"
	ncclFile            = "nccl_perf.parquet"
	customAllReduceFile = "custom_allreduce_perf.parquet"
)

// readRows reads every row of the parquet file at path into []T (columns matched by the
// `parquet` tags of T; absent columns stay zero).
func readRows[T any](path string) ([]T, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	r := parquet.NewGenericReader[T](pf)
	defer r.Close()
	out := make([]T, pf.NumRows())
	n, err := r.Read(out)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return out[:n], nil
}

// curve is a latency in ms sampled at increasing x, with the rule used past its last point.
type curve struct {
	x, y []float64
	// power is the exponent of x that latency follows past the last sample: 1 for work linear
	// in x (GEMM rows, batch, message bytes: elements × dtype width, decode KV length), 2 for
	// prefill attention length.
	power float64
}

// at is the latency at x: linear between samples; the first sample's latency below the first x
// (small operations are latency-bound, they do not get cheaper); past the last, the last latency
// × (x / last x)^power.
func (c *curve) at(x float64) float64 {
	n := len(c.x)
	switch {
	case x <= c.x[0]:
		return c.y[0]
	case x >= c.x[n-1]:
		r := x / c.x[n-1]
		if c.power == 2 {
			r *= r
		}
		return c.y[n-1] * r
	}
	i := sort.SearchFloat64s(c.x, x) // c.x[i-1] < x <= c.x[i]
	t := (x - c.x[i-1]) / (c.x[i] - c.x[i-1])
	return c.y[i-1] + t*(c.y[i]-c.y[i-1])
}

// sample is one measured point.
type sample struct{ x, y float64 }

// buildCurve sorts samples by x, keeps the fastest latency per x (several kernels measure the
// same shape; a backend runs its fastest), and returns the curve.
func buildCurve(s []sample, power float64) curve {
	slices.SortFunc(s, func(a, b sample) int {
		if a.x != b.x {
			if a.x < b.x {
				return -1
			}
			return 1
		}
		if a.y < b.y {
			return -1
		} else if a.y > b.y {
			return 1
		}
		return 0
	})
	c := curve{power: power}
	for i, p := range s {
		if i > 0 && p.x == s[i-1].x {
			continue
		}
		c.x = append(c.x, p.x)
		c.y = append(c.y, p.y)
	}
	return c
}

// bracket returns the indices of the grid values around v in the sorted grid g and the weight of
// the upper one: v between g[i] and g[j] (i == j at or beyond an end).
func bracket(g []float64, v float64) (i, j int, t float64) {
	n := len(g)
	if v <= g[0] {
		return 0, 0, 0
	}
	if v >= g[n-1] {
		return n - 1, n - 1, 0
	}
	j = sort.SearchFloat64s(g, v)
	if g[j] == v {
		return j, j, 0
	}
	i = j - 1
	return i, j, (v - g[i]) / (g[j] - g[i])
}

// grid2 is latency over two axes: per value of the outer axis a curve over the inner one.
type grid2 struct {
	outer  []float64
	curves []curve
	// outerPower is how latency follows the outer axis past its last value (1: linear).
	outerPower float64
}

// at is the latency at (o, x): each bracketing outer value's curve at x, linear between them;
// below the first outer value the first curve; past the last, the last curve × (o / last)^power.
func (g *grid2) at(o, x float64) float64 {
	i, j, t := bracket(g.outer, o)
	y := g.curves[i].at(x)
	if j != i {
		y += t * (g.curves[j].at(x) - y)
	}
	if last := g.outer[len(g.outer)-1]; o > last {
		r := o / last
		if g.outerPower == 2 {
			r *= r
		}
		y *= r
	}
	return y
}

// buildGrid2 groups (outer, inner, latency) samples into a grid2.
func buildGrid2(s [][3]float64, innerPower, outerPower float64) grid2 {
	by := map[float64][]sample{}
	for _, p := range s {
		by[p[0]] = append(by[p[0]], sample{p[1], p[2]})
	}
	g := grid2{outerPower: outerPower}
	for o := range by {
		g.outer = append(g.outer, o)
	}
	slices.Sort(g.outer)
	for _, o := range g.outer {
		g.curves = append(g.curves, buildCurve(by[o], innerPower))
	}
	return g
}
