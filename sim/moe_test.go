package sim

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/servesweep/servesweep/sim/config"
)

// moe_tensor and moe_expert only repartition an MoE model's GPUs: on a dense model, or with a
// product other than tensor × attention_data, the run is refused naming the field, whatever the
// timing (the seed config has polynomial timing and fixed capacity).
func TestMoEParallelismRules(t *testing.T) {
	for _, c := range []struct {
		sets []string
		path string
		msg  string
	}{
		{[]string{"engine.workers.aggregated.parallelism.moe_expert=2"},
			"engine.workers.aggregated.parallelism.moe_expert", "is dense"},
		{[]string{"engine.model=deepseek-ai/DeepSeek-R1", "engine.workers.aggregated.parallelism.tensor=8", "engine.workers.aggregated.parallelism.moe_expert=4"},
			"engine.workers.aggregated.parallelism.moe_expert", "(1 × 4 = 4) must equal tensor × attention_data (8 × 1 = 8)"},
		{[]string{"engine.workers.aggregated.parallelism.redundant_experts=8"},
			"engine.workers.aggregated.parallelism.redundant_experts", "is dense: use 0"},
		{[]string{"engine.model=deepseek-ai/DeepSeek-R1", "engine.workers.aggregated.parallelism.tensor=8", "engine.workers.aggregated.parallelism.moe_expert=8",
			"engine.workers.aggregated.parallelism.redundant_experts=4"},
			"engine.workers.aggregated.parallelism.moe_expert", "256 experts + 4 redundant = 260 expert slots"},
	} {
		cfg := mustLoad(t, seedSynthetic, c.sets...)
		_, err := Run(context.Background(), cfg, Options{})
		var ce *config.Error
		if !errors.As(err, &ce) || ce.Path != c.path || !strings.Contains(ce.Msg, c.msg) {
			t.Errorf("%v: %v, want %s: %q", c.sets, err, c.path, c.msg)
		}
	}
	// A legal split runs: DeepSeek-R1 on 8 GPUs, attention TP8, experts EP8.
	cfg := mustLoad(t, seedSynthetic, "engine.model=deepseek-ai/DeepSeek-R1", "engine.workers.aggregated.parallelism.tensor=8",
		"engine.workers.aggregated.parallelism.moe_expert=8", "engine.workers.aggregated.parallelism.replicas=1",
		"engine.workers.aggregated.timing={type: roofline}", "engine.workers.aggregated.kv_cache.capacity={type: default, memory_fraction: 0.9}")
	res := mustRun(t, cfg)
	if res.Summary.CompletedRequests != 100 || !(res.Summary.TPOT.Mean > 0) {
		t.Errorf("completed %d, TPOT %v", res.Summary.CompletedRequests, res.Summary.TPOT.Mean)
	}
	// Redundant experts past the memory: the hint says to lower them first.
	big := mustLoad(t, seedSynthetic, "engine.model=deepseek-ai/DeepSeek-R1", "engine.workers.aggregated.parallelism.tensor=8",
		"engine.workers.aggregated.parallelism.moe_expert=8", "engine.workers.aggregated.parallelism.replicas=1",
		"engine.workers.aggregated.parallelism.redundant_experts=2048",
		"engine.workers.aggregated.timing={type: roofline}", "engine.workers.aggregated.kv_cache.capacity={type: default, memory_fraction: 0.9}")
	if _, err := Run(context.Background(), big, Options{}); err == nil || !strings.Contains(err.Error(), "lower redundant_experts (2048 beside the model's 256 experts)") {
		t.Errorf("2048 redundant experts: %v, want the hint to lower them", err)
	}
	// 32 redundant experts over the same 8 GPUs (288 slots, 36 per GPU instead of 32): the same
	// requests complete, each decode step streaming more expert bytes.
	red := mustRun(t, mustLoad(t, seedSynthetic, "engine.model=deepseek-ai/DeepSeek-R1", "engine.workers.aggregated.parallelism.tensor=8",
		"engine.workers.aggregated.parallelism.moe_expert=8", "engine.workers.aggregated.parallelism.replicas=1",
		"engine.workers.aggregated.parallelism.redundant_experts=32",
		"engine.workers.aggregated.timing={type: roofline}", "engine.workers.aggregated.kv_cache.capacity={type: default, memory_fraction: 0.9}"))
	if red.Summary.CompletedRequests != 100 || !(red.Summary.TPOT.Mean > res.Summary.TPOT.Mean) {
		t.Errorf("with redundant experts: completed %d, TPOT %v ms, want 100 and above %v ms", red.Summary.CompletedRequests, red.Summary.TPOT.Mean, res.Summary.TPOT.Mean)
	}
}

// Every role's shape faults are reported together: a disaggregated DeepSeek-R1 config with three
// faults in the prefill shape and three in the decode shape fails with all six, each naming its
// role's field.
func TestShapeFaultsOfEveryRole(t *testing.T) {
	cfg, err := config.LoadFile("../examples/disaggregated.yaml", []string{
		"engine.model=deepseek-ai/DeepSeek-R1",
		"traffic.source={type: synthetic, input_tokens: 1024, output_tokens: 64}",
		"traffic.load={type: concurrency, concurrency: 4}", "traffic.stop={requests: 10}",
		"engine.workers.prefill.parallelism={replicas: 1, tensor: 3, moe_expert: 5}",
		"engine.workers.decode.parallelism={replicas: 1, tensor: 2, pipeline: 99, moe_tensor: 3}",
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"engine.workers.prefill.parallelism.tensor", "engine.workers.prefill.parallelism.moe_expert", "engine.workers.prefill.parallelism.moe_expert",
		"engine.workers.decode.parallelism.pipeline", "engine.workers.decode.parallelism.moe_tensor", "engine.workers.decode.parallelism.moe_tensor",
	}
	for name, err := range map[string]error{"Check": Check(cfg, nil), "Run": func() error { _, err := Run(context.Background(), cfg, Options{}); return err }()} {
		var errs config.Errors
		if !errors.As(err, &errs) {
			t.Fatalf("%s: %v, want every fault", name, err)
		}
		var got []string
		for _, e := range errs {
			got = append(got, e.Path)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: faults at %v, want %v", name, got, want)
		}
	}
}
