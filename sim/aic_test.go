package sim

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/servesweep/servesweep/sim/config"
	"github.com/servesweep/servesweep/sim/timing/opdb"
)

// aicConfig is testConfig on two replicas of Llama-3.1-8B on h100_sxm under kv_router with the
// aic prefill-load model (fixed engine timing: the router's prediction uses op_level anyway).
func aicConfig(model string) *config.Config {
	cfg := testConfig(512, 16, 24, 8, 4000)
	cfg.Engine.Model, cfg.Engine.Hardware = model, "h100_sxm"
	cfg.Engine.Workers.Aggregated.Parallelism.Replicas = 2
	cfg.Router = config.Router{Policy: config.PolicyKVRouter, PrefillLoadModel: config.PrefillLoadModel{Type: "aic"}}
	return cfg
}

// TestAICNeedsDatabase: without a performance database the aic load model is an error on
// router.prefill_load_model.type naming the GPU and backend, caused by ErrNoSystems, from Run and
// from Check alike; an unknown model is an error on engine.model naming aic as what needs it.
func TestAICNeedsDatabase(t *testing.T) {
	cfg := aicConfig("meta-llama/Meta-Llama-3.1-8B-Instruct")
	_, runErr := Run(context.Background(), cfg, Options{})
	for _, err := range []error{runErr, Check(cfg, nil)} {
		var ce *config.Error
		if !errors.As(err, &ce) || ce.Path != "router.prefill_load_model.type" || !errors.Is(err, ErrNoSystems) ||
			!strings.Contains(err.Error(), "none is configured") || !strings.Contains(err.Error(), "gpu h100_sxm, backend vllm") {
			t.Errorf("error %v, want one on router.prefill_load_model.type asking for a performance database", err)
		}
	}
	_, err := Run(context.Background(), aicConfig("test-model"), Options{})
	var ce *config.Error
	if !errors.As(err, &ce) || ce.Path != "engine.model" || !strings.Contains(err.Error(), "router.prefill_load_model.type (aic)") {
		t.Errorf("unknown model: %v", err)
	}
}

// TestAICRoutes: with the database the aic model routes runs to completion, aggregated and
// disaggregated (the prefill router), placing requests by the decayed prefill load.
func TestAICRoutes(t *testing.T) {
	db := systemsDB(t)
	run := func(cfg *config.Config) *Result {
		t.Helper()
		res, err := Run(context.Background(), cfg, Options{Systems: db, CheckInvariants: true})
		if err != nil {
			t.Fatal(err)
		}
		checkConservation(t, res)
		return res
	}
	// Requests of 4,096 tokens every 50 ms on two replicas whose fixed 1 s prefill is far longer
	// than the op_level prediction (about 87 ms for Llama-3.1-8B on one H100). Request 0 goes to
	// slot A, request 1 to B (A still carries request 0's prefill). At 100 ms type none sees both
	// slots with one whole 4,096-token prefill (a seeded tie), while aic sees A's fully decayed
	// and B's at 4,096 · (1 − 50/87): request 2 goes to A.
	placements := func(model string) []int32 {
		cfg := aicConfig("meta-llama/Meta-Llama-3.1-8B-Instruct")
		cfg.Router.PrefillLoadModel.Type = model
		cfg.Engine.Workers.Aggregated.Timing.PrefillMs = f64(1000)
		cfg.Engine.Workers.Aggregated.KVCache.PrefixCaching = false
		cfg.Traffic = config.Traffic{
			Source: config.Source{Type: config.SourceSynthetic, InputTokens: 4096, OutputTokens: 16},
			Load:   config.Load{Type: config.LoadConstantRate, RequestsPerSecond: 20},
			Stop:   config.Stop{Requests: 12},
		}
		res := run(cfg)
		if res.Summary.CompletedRequests != 12 {
			t.Errorf("%s: completed %d of 12", model, res.Summary.CompletedRequests)
		}
		w := make([]int32, len(res.Requests))
		for i := range res.Requests {
			w[i] = res.Requests[i].Worker
		}
		return w
	}
	aic, none := placements("aic"), placements("none")
	if aic[0] == aic[1] || aic[2] != aic[0] {
		t.Errorf("aic placed requests 0, 1, 2 on %v, want A, B, A", aic[:3])
	}
	if slices.Equal(aic, none) {
		t.Errorf("aic placed every request as type none does: %v", aic)
	}
	cfg := mustLoad(t, seedDisaggregated, "router.prefill_load_model.type=aic", "engine.hardware=h100_sxm",
		"traffic={source: {type: synthetic, input_tokens: 600, output_tokens: 8}, load: {type: concurrency, concurrency: 4}, stop: {requests: 12}}")
	if s := run(cfg).Summary; s.CompletedRequests != 12 {
		t.Errorf("disaggregated aic: completed %d of 12", s.CompletedRequests)
	}
}

var (
	sharedDBOnce sync.Once
	sharedDB     *opdb.DB
	sharedDBErr  error
)

// systemsDB is the performance database beside the repository, opened once for the package's
// tests so its tables are read once (reading them is slow under the race detector); the test is
// skipped when the database is absent.
func systemsDB(t *testing.T) *opdb.DB {
	t.Helper()
	if _, err := os.Stat(filepath.Join(systemsDir, "h100_sxm.yaml")); err != nil {
		t.Skipf("performance database not available at %s: %v", systemsDir, err)
	}
	sharedDBOnce.Do(func() { sharedDB, sharedDBErr = opdb.Open(systemsDir) })
	if sharedDBErr != nil {
		t.Fatal(sharedDBErr)
	}
	return sharedDB
}
