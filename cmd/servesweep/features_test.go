package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The issue-20 features end to end: speculation's keys in prediction.json; unchunked prefill's
// rejections counted by reason and warned about; the aic prefill-load model exit 2 without a
// performance database, naming the field and how to give one, and running with --systems-dir.
func TestPredictSpeculationUnchunkedAIC(t *testing.T) {
	t.Setenv(envSystemsDir, "")
	dir := t.TempDir()
	code, _, errs := runCLI(t, "predict", "--stack", "dynamo", "-c", seedConfig, "--output-dir", dir,
		"--set", "engine.speculation={kind: ngram, num_speculative_tokens: 2, acceptance_rates: [1, 1]}")
	if code != 0 {
		t.Fatalf("speculation: exit %d: %s", code, errs)
	}
	if s := readSummary(t, dir); s["mean_accepted_length"] != 3.0 || s["draft_acceptance_rate"] != 1.0 {
		t.Errorf("speculation: mean_accepted_length %v, draft_acceptance_rate %v; want 3 and 1", s["mean_accepted_length"], s["draft_acceptance_rate"])
	}

	dir = t.TempDir()
	code, _, errs = runCLI(t, "predict", "--stack", "dynamo", "-c", seedConfig, "--output-dir", dir,
		"--set", "engine.enable_chunked_prefill=false", "--set", "engine.workers.aggregated.scheduler.max_batched_tokens=1000")
	if code != 0 || !strings.Contains(errs, "max_batched_tokens (prompt longer than scheduler.max_batched_tokens") {
		t.Errorf("unchunked: exit %d, stderr %q", code, errs)
	}
	s := readSummary(t, dir)
	if by, _ := s["rejected_requests_by_reason"].(map[string]any); by["max_batched_tokens"] != s["rejected_requests"] || s["rejected_requests"] == 0.0 {
		t.Errorf("unchunked: rejected %v by reason %v", s["rejected_requests"], s["rejected_requests_by_reason"])
	}

	aic := []string{"--set", "router={policy: kv_router, prefill_load_model: {type: aic}}", "--set", "engine.workers.aggregated.parallelism.replicas=2"}
	code, _, errs = runCLI(t, append([]string{"predict", "--stack", "dynamo", "-c", seedConfig, "--output-dir", t.TempDir()}, aic...)...)
	if code != 2 || !strings.Contains(errs, "router.prefill_load_model.type: aic") || !strings.Contains(errs, "--systems-dir") {
		t.Errorf("aic without a database: exit %d, stderr %q", code, errs)
	}
	const systems = "../../../shared/data/aic-systems"
	if _, err := os.Stat(filepath.Join(systems, "h200_sxm.yaml")); err != nil {
		t.Skipf("performance database not available at %s: %v", systems, err)
	}
	code, _, errs = runCLI(t, append([]string{"predict", "--stack", "dynamo", "-c", seedConfig, "--output-dir", t.TempDir(), "--systems-dir", systems}, aic...)...)
	if code != 0 {
		t.Errorf("aic with --systems-dir: exit %d: %s", code, errs)
	}
}
