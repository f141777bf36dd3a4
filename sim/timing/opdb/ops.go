package opdb

import (
	"fmt"
	"iter"
	"path/filepath"
	"slices"
	"strings"
)

// GEMM is the measured latency of one GEMM data type of one backend version on one GPU: an
// (m × k) activation times a (k × n) weight, m the tokens of the pass.
type GEMM struct {
	// Dtype is the table's gemm_dtype (bfloat16, fp8, fp8_block, nvfp4).
	Dtype  string
	ns, ks []float64
	// byNK[(i, j)] is the curve over m at ns[i], ks[j]; nil where the table has no sample.
	byNK [][]*curve
}

type gemmRow struct {
	Device  string  `parquet:"device,optional"`
	Dtype   string  `parquet:"gemm_dtype,optional"`
	M       int64   `parquet:"m,optional"`
	N       int64   `parquet:"n,optional"`
	K       int64   `parquet:"k,optional"`
	Latency float64 `parquet:"latency,optional"`
}

// GEMM returns the GEMM table of dtype for backend at version ("" = newest) on gpu, loaded on
// first use.
// Errors: *MissingError naming what is missing (GPU, backend, version, table, or the dtype with
// the dtypes the table has), or a file that cannot be read.
func (db *DB) GEMM(gpu, backend, version, dtype string) (*GEMM, error) {
	version, err := db.Resolve(gpu, OpGEMM, backend, version)
	if err != nil {
		return nil, err
	}
	all, err := loadTable(db, gpu, OpGEMM, backend, version, gemmFile, func(rows []gemmRow) any { return buildGEMMs(rows) })
	if err != nil {
		return nil, err
	}
	m := all.(map[string]*GEMM)
	g := m[dtype]
	if g == nil {
		var have []string
		for k := range m {
			have = append(have, k)
		}
		return nil, db.missingIn("GEMM dtype "+dtype, gpu, OpGEMM, backend, version, gemmFile, have)
	}
	return g, nil
}

func buildGEMMs(rows []gemmRow) map[string]*GEMM {
	type nk struct{ n, k float64 }
	by := map[string]map[nk][]sample{}
	for _, r := range rows {
		if r.M <= 0 || r.N <= 0 || r.K <= 0 || !(r.Latency > 0) {
			continue
		}
		if by[r.Dtype] == nil {
			by[r.Dtype] = map[nk][]sample{}
		}
		key := nk{float64(r.N), float64(r.K)}
		by[r.Dtype][key] = append(by[r.Dtype][key], sample{float64(r.M), r.Latency})
	}
	out := map[string]*GEMM{}
	for dtype, cells := range by {
		g := &GEMM{Dtype: dtype}
		for c := range cells {
			g.ns = append(g.ns, c.n)
			g.ks = append(g.ks, c.k)
		}
		slices.Sort(g.ns)
		g.ns = slices.Compact(g.ns)
		slices.Sort(g.ks)
		g.ks = slices.Compact(g.ks)
		g.byNK = make([][]*curve, len(g.ns))
		for i, n := range g.ns {
			g.byNK[i] = make([]*curve, len(g.ks))
			for j, k := range g.ks {
				if s := cells[nk{n, k}]; len(s) > 0 {
					c := buildCurve(s, 1)
					g.byNK[i][j] = &c
				}
			}
		}
		out[dtype] = g
	}
	return out
}

// Cells yields every (n, k) weight shape the table measured, with its curve over m (tokens; the
// latency in ms): n ascending, then k ascending.
func (g *GEMM) Cells() iter.Seq2[[2]float64, *Curve] {
	return func(yield func([2]float64, *Curve) bool) {
		for i, n := range g.ns {
			for j, k := range g.ks {
				if c := g.byNK[i][j]; c != nil && !yield([2]float64{n, k}, &Curve{c: *c}) {
					return
				}
			}
		}
	}
}

// Latency is the GEMM latency in ms at m rows (tokens), n output and k input features.
//
// Interpolation: along m, linear between the measured token counts, the smallest measured
// latency below them (a small GEMM is latency-bound), and ∝ m past the largest. Across n and
// k, bilinear between the bracketing measured sizes; past the largest measured n (or k), the
// latency at the largest × n / n_max (× k / k_max): the work grows linearly; below the smallest,
// the smallest's latency. A grid cell the table lacks is replaced by the nearest measured cell
// on the same row of n, scaled by k.
func (g *GEMM) Latency(m, n, k float64) float64 {
	i0, i1, tn := bracket(g.ns, n)
	j0, j1, tk := bracket(g.ks, k)
	at := func(i, j int) float64 { return g.cell(i, j, m) }
	y := at(i0, j0)
	if j1 != j0 {
		y += tk * (at(i0, j1) - y)
	}
	if i1 != i0 {
		y1 := at(i1, j0)
		if j1 != j0 {
			y1 += tk * (at(i1, j1) - y1)
		}
		y += tn * (y1 - y)
	}
	if last := g.ns[len(g.ns)-1]; n > last {
		y *= n / last
	}
	if last := g.ks[len(g.ks)-1]; k > last {
		y *= k / last
	}
	return y
}

// Curve is a latency in ms over one variable, precomputed from a table.
type Curve struct{ c curve }

// Latency is the curve's latency at x, with the interpolation and extrapolation of the table it
// came from.
func (c *Curve) Latency(x float64) float64 { return c.c.at(x) }

// Samples returns copies of the curve's measured points in increasing x: x as the table counts
// it (e.g. num_tokens) and the fastest latency measured there in ms.
func (c *Curve) Samples() (x, ms []float64) {
	return append([]float64(nil), c.c.x...), append([]float64(nil), c.c.y...)
}

// AtNK precomputes the GEMM's latency over m at fixed n and k: the same values as Latency(m, n,
// k) for every m (between the measured token counts both are linear in m), for a lookup of one
// binary search instead of four.
func (g *GEMM) AtNK(n, k float64) *Curve {
	var ms []float64
	for _, row := range g.byNK {
		for _, c := range row {
			if c != nil {
				ms = append(ms, c.x...)
			}
		}
	}
	slices.Sort(ms)
	ms = slices.Compact(ms)
	out := &Curve{c: curve{x: ms, y: make([]float64, len(ms)), power: 1}}
	for i, m := range ms {
		out.c.y[i] = g.Latency(m, n, k)
	}
	return out
}

// cell is the latency at m of grid cell (i, j), or of the nearest measured cell in row i scaled
// by the ratio of k.
func (g *GEMM) cell(i, j int, m float64) float64 {
	if c := g.byNK[i][j]; c != nil {
		return c.at(m)
	}
	best := -1
	for jj := range g.ks {
		if g.byNK[i][jj] != nil && (best < 0 || abs(jj-j) < abs(best-j)) {
			best = jj
		}
	}
	if best < 0 {
		return 0
	}
	return g.byNK[i][best].at(m) * g.ks[j] / g.ks[best]
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// AttentionShape selects an attention kernel's measurements: query heads, KV heads and head
// size per GPU, and the KV-cache dtype of the table (bfloat16 or fp8).
type AttentionShape struct {
	Heads, KVHeads, HeadDim int
	KVDtype                 string
}

// String renders the shape for messages: heads, KV heads, head dim and dtypes.
func (s AttentionShape) String() string {
	return fmt.Sprintf("heads %d, kv heads %d, head dim %d, kv %s", s.Heads, s.KVHeads, s.HeadDim, s.KVDtype)
}

// Attention is the measured latency of one attention shape: over batch size and sequence length.
type Attention struct {
	Shape AttentionShape
	grid  grid2
}

// Latency is the attention latency in ms of batch sequences of length seq each (context: the
// prompt length; generation: the KV length attended to). Interpolation: linear between measured
// batch sizes and lengths; below the smallest, the smallest's latency; past the largest batch
// ∝ batch; past the largest length ∝ length² for context attention (causal attention over the
// whole prompt) and ∝ length for generation attention (one query token).
func (a *Attention) Latency(batch, seq float64) float64 { return a.grid.at(batch, seq) }

type attnRow struct {
	Device  string  `parquet:"device,optional"`
	Batch   int64   `parquet:"batch_size,optional"`
	ISL     int64   `parquet:"isl,optional"`
	Heads   int64   `parquet:"num_heads,optional"`
	KVHeads int64   `parquet:"num_key_value_heads,optional"`
	HeadDim int64   `parquet:"head_dim,optional"`
	KVDtype string  `parquet:"kv_cache_dtype,optional"`
	Step    int64   `parquet:"step,optional"`
	Window  int64   `parquet:"window_size,optional"`
	Latency float64 `parquet:"latency,optional"`
}

// ContextAttention returns the prefill attention of shape s for backend at version ("" =
// newest) on gpu (full attention rows, window_size 0). Errors: *MissingError naming what is missing (the shape
// with the shapes the table has), or a file that cannot be read.
func (db *DB) ContextAttention(gpu, backend, version string, s AttentionShape) (*Attention, error) {
	return db.attention(gpu, backend, version, contextAttnFile, s, false)
}

// GenerationAttention returns the decode attention of shape s (one query token per sequence;
// the KV length of a row is its isl + step).
func (db *DB) GenerationAttention(gpu, backend, version string, s AttentionShape) (*Attention, error) {
	return db.attention(gpu, backend, version, generationAttnFile, s, true)
}

func (db *DB) attention(gpu, backend, version, file string, s AttentionShape, generation bool) (*Attention, error) {
	version, err := db.Resolve(gpu, OpAttention, backend, version)
	if err != nil {
		return nil, err
	}
	all, err := loadTable(db, gpu, OpAttention, backend, version, file, func(rows []attnRow) any { return buildAttention(rows, generation) })
	if err != nil {
		return nil, err
	}
	m := all.(map[AttentionShape]*Attention)
	if a := m[s]; a != nil {
		return a, nil
	}
	var have []string
	for k := range m {
		if k.HeadDim == s.HeadDim && k.KVDtype == s.KVDtype {
			have = append(have, fmt.Sprintf("%d/%d", k.Heads, k.KVHeads))
		}
	}
	return nil, db.missingIn("attention shape ("+s.String()+"); heads/kv heads measured at that head dim and kv dtype are listed",
		gpu, OpAttention, backend, version, file, have)
}

func buildAttention(rows []attnRow, generation bool) map[AttentionShape]*Attention {
	by := map[AttentionShape][][3]float64{}
	for _, r := range rows {
		if r.Window != 0 || r.Batch <= 0 || !(r.Latency > 0) {
			continue
		}
		seq := r.ISL
		if generation {
			seq = r.ISL + r.Step
		}
		if seq <= 0 {
			continue
		}
		k := AttentionShape{Heads: int(r.Heads), KVHeads: int(r.KVHeads), HeadDim: int(r.HeadDim), KVDtype: strings.ToLower(r.KVDtype)}
		by[k] = append(by[k], [3]float64{float64(r.Batch), float64(seq), r.Latency})
	}
	return attentionGrids(by, generation)
}

// attentionGrids builds one Attention per shape from its (batch, sequence length, latency ms)
// samples, interpolated in sequence length with power 2 for prefill (its attention pairs grow as
// the square) and 1 for decode, and with power 1 in batch (buildGrid2).
func attentionGrids(by map[AttentionShape][][3]float64, generation bool) map[AttentionShape]*Attention {
	inner := 2.0
	if generation {
		inner = 1
	}
	out := make(map[AttentionShape]*Attention, len(by))
	for k, s := range by {
		out[k] = &Attention{Shape: k, grid: buildGrid2(s, inner, 1)}
	}
	return out
}

// Collective is the measured latency of one collective on a number of GPUs over message size.
type Collective struct {
	// Op is the collective (all_reduce, all_gather, reduce_scatter, alltoall), Dtype the table's
	// dtype, GPUs the group size, Source the table (nccl, or the backend's custom all-reduce).
	Op, Dtype, Source string
	GPUs              int
	c                 curve
}

// Latency is the collective's latency in ms for a message of bytes bytes: linear between measured
// sizes, the smallest's latency below them, ∝ bytes past the largest (bandwidth-bound). The
// tables give sizes in elements of their dtype (commRow.Elements); the curve is kept in bytes.
func (c *Collective) Latency(bytes float64) float64 { return c.c.at(bytes) }

// elementBytes is the size in bytes of one element of a communication table's dtype (nccl_dtype
// or allreduce_dtype), and false for a dtype it does not know.
func elementBytes(dtype string) (float64, bool) {
	switch strings.ToLower(dtype) {
	case "half", "float16", "fp16", "bfloat16", "bf16":
		return 2, true
	case "int8", "uint8", "fp8", "float8":
		return 1, true
	case "float", "float32", "fp32":
		return 4, true
	}
	return 0, false
}

type commRow struct {
	Device  string `parquet:"device,optional"`
	Op      string `parquet:"op_name,optional"`
	Dtype   string `parquet:"nccl_dtype,optional"`
	ARDtype string `parquet:"allreduce_dtype,optional"`
	GPUs    int64  `parquet:"num_gpus,optional"`
	// Elements is the message size in elements of the row's dtype, not bytes: AIConfigurator's
	// collectors record nccl-tests' byte size divided by the dtype's width, and the custom
	// all-reduce's tensor length (collector/network/collect_nccl.py, collect_all_reduce.py).
	Elements int64   `parquet:"message_size,optional"`
	Backend  string  `parquet:"backend,optional"`
	Latency  float64 `parquet:"latency,optional"`
}

// NCCL returns the NCCL collective op (all_reduce, all_gather, reduce_scatter, alltoall) in dtype
// (half, int8) on gpus GPUs from the NCCL tables of version ("" = newest) on gpu.
func (db *DB) NCCL(gpu, version, op, dtype string, gpus int) (*Collective, error) {
	return db.collective(gpu, NCCL, version, ncclFile, op, dtype, gpus)
}

// CustomAllReduce returns backend's own all-reduce on gpus GPUs at version, as captured in CUDA
// graphs where the table distinguishes (its backend column ends in _graph).
func (db *DB) CustomAllReduce(gpu, backend, version string, gpus int) (*Collective, error) {
	return db.collective(gpu, backend, version, customAllReduceFile, "all_reduce", "", gpus)
}

func (db *DB) collective(gpu, backend, version, file, op, dtype string, gpus int) (*Collective, error) {
	v, err := db.Resolve(gpu, OpComm, backend, version)
	if err != nil {
		return nil, err
	}
	type key struct {
		op, dtype string
		gpus      int
	}
	all, err := loadTable(db, gpu, OpComm, backend, v, file, func(rows []commRow) any {
		graph := false
		for _, r := range rows {
			graph = graph || strings.HasSuffix(r.Backend, "_graph")
		}
		by := map[key][]sample{}
		for _, r := range rows {
			if graph && !strings.HasSuffix(r.Backend, "_graph") || r.Elements <= 0 || !(r.Latency > 0) {
				continue
			}
			d, width := r.Dtype, r.Dtype
			if file == customAllReduceFile {
				d, width = "", r.ARDtype
			}
			w, ok := elementBytes(width)
			if !ok {
				return fmt.Errorf("%s's comm/%s/%s/%s: row %s on %d GPUs has dtype %q, whose element size is unknown (known: half, float16, bfloat16, int8, fp8, float32)", gpu, backend, v, file, r.Op, r.GPUs, width)
			}
			k := key{r.Op, d, int(r.GPUs)}
			by[k] = append(by[k], sample{float64(r.Elements) * w, r.Latency})
		}
		out := map[key]*Collective{}
		for k, s := range by {
			out[k] = &Collective{Op: k.op, Dtype: k.dtype, GPUs: k.gpus, Source: backend, c: buildCurve(s, 1)}
		}
		return out
	})
	if err != nil {
		return nil, err
	}
	if err, ok := all.(error); ok {
		return nil, err
	}
	m := all.(map[key]*Collective)
	if c := m[key{op, dtype, gpus}]; c != nil {
		return c, nil
	}
	var have []string
	for k := range m {
		have = append(have, strings.TrimSpace(fmt.Sprintf("%s %s on %d GPUs", k.op, k.dtype, k.gpus)))
	}
	return nil, db.missingIn(fmt.Sprintf("%s %s on %d GPUs", op, dtype, gpus), gpu, OpComm, backend, v, file, have)
}

// measured is a table row type that names the device it was measured on.
type measured interface{ device() string }

func (r gemmRow) device() string { return r.Device }
func (r attnRow) device() string { return r.Device }
func (r commRow) device() string { return r.Device }

// loadTable loads, once per process, the table file of op for backend at (resolved) version on
// gpu: its rows read, checked against the GPU (checkDevice), and turned into build's value.
// Errors: the table is absent (*MissingError), unreadable, or measured on another GPU.
func loadTable[T measured](db *DB, gpu, op, backend, version, file string, build func([]T) any) (any, error) {
	return db.table(op+"\x00"+file+"\x00"+gpu+"\x00"+backend+"\x00"+version, func() (any, error) {
		p, err := db.tablePath(gpu, op, backend, version, file)
		if err != nil {
			return nil, err
		}
		rows, err := readRows[T](p)
		if err != nil {
			return nil, err
		}
		if err := checkDevice(rows, p, gpu); err != nil {
			return nil, err
		}
		return build(rows), nil
	})
}

// missingIn is the *MissingError of what a loaded table lacks, listing what it has (sorted).
func (db *DB) missingIn(what, gpu, op, backend, version, file string, have []string) *MissingError {
	slices.Sort(have)
	d, _ := db.dataDir(gpu)
	return &MissingError{What: what, GPU: gpu, Op: op, Backend: backend, Version: version,
		Path: filepath.Join(d, op, backend, version, file), Available: have}
}

// checkDevice refuses a table measured on another GPU than the folder it sits in: every row's
// device (e.g. "NVIDIA H100 80GB HBM3") must hold the GPU id's family (h100_sxm: H100), or the
// Grace-Blackwell superchip of that GPU (b300_sxm: GB300), as a word. Rows without a device pass.
func checkDevice[T measured](rows []T, path, gpu string) error {
	family := strings.ToUpper(strings.SplitN(gpu, "_", 2)[0])
	for _, r := range rows {
		d := r.device()
		fields := strings.Fields(strings.ToUpper(d))
		// A Grace-Blackwell superchip's GPU is the Blackwell GPU of the same name (GB300's is a
		// B300): the database files some b300_sxm tables measured on a GB300.
		if d != "" && !slices.Contains(fields, family) && !slices.Contains(fields, "G"+family) {
			return fmt.Errorf("%s: measured on %q, not on a %s (a table copied into another GPU's folder?)", path, d, gpu)
		}
	}
	return nil
}

// Samples returns the measured points of a: per sample the batch size, the sequence length
// (context: prompt tokens; generation: KV length) and the latency in ms, batch-major in
// ascending order (duplicates merged as the interpolation merges them).
func (a *Attention) Samples() (batch, seq, ms []float64) {
	for i, b := range a.grid.outer {
		c := a.grid.curves[i]
		for j, x := range c.x {
			batch, seq, ms = append(batch, b), append(seq, x), append(ms, c.y[j])
		}
	}
	return batch, seq, ms
}
