package opdb

import (
	"fmt"
	"strings"
)

// Table files of the MoE and MLA ops (the database's own names).
const (
	moeFile           = "moe_perf.parquet"
	contextMLAFile    = "context_mla_perf.parquet"
	generationMLAFile = "generation_mla_perf.parquet"
)

// MoEShape selects the measurements of one routed-expert layer: the expert weights' dtype (the
// table's moe_dtype: bfloat16, fp8, fp8_block, nvfp4, w4a16_mxfp4, ...), the model's hidden
// size, one expert's intermediate size, experts per token, routed experts, the layer's
// moe_tp_size and moe_ep_size, and the expert-load distribution the kernel was measured under
// (balanced, power_law_1.01, power_law_1.2).
type MoEShape struct {
	Dtype                                string
	Hidden, Inter, TopK, Experts, TP, EP int
	Distribution                         string
}

// String renders the shape for messages: its dtype, sizes, top-k, experts, split and
// distribution.
func (s MoEShape) String() string {
	return fmt.Sprintf("moe %s hidden %d, inter %d, topk %d, experts %d, moe_tp %d, moe_ep %d, %s",
		s.Dtype, s.Hidden, s.Inter, s.TopK, s.Experts, s.TP, s.EP, s.Distribution)
}

// model is the shape without the parallel split and distribution: the model the table covers.
func (s MoEShape) model() string {
	return fmt.Sprintf("%s %d/%d/%d/%d", s.Dtype, s.Hidden, s.Inter, s.TopK, s.Experts)
}

type moeRow struct {
	Device       string  `parquet:"device,optional"`
	Dtype        string  `parquet:"moe_dtype,optional"`
	Tokens       int64   `parquet:"num_tokens,optional"`
	Hidden       int64   `parquet:"hidden_size,optional"`
	Inter        int64   `parquet:"inter_size,optional"`
	TopK         int64   `parquet:"topk,optional"`
	Experts      int64   `parquet:"num_experts,optional"`
	TP           int64   `parquet:"moe_tp_size,optional"`
	EP           int64   `parquet:"moe_ep_size,optional"`
	Distribution string  `parquet:"distribution,optional"`
	Latency      float64 `parquet:"latency,optional"`
}

func (r moeRow) device() string { return r.Device }

// MoE returns the routed-expert latency of shape s for backend at version ("" = newest) on gpu
// as a curve over num_tokens: the tokens entering the layer on one GPU of the expert group
// before routing (each goes to TopK experts). Interpolation: linear between measured token
// counts, the smallest count's latency below them, ∝ tokens past the largest; where several
// kernels measured a count, the fastest.
// Errors: *MissingError naming what is missing (the table, or the shape with the shapes the
// table has: dtype hidden/inter/topk/experts, and the moe_tp × moe_ep splits and
// distributions measured for the model's shape), or a file that cannot be read.
func (db *DB) MoE(gpu, backend, version string, s MoEShape) (*Curve, error) {
	m, version, err := db.moeTable(gpu, backend, version)
	if err != nil {
		return nil, err
	}
	if c := m[s]; c != nil {
		return c, nil
	}
	seen := map[string]bool{}
	var have []string
	for k := range m {
		e := k.model()
		if k.model() == s.model() {
			e = fmt.Sprintf("moe_tp %d × moe_ep %d %s", k.TP, k.EP, k.Distribution)
		}
		if !seen[e] {
			seen[e] = true
			have = append(have, e)
		}
	}
	return nil, db.missingIn("MoE shape ("+s.String()+"); models (dtype hidden/inter/topk/experts) and, for this model, the splits measured are listed",
		gpu, OpMoE, backend, version, moeFile, have)
}

// MoEShapes lists every routed-expert shape the MoE table of backend at version ("" = newest) on
// gpu measured, in no particular order; MoE returns each one's curve.
// Errors: *MissingError when there is no such table, or a file that cannot be read.
func (db *DB) MoEShapes(gpu, backend, version string) ([]MoEShape, error) {
	m, _, err := db.moeTable(gpu, backend, version)
	if err != nil {
		return nil, err
	}
	out := make([]MoEShape, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out, nil
}

// moeTable loads (once) the MoE table of backend at version on gpu, by shape, and returns it
// with the resolved version.
func (db *DB) moeTable(gpu, backend, version string) (map[MoEShape]*Curve, string, error) {
	version, err := db.Resolve(gpu, OpMoE, backend, version)
	if err != nil {
		return nil, "", err
	}
	all, err := loadTable(db, gpu, OpMoE, backend, version, moeFile, func(rows []moeRow) any {
		by := map[MoEShape][]sample{}
		for _, r := range rows {
			if r.Tokens <= 0 || !(r.Latency > 0) {
				continue
			}
			k := MoEShape{Dtype: strings.ToLower(r.Dtype), Hidden: int(r.Hidden), Inter: int(r.Inter), TopK: int(r.TopK),
				Experts: int(r.Experts), TP: int(r.TP), EP: int(r.EP), Distribution: r.Distribution}
			by[k] = append(by[k], sample{float64(r.Tokens), r.Latency})
		}
		out := map[MoEShape]*Curve{}
		for k, s := range by {
			out[k] = &Curve{c: buildCurve(s, 1)}
		}
		return out
	})
	if err != nil {
		return nil, "", err
	}
	return all.(map[MoEShape]*Curve), version, nil
}

type mlaRow struct {
	Device  string  `parquet:"device,optional"`
	Heads   int64   `parquet:"num_heads,optional"`
	Batch   int64   `parquet:"batch_size,optional"`
	ISL     int64   `parquet:"isl,optional"`
	Step    int64   `parquet:"step,optional"`
	KVDtype string  `parquet:"kv_cache_dtype,optional"`
	Latency float64 `parquet:"latency,optional"`
}

func (r mlaRow) device() string { return r.Device }

// ContextMLA returns the prefill multi-head latent attention kernel with heads query heads per
// GPU and a kvDtype (bfloat16, fp8) KV cache for backend at version ("" = newest) on gpu, over
// batch size and prompt length, interpolated as Attention.Latency for context attention. The
// kernel is the attention core only (the table's mla_context op); the projections around it
// are GEMMs. Its Shape has Heads = KVHeads = heads and HeadDim 0.
// Errors: *MissingError naming what is missing (the table, or the head count with those
// measured), or a file that cannot be read.
func (db *DB) ContextMLA(gpu, backend, version string, heads int, kvDtype string) (*Attention, error) {
	return db.mla(gpu, backend, version, contextMLAFile, heads, kvDtype, false)
}

// GenerationMLA returns the decode multi-head latent attention kernel (one query token per
// sequence; a row's KV length is its isl + step), as ContextMLA.
func (db *DB) GenerationMLA(gpu, backend, version string, heads int, kvDtype string) (*Attention, error) {
	return db.mla(gpu, backend, version, generationMLAFile, heads, kvDtype, true)
}

func (db *DB) mla(gpu, backend, version, file string, heads int, kvDtype string, generation bool) (*Attention, error) {
	version, err := db.Resolve(gpu, OpMLA, backend, version)
	if err != nil {
		return nil, err
	}
	all, err := loadTable(db, gpu, OpMLA, backend, version, file, func(rows []mlaRow) any {
		by := map[AttentionShape][][3]float64{}
		for _, r := range rows {
			seq := r.ISL
			if generation {
				seq += r.Step
			}
			if r.Batch <= 0 || seq <= 0 || !(r.Latency > 0) {
				continue
			}
			k := AttentionShape{Heads: int(r.Heads), KVHeads: int(r.Heads), KVDtype: strings.ToLower(r.KVDtype)}
			by[k] = append(by[k], [3]float64{float64(r.Batch), float64(seq), r.Latency})
		}
		return attentionGrids(by, generation)
	})
	if err != nil {
		return nil, err
	}
	m := all.(map[AttentionShape]*Attention)
	s := AttentionShape{Heads: heads, KVHeads: heads, KVDtype: kvDtype}
	if a := m[s]; a != nil {
		return a, nil
	}
	var have []string
	for k := range m {
		if k.KVDtype == kvDtype {
			have = append(have, fmt.Sprint(k.Heads))
		}
	}
	return nil, db.missingIn(fmt.Sprintf("MLA heads %d per GPU with kv %s; head counts measured with that kv dtype are listed", heads, kvDtype),
		gpu, OpMLA, backend, version, file, have)
}

// monotone returns c with each latency raised to the largest at or below its x (a running
// maximum): latency never falls as x grows.
func (c curve) monotone() curve {
	out := curve{x: c.x, y: make([]float64, len(c.y)), power: c.power}
	for i, y := range c.despiked() {
		if i > 0 && out.y[i-1] > y {
			y = out.y[i-1]
		}
		out.y[i] = y
	}
	return out
}

// spikeFactor is how many times above its neighbours a single measured latency must be to be
// read as a measurement fault rather than the kernel's cost: neighbouring sizes of one table
// differ by at most 2× in size, so their latencies by far less than 4× (the MLA generation
// tables hold lone rows 100× their neighbours).
const spikeFactor = 4

// despiked returns the curve's latencies with lone spikes replaced: an inner point above
// spikeFactor × both neighbours by the larger neighbour, the first point above spikeFactor × the
// second by the second, the last above spikeFactor × the one before (scaled by the size ratio
// when larger than 1) by that scaled value. A running maximum would otherwise carry one faulty
// row to every larger size.
func (c curve) despiked() []float64 {
	y := append([]float64(nil), c.y...)
	n := len(y)
	for i := range n {
		switch {
		case n < 2:
		case i == 0:
			if y[0] > spikeFactor*c.y[1] {
				y[0] = c.y[1]
			}
		case i == n-1:
			lin := c.y[i-1] * max(1, c.x[i]/c.x[i-1])
			if y[i] > spikeFactor*lin {
				y[i] = lin
			}
		default:
			if nb := max(c.y[i-1], c.y[i+1]); y[i] > spikeFactor*nb {
				y[i] = nb
			}
		}
	}
	return y
}

// Monotone returns the curve through its running maximum, lone spikes removed first (despiked):
// each measured latency raised to the largest measured at a smaller x. Measured kernel latencies dip by a few percent between
// neighbouring sizes (kernel selection, timing noise); a model that must not get faster on more
// work reads the tables this way.
func (c *Curve) Monotone() *Curve { return &Curve{c: c.c.monotone()} }

// Monotone returns the collective through its running maximum over message size (see
// Curve.Monotone).
func (c *Collective) Monotone() *Collective {
	out := *c
	out.c = c.c.monotone()
	return &out
}

// Monotone returns the attention with latency non-decreasing in sequence length at each measured
// batch size (running maximum, see Curve.Monotone), and each batch size's latencies raised to at
// least those of the next smaller measured batch size at the same length.
func (a *Attention) Monotone() *Attention {
	out := &Attention{Shape: a.Shape, grid: grid2{outer: a.grid.outer, outerPower: a.grid.outerPower, curves: make([]curve, len(a.grid.curves))}}
	for j, c := range a.grid.curves {
		m := c.monotone()
		if j > 0 {
			prev := &out.grid.curves[j-1]
			y := append([]float64(nil), m.y...)
			for i, x := range m.x {
				y[i] = max(y[i], prev.at(x))
			}
			m.y = y
			m = m.monotone()
		}
		out.grid.curves[j] = m
	}
	return out
}
