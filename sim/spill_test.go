package sim

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/servesweep/servesweep/sim/config"
	"github.com/servesweep/servesweep/sim/engine"
)

// spillConfigs are runs of a few thousand passes per worker (several 4096-pass chunks) with
// varied gaps (uniform prompt and output lengths, a small KV pool that preempts) that stop at a
// virtual-time limit with requests still decoding, so that Build uncounts pass runs crossing
// chunk boundaries: aggregated with 3 workers, and disaggregated, whose prefill workers' logs
// share the run's budget.
func spillConfigs(t *testing.T) map[string]*config.Config {
	src := "traffic.source={type: synthetic, input_tokens: {distribution: uniform, min: 100, max: 3000}, " +
		"output_tokens: {distribution: uniform, min: 200, max: 4000}}"
	agg := mustLoad(t, "../examples/speed-workload.yaml", src,
		"traffic.load={type: concurrency, concurrency: 24}", "traffic.stop={requests: 2000}",
		"engine.workers.aggregated.parallelism.replicas=3",
		"engine.workers.aggregated.kv_cache.capacity={type: fixed, blocks: 600}")
	agg.Traffic.Stop.MaxVirtualTimeSeconds = 600 // synthetic sources refuse it in YAML; the loop honours it
	dis := mustLoad(t, seedDisaggregated, src, "traffic.load={type: concurrency, concurrency: 32}",
		"traffic.stop={requests: 2000}", "engine.workers.decode.kv_cache.capacity={type: fixed, blocks: 900}")
	dis.Traffic.Stop.MaxVirtualTimeSeconds = 400
	return map[string]*config.Config{"aggregated": agg, "disaggregated": dis}
}

// comparable is s's JSON with the host-time fields zeroed.
func comparable(t *testing.T, s *Result) []byte {
	t.Helper()
	c := *s.Summary
	c.WallTimeMs, c.ProcessedTokensPerS, c.ProcessedOutputTokensPerS = 0, 0, 0
	b, err := json.Marshal(c.Map())
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A run whose pass logs spill every full chunk (a budget below one chunk) reports the same
// summary, to the bit, as the run that keeps them in memory, and leaves nothing in TMPDIR; the
// default budget never creates a file for such a run.
func TestSpilledPassLogsSameSummary(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	for name, cfg := range spillConfigs(t) {
		t.Run(name, func(t *testing.T) {
			mem, err := Run(context.Background(), cfg, Options{})
			if err != nil {
				t.Fatal(err)
			}
			disk, err := Run(context.Background(), cfg, Options{passBudget: 1})
			if err != nil {
				t.Fatal(err)
			}
			if mem.passChunksSpilled != 0 || disk.passChunksSpilled < 6 {
				t.Fatalf("chunks spilled: %d under the default budget (want 0), %d under a tiny one (want >= 6)", mem.passChunksSpilled, disk.passChunksSpilled)
			}
			crossing := 0
			for i := range disk.Requests {
				if r := &disk.Requests[i]; r.Status != engine.Completed {
					r.EachRun(func(run engine.PassRun) {
						if run.First/4096 != run.Last/4096 { // metrics.passChunkLen
							crossing++
						}
					})
				}
			}
			if disk.Summary.UnfinishedRequests == 0 || crossing == 0 {
				t.Fatalf("%d unfinished requests, %d of their pass runs cross a chunk boundary: uncounting spilled chunks is not exercised", disk.Summary.UnfinishedRequests, crossing)
			}
			if m, d := comparable(t, mem), comparable(t, disk); string(m) != string(d) {
				t.Errorf("summaries differ:\n in memory %s\n spilled   %s", m, d)
			}
			ms, ds := *mem.Summary, *disk.Summary
			ms.WallTimeMs, ms.ProcessedTokensPerS, ms.ProcessedOutputTokensPerS = 0, 0, 0
			ds.WallTimeMs, ds.ProcessedTokensPerS, ds.ProcessedOutputTokensPerS = 0, 0, 0
			if !reflect.DeepEqual(ms, ds) {
				t.Errorf("summaries differ:\n in memory %+v\n spilled   %+v", ms, ds)
			}
			if mem.Summary.ITL.Samples < 100000 {
				t.Errorf("only %d ITL samples", mem.Summary.ITL.Samples)
			}
		})
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		t.Errorf("%s left in TMPDIR", e.Name())
	}
}

// A TMPDIR where no file can be created fails a run that must spill, with an error naming the
// spill file and saying to set TMPDIR; the same run under the default budget never touches the
// disk and succeeds.
func TestSpillUnwritableTMPDIR(t *testing.T) {
	t.Setenv("TMPDIR", filepath.Join(t.TempDir(), "missing"))
	cfg := spillConfigs(t)["aggregated"]
	res, err := Run(context.Background(), cfg, Options{passBudget: 1})
	if err == nil || res != nil {
		t.Fatalf("run with an unusable TMPDIR: result %v, error %v; want an error", res, err)
	}
	if msg := err.Error(); !strings.Contains(msg, "servesweep-passes-") || !strings.Contains(msg, "set TMPDIR") {
		t.Errorf("error %q does not name the spill file and say to set TMPDIR", msg)
	}
	if _, err := Run(context.Background(), cfg, Options{}); err != nil {
		t.Errorf("under the default budget: %v", err)
	}
}
