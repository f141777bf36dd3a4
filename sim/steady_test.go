package sim

import (
	"context"
	"strconv"
	"testing"

	"github.com/servesweep/servesweep/sim/config"
	"github.com/servesweep/servesweep/sim/engine"
)

// QueueBacklog counts, by hand: of five requests, three arrive within [10, 30] (at 10, 20, 30);
// at 10 the one that arrived at 0 (terminal at 15) and the one arriving at 10 are in the system;
// at 30 the ones arriving at 20 (unfinished) and 30 (terminal at 40). One that never arrived is
// left out.
func TestQueueBacklog(t *testing.T) {
	reqs := []engine.Request{
		{ArrivalMs: 0, TerminalMs: 15},
		{ArrivalMs: 10, TerminalMs: 25},
		{ArrivalMs: 20, TerminalMs: -1},
		{ArrivalMs: 30, TerminalMs: 40},
		{ArrivalMs: -1, TerminalMs: -1},
	}
	if got := QueueBacklog(reqs, 10, 30); got != (Backlog{Arrived: 3, AtStart: 2, AtEnd: 2}) {
		t.Errorf("backlog %+v, want 3 arrived, 2 at the start, 2 at the end", got)
	}
	if (Backlog{Arrived: 100, AtStart: 5, AtEnd: 16}).Overloaded() != true || (Backlog{Arrived: 200, AtStart: 5, AtEnd: 16}).Overloaded() ||
		(Backlog{Arrived: 50, AtStart: 0, AtEnd: 10}).Overloaded() {
		t.Error("Overloaded: want a gain of 11 of 100 arrivals overloaded, 11 of 200 and 10 of 50 not")
	}
}

// One H200 serving Llama-3.1-8B (about 18 requests/s of 2k-token prompts) under poisson arrivals
// keeps up at 5 requests/s, and at 80 its system gains most of what arrives: overloaded.
func TestRunBacklogOverload(t *testing.T) {
	spec := `traffic:
  source:
    type: synthetic
    input_tokens: {distribution: uniform, min: 1639, max: 2048}
    output_tokens: {distribution: uniform, min: 103, max: 128}
  stop: {requests_per_load_unit: 20}
engine:
  model: meta-llama/Meta-Llama-3.1-8B-Instruct
  hardware: h200_sxm
  backend: vllm
  context_length: 8192
  workers:
    aggregated:
      parallelism: {replicas: 1, tensor: 1}
      scheduler: {max_batched_tokens: 8192, max_sequences: 256}
`
	for _, tc := range []struct {
		rate       string
		overloaded bool
	}{{"5", false}, {"80", true}} {
		cfg, err := config.Decode([]byte(spec), "spec.yaml", []string{"traffic.load={type: poisson, requests_per_second: " + tc.rate + "}"})
		if err != nil {
			t.Fatal(err)
		}
		res, err := Run(context.Background(), cfg, Options{})
		if err != nil {
			t.Fatal(err)
		}
		b, ok := RunBacklog(cfg, res.Requests)
		if !ok || b.Overloaded() != tc.overloaded || b.Arrived != 20*mustAtoi(tc.rate) {
			t.Errorf("poisson %s/s: backlog %+v (ok %v), overloaded %v, want %v over all %d arrivals", tc.rate, b, ok, b.Overloaded(),
				tc.overloaded, 20*mustAtoi(tc.rate))
		}
		t.Logf("poisson %s/s: %+v", tc.rate, b)
	}
}

func mustAtoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		panic(err)
	}
	return n
}
