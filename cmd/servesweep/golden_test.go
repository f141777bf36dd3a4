package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/servesweep/servesweep/results"
)

// updateGolden rewrites testdata/golden.sha256 from the current outputs:
// go test ./cmd/servesweep -run GoldenDigests -args -update. Review the diff before committing it.
var updateGolden = flag.Bool("update", false, "rewrite testdata/golden.sha256")

const goldenFile = "testdata/golden.sha256"

// wallTimeKeys are the prediction.json keys that depend on host speed.
var wallTimeKeys = []string{"wall_time_ms", "processed_tokens_per_s", "processed_output_tokens_per_s"}

// predictionDigest is the SHA-256 of the summary of dir/prediction.json (readSummary) with its
// host-time keys removed, re-encoded with sorted keys.
func predictionDigest(t *testing.T, dir string) string {
	t.Helper()
	s := readSummary(t, dir)
	for _, k := range wallTimeKeys {
		if _, ok := s[k]; !ok {
			t.Fatalf("prediction.json has no %s", k)
		}
		delete(s, k)
	}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return digest(b)
}

func digest(b []byte) string { return fmt.Sprintf("%x", sha256.Sum256(b)) }

// TestGoldenDigests pins the outputs of the seed's predict commands and of the built-in sweep:
// prediction.json (host-time keys excluded), requests.jsonl of the small runs, results.parquet
// rows (host-time columns excluded), report.md and report.html. Refactors and speed work must leave every
// digest unchanged; a change of behaviour updates the file (-update) in the same commit, with the
// reason in its message. The trace commands need the shared Mooncake trace and are skipped
// without it; the test is slow under the race detector and runs without it in make test.
func TestGoldenDigests(t *testing.T) {
	endToEnd(t)
	got := map[string]string{}
	predict := func(name string, capture bool, args ...string) {
		dir := filepath.Join(t.TempDir(), name)
		full := append([]string{"predict", "--stack", "dynamo", "--output-dir", dir}, args...)
		if capture {
			full = append(full, "--capture-per-request")
		}
		if code, _, errs := runCLI(t, full...); code != 0 {
			t.Fatalf("%s: exit %d: %s", name, code, errs)
		}
		if !capture {
			got[name+"/prediction.json"] = predictionDigest(t, dir)
			return
		}
		data, err := os.ReadFile(filepath.Join(dir, "requests.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		got[name+"/requests.jsonl"] = digest(data)
	}
	sessions := "traffic.source={type: synthetic-session, new_input_tokens_per_turn: 1024, output_tokens_per_turn: 128, session: {turns: 3, shared_prefix_ratio: 0.5, prefix_groups: 8, inter_turn_delay_ms: 250}}"
	for _, capture := range []bool{false, true} {
		predict("synthetic", capture, "-c", seedConfig)
		predict("sessions", capture, "-c", seedConfig, "--set", sessions, "--set", "traffic.stop={sessions: 50}")
	}
	predict("speed-workload", false, "-c", "../../examples/speed-workload.yaml")
	if _, err := os.Stat(moonTrace); err == nil {
		trace := traceSets(needTrace(t))
		predict("trace", false, append([]string{"-c", seedConfig}, trace...)...)
		predict("kv-router", false, append([]string{"-c", seedConfig, "--set", "router.policy=kv_router",
			"--set", "engine.workers.aggregated.parallelism.replicas=4"}, trace...)...)
		predict("disaggregated", false, "-c", "../../examples/disaggregated.yaml", "--set", trace[1])
		predict("trace-replay", false, "-c", "../../examples/trace-replay.yaml", "--set", "traffic.source.paths=["+moonTrace+"]")
	} else {
		t.Logf("Mooncake trace not available at %s: trace digests not checked", moonTrace)
	}

	dir, _, _, _ := builtInSweep(t)
	rows, err := results.ReadParquet(filepath.Join(dir, "results.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	for _, r := range rows {
		b, err := json.Marshal(r.WithoutHostTime())
		if err != nil {
			t.Fatal(err)
		}
		buf.Write(append(b, '\n'))
	}
	got["sweep/results.parquet rows"] = digest(buf.Bytes())
	report, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	got["sweep/report.md"] = digest(report)
	page, err := os.ReadFile(filepath.Join(dir, results.HTMLFile))
	if err != nil {
		t.Fatal(err)
	}
	got["sweep/report.html"] = digest(page)

	names := make([]string, 0, len(got))
	for k := range got {
		names = append(names, k)
	}
	slices.Sort(names)
	if *updateGolden {
		var out strings.Builder
		for _, k := range names {
			fmt.Fprintf(&out, "%s  %s\n", got[k], k)
		}
		if err := os.WriteFile(goldenFile, []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	data, err := os.ReadFile(goldenFile)
	if err != nil {
		t.Fatalf("%v (create it with -update)", err)
	}
	want := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		sum, name, ok := strings.Cut(line, "  ")
		if !ok {
			t.Fatalf("%s: malformed line %q", goldenFile, line)
		}
		want[name] = sum
	}
	for _, k := range names {
		if want[k] != got[k] {
			t.Errorf("%s: digest %s, want %s", k, got[k], want[k])
		}
	}
}
