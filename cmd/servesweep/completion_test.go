package main

import (
	"strings"
	"testing"

	"github.com/servesweep/servesweep/results"
	"github.com/servesweep/servesweep/sim/optimization"
)

// TestCompletion runs cobra's hidden __complete command in-process, as the shell scripts of
// `servesweep completion` do, and checks the values offered for enumerated flags and the file
// filters of file and directory flags. The output is one value per line ("value<TAB>description"
// when described), then ":" and the directive (4 no file names, 6 also no space, 8 filter by
// extension, 16 directories only).
func TestCompletion(t *testing.T) {
	var minP99 []string
	for _, m := range results.NumericColumns() {
		if strings.HasPrefix(m, "p99") {
			minP99 = append(minP99, "min:"+m)
		}
	}
	if len(minP99) < 3 {
		t.Fatalf("results.parquet has only %d p99 columns: %v", len(minP99), minP99)
	}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"predict", "--stack", ""}, []string{"dynamo\tprediction.json as a summary envelope; accepts router and planner",
			"engine\tflat prediction.json; rejects router and planner", ":4"}},
		{[]string{"predict", "--format", ""}, []string{"table\tAIPerf-style console table", "json\tone JSON object", ":4"}},
		{[]string{"predict", "-c", ""}, []string{"yaml", "yml", ":8"}},
		{[]string{"sweep", "--config", ""}, []string{"yaml", "yml", ":8"}},
		{[]string{"sweep", "--output-dir", ""}, []string{":16"}},
		{[]string{"sweep", "--shard", ""}, []string{":4"}},
		{[]string{"report", "--target", ""}, append(optimization.Targets(), ":4")},
		{[]string{"report", "--objective", ""}, []string{"max:", "min:", ":6"}},
		{[]string{"report", "--objective", "min:p99"}, append(minP99, ":4")},
		{[]string{"report", "--results", ""}, []string{":16"}},
		{[]string{"report", "--output-dir", ""}, []string{":16"}},
		{[]string{"merge", "--output-dir", ""}, []string{":16"}},
		{[]string{"validate", "--measured", ""}, []string{"csv", ":8"}},
		{[]string{"validate", "--output-json", ""}, []string{"json", ":8"}},
		{[]string{"sweep", "--format", ""}, []string{"table\tthe counts and the Pareto front (with --dry-run: the grid and the first points)",
			"json\tone JSON object", ":4"}},
		{[]string{"report", "--format", ""}, []string{"table\tthe recommended points and the report's path", "json\tone JSON object", ":4"}},
		{[]string{"validate", "--format", ""}, []string{"table\tper-row, per-group and overall accuracy tables", "json\tone JSON object", ":4"}},
		// A single-valued flag before the cursor (completion parses the line twice; it is given once).
		{[]string{"sweep", "--parallelism", "2", "--format", ""}, []string{"table\tthe counts and the Pareto front (with --dry-run: the grid and the first points)",
			"json\tone JSON object", ":4"}},
		{[]string{"predict", "-c", "a.yaml", "--stack", ""}, []string{"dynamo\tprediction.json as a summary envelope; accepts router and planner",
			"engine\tflat prediction.json; rejects router and planner", ":4"}},
	} {
		code, out, errs := runCLI(t, append([]string{"__complete"}, tc.args...)...)
		if want := strings.Join(tc.want, "\n") + "\n"; code != exitOK || out != want {
			t.Errorf("%q: exit %d, completions\n%s\nwant\n%s(stderr %q)", tc.args, code, out, want, errs)
		}
	}
	// Commands complete by name, and the completion command writes a script.
	if _, out, _ := runCLI(t, "__complete", "ver"); !strings.HasPrefix(out, "version\t") {
		t.Errorf("completing \"ver\": %q", out)
	}
	if code, out, _ := runCLI(t, "completion", "bash"); code != exitOK || !strings.Contains(out, "__start_servesweep") {
		t.Errorf("completion bash: exit %d, %d bytes", code, len(out))
	}
}

// `completion SHELL` prints the script for a shell cobra knows and is exit 2 naming the known
// ones for any other, as an unknown subcommand is; without a shell it shows its help.
func TestCompletionShells(t *testing.T) {
	if code, out, _ := runCLI(t, "completion", "bash"); code != exitOK || !strings.Contains(out, "bash completion") {
		t.Errorf("completion bash: exit %d, %.60q", code, out)
	}
	if code, _, errs := runCLI(t, "completion", "tcsh"); code != exitConfigError ||
		!strings.Contains(errs, `completion: no script for shell "tcsh"; one of bash, fish, powershell, zsh`) {
		t.Errorf("completion tcsh: exit %d, stderr %q", code, errs)
	}
	if code, _, errs := runCLI(t, "completion", "bash", "extra"); code != exitConfigError || !strings.Contains(errs, `completion bash takes no arguments, got ["extra"]`) {
		t.Errorf("completion bash extra: exit %d, stderr %q", code, errs)
	}
	if code, out, _ := runCLI(t, "completion"); code != exitOK || !strings.Contains(out, "Usage:") {
		t.Errorf("completion: exit %d, %.60q", code, out)
	}
}
