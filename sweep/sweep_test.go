package sweep

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/servesweep/servesweep/grid"
	"github.com/servesweep/servesweep/results"
	"github.com/servesweep/servesweep/sim"
	"github.com/servesweep/servesweep/sim/config"
	"github.com/servesweep/servesweep/sim/metrics"
	"github.com/servesweep/servesweep/sim/optimization"
	"github.com/servesweep/servesweep/sim/traffic"
)

// testSpec is a 12-point sweep with a small workload: 4 replica counts × 3 concurrencies, each
// point simulated once as configured (ramp_seconds 0: the synchronized start, no steady-state
// pilot; steady_test.go measures that).
const testSpec = `traffic:
  source: {type: synthetic-session, new_input_tokens_per_turn: 128, output_tokens_per_turn: 8,
    session: {turns: 2, shared_prefix_ratio: 0.5, prefix_groups: 2}}
  load: {type: concurrency, concurrency: {choices: [2, 4, 8]}, ramp_seconds: 0}
  stop: {sessions: 24}
engine:
  mode: aggregated
  model: meta-llama/Meta-Llama-3.1-8B-Instruct
  hardware: h200_sxm
  context_length: 4096
  workers:
    aggregated:
      parallelism: {replicas: {range: {min: 1, max: 4, step: 1}}}
      kv_cache: {block_size: 16, capacity: {type: fixed, blocks: 512}}
      timing: {type: polynomial}
router: {policy: kv_router}
`

func points(t testing.TB, spec string, sets ...string) []grid.Point {
	t.Helper()
	s, err := grid.Parse([]byte(spec), "spec.yaml", sets, nil, results.CheckMetric)
	if err != nil {
		t.Fatal(err)
	}
	x, err := s.Expand()
	if err != nil {
		t.Fatal(err)
	}
	return x.Points
}

func withoutHostTime(rows []results.Row) []results.Row {
	out := make([]results.Row, len(rows))
	for i, r := range rows {
		out[i] = r.WithoutHostTime()
	}
	return out
}

func TestRunRecordsEveryPointInOrder(t *testing.T) {
	pts := points(t, testSpec)
	out, err := Run(context.Background(), pts, Options{OutputDir: t.TempDir(), Parallelism: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Rows) != 12 || out.OK != 12 || out.Simulated != 12 || out.Resumed != 0 || out.Interrupted || out.Missing != 0 {
		t.Fatalf("outcome = %+v", out)
	}
	for i, r := range out.Rows {
		if r.PointID != pts[i].ID || r.Status != results.StatusOK || r.CompletedRequests == nil || *r.CompletedRequests != 48 {
			t.Errorf("row %d: id %s status %s completed %v", i, r.PointID, r.Status, r.CompletedRequests)
		}
	}
	// Each point equals its solo run.
	solo, err := sim.Run(context.Background(), pts[5].Config, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := *out.Rows[5].P99TTFTMs, solo.Summary.TTFT.P99; got != want {
		t.Errorf("point 5 p99 TTFT in the sweep %v, solo %v", got, want)
	}
}

// TestOutputIdenticalForAnyWorkerCount: 1 and 4 workers give the same rows and the same Parquet
// content (host-time columns aside).
func TestOutputIdenticalForAnyWorkerCount(t *testing.T) {
	pts := points(t, testSpec)
	var rows [2][]results.Row
	for i, par := range []int{1, 4} {
		dir := t.TempDir()
		out, err := Run(context.Background(), pts, Options{OutputDir: dir, Parallelism: par})
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, results.ParquetFile)
		if err := results.WriteParquet(path, out.Rows); err != nil {
			t.Fatal(err)
		}
		back, err := results.ReadParquet(path)
		if err != nil {
			t.Fatal(err)
		}
		rows[i] = withoutHostTime(back)
	}
	if !reflect.DeepEqual(rows[0], rows[1]) {
		t.Fatal("1 and 4 workers gave different results")
	}
}

// TestPanickingPointIsRecordedAsFailed injects a simulator that panics on one point.
func TestPanickingPointIsRecordedAsFailed(t *testing.T) {
	pts := points(t, testSpec)
	bad := pts[4].ID
	simulate := func(ctx context.Context, cfg *config.Config, opt sim.Options) (*sim.Result, error) {
		if grid.PointID(cfg) == bad {
			var m map[string]int
			//lint:ignore SA5000 the test needs a real runtime panic
			m["boom"]++ // a nil-map write
		}
		if cfg.Traffic.Load.Concurrency == 8 && cfg.Engine.Workers.Aggregated.Parallelism.Replicas == 4 {
			return nil, errors.New("simulated failure")
		}
		return sim.Run(ctx, cfg, opt)
	}
	out, err := Run(context.Background(), pts, Options{OutputDir: t.TempDir(), Parallelism: 2, Simulate: simulate})
	if err != nil {
		t.Fatal(err)
	}
	if out.OK != 10 || out.Failed != 2 || len(out.Rows) != 12 {
		t.Fatalf("ok %d failed %d rows %d; want 10, 2, 12", out.OK, out.Failed, len(out.Rows))
	}
	r := out.Rows[4]
	if r.Status != results.StatusFailed || !strings.Contains(r.Reason, "panic: assignment to entry in nil map") ||
		!strings.Contains(r.Reason, "sweep_test.go") || r.P99TTFTMs != nil {
		t.Errorf("panicking point: status %s reason %q", r.Status, r.Reason)
	}
	if r := out.Rows[11]; r.Status != results.StatusFailed || r.Reason != "simulated failure" {
		t.Errorf("failing point: status %s reason %q", r.Status, r.Reason)
	}
}

func TestTimeoutMarksPointTimedOutAndResumeRetriesIt(t *testing.T) {
	pts := points(t, testSpec)
	slow := pts[0].ID
	simulate := func(ctx context.Context, cfg *config.Config, opt sim.Options) (*sim.Result, error) {
		if grid.PointID(cfg) == slow {
			<-ctx.Done() // a point that never finishes on its own
			return nil, ctx.Err()
		}
		return sim.Run(ctx, cfg, opt)
	}
	dir := t.TempDir()
	out, err := Run(context.Background(), pts, Options{OutputDir: dir, Parallelism: 2, Timeout: 50 * time.Millisecond, TimeoutFrom: "--timeout", Simulate: simulate})
	if err != nil {
		t.Fatal(err)
	}
	// The reason names the setting that gave the limit.
	if out.TimedOut != 1 || out.OK != 11 || out.Rows[0].Status != results.StatusTimedOut ||
		out.Rows[0].Reason != "exceeded the per-point timeout of 50ms (--timeout)" {
		t.Fatalf("timed out %d ok %d; row 0: %s %q", out.TimedOut, out.OK, out.Rows[0].Status, out.Rows[0].Reason)
	}
	var calls atomic.Int32
	count := func(ctx context.Context, cfg *config.Config, opt sim.Options) (*sim.Result, error) {
		calls.Add(1)
		return sim.Run(ctx, cfg, opt)
	}
	out, err = Run(context.Background(), pts, Options{OutputDir: dir, Parallelism: 2, Simulate: count})
	if err != nil {
		t.Fatal(err)
	}
	if calls.Load() != 1 || out.Resumed != 11 || out.Simulated != 1 || out.OK != 12 {
		t.Errorf("resume ran %d points (want only the timed-out one): %+v", calls.Load(), out)
	}
}

// TestResumeInterruptedDuringARetryIsInterrupted times a point out, then resumes and cancels
// while the retry runs: the journal's timed-out record is not a final result, so the outcome is
// interrupted (a rerun simulates the point again), not finished with the stale record.
func TestResumeInterruptedDuringARetryIsInterrupted(t *testing.T) {
	pts := points(t, testSpec)
	slow := pts[0].ID
	hang := func(ctx context.Context, cfg *config.Config, opt sim.Options) (*sim.Result, error) {
		if grid.PointID(cfg) == slow {
			<-ctx.Done()
			return nil, ctx.Err()
		}
		return sim.Run(ctx, cfg, opt)
	}
	dir := t.TempDir()
	if _, err := Run(context.Background(), pts, Options{OutputDir: dir, Parallelism: 2, Timeout: 50 * time.Millisecond, Simulate: hang}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancelling := func(c context.Context, cfg *config.Config, opt sim.Options) (*sim.Result, error) {
		cancel() // Ctrl-C while the timed-out point is retried
		<-c.Done()
		return nil, c.Err()
	}
	out, err := Run(ctx, pts, Options{OutputDir: dir, Parallelism: 2, Simulate: cancelling})
	if err != nil {
		t.Fatal(err)
	}
	if !out.Interrupted || out.Rows[0].Status != results.StatusTimedOut {
		t.Errorf("resume cancelled during the retry: interrupted %v, row 0 %s; want interrupted with the old timed-out row", out.Interrupted, out.Rows[0].Status)
	}
}

// A point whose pass-log spill file fails (the machine's fault, metrics.SpillError) stops the
// sweep with that error and is not recorded, so a rerun on a fixed machine simulates it, and
// only it and the points never reached.
func TestSpillFailureStopsTheSweepUnrecorded(t *testing.T) {
	pts := points(t, testSpec)
	bad := pts[3].ID
	simulate := func(ctx context.Context, cfg *config.Config, opt sim.Options) (*sim.Result, error) {
		if grid.PointID(cfg) == bad {
			return nil, fmt.Errorf("wrapped: %w", &metrics.SpillError{Msg: "pass log spill file /nowhere/x: creating: no such file or directory"})
		}
		return sim.Run(ctx, cfg, opt)
	}
	dir := t.TempDir()
	_, err := Run(context.Background(), pts, Options{OutputDir: dir, Parallelism: 1, Simulate: simulate})
	var spill *metrics.SpillError
	if !errors.As(err, &spill) || !strings.Contains(err.Error(), bad) {
		t.Fatalf("sweep error %v, want the spill failure naming point %s", err, bad)
	}
	var calls atomic.Int32
	count := func(ctx context.Context, cfg *config.Config, opt sim.Options) (*sim.Result, error) {
		calls.Add(1)
		return sim.Run(ctx, cfg, opt)
	}
	out, err := Run(context.Background(), pts, Options{OutputDir: dir, Parallelism: 2, Simulate: count})
	if err != nil {
		t.Fatal(err)
	}
	if out.OK != len(pts) || out.Failed != 0 || int(calls.Load()) != len(pts)-out.Resumed || out.Resumed >= len(pts) {
		t.Fatalf("rerun: ok %d failed %d resumed %d simulated %d of %d points", out.OK, out.Failed, out.Resumed, calls.Load(), len(pts))
	}
	if out.Rows[3].Status != results.StatusOK {
		t.Errorf("the point whose spill failed: %s %q after the rerun", out.Rows[3].Status, out.Rows[3].Reason)
	}
}

// TestResumeAfterInterrupt cancels a sweep after a few points, resumes it, and checks that only
// the missing points are simulated and the result equals an uninterrupted run.
func TestResumeAfterInterrupt(t *testing.T) {
	pts := points(t, testSpec)
	ref, err := Run(context.Background(), pts, Options{OutputDir: t.TempDir(), Parallelism: 2})
	if err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	var started atomic.Int32
	interrupting := func(c context.Context, cfg *config.Config, opt sim.Options) (*sim.Result, error) {
		if started.Add(1) == 5 {
			cancel() // Ctrl-C while the fifth point runs
			<-c.Done()
			return nil, c.Err()
		}
		return sim.Run(c, cfg, opt)
	}
	first, err := Run(ctx, pts, Options{OutputDir: dir, Parallelism: 2, Simulate: interrupting})
	if err != nil {
		t.Fatal(err)
	}
	if !first.Interrupted || first.Simulated == 0 || first.Simulated >= 12 || first.Missing != 12-first.Simulated {
		t.Fatalf("interrupted run: %+v", first)
	}
	journal, err := os.ReadFile(filepath.Join(dir, results.JournalFile))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(journal), "\n"); n != first.Simulated {
		t.Errorf("journal holds %d lines for %d finished points", n, first.Simulated)
	}

	var ran sync.Map
	var calls atomic.Int32
	count := func(c context.Context, cfg *config.Config, opt sim.Options) (*sim.Result, error) {
		calls.Add(1)
		ran.Store(grid.PointID(cfg), true)
		return sim.Run(c, cfg, opt)
	}
	second, err := Run(context.Background(), pts, Options{OutputDir: dir, Parallelism: 2, Simulate: count})
	if err != nil {
		t.Fatal(err)
	}
	if int(calls.Load()) != 12-first.Simulated || second.Resumed != first.Simulated || second.Interrupted {
		t.Fatalf("resume simulated %d points, want %d; outcome %+v", calls.Load(), 12-first.Simulated, second)
	}
	for _, r := range first.Rows {
		if _, again := ran.Load(r.PointID); again {
			t.Errorf("point %s was simulated again", r.PointID)
		}
	}
	// Same Parquet content as the uninterrupted run.
	a, b := filepath.Join(t.TempDir(), "a.parquet"), filepath.Join(t.TempDir(), "b.parquet")
	if err := results.WriteParquet(a, ref.Rows); err != nil {
		t.Fatal(err)
	}
	if err := results.WriteParquet(b, second.Rows); err != nil {
		t.Fatal(err)
	}
	ra, _ := results.ReadParquet(a)
	rb, _ := results.ReadParquet(b)
	if len(ra) != 12 || !reflect.DeepEqual(withoutHostTime(ra), withoutHostTime(rb)) {
		t.Fatal("the resumed sweep's Parquet content differs from the uninterrupted run's")
	}
}

// TestWorkloadSharedPerTrafficSection: points with equal traffic sections get the same workload
// object; a trace file is parsed once for all loads.
func TestWorkloadSharedPerTrafficSection(t *testing.T) {
	pts := points(t, testSpec)
	var mu sync.Mutex
	seen := map[int]map[*traffic.Workload]bool{}
	simulate := func(ctx context.Context, cfg *config.Config, opt sim.Options) (*sim.Result, error) {
		mu.Lock()
		c := cfg.Traffic.Load.Concurrency
		if seen[c] == nil {
			seen[c] = map[*traffic.Workload]bool{}
		}
		seen[c][opt.Workload] = true
		mu.Unlock()
		return sim.Run(ctx, cfg, opt)
	}
	if _, err := Run(context.Background(), pts, Options{OutputDir: t.TempDir(), Parallelism: 2, Simulate: simulate}); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 3 {
		t.Fatalf("saw %d concurrencies", len(seen))
	}
	for c, wls := range seen {
		if len(wls) != 1 || wls[nil] {
			t.Errorf("concurrency %d: %d workloads (want one shared, non-nil)", c, len(wls))
		}
	}
}

func TestTraceParsedOnce(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "trace.jsonl")
	lines := ""
	for i := 0; i < 30; i++ {
		lines += `{"timestamp": ` + strconv.Itoa(i*200) + `, "input_length": 64, "output_length": 4, "hash_ids": [0, ` + strconv.Itoa(i+1) + `]}` + "\n"
	}
	if err := os.WriteFile(trace, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	spec := strings.Replace(testSpec, `source: {type: synthetic-session, new_input_tokens_per_turn: 128, output_tokens_per_turn: 8,
    session: {turns: 2, shared_prefix_ratio: 0.5, prefix_groups: 2}}`, `source: {type: trace, paths: ["`+trace+`"], block_size: 32}`, 1)
	spec = strings.Replace(spec, "load: {type: concurrency, concurrency: {choices: [2, 4, 8]}, ramp_seconds: 0}", "load: {type: trace_timestamps, speedup: {choices: [1, 2, 4]}}", 1)
	spec = strings.Replace(spec, "stop: {sessions: 24}", "stop: {max_virtual_time_seconds: 100}", 1)
	pts := points(t, spec)
	cache := NewWorkloadCache()
	for _, p := range pts {
		wl, err := cache.Workload(p.Config)
		if err != nil {
			t.Fatal(err)
		}
		want, err := sim.BuildWorkload(p.Config)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(wl.Requests, want.Requests) || !reflect.DeepEqual(wl.Sessions, want.Sessions) {
			t.Fatalf("cached workload for speedup %v differs from BuildWorkload's", p.Config.Traffic.Load.Speedup)
		}
	}
	if cache.TraceParses() != 1 {
		t.Errorf("trace parsed %d times for 3 speedups", cache.TraceParses())
	}
	out, err := Run(context.Background(), pts, Options{OutputDir: t.TempDir()})
	if err != nil || out.OK != 12 {
		t.Fatalf("trace sweep: %v, %+v", err, out)
	}
	// A missing trace is a config error for the whole sweep (exit 2), not 12 failed points.
	os.Remove(trace)
	_, err = Run(context.Background(), pts, Options{OutputDir: t.TempDir()})
	var ce *config.Error
	if !errors.As(err, &ce) || ce.Path != "traffic.source.paths" {
		t.Errorf("a missing trace file: err = %v, want a config.Error on traffic.source.paths", err)
	}
}

func TestProgressLines(t *testing.T) {
	var b strings.Builder
	now := time.Unix(0, 0)
	p := &lineProgress{w: &b, every: time.Second, now: func() time.Time { return now }}
	p.Start(10, 2)
	for i := 0; i < 8; i++ {
		now = now.Add(400 * time.Millisecond)
		status := results.StatusOK
		if i == 3 {
			status = results.StatusFailed
		}
		p.Done(status)
	}
	p.Finish()
	out := b.String()
	if !strings.HasPrefix(out, "sweep: 10 points, 2 already finished, simulating 8\n") {
		t.Errorf("start line: %q", out)
	}
	if !strings.Contains(out, "sweep: 10/10 points (1 failed, 0 timed out), 2.5 points/s, ETA 0s\n") {
		t.Errorf("final line missing: %q", out)
	}
	if n := strings.Count(out, "\n"); n < 3 || n > 5 {
		t.Errorf("%d lines for 8 points at 0.4 s each with a 1 s interval: %q", n, out)
	}
	// A run that resumes a finished sweep reports that, not a rate of 0 and an unknown ETA.
	b.Reset()
	p = &lineProgress{w: &b, every: time.Second, now: func() time.Time { return now }}
	p.Start(10, 10)
	p.Finish()
	if want := "sweep: 10 points, 10 already finished, simulating 0\nsweep: 10/10 points (0 failed, 0 timed out), every one finished by an earlier run\n"; b.String() != want {
		t.Errorf("a finished sweep resumed: %q, want %q", b.String(), want)
	}
	if (NewProgress(nil, false, time.Second) != silent{}) {
		t.Error("a nil writer must give a silent progress")
	}
}

// BenchmarkSweep200 runs a 200-point sweep (8 replica counts × 25 concurrencies, 64 sessions of
// 2 turns each) on runtime.NumCPU() workers, journal included, and reports points/s.
func BenchmarkSweep200(b *testing.B) {
	pts := points(b, testSpec,
		"engine.workers.aggregated.parallelism.replicas={range: {min: 1, max: 8, step: 1}}",
		"traffic.load.concurrency={range: {min: 2, max: 50, step: 2}}",
		"traffic.stop.sessions=64")
	if len(pts) != 200 {
		b.Fatalf("%d points, want 200", len(pts))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		dir := b.TempDir()
		b.StartTimer()
		out, err := Run(context.Background(), pts, Options{OutputDir: dir, Parallelism: runtime.NumCPU()})
		if err != nil || out.OK != 200 {
			b.Fatalf("%v %+v", err, out)
		}
	}
	b.ReportMetric(float64(200*b.N)/b.Elapsed().Seconds(), "points/s")
}

// TestTraceRulesMatchBuildWorkload: a trace that BuildWorkload refuses (no timestamp under
// trace_timestamps) is refused by the sweep's shared workload cache with the same error.
func TestTraceRulesMatchBuildWorkload(t *testing.T) {
	trace := filepath.Join(t.TempDir(), "untimed.jsonl")
	if err := os.WriteFile(trace, []byte(`{"input_length": 64, "output_length": 4, "hash_ids": [0, 1]}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	spec := strings.Replace(testSpec, `source: {type: synthetic-session, new_input_tokens_per_turn: 128, output_tokens_per_turn: 8,
    session: {turns: 2, shared_prefix_ratio: 0.5, prefix_groups: 2}}`, `source: {type: trace, paths: ["`+trace+`"], block_size: 32}`, 1)
	spec = strings.Replace(spec, "load: {type: concurrency, concurrency: {choices: [2, 4, 8]}, ramp_seconds: 0}", "load: {type: trace_timestamps}", 1)
	spec = strings.Replace(spec, "stop: {sessions: 24}", "stop: {max_virtual_time_seconds: 100}", 1)
	pts := points(t, spec)
	_, want := sim.BuildWorkload(pts[0].Config)
	_, got := Run(context.Background(), pts, Options{OutputDir: t.TempDir()})
	var te *traffic.TraceError
	if want == nil || !errors.As(got, &te) || got.Error() != want.Error() {
		t.Errorf("sweep error %v, BuildWorkload error %v", got, want)
	}
}

// Twins: with the policy, attention-DP ranks and replicas as domains, the points with one worker
// of one rank differ only in a policy that cannot matter, and so do the knobs under round_robin.
// Each class is simulated once: every twin names its representative in EquivalentTo and carries
// its results, and simulating the twin's own config gives the same summary (the rule is sound).
func TestTwinsSimulatedOnce(t *testing.T) {
	pts := points(t, testSpec, "router.policy={choices: [round_robin, kv_router, random]}",
		"traffic.load.concurrency=4", "engine.workers.aggregated.parallelism.replicas={choices: [1, 2]}",
		"engine.workers.aggregated.parallelism.attention_data={choices: [1, 2]}")
	// 3 policies × 2 replicas × 2 ranks = 12 points; the 3 one-worker-one-rank points are one class.
	var calls atomic.Int32
	simulate := func(ctx context.Context, cfg *config.Config, o sim.Options) (*sim.Result, error) {
		calls.Add(1)
		return sim.Run(ctx, cfg, o)
	}
	out, err := Run(context.Background(), pts, Options{OutputDir: t.TempDir(), Parallelism: 2, Simulate: simulate})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Rows) != 12 || calls.Load() != 10 {
		t.Fatalf("%d rows, %d simulations; want 12 rows from 10 simulations", len(out.Rows), calls.Load())
	}
	byID := map[string]*results.Row{}
	twins := 0
	for i := range out.Rows {
		byID[out.Rows[i].PointID] = &out.Rows[i]
	}
	for i := range out.Rows {
		r := &out.Rows[i]
		if r.EquivalentTo == "" {
			continue
		}
		twins++
		rep := byID[r.EquivalentTo]
		if rep == nil || rep.EquivalentTo != "" || *rep.AggReplicas != 1 || *rep.AggAttentionData != 1 {
			t.Fatalf("twin %s names %s, not a one-worker representative", r.PointID, r.EquivalentTo)
		}
		res, err := sim.Run(context.Background(), pts[r.PointIndex].Config, sim.Options{})
		if err != nil {
			t.Fatal(err)
		}
		own := results.SummaryValues(res.Summary)
		for _, k := range []string{"mean_ttft_ms", "p99_itl_ms", "output_throughput_tok_s", "completed_requests"} {
			if got := own[k]; *numeric(t, rep, k) != got {
				t.Errorf("twin %s (%s): its own %s %v, representative's %v", r.PointID, r.RouterPolicy, k, got, *numeric(t, rep, k))
			}
		}
	}
	if twins != 2 {
		t.Errorf("%d twins, want 2", twins)
	}
	a, err := results.Analyze(out.Rows, optimization.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range append(slices.Clone(a.Front), a.Candidates...) {
		if out.Rows[i].EquivalentTo != "" {
			t.Errorf("twin %s is a candidate", out.Rows[i].PointID)
		}
	}
	if a.Excluded[results.ExcludedEquivalent] != 2 {
		t.Errorf("excluded %v, want 2 equivalent", a.Excluded)
	}
}

// TestInterruptAtTheLastSimulationIsInterrupted cancels a sweep with twins while its last
// simulation runs: that point has no result, so the outcome is interrupted with one point
// missing, although the twins copied afterwards outnumber it.
func TestInterruptAtTheLastSimulationIsInterrupted(t *testing.T) {
	pts := points(t, testSpec, "router.policy={choices: [round_robin, kv_router, random]}",
		"traffic.load.concurrency=4", "engine.workers.aggregated.parallelism.replicas={choices: [1, 2]}",
		"engine.workers.aggregated.parallelism.attention_data={choices: [1, 2]}")
	ctx, cancel := context.WithCancel(context.Background())
	var calls atomic.Int32
	simulate := func(c context.Context, cfg *config.Config, o sim.Options) (*sim.Result, error) {
		if calls.Add(1) == 10 { // the last of the 10 simulations the 12 points need
			cancel()
			<-c.Done()
			return nil, c.Err()
		}
		return sim.Run(c, cfg, o)
	}
	out, err := Run(ctx, pts, Options{OutputDir: t.TempDir(), Parallelism: 1, Simulate: simulate})
	if err != nil {
		t.Fatal(err)
	}
	if !out.Interrupted || out.Missing < 1 || len(out.Rows)+out.Missing != 12 {
		t.Fatalf("outcome %+v: want interrupted with the unfinished point missing", out)
	}
}

// numeric returns the float value of the summary column key of r.
func numeric(t *testing.T, r *results.Row, key string) *float64 {
	t.Helper()
	v := reflect.ValueOf(r).Elem()
	for i := 0; i < v.NumField(); i++ {
		if v.Type().Field(i).Tag.Get("summary") == key {
			switch x := v.Field(i).Interface().(type) {
			case *float64:
				return x
			case *int64:
				f := float64(*x)
				return &f
			}
		}
	}
	t.Fatalf("no column for %s", key)
	return nil
}

// plannerSpec is TestPlannerLoadStepScalesUp's run (sim/planner_test.go) as a sweep of the
// planner on and off, priced at 3.5 USD per GPU-hour: 2 req/s until 3 s, then 20 req/s, 56
// one-token requests on one worker that serves 10 req/s (fixed 90 + 10 ms). Enabled, the planner
// adds a worker at 5,000 ms that no request reaches; the run ends at 8,000 ms with 11
// worker-seconds provisioned (1.375 GPUs on average).
const plannerSpec = `traffic:
  source: {type: synthetic, input_tokens: 16, output_tokens: 1}
  load:
    type: constant_rate
    profile: [{until_seconds: 3, requests_per_second: 2}, {until_seconds: 100, requests_per_second: 20}]
  stop: {requests: 56}
engine:
  mode: aggregated
  model: meta-llama/Meta-Llama-3.1-8B-Instruct
  hardware: h200_sxm
  context_length: 100000
  workers:
    aggregated:
      parallelism: {replicas: 1, tensor: 1}
      scheduler: {max_batched_tokens: 8192, max_sequences: 1, capacity_policy: guaranteed_no_evict}
      kv_cache: {block_size: 16, capacity: {type: fixed, blocks: 1000}}
      startup_seconds: 0.5
      timing: {type: fixed, prefill_ms: 90, decode_ms: 10}
evaluation:
  sla: {ttft_ms: 300}
planner:
  policy: {choices: [disabled, enabled]}
  target: load
  enable_load_scaling: true
  load_adjustment_interval_seconds: 1
  load_min_observations: 5
  max_num_gpus: 4
optimization:
  target: pareto
  objectives:
    - {metric: usd_per_million_output_tokens, direction: minimize}
    - {metric: p99_ttft_ms, direction: minimize}
  cost: {gpu_hour_usd: {h200_sxm: 3.5}}
`

// TestAutoscaledPointIsPricedFromItsGPUHours: the autoscaled point costs its provisioned
// GPU-hours, 1.375 GPUs × 3.5 = 4.8125 USD per hour, and 4.8125 / (7 tok/s × 3600) × 1e6 =
// 190.97 USD per million output tokens (56 tokens in 8 s); the fixed point costs 3.5 and 138.89.
// Their latencies are equal, so the fixed point alone is on the front (both are overloaded, a rate
// profile being judged as any open loop: admitted here by max_rejected_ratio 1).
func TestAutoscaledPointIsPricedFromItsGPUHours(t *testing.T) {
	s, err := grid.Parse([]byte(plannerSpec), "spec.yaml", nil, nil, results.CheckMetric)
	if err != nil {
		t.Fatal(err)
	}
	x, err := s.Expand()
	if err != nil {
		t.Fatal(err)
	}
	out, err := Run(context.Background(), x.Points, Options{OutputDir: t.TempDir(), Parallelism: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Rows) != 2 {
		t.Fatalf("%d rows, want 2", len(out.Rows))
	}
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Abs(b) }
	for _, c := range []struct {
		policy              string
		avgGPUs, usdH, usdM float64
	}{
		{"disabled", 1, 3.5, 3.5 / (7 * 3600) * 1e6},
		{"enabled", 1.375, 4.8125, 4.8125 / (7 * 3600) * 1e6},
	} {
		var r *results.Row
		for i := range out.Rows {
			if strings.Contains(out.Rows[i].ConfigYAML, "policy: "+c.policy) {
				r = &out.Rows[i]
			}
		}
		// The toy's 20 requests/s outpace its worker's 10 (a second starts too late to help): both
		// points are overloaded, their costs priced all the same.
		if r == nil || r.Status != results.StatusDegraded || !strings.HasPrefix(r.Reason, results.OverloadedReason+": ") ||
			r.AvgGPUs == nil || r.CostUSDPerHour == nil || r.USDPerMillionOutputTokens == nil {
			t.Fatalf("planner %s: row %+v", c.policy, r)
		}
		if !near(*r.AvgGPUs, c.avgGPUs) || !near(*r.CostUSDPerHour, c.usdH) || !near(*r.USDPerMillionOutputTokens, c.usdM) {
			t.Errorf("planner %s: avg_gpus %v, cost_usd_per_hour %v, usd_per_million_output_tokens %v; want %v, %v, %v",
				c.policy, *r.AvgGPUs, *r.CostUSDPerHour, *r.USDPerMillionOutputTokens, c.avgGPUs, c.usdH, c.usdM)
		}
	}
	settings := s.Optimization.Settings()
	settings.MaxRejectedRatio = 1 // admit the overloaded points to compare their prices
	a, err := results.Analyze(out.Rows, settings)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Front) != 1 || !strings.Contains(out.Rows[a.Front[0]].ConfigYAML, "policy: disabled") {
		t.Errorf("front %d points; want the fixed point alone", len(a.Front))
	}
}

// classes runs each class's representative when it is to do, wherever it stands in point order,
// and the first of the class when it is not (an earlier run finished it).
func TestClassesRunTheRepresentative(t *testing.T) {
	points := []grid.Point{{ID: "a", Class: "k", EquivalentTo: "b"}, {ID: "b", Class: "k"}, {ID: "c", Class: "m"}}
	todo, twins, _, _ := classes(points, map[string]results.Record{}, &Outcome{})
	if !slices.Equal(todo, []int{1, 2}) || !slices.Equal(twins, []int{0}) {
		t.Errorf("todo %v twins %v; want [1 2] and [0]", todo, twins)
	}
	done := map[string]results.Record{"b": {PointID: "b", Status: results.StatusOK}}
	todo, twins, _, finished := classes(points, done, &Outcome{})
	if !slices.Equal(todo, []int{2}) || !slices.Equal(twins, []int{0}) || finished["k"].PointID != "b" {
		t.Errorf("b done: todo %v twins %v finished %v; want [2], [0] copying b", todo, twins, finished)
	}
}
