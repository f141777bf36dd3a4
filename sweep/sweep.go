package sweep

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/servesweep/servesweep/grid"
	"github.com/servesweep/servesweep/results"
	"github.com/servesweep/servesweep/sim"
	"github.com/servesweep/servesweep/sim/config"
	"github.com/servesweep/servesweep/sim/metrics"
	"github.com/servesweep/servesweep/sim/timing/opdb"
	"github.com/servesweep/servesweep/sim/traffic"
	"golang.org/x/sync/errgroup"
)

// SimulateFunc runs one point. sim.Run is the real one; tests inject others (for example one
// that panics on a chosen point).
type SimulateFunc func(ctx context.Context, cfg *config.Config, opt sim.Options) (*sim.Result, error)

// Options tune Run.
type Options struct {
	// OutputDir holds the journal (results.JournalFile); it is created if needed.
	OutputDir string
	// JournalPath replaces OutputDir/points.jsonl as the journal's path (its directory is
	// created if needed); a shard of a sweep has its own, so shards sharing an output
	// directory never write the same file.
	JournalPath string
	// Parallelism is the number of points simulated at once (<= 0: runtime.NumCPU()).
	Parallelism int
	// Timeout is the host-time limit per point (<= 0: none); a point past it is timed_out.
	Timeout time.Duration
	// TimeoutFrom names where Timeout came from, for a timed-out point's reason ("" means the
	// spec's optimizer.candidate_timeout_seconds; the command says "--timeout" when the flag
	// set it).
	TimeoutFrom string
	// Progress is told how the sweep advances (nil: silent).
	Progress Progress
	// Simulate runs one point (nil: sim.Run).
	Simulate SimulateFunc
	// Systems is the performance database every simulation of the sweep is given
	// (sim.Options.Systems; nil: none). It should be the grid spec's (grid.Spec.Systems), which
	// checked the points and hashed its identity.
	Systems *opdb.DB
	// Capacity, when set, runs each point as a capacity search (optimization.capacity_search):
	// its record is the simulation at the capacity load, with the search's probes.
	Capacity *grid.CapacitySearch
}

// Outcome is what a sweep run leaves.
type Outcome struct {
	// Rows holds one row per selected point that has a result (from this run or an earlier
	// one), in point order. Points in flight when the run was interrupted have none.
	Rows []results.Row
	// Resumed counts the points an earlier run had finished; Simulated the points this run
	// finished.
	Resumed, Simulated int
	// OK, Degraded, Infeasible, Failed and TimedOut count Rows by status.
	OK, Degraded, Infeasible, Failed, TimedOut int
	// Missing counts the selected points without a result.
	Missing int
	// Interrupted is set when ctx was canceled before every point finished.
	Interrupted bool
}

// Run simulates the points that the journal (opts.JournalPath, else points.jsonl in
// opts.OutputDir) does not already hold as finished (ok or failed; timed-out points are
// simulated again) on a pool of opts.Parallelism workers, appending each result to the journal as soon as it is known. Workloads are built once per
// distinct traffic section and trace files parsed once, then shared read-only by the workers.
//
// A point whose simulation returns an error or panics is recorded as failed with the reason; a
// point that exceeds opts.Timeout as timed_out; the others go on. When ctx is canceled
// (Ctrl-C), the points in flight are abandoned unrecorded, and Run returns the finished ones
// with Interrupted set and a nil error: rerunning with the same journal resumes.
//
// Errors: a workload that cannot be built (a *config.Error or *traffic.TraceError, exit 2), a
// journal that cannot be read or written, or a point's pass-log spill file that cannot be
// created, written or read back (*metrics.SpillError: the machine's fault, so the point is left
// unrecorded and a rerun simulates it).
func Run(ctx context.Context, points []grid.Point, opts Options) (*Outcome, error) {
	if opts.Parallelism <= 0 {
		opts.Parallelism = max(1, runtime.NumCPU())
	}
	if opts.Progress == nil {
		opts.Progress = silent{}
	}
	simulate := withSystems(opts.Simulate, opts.Systems)
	journalPath := opts.JournalPath
	if journalPath == "" {
		journalPath = filepath.Join(opts.OutputDir, results.JournalFile)
	}
	if err := os.MkdirAll(filepath.Dir(journalPath), 0o755); err != nil {
		return nil, err
	}
	journal, done, err := results.OpenJournal(journalPath)
	if err != nil {
		return nil, err
	}
	defer journal.Close()

	out := &Outcome{}
	todo, twins, keys, finished := classes(points, done, out)
	cache := NewWorkloadCache()
	building := false // interrupted while a workload was built: nothing is simulated
	for _, i := range todo {
		cfg := points[i].Config
		if _, err := sim.Interruptible(ctx, func() (*traffic.Workload, error) { return cache.Workload(cfg) }); err != nil {
			if ctx.Err() != nil {
				building = true
				todo = nil
				break
			}
			return nil, err
		}
	}

	opts.Progress.Start(len(points), out.Resumed)
	var mu sync.Mutex
	fresh := make(map[string]results.Record, len(todo))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(opts.Parallelism)
	for _, i := range todo {
		if gctx.Err() != nil {
			break
		}
		p := &points[i]
		g.Go(func() error {
			rec, ok, fatal := runPoint(gctx, p, cache, simulate, limit{opts.Timeout, opts.TimeoutFrom}, opts.Capacity)
			if fatal != nil {
				return fatal
			}
			if !ok {
				return nil
			}
			if err := journal.Append(rec); err != nil {
				return err
			}
			mu.Lock()
			fresh[p.ID] = rec
			mu.Unlock()
			opts.Progress.Done(rec.Status)
			return nil
		})
	}
	err = g.Wait()
	if err == nil {
		for _, i := range todo {
			if rec, ok := fresh[points[i].ID]; ok {
				finished[keys[i]] = rec
			}
		}
		err = copyTwins(journal, points, twins, keys, finished, fresh, opts.Progress)
	}
	opts.Progress.Finish()
	if err != nil {
		return nil, err
	}

	pending := out.addRows(points, fresh, done, opts.Capacity != nil)
	n := results.CountStatuses(out.Rows)
	out.OK, out.Degraded, out.Infeasible, out.Failed, out.TimedOut = n.OK, n.Degraded, n.Infeasible, n.Failed, n.TimedOut
	// Interrupted when a selected point has no final result, which a rerun would simulate: fresh
	// also holds the twins copied after the pool, so comparing its size with todo's would read a
	// run stopped near its end as whole; an earlier run's timed-out record that this run's retry
	// did not replace still counts as pending.
	out.Interrupted = ctx.Err() != nil && (pending > 0 || building)
	return out, nil
}

// classes sorts the points by class (grid.CanonicalKey, keys[i] for point i): points of one
// class simulate identically, so one of each class among those to do is simulated (todo), its
// representative (grid.Point.EquivalentTo empty) when that one is to do, else the first, and
// the others (twins) copy its record afterwards, or an earlier run's record of the class
// (finished, by class) when the journal (done) holds one; those count in out.Resumed.
func classes(points []grid.Point, done map[string]results.Record, out *Outcome) (todo, twins []int, keys []string, finished map[string]results.Record) {
	keys = make([]string, len(points))
	runner := map[string]int{}
	finished = map[string]results.Record{}
	for i := range points {
		if keys[i] = points[i].Class; keys[i] == "" {
			keys[i] = grid.CanonicalKey(points[i].Config)
		}
		if r, ok := done[points[i].ID]; ok && r.Finished() {
			out.Resumed++
			finished[keys[i]] = r
		}
	}
	isDone := func(i int) bool { r, ok := done[points[i].ID]; return ok && r.Finished() }
	rep := map[string]int{} // each class's representative, when it is to do
	for i := range points {
		if points[i].EquivalentTo == "" && !isDone(i) {
			if _, ok := rep[keys[i]]; !ok {
				rep[keys[i]] = i
			}
		}
	}
	for i := range points {
		if isDone(i) {
			continue
		}
		if _, ran := finished[keys[i]]; ran {
			twins = append(twins, i)
			continue
		}
		r, queued := runner[keys[i]]
		if !queued {
			r = i
			if j, ok := rep[keys[i]]; ok {
				r = j
			}
			runner[keys[i]] = r
			todo = append(todo, r)
		}
		if i != r {
			twins = append(twins, i)
		}
	}
	return todo, twins, keys, finished
}

// addRows appends to out.Rows, in point order, the row of each point with a record: this run's
// (fresh, counted in out.Simulated) or an earlier run's (done); a point with neither counts in
// out.Missing. It returns the points without a final result (none, or an earlier run's
// unfinished one). A row that ran a capacity search describes the deployment at the load, ramp
// and warm-up its metrics were measured under; under a capacity search (searched) a row without
// a search result has no load (results.PointInfo.LoadSearched).
func (out *Outcome) addRows(points []grid.Point, fresh, done map[string]results.Record, searched bool) (pending int) {
	for i := range points {
		p := &points[i]
		rec, ok := fresh[p.ID]
		if ok {
			out.Simulated++
		} else if rec, ok = done[p.ID]; !ok {
			out.Missing++
			pending++
			continue
		} else if !rec.Finished() {
			pending++ // a timed-out record whose retry this run did not finish
		}
		out.Rows = append(out.Rows, pointRow(p, rec, searched))
	}
	return pending
}

// pointRow is the results row of point p with record rec (searched: the sweep ran capacity
// searches). A row that ran a capacity search describes the deployment at the load, ramp and
// warm-up its metrics were measured under, so that its config reproduces them; a twin's row
// has no probes of its own.
func pointRow(p *grid.Point, rec results.Record, searched bool) results.Row {
	info := results.PointInfo{ID: p.ID, Index: p.Index, Config: p.Config, YAML: p.YAML, GPUs: p.GPUs,
		EquivalentTo: p.EquivalentTo, CostUSDPerHour: p.CostUSDPerHour,
		PrefillGPUHourUSD: p.PrefillGPUHourUSD, DecodeGPUHourUSD: p.DecodeGPUHourUSD, LoadSearched: searched}
	if c := rec.Capacity; c != nil && len(c.Probes) > 0 && !c.Stopped {
		var run grid.ProbeRun
		if pr := c.At(c.Load); pr != nil {
			run = grid.ProbeRun{RampSeconds: pr.RampSeconds, WarmupSeconds: pr.WarmupSeconds, PerLoadUnit: pr.PerLoadUnit, Cooldown: pr.Cooldown}
		}
		if cfg, data, err := p.AtProbeRun(c.Load, run); err == nil {
			info.Config, info.YAML = cfg, data
		}
	}
	if s := rec.Start; s != nil {
		run := grid.ProbeRun{RampSeconds: s.RampSeconds, WarmupSeconds: s.WarmupSeconds, PerLoadUnit: s.PerLoadUnit, Cooldown: s.Cooldown}
		if cfg, data, err := p.AtProbeRun(s.Load, run); err == nil {
			info.Config, info.YAML = cfg, data
		}
	}
	row := results.NewRow(info, rec)
	if p.EquivalentTo != "" {
		row.Probes = nil
	}
	return row
}

// copyTwins records each twin (a point whose class another point simulated) with the record of
// its class: the same status, reason and summary under its own point ID, and no host time of
// its own. Twins of a class with no record yet (an interrupted run) stay unrecorded.
func copyTwins(journal *results.Journal, points []grid.Point, twins []int, keys []string,
	finished map[string]results.Record, fresh map[string]results.Record, progress Progress) error {
	for _, i := range twins {
		rec, ok := finished[keys[i]]
		if !ok {
			continue
		}
		rec.PointID, rec.WallTimeMs = points[i].ID, 0
		if err := journal.Append(rec); err != nil {
			return err
		}
		fresh[rec.PointID] = rec
		progress.Done(rec.Status)
	}
	return nil
}

// withSystems returns simulate (nil: sim.Run) giving every simulation the performance database
// db, so that each point's run and each probe of its capacity search price passes alike.
func withSystems(simulate SimulateFunc, db *opdb.DB) SimulateFunc {
	if simulate == nil {
		simulate = sim.Run
	}
	return func(ctx context.Context, cfg *config.Config, opt sim.Options) (*sim.Result, error) {
		opt.Systems = db
		return simulate(ctx, cfg, opt)
	}
}

// limit is a per-point timeout (d <= 0: none) and the setting that gave it (Options.TimeoutFrom).
type limit struct {
	d    time.Duration
	from string
}

// runPoint simulates one point. ok is false when the sweep was canceled while the point ran
// (nothing is recorded then, so a resumed sweep runs it again). fatal is a failure of the
// machine rather than of the point (the pass log's spill file, metrics.SpillError): the sweep
// stops with it, the point unrecorded, so that a rerun once the machine is fixed simulates it.
func runPoint(ctx context.Context, p *grid.Point, cache *WorkloadCache, simulate SimulateFunc, timeout limit,
	cs *grid.CapacitySearch) (rec results.Record, ok bool, fatal error) {
	start := time.Now()
	pctx, cancel := ctx, context.CancelFunc(func() {})
	if timeout.d > 0 {
		pctx, cancel = context.WithTimeout(ctx, timeout.d)
	}
	defer cancel()
	var res *sim.Result
	var err error
	var searched results.Record
	var begun *results.RunStart // a point without a search: how its steady-state run started
	var backlog *sim.Backlog    // and, under an open loop, how its queue changed
	if cs != nil {
		searched, err = recovering(func() (results.Record, error) { return searchCapacity(pctx, p, cs, cache, simulate) })
	} else {
		res, err = recovering(func() (r *sim.Result, err error) {
			r, begun, backlog, err = steadyPoint(pctx, p, cache, simulate)
			return r, err
		})
	}
	rec = results.Record{PointID: p.ID, WallTimeMs: float64(time.Since(start).Microseconds()) / 1000}
	if spill := (*metrics.SpillError)(nil); errors.As(err, &spill) {
		return rec, false, fmt.Errorf("point %s: %w", p.ID, err)
	}
	switch {
	case err == nil && cs != nil:
		searched.WallTimeMs = rec.WallTimeMs
		rec = searched
	case err == nil && (res == nil || res.Summary == nil):
		rec.Status, rec.Reason = results.StatusFailed, "the simulation returned no report"
	case err == nil:
		rec.Status, rec.Summary, rec.TimingProvider, rec.Start = results.StatusOK, results.SummaryValues(res.Summary), res.TimingProvider, begun
		rec.Backlog = backlog
		res.Release() // the row holds what it needs; the next point reuses the request array
	case ctx.Err() != nil:
		return rec, false, nil
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(pctx.Err(), context.DeadlineExceeded):
		rec.Status = results.StatusTimedOut
		from := timeout.from
		if from == "" {
			from = "optimizer.candidate_timeout_seconds"
		}
		rec.Reason = fmt.Sprintf("exceeded the per-point timeout of %s (%s)", timeout.d, from)
		if cs != nil {
			rec.Reason += "; the timeout covers every probe of the capacity search"
		}
	default:
		rec.Status, rec.Reason = results.StatusFailed, oneLine(err.Error())
	}
	if err != nil {
		// A search that failed or timed out keeps the probes it ran: they say why.
		rec.Capacity = searched.Capacity
	}
	return rec, true, nil
}

// recovering runs f, turning a panic into an error that names the panic value and where it
// happened, so one bad point cannot bring the sweep down.
func recovering[T any](f func() (T, error)) (v T, err error) {
	defer func() {
		if r := recover(); r != nil {
			var zero T
			v, err = zero, fmt.Errorf("panic: %v%s", r, panicSite())
		}
	}()
	return f()
}

// simulatePoint runs the point once on its shared workload.
func simulatePoint(ctx context.Context, p *grid.Point, cache *WorkloadCache, simulate SimulateFunc) (*sim.Result, error) {
	wl, err := cache.Workload(p.Config)
	if err != nil {
		return nil, err
	}
	return simulate(ctx, p.Config, sim.Options{Workload: wl})
}

// panicSite returns " at file:line (function)" for the frame that panicked, or "".
func panicSite() string {
	pcs := make([]uintptr, 32)
	n := runtime.Callers(3, pcs)
	frames := runtime.CallersFrames(pcs[:n])
	for {
		f, more := frames.Next()
		if f.Function != "" && !strings.HasPrefix(f.Function, "runtime.") {
			return fmt.Sprintf(" at %s:%d (%s)", filepath.Base(f.File), f.Line, f.Function)
		}
		if !more {
			return ""
		}
	}
}

// oneLine joins a multi-line error message into one line.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
