package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
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

// The printed front and report.md restate the SLA, every bound with what it bounds and the
// attainment target, and say whose the prices are: the built-in sweep's are example prices
// (also when `servesweep report` reads the results back), a --set price makes them the user's.
func TestSweepRestatesSLAAndPrices(t *testing.T) {
	endToEnd(t)
	sla := "SLA (evaluation.sla): ttft_ms 500 (each request's TTFT <= 500 ms), itl_ms 50 (each request's mean inter-token gap <= 50 ms): " +
		"for at least 99 % of offered requests at each deployment's capacity (capacity search attainment 0.99); p99_itl_ms 50 " +
		"(the run's p99 of every inter-token gap <= 50 ms)"
	example := "Prices (USD per GPU-hour): h100_sxm 2.5, h200_sxm 3.5: the built-in sweep's EXAMPLE prices"
	dir := filepath.Join(t.TempDir(), "sweep")
	code, out, errs := runCLI(t, append([]string{"sweep", "--output-dir", dir, "-q"}, oneDeployment...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, errs, out)
	}
	report, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	code, again, errs := runCLI(t, "report", "--results", dir, "--overwrite")
	if code != 0 {
		t.Fatalf("report: exit %d: %s", code, errs)
	}
	// stdout wraps at 120 characters: compare its lines whole.
	for name, text := range map[string]string{"sweep stdout": unwrapLines(out), "report.md": string(report), "report stdout": unwrapLines(again)} {
		if !strings.Contains(text, sla) || !strings.Contains(text, example) {
			t.Errorf("%s does not restate the SLA and the example prices:\n%s", name, text)
		}
	}
	dir = filepath.Join(t.TempDir(), "priced")
	code, out, errs = runCLI(t, append([]string{"sweep", "--output-dir", dir, "-q", "--set", "optimization.cost.gpu_hour_usd.h100_sxm=3"},
		oneDeployment...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, errs, out)
	}
	if want := "Prices (USD per GPU-hour): h100_sxm 3, h200_sxm 3.5: yours, from optimization.cost.gpu_hour_usd of examples/default-sweep.yaml."; !strings.Contains(unwrapLines(out), want) {
		t.Errorf("stdout lacks %q:\n%s", want, out)
	}
	// The built-in spec's own file given with -c keeps its example prices.
	dir = filepath.Join(t.TempDir(), "file")
	code, out, errs = runCLI(t, append([]string{"sweep", "-c", "../../examples/default-sweep.yaml", "--output-dir", dir, "-q"}, oneDeployment...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, errs, out)
	}
	if !strings.Contains(unwrapLines(out), example) {
		t.Errorf("-c examples/default-sweep.yaml: stdout lacks %q:\n%s", example, out)
	}
}

// predict with percentile bounds writes sla_percentile_terms_met and _failed to prediction.json
// and says on the console which it missed (with the run's value) and which it met: no TTFT is
// as short as 0.001 ms, and no gap reaches 10 s.
func TestPredictPercentileBounds(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	code, out, errs := runCLI(t, "predict", "--stack", "dynamo", "-c", seedConfig, "--output-dir", dir,
		"--set", "evaluation.sla={p99_ttft_ms: 0.001, p99_itl_ms: 10000}")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	s := readSummary(t, dir)
	failed, _ := s["sla_percentile_terms_failed"].([]any)
	if s["sla_percentile_terms_met"] != false || len(failed) != 1 || failed[0] != "p99_ttft_ms" {
		t.Errorf("met %v failed %v; want false and [p99_ttft_ms]", s["sla_percentile_terms_met"], failed)
	}
	want := "SLA percentile bounds: missed p99_ttft_ms " + strconv.FormatFloat(s["p99_ttft_ms"].(float64), 'g', 9, 64) +
		" > 0.001; met p99_itl_ms\n"
	if !strings.Contains(out, want) {
		t.Errorf("stdout lacks %q:\n%s", want, out)
	}
}
