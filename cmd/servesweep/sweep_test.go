package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/servesweep/servesweep/examples"
	"github.com/servesweep/servesweep/grid"
	"github.com/servesweep/servesweep/results"
	"github.com/servesweep/servesweep/sim"
	"github.com/servesweep/servesweep/sim/config"
	"github.com/servesweep/servesweep/sim/metrics"
	"github.com/servesweep/servesweep/sim/optimization"
)

// noCapacitySearch replaces the built-in sweep's optimization section by one without a capacity
// search (and without cost), so that every point runs once at the spec's fixed load.
var noCapacitySearch = []string{"--set", "optimization={target: pareto, constraints: {max_candidate_gpus: 8}}"}

// val returns *p, or nil when p is nil, for messages.
func val[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

// checkProbes reads dir's probes.parquet and checks it against rows, the sweep's results: each
// row that is not a twin has its capacity_probes probes there, numbered from 0, in the row's load
// unit; its capacity_load is the largest load that met the SLA (none did for an infeasible row,
// whose one probe at the search's min missed), and its metric columns are those of that probe (of
// the probe at min when infeasible). Twins and points that are not rows have no probes. It
// returns the probes.
func checkProbes(t *testing.T, dir string, rows []results.Row) []results.ProbeRow {
	t.Helper()
	probes, err := results.ReadProbes(filepath.Join(dir, results.ProbesFile))
	if err != nil {
		t.Fatal(err)
	}
	byPoint := map[string][]results.ProbeRow{}
	for _, p := range probes {
		byPoint[p.PointID] = append(byPoint[p.PointID], p)
	}
	for _, r := range rows {
		got := byPoint[r.PointID]
		delete(byPoint, r.PointID)
		if r.EquivalentTo != "" {
			if len(got) != 0 {
				t.Errorf("twin %s of %s has %d probes of its own", r.PointID, r.EquivalentTo, len(got))
			}
			continue
		}
		if r.CapacityProbes == nil || r.CapacityLoadUnit == nil || len(got) == 0 || int64(len(got)) != *r.CapacityProbes {
			t.Errorf("point %s: %d probes, capacity_probes %v", r.PointID, len(got), val(r.CapacityProbes))
			continue
		}
		// The capacity is the largest load that met the SLA below the least load that missed.
		miss := math.Inf(1)
		for i, p := range got {
			if p.ProbeIndex != int64(i) || p.LoadUnit != *r.CapacityLoadUnit {
				t.Errorf("point %s: probe %d has index %d, unit %s", r.PointID, i, p.ProbeIndex, p.LoadUnit)
			}
			if !p.MeetsSLA {
				miss = min(miss, p.Load)
			}
		}
		at := -1 // the probe the row's metrics were measured at
		for i, p := range got {
			if p.MeetsSLA && p.Load < miss && (at < 0 || p.Load > got[at].Load) {
				at = i
			}
		}
		switch {
		case r.Status == results.StatusInfeasible:
			if at >= 0 || r.CapacityLoad != nil || len(got) != 1 {
				t.Errorf("infeasible point %s: capacity_load %v, %d probes, probe %d met the SLA", r.PointID, val(r.CapacityLoad), len(got), at)
				continue
			}
			at = 0
		case at < 0 || r.CapacityLoad == nil || *r.CapacityLoad != got[at].Load:
			t.Errorf("point %s: capacity_load %v, but the largest load that met the SLA below the least that missed is probe %d's", r.PointID, val(r.CapacityLoad), at)
			continue
		}
		p := got[at]
		if !reflect.DeepEqual(p.OfferedRequests, r.OfferedRequests) || !reflect.DeepEqual(p.P99TTFTMs, r.P99TTFTMs) ||
			!reflect.DeepEqual(p.OutputThroughputTokS, r.OutputThroughputTokS) || !reflect.DeepEqual(p.DurationMs, r.DurationMs) {
			t.Errorf("point %s: the row's metrics differ from those of its probe %d at load %g", r.PointID, at, p.Load)
		}
	}
	for id := range byPoint {
		t.Errorf("probes.parquet holds probes of %s, which is not a row", id)
	}
	return probes
}

func readRows(t *testing.T, dir string) []results.Row {
	t.Helper()
	rows, err := results.ReadParquet(filepath.Join(dir, results.ParquetFile))
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// --print-spec prints the built-in spec as embedded, and the printed file, run with -c, is the
// same grid (same points before and after filtering); -c and --set beside it are refused.
func TestSweepPrintSpec(t *testing.T) {
	code, spec, errs := runCLI(t, "sweep", "--print-spec")
	if code != 0 || spec != string(examples.DefaultSweep()) {
		t.Fatalf("exit %d, %d bytes printed, want the %d of the built-in spec: %s", code, len(spec), len(examples.DefaultSweep()), errs)
	}
	path := filepath.Join(t.TempDir(), "my-sweep.yaml")
	if err := os.WriteFile(path, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	grid := regexp.MustCompile(`grid: \d+ points before filtering, \d+ valid, \d+ selected`)
	_, builtIn, _ := runCLI(t, "sweep", "--dry-run", "--output-dir", t.TempDir())
	code, printed, errs := runCLI(t, "sweep", "-c", path, "--dry-run", "--output-dir", t.TempDir())
	if want := grid.FindString(builtIn); code != 0 || want == "" || grid.FindString(printed) != want {
		t.Errorf("the printed spec run with -c: exit %d, %q, the built-in one %q: %s", code, grid.FindString(printed), want, errs)
	}
	for _, args := range [][]string{{"-c", path}, {"-c", ""}, {"--set", "engine.hardware=h100"}, {"--format", "json"},
		{"--dry-run", "--output-dir", "x"}} {
		code, out, errs := runCLI(t, append([]string{"sweep", "--print-spec"}, args...)...)
		if code != 2 || out != "" || !strings.Contains(errs, "--print-spec prints the built-in spec") {
			t.Errorf("--print-spec %v: exit %d, stdout %q, stderr %q", args, code, out, errs)
		}
	}
	if _, _, errs := runCLI(t, "sweep", "--print-spec", "-c", "x.yaml", "--set", "a=b", "--dry-run", "--output-dir", "x"); !strings.Contains(errs,
		`-c "x.yaml" names another spec`) || !strings.Contains(errs, "--set applies when a spec runs") || !strings.Contains(errs, "takes no --dry-run, --output-dir") {
		t.Errorf("--print-spec -c x.yaml --set a=b --dry-run --output-dir: %q does not name every flag", errs)
	}
	// A shard writes no report: its --export is refused, not ignored.
	if code, out, errs := runCLI(t, "sweep", "--shard", "0/2", "--export", "vllm", "--output-dir", t.TempDir()); code != 2 || out != "" ||
		!strings.Contains(errs, "a shard writes no report: after the shards, run servesweep merge") {
		t.Errorf("--shard 0/2 --export vllm: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	// An empty -c (an unset variable in a script) is refused, not read as "the built-in spec".
	if code, out, errs := runCLI(t, "sweep", "-c", "", "--dry-run"); code != 2 || out != "" || !strings.Contains(errs, "-c is empty") {
		t.Errorf(`-c "": exit %d, stdout %q, stderr %q`, code, out, errs)
	}
}

func TestSweepDryRunOfTheBuiltInSpec(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	code, out, errs := runCLI(t, "sweep", "--dry-run", "--output-dir", dir, "--show", "3")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	m := regexp.MustCompile(`grid: (\d+) points before filtering, (\d+) valid, (\d+) selected`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no grid line:\n%s", out)
	}
	if valid, _ := strconv.Atoi(m[2]); valid < 50 {
		t.Errorf("the built-in sweep has %d valid points, want at least 50", valid)
	}
	for _, want := range []string{"examples/default-sweep.yaml", "engine.mode: aggregated, disaggregated",
		"router.policy: round_robin, kv_router", "engine.workers.aggregated.parallelism.tensor: 1, 2, 4, 8",
		"filtered gpu_budget", "first 3 points:", "#0 "} {
		if !strings.Contains(out, want) {
			t.Errorf("dry run lacks %q:\n%s", want, out)
		}
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Error("--dry-run created the output directory")
	}
	// --show 0 lists no point and no heading for them.
	if code, out, _ := runCLI(t, "sweep", "--dry-run", "--output-dir", dir, "--show", "0"); code != 0 || strings.Contains(out, "points:") || strings.Contains(out, " GPUs: ") {
		t.Errorf("--show 0: exit %d, output lists points:\n%s", code, out)
	}
}

// TestSweepBuiltInEndToEnd checks every output of the built-in sweep (run once for the tests,
// builtInSweep; the probes of each point's capacity search among them), that a recommendation
// runs with predict and reproduces its row, that a rerun resumes, and that report rebuilds with
// other objectives.
func TestSweepBuiltInEndToEnd(t *testing.T) {
	endToEnd(t)
	shared, code, out, errs := builtInSweep(t)
	if errs != "" {
		t.Errorf("--quiet printed on stderr: %q", errs)
	}
	for _, want := range []string{"360 points selected of 360 valid (544 in the grid; filtered: gpu_budget 184)",
		"360 ok, 0 degraded, 0 failed, 0 timed out", "Pareto front:", "Saved results to: " + shared} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	// A copy, as the resume and report steps below write into it.
	dir := filepath.Join(t.TempDir(), "sweep")
	copyDir(t, shared, dir)
	rows := readRows(t, dir)
	if len(rows) != 360 {
		t.Fatalf("%d rows, want 360", len(rows))
	}
	modes, policies, tensors, gpus := map[string]bool{}, map[string]bool{}, map[int64]bool{}, map[string]bool{}
	twins := 0
	price := map[string]float64{"h100_sxm": 2.5, "h200_sxm": 3.5} // the spec's example prices
	for i, r := range rows {
		if r.Status != results.StatusOK || r.GPUs > 8 || (i > 0 && r.PointIndex <= rows[i-1].PointIndex) {
			t.Errorf("row %d: status %s gpus %d index %d", i, r.Status, r.GPUs, r.PointIndex)
		}
		modes[r.Mode], policies[r.RouterPolicy], gpus[results.Hardware(&r)] = true, true, true
		if r.AggTensor != nil {
			tensors[*r.AggTensor] = true
		}
		if r.EquivalentTo != "" {
			twins++
		}
		// Every point's capacity search ended inside the search's range (the workload grows with
		// the load), and the row is measured at the capacity, which its load column shows.
		if r.CapacityLoad == nil || *r.CapacityLoad < 1 || *r.CapacityLoad >= 4096 || r.CapacityBounded == nil || *r.CapacityBounded ||
			r.LoadConcurrency == nil || float64(*r.LoadConcurrency) != *r.CapacityLoad {
			t.Errorf("row %d: capacity_load %v bounded %v, load concurrency %v", i, val(r.CapacityLoad), val(r.CapacityBounded), val(r.LoadConcurrency))
		}
		if r.CostUSDPerHour == nil || *r.CostUSDPerHour != float64(r.GPUs)*price[r.Hardware] || r.USDPerMillionOutputTokens == nil ||
			math.Abs(*r.USDPerMillionOutputTokens-*r.CostUSDPerHour/(*r.OutputThroughputTokS*3600)*1e6) > 1e-9**r.USDPerMillionOutputTokens {
			t.Errorf("row %d (%d × %s): cost_usd_per_hour %v, usd_per_million_output_tokens %v", i, r.GPUs, r.Hardware,
				val(r.CostUSDPerHour), val(r.USDPerMillionOutputTokens))
		}
	}
	if len(modes) != 2 || len(policies) != 2 || len(tensors) != 4 || len(gpus) != 4 || twins != 48 {
		t.Errorf("the grid should cover 2 modes, 2 policies, TP 1/2/4/8, H100 and H200 in bf16 and fp8, with 48 twins: %v %v %v %v %d",
			modes, policies, tensors, gpus, twins)
	}
	probes := checkProbes(t, dir, rows)
	for _, name := range []string{results.JournalFile, results.ManifestFile, results.ParetoFile, results.ReportFile, results.PlotFile, results.HTMLFile} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Error(err)
		}
	}
	// The default target is the Pareto front: one recommendation per front point.
	recs, _ := filepath.Glob(filepath.Join(dir, "recommendations", "*.yaml"))
	if front := readPareto(t, dir).Front; len(recs) == 0 || len(recs) != len(front) {
		t.Fatalf("%d recommendations for a Pareto front of %d points", len(recs), len(front))
	}
	for _, p := range recs {
		data, _ := os.ReadFile(p)
		if _, err := config.Decode(data, p, nil); err != nil {
			t.Errorf("%s does not decode: %v", p, err)
		}
	}
	pdir := filepath.Join(t.TempDir(), "predict")
	if code, _, errs := runCLI(t, "predict", "--stack", "dynamo", "-c", recs[0], "--output-dir", pdir); code != 0 {
		t.Fatalf("predict on a recommendation: exit %d: %s", code, errs)
	}
	// The recommendation's prediction equals its sweep row.
	rec0, _ := os.ReadFile(recs[0])
	id := regexp.MustCompile(`point ([0-9a-f]{12})`).FindSubmatch(rec0)
	if id == nil {
		t.Fatalf("%s does not name its point:\n%s", recs[0], rec0)
	}
	i := slices.IndexFunc(rows, func(r results.Row) bool { return r.PointID == string(id[1]) })
	if i < 0 {
		t.Fatalf("recommended point %s is not a sweep row", id[1])
	}
	if got := readSummary(t, pdir)["p99_ttft_ms"]; got != *rows[i].P99TTFTMs {
		t.Errorf("predict p99 TTFT %v, sweep row %v", got, *rows[i].P99TTFTMs)
	}

	// Rerunning resumes: nothing is simulated again and the results are the same.
	code, out, errs = runCLI(t, "sweep", "--output-dir", dir, "-q")
	if code != 0 || !strings.Contains(out, "simulated 0, resumed 360") {
		t.Fatalf("rerun: exit %d: %s\n%s", code, errs, out)
	}
	if again := readRows(t, dir); !reflect.DeepEqual(withoutHostTime(again), withoutHostTime(rows)) {
		t.Error("the resumed sweep's rows differ")
	}
	// The journal keeps every probe, host time included.
	if again := checkProbes(t, dir, rows); !reflect.DeepEqual(again, probes) {
		t.Error("the resumed sweep's probes differ")
	}

	// report with another objective set and a scalar target, replacing the sweep's report.
	code, out, errs = runCLI(t, "report", "--results", dir, "--overwrite", "--objective", "max:output_throughput_tok_s", "--objective", "min:mean_e2e_latency_ms", "--target", "throughput", "--max-gpus", "4")
	if code != 0 {
		t.Fatalf("report: exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "Best points by throughput") {
		t.Errorf("report stdout:\n%s", out)
	}
	pareto, _ := os.ReadFile(filepath.Join(dir, results.ParetoFile))
	for _, want := range []string{`"metric": "mean_e2e_latency_ms"`, `"target": "throughput"`, `"max_candidate_gpus": 4`, `"ranking"`} {
		if !strings.Contains(string(pareto), want) {
			t.Errorf("pareto.json lacks %s", want)
		}
	}
	recs, _ = filepath.Glob(filepath.Join(dir, "recommendations", "*.yaml"))
	if len(recs) != 10 {
		t.Errorf("scalar target: %d recommendations, want the best 10", len(recs))
	}
}

func withoutHostTime(rows []results.Row) []results.Row {
	out := make([]results.Row, len(rows))
	for i, r := range rows {
		out[i] = r.WithoutHostTime()
	}
	return out
}

// TestSweepInterruptExits130AndResumes cancels the sweep as Ctrl-C would (at the 20th
// simulation, a probe of some point's capacity search), checks the exit code, the message and
// the partial outputs, then resumes.
func TestSweepInterruptExits130AndResumes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sweep")
	ctx, cancel := context.WithCancel(context.Background())
	var n atomic.Int32
	sets := []string{"traffic.stop={sessions: 8}", "traffic.load.concurrency=4", "traffic.source.session.turns=2",
		"optimization.capacity_search.max=8", "traffic.load.ramp_seconds=0"} // tinyDefault's
	opts := &sweepOptions{OutputDir: dir, Sets: sets, Quiet: true, Format: formatTable,
		Parallelism: 2, Simulate: func(c context.Context, cfg *config.Config, o sim.Options) (*sim.Result, error) {
			if n.Add(1) == 20 {
				cancel()
			}
			return sim.Run(c, cfg, o)
		}}
	var outb, errb strings.Builder
	err := runSweep(ctx, ioStreams{Out: &outb, Err: &errb}, opts)
	if code := exitCode(err); code != exitInterrupted {
		t.Fatalf("exit %d (%v), want 130", code, err)
	}
	if !strings.Contains(err.Error(), "to resume, rerun: servesweep sweep --set 'traffic.stop={sessions: 8}' --set traffic.load.concurrency=4 "+
		"--set traffic.source.session.turns=2 --set optimization.capacity_search.max=8 --set traffic.load.ramp_seconds=0 --output-dir "+dir) {
		t.Errorf("message: %v", err)
	}
	partial := readRows(t, dir)
	if len(partial) == 0 || len(partial) >= 360 {
		t.Fatalf("partial results hold %d rows", len(partial))
	}
	if want := fmt.Sprintf("PARTIAL: interrupted with %d of 360 selected points finished", len(partial)); !strings.Contains(outb.String(), want) {
		t.Errorf("stdout does not label the front partial (%q):\n%s", want, outb.String())
	}
	checkProbes(t, dir, partial)
	report, _ := os.ReadFile(filepath.Join(dir, results.ReportFile))
	if !strings.Contains(string(report), "Partial results") {
		t.Error("report.md does not say the results are partial")
	}
	code, out, errs := runCLI(t, append([]string{"sweep", "--output-dir", dir, "-q"}, tinyDefault...)...)
	if code != 0 || !strings.Contains(out, "resumed "+strconv.Itoa(len(partial))) || !strings.Contains(out, "simulated "+strconv.Itoa(360-len(partial))) {
		t.Fatalf("resume: exit %d %s\n%s", code, errs, out)
	}
	// The resumed points keep their probes (from the journal), and the others add theirs.
	checkProbes(t, dir, readRows(t, dir))
}

// TestSweepHelperProcess is the body of the child process of TestSweepSurvivesKill9.
func TestSweepHelperProcess(t *testing.T) {
	if os.Getenv("SERVESWEEP_SWEEP_CHILD") != "1" {
		return
	}
	var args []string
	if err := json.Unmarshal([]byte(os.Getenv("SERVESWEEP_SWEEP_ARGS")), &args); err != nil {
		t.Fatal(err)
	}
	os.Exit(run(context.Background(), args, ioStreams{Out: os.Stdout, Err: os.Stderr}))
}

// TestSweepSurvivesKill9 kills a sweep process with SIGKILL while it runs and checks that every
// point in its journal (with its capacity search's probes) survives and a rerun simulates only
// the rest.
func TestSweepSurvivesKill9(t *testing.T) {
	endToEnd(t)
	dir := filepath.Join(t.TempDir(), "sweep")
	args := append([]string{"sweep", "--output-dir", dir, "-q", "--parallelism", "1"}, tinyDefault...)
	cmd := exec.Command(os.Args[0], "-test.run=^TestSweepHelperProcess$")
	argsJSON, _ := json.Marshal(args)
	cmd.Env = append(os.Environ(), "SERVESWEEP_SWEEP_CHILD=1", "SERVESWEEP_SWEEP_ARGS="+string(argsJSON))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	journal := filepath.Join(dir, results.JournalFile)
	deadline := time.Now().Add(60 * time.Second)
	for countLines(journal) < 3 {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("the child sweep wrote no journal lines in 60 s")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Skipf("the child finished before it could be killed (%v)", err)
	}
	before := countLines(journal)
	if before >= 360 {
		t.Skip("the child finished every point before the kill")
	}
	code, out, errs := runCLI(t, args...)
	if code != 0 {
		t.Fatalf("rerun after kill -9: exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "resumed "+strconv.Itoa(before)+":") || !strings.Contains(out, "simulated "+strconv.Itoa(360-before)+",") {
		t.Errorf("after kill -9 with %d journal lines, the rerun said:\n%s", before, out)
	}
	rows := readRows(t, dir)
	if len(rows) != 360 {
		t.Errorf("%d rows after the rerun, want 360", len(rows))
	}
	checkProbes(t, dir, rows)
}

// countLines counts complete lines in a file (0 when it does not exist).
func countLines(path string) int {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	n := 0
	r := bufio.NewReader(f)
	for {
		if _, err := r.ReadString('\n'); err != nil {
			return n
		}
		n++
	}
}

func TestSweepErrorsAndExitCodes(t *testing.T) {
	tmp := t.TempDir()
	spec := filepath.Join(tmp, "spec.yaml")
	data, _ := os.ReadFile("../../examples/default-sweep.yaml")
	os.WriteFile(spec, data, 0o644)
	for _, tc := range []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"domain on a fixed field", []string{"sweep", "-c", spec, "--dry-run", "--set", "engine.backend={choices: [vllm, sglang]}"}, 2,
			spec + " (--set engine.backend={choices: [vllm, sglang]}): engine.backend: search domains are not allowed on this field"},
		{"bare list", []string{"sweep", "-c", spec, "--dry-run", "--set", "engine.workers.aggregated.parallelism.tensor=[1, 2]"}, 2,
			"engine.workers.aggregated.parallelism.tensor: a bare list is never a domain"},
		{"missing spec", []string{"sweep", "-c", filepath.Join(tmp, "nope.yaml"), "--dry-run"}, 2, "cannot read sweep spec"},
		{"an example outside a checkout", []string{"sweep", "-c", "examples/default-sweep.yaml", "--dry-run"}, 2,
			"cannot read sweep spec: no such file or directory; examples/ is a folder of the servesweep repository (run from a checkout), " +
				"and servesweep sweep --print-spec prints the built-in spec"},
		{"no feasible point", []string{"sweep", "--dry-run", "--set", "optimization.constraints.max_candidate_gpus=1",
			"--set", "engine.mode={choices: [disaggregated]}"}, 1, "no feasible point: all 288 grid points were filtered out:\n  288 gpu_budget"},
		{"every point invalid", []string{"sweep", "--dry-run", "--set", "engine.workers.aggregated.kv_cache.block_size=0",
			"--set", "engine.mode={choices: [aggregated]}"}, 2, examples.DefaultSweepName + " (--set engine.workers.aggregated.kv_cache.block_size=0): " +
			"engine.workers.aggregated.kv_cache.block_size: must be an int > 0, got 0 (all 160 invalid grid points (of 256; the others are " +
			"outside the GPU budget) fail with this error: it is in the spec, not in a domain's values)"},
		// A planner field the spec gives wrong is the spec's error, not the enabled value's
		// (which would leave the fixed deployments alone, with a warning); as a router knob's.
		{"bad planner field", []string{"sweep", "-c", spec, "--dry-run", "--set", "planner.policy={choices: [disabled, enabled]}",
			"--set", "planner.target=slaa"}, 2, "error: " + spec + ` (--set planner.target=slaa): planner.target: must be one of throughput, latency, sla, load, got "slaa" ` +
			"(all 360 invalid grid points of planner.policy enabled (of 544; the others are outside the GPU budget) fail with this error: " +
			"it is in the spec, not in a domain's values)\n"},
		// A spec without a domain is one config: an error a --set gave names the --set, as predict's does.
		{"no domain, bad --set", []string{"sweep", "-c", "../../examples/synthetic.yaml", "--dry-run", "--set", "engine.backend=vLLM"}, 2,
			`error: ../../examples/synthetic.yaml (--set engine.backend=vLLM): engine.backend: must be one of vllm, sglang, trtllm, got "vLLM"` + "\n"},
		{"bad flag", []string{"sweep", "--parallelism", "x"}, 2, `--parallelism takes a whole number in decimal, got "x"`},
		{"flag in hex", []string{"sweep", "--dry-run", "--show", "0x10"}, 2, `--show takes a whole number in decimal, got "0x10"`},
		{"float flag out of range", []string{"sweep", "--timeout", "1e400"}, 2, `--timeout takes a number, got "1e400", which is out of range`},
		{"flag with a digit separator", []string{"sweep", "--timeout", "1_0"}, 2, `--timeout takes a number in decimal notation, got "1_0"`},
		{"flag out of range", []string{"sweep", "--parallelism", "99999999999999999999"}, 2, `--parallelism takes a whole number, got "99999999999999999999", which is out of range`},
		{"negative parallelism", []string{"sweep", "--dry-run", "--parallelism", "-2"}, 2, "--parallelism must be a whole number >= 1 (or 0 for the default), got -2"},
		{"NaN timeout", []string{"sweep", "--dry-run", "--timeout", "NaN"}, 2, "--timeout must be a number of seconds > 0 and <= 31536000 (a year; or 0 for the default), got NaN"},
		{"negative timeout", []string{"sweep", "--dry-run", "--timeout", "-1"}, 2, "--timeout must be a number of seconds > 0"},
		{"infinite timeout", []string{"sweep", "--dry-run", "--timeout", "+Inf"}, 2, "--timeout must be a number of seconds > 0"},
		{"overflowing timeout", []string{"sweep", "--dry-run", "--timeout", "1e12"}, 2, "--timeout must be a number of seconds > 0"},
		{"positional", []string{"sweep", "extra"}, 2, "no positional arguments"},
		{"report without results", []string{"report", "--results", tmp}, 2, "has no results.parquet"},
		{"report without --results", []string{"report"}, 2, "--results is required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errs := runCLI(t, tc.args...)
			if code != tc.code || !strings.Contains(errs, tc.msg) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", code, errs, tc.code, tc.msg)
			}
		})
	}
	// A non-empty output directory without a journal is refused; --overwrite replaces only the
	// sweep's files.
	dir := filepath.Join(tmp, "busy")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("keep"), 0o644)
	args := append([]string{"sweep", "--output-dir", dir, "-q", "--set", "engine.mode={choices: [aggregated]}"}, tinyDefault...)
	if code, _, errs := runCLI(t, args...); code != 2 || !strings.Contains(errs, "holds no sweep journal") {
		t.Errorf("non-empty dir: exit %d %q", code, errs)
	}
	if code, _, errs := runCLI(t, append(args, "--overwrite")...); code != 0 {
		t.Errorf("--overwrite: exit %d %q", code, errs)
	}
	if _, err := os.Stat(filepath.Join(dir, "notes.txt")); err != nil {
		t.Error("--overwrite removed a file the sweep does not own")
	}
	if code, _, errs := runCLI(t, "report", "--results", dir, "--objective", "max:nope"); code != 2 || !strings.Contains(errs, "unknown metric") {
		t.Errorf("bad objective: exit %d %q", code, errs)
	}
	file := filepath.Join(tmp, "file")
	os.WriteFile(file, nil, 0o644)
	if code, _, _ := runCLI(t, "sweep", "--output-dir", file, "-q"); code != 2 {
		t.Errorf("--output-dir on a file: exit %d, want 2", code)
	}
}

// TestSweepMooncakeExample runs examples/sweep-mooncake.yaml on the shipped trace beside it,
// shortened to 60 virtual seconds so the test stays quick; the full example is 48 points over the
// trace's 300 s.
func TestSweepMooncakeExample(t *testing.T) {
	endToEnd(t)
	trace, err := filepath.Abs("../../examples/chat-trace.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "moon")
	code, out, errs := runCLI(t, "sweep", "-c", "../../examples/sweep-mooncake.yaml", "--output-dir", dir, "-q",
		"--set", "traffic.stop.max_virtual_time_seconds=60")
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, errs, out)
	}
	if !strings.Contains(out, "48 points selected of 48 valid") || !strings.Contains(out, "48 ok, 0 degraded, 0 failed, 0 timed out") {
		t.Errorf("stdout:\n%s", out)
	}
	rows := readRows(t, dir)
	var front struct {
		Front []struct {
			PointID string `json:"point_id"`
		} `json:"front"`
	}
	data, _ := os.ReadFile(filepath.Join(dir, results.ParetoFile))
	if err := json.Unmarshal(data, &front); err != nil {
		t.Fatal(err)
	}
	// Every selected point is a row; the front is a non-empty subset of them.
	if len(rows) != 48 || len(front.Front) == 0 {
		t.Errorf("%d rows (want 48), front of %d points", len(rows), len(front.Front))
	}
	for _, f := range front.Front {
		if !slices.ContainsFunc(rows, func(r results.Row) bool { return r.PointID == f.PointID }) {
			t.Errorf("front point %s is not a row", f.PointID)
		}
	}
	for _, r := range rows {
		if r.Status != results.StatusOK || r.TracePath == nil || *r.TracePath != trace || r.LoadSpeedup == nil {
			t.Errorf("row %s: status %s trace %v speedup %v", r.PointID, r.Status, r.TracePath, r.LoadSpeedup)
		}
	}
	// A trace path from an empty environment variable is an error naming the field and the variable.
	t.Setenv("SERVESWEEP_MOONCAKE_TRACE", "")
	code, _, errs = runCLI(t, "sweep", "-c", "../../examples/sweep-mooncake.yaml", "--dry-run",
		"--set", `traffic.source.paths=["${SERVESWEEP_MOONCAKE_TRACE}"]`)
	if code != 2 || !strings.Contains(errs, "traffic.source.paths[0]: environment variable SERVESWEEP_MOONCAKE_TRACE is set but empty or blank") ||
		!strings.Contains(errs, "--set 'traffic.source.paths=[/path/to/trace.jsonl]'") {
		t.Errorf("empty trace variable: exit %d %q", code, errs)
	}
}

// TestSweepRefusesALockedJournal holds the journal of an output directory, and of a shard, as
// another servesweep process would, and checks that a sweep into it fails fast with exit 2
// naming the directory (or the shard), then runs once the lock is released.
func TestSweepRefusesALockedJournal(t *testing.T) {
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "whole")
	os.MkdirAll(dir, 0o755)
	j, _, err := results.OpenJournal(filepath.Join(dir, results.JournalFile))
	if err != nil {
		t.Fatal(err)
	}
	args := append([]string{"sweep", "--output-dir", dir, "-q"}, tinyDefault...)
	code, _, errs := runCLI(t, args...)
	if code != 2 || !strings.Contains(errs, "--output-dir "+dir+": another servesweep process is writing it") {
		t.Errorf("locked journal: exit %d %q", code, errs)
	}
	if code, _, errs := runCLI(t, append(args, "--overwrite")...); code != 2 || !strings.Contains(errs, "another servesweep process") {
		t.Errorf("--overwrite of a locked journal: exit %d %q", code, errs)
	}
	j.Close()
	if code, _, errs := runCLI(t, args...); code != 0 {
		t.Errorf("after release: exit %d %q", code, errs)
	}

	sdir := filepath.Join(tmp, "sharded")
	jpath := filepath.Join(sdir, results.JournalsDir, results.PartJournalName(1, 2))
	os.MkdirAll(filepath.Dir(jpath), 0o755)
	if j, _, err = results.OpenJournal(jpath); err != nil {
		t.Fatal(err)
	}
	sargs := append([]string{"sweep", "--output-dir", sdir, "-q", "--shard", "1/2"}, tinyDefault...)
	code, _, errs = runCLI(t, sargs...)
	if code != 2 || !strings.Contains(errs, "shard 1/2 of --output-dir "+sdir+": another servesweep process is writing it") {
		t.Errorf("locked shard journal: exit %d %q", code, errs)
	}
	j.Close()
	if code, _, errs := runCLI(t, sargs...); code != 0 {
		t.Errorf("shard after release: exit %d %q", code, errs)
	}
}

// TestReportNeedsSLA checks that report settings that read an SLA (--strict-sla, a goodput
// --target, a goodput or SLA-attainment objective) are exit-2 errors, with the spec validation's message, when the
// results have no SLA, and that the same results report fine otherwise.
func TestReportNeedsSLA(t *testing.T) {
	dir := t.TempDir()
	p := func(x float64) *float64 { return &x }
	n := int64(4)
	rows := []results.Row{{PointID: "a", Status: results.StatusOK, GPUs: 1, CompletedRequests: &n,
		OutputThroughputPerGPUTokS: p(10), P99TTFTMs: p(5), P99ITLMs: p(1)}}
	if err := results.WriteParquet(filepath.Join(dir, results.ParquetFile), rows); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ args []string }{
		{[]string{"--target", "goodput"}},
		{[]string{"--target", "goodput_per_gpu"}},
		{[]string{"--strict-sla"}},
		{[]string{"--objective", "max:goodput_output_throughput_tok_s"}},
		{[]string{"--objective", "max:sla_attainment"}},
	} {
		code, _, errs := runCLI(t, append([]string{"report", "--results", dir}, tc.args...)...)
		if code != 2 || !strings.Contains(errs, "--"+strings.TrimPrefix(tc.args[0], "--")+": ") ||
			!strings.Contains(errs, optimization.SLARequired) {
			t.Errorf("%v: exit %d %q; want exit 2 and %q", tc.args, code, errs, optimization.SLARequired)
		}
	}
	if code, _, errs := runCLI(t, "report", "--results", dir, "--target", "throughput"); code != 0 {
		t.Errorf("--target throughput: exit %d %q", code, errs)
	}
}

// TestReportBestPointIsNotDominated runs `servesweep report` over four 1-GPU points of different
// mean TTFT (the first the slowest) and a 2-GPU one, with objectives min gpus and min mean TTFT:
// pareto.json and report.md must name the 1-GPU point at 25 ms as best for gpus, not the first
// 1-GPU point (2256 ms), which the 25 ms point dominates.
func TestReportBestPointIsNotDominated(t *testing.T) {
	dir := t.TempDir()
	n := int64(4)
	mk := func(id string, index, gpus int64, meanTTFT float64) results.Row {
		return results.Row{PointID: id, PointIndex: index, Status: results.StatusOK, GPUs: gpus,
			CompletedRequests: &n, MeanTTFTMs: &meanTTFT}
	}
	rows := []results.Row{mk("slow1", 0, 1, 2256), mk("mid1", 1, 1, 300), mk("fast1", 2, 1, 25),
		mk("fast1late", 3, 1, 25), mk("two", 4, 2, 10)}
	if err := results.WriteParquet(filepath.Join(dir, results.ParquetFile), rows); err != nil {
		t.Fatal(err)
	}
	code, _, errs := runCLI(t, "report", "--results", dir, "--objective", "min:gpus", "--objective", "min:mean_ttft_ms")
	if code != 0 {
		t.Fatalf("report: exit %d %q", code, errs)
	}
	data, err := os.ReadFile(filepath.Join(dir, results.ParetoFile))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Best []struct {
			Metric  string  `json:"metric"`
			PointID string  `json:"point_id"`
			Value   float64 `json:"value"`
		} `json:"best"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	type best struct {
		metric, point string
		value         float64
	}
	want := []best{{"gpus", "fast1", 1}, {"mean_ttft_ms", "two", 10}}
	var got []best
	for _, b := range doc.Best {
		got = append(got, best{b.Metric, b.PointID, b.Value})
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("pareto.json best = %v, want %v", got, want)
	}
	md, err := os.ReadFile(filepath.Join(dir, results.ReportFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"| minimize `gpus` | 1 | `fast1` |", "| minimize `mean_ttft_ms` | 10 | `two` |"} {
		if !strings.Contains(string(md), line) {
			t.Errorf("report.md lacks %q:\n%s", line, md)
		}
	}
	if strings.Contains(string(md), "`slow1`") {
		t.Errorf("report.md names the dominated point slow1:\n%s", md)
	}
}

// The built-in sweep with engine.context_length 1024 rejects the longer prompts (every turn after
// the first) at every point. Without a capacity search, at the spec's fixed load, every point is
// degraded (counted, with its reason), none reaches the front, and the sweep exits 1 (no feasible
// point) instead of ranking deployments on the requests they kept. With the built-in capacity
// search the rejections already miss the SLA attainment at the search's minimum load: every point
// is infeasible for its rejected requests, after that one probe, and none reaches the front.
func TestSweepDegradedPointsOffFront(t *testing.T) {
	// 48 of the 360 points are twins (one worker: the policy cannot matter), the other 312 are
	// excluded for their rejections.
	const excluded = "no feasible point: none of the 360 points passed the filters (equivalent 48, rejected_requests 312)"
	dir := filepath.Join(t.TempDir(), "fixed")
	code, out, errs := runCLI(t, append([]string{"sweep", "-q", "--output-dir", dir, "--set", "engine.context_length=1024"}, noCapacitySearch...)...)
	if code != exitRunFailure || !strings.Contains(errs, excluded) {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	if !strings.Contains(out, "0 ok, 360 degraded, 0 failed, 0 timed out") {
		t.Errorf("stdout:\n%s", out)
	}
	rows := readRows(t, dir)
	if len(rows) != 360 {
		t.Fatalf("%d rows, want 360", len(rows))
	}
	for _, r := range rows {
		if r.Status != results.StatusDegraded || !strings.HasPrefix(r.Reason, "rejected_requests: ") ||
			*r.RejectedRequests == 0 || *r.OfferedRequests != *r.CompletedRequests+*r.RejectedRequests+*r.UnfinishedRequests ||
			r.CapacityProbes != nil {
			t.Fatalf("point %s: status %s reason %q capacity_probes %v", r.PointID, r.Status, r.Reason, val(r.CapacityProbes))
		}
	}
	if front := readPareto(t, dir).Front; len(front) != 0 {
		t.Errorf("degraded points on the front: %v", front)
	}
	if _, err := os.Stat(filepath.Join(dir, results.ProbesFile)); !os.IsNotExist(err) {
		t.Errorf("a sweep without a capacity search wrote %s (%v)", results.ProbesFile, err)
	}

	dir = filepath.Join(t.TempDir(), "capacity")
	// ramp_seconds: 0 keeps the synchronized start, and fixed lengths (512 new prompt tokens and
	// 64 output per turn), whose counts the reasons below give.
	code, out, errs = runCLI(t, "sweep", "-q", "--output-dir", dir, "--set", "engine.context_length=1024", "--set", "traffic.load.ramp_seconds=0",
		"--set", "traffic.source.new_input_tokens_per_turn=512", "--set", "traffic.source.output_tokens_per_turn=64")
	if code != exitRunFailure || !strings.Contains(errs, excluded) {
		t.Fatalf("capacity search: exit %d, stderr %q", code, errs)
	}
	if !strings.Contains(out, "0 ok, 0 degraded, 360 infeasible, 0 failed, 0 timed out") {
		t.Errorf("capacity search: stdout:\n%s", out)
	}
	rows = readRows(t, dir)
	if len(rows) != 360 {
		t.Fatalf("capacity search: %d rows, want 360", len(rows))
	}
	for _, r := range rows {
		// At the min load, 1 session in flight, 4 sessions of 4 turns are offered: only the first
		// turns fit in the context.
		if r.Status != results.StatusInfeasible ||
			!strings.HasPrefix(r.Reason, "rejected_requests: 12 of 16 offered requests rejected at the minimum load 1 concurrency") ||
			*r.RejectedRequests != 12 || r.CapacityLoad != nil || r.CapacityProbes == nil || *r.CapacityProbes != 1 {
			t.Fatalf("capacity search: point %s: status %s reason %q capacity_load %v probes %v", r.PointID, r.Status, r.Reason,
				val(r.CapacityLoad), val(r.CapacityProbes))
		}
	}
	checkProbes(t, dir, rows)
	if front := readPareto(t, dir).Front; len(front) != 0 {
		t.Errorf("capacity search: infeasible points on the front: %v", front)
	}
	var m struct {
		Counts results.Counts `json:"counts"`
	}
	if data, err := os.ReadFile(filepath.Join(dir, results.ManifestFile)); err != nil || json.Unmarshal(data, &m) != nil ||
		m.Counts.Infeasible != 360 || m.Counts.OK != 0 || m.Counts.Degraded != 0 {
		t.Errorf("capacity search: sweep.json counts %+v (%v)", m.Counts, err)
	}
}

// overloadedSpec is the user trial's one H200 (Llama-3.1-8B, 2k-token prompts, about 18
// requests/s) at poisson 5 and 80 requests/s, without a capacity search: 80 overloads it.
const overloadedSpec = `traffic:
  source:
    type: synthetic
    input_tokens: {distribution: uniform, min: 1639, max: 2048}
    output_tokens: {distribution: uniform, min: 103, max: 128}
  load: {type: poisson, requests_per_second: {choices: [5, 80]}}
  stop: {requests_per_load_unit: 100}
engine:
  model: meta-llama/Meta-Llama-3.1-8B-Instruct
  hardware: h200_sxm
  backend: vllm
  context_length: 8192
  workers:
    aggregated:
      parallelism: {replicas: 1, tensor: 1}
      scheduler: {max_batched_tokens: 8192, max_sequences: 256}
optimization:
  target: throughput
`

// A point degraded as overloaded, which rejected no request, is excluded as overloaded, not as
// rejected_requests: in pareto.json, report.md and the no-feasible error, which names it with
// what to change.
func TestSweepOverloadedPointExcludedAsOverloaded(t *testing.T) {
	spec := filepath.Join(t.TempDir(), "ol.yaml")
	if err := os.WriteFile(spec, []byte(overloadedSpec), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "o1")
	if code, _, errs := runCLI(t, "sweep", "-q", "-c", spec, "--output-dir", dir, "--seed-check=false"); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	rows := readRows(t, dir)
	if len(rows) != 2 || rows[1].Status != results.StatusDegraded || !strings.HasPrefix(rows[1].Reason, "overloaded: ") ||
		*rows[1].RejectedRequests != 0 {
		t.Fatalf("rows %+v, want the 80 requests/s point degraded as overloaded, none rejected", rows)
	}
	_, doc := readParetoDoc(t, dir)
	if got, want := doc["excluded"], map[string]any{"overloaded": 1.0}; !reflect.DeepEqual(got, want) {
		t.Errorf("pareto.json excluded %v, want %v", got, want)
	}
	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "1 candidates after filters (excluded: overloaded 1)."; !strings.Contains(string(md), want) {
		t.Errorf("report.md lacks %q:\n%s", want, md)
	}
	dir = filepath.Join(t.TempDir(), "o2")
	code, _, errs := runCLI(t, "sweep", "-q", "-c", spec, "--output-dir", dir, "--seed-check=false",
		"--set", "traffic.load.requests_per_second=80")
	want := "error: no feasible point: none of the 1 points passed the filters (overloaded 1); see " + filepath.Join(dir, "report.md") +
		"; 1 point fell behind the open-loop arrivals (overloaded: lower the load, add workers or search for each deployment's " +
		"capacity with optimization.capacity_search), e.g. " + rows[1].PointID + " (" + rows[1].Reason + "): such points stay " +
		"off the front beyond optimization.constraints.max_rejected_ratio (0 now); servesweep rows --results " + dir +
		" --columns point_id,status,reason lists every point's reason\n"
	if code != exitRunFailure || errs != want {
		t.Errorf("80 requests/s alone: exit %d, stderr\n%q\nwant\n%q", code, errs, want)
	}
}

// Hardware and precision are sweep dimensions: the built-in spec over two GPUs and two weight
// formats (its own domains, set again here so that the test does not depend on them) simulates
// every combination, and results.parquet records each point's hardware and the formats in effect
// (the KV cache follows the spec's bf16).
func TestSweepHardwareAndPrecisionDomains(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sweep")
	args := append([]string{"sweep", "-q", "--output-dir", dir,
		"--set", "engine.hardware={choices: [h100_sxm, h200_sxm]}",
		"--set", "engine.precision.weights={choices: [bf16, fp8]}"}, tinyDefault...)
	if code, out, errs := runCLI(t, args...); code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, errs, out)
	}
	seen := map[string]int{}
	for _, r := range readRows(t, dir) {
		if r.WeightPrecision == nil || r.KVCachePrecision == nil || *r.KVCachePrecision != "bf16" {
			t.Fatalf("point %s: precision columns %v %v", r.PointID, r.WeightPrecision, r.KVCachePrecision)
		}
		seen[r.Hardware+"/"+*r.WeightPrecision]++
	}
	if len(seen) != 4 || seen["h100_sxm/bf16"] != seen["h200_sxm/fp8"] || seen["h100_sxm/fp8"] == 0 {
		t.Errorf("hardware/precision combinations: %v; want 4 equally many", seen)
	}
}

// Rerunning into a sweep's directory with another spec is refused (exit 2) instead of mixing
// the two sweeps' points; the same spec resumes, and --overwrite starts over.
func TestSweepRefusesAnotherSpecsDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sweep")
	args := append([]string{"sweep", "-q", "--output-dir", dir}, tinyAggregated...)
	if code, _, errs := runCLI(t, args...); code != 0 {
		t.Fatalf("first run: exit %d %s", code, errs)
	}
	if code, out, errs := runCLI(t, args...); code != 0 || !strings.Contains(out, "simulated 0, resumed 80:") {
		t.Fatalf("same spec: exit %d %s\n%s", code, errs, out)
	}
	other := append(slices.Clone(args), "--set", "traffic.load.concurrency=8")
	code, _, errs := runCLI(t, other...)
	if code != exitConfigError || !strings.Contains(errs, "holds a sweep of another spec") || !strings.Contains(errs, "--overwrite") {
		t.Fatalf("another spec: exit %d %q", code, errs)
	}
	// The same points with other analysis settings are pointed to report, which re-analyzes
	// them without simulating.
	objective := append(slices.Clone(args), "--set", "optimization.objectives=[{metric: p99_ttft_ms, direction: minimize}]")
	code, _, errs = runCLI(t, objective...)
	if code != exitConfigError || !strings.Contains(errs, "holds this sweep's points analyzed with other settings; apply the new ones "+
		"to its rows without simulating again: servesweep report --results "+dir+" --output-dir "+dir+"-report --objective min:p99_ttft_ms;") {
		t.Fatalf("other objectives: exit %d %q", code, errs)
	}
	// A narrower GPU bound keeps some of the points the directory holds: report applies it to
	// their rows. A wider one needs points the directory lacks: another spec.
	narrower := append(slices.Clone(args), "--set", "optimization.constraints.max_candidate_gpus=4")
	code, _, errs = runCLI(t, narrower...)
	if code != exitConfigError || !strings.Contains(errs, "holds this sweep's points and more (it ran under wider GPU bounds: "+
		"max_candidate_gpus 8 then, max_candidate_gpus 4 now), analyzed with other settings; apply the new ones to its rows "+
		"without simulating again: servesweep report --results "+dir+" --output-dir "+dir+"-report --max-gpus 4;") {
		t.Fatalf("a narrower GPU bound: exit %d %q", code, errs)
	}
	both := append(slices.Clone(narrower), "--set", "optimization.constraints.min_candidate_gpus=2")
	code, _, errs = runCLI(t, both...)
	if code != exitConfigError || !strings.Contains(errs, "(it ran under wider GPU bounds: max_candidate_gpus 8 then, "+
		"min_candidate_gpus 2, max_candidate_gpus 4 now)") || !strings.Contains(errs, "--min-gpus 2 --max-gpus 4;") {
		t.Fatalf("narrower GPU bounds: exit %d %q", code, errs)
	}
	// A cost bound beside it: report takes it too.
	costly := append(slices.Clone(narrower), "--set", "optimization.constraints.max_cost_usd_per_hour=10")
	if code, _, errs := runCLI(t, costly...); code != exitConfigError || !strings.Contains(errs, "--max-gpus 4 --max-cost-usd-per-hour 10;") {
		t.Fatalf("a narrower GPU bound and a cost bound: exit %d %q", code, errs)
	}
	wider := append(slices.Clone(args), "--set", "optimization.constraints.max_candidate_gpus=64")
	if code, _, errs := runCLI(t, wider...); code != exitConfigError || !strings.Contains(errs, "holds a sweep of another spec") {
		t.Fatalf("a wider GPU bound: exit %d %q", code, errs)
	}

	if code, _, errs := runCLI(t, append(other, "--overwrite")...); code != 0 {
		t.Fatalf("--overwrite: exit %d %s", code, errs)
	}
}

// A printed resume command invokes servesweep as the user did when that was through a path
// (bin/servesweep after make build is not on PATH), else by name.
func TestProgramName(t *testing.T) {
	for arg0, want := range map[string]string{
		"bin/servesweep":                 "bin/servesweep",
		"/opt/x y/servesweep":            "/opt/x y/servesweep",
		"servesweep":                     "servesweep",
		"/tmp/go-build1/servesweep.test": "servesweep",
		"/usr/bin/other":                 "servesweep",
	} {
		if got := programName(arg0); got != want {
			t.Errorf("programName(%q) = %q, want %q", arg0, got, want)
		}
	}
	if got := shellQuote(programName("/opt/x y/servesweep")); got != "'/opt/x y/servesweep'" {
		t.Errorf("a path with a space is quoted as %s", got)
	}
}

// A sweep that stops before any point (its trace cannot be parsed) leaves no journal behind: the
// corrected spec then runs in the same directory without --overwrite. A journal that existed
// before the failed run is kept. A trace that does not exist stops the sweep before it touches
// the directory, even with --overwrite.
func TestSweepFailedBeforeAnyPointLeavesNoJournal(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sweep")
	garbage := filepath.Join(t.TempDir(), "trace.jsonl")
	if err := os.WriteFile(garbage, []byte("not a trace\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	traceSets := func(path string) []string {
		return []string{"--set", "traffic.source={type: trace, format: mooncake, paths: [" + path + "], block_size: 512}",
			"--set", "traffic.load={type: trace_timestamps, speedup: 1}", "--set", "traffic.stop={max_virtual_time_seconds: 10}"}
	}
	bad := append(append([]string{"sweep", "--output-dir", dir, "-q"}, tinyAggregated...), traceSets(garbage)...)
	if code, out, errs := runCLI(t, bad...); code != 2 || !strings.Contains(errs, garbage) {
		t.Fatalf("sweep over a garbage trace: exit %d, want 2 naming the file: %s\n%s", code, errs, out)
	}
	if _, err := os.Stat(filepath.Join(dir, results.JournalFile)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the failed sweep left its journal: %v", err)
	}
	// With --overwrite over an existing sweep, the failed run's journal is its own: removed too.
	runTinySweep(t, dir)
	if code, _, _ := runCLI(t, append(bad, "--overwrite")...); code != 2 {
		t.Fatalf("sweep over a missing trace with --overwrite: exit %d, want 2", code)
	}
	if _, err := os.Stat(filepath.Join(dir, results.JournalFile)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the failed sweep with --overwrite left its journal: %v", err)
	}
	runTinySweep(t, dir)
	// Now the directory holds a journal: a failing run with another spec is refused before it
	// starts, and the journal stays; so does a run over a missing trace with --overwrite.
	before := snapshot(t, dir)
	missing := append(append([]string{"sweep", "--output-dir", dir, "-q", "--overwrite"}, tinyAggregated...),
		traceSets("/nonexistent/trace.jsonl")...)
	if code, _, errs := runCLI(t, missing...); code != 2 || !strings.Contains(errs, "traffic.source.paths: cannot read trace /nonexistent/trace.jsonl") {
		t.Fatalf("sweep over a missing trace with --overwrite: exit %d, want 2 naming it: %s", code, errs)
	}
	if code, _, _ := runCLI(t, bad...); code != 2 {
		t.Fatalf("a failing sweep over an existing journal of another spec: exit %d, want 2", code)
	}
	if after := snapshot(t, dir); !maps.EqualFunc(before, after, bytes.Equal) {
		t.Fatalf("the existing sweep's files changed: %d files before, %d after", len(before), len(after))
	}
	// The failed runs never removed a lock file (another process may hold it).
	if _, err := os.Stat(filepath.Join(dir, results.JournalFile+results.LockSuffix)); err != nil {
		t.Fatalf("the journal's lock file: %v", err)
	}
}

// TestSweepSpecTyposExit2 runs the three typos of issue 41 on a copy of the built-in spec: a
// misspelt key in the spec, the same through --set, and a key valid in no worker role. Each is
// one spec error (exit 2) before expansion, at the key's full path with the keys valid there,
// and nothing is simulated or printed on stdout.
func TestSweepSpecTyposExit2(t *testing.T) {
	tmp := t.TempDir()
	data, err := os.ReadFile("../../examples/default-sweep.yaml")
	if err != nil {
		t.Fatal(err)
	}
	write := func(name, old, new string) string {
		t.Helper()
		if !strings.Contains(string(data), old) {
			t.Fatalf("the built-in spec lacks %q", old)
		}
		p := filepath.Join(tmp, name)
		if err := os.WriteFile(p, []byte(strings.Replace(string(data), old, new, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tensr := write("tensr.yaml", "tensor: {choices: [1, 2, 4, 8]}", "tensr: 4")
	misplaced := write("misplaced.yaml", "scheduler: {max_batched_tokens: 8192, max_sequences: 16}",
		"scheduler: {max_batched_tokens: 8192, max_sequences: 16}\n      max_batch_tokens: 4096")
	base := write("base.yaml", "", "")
	const par = "valid fields: replicas, tensor, pipeline, attention_data, moe_tensor, moe_expert, redundant_experts"
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"misspelt key", []string{"-c", tensr},
			tensr + ": engine.workers.aggregated.parallelism.tensr: unknown field; " + par + " (did you mean tensor?)"},
		{"misspelt --set path", []string{"-c", base, "--set", "engine.workers.aggregated.parallelism.tp=4"},
			base + " (--set engine.workers.aggregated.parallelism.tp=4): engine.workers.aggregated.parallelism.tp: unknown field; " + par},
		{"key of no role", []string{"-c", misplaced},
			misplaced + ": engine.workers.prefill.max_batch_tokens: unknown field; valid fields: hardware, startup_seconds, " +
				"parallelism, scheduler, kv_cache, timing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, extra := range [][]string{{"--dry-run"}, {"--output-dir", filepath.Join(tmp, "out"), "-q"}} {
				code, out, errs := runCLI(t, append(append([]string{"sweep"}, tc.args...), extra...)...)
				if code != exitConfigError || errs != "error: "+tc.want+"\n" || out != "" {
					t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and\nerror: %s", extra, code, out, errs, tc.want)
				}
			}
			if _, err := os.Stat(filepath.Join(tmp, "out")); !os.IsNotExist(err) {
				t.Error("a spec error created the output directory")
			}
		})
	}
}

// TestSweepEmptyModeExit2 makes every aggregated point of the built-in spec invalid: the sweep
// (dry run, real run or any shard) exits 2 naming the mode, its filter counts and first reason,
// unless --allow-empty-mode lets it sweep the disaggregated points with a warning. When every
// invalid point of the mode fails with one error of a field the spec (here a --set) gives, that
// error is the spec's, named once with the --set, and --allow-empty-mode does not pass it.
func TestSweepEmptyModeExit2(t *testing.T) {
	const want = "error: " + examples.DefaultSweepName + ": engine.mode: the mode aggregated has no valid point: all 256 of its grid points " +
		"were filtered (gpu_budget 96, invalid_config 160), e.g. point mode=aggregated router.policy=round_robin hardware=h100_sxm " +
		"weights=bf16 aggregated.replicas=1 aggregated.tensor=1 aggregated.max_batched_tokens=2048: " + examples.DefaultSweepName + ": " +
		"engine.workers.aggregated.kv_cache.capacity: model meta-llama/Llama-3.1-8B (bf16 weights) does not fit on 1 × h100_sxm " +
		"(tensor 1 × pipeline 1): needs 15.0 GiB of weights, has 0.8 GiB (memory_fraction 0.01 × 80 GiB × 1 GPUs); raise tensor or " +
		"pipeline, or quantize; fix the spec, or drop aggregated from the choices\nhint: pass --allow-empty-mode to sweep the other modes alone\n"
	bad := []string{"sweep", "--set", "engine.workers.aggregated.kv_cache.capacity.memory_fraction=0.01"}
	out := filepath.Join(t.TempDir(), "out")
	for _, extra := range [][]string{{"--dry-run"}, {"--output-dir", out, "-q"}, {"--shard", "0/2", "--output-dir", out, "-q"},
		{"--shard", "1/2", "--dry-run"}} {
		code, stdout, errs := runCLI(t, append(bad, extra...)...)
		if code != exitConfigError || errs != want || stdout != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr\n%s\nwant exit 2 and\n%s", extra, code, stdout, errs, want)
		}
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Error("the refused sweep created its output directory")
	}
	code, stdout, errs := runCLI(t, append(bad, "--dry-run", "--allow-empty-mode")...)
	if code != 0 || !strings.Contains(stdout, "grid: 544 points before filtering, 200 valid") ||
		!strings.HasPrefix(errs, "warning: engine.mode: value aggregated has no valid point (all 256 of its points filtered: 160 invalid_config, 96 gpu_budget)") {
		t.Errorf("--allow-empty-mode: exit %d, stdout %q, stderr %q", code, stdout, errs)
	}
	if got := resumeCommand(&sweepOptions{OutputDir: "out", AllowEmptyMode: true}); got != "servesweep sweep --output-dir out --allow-empty-mode" {
		t.Errorf("resume command %q lacks --allow-empty-mode", got)
	}
	// A resume without the run's --export would remove its launch files.
	if got, want := resumeCommand(&sweepOptions{OutputDir: "out", Export: []string{"vllm,dynamo"}, SystemsDir: "my db", SystemsDirSet: true}),
		"servesweep sweep --output-dir out --export 'vllm,dynamo' --systems-dir 'my db'"; got != want {
		t.Errorf("resume command %q, want %q", got, want)
	}

	const wantSpec = "error: " + examples.DefaultSweepName + " (--set engine.workers.aggregated.scheduler.max_sequences=0): " +
		"engine.workers.aggregated.scheduler.max_sequences: must be an int > 0, got 0 (all 160 invalid grid points of mode aggregated " +
		"(of 256; the others are outside the GPU budget) fail with this error: it is in the spec, not in a domain's values)\n"
	for _, extra := range [][]string{{"--dry-run"}, {"--dry-run", "--allow-empty-mode"}} {
		code, stdout, errs := runCLI(t, append([]string{"sweep", "--set", "engine.workers.aggregated.scheduler.max_sequences=0"}, extra...)...)
		if code != exitConfigError || errs != wantSpec || stdout != "" {
			t.Errorf("spec error %v: exit %d, stdout %q, stderr\n%s\nwant exit 2 and\n%s", extra, code, stdout, errs, wantSpec)
		}
	}
}

// TestDryRunChecksTraces: a trace file the spec names that is missing or a directory is exit 2
// naming traffic.source.paths and the file, in a dry run as in a run (before anything runs); a
// relative path in the spec is read beside it.
func TestDryRunChecksTraces(t *testing.T) {
	dir := t.TempDir()
	spec := filepath.Join(dir, "spec.yaml")
	if err := os.WriteFile(spec, []byte(`traffic:
  source: {type: mooncake, paths: [missing.jsonl]}
  load: {type: trace}
  stop: {requests: 10}
engine:
  mode: aggregated
  model: meta-llama/Llama-3.1-8B
  hardware: h100_sxm
  workers:
    aggregated:
      parallelism: {replicas: {choices: [1, 2]}}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs := runCLI(t, "sweep", "-c", spec, "--dry-run")
	want := "traffic.source.paths: cannot read trace " + filepath.Join(dir, "missing.jsonl") + ": no such file or directory"
	if code != 2 || !strings.Contains(errs, want) {
		t.Errorf("missing trace: exit %d, stderr %q; want 2 and %q", code, errs, want)
	}
	code, _, errs = runCLI(t, "sweep", "-c", spec, "--dry-run", "--set", "traffic.source.paths=["+dir+"]")
	if code != 2 || !strings.Contains(errs, "traffic.source.paths: "+dir+" is a directory") {
		t.Errorf("a directory: exit %d, stderr %q", code, errs)
	}
}

// TestSweepNotesModelOrganization: a sweep prints, as a note on stderr naming the spec and the
// field, which model an engine.model under an organization the catalog does not know for it was
// read as.
func TestSweepNotesModelOrganization(t *testing.T) {
	code, _, errs := runCLI(t, "sweep", "--dry-run", "--output-dir", filepath.Join(t.TempDir(), "out"),
		"--set", "engine.model=wrongorg/Llama-3.1-8B")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if want := `note: examples/default-sweep.yaml (--set engine.model=wrongorg/Llama-3.1-8B): engine.model: "wrongorg/Llama-3.1-8B" is read as meta-llama/Llama-3.1-8B, ` +
		"but the catalog knows that model under meta-llama"; !strings.Contains(errs, want) {
		t.Errorf("stderr lacks %q:\n%s", want, errs)
	}
}

// A sweep over a trace resumes only with the trace's contents it ran: the trace edited in place
// (same path, so the same point IDs) gives another spec hash and the resume is refused rather than
// reusing rows of the old contents; restored, the trace resumes the sweep.
func TestSweepRefusesAnEditedTrace(t *testing.T) {
	src, err := os.ReadFile(shippedTrace)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(src), "\n")[:20]
	trace := filepath.Join(t.TempDir(), "t.jsonl")
	if err := os.WriteFile(trace, []byte(strings.Join(lines, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "sweep")
	args := []string{"sweep", "-q", "-c", "../../examples/trace-replay.yaml", "--output-dir", dir,
		"--set", "traffic.source.paths=[" + trace + "]", "--set", "engine.workers.aggregated.parallelism.replicas={choices: [1, 2]}"}
	if code, _, errs := runCLI(t, args...); code != 0 {
		t.Fatalf("first run: exit %d %s", code, errs)
	}
	if err := os.WriteFile(trace, []byte(strings.Join(lines[:10], "")), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs := runCLI(t, args...)
	if code != exitConfigError || !strings.Contains(errs, "holds a sweep of another spec, of other contents of its trace files") ||
		!strings.Contains(errs, "; what differs: the contents of trace file "+trace+"): resuming would mix the two") {
		t.Fatalf("edited trace: exit %d %q; want exit 2 naming the trace's contents", code, errs)
	}
	if err := os.WriteFile(trace, []byte(strings.Join(lines, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, errs := runCLI(t, args...); code != 0 || !strings.Contains(out, "simulated 0, resumed 2:") {
		t.Fatalf("restored trace: exit %d %s\n%s", code, errs, out)
	}
}

// An interrupt before the first point runs (here while the grid expands; the points' configs are
// prepared next, and stop the same way: grid's TestMaterializeStopsWhenCancelled) exits 130 at
// once, names the phase, and leaves the directory free for another spec.
func TestSweepInterruptedWhileExpanding(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sweep")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, errb strings.Builder
	args := append([]string{"sweep", "-q", "--output-dir", dir}, tinyAggregated...)
	code := run(ctx, args, ioStreams{Out: &out, Err: &errb})
	if code != exitInterrupted || !strings.Contains(errb.String(), "interrupted while expanding the grid: nothing was simulated") {
		t.Fatalf("exit %d, stderr %q; want 130 naming the expansion", code, errb.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "points.jsonl.spec")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the interrupted spec's claim is left: %v", err)
	}
	other := append(slices.Clone(args), "--set", "traffic.load.concurrency=8")
	if code, _, errs := runCLI(t, other...); code != 0 {
		t.Errorf("another spec in the directory: exit %d %s", code, errs)
	}
	// So does a shard: its journal's claim goes too.
	sharded := filepath.Join(t.TempDir(), "sharded")
	args = append([]string{"sweep", "-q", "--output-dir", sharded, "--shard", "0/2"}, tinyAggregated...)
	errb.Reset()
	code = run(ctx, args, ioStreams{Out: &out, Err: &errb})
	if code != exitInterrupted || !strings.Contains(errb.String(), "interrupted while expanding the grid: nothing was simulated") {
		t.Fatalf("shard: exit %d, stderr %q; want 130 naming the expansion", code, errb.String())
	}
	if code, _, errs := runCLI(t, append(slices.Clone(args), "--set", "traffic.load.concurrency=8")...); code != 0 {
		t.Errorf("another spec's shard in the directory: exit %d %s", code, errs)
	}
}

// reportFlags gives the report flags of the settings that differ, the cost and goodput bounds
// among them, and none for equal settings.
func TestReportFlags(t *testing.T) {
	have := optimization.Settings{Target: "pareto", Objectives: optimization.DefaultObjectives(), MaxGPUs: 8}
	want := have
	want.Target, want.MaxGPUs, want.StrictSLA, want.MaxRejectedRatio = "throughput", 16, true, 0.25
	want.Objectives = []optimization.Objective{{Metric: "p99_ttft_ms", Direction: optimization.Minimize}}
	flags, ok := reportFlags(have, want)
	if !ok || !slices.Equal(flags, []string{"--target throughput", "--objective min:p99_ttft_ms", "--max-gpus 16", "--strict-sla=true",
		"--max-rejected-ratio 0.25"}) {
		t.Errorf("flags %q, %v", flags, ok)
	}
	for _, c := range []struct {
		set  func(*optimization.Settings)
		flag string
	}{
		{func(s *optimization.Settings) { s.MinGoodputRPS = 2 }, "--min-goodput-rps 2"},
		{func(s *optimization.Settings) { s.MaxCostUSDPerHour = 10 }, "--max-cost-usd-per-hour 10"},
		{func(s *optimization.Settings) { s.MaxUSDPerMillionOutputTokens = 1.5 }, "--max-usd-per-million-output-tokens 1.5"},
	} {
		want = have
		want.Objectives = []optimization.Objective{{Metric: "p99_ttft_ms", Direction: optimization.Minimize}}
		c.set(&want)
		if flags, ok := reportFlags(have, want); !ok || !slices.Equal(flags, []string{"--objective min:p99_ttft_ms", c.flag}) {
			t.Errorf("flags %q, %v; want the objective and %s", flags, ok, c.flag)
		}
	}
	if flags, ok := reportFlags(have, have); ok {
		t.Errorf("equal settings: flags %q; want none", flags)
	}
}

// sweep --export over points export refuses, e.g. whose fixed KV pool no GPU of theirs holds (the
// seed's 32,768 blocks), is refused before anything runs: export would refuse every
// recommendation's launch files, after the whole sweep.
func TestSweepExportRefusesPoolsBeyondMemoryUpFront(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sweep")
	code, _, errs := runCLI(t, "sweep", "-q", "-c", "../../examples/synthetic.yaml", "--set", "traffic.stop={requests: 20}",
		"--set", "engine.workers.aggregated.scheduler.max_sequences={choices: [8, 16]}", "--export", "vllm", "--output-dir", dir)
	if code != exitConfigError || !strings.Contains(errs, "--export vllm: 2 of 2 points are deployments export refuses (e.g. point ") ||
		!strings.Contains(errs, "engine.workers.aggregated.kv_cache.capacity.blocks: the engine could not run a full pass with this pool") {
		t.Fatalf("exit %d %q; want exit 2 before the run", code, errs)
	}
	// So is a vLLM worker whose batched tokens are below its sequences, on a pool that fits.
	code, _, errs = runCLI(t, "sweep", "-q", "-c", "../../examples/synthetic.yaml", "--set", "traffic.stop={requests: 20}",
		"--set", "engine.workers.aggregated.kv_cache.capacity={type: default, memory_fraction: 0.9}",
		"--set", "engine.workers.aggregated.scheduler={max_batched_tokens: 64, max_sequences: {choices: [128, 256]}}", "--export", "vllm", "--output-dir", dir)
	if code != exitConfigError || !strings.Contains(errs, "2 of 2 points are deployments export refuses") ||
		!strings.Contains(errs, "vLLM refuses --max-num-batched-tokens below --max-num-seqs") {
		t.Fatalf("batched tokens below sequences: exit %d %q; want exit 2 before the run", code, errs)
	}
	// Every target is checked, whatever their order: kv_router routing goes to dynamo, not to a
	// bare vLLM launch.
	for _, targets := range []string{"dynamo,vllm", "vllm,dynamo"} {
		code, _, errs = runCLI(t, "sweep", "-q", "-c", "../../examples/synthetic.yaml", "--set", "traffic.stop={requests: 20}",
			"--set", "engine.workers.aggregated.kv_cache.capacity={type: default, memory_fraction: 0.9}", "--set", "router.policy=kv_router",
			"--set", "engine.workers.aggregated.scheduler.max_sequences={choices: [8, 16]}", "--export", targets, "--output-dir", dir)
		if code != exitConfigError || !strings.Contains(errs, "--export vllm: 2 of 2 points are deployments export refuses") {
			t.Errorf("--export %s with kv_router: exit %d %q; want exit 2 naming vllm before the run", targets, code, errs)
		}
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the refused sweep wrote %s (%v)", dir, err)
	}
}

// From largeGrid points a sweep runs under a soft memory limit of what the process holds plus 85 %
// of the available memory, put back when it ends; a smaller sweep, or a GOMEMLIMIT the user set,
// leaves the runtime's alone.
func TestHoldSweepMemory(t *testing.T) {
	avail, ok := availableMemoryGiB()
	if !ok {
		t.Skip("no /proc/meminfo: the limit is not set")
	}
	t.Setenv("GOMEMLIMIT", "")
	os.Unsetenv("GOMEMLIMIT")
	before := debug.SetMemoryLimit(-1)
	release := holdSweepMemory(largeGrid)
	got := debug.SetMemoryLimit(-1)
	release()
	if want := int64(0.85 * avail * (1 << 30)); got < want || got > want+int64(4<<30) {
		t.Errorf("limit %d, want 85 %% of the %.1f GiB available (%d) plus what the process holds", got, avail, want)
	}
	if after := debug.SetMemoryLimit(-1); after != before {
		t.Errorf("limit after release %d, want %d as before", after, before)
	}
	holdSweepMemory(largeGrid - 1)()
	if l := debug.SetMemoryLimit(-1); l != before {
		t.Errorf("a smaller sweep set the limit to %d", l)
	}
	// A grid whose live heap alone exceeds the limit would only make the collector run on: none.
	release = holdSweepMemory(1 << 40)
	if l := debug.SetMemoryLimit(-1); l != before {
		t.Errorf("a grid beyond the memory set the limit to %d", l)
	}
	release()
	t.Setenv("GOMEMLIMIT", "1GiB")
	holdSweepMemory(largeGrid)()
	if l := debug.SetMemoryLimit(-1); l != before {
		t.Errorf("under GOMEMLIMIT the limit became %d", l)
	}
}

// An interrupt once the grid is expanded stops the preparation of the points' configs at once
// (exit 130, naming it) and discards the journal claim the run made, so the directory takes
// another spec; a shard's too.
func TestSweepInterruptedWhilePreparingConfigs(t *testing.T) {
	for _, shard := range [][]string{nil, {"--shard", "0/2"}} {
		dir := filepath.Join(t.TempDir(), "sweep")
		ctx, cancel := context.WithCancel(context.Background())
		afterExpand = cancel
		var out, errb strings.Builder
		args := append(append([]string{"sweep", "-q", "--output-dir", dir}, shard...), tinyAggregated...)
		code := run(ctx, args, ioStreams{Out: &out, Err: &errb})
		afterExpand = nil
		cancel()
		if code != exitInterrupted || !strings.Contains(errb.String(), "interrupted while preparing the points' configs") ||
			!strings.Contains(errb.String(), "nothing was simulated") {
			t.Fatalf("%v: exit %d, stderr %q; want 130 naming the preparation", shard, code, errb.String())
		}
		claims, _ := filepath.Glob(filepath.Join(dir, "*.spec"))
		shardClaims, _ := filepath.Glob(filepath.Join(dir, "journals", "*.spec"))
		if len(claims)+len(shardClaims) != 0 {
			t.Errorf("%v: the interrupted spec's claims are left: %v %v", shard, claims, shardClaims)
		}
		if code, _, errs := runCLI(t, append(slices.Clone(args), "--set", "traffic.load.concurrency=8")...); code != 0 {
			t.Errorf("%v: another spec in the directory: exit %d %s", shard, code, errs)
		}
	}
}

// Int flags are read in decimal: --show 010 lists ten points, not octal eight.
func TestShowReadsDecimal(t *testing.T) {
	code, out, errs := runCLI(t, "sweep", "--dry-run", "--show", "010")
	if code != 0 || !strings.Contains(out, "first 10 points:") {
		t.Errorf("exit %d, stderr %q, stdout:\n%s; want the first 10 points", code, errs, out)
	}
}

// The seed check simulates the front and its contenders again under seeds moved by one: the
// summary, report.md and sweep.json carry it (its answer the front pareto.json lists); Ctrl-C
// during it writes the report without it and exits 130, and the rerun checks; report keeps it
// for the sweep's own settings only; --seed-check=false runs none.
func TestSweepSeedCheck(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sweep")
	sets := []string{"traffic.stop={sessions: 8}", "traffic.load.concurrency=4", "traffic.source.session.turns=2",
		"optimization.capacity_search.max=8", "traffic.load.ramp_seconds=0"} // tinyDefault's
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	opts := &sweepOptions{OutputDir: dir, Sets: sets, Quiet: true, Format: formatTable, Parallelism: 2, SeedCheck: true,
		Simulate: func(c context.Context, cfg *config.Config, o sim.Options) (*sim.Result, error) {
			if cfg.Traffic.Source.DrawSeed() == config.DefaultSeed+1 {
				cancel() // the first re-seeded simulation
			}
			return sim.Run(c, cfg, o)
		}}
	var outb, errb strings.Builder
	err := runSweep(ctx, ioStreams{Out: &outb, Err: &errb}, opts)
	if code := exitCode(err); code != exitInterrupted || !strings.Contains(err.Error(), "interrupted during the seed check") {
		t.Fatalf("Ctrl-C during the seed check: exit %d (%v), want 130", code, err)
	}
	m, err := results.ReadManifest(dir)
	if err != nil || m.SeedCheck != nil || m.SeedCheckSkipped != results.SeedCheckInterrupted || len(readRows(t, dir)) != 360 {
		t.Fatalf("after Ctrl-C in the seed check: manifest %v (%v), want every row and no seed check", m, err)
	}
	if report, _ := os.ReadFile(filepath.Join(dir, results.ReportFile)); !strings.Contains(string(report), "No seed check: the sweep or its seed check was interrupted") {
		t.Error("report.md does not say the seed check was interrupted")
	}

	code, out, errs := runCLI(t, append([]string{"sweep", "--output-dir", dir, "-q"}, tinyDefault...)...)
	if code != 0 || !strings.Contains(out, "resumed 360") || !strings.Contains(out, "Seed check: the front's ") {
		t.Fatalf("rerun: exit %d %s\n%s", code, errs, out)
	}
	if m, err = results.ReadManifest(dir); err != nil || m.SeedCheck == nil {
		t.Fatalf("sweep.json after the rerun has no seed check (%v)", err)
	}
	var pareto struct {
		Front []struct {
			PointID string `json:"point_id"`
		} `json:"front"`
		SeedCheck *results.SeedCheck `json:"seed_check"`
		Changed   *bool              `json:"seed_check_changed"`
	}
	data, err := os.ReadFile(filepath.Join(dir, results.ParetoFile))
	if err != nil || json.Unmarshal(data, &pareto) != nil || pareto.SeedCheck == nil || pareto.Changed == nil {
		t.Fatalf("pareto.json has no seed check (%v):\n%s", err, data)
	}
	var front []string
	for _, p := range pareto.Front {
		front = append(front, p.PointID)
	}
	sc := m.SeedCheck
	if sc.AnswerEntries != len(front) || sc.AnswerSize < len(front) || sc.AnswerPoints != sc.AnswerSize || len(sc.Points) < sc.AnswerSize ||
		sc.SeedOffset != 1 || *pareto.Changed != sc.Changed() {
		t.Errorf("seed check %+v, want the front %v first", sc, front)
	}
	for _, id := range front {
		if !slices.Contains(sc.Answer, id) {
			t.Errorf("the checked answer %v lacks front entry %s", sc.Answer, id)
		}
	}
	for _, p := range sc.Points {
		if p.CapacityLoad == nil || len(p.Objectives) != 2 || p.StatusReseeded == results.StatusOK && p.CapacityLoadReseeded == nil {
			t.Errorf("checked point %+v lacks its capacities or objectives", p)
		}
		// The built-in's lengths are drawn: every point moved its source's seed (and a kv_router
		// one over several workers its router's).
		if len(p.SeedsMoved) == 0 || p.SeedsMoved[0] != grid.SeedSource {
			t.Errorf("checked point %s: seeds moved %v, want %s first", p.PointID, p.SeedsMoved, grid.SeedSource)
		}
	}
	if report, _ := os.ReadFile(filepath.Join(dir, results.ReportFile)); !strings.Contains(string(report), "Seed check: the front's ") {
		t.Error("report.md has no seed check")
	}

	// report under the sweep's settings keeps it; under others it says whose answer it checked.
	if code, out, errs := runCLI(t, "report", "--results", dir, "--output-dir", filepath.Join(t.TempDir(), "same")); code != 0 ||
		!strings.Contains(out, "Seed check: the front's ") {
		t.Errorf("report: exit %d %s\n%s", code, errs, out)
	}
	if code, out, errs := runCLI(t, "report", "--results", dir, "--output-dir", filepath.Join(t.TempDir(), "other"),
		"--objective", "max:output_throughput_tok_s"); code != 0 ||
		!strings.Contains(out, "covers the answer of its own settings, not this one's") {
		t.Errorf("report with another objective: exit %d %s\n%s", code, errs, out)
	}

	code, out, errs = runCLI(t, append([]string{"sweep", "--output-dir", dir, "-q", "--seed-check=false"}, tinyDefault...)...)
	if code != 0 || strings.Contains(out, "Seed check") {
		t.Fatalf("--seed-check=false: exit %d %s\n%s", code, errs, out)
	}
	if m, err = results.ReadManifest(dir); err != nil || m.SeedCheck != nil || m.SeedCheckSkipped != results.SeedCheckDisabled {
		t.Errorf("--seed-check=false left a seed check in sweep.json, or no reason (%v)", err)
	}
	if !strings.Contains(out, "No seed check: the sweep ran with --seed-check=false.") {
		t.Errorf("--seed-check=false: the summary does not say so:\n%s", out)
	}

	// A shard runs none, and says so when the flag asks for it; the merge's report says why.
	sharded := filepath.Join(t.TempDir(), "sharded")
	for i := range 2 {
		code, _, errs := runCLI(t, append([]string{"sweep", "--output-dir", sharded, "-q", "--seed-check", "--shard", fmt.Sprintf("%d/2", i)}, tinyDefault...)...)
		if code != 0 || !strings.Contains(errs, "warning: --seed-check: a shard runs no seed check") {
			t.Fatalf("shard %d: exit %d, stderr:\n%s", i, code, errs)
		}
	}
	if code, out, errs := runCLI(t, "merge", "--results", sharded); code != 0 || !strings.Contains(out, "No seed check: a merge simulates nothing") {
		t.Errorf("merge: exit %d %s\n%s", code, errs, out)
	}
}

// A seed check that cannot run (here the machine's pass-log spill fails under the moved seeds)
// is a warning: the sweep's outputs are written, say why there is no check, and it exits 0.
func TestSweepSeedCheckFailureKeepsTheSweep(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sweep")
	opts := &sweepOptions{ConfigPath: "../../examples/sweep-small.yaml", configSet: true, OutputDir: dir, Quiet: true,
		Format: formatTable, Parallelism: 2, SeedCheck: true,
		Simulate: func(c context.Context, cfg *config.Config, o sim.Options) (*sim.Result, error) {
			if cfg.Traffic.Source.DrawSeed() == config.DefaultSeed+1 {
				return nil, &metrics.SpillError{Msg: "pass log spill file /nowhere/x: creating: no such file or directory"}
			}
			return sim.Run(c, cfg, o)
		}}
	var outb, errb strings.Builder
	if err := runSweep(context.Background(), ioStreams{Out: &outb, Err: &errb}, opts); err != nil {
		t.Fatalf("a failed seed check failed the sweep: %v", err)
	}
	if !strings.Contains(errb.String(), "warning: the seed check could not run: ") || !strings.Contains(outb.String(), "No seed check: it could not run (") {
		t.Errorf("stderr:\n%s\nstdout:\n%s", errb.String(), outb.String())
	}
	m, err := results.ReadManifest(dir)
	if err != nil || m.SeedCheck != nil || !strings.HasPrefix(m.SeedCheckSkipped, "failed: ") || len(readRows(t, dir)) != 3 {
		t.Errorf("manifest %+v (%v), want the 3 rows and the failure recorded", m, err)
	}
}

// A resume refused for another spec says what differs from the sweep the directory holds: its
// points (another count, or the same count of other points), or the build.
func TestSweepRefusalSaysWhatDiffers(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sweep")
	args := []string{"sweep", "-q", "-c", "../../examples/sweep-small.yaml", "--output-dir", dir}
	if code, _, errs := runCLI(t, args...); code != 0 {
		t.Fatalf("first run: exit %d %s", code, errs)
	}
	for _, c := range []struct {
		set, want string
	}{
		{"traffic.stop.requests_per_load_unit=12", "; what differs: the grid's points (3 then and now, not the same ones: " +
			"the spec's engine, traffic, router, evaluation or domain fields, or how this servesweep version expands them)): resuming would mix the two"},
		{"traffic.load.concurrency={choices: [4, 16]}", "; what differs: the grid's points (3 then, 2 now: "},
	} {
		code, _, errs := runCLI(t, append(args, "--set", c.set)...)
		if code != exitConfigError || !strings.Contains(errs, c.want) {
			t.Errorf("--set %s: exit %d %q; want exit 2 and %q", c.set, code, errs, c.want)
		}
	}
	// Another build: the directory's recorded identity says which it was.
	spec := filepath.Join(dir, results.JournalFile+results.SpecSuffix)
	data, err := os.ReadFile(spec)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if !strings.HasPrefix(l, "build ") {
			lines = append(lines, l)
		}
	}
	lines = append(lines, "build v0.0.0-old")
	if err := os.WriteFile(spec, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, results.ManifestFile)); err != nil {
		t.Fatal(err)
	}
	code, _, errs := runCLI(t, append(args, "--set", "traffic.stop.requests_per_load_unit=12")...)
	if code != exitConfigError || !strings.Contains(errs, "the grid's points (3 then and now, not the same ones") ||
		!strings.Contains(errs, "; the servesweep build (v0.0.0-old then, ") {
		t.Errorf("another build, journal check: exit %d %q", code, errs)
	}
	// Only the analysis settings differ, and no sweep.json holds the old ones: finish, then report.
	if err := os.WriteFile(spec, data, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCLI(t, append(args, "--set", "optimization.target=throughput")...)
	if code != exitConfigError || out != "" || !strings.Contains(errs, "holds this sweep's points under other analysis settings, and no sweep.json") ||
		!strings.Contains(errs, "finish it under the settings it was started with (target pareto then, throughput now): servesweep sweep -c "+
			"../../examples/sweep-small.yaml --set optimization.target=pareto --output-dir "+dir+";") ||
		!strings.Contains(errs, "then apply the new ones to its rows without simulating again: servesweep report --results "+dir+" --output-dir "+dir+"-report --target throughput;") {
		t.Errorf("settings only, no sweep.json: exit %d, stdout %q, stderr %q", code, out, errs)
	}
}

// A shard refused for another spec says what differs from the spec its part was written for,
// with nothing on stdout.
func TestShardRefusalSaysWhatDiffers(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sharded")
	args := []string{"sweep", "-c", "../../examples/sweep-small.yaml", "--output-dir", dir}
	for _, sh := range []string{"0/2", "1/2"} {
		if code, _, errs := runCLI(t, append(args, "-q", "--shard", sh)...); code != 0 {
			t.Fatalf("shard %s: exit %d %s", sh, code, errs)
		}
	}
	for _, sh := range []string{"0/2", "1/2"} {
		code, out, errs := runCLI(t, append(args, "--shard", sh, "--set", "traffic.stop.requests_per_load_unit=12")...)
		if code != exitConfigError || out != "" || !strings.Contains(errs, "; what differs: the grid's points (") {
			t.Errorf("shard %s, another spec: exit %d, stdout %q, stderr %q", sh, code, out, errs)
		}
	}
}
