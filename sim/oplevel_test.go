package sim

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/servesweep/servesweep/sim/config"
	"github.com/servesweep/servesweep/sim/timing"
)

// systemsDir is the performance database subset beside the repository.
const systemsDir = "../../shared/data/aic-systems"

// How `default` timing picks its forward model: auto composes from the database when one is
// configured and holds the tables, else the roofline; op_level requires the database and names
// what it lacks; roofline is always the roofline; the result records the provider.
func TestForwardModelSelection(t *testing.T) {
	// auto is the roofline as shipped (below); here it is op_level, to test its fallbacks.
	autoOpLevel := referencePaths{autoForwardModel: config.ForwardOpLevel}
	db := systemsDB(t)
	run := func(tm config.Timing, weights string, withDB bool) (*Result, error) {
		cfg := testConfig(512, 16, 8, 4, 4000)
		cfg.Engine.Model, cfg.Engine.Hardware = "meta-llama/Meta-Llama-3.1-8B-Instruct", "h100_sxm"
		cfg.Engine.Precision.Weights = weights
		cfg.Engine.Workers.Aggregated.Timing = tm
		opt := Options{reference: autoOpLevel}
		if withDB {
			opt.Systems = db
		}
		return Run(context.Background(), cfg, opt)
	}
	def := func(fm string) config.Timing { return config.Timing{Type: config.TimingDefault, ForwardModel: fm} }
	const opLevel = "op_level vllm gemm 0.24.0, attention 0.24.0 on h100_sxm"
	for _, c := range []struct {
		name     string
		tm       config.Timing
		weights  string
		db       bool
		provider string
		errPart  string
	}{
		{"auto without a database", def("auto"), "bf16", false, "roofline", ""},
		{"auto with the database", def("auto"), "bf16", true, opLevel, ""},
		{"auto without the tables", def("auto"), "fp4", true, "roofline", ""},
		{"op_level with the database", def("op_level"), "bf16", true, opLevel, ""},
		{"op_level without a database", def("op_level"), "bf16", false, "", "and none is configured; configure one, or use forward_model: auto"},
		{"op_level without the tables", def("op_level"), "fp4", true, "", "no GEMM dtype nvfp4"},
		{"roofline with the database", config.Timing{Type: config.TimingRoofline}, "bf16", true, "roofline", ""},
		{"fixed", config.Timing{Type: config.TimingFixed, PrefillMs: f64(30), DecodeMs: f64(8)}, "bf16", true, "fixed", ""},
	} {
		res, err := run(c.tm, c.weights, c.db)
		if c.errPart != "" {
			var ce *config.Error
			if !errors.As(err, &ce) || ce.Path != "engine.workers.aggregated.timing.forward_model" || !strings.Contains(err.Error(), c.errPart) ||
				!strings.Contains(err.Error(), "h100_sxm") {
				t.Errorf("%s: error %v, want one on timing.forward_model containing %q", c.name, err, c.errPart)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if res.TimingProvider != c.provider || res.Summary.CompletedRequests != 8 {
			t.Errorf("%s: provider %q (%d completed), want %q", c.name, res.TimingProvider, res.Summary.CompletedRequests, c.provider)
		}
		// auto says why it fell back although a database is configured; the roofline's fp4 on H100
		// (no FP4 tensor cores) adds its own note.
		fell := c.db && c.provider == "roofline" && c.tm.Type == config.TimingDefault
		fp4Note := c.provider == "roofline" && c.weights == "fp4"
		want := 0
		if fell {
			want++
		}
		if fp4Note {
			want++
		}
		if len(res.TimingNotes) != want || fell && !strings.Contains(res.TimingNotes[0], "no GEMM dtype nvfp4") ||
			fp4Note && !strings.Contains(res.TimingNotes[want-1], "h100_sxm has no FP4 tensor cores") {
			t.Errorf("%s: notes %q", c.name, res.TimingNotes)
		}
	}
	// A backend_version the database lacks is a config error even under auto.
	cfg := testConfig(512, 16, 8, 4, 4000)
	cfg.Engine.Model, cfg.Engine.Hardware, cfg.Engine.BackendVersion = "meta-llama/Meta-Llama-3.1-8B-Instruct", "h100_sxm", "0.6.0"
	cfg.Engine.Workers.Aggregated.Timing = def("auto")
	var ce *config.Error
	if _, err := Run(context.Background(), cfg, Options{Systems: db, reference: autoOpLevel}); !errors.As(err, &ce) || ce.Path != "engine.backend_version" ||
		!strings.Contains(err.Error(), "available: 0.24.0") {
		t.Errorf("unknown backend_version: %v", err)
	}
}

// As shipped, forward_model auto prices passes with the roofline even with a database
// configured (timing.AutoForwardModel), and says nothing about falling back.
func TestAutoIsTheRoofline(t *testing.T) {
	if timing.AutoForwardModel != "roofline" {
		t.Skipf("timing.AutoForwardModel is %q", timing.AutoForwardModel)
	}
	cfg := testConfig(512, 16, 8, 4, 4000)
	cfg.Engine.Model, cfg.Engine.Hardware = "meta-llama/Meta-Llama-3.1-8B-Instruct", "h100_sxm"
	cfg.Engine.Workers.Aggregated.Timing = config.Timing{Type: config.TimingDefault, ForwardModel: config.ForwardAuto}
	res, err := Run(context.Background(), cfg, Options{Systems: systemsDB(t)})
	if err != nil {
		t.Fatal(err)
	}
	if res.TimingProvider != "roofline" || len(res.TimingNotes) != 0 {
		t.Errorf("auto with the database: provider %q, notes %q; want the roofline, no note", res.TimingProvider, res.TimingNotes)
	}
}
