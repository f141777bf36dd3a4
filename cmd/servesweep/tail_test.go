package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/servesweep/servesweep/results"
)

// tailSpec is a small sweep with fixed timing (a pass with a prefill takes 15 + 30 ms, a decode
// pass 30 ms) under Poisson arrivals and an SLA of percentile bounds only: p99 TTFT <= 1000 ms and
// p99 ITL (every inter-token gap) <= 40 ms. A prefill pass stalls the requests decoding beside it
// for 45 ms, more than 40, so the p99 ITL holds only where prefills rarely overlap decodes (few
// requests per replica); one replica at 16 requests/s queues beyond 1000 ms TTFT.
const tailSpec = `traffic:
  source: {type: synthetic, input_tokens: 100, output_tokens: 50}
  load: {type: poisson, requests_per_second: {choices: [1, 4, 16]}, seed: 7}
  stop: {requests: 400}
engine:
  model: meta-llama/Meta-Llama-3.1-8B-Instruct
  hardware: h100_sxm
  context_length: 8192
  workers:
    aggregated:
      parallelism: {replicas: {choices: [1, 2, 4]}, tensor: 1}
      scheduler: {max_batched_tokens: 1000, max_sequences: 8}
      kv_cache: {block_size: 16, capacity: {type: fixed, blocks: 100000}}
      timing: {type: fixed, prefill_ms: 15, decode_ms: 30}
router: {policy: round_robin}
evaluation: {sla: {p99_ttft_ms: 1000, p99_itl_ms: 40}}
optimization:
  objectives:
    - {metric: output_throughput_tok_s, direction: maximize}
    - {metric: gpus, direction: minimize}
`

// With evaluation.sla {p99_ttft_ms: 1000, p99_itl_ms: 40}, no ok row and no recommendation has a
// p99 TTFT above 1000 ms or a p99 ITL above 40 ms, with or without a capacity search; the rows
// that miss a bound are infeasible and name it. The sweep must produce both kinds, so that the
// check can fail.
func TestSweepPercentileSLAKeepsTailsOffTheFront(t *testing.T) {
	endToEnd(t)
	spec := filepath.Join(t.TempDir(), "tail.yaml")
	if err := os.WriteFile(spec, []byte(tailSpec), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		sets []string
	}{
		{"grid", nil},
		{"capacity search", []string{"--set", "traffic.load.requests_per_second=1", "--set", "optimization.capacity_search={min: 0.25, max: 64}"}},
	} {
		dir := filepath.Join(t.TempDir(), "out")
		code, out, errs := runCLI(t, append([]string{"sweep", "-c", spec, "--output-dir", dir, "-q"}, c.sets...)...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s\n%s", c.name, code, errs, out)
		}
		rows := readRows(t, dir)
		byID := map[string]*results.Row{}
		ok, missed := 0, map[string]int{}
		for i := range rows {
			r := &rows[i]
			byID[r.PointID] = r
			if r.Status == results.StatusOK || r.Status == results.StatusDegraded {
				ok++
				if *r.P99TTFTMs > 1000 || *r.P99ITLMs > 40 || !*r.SLAPercentileTermsMet {
					t.Errorf("%s: %s row %s has p99 TTFT %g, p99 ITL %g, terms met %v", c.name, r.Status, r.PointID,
						*r.P99TTFTMs, *r.P99ITLMs, *r.SLAPercentileTermsMet)
				}
				continue
			}
			if r.Status != results.StatusInfeasible || !strings.HasPrefix(r.Reason, "sla_constraint:") {
				t.Errorf("%s: row %s status %s reason %q", c.name, r.PointID, r.Status, r.Reason)
				continue
			}
			for _, key := range strings.Split(*r.SLAPercentileTermsFailed, ",") {
				missed[key]++
				if !strings.Contains(r.Reason, key+" ") {
					t.Errorf("%s: row %s missed %s but its reason says %q", c.name, r.PointID, key, r.Reason)
				}
			}
			if (strings.Contains(*r.SLAPercentileTermsFailed, "p99_ttft_ms")) != (*r.P99TTFTMs > 1000) ||
				(strings.Contains(*r.SLAPercentileTermsFailed, "p99_itl_ms")) != (*r.P99ITLMs > 40) {
				t.Errorf("%s: row %s failed %s with p99 TTFT %g and p99 ITL %g", c.name, r.PointID,
					*r.SLAPercentileTermsFailed, *r.P99TTFTMs, *r.P99ITLMs)
			}
		}
		if ok == 0 || (c.sets == nil && (missed["p99_ttft_ms"] == 0 || missed["p99_itl_ms"] == 0)) {
			t.Errorf("%s: %d rows meet the SLA and the bounds missed are %v; the sweep must have both", c.name, ok, missed)
		}
		recs, _ := filepath.Glob(filepath.Join(dir, "recommendations", "*.yaml"))
		if len(recs) == 0 {
			t.Fatalf("%s: no recommendation:\n%s", c.name, out)
		}
		for _, rec := range recs {
			data, err := os.ReadFile(rec)
			if err != nil {
				t.Fatal(err)
			}
			m := regexp.MustCompile(`point ([0-9a-f]{12})`).FindStringSubmatch(string(data))
			if m == nil || byID[m[1]] == nil {
				t.Fatalf("%s: %s names no row", c.name, rec)
			}
			if r := byID[m[1]]; r.Status != results.StatusOK || *r.P99TTFTMs > 1000 || *r.P99ITLMs > 40 {
				t.Errorf("%s: recommendation %s: row %s p99 TTFT %g p99 ITL %g", c.name, rec, r.Status, *r.P99TTFTMs, *r.P99ITLMs)
			}
		}
	}
}
