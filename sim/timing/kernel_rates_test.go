package timing

import (
	"errors"
	"math"
	"path/filepath"
	"slices"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/servesweep/servesweep/sim/timing/opdb"
)

// gemmSample holds the gemm_perf columns the kernel-rate derivation reads.
type gemmSample struct {
	Dtype   string  `parquet:"gemm_dtype,optional"`
	M       int64   `parquet:"m,optional"`
	N       int64   `parquet:"n,optional"`
	K       int64   `parquet:"k,optional"`
	Latency float64 `parquet:"latency,optional"`
}

// kernelGPUs are the op database GPUs the kernel rates are derived from.
var kernelGPUs = []string{"h100_sxm", "h200_sxm", "b200_sxm", "gb200", "b300_sxm", "gb300"}

// readNewest reads table file of op for every kernel GPU and backend at the newest version the
// database holds, calling use with the GPU's catalog entry and the rows.
func readNewest[T any](t *testing.T, db *opdb.DB, op, file string, use func(hw Hardware, rows []T)) {
	t.Helper()
	for _, gpu := range kernelGPUs {
		hw, err := LookupHardware(gpu)
		if err != nil {
			t.Fatal(err)
		}
		for _, backend := range []string{"trtllm", "sglang", "vllm"} {
			version, err := db.Resolve(gpu, op, backend, "")
			var missing *opdb.MissingError
			if errors.As(err, &missing) {
				continue
			} else if err != nil {
				t.Fatal(err)
			}
			rows, err := parquet.ReadFile[T](filepath.Join(db.Dir(), "data", gpu, op, backend, version, file))
			if err != nil {
				t.Fatal(err)
			}
			use(hw, rows)
		}
	}
}

// median of xs (sorted in place); NaN when empty.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	slices.Sort(xs)
	m := xs[len(xs)/2]
	if len(xs)%2 == 0 {
		m = (xs[len(xs)/2-1] + m) / 2
	}
	return m
}

// TestMemoryFromTheOpDatabase derives CalibratedEfficiency's Memory from the kernel
// measurements of the op database (not from any deployment): the median achieved fraction of
// the HBM bandwidth of the BF16 GEMMs with m <= 8 tokens and n·k >= 8,192² weights (2nk bytes
// streamed once: the weight streaming of a decode pass over a model's large matrices), on
// h100_sxm, h200_sxm, b200_sxm, gb200, b300_sxm and gb300 under TensorRT-LLM, SGLang and vLLM
// (each backend's newest version). The shipped value must stay within 0.01 of it.
// Skips without ../shared, and under -race (it reads every GEMM table: seconds, but large);
// make test runs it without the race detector.
func TestMemoryFromTheOpDatabase(t *testing.T) {
	if raceEnabled {
		t.Skip("reads every GEMM table of the op database: run without -race (make test does)")
	}
	db := openDB(t)
	var stream []float64
	readNewest(t, db, opdb.OpGEMM, "gemm_perf.parquet", func(hw Hardware, rows []gemmSample) {
		for _, r := range rows {
			if n, k := float64(r.N), float64(r.K); r.Dtype == "bfloat16" && r.Latency > 0 && r.M <= 8 && n*k >= 8192*8192 {
				stream = append(stream, 2*n*k/r.Latency/(hw.MemoryTBps*tbpsToBytesPerMs))
			}
		}
	})
	// 18 tables (6 GPUs × 3 backends) of 696 samples each today: a missing table shows here.
	if len(stream) < 12000 {
		t.Fatalf("%d weight-streaming GEMM samples found, want 12,000 or more (every GPU and backend)", len(stream))
	}
	slices.Sort(stream)
	got := median(stream)
	q1, q3 := stream[len(stream)/4], stream[3*len(stream)/4]
	t.Logf("%d samples: median %.4f of the HBM bandwidth, interquartile range %.3f–%.3f", len(stream), got, q1, q3)
	// 0.7915 today.
	if want := CalibratedEfficiency().Memory; math.Abs(got-want) > 0.01 {
		t.Errorf("the op database's median weight-streaming fraction is %.4f, more than 0.01 from the shipped Memory %.2f", got, want)
	}
}
