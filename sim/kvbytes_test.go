package sim

import (
	"fmt"
	"slices"
	"testing"

	"github.com/servesweep/servesweep/sim/config"
)

// An explicit KV size more than 1.5 times off what Llama-3.1-8B's KV gives is warned about with
// both values and the precision: a token's KV is 32 layers × 2 × 8 KV heads × 128 head dim × 2
// bytes = 131,072 in BF16 and 65,536 in FP8; one prefill GPU of TP2 holds half the KV heads,
// 32,768 bytes in FP8. Sizes within 1.5 times, auto, and a model the catalog does not know are
// not warned about.
func TestKVBytesWarnings(t *testing.T) {
	const transfer = "engine.kv_transfer.bytes_per_token: "
	const tail = " (what auto derives); the run keeps %s, which sets every transfer's time: write auto, or keep the value if it is deliberate"
	const model = "meta-llama/Meta-Llama-3.1-8B-Instruct"
	for _, c := range []struct {
		file string
		sets []string
		want []string
	}{
		{"disaggregated.yaml", []string{"engine.precision.kv_cache=fp8"}, []string{transfer + "131072 bytes a token is 2 times the 65536 bytes " +
			"a token that " + model + "'s KV cache in fp8 puts on one prefill GPU of tensor 1, pipeline 1" + fmt.Sprintf(tail, "131072")}},
		{"disaggregated.yaml", []string{"engine.kv_transfer.bytes_per_token=1"}, []string{transfer + "1 byte a token is 1/131072 of the " +
			"131072 bytes a token that " + model + "'s KV cache in bf16 puts on one prefill GPU of tensor 1, pipeline 1" + fmt.Sprintf(tail, "1")}},
		{"disaggregated.yaml", []string{"engine.precision.kv_cache=fp8", "engine.workers.prefill.parallelism.tensor=2"}, []string{transfer +
			"131072 bytes a token is 4 times the 32768 bytes a token that " + model + "'s KV cache in fp8 puts on one prefill GPU of " +
			"tensor 2, pipeline 1" + fmt.Sprintf(tail, "131072")}},
		{"synthetic.yaml", []string{"engine.workers.aggregated.kv_cache.bytes_per_token=1"}, []string{"engine.workers.aggregated.kv_cache." +
			"bytes_per_token: 1 byte a token is 1/131072 of the 131072 bytes a token that " + model + "'s KV cache in bf16 takes over all " +
			"layers (what auto derives); the run keeps 1, which sizes this role's default KV pool and an auto kv_transfer: write auto, or " +
			"keep the value if it is deliberate"}},
		{"synthetic.yaml", []string{"engine.workers.aggregated.kv_cache.bytes_per_token=300000"}, []string{"engine.workers.aggregated.kv_cache." +
			"bytes_per_token: 300000 bytes a token is 2.29 times the 131072 bytes a token that " + model + "'s KV cache in bf16 takes over " +
			"all layers (what auto derives); the run keeps 300000, which sizes this role's default KV pool and an auto kv_transfer: write " +
			"auto, or keep the value if it is deliberate"}},
		{"disaggregated.yaml", nil, nil}, // BF16's 131072 at TP1
		{"disaggregated.yaml", []string{"engine.kv_transfer.bytes_per_token=98304"}, nil},                                  // 0.75 of BF16's 131072
		{"disaggregated.yaml", []string{"engine.precision.kv_cache=fp8", "engine.kv_transfer.bytes_per_token=98304"}, nil}, // exactly 1.5 times FP8's 65536
		{"disaggregated.yaml", []string{"engine.kv_transfer.bytes_per_token=auto"}, nil},
		{"synthetic.yaml", []string{"engine.workers.aggregated.kv_cache.bytes_per_token=131072"}, nil},
		{"synthetic.yaml", []string{"engine.model=acme/unknown-model", "engine.workers.aggregated.kv_cache.bytes_per_token=1"}, nil},
	} {
		cfg, err := config.LoadFile("../examples/"+c.file, c.sets)
		if err != nil {
			t.Fatalf("%s %v: %v", c.file, c.sets, err)
		}
		if got := KVBytesWarnings(cfg); !slices.Equal(got, c.want) {
			t.Errorf("%s %v:\n got %q\nwant %q", c.file, c.sets, got, c.want)
		}
	}
}
