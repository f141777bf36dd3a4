package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/servesweep/servesweep/results"
)

// boundedSpec is examples/sweep-small.yaml over 1, 2 and 4 replicas at two concurrencies, within
// 4 GPUs: 6 points, 4 of them within 2 GPUs.
var boundedSpec = []string{"-c", "../../examples/sweep-small.yaml",
	"--set", "engine.workers.aggregated.parallelism.replicas={choices: [1, 2, 4]}",
	"--set", "traffic.load.concurrency={choices: [4, 16]}",
	"--set", "optimization.constraints.max_candidate_gpus=4"}

// runBoundedSweep runs boundedSpec into a new directory and returns it.
func runBoundedSweep(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "sweep")
	if code, _, errs := runCLI(t, append([]string{"sweep", "-q", "--output-dir", dir}, boundedSpec...)...); code != 0 {
		t.Fatalf("first run: exit %d %s", code, errs)
	}
	return dir
}

// A narrower GPU bound rerun into a directory whose sweep stopped before writing sweep.json is
// told, from the journal's spec identity, that the directory holds this spec's points and more:
// finish it under the old bound, then report under the new one. Both commands run as printed.
func TestNarrowerBoundWithoutManifest(t *testing.T) {
	dir := runBoundedSweep(t)
	if err := os.Remove(filepath.Join(dir, results.ManifestFile)); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"sweep", "-q", "--output-dir", dir}, boundedSpec...)
	code, out, errs := runCLI(t, append(args, "--set", "optimization.constraints.max_candidate_gpus=2")...)
	finish := "servesweep sweep -c ../../examples/sweep-small.yaml --set 'engine.workers.aggregated.parallelism.replicas={choices: [1, 2, 4]}' " +
		"--set 'traffic.load.concurrency={choices: [4, 16]}' --set optimization.constraints.max_candidate_gpus=4 --output-dir " + dir
	want := "error: --output-dir " + dir + " holds this sweep's points and more (it ran under wider GPU bounds: max_candidate_gpus 4 then, " +
		"max_candidate_gpus 2 now) under other analysis settings, and no sweep.json (a run stopped before writing it; the journal's spec " +
		"identity, " + filepath.Join(dir, "points.jsonl.spec") + ", records the settings): finish it under the settings it was started with " +
		"(max_candidate_gpus 4 then, max_candidate_gpus 2 now): " + finish + "; then apply the new ones to its rows without simulating again: " +
		"servesweep report --results " + dir + " --output-dir " + dir + "-report --max-gpus 2; or pass --overwrite to run the sweep anew (only the points " +
		"the new settings select)\n"
	if code != exitConfigError || out != "" || errs != want {
		t.Fatalf("narrower bound, no sweep.json: exit %d, stdout %q, stderr\n%s\nwant\n%s", code, out, errs, want)
	}
	// The advice works: the finishing run resumes every point, and report applies the bound.
	finishArgs := append([]string{"sweep", "-q", "--output-dir", dir}, boundedSpec...)
	if code, out, errs := runCLI(t, finishArgs...); code != 0 || !strings.Contains(out, "simulated 0, resumed 6:") {
		t.Fatalf("finishing: exit %d %s\n%s", code, errs, out)
	}
	rep := filepath.Join(t.TempDir(), "rep")
	if code, _, errs := runCLI(t, "report", "--results", dir, "--output-dir", rep, "--max-gpus", "2"); code != 0 {
		t.Fatalf("report: exit %d %s", code, errs)
	}
	// Other analysis settings beside the bound: the finishing command restores them too, and
	// report is given the new ones.
	if err := os.Remove(filepath.Join(dir, results.ManifestFile)); err != nil {
		t.Fatal(err)
	}
	code, _, errs = runCLI(t, append(args, "--set", "optimization.constraints.max_candidate_gpus=2", "--set", "optimization.target=throughput")...)
	for _, w := range []string{"(target pareto then, throughput now; max_candidate_gpus 4 then, max_candidate_gpus 2 now): ",
		"--set optimization.target=pareto --set optimization.constraints.max_candidate_gpus=4 --output-dir " + dir + ";",
		"servesweep report --results " + dir + " --output-dir " + dir + "-report --target throughput --max-gpus 2;"} {
		if code != exitConfigError || !strings.Contains(errs, w) {
			t.Errorf("narrower bound and another target: exit %d %q; want %q", code, errs, w)
		}
	}
}

// A journal that records its spec's hash alone (an older servesweep's) cannot tell a narrower
// bound from another spec: the refusal stands and says so.
func TestHashOnlyJournalSaysWhatIsKnown(t *testing.T) {
	dir := runBoundedSweep(t)
	if err := os.Remove(filepath.Join(dir, results.ManifestFile)); err != nil {
		t.Fatal(err)
	}
	spec := filepath.Join(dir, "points.jsonl.spec")
	data, err := os.ReadFile(spec)
	if err != nil {
		t.Fatal(err)
	}
	hash, _, _ := strings.Cut(string(data), "\n")
	if err := os.WriteFile(spec, []byte(hash+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"sweep", "-q", "--output-dir", dir}, boundedSpec...)
	code, _, errs := runCLI(t, append(args, "--set", "optimization.constraints.max_candidate_gpus=2")...)
	want := "; " + spec + " records that hash alone (an older servesweep wrote it), not the points, settings, prices or bounds it covers, " +
		"so what differs cannot be told): resuming would mix the two"
	if code != exitConfigError || !strings.Contains(errs, want) {
		t.Errorf("hash-only journal: exit %d %q; want %q", code, errs, want)
	}
}

// A narrower GPU bound mixed with another change is refused naming the bound and what else
// differs once the spec is expanded again under the old bound, with sweep.json or without.
func TestNarrowerBoundMixedRefusalNamesChanges(t *testing.T) {
	dir := runBoundedSweep(t)
	args := append([]string{"sweep", "-q", "--output-dir", dir}, boundedSpec...)
	narrower := append(slices.Clone(args), "--set", "optimization.constraints.max_candidate_gpus=2")
	cases := []struct{ set, want string }{
		{"traffic.load.concurrency={choices: [4, 32]}", "; what differs: the GPU bounds (max_candidate_gpus 4 then, max_candidate_gpus 2 now); " +
			"and, under the old bounds, the grid's points (6 then and now, not the same ones: the spec's engine, traffic, router, " +
			"evaluation or domain fields, or how this servesweep version expands them)): resuming would mix the two"},
		{"optimization.cost={gpu_hour_usd: {h200: 3}}", "; what differs: the GPU bounds (max_candidate_gpus 4 then, max_candidate_gpus 2 now, " +
			"which alone take the sweep's 6 points to 4); optimization.cost.gpu_hour_usd.h200_sxm (none then, 3 now)): resuming would mix the two"},
	}
	for _, manifest := range []bool{true, false} {
		if !manifest {
			if err := os.Remove(filepath.Join(dir, results.ManifestFile)); err != nil {
				t.Fatal(err)
			}
		}
		for _, c := range cases {
			code, _, errs := runCLI(t, append(slices.Clone(narrower), "--set", c.set)...)
			if code != exitConfigError || !strings.Contains(errs, c.want) || strings.Contains(errs, "the analysis settings") {
				t.Errorf("sweep.json %t, --set %s: exit %d %q; want %q", manifest, c.set, code, errs, c.want)
			}
		}
	}
}
