package grid

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/servesweep/servesweep/sim/config"
)

func TestReseeded(t *testing.T) {
	// Defaults move: the source's draws (42 → 43) and a poisson load's arrivals (42 → 43).
	x := expand(t, base, "traffic.load={type: poisson, requests_per_second: 2}")
	p := &x.Points[0]
	q, ok, err := p.Reseeded(1)
	if err != nil || !ok {
		t.Fatalf("Reseeded: %v, %v", ok, err)
	}
	if got := q.Config.Traffic.Source.DrawSeed(); got != config.DefaultSeed+1 {
		t.Errorf("source seed %d, want %d", got, config.DefaultSeed+1)
	}
	if got := q.Config.Traffic.Load.Seed; got != p.Config.Traffic.Load.Seed+1 {
		t.Errorf("poisson seed %d, want %d", got, p.Config.Traffic.Load.Seed+1)
	}
	if q.ID != p.ID || q.Index != p.Index || q.GPUs != p.GPUs {
		t.Errorf("the copy is another point: %s #%d %d GPUs, want %s #%d %d GPUs", q.ID, q.Index, q.GPUs, p.ID, p.Index, p.GPUs)
	}
	if p.Config.Traffic.Source.Seed != nil || strings.Contains(string(p.YAML), "seed: 43") {
		t.Error("Reseeded changed the point's own config")
	}
	// The copy's YAML is its config: re-read, it reproduces the moved seeds.
	back, err := config.Decode(q.YAML, "copy", nil, config.WithMarker(ConcreteMarker))
	if err != nil || back.Traffic.Source.DrawSeed() != config.DefaultSeed+1 || back.Traffic.Load.Seed != q.Config.Traffic.Load.Seed {
		t.Errorf("the copy's YAML does not hold its seeds (%v):\n%s", err, q.YAML)
	}

	// A seed the spec sets moves from its value, speculative decoding's too; a concurrency load
	// draws no arrivals and keeps its config.
	x = expand(t, base, "traffic.source.seed=7", "engine.speculation={kind: ngram, num_speculative_tokens: 2, acceptance_rates: [0.8, 0.6], seed: 100}")
	q, ok, err = x.Points[0].Reseeded(3)
	if err != nil || !ok {
		t.Fatalf("Reseeded with seeds set: %v, %v", ok, err)
	}
	if q.Config.Traffic.Source.DrawSeed() != 10 || q.Config.Engine.Speculation.Seed != 103 {
		t.Errorf("seeds %d and %d, want 10 and 103", q.Config.Traffic.Source.DrawSeed(), q.Config.Engine.Speculation.Seed)
	}
	if q.Config.Traffic.Load.Type != config.LoadConcurrency || q.Config.Traffic.Load.Concurrency != 4 {
		t.Errorf("load %+v, want concurrency 4", q.Config.Traffic.Load)
	}

	if _, _, err := x.Points[0].Reseeded(0); err == nil {
		t.Error("offset 0 accepted")
	}
}

func TestReseededNothingRandom(t *testing.T) {
	// A trace replayed at a concurrency draws nothing: no seed to move.
	trace := filepath.Join(t.TempDir(), "trace.jsonl")
	if err := os.WriteFile(trace, []byte(`{"timestamp": 0, "input_length": 100, "output_length": 8, "hash_ids": [1]}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	spec := strings.Replace(base, "source: {type: synthetic, input_tokens: 128, output_tokens: 8}",
		"source: {type: trace, format: mooncake, paths: ["+trace+"], block_size: 512}", 1)
	spec = strings.Replace(spec, "stop: {requests: 10}", "stop: {max_virtual_time_seconds: 60}", 1)
	x := expand(t, spec)
	q, ok, err := x.Points[0].Reseeded(1)
	if err != nil || ok || q != nil {
		t.Errorf("Reseeded of a trace at a concurrency: %v, %v, %v; want nil, false, nil", q, ok, err)
	}
	// Nor at its own timestamps.
	x = expand(t, spec, "traffic.load={type: trace_timestamps, speedup: 2}")
	if q, ok, err := x.Points[0].Reseeded(1); err != nil || ok || q != nil {
		t.Errorf("Reseeded of a trace at its timestamps: %v, %v, %v; want nil, false, nil", q, ok, err)
	}
}
