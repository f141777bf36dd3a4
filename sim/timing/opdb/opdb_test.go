package opdb

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// systemsDir is the 6-GPU subset of AIConfigurator's database beside the repository.
const systemsDir = "../../../../shared/data/aic-systems"

func openShared(t *testing.T) *DB {
	t.Helper()
	if _, err := os.Stat(filepath.Join(systemsDir, "h100_sxm.yaml")); err != nil {
		t.Skipf("performance database not available at %s: %v", systemsDir, err)
	}
	db, err := Open(systemsDir)
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// openSharedSlow is openShared for the tests that read whole tables, which the race detector
// slows about tenfold (the package took 26 s under -race and 2.5 s without on 2 cores,
// 2026-12-06): they skip there, and make test runs this package again without the detector.
// TestTablesLoadOnce, whose goroutines the detector watches, runs under both.
func openSharedSlow(t *testing.T) *DB {
	t.Helper()
	if raceEnabled {
		t.Skip("reads whole tables, slow under -race: make test runs it without the race detector")
	}
	return openShared(t)
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func TestCompareVersions(t *testing.T) {
	ordered := []string{"0.5.9", "0.5.14", "0.24.0", "1.3.0rc5", "1.3.0rc20", "1.3.0", "1.3.1", "2.29.2"}
	for i := range ordered {
		for j := range ordered {
			want := 0
			if i < j {
				want = -1
			} else if i > j {
				want = 1
			}
			if got := CompareVersions(ordered[i], ordered[j]); got != want {
				t.Errorf("CompareVersions(%s, %s) = %d, want %d", ordered[i], ordered[j], got, want)
			}
		}
	}
}

// At a measured shape every lookup returns the table's own latency (the fastest kernel's where
// several measured it), read here straight from the file.
func TestLookupsReproduceTheTables(t *testing.T) {
	db := openSharedSlow(t)
	dir := filepath.Join(systemsDir, "data", "h100_sxm")
	gemmRows, err := readRows[gemmRow](filepath.Join(dir, "gemm", "vllm", "0.24.0", gemmFile))
	if err != nil {
		t.Fatal(err)
	}
	type gk struct {
		d       string
		m, n, k int64
	}
	best := map[gk]float64{}
	for _, r := range gemmRows {
		k := gk{r.Dtype, r.M, r.N, r.K}
		if v, ok := best[k]; !ok || r.Latency < v {
			best[k] = r.Latency
		}
	}
	checked := 0
	for i, r := range gemmRows {
		if i%499 != 0 {
			continue
		}
		g, err := db.GEMM("h100_sxm", "vllm", "", r.Dtype)
		if err != nil {
			t.Fatal(err)
		}
		want := best[gk{r.Dtype, r.M, r.N, r.K}]
		if got := g.Latency(float64(r.M), float64(r.N), float64(r.K)); !near(got, want) {
			t.Errorf("GEMM %s m %d n %d k %d: %v ms, table %v", r.Dtype, r.M, r.N, r.K, got, want)
		}
		checked++
	}
	if checked < 100 {
		t.Fatalf("checked only %d GEMM rows", checked)
	}
	// Cells yields every measured (m, n, k) of a dtype once, at its fastest latency.
	g, err := db.GEMM("h100_sxm", "vllm", "", "bfloat16")
	if err != nil {
		t.Fatal(err)
	}
	distinct, yielded := 0, 0
	for k := range best {
		if k.d == "bfloat16" {
			distinct++
		}
	}
	for nk, c := range g.Cells() {
		ms, lat := c.Samples()
		for i, m := range ms {
			yielded++
			if want, ok := best[gk{"bfloat16", int64(m), int64(nk[0]), int64(nk[1])}]; !ok || lat[i] != want {
				t.Errorf("Cells: m %v n %v k %v: %v ms, table %v (present %v)", m, nk[0], nk[1], lat[i], want, ok)
			}
		}
	}
	if yielded != distinct {
		t.Errorf("Cells yielded %d samples, the table has %d distinct BF16 (m, n, k)", yielded, distinct)
	}

	for _, c := range []struct {
		file       string
		generation bool
	}{{contextAttnFile, false}, {generationAttnFile, true}} {
		rows, err := readRows[attnRow](filepath.Join(dir, "attention", "vllm", "0.24.0", c.file))
		if err != nil {
			t.Fatal(err)
		}
		type ak struct {
			s      AttentionShape
			b, seq int64
		}
		best := map[ak]float64{}
		for _, r := range rows {
			if r.Window != 0 {
				continue
			}
			seq := r.ISL
			if c.generation {
				seq += r.Step
			}
			k := ak{AttentionShape{int(r.Heads), int(r.KVHeads), int(r.HeadDim), r.KVDtype}, r.Batch, seq}
			if v, ok := best[k]; !ok || r.Latency < v {
				best[k] = r.Latency
			}
		}
		n := 0
		for k, want := range best {
			if n++; n > 300 {
				break
			}
			var a *Attention
			if c.generation {
				a, err = db.GenerationAttention("h100_sxm", "vllm", "0.24.0", k.s)
			} else {
				a, err = db.ContextAttention("h100_sxm", "vllm", "0.24.0", k.s)
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := a.Latency(float64(k.b), float64(k.seq)); !near(got, want) {
				t.Errorf("%s %v batch %d seq %d: %v ms, table %v", c.file, k.s, k.b, k.seq, got, want)
			}
		}
	}
}

// Between measured shapes the lookups interpolate linearly; past the largest they scale with
// the work: GEMM ∝ m, n and k; context attention ∝ length² and ∝ batch; generation ∝ length;
// collectives ∝ bytes. Below the smallest they keep the smallest's latency.
func TestInterpolationAndExtrapolation(t *testing.T) {
	db := openSharedSlow(t)
	g, err := db.GEMM("h100_sxm", "vllm", "0.24.0", "bfloat16")
	if err != nil {
		t.Fatal(err)
	}
	// n 5632 lies halfway between the measured 5120 and 6144.
	if got, want := g.Latency(4096, 5632, 4096), (g.Latency(4096, 5120, 4096)+g.Latency(4096, 6144, 4096))/2; !near(got, want) {
		t.Errorf("halfway in n: %v, want %v", got, want)
	}
	// k 4608 halfway between 4096 and 5120, at n 6144.
	if got, want := g.Latency(64, 6144, 4608), (g.Latency(64, 6144, 4096)+g.Latency(64, 6144, 5120))/2; !near(got, want) {
		t.Errorf("halfway in k: %v, want %v", got, want)
	}
	if got, want := g.Latency(65536, 4096, 4096), 2*g.Latency(32768, 4096, 4096); !near(got, want) {
		t.Errorf("m beyond the table: %v, want twice the largest %v", got, want)
	}
	if got, want := g.Latency(128, 131072, 4096), 2*g.Latency(128, 65536, 4096); !near(got, want) {
		t.Errorf("n beyond the table: %v, want twice the largest %v", got, want)
	}
	if got, want := g.Latency(128, 4096, 8), g.Latency(128, 4096, 32); !near(got, want) {
		t.Errorf("k below the table: %v, want the smallest's %v", got, want)
	}
	s := AttentionShape{Heads: 32, KVHeads: 8, HeadDim: 128, KVDtype: "bfloat16"}
	ctx, err := db.ContextAttention("h100_sxm", "vllm", "0.24.0", s)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := ctx.Latency(1, 32768), 4*ctx.Latency(1, 16384); !near(got, want) {
		t.Errorf("context length beyond the table: %v, want 4× the largest %v", got, want)
	}
	if got, want := ctx.Latency(1, 1792), (ctx.Latency(1, 1536)+ctx.Latency(1, 2048))/2; !near(got, want) {
		t.Errorf("halfway in length: %v, want %v", got, want)
	}
	if got, want := ctx.Latency(3, 2048), (ctx.Latency(2, 2048)+ctx.Latency(4, 2048))/2; !near(got, want) {
		t.Errorf("halfway in batch: %v, want %v", got, want)
	}
	if got, want := ctx.Latency(512, 1024), 2*ctx.Latency(256, 1024); !near(got, want) {
		t.Errorf("batch beyond the table: %v, want twice the largest %v", got, want)
	}
	gen, err := db.GenerationAttention("h100_sxm", "vllm", "0.24.0", s)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := gen.Latency(8, 262144), 2*gen.Latency(8, 131072); !near(got, want) {
		t.Errorf("KV length beyond the table: %v, want twice the largest %v", got, want)
	}
	ar, err := db.NCCL("h100_sxm", "", "all_reduce", "half", 4)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := ar.Latency(1<<30), 2*ar.Latency(1<<29); !near(got, want) {
		t.Errorf("all-reduce beyond the table: %v, want twice the largest %v", got, want)
	}
	if got, want := ar.Latency(1), ar.Latency(256); !near(got, want) {
		t.Errorf("all-reduce below the table: %v, want the smallest's %v", got, want)
	}
	if _, err := db.CustomAllReduce("h100_sxm", "vllm", "", 8); err != nil {
		t.Error(err)
	}
}

// What the database lacks is a *MissingError naming what was wanted, where it looked and what
// exists: a GPU, a version, a dtype, an attention shape, a collective.
func TestMissingDataIsNamed(t *testing.T) {
	db := openSharedSlow(t)
	_, e1 := db.GEMM("a100_sxm", "vllm", "", "bfloat16")
	_, e2 := db.GEMM("h100_sxm", "vllm", "0.9.0", "bfloat16")
	_, e3 := db.GEMM("h100_sxm", "vllm", "", "nvfp4")
	_, e4 := db.ContextAttention("h100_sxm", "vllm", "", AttentionShape{7, 7, 128, "bfloat16"})
	_, e5 := db.NCCL("h100_sxm", "", "all_reduce", "half", 16)
	_, e6 := db.GEMM("h100_sxm", "tgi", "", "bfloat16")
	for i, c := range []struct {
		err   error
		parts []string
	}{
		{e1, []string{"no GPU for gpu a100_sxm", "a100_sxm.yaml", "available: b200_sxm, b300_sxm, gb200, gb300, h100_sxm, h200_sxm"}},
		{e2, []string{"no version for gpu h100_sxm, op gemm, backend vllm, version 0.9.0", "available: 0.24.0"}},
		{e3, []string{"no GEMM dtype nvfp4", "version 0.24.0", "gemm_perf.parquet", "available: bfloat16, fp8, fp8_block"}},
		{e4, []string{"heads 7, kv heads 7, head dim 128", "32/8"}},
		{e5, []string{"all_reduce half on 16 GPUs", "all_reduce half on 8 GPUs"}},
		{e6, []string{"no backend", "backend tgi", "available: sglang, trtllm, vllm"}},
	} {
		var me *MissingError
		if !errors.As(c.err, &me) {
			t.Errorf("case %d: %v is not a *MissingError", i+1, c.err)
			continue
		}
		for _, p := range c.parts {
			if !strings.Contains(c.err.Error(), p) {
				t.Errorf("case %d: %q lacks %q", i+1, c.err, p)
			}
		}
	}
	if _, err := Open(filepath.Join(systemsDir, "h100_sxm.yaml")); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("Open on a file: %v", err)
	}
}

// A table loads once and is shared by every caller, also under concurrent first use.
func TestTablesLoadOnce(t *testing.T) {
	db := openShared(t)
	got := make([]*GEMM, 8)
	var wg sync.WaitGroup
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i], _ = db.GEMM("h200_sxm", "sglang", "", "fp8")
		}()
	}
	wg.Wait()
	if got[0] == nil || slices.ContainsFunc(got, func(g *GEMM) bool { return g != got[0] }) {
		t.Error("concurrent first use loaded the table more than once")
	}
}

// AtNK's precomputed curve gives Latency's values at any m, on and off the measured counts.
func TestAtNKMatchesLatency(t *testing.T) {
	db := openSharedSlow(t)
	g, err := db.GEMM("b200_sxm", "trtllm", "", "fp8")
	if err != nil {
		t.Fatal(err)
	}
	for _, nk := range [][2]float64{{6144, 4096}, {28672, 4096}, {4096, 14336}, {100000, 3000}} {
		c := g.AtNK(nk[0], nk[1])
		for _, m := range []float64{0.5, 1, 7, 17.5, 100, 1000, 4097, 9000, 40000, 1e6} {
			if got, want := c.Latency(m), g.Latency(m, nk[0], nk[1]); !near(got, want) {
				t.Errorf("n %v k %v m %v: AtNK %v, Latency %v", nk[0], nk[1], m, got, want)
			}
		}
	}
}

// A table copied into another GPU's folder is refused: its rows name the GPU they were measured
// on.
func TestTableOfAnotherGPUIsRefused(t *testing.T) {
	openShared(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "h200_sxm.yaml"), []byte("data_dir: data/h200_sxm\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(filepath.Join(systemsDir, "data", "h100_sxm", "gemm", "vllm", "0.24.0", gemmFile))
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(dir, "data", "h200_sxm", "gemm", "vllm", "0.24.0")
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dst, gemmFile), src, 0o644); err != nil {
		t.Fatal(err)
	}
	db, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = db.GEMM("h200_sxm", "vllm", "", "bfloat16")
	var me *MissingError
	if err == nil || errors.As(err, &me) || !strings.Contains(err.Error(), `measured on "NVIDIA H100 80GB HBM3", not on a h200_sxm`) {
		t.Errorf("h100 table in the h200 folder: %v", err)
	}
}

// A lone faulty row does not become the floor of every larger size: the running maximum reads
// the tables with spikes above 4× their neighbours replaced (the MLA generation tables hold rows
// 100× their neighbours), while genuine growth and small dips are kept and lifted.
func TestMonotoneDropsLoneSpikes(t *testing.T) {
	c := curve{x: []float64{1, 2, 4, 8, 16}, y: []float64{1, 1.1, 150, 1.05, 2}}
	m := c.monotone()
	if want := []float64{1, 1.1, 1.1, 1.1, 2}; !slices.Equal(m.y, want) {
		t.Errorf("monotone %v, want %v", m.y, want)
	}
	last := curve{x: []float64{1, 2, 4}, y: []float64{1, 2, 90}}
	if got := last.monotone().y; got[2] != 4 {
		t.Errorf("a last spike is read as linear growth from its neighbour: %v, want 4 at x=4", got)
	}
	grow := curve{x: []float64{1, 2, 4}, y: []float64{1, 3, 7}}
	if got := grow.monotone().y; !slices.Equal(got, []float64{1, 3, 7}) {
		t.Errorf("genuine growth changed: %v", got)
	}
}

// The communication tables give message sizes in elements of their dtype; Collective.Latency
// takes bytes: an NCCL half row of e elements is found at 2e bytes, an int8 row at e bytes and a
// custom all-reduce row (bfloat16) at 2e bytes, each at its table latency.
func TestCollectiveSizesAreElements(t *testing.T) {
	db := openShared(t)
	dir := filepath.Join(systemsDir, "data", "h100_sxm", "comm")
	nccl, err := readRows[commRow](filepath.Join(dir, "nccl", "2.29.2", ncclFile))
	if err != nil {
		t.Fatal(err)
	}
	custom, err := readRows[commRow](filepath.Join(dir, "vllm", "0.24.0", customAllReduceFile))
	if err != nil {
		t.Fatal(err)
	}
	width := map[string]float64{"half": 2, "int8": 1}
	checked := 0
	for _, r := range nccl {
		if r.Op != "all_reduce" || r.GPUs != 8 {
			continue
		}
		c, err := db.NCCL("h100_sxm", "2.29.2", r.Op, r.Dtype, int(r.GPUs))
		if err != nil {
			t.Fatal(err)
		}
		if got := c.Latency(float64(r.Elements) * width[r.Dtype]); !near(got, r.Latency) {
			t.Errorf("NCCL all_reduce %s, %d elements on 8 GPUs: %v ms at %v bytes, table %v", r.Dtype, r.Elements, got, float64(r.Elements)*width[r.Dtype], r.Latency)
		}
		checked++
	}
	c, err := db.CustomAllReduce("h100_sxm", "vllm", "0.24.0", 8)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range custom {
		if r.GPUs != 8 || r.Backend != "vllm_graph" {
			continue
		}
		if r.ARDtype != "bfloat16" {
			t.Fatalf("custom all-reduce row in %q, want bfloat16", r.ARDtype)
		}
		if got := c.Latency(2 * float64(r.Elements)); !near(got, r.Latency) {
			t.Errorf("vLLM custom all-reduce, %d elements on 8 GPUs: %v ms at %d bytes, table %v", r.Elements, got, 2*r.Elements, r.Latency)
		}
		checked++
	}
	if checked < 40 {
		t.Fatalf("checked only %d rows", checked)
	}
	// A 64 MiB BF16 all-reduce on 8 H100s is bandwidth-bound: read as elements, the tables give
	// it a bus bandwidth (2·7/8 of the bytes over the latency) of 0.7–1 of the 450 GB/s one-way
	// NVLink; read as bytes it would be half that.
	ar, err := db.NCCL("h100_sxm", "", "all_reduce", "half", 8)
	if err != nil {
		t.Fatal(err)
	}
	const bytes = 64 << 20
	if bus := 2 * 7.0 / 8 * bytes / (ar.Latency(bytes) * 1e-3) / 450e9; bus < 0.7 || bus > 1 {
		t.Errorf("64 MiB all-reduce on 8 H100s at %.2f of the link, want 0.7–1", bus)
	}
}

// A communication table whose dtype has no known width is refused, naming the table and the
// dtype: its sizes in elements cannot be turned into bytes.
func TestCollectiveOfUnknownDtypeIsRefused(t *testing.T) {
	openShared(t)
	dir := t.TempDir()
	yaml, err := os.ReadFile(filepath.Join(systemsDir, "h100_sxm.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "h100_sxm.yaml"), yaml, 0o644); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(dir, "data", "h100_sxm", "comm", "vllm", "0.24.0")
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	rows := []commRow{{Device: "NVIDIA H100 80GB HBM3", Op: "all_reduce", ARDtype: "float6", GPUs: 8, Elements: 1024, Backend: "vllm_graph", Latency: 0.01}}
	if err := parquet.WriteFile(filepath.Join(dst, customAllReduceFile), rows); err != nil {
		t.Fatal(err)
	}
	db, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = db.CustomAllReduce("h100_sxm", "vllm", "", 8)
	if err == nil || !strings.Contains(err.Error(), `h100_sxm's comm/vllm/0.24.0/custom_allreduce_perf.parquet: row all_reduce on 8 GPUs has dtype "float6", whose element size is unknown`) {
		t.Errorf("custom all-reduce table in float6: %v", err)
	}
}
