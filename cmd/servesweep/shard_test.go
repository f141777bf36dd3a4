package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/servesweep/servesweep/grid"
	"github.com/servesweep/servesweep/results"
	"github.com/servesweep/servesweep/sim"
	"github.com/servesweep/servesweep/sim/config"
	"github.com/servesweep/servesweep/sim/optimization"
)

// tinyDefault shrinks the built-in sweep's workload so that a sweep
// run several times (whole, as shards, merged) stays quick under -race; the 360-point grid is
// unchanged. Its fixed 8 two-turn sessions do not grow with the load, so the capacity search stops
// at concurrency 8 (where every session is in flight), and every point's search meets the SLA up
// to that max and ends there, bounded; the fixed concurrency is the load of a test that turns the
// capacity search off. Its probes keep the synchronized start (ramp_seconds 0: no pilot runs), as
// these tests are about the sweep's files, not about steady-state capacity.
var tinyDefault = []string{"--set", "traffic.stop={sessions: 8}", "--set", "traffic.load.concurrency=4", "--set", "traffic.source.session.turns=2",
	"--set", "optimization.capacity_search.max=8", "--set", "traffic.load.ramp_seconds=0"}

func TestResolveShard(t *testing.T) {
	for _, tc := range []struct {
		name       string
		shard      string
		count      int
		env        map[string]string
		want       *grid.Shard
		wantSource string
		err        string
	}{
		{name: "nothing: the whole sweep"},
		{name: "flag", shard: "2/4", want: &grid.Shard{Index: 2, Count: 4}, wantSource: "--shard 2/4"},
		{name: "flag wins over the environment", shard: "0/1", env: map[string]string{"JOB_COMPLETION_INDEX": "x"},
			want: &grid.Shard{Index: 0, Count: 1}, wantSource: "--shard 0/1"},
		{name: "flag with the same count", shard: "1/3", count: 3, want: &grid.Shard{Index: 1, Count: 3}},
		{name: "flag contradicting the count", shard: "1/3", count: 4, err: "--shard-count 4 contradicts --shard 1/3"},
		{name: "flag index too large", shard: "4/4", err: "--shard: the shard index must be < the shard count 4"},
		{name: "flag count zero", shard: "0/0", err: "--shard: the shard count must be >= 1, got 0"},
		{name: "flag negative", shard: "-1/4", err: "--shard: the shard index must be >= 0"},
		{name: "flag not a number", shard: "a/4", err: "--shard: want I/N with I a whole number"},
		{name: "flag without slash", shard: "3", err: "--shard: want I/N"},
		{name: "flag count too large", shard: "0/100000", err: "--shard: the shard count must be <= 99999"},
		{name: "kubernetes with SERVESWEEP_SHARD_COUNT", env: map[string]string{"JOB_COMPLETION_INDEX": "3", "SERVESWEEP_SHARD_COUNT": "4"},
			want: &grid.Shard{Index: 3, Count: 4}, wantSource: "JOB_COMPLETION_INDEX=3 and SERVESWEEP_SHARD_COUNT=4"},
		{name: "kubernetes with --shard-count", count: 4, env: map[string]string{"JOB_COMPLETION_INDEX": "1", "SERVESWEEP_SHARD_COUNT": "9"},
			want: &grid.Shard{Index: 1, Count: 4}, wantSource: "JOB_COMPLETION_INDEX=1 and --shard-count 4"},
		{name: "kubernetes without a count", env: map[string]string{"JOB_COMPLETION_INDEX": "1"},
			err: "JOB_COMPLETION_INDEX=1 gives the shard index but the shard count is unknown: pass --shard-count N or set SERVESWEEP_SHARD_COUNT"},
		{name: "kubernetes index not a number", env: map[string]string{"JOB_COMPLETION_INDEX": "one", "SERVESWEEP_SHARD_COUNT": "4"},
			err: `environment variable JOB_COMPLETION_INDEX must be a whole number >= 0 (the 0-based shard index), got "one"`},
		{name: "kubernetes negative index", env: map[string]string{"JOB_COMPLETION_INDEX": "-2", "SERVESWEEP_SHARD_COUNT": "4"},
			err: "JOB_COMPLETION_INDEX must be a whole number >= 0"},
		{name: "kubernetes index too large", env: map[string]string{"JOB_COMPLETION_INDEX": "4", "SERVESWEEP_SHARD_COUNT": "4"},
			err: "JOB_COMPLETION_INDEX=4 is not a shard of SERVESWEEP_SHARD_COUNT=4: the shard index must be < the shard count (0 to 3)"},
		{name: "count zero", env: map[string]string{"JOB_COMPLETION_INDEX": "0", "SERVESWEEP_SHARD_COUNT": "0"},
			err: `environment variable SERVESWEEP_SHARD_COUNT must be a whole number between 1 and 99999 (the shard count), got "0"`},
		{name: "count not a number", env: map[string]string{"JOB_COMPLETION_INDEX": "0", "SERVESWEEP_SHARD_COUNT": "four"},
			err: "SERVESWEEP_SHARD_COUNT must be a whole number"},
		{name: "--shard-count negative", count: -1, env: map[string]string{"JOB_COMPLETION_INDEX": "0"}, err: "--shard-count must be between 1 and 99999, got -1"},
		{name: "slurm", env: map[string]string{"SLURM_ARRAY_TASK_ID": "5", "SLURM_ARRAY_TASK_COUNT": "7"},
			want: &grid.Shard{Index: 5, Count: 7}, wantSource: "SLURM_ARRAY_TASK_ID=5 and SLURM_ARRAY_TASK_COUNT=7"},
		{name: "slurm resubmitted task with SERVESWEEP_SHARD_COUNT", env: map[string]string{"SLURM_ARRAY_TASK_ID": "5",
			"SLURM_ARRAY_TASK_COUNT": "1", "SERVESWEEP_SHARD_COUNT": "7"}, want: &grid.Shard{Index: 5, Count: 7}},
		{name: "slurm resubmitted task without a count", env: map[string]string{"SLURM_ARRAY_TASK_ID": "5", "SLURM_ARRAY_TASK_COUNT": "1"},
			err: "SLURM_ARRAY_TASK_ID=5 is not a shard of SLURM_ARRAY_TASK_COUNT=1: the shard index must be < the shard count (0 to 0); number the array from 0"},
		{name: "slurm count not a number", env: map[string]string{"SLURM_ARRAY_TASK_ID": "0", "SLURM_ARRAY_TASK_COUNT": "n"},
			err: `environment variable SLURM_ARRAY_TASK_COUNT must be a whole number between 1 and 99999 (the shard count), got "n"`},
		{name: "kubernetes and slurm both set", env: map[string]string{"JOB_COMPLETION_INDEX": "0", "SERVESWEEP_SHARD_COUNT": "2",
			"SLURM_ARRAY_TASK_ID": "1", "SLURM_ARRAY_TASK_COUNT": "2"},
			err: "both JOB_COMPLETION_INDEX=0 (Kubernetes Indexed Job) and SLURM_ARRAY_TASK_ID=1 (Slurm job array) are set"},
		{name: "--shard ignores both index variables", shard: "1/2", env: map[string]string{"JOB_COMPLETION_INDEX": "0",
			"SLURM_ARRAY_TASK_ID": "1"}, want: &grid.Shard{Index: 1, Count: 2}},
		{name: "an empty variable is unset", env: map[string]string{"JOB_COMPLETION_INDEX": "", "SLURM_ARRAY_TASK_ID": "2",
			"SLURM_ARRAY_TASK_COUNT": "4"}, want: &grid.Shard{Index: 2, Count: 4}},
		{name: "SERVESWEEP_SHARD_COUNT without an index", env: map[string]string{"JOB_COMPLETION_INDEX": "", "SERVESWEEP_SHARD_COUNT": "4"},
			err: "SERVESWEEP_SHARD_COUNT=4 gives a shard count but no shard index is set"},
		{name: "count without an index", count: 4, err: "--shard-count needs a shard index: pass --shard I/N, or run where JOB_COMPLETION_INDEX"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := &sweepOptions{Shard: tc.shard, ShardCount: tc.count}
			got, err := resolveShard(opts, func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok })
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				if exitCode(err) != exitConfigError {
					t.Errorf("exit code %d, want 2", exitCode(err))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case tc.want == nil && got != nil:
				t.Fatalf("got shard %v, want none", got.Shard)
			case tc.want != nil && (got == nil || got.Shard != *tc.want):
				t.Fatalf("got %+v, want %v", got, *tc.want)
			case tc.wantSource != "" && got.Source != tc.wantSource:
				t.Errorf("source %q, want %q", got.Source, tc.wantSource)
			}
		})
	}
}

// paretoDoc is the part of pareto.json the sharding and report tests compare.
type paretoDoc struct {
	Settings optimization.Settings `json:"settings"`
	// TiesFile names pareto_ties.parquet when the front has ties.
	TiesFile   string           `json:"ties_file"`
	Front      []map[string]any `json:"front"`
	Best       []map[string]any `json:"best"`
	Incomplete bool             `json:"incomplete"`
	Merge      *struct {
		Complete      bool `json:"complete"`
		MissingPoints int  `json:"missing_points"`
		DuplicateRows int  `json:"duplicate_rows"`
		MissingShards []struct {
			Index, Count, Points int
		} `json:"missing_shards"`
		PartialShards []struct {
			Index           int      `json:"index"`
			MissingPointIDs []string `json:"missing_point_ids"`
		} `json:"partial_shards"`
	} `json:"merge"`
}

func readPareto(t *testing.T, dir string) paretoDoc {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, results.ParetoFile))
	if err != nil {
		t.Fatal(err)
	}
	var d paretoDoc
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatal(err)
	}
	return d
}

// runShardCLI runs `servesweep sweep` for one shard of the tiny default sweep into dir.
func runShardCLI(t *testing.T, dir string, extra ...string) string {
	t.Helper()
	args := append(append([]string{"sweep", "--output-dir", dir, "-q"}, tinyDefault...), extra...)
	code, out, errs := runCLI(t, args...)
	if code != 0 {
		t.Fatalf("%v: exit %d: %s\n%s", args, code, errs, out)
	}
	return out
}

// TestShardedSweepMatchesSingleRun runs the tiny default sweep whole, then as 4 shards into one
// shared directory (two shards from --shard I/4, two from JOB_COMPLETION_INDEX as in a
// Kubernetes Indexed Job), merges them and checks that the merged results have the same rows
// and capacity search probes (apart from host time) and the same Pareto front as the single run.
func TestShardedSweepMatchesSingleRun(t *testing.T) {
	endToEnd(t)
	tmp := t.TempDir()
	single := filepath.Join(tmp, "single")
	runShardCLI(t, single)
	want := readRows(t, single)

	shared := filepath.Join(tmp, "shared")
	out := runShardCLI(t, shared, "--shard", "0/4")
	if !strings.Contains(out, "shard 0/4 (from --shard 0/4)") {
		t.Errorf("the log does not say where the shard came from:\n%s", out)
	}
	runShardCLI(t, shared, "--shard", "2/4")
	t.Setenv("SERVESWEEP_SHARD_COUNT", "4")
	t.Setenv("JOB_COMPLETION_INDEX", "1")
	if out := runShardCLI(t, shared); !strings.Contains(out, "shard 1/4 (from JOB_COMPLETION_INDEX=1 and SERVESWEEP_SHARD_COUNT=4)") {
		t.Errorf("shard 1 log:\n%s", out)
	}
	t.Setenv("SERVESWEEP_SHARD_COUNT", "")
	t.Setenv("JOB_COMPLETION_INDEX", "3")
	if out := runShardCLI(t, shared, "--shard-count", "4"); !strings.Contains(out, "shard 3/4 (from JOB_COMPLETION_INDEX=3 and --shard-count 4)") {
		t.Errorf("shard 3 log:\n%s", out)
	}
	// A rerun of a shard (a retried pod) resumes from its own journal.
	if out := runShardCLI(t, shared, "--shard-count", "4"); !strings.Contains(out, "simulated 0, resumed ") {
		t.Errorf("the rerun of shard 3 simulated again:\n%s", out)
	}
	t.Setenv("JOB_COMPLETION_INDEX", "")

	parts, _ := filepath.Glob(filepath.Join(shared, "results", "*.parquet"))
	journals, _ := filepath.Glob(filepath.Join(shared, "journals", "*.jsonl"))
	wantParts := []string{"part-00000-of-00004.parquet", "part-00001-of-00004.parquet", "part-00002-of-00004.parquet", "part-00003-of-00004.parquet"}
	if len(parts) != 4 || len(journals) != 4 || filepath.Base(parts[0]) != wantParts[0] || filepath.Base(parts[3]) != wantParts[3] {
		t.Fatalf("parts %v, journals %v", parts, journals)
	}
	total := 0
	for i, p := range parts {
		part, err := results.ReadPart(p)
		if err != nil {
			t.Fatal(err)
		}
		if part.Meta.ShardIndex != i || part.Meta.ShardCount != 4 || part.Meta.SpecHash == "" || len(part.Meta.MissingPointIDs) != 0 {
			t.Errorf("%s: metadata %+v", p, part.Meta)
		}
		for _, r := range part.Rows {
			if grid.ShardOf(r.PointID, 4) != i {
				t.Errorf("%s holds point %s of shard %d", p, r.PointID, grid.ShardOf(r.PointID, 4))
			}
		}
		total += len(part.Rows)
	}
	if total != len(want) {
		t.Errorf("the parts hold %d rows, the single run %d", total, len(want))
	}
	// Each shard writes its points' probes beside its part.
	wantProbes := withoutProbeHostTime(checkProbes(t, single, want))
	probeParts, _ := filepath.Glob(filepath.Join(shared, results.ProbesDir, "*.parquet"))
	nprobes := 0
	for i, p := range probeParts {
		if filepath.Base(p) != results.ProbesPartName(i, 4) {
			t.Errorf("probe tables %v, want probes-0000I-of-00004.parquet for I from 0 to 3", probeParts)
		}
		probes, err := results.ReadProbes(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, pr := range probes {
			if grid.ShardOf(pr.PointID, 4) != i {
				t.Errorf("%s holds a probe of point %s of shard %d", p, pr.PointID, grid.ShardOf(pr.PointID, 4))
			}
		}
		nprobes += len(probes)
	}
	if len(probeParts) != 4 || nprobes != len(wantProbes) {
		t.Errorf("%d probe tables hold %d probes, the single run %d", len(probeParts), nprobes, len(wantProbes))
	}

	merged := filepath.Join(tmp, "merged")
	code, mout, errs := runCLI(t, "merge", "--results", shared, "--output-dir", merged)
	if code != 0 || errs != "" {
		t.Fatalf("merge: exit %d: %s\n%s", code, errs, mout)
	}
	if !strings.Contains(mout, "360 rows of 360 selected points (0 duplicate rows removed): 360 ok, 0 degraded, 0 failed, 0 timed out") {
		t.Errorf("merge stdout:\n%s", mout)
	}
	got := readRows(t, merged)
	if !reflect.DeepEqual(withoutHostTime(got), withoutHostTime(want)) {
		t.Errorf("merged rows differ from the single run (%d rows vs %d)", len(got), len(want))
	}
	if probes := withoutProbeHostTime(checkProbes(t, merged, got)); !reflect.DeepEqual(probes, wantProbes) {
		t.Errorf("merged probes differ from the single run's (%d probes vs %d)", len(probes), len(wantProbes))
	}
	sp, mp := readPareto(t, single), readPareto(t, merged)
	if len(sp.Front) == 0 || !reflect.DeepEqual(sp.Front, mp.Front) || !reflect.DeepEqual(sp.Best, mp.Best) {
		t.Errorf("merged front differs:\nsingle %v\nmerged %v", sp.Front, mp.Front)
	}
	if mp.Incomplete || mp.Merge == nil || !mp.Merge.Complete {
		t.Errorf("a complete merge is marked incomplete: %+v", mp.Merge)
	}
	for _, name := range []string{results.ManifestFile, results.ReportFile, results.PlotFile, results.HTMLFile, "recommendations/0001.yaml"} {
		if _, err := os.Stat(filepath.Join(merged, name)); err != nil {
			t.Error(err)
		}
	}
	sr, _ := os.ReadFile(filepath.Join(single, "recommendations", "0001.yaml"))
	mr, _ := os.ReadFile(filepath.Join(merged, "recommendations", "0001.yaml"))
	if string(sr) != string(mr) {
		t.Error("the first recommendation differs between the single run and the merge")
	}

	// A copy of a part (a rerun collected from another node) is merged once.
	extra := filepath.Join(shared, "node-b", "part-00002-of-00004.parquet")
	os.MkdirAll(filepath.Dir(extra), 0o755)
	data, _ := os.ReadFile(parts[2])
	os.WriteFile(extra, data, 0o644)
	code, mout, errs = runCLI(t, "merge", "--results", shared)
	if code != 0 || !strings.Contains(mout, "360 rows of 360 selected points") {
		t.Fatalf("merge with a duplicate part: exit %d: %s\n%s", code, errs, mout)
	}
	got = readRows(t, shared)
	if !reflect.DeepEqual(withoutHostTime(got), withoutHostTime(want)) {
		t.Error("merged rows with a duplicate part differ from the single run")
	}
	if probes := withoutProbeHostTime(checkProbes(t, shared, got)); !reflect.DeepEqual(probes, wantProbes) {
		t.Error("merged probes with a duplicate part differ from the single run's")
	}
	if d := readPareto(t, shared); d.Merge == nil || d.Merge.DuplicateRows == 0 || !reflect.DeepEqual(d.Front, sp.Front) {
		t.Errorf("duplicate part: merge info %+v", d.Merge)
	}
}

// withoutProbeHostTime returns probes with their host time (wall_time_ms) zeroed.
func withoutProbeHostTime(probes []results.ProbeRow) []results.ProbeRow {
	out := slices.Clone(probes)
	for i := range out {
		out[i].WallTimeMs = 0
	}
	return out
}

// TestMergeRefusesTwoSpecs collects the parts of two specs under one directory.
func TestMergeRefusesTwoSpecs(t *testing.T) {
	root := t.TempDir()
	a, b := filepath.Join(root, "a"), filepath.Join(root, "b")
	runShardCLI(t, a, "--shard", "0/2", "--set", "engine.mode={choices: [aggregated]}")
	runShardCLI(t, b, "--shard", "1/2", "--set", "engine.mode={choices: [aggregated]}", "--set", "traffic.load.concurrency=2")
	code, _, errs := runCLI(t, "merge", "--results", root)
	pa := filepath.Join(a, "results", "part-00000-of-00002.parquet")
	pb := filepath.Join(b, "results", "part-00001-of-00002.parquet")
	if code != 2 || !strings.Contains(errs, "different sweep specs") || !strings.Contains(errs, pa) || !strings.Contains(errs, pb) {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	ma, _ := results.ReadPartMeta(pa)
	mb, _ := results.ReadPartMeta(pb)
	if ma.SpecHash == mb.SpecHash || !strings.Contains(errs, ma.SpecHash) || !strings.Contains(errs, mb.SpecHash) {
		t.Errorf("the error does not name both spec hashes (%s, %s): %s", ma.SpecHash, mb.SpecHash, errs)
	}
	if _, err := os.Stat(filepath.Join(root, results.ParquetFile)); err == nil {
		t.Error("a refused merge wrote results.parquet")
	}
	// A shard of the second spec is refused in the first spec's directory too.
	code, _, errs = runCLI(t, append(append([]string{"sweep", "--output-dir", a, "-q", "--shard", "1/2"}, tinyDefault...),
		"--set", "engine.mode={choices: [aggregated]}", "--set", "traffic.load.concurrency=2")...)
	if code != 2 || !strings.Contains(errs, "holds parts of another sweep spec") {
		t.Errorf("a shard of another spec in a shared directory: exit %d %q", code, errs)
	}
	// The refused shard left nothing behind: the first spec's shard 1 then runs there.
	if _, err := os.Stat(filepath.Join(a, results.JournalsDir, "part-00001-of-00002.jsonl"+results.SpecSuffix)); err == nil {
		t.Error("the refused shard claimed its journal")
	}
	code, _, errs = runCLI(t, append(append([]string{"sweep", "--output-dir", a, "-q", "--shard", "1/2"}, tinyDefault...),
		"--set", "engine.mode={choices: [aggregated]}")...)
	if code != 0 {
		t.Errorf("the first spec's shard 1 after a refused one: exit %d %q", code, errs)
	}
}

// TestMergeReportsMissingShard merges 3 of 4 shards, one of which was interrupted.
func TestMergeReportsMissingShard(t *testing.T) {
	endToEnd(t)
	tmp := t.TempDir()
	single := filepath.Join(tmp, "single")
	runShardCLI(t, single)
	want := readRows(t, single)
	shared := filepath.Join(tmp, "shared")
	runShardCLI(t, shared, "--shard", "0/4")
	runShardCLI(t, shared, "--shard", "3/4")
	// Shard 1 is interrupted after 3 points: the first probe of the 4th point's capacity search
	// (the one at the search's min, concurrency 1, not its pilot of 1 session) cancels it. With
	// --format json it prints nothing on stdout.
	ctx, cancel := context.WithCancel(context.Background())
	var n atomic.Int32
	opts := &sweepOptions{OutputDir: shared, Sets: []string{"traffic.stop={sessions: 8}", "traffic.load.concurrency=4", "traffic.source.session.turns=2",
		"optimization.capacity_search.max=8", "traffic.load.ramp_seconds=0"}, Quiet: true,
		Format: formatJSON, Parallelism: 1, Shard: "1/4", Simulate: func(c context.Context, cfg *config.Config, o sim.Options) (*sim.Result, error) {
			if cfg.Traffic.Load.Concurrency == 1 && cfg.Traffic.Stop.Sessions == 8 && n.Add(1) == 4 {
				cancel()
			}
			return sim.Run(c, cfg, o)
		}}
	var ob, eb strings.Builder
	err := runSweep(ctx, ioStreams{Out: &ob, Err: &eb}, opts)
	if exitCode(err) != exitInterrupted || !strings.Contains(err.Error(), "--output-dir "+shared+" --shard 1/4") {
		t.Fatalf("interrupted shard: %v", err)
	}
	if ob.String() != "" {
		t.Errorf("interrupted shard with --format json: stdout %q, want nothing", ob.String())
	}

	code, out, errs := runCLI(t, "merge", "--results", shared)
	if code != 0 {
		t.Fatalf("merge: exit %d: %s", code, errs)
	}
	if !strings.Contains(errs, "warning: incomplete merge") || !strings.Contains(errs, "shard 2 of 4 wrote no part (") ||
		!strings.Contains(errs, "shard 1 of 4 is unfinished: ") {
		t.Errorf("the warning does not name the missing shards:\n%s", errs)
	}
	if !regexp.MustCompile(`(?m)^PARTIAL: \d+ of 360 selected points have results; the front below is of those points only`).MatchString(out) {
		t.Errorf("the incomplete merge's standard output does not say it is partial:\n%s", out)
	}
	// rows prints what was merged, and says on stderr that it is part of the sweep.
	if code, ids, errs := runCLI(t, "rows", "--results", shared, "--columns", "point_id"); code != 0 ||
		!strings.Contains(errs, "servesweep rows: PARTIAL: the sweep in "+shared+" is incomplete (the merged parts "+
			"lack points): its tables hold the points that have results, not all 360 selected points") || strings.Count(ids, "\n") < 2 {
		t.Errorf("rows of an incomplete merge: exit %d %q\n%s", code, errs, ids)
	}
	got := readRows(t, shared)
	var wantRows []results.Row
	for _, r := range want {
		if s := grid.ShardOf(r.PointID, 4); s == 0 || s == 3 || slices.ContainsFunc(got, func(g results.Row) bool { return g.PointID == r.PointID }) {
			wantRows = append(wantRows, r)
		}
	}
	if len(got) != len(wantRows) || !reflect.DeepEqual(withoutHostTime(got), withoutHostTime(wantRows)) {
		t.Errorf("the incomplete merge has %d rows, want %d (shards 0 and 3, and the finished points of shard 1)", len(got), len(wantRows))
	}
	if !strings.Contains(out, fmt.Sprintf("%d rows of 360 selected points", len(got))) {
		t.Errorf("merge stdout:\n%s", out)
	}
	// The merge keeps the probes of the points it has.
	checkProbes(t, shared, got)
	d := readPareto(t, shared)
	if !d.Incomplete || d.Merge == nil || d.Merge.Complete || d.Merge.MissingPoints != 360-len(got) {
		t.Fatalf("pareto.json does not mark the merge incomplete: %+v", d.Merge)
	}
	// Shard sizes come from the single run's 360 points. All of shard 2 is missing. Shard 1's
	// first 3 points finished before the 4th cancelled the sweep; that one, and one more already
	// queued, may finish too (a small simulation checks for cancellation only every 1024 events),
	// so shard 1 misses exactly its points absent from the merged rows, at least one.
	var shard2, shard1 int
	var shard1Missing []string
	for _, r := range want {
		switch grid.ShardOf(r.PointID, 4) {
		case 1:
			shard1++
			if !slices.ContainsFunc(got, func(g results.Row) bool { return g.PointID == r.PointID }) {
				shard1Missing = append(shard1Missing, r.PointID)
			}
		case 2:
			shard2++
		}
	}
	shard1Done := shard1 - len(shard1Missing)
	if shard1Done < 3 || len(shard1Missing) == 0 {
		t.Errorf("shard 1 finished %d of %d points, want at least 3 and not all", shard1Done, shard1)
	}
	if len(d.Merge.MissingShards) != 1 || d.Merge.MissingShards[0].Index != 2 || d.Merge.MissingShards[0].Count != 4 || d.Merge.MissingShards[0].Points != shard2 {
		t.Errorf("missing shards %+v, want shard 2 of 4 with its %d points", d.Merge.MissingShards, shard2)
	}
	if len(d.Merge.PartialShards) != 1 || d.Merge.PartialShards[0].Index != 1 ||
		!slices.Equal(slices.Sorted(slices.Values(d.Merge.PartialShards[0].MissingPointIDs)), slices.Sorted(slices.Values(shard1Missing))) {
		t.Errorf("partial shards %+v, want shard 1 missing %v", d.Merge.PartialShards, shard1Missing)
	}
	if d.Merge.MissingPoints != d.Merge.MissingShards[0].Points+len(d.Merge.PartialShards[0].MissingPointIDs) {
		t.Errorf("missing points %d != shard 2's %d + shard 1's %d", d.Merge.MissingPoints, d.Merge.MissingShards[0].Points,
			len(d.Merge.PartialShards[0].MissingPointIDs))
	}
	report, _ := os.ReadFile(filepath.Join(shared, results.ReportFile))
	if !strings.Contains(string(report), "**Incomplete:**") || !strings.Contains(string(report), "shard 2 of 4 wrote no part") {
		t.Errorf("report.md does not say the merge is incomplete:\n%s", report)
	}
	if code, _, errs := runCLI(t, "merge", "--results", shared, "--require-complete"); code != 1 || !strings.Contains(errs, "incomplete merge") {
		t.Errorf("--require-complete: exit %d %q", code, errs)
	}

	// Running the missing shards completes the merge; shard 1 resumes.
	part1, err := results.ReadPart(filepath.Join(shared, "results", "part-00001-of-00004.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	if len(part1.Rows) != shard1Done || len(part1.Meta.MissingPointIDs) != len(shard1Missing) {
		t.Errorf("interrupted part: %d rows, missing %v", len(part1.Rows), part1.Meta.MissingPointIDs)
	}
	if out := runShardCLI(t, shared, "--shard", "1/4"); !strings.Contains(out, fmt.Sprintf("resumed %d:", len(part1.Rows))) {
		t.Errorf("shard 1 did not resume:\n%s", out)
	}
	runShardCLI(t, shared, "--shard", "2/4")
	if code, _, errs := runCLI(t, "merge", "--results", shared, "--require-complete"); code != 0 {
		t.Fatalf("complete merge: exit %d %s", code, errs)
	}
	got = readRows(t, shared)
	if !reflect.DeepEqual(withoutHostTime(got), withoutHostTime(want)) {
		t.Error("after running the missing shards, the merged rows differ from the single run")
	}
	if probes, wantProbes := checkProbes(t, shared, got), checkProbes(t, single, want); !reflect.DeepEqual(withoutProbeHostTime(probes),
		withoutProbeHostTime(wantProbes)) {
		t.Error("after running the missing shards, the merged probes differ from the single run's")
	}
	if d := readPareto(t, shared); d.Incomplete || !d.Merge.Complete {
		t.Errorf("the completed merge is still marked incomplete: %+v", d.Merge)
	}
}

func TestShardAndMergeErrors(t *testing.T) {
	tmp := t.TempDir()
	notPart := filepath.Join(tmp, "junk", "results", "part-00000-of-00001.parquet")
	os.MkdirAll(filepath.Dir(notPart), 0o755)
	os.WriteFile(notPart, []byte("not parquet"), 0o644)
	unsharded := filepath.Join(tmp, "unsharded")
	os.MkdirAll(unsharded, 0o755)
	os.WriteFile(filepath.Join(unsharded, results.JournalFile), nil, 0o644)
	os.MkdirAll(filepath.Join(tmp, "empty"), 0o755)
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		msg  string
	}{
		{"bad --shard", nil, []string{"sweep", "--dry-run", "--shard", "4/4"}, "--shard: the shard index must be < the shard count 4"},
		{"bad --shard-count", nil, []string{"sweep", "--dry-run", "--shard-count", "0", "--shard", "0/2"}, "--shard-count must be between 1 and 99999"},
		{"bad JOB_COMPLETION_INDEX", map[string]string{"JOB_COMPLETION_INDEX": "x", "SERVESWEEP_SHARD_COUNT": "2"},
			[]string{"sweep", "--dry-run"}, "JOB_COMPLETION_INDEX must be a whole number"},
		{"bad SLURM_ARRAY_TASK_COUNT", map[string]string{"SLURM_ARRAY_TASK_ID": "0", "SLURM_ARRAY_TASK_COUNT": "0"},
			[]string{"sweep", "--dry-run"}, "SLURM_ARRAY_TASK_COUNT must be a whole number between 1 and 99999"},
		{"merge without --results", nil, []string{"merge"}, "--results is required"},
		{"merge of a missing directory", nil, []string{"merge", "--results", filepath.Join(tmp, "nope")}, "nope does not exist"},
		{"merge of an unsharded sweep", nil, []string{"merge", "--results", unsharded}, "holds an unsharded sweep (points.jsonl), whose results need no merge: servesweep report --results"},
		{"merge without parts", nil, []string{"merge", "--results", tmp + "/empty"}, "holds no part-*.parquet file"},
		{"merge of a broken part", nil, []string{"merge", "--results", filepath.Join(tmp, "junk")}, notPart + ": not a readable Parquet file"},
		{"merge of a broken part: what to do", nil, []string{"merge", "--results", filepath.Join(tmp, "junk")}, "remove that part file and rerun the shard that wrote it"},
		{"merge over an unsharded sweep", nil, []string{"merge", "--results", filepath.Join(tmp, "junk"), "--output-dir", unsharded}, "holds an unsharded sweep"},
		{"merge positional", nil, []string{"merge", "x"}, "no positional arguments"},
		{"shard into an unsharded sweep", nil, []string{"sweep", "--shard", "0/2", "--output-dir", unsharded}, "holds an unsharded sweep (points.jsonl): a shard would not reuse"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			code, _, errs := runCLI(t, tc.args...)
			if code != 2 || !strings.Contains(errs, tc.msg) {
				t.Errorf("exit %d, stderr %q; want exit 2 and %q", code, errs, tc.msg)
			}
		})
	}
	// A dry run shows the shard and the spec hash, and lists the shard's first points.
	code, out, _ := runCLI(t, "sweep", "--dry-run", "--shard", "1/3", "--show", "4")
	if code != 0 || !strings.Contains(out, "shard 1/3 (from --shard 1/3): ") || !strings.Contains(out, "spec hash ") {
		t.Errorf("dry run with --shard: exit %d\n%s", code, out)
	}
	spec, err := loadSpec(&sweepOptions{})
	if err != nil {
		t.Fatal(err)
	}
	x, err := spec.Expand()
	if err != nil {
		t.Fatal(err)
	}
	own := x.ShardPoints(grid.Shard{Index: 1, Count: 3})
	if !strings.Contains(out, "first 4 points of shard 1/3:\n") {
		t.Errorf("dry run with --shard lacks the shard's points header:\n%s", out)
	}
	for _, p := range own[:4] {
		if !strings.Contains(out, fmt.Sprintf("  #%d %s ", p.Index, p.ID)) {
			t.Errorf("dry run with --shard 1/3 does not list the shard's point #%d %s:\n%s", p.Index, p.ID, out)
		}
	}
	for _, p := range x.Points[:10] {
		if grid.ShardOf(p.ID, 3) != 1 && strings.Contains(out, " "+p.ID+" ") {
			t.Errorf("dry run with --shard 1/3 lists point %s of another shard", p.ID)
		}
	}
}

// TestShardCountMismatchIsRefused checks that a shard whose count differs from the parts or
// journals already in the output directory is refused (exit 2) naming both counts, before it
// simulates anything.
func TestShardCountMismatchIsRefused(t *testing.T) {
	for _, existing := range []string{
		filepath.Join(results.PartsDir, "part-00001-of-00004.parquet"),
		filepath.Join(results.JournalsDir, "part-00003-of-00004.jsonl"),
	} {
		dir := filepath.Join(t.TempDir(), "out")
		os.MkdirAll(filepath.Join(dir, filepath.Dir(existing)), 0o755)
		os.WriteFile(filepath.Join(dir, existing), nil, 0o644)
		args := append([]string{"sweep", "--output-dir", dir, "-q", "--shard", "0/1"}, tinyDefault...)
		code, _, errs := runCLI(t, args...)
		if code != 2 || !strings.Contains(errs, "split into 4 ("+filepath.Join(dir, existing)+"), but this shard is 0/1, split into 1") {
			t.Errorf("%s then --shard 0/1: exit %d %q", existing, code, errs)
		}
		if _, err := os.Stat(filepath.Join(dir, results.PartsDir, results.PartName(0, 1))); err == nil {
			t.Errorf("%s: the refused shard wrote its part", existing)
		}
		// The same count is accepted (an empty journal is a valid one; an empty part is not).
		if filepath.Ext(existing) != ".jsonl" {
			continue
		}
		if code, _, errs := runCLI(t, append(args[:4:4], append([]string{"--shard", "0/4"}, tinyDefault...)...)...); code != 0 {
			t.Errorf("%s then --shard 0/4: exit %d %q", existing, code, errs)
		}
	}
}

// midPage returns the file offset of the middle of the first column chunk of column in the
// Parquet file at path: past the page header, inside the encoded values.
func midPage(t *testing.T, path, column string) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range pf.Metadata().RowGroups[0].Columns {
		if md := c.MetaData; strings.Join(md.PathInSchema, ".") == column {
			return int(md.DataPageOffset + md.TotalCompressedSize/2)
		}
	}
	t.Fatalf("%s has no column %s", path, column)
	return 0
}

// TestMergeRefusesACorruptPart flips one byte of a part in a column name of its footer (which
// no page checksum covers, so the column would otherwise read as null) and in its page data,
// and checks that merge refuses it with exit 2 naming the file.
func TestMergeRefusesACorruptPart(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	runShardCLI(t, dir, "--shard", "0/1")
	part := filepath.Join(dir, results.PartsDir, results.PartName(0, 1))
	data, err := os.ReadFile(part)
	if err != nil {
		t.Fatal(err)
	}
	// The footer (Thrift FileMetaData, its schema first) ends 8 bytes before the end of the
	// file, which give its length (little-endian) and the magic number.
	footer := len(data) - 8 - int(binary.LittleEndian.Uint32(data[len(data)-8:]))
	for name, off := range map[string]int{"footer column name": footer + bytes.Index(data[footer:], []byte("mean_ttft_ms")) + 2,
		"page data": midPage(t, part, "config_yaml")} {
		if off < 2 {
			t.Fatalf("%s: no offset", name)
		}
		bad := bytes.Clone(data)
		bad[off] ^= 0x10
		if err := os.WriteFile(part, bad, 0o644); err != nil {
			t.Fatal(err)
		}
		code, _, errs := runCLI(t, "merge", "--results", dir)
		if code != 2 || !strings.Contains(errs, part+": ") {
			t.Errorf("%s flipped at %d: exit %d %q; want exit 2 naming %s", name, off, code, errs, part)
		}
	}
	os.WriteFile(part, data, 0o644)
	if code, _, errs := runCLI(t, "merge", "--results", dir); code != 0 {
		t.Errorf("intact part: exit %d %q", code, errs)
	}
}

// A part under another shard's name (here shard 0's part copied as shard 2 of 2, out of range)
// is refused by merge, naming the file and the shard its metadata says wrote it.
func TestMergeRefusesARenamedPart(t *testing.T) {
	dir := t.TempDir()
	runShardCLI(t, dir, "--shard", "0/2", "--set", "engine.mode={choices: [aggregated]}")
	part := filepath.Join(dir, results.PartsDir, results.PartName(0, 2))
	data, err := os.ReadFile(part)
	if err != nil {
		t.Fatal(err)
	}
	renamed := filepath.Join(dir, results.PartsDir, results.PartName(2, 2))
	if err := os.WriteFile(renamed, data, 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs := runCLI(t, "merge", "--results", dir)
	if code != 2 || !strings.Contains(errs, renamed+": named shard 2 of 2, but it holds shard 0 of 2 (its metadata)") {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
}
