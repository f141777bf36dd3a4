package grid

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/servesweep/servesweep/sim/config"
)

// drawn is base with prompt lengths drawn from a distribution.
var drawn = strings.Replace(base, "input_tokens: 128", "input_tokens: {distribution: uniform, min: 64, max: 192}", 1)

func TestReseeded(t *testing.T) {
	// Defaults move: the source's draws (42 → 43) and a poisson load's arrivals (42 → 43).
	x := expand(t, drawn, "traffic.load={type: poisson, requests_per_second: 2}")
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
	x = expand(t, drawn, "traffic.source.seed=7", "engine.speculation={kind: ngram, num_speculative_tokens: 2, acceptance_rates: [0.8, 0.6], seed: 100}")
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

	// A seed at the field's largest value moves down instead of overflowing.
	x = expand(t, drawn, "traffic.source.seed=9223372036854775807")
	if q, ok, err = x.Points[0].Reseeded(1); err != nil || !ok || q.Config.Traffic.Source.DrawSeed() != 9223372036854775806 {
		t.Errorf("Reseeded at the largest seed: %v, %v, want 9223372036854775806", ok, err)
	}

	// Fixed lengths draw nothing: at a concurrency no seed moves the run; at a poisson rate only
	// the arrivals' does.
	x = expand(t, base)
	if q, ok, err := x.Points[0].Reseeded(1); err != nil || ok || q != nil {
		t.Errorf("Reseeded of fixed lengths at a concurrency: %v, %v, %v; want nil, false, nil", q, ok, err)
	}
	x = expand(t, base, "traffic.load={type: poisson, requests_per_second: 2}")
	if q, ok, err := x.Points[0].Reseeded(1); err != nil || !ok || q.Config.Traffic.Source.Seed != nil || q.Config.Traffic.Load.Seed != 43 {
		t.Errorf("Reseeded of fixed lengths at a poisson rate: %v, %v; want the load's seed alone moved", ok, err)
	}

	if _, _, err := x.Points[0].Reseeded(0); err == nil {
		t.Error("offset 0 accepted")
	}
}

func TestSourceDraws(t *testing.T) {
	for _, tc := range []struct {
		source string
		want   bool
	}{
		{"{type: synthetic, input_tokens: 128, output_tokens: 8}", false},
		{"{type: synthetic, input_tokens: {distribution: uniform, min: 64, max: 64}, output_tokens: 8}", false},
		{"{type: synthetic, input_tokens: {distribution: empirical, values: [64, 64]}, output_tokens: 8}", false},
		{"{type: synthetic, input_tokens: {distribution: empirical, values: [64, 65]}, output_tokens: 8}", true},
		{"{type: synthetic, input_tokens: 128, output_tokens: {distribution: normal, mean: 8, stddev: 2}}", true},
		{"{type: synthetic-session, new_input_tokens_per_turn: 128, output_tokens_per_turn: 8, session: {turns: 2, inter_turn_delay_ms: 100}}", false},
		{"{type: synthetic-session, new_input_tokens_per_turn: 128, output_tokens_per_turn: 8, session: {turns: 2, inter_turn_delay_ms: 100, inter_turn_delay_stddev_ms: 20}}", true},
		{"{type: mixture, components: [{weight: 1, source: {type: synthetic, input_tokens: 128, output_tokens: 8}}]}", false},
		{"{type: mixture, components: [{weight: 1, source: {type: synthetic, input_tokens: 128, output_tokens: 8}}, {weight: 1, source: {type: synthetic, input_tokens: 64, output_tokens: 8}}]}", true},
	} {
		sets := []string{"traffic.source=" + tc.source}
		if strings.Contains(tc.source, "synthetic-session") {
			sets = append(sets, "traffic.stop={sessions: 10}")
		}
		x := expand(t, base, sets...)
		if got := sourceDraws(&x.Points[0].Config.Traffic.Source); got != tc.want {
			t.Errorf("%s: draws %v, want %v", tc.source, got, tc.want)
		}
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

// DrawingSeeds names the seeds a simulation draws from, in a fixed order; Reseeded moves exactly
// those.
func TestDrawingSeeds(t *testing.T) {
	two := "engine.workers.aggregated.parallelism.replicas=2"
	for _, tc := range []struct {
		spec string
		sets []string
		want []string
	}{
		{base, nil, nil},
		{drawn, nil, []string{SeedSource}},
		{base, []string{"traffic.load={type: poisson, requests_per_second: 2}"}, []string{SeedLoad}},
		{drawn, []string{"traffic.load={type: poisson, requests_per_second: 2}", "router={policy: kv_router}", two,
			"engine.speculation={kind: ngram, num_speculative_tokens: 1, acceptance_rates: [0.5]}"},
			[]string{SeedSource, SeedLoad, SeedSpeculation, SeedRouter}},
		{base, []string{"router={policy: random}", two}, []string{SeedRouter}},
		{base, []string{"router={policy: least_loaded}", two}, nil},
	} {
		p := &expand(t, tc.spec, tc.sets...).Points[0]
		if got := DrawingSeeds(p.Config); !slices.Equal(got, tc.want) {
			t.Errorf("%v: DrawingSeeds %v, want %v", tc.sets, got, tc.want)
		}
		if _, ok, err := p.Reseeded(1); err != nil || ok != (len(tc.want) > 0) {
			t.Errorf("%v: Reseeded moved something: %v (%v), want %v", tc.sets, ok, err, len(tc.want) > 0)
		}
	}
}

func TestReseededRouter(t *testing.T) {
	const two = "engine.workers.aggregated.parallelism.replicas=2"
	// kv_router over two workers draws its ties from router.seed: unset it moves from the
	// default, set it moves from its value; nothing else of a fixed-length run draws.
	for _, tc := range []struct {
		sets []string
		want uint64
	}{
		{[]string{"router={policy: kv_router}", two}, config.DefaultRouterSeed + 1},
		{[]string{"router={policy: random, seed: 9}", two}, 10},
		{[]string{"router={policy: kv_router, seed: 18446744073709551615}", two}, 18446744073709551614},
		// One worker, but two attention-DP ranks to choose between.
		{[]string{"router={policy: random}", "engine.workers.aggregated.parallelism.attention_data=2"}, config.DefaultRouterSeed + 1},
	} {
		x := expand(t, base, tc.sets...)
		p := &x.Points[0]
		q, ok, err := p.Reseeded(1)
		if err != nil || !ok {
			t.Fatalf("%v: Reseeded: %v, %v", tc.sets, ok, err)
		}
		if got := q.Config.Router.RandomSeed(); got != tc.want {
			t.Errorf("%v: router seed %d, want %d", tc.sets, got, tc.want)
		}
		if q.Config.Traffic.Source.Seed != nil || q.Config.Traffic.Load.Type != config.LoadConcurrency {
			t.Errorf("%v: moved more than the router's seed: source %v, load %+v", tc.sets, q.Config.Traffic.Source.Seed, q.Config.Traffic.Load)
		}
		back, err := config.Decode(q.YAML, "copy", nil, config.WithMarker(ConcreteMarker))
		if err != nil || back.Router.RandomSeed() != tc.want {
			t.Errorf("%v: the copy's YAML does not hold the router's seed (%v):\n%s", tc.sets, err, q.YAML)
		}
		if q.ID != p.ID || p.Config.Router.RandomSeed() == tc.want {
			t.Errorf("%v: the copy is another point or the point itself changed", tc.sets)
		}
	}
	// Routers that draw nothing: round_robin and least_loaded, and kv_router over one worker.
	for _, sets := range [][]string{{"router={policy: round_robin}", two}, {"router={policy: least_loaded}", two}, {"router={policy: kv_router}"}} {
		x := expand(t, base, sets...)
		if q, ok, err := x.Points[0].Reseeded(1); err != nil || ok || q != nil {
			t.Errorf("%v: Reseeded: %v, %v, %v; want nil, false, nil", sets, q, ok, err)
		}
	}
}

// An explicit router seed of 42 is the unset one: the same class of configs (CanonicalKey), as
// another seed is not.
func TestCanonicalRouterSeed(t *testing.T) {
	two := "engine.workers.aggregated.parallelism.replicas=2"
	unset := expand(t, base, "router={policy: kv_router}", two).Points[0].Config
	set42 := expand(t, base, "router={policy: kv_router, seed: 42}", two).Points[0].Config
	set7 := expand(t, base, "router={policy: kv_router, seed: 7}", two).Points[0].Config
	if PointID(unset) == PointID(set42) {
		t.Fatal("an explicit seed 42 has the unset config's point ID: the case checks nothing")
	}
	if CanonicalKey(set42) != CanonicalKey(unset) {
		t.Error("router.seed 42 is another class than an unset seed")
	}
	if CanonicalKey(set7) == CanonicalKey(unset) {
		t.Error("router.seed 7 is the class of an unset seed")
	}
}
