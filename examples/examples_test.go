package examples_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/servesweep/servesweep/grid"
	"github.com/servesweep/servesweep/results"
	"github.com/servesweep/servesweep/sim/config"
)

// referenceConfigs are the examples that reproduce the reference simulator's configurations
// as its documentation gives them (the DynoSim seed's synthetic and disaggregated configs, its
// speed workload), KV pools of 16,384 and 32,768 blocks included, which an H200 could not hold
// beside Llama-3.1-8B's weights (predict says so in a note).
var referenceConfigs = map[string]bool{"synthetic.yaml": true, "disaggregated.yaml": true, "speed-workload.yaml": true}

// TestEveryExampleReadsTheShippedTrace reads every examples/*.yaml from another working
// directory, as a sweep spec (every point expanded) and, when it has no optimization section, as
// a prediction config too, and checks that each trace any of them replays is the shipped
// chat-trace.jsonl, resolved against the example's folder, and exists: every example runs as
// shipped from any directory. No example's fixed KV pool is more than its GPU could hold.
func TestEveryExampleReadsTheShippedTrace(t *testing.T) {
	files, err := filepath.Glob("*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples: %v", err)
	}
	shipped, err := filepath.Abs("chat-trace.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(shipped); err != nil {
		t.Fatal(err)
	}
	for i, f := range files {
		if files[i], err = filepath.Abs(f); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(t.TempDir())
	traced := 0
	for _, f := range files {
		name := filepath.Base(f)
		check := func(paths []string, what string) {
			if len(paths) == 0 {
				return
			}
			if !slices.Equal(paths, []string{shipped}) {
				t.Errorf("%s: %s replays %q, want [%s]", name, what, paths, shipped)
			}
		}
		s, err := grid.Load(f, nil, nil, results.CheckMetric)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		x, err := s.Expand()
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		for _, p := range x.Points {
			check(p.Config.Traffic.Source.Paths, "point "+p.ID)
		}
		// A shipped deployment its GPU could not hold would be answered as if it could; the
		// reference's own configs (referenceConfigs) keep their pools as given.
		for _, n := range x.TimingNotes {
			if strings.Contains(n, "could not hold") && !referenceConfigs[name] {
				t.Errorf("%s: %s", name, n)
			}
		}
		if len(x.Points) > 0 && len(x.Points[0].Config.Traffic.Source.Paths) > 0 {
			traced++
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(data), "\noptimization:") || strings.Contains(string(data), "\noptimizer:") {
			continue
		}
		cfg, err := config.LoadFile(f, nil, config.WithMarker(grid.ConcreteMarker))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		check(cfg.Traffic.Source.Paths, "the config")
	}
	// disaggregated, sweep-mooncake, sweep-trace-500 and trace-replay replay a trace.
	if traced != 4 {
		t.Errorf("%d examples replay a trace, want 4", traced)
	}
}
