package timing

import (
	"math"
	"testing"

	"github.com/servesweep/servesweep/sim/timing/opdb"
	"gonum.org/v1/gonum/mat"
)

// decodeAttentionShare fits latency = floor + c·batch + bytes/rate by least squares over the
// samples of a generation-attention table a with KV lengths of 512 tokens or more and batches of
// at most 512 sequences (bytes = batch · KV length · 2 · KV heads · head dim · bytesPerElem, the
// K and V a decode step reads), and returns rate as a share of hw's HBM bandwidth, and the
// number of samples. The floor and the per-sequence term take up the kernel's fixed and
// per-sequence costs (launch, split-KV reduction, page-table reads), which a ratio of bytes to
// latency would mix into the rate.
func decodeAttentionShare(t *testing.T, a *opdb.Attention, hw Hardware, bytesPerElem float64) (share float64, n int) {
	t.Helper()
	bs, ss, ms := a.Samples()
	var x, y []float64
	for i := range bs {
		if ss[i] < 512 || bs[i] > 512 {
			continue
		}
		bytes := bs[i] * ss[i] * 2 * float64(a.Shape.KVHeads*a.Shape.HeadDim) * bytesPerElem
		x = append(x, 1, bs[i], bytes)
		y = append(y, ms[i])
	}
	n = len(y)
	if n < 6 {
		return math.NaN(), n
	}
	var c mat.VecDense
	if err := c.SolveVec(mat.NewDense(n, 3, x), mat.NewVecDense(n, y)); err != nil {
		t.Fatal(err)
	}
	return 1 / c.AtVec(2) / (hw.MemoryTBps * tbpsToBytesPerMs), n
}

// TestDecodeAttentionFractionFromTheOpDatabase recomputes Hardware.DecodeAttentionFraction: per
// GPU and KV-cache format (bfloat16, fp8), the median over the three backends' newest
// generation_attention_perf tables and 1, 2, 4 and 8 KV heads per GPU (8 query heads per KV
// head, head dim 128: Llama-3.1-70B's layout at TP8 to TP1) of the rate at which the kernels
// read the KV cache (decodeAttentionShare), as a share of the HBM bandwidth. Each shipped value
// must be within 0.006 of the tables' (two digits). Skips without ../shared.
func TestDecodeAttentionFractionFromTheOpDatabase(t *testing.T) {
	db := openDB(t)
	per := map[string][2][]float64{}
	forEachKernelTable(t, func(gpu string, hw Hardware, backend string) {
		for f, dt := range []struct {
			name  string
			bytes float64
		}{{"bfloat16", 2}, {"fp8", 1}} {
			for _, kv := range []int{1, 2, 4, 8} {
				s := opdb.AttentionShape{Heads: 8 * kv, KVHeads: kv, HeadDim: 128, KVDtype: dt.name}
				a, err := db.GenerationAttention(gpu, backend, "", s)
				if err != nil {
					t.Fatalf("%s %s %v: %v (every GPU and backend measures it today)", gpu, backend, s, err)
				}
				share, n := decodeAttentionShare(t, a, hw, dt.bytes)
				if n < 30 || !(share > 0) {
					t.Fatalf("%s %s %v: %d samples, share %v; want 30 or more and a positive share", gpu, backend, s, n, share)
				}
				p := per[gpu]
				p[f] = append(p[f], share)
				per[gpu] = p
			}
		}
	})
	for _, gpu := range kernelGPUs {
		hw, _ := LookupHardware(gpu)
		for f, name := range []string{"bfloat16", "fp8"} {
			got, q1, q3 := medianIQR(per[gpu][f])
			t.Logf("%s %s KV: median %.4f of the HBM bandwidth (interquartile range %.2f–%.2f, %d tables)", gpu, name, got, q1, q3, len(per[gpu][f]))
			if math.Abs(got-hw.DecodeAttentionFraction[f]) > 0.006 {
				t.Errorf("%s %s KV: the tables' decode attention reads the KV cache at %.4f of the bandwidth, DecodeAttentionFraction says %g", gpu, name, got, hw.DecodeAttentionFraction[f])
			}
		}
	}
}
