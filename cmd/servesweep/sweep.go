package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/servesweep/servesweep/examples"
	"github.com/servesweep/servesweep/grid"
	"github.com/servesweep/servesweep/results"
	"github.com/servesweep/servesweep/sim/config"
	"github.com/servesweep/servesweep/sim/optimization"
	"github.com/servesweep/servesweep/sim/timing/opdb"
	"github.com/servesweep/servesweep/sweep"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"
)

// sweepOptions are the flags of `servesweep sweep`.
type sweepOptions struct {
	// SystemsDir is --systems-dir ("" = $SERVESWEEP_SYSTEMS_DIR); SystemsDirSet says the flag
	// was given.
	SystemsDir     string
	SystemsDirSet  bool
	ConfigPath     string
	Sets           []string
	OutputDir      string
	Overwrite      bool
	Parallelism    int
	TimeoutSeconds float64
	DryRun         bool
	Show           int
	Quiet          bool
	// Format is the stdout format, table or json.
	Format string
	// Shard is --shard I/N ("" when not given); ShardCount is --shard-count (0 when not given),
	// shardCountSet whether the flag was given.
	Shard         string
	ShardCount    int
	shardCountSet bool
	// showSet says --show was given (it applies to --dry-run only).
	showSet bool
	// Simulate replaces the simulator (tests only; nil: sim.Run).
	Simulate sweep.SimulateFunc
	// AllowEmptyMode is --allow-empty-mode: sweep the modes that have valid points when one that
	// engine.mode's domain asks for has none (grid.Expansion.CheckModes), instead of exit 2.
	AllowEmptyMode bool
	// PrintSpec is --print-spec: print the built-in spec and exit; otherFlags are the other flags
	// of the command line that --print-spec refuses (set by RunE).
	PrintSpec  bool
	otherFlags []string
	// configSet says -c was given (an empty -c is refused, not read as "no -c").
	configSet bool
	// Export lists the --export targets as given (comma-separated lists); each recommendation's
	// export goes to recommendations/NNNN/.
	Export []string
	// SeedCheck is --seed-check: simulate the answer and its contenders again under other seeds
	// once a whole sweep finishes (results.SeedCheck); seedCheckSet says the flag was given.
	SeedCheck    bool
	seedCheckSet bool
}

func newSweepCmd(io ioStreams, runF func(context.Context, *sweepOptions) error) *cobra.Command {
	opts := &sweepOptions{}
	cmd := &cobra.Command{
		Use:   "sweep [-c SWEEP.yaml] [--set PATH=YAML]... [--output-dir DIR]",
		Short: "Simulate a grid of serving configurations and report the Pareto front",
		Long: `Simulate every point of a sweep spec and report which configurations to run.

A sweep spec is a prediction YAML whose fields may hold search domains, {choices: [...]} or
{range: {min, max, step, scale}}, plus optional optimization (target, objectives, constraints,
strict_sla, capacity_search, cost) and optimizer (algorithm grid|random, max_trials, parallelism,
candidate_timeout_seconds, seed) sections. Without -c the built-in spec
(examples/default-sweep.yaml in the repository; --print-spec prints it, to start your own from)
runs. ${NAME} in a string value is read from the environment.

Writes <output-dir>/points.jsonl (the journal), results.parquet, sweep.json, pareto.json,
report.md, report.html, pareto.png, recommendations/NNNN.yaml, with a capacity search
probes.parquet (one row per probe) and, when points of the front tie, pareto_ties.parquet.
With optimization.capacity_search each
deployment runs at the largest load within evaluation.sla below the least load that misses it
(its row is measured there, in steady state). Unless the spec sets traffic.load.ramp_seconds, a
concurrency probe ramps its first wave in over the slot cycle a pilot run measures (a request's
lifetime, or a whole session's) and leaves the first two cycles out as a warm-up; a ramped
probe also leaves out the drain after its last session start (traffic.load.cooldown, unless
the spec sets it). An open-loop probe leaves out two lifetimes (of a request, or a session) of
its own run, and, for multi-turn sessions, the later turns after its last session start. A run
too short for that (or for a warm-up the spec sets), for three measured cycles or for the
attainment target to allow two misses is
lengthened; when the search chose its ramp, one that meets the SLA is rerun twice
as long, measured after the first run's window (twice at most, while its headroom keeps
rising), and one within 10 % of the SLA's bound is rerun twice as long. Every probe of the
search is a row of probes.parquet. Without a capacity search each point is measured in steady
state the same way at its own load (pilot and ramp, warm-up, cool-down, a short run lengthened;
about twice the simulations), its row's config carrying the ramp and warm-up; ramp_seconds: 0
keeps the synchronized start, and an open loop whose queue grows through its window is degraded
as overloaded. Rerunning the same command with the same
--output-dir resumes: finished points are skipped. Ctrl-C keeps every finished point.

Once every point is finished, the seed check simulates the answer (the Pareto front with its
ties, or a scalar target's best point) and the candidates that could displace it (those its
capacity searches left able to, and those within 5 % of it; at most 32 points) again with every
seed they draw from moved by one (the source's length, mixture and think-time draws, a
poisson load's arrivals, speculative acceptance, kv_router's and the random policy's draws),
compares the answer among those points before and after, and the summary, the report and
sweep.json say how far their values moved and whether the answer held: an answer that changes
is decided by the random draws, not by the deployments.

Sharded (--shard I/N, or from JOB_COMPLETION_INDEX or SLURM_ARRAY_TASK_ID in the environment,
with --shard-count, SERVESWEEP_SHARD_COUNT or SLURM_ARRAY_TASK_COUNT): simulates only shard I's
points (by a hash of each point ID) and writes <output-dir>/results/part-IIIII-of-NNNNN.parquet
with its own journal in <output-dir>/journals/, so every shard can share the output directory;
then servesweep merge --results <output-dir> writes the report.

--format json prints one JSON object on stdout instead of the summary: {"counts", "settings",
"pareto" (the document written as pareto.json), "files"}; a shard's has "shard" and no "pareto";
with --dry-run {"grid_points", "valid_points", "selected_points", "filtered", "domains",
"points"}. Progress and warnings go to stderr; on an error nothing is printed on stdout.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return &usageError{fmt.Errorf("sweep takes no positional arguments, got %q%s", args, positionalHint(cmd, args, "config", ".yaml", ".yml", ".json"))}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.SystemsDirSet = cmd.Flags().Changed("systems-dir")
			opts.shardCountSet = cmd.Flags().Changed("shard-count")
			opts.showSet = cmd.Flags().Changed("show")
			opts.configSet = cmd.Flags().Changed("config")
			opts.seedCheckSet = cmd.Flags().Changed("seed-check")
			cmd.Flags().Visit(func(f *pflag.Flag) {
				if f.Name != "print-spec" && f.Name != "config" && f.Name != "set" && cmd.InheritedFlags().Lookup(f.Name) == nil {
					opts.otherFlags = append(opts.otherFlags, "--"+f.Name)
				}
			})
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return config.AttributeSets(runSweep(cmd.Context(), io, opts), opts.Sets)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&opts.ConfigPath, "config", "c", "", "sweep spec YAML (default: the built-in examples/default-sweep.yaml)")
	f.StringArrayVar(&opts.Sets, "set", nil, "override PATH=YAML after loading (repeatable; may set domains)")
	f.StringVar(&opts.OutputDir, "output-dir", "./servesweep-sweep", "directory for the journal, results.parquet and the report")
	f.BoolVar(&opts.Overwrite, "overwrite", false, "start over: delete the sweep files in --output-dir (journal included) first")
	intFlag(f, &opts.Parallelism, "parallelism", 0, "points simulated at once, >= 1; 0 means the default: optimizer.parallelism, else the number of CPUs")
	floatFlag(f, &opts.TimeoutSeconds, "timeout", 0, "host seconds per point before it is timed_out, > 0; 0 means the default: "+
		"optimizer.candidate_timeout_seconds, else 600")
	f.BoolVar(&opts.DryRun, "dry-run", false, "print the point count and the first points without simulating")
	f.BoolVar(&opts.PrintSpec, "print-spec", false, "print the built-in spec (examples/default-sweep.yaml) on stdout and exit, e.g. "+
		"> my-sweep.yaml to edit and run with -c")
	intFlag(f, &opts.Show, "show", 10, "with --dry-run, how many points to list, >= 0")
	f.BoolVarP(&opts.Quiet, "quiet", "q", false, "no progress output on stderr")
	f.BoolVar(&opts.SeedCheck, "seed-check", true, "once the sweep finishes, simulate its answer (the front with its ties, or the best point) "+
		"and the candidates that could displace it (at most 32 points: a few percent of a large sweep's simulations, most of a small "+
		"one's) again with every seed they draw from moved, and say whether the answer held (again on every rerun of a finished sweep); a "+
		"sharded sweep runs none; --seed-check=false skips it")
	f.BoolVar(&opts.AllowEmptyMode, "allow-empty-mode", false, "when a mode of engine.mode's domain has no valid point, "+
		"warn and sweep the other modes (default: exit 2 naming the mode and why its points were filtered); an error every invalid "+
		"point of the mode shares is the spec's and stays exit 2")
	f.StringVar(&opts.Shard, "shard", "", "run only shard I of N (0-based), e.g. 2/4, and write results/part-IIIII-of-NNNNN.parquet "+
		"(default: from JOB_COMPLETION_INDEX or SLURM_ARRAY_TASK_ID when set)")
	intFlag(f, &opts.ShardCount, "shard-count", 0, "the shard count N when the index comes from JOB_COMPLETION_INDEX or "+
		"SLURM_ARRAY_TASK_ID (default: SERVESWEEP_SHARD_COUNT, else SLURM_ARRAY_TASK_COUNT)")
	addFormatFlag(cmd, &opts.Format, "the counts and the Pareto front (with --dry-run: the grid and the first points)")
	addExportFlag(cmd, &opts.Export)
	addSystemsDirFlag(cmd, &opts.SystemsDir)
	mustFilename(cmd, "config", "yaml", "yml")
	mustDirname(cmd, "output-dir")
	for _, name := range []string{"set", "parallelism", "timeout", "show", "shard", "shard-count"} {
		mustComplete(cmd, name, noFiles)
	}
	return cmd
}

// maxTimeoutSeconds bounds --timeout so that it fits a time.Duration (about 292 years); a year
// is more than any point needs.
const maxTimeoutSeconds = 365 * 24 * 3600

// examplePrices reports whether spec's prices are the built-in sweep's example prices: no -c (or
// a -c file whose bytes are the built-in spec's, such as the repository's
// examples/default-sweep.yaml), and optimization.cost.gpu_hour_usd as that spec gives it (a --set
// that changes a price makes them the user's).
func examplePrices(opts *sweepOptions, spec *grid.Spec) bool {
	if opts.ConfigPath != "" {
		data, err := config.ReadFile(opts.ConfigPath)
		if err != nil || !bytes.Equal(data, examples.DefaultSweep()) {
			return false
		}
	}
	builtIn, err := grid.Parse(examples.DefaultSweep(), examples.DefaultSweepName, nil, os.LookupEnv, results.CheckMetric)
	if err != nil {
		return false
	}
	ours, theirs := spec.Optimization.Prices(), builtIn.Optimization.Prices()
	return len(ours) > 0 && maps.Equal(ours, theirs)
}

// loadSpec reads the spec at opts.ConfigPath, or the built-in one.
func loadSpec(opts *sweepOptions) (*grid.Spec, error) {
	if opts.ConfigPath == "" {
		return grid.Parse(examples.DefaultSweep(), examples.DefaultSweepName, opts.Sets, os.LookupEnv, results.CheckMetric)
	}
	spec, err := grid.Load(opts.ConfigPath, opts.Sets, os.LookupEnv, results.CheckMetric)
	var ces config.Errors
	if err != nil && errors.As(err, &ces) && len(ces) == 1 && errors.Is(ces[0].Err, fs.ErrNotExist) &&
		strings.HasPrefix(filepath.ToSlash(filepath.Clean(opts.ConfigPath)), "examples/") {
		// The help's and docs' examples name the repository's files; an installed binary's
		// user has the built-in one to start from.
		ces[0].Msg += "; examples/ is a folder of the servesweep repository (run from a checkout), and " +
			"servesweep sweep --print-spec prints the built-in spec, examples/default-sweep.yaml"
		return nil, ces
	}
	return spec, err
}

func runSweep(ctx context.Context, io ioStreams, opts *sweepOptions) error {
	if opts.PrintSpec {
		return printBuiltInSpec(io, opts)
	}
	systems, err := openSystems(opts.SystemsDir, opts.SystemsDirSet, os.Getenv)
	if err != nil {
		return err
	}
	if err := checkSweepFlags(opts); err != nil {
		return err
	}
	exportTargets, err := parseExportTargets(opts.Export)
	if err != nil {
		return err
	}
	if opts.Format != formatJSON { // a JSON document keeps its lines whole
		out := newWrapWriter(io.Out)
		defer out.Flush()
		io.Out = out
	}
	shard, err := sweepShard(opts)
	if err != nil {
		return err
	}
	x, err := expandSweep(ctx, io, opts, systems, exportTargets)
	if err != nil {
		return err
	}
	if afterExpand != nil {
		afterExpand()
	}
	if opts.DryRun {
		return dryRun(io, opts, x, shard)
	}
	freshJournal := false // this run creates the journal (none before it, or --overwrite removed it)
	if shard == nil {
		if freshJournal, err = prepareWholeSweep(ctx, opts, x); err != nil {
			return err
		}
	}
	runOpts := sweepRunOptions(io, opts, x.Spec, systems)
	if shard != nil {
		return runShard(ctx, io, opts, x, shard, runOpts)
	}
	release := holdSweepMemory(len(x.Points))
	defer release()
	if err := materializePoints(ctx, io, opts, x, freshJournal); err != nil {
		return err
	}
	start := time.Now()
	out, err := sweep.Run(ctx, x.Points, runOpts)
	if err != nil {
		var locked *results.JournalLockedError
		if freshJournal && !errors.As(err, &locked) {
			sweep.DiscardEmptyJournal(opts.OutputDir)
		}
		return lockedErr(err, "--output-dir "+opts.OutputDir)
	}
	return finishSweep(ctx, io, opts, x, out, time.Since(start), exportTargets, runOpts)
}

// reportFlags returns the servesweep report flags that turn analysis settings have into want
// (target, objectives, GPU bounds, strict SLA, max rejected ratio, min goodput, the cost bounds),
// and false when they are the same.
func reportFlags(have, want optimization.Settings) ([]string, bool) {
	var flags []string
	if have.Target != want.Target {
		flags = append(flags, "--target "+want.Target)
	}
	if !slices.Equal(have.Objectives, want.Objectives) {
		for _, o := range want.Objectives {
			flags = append(flags, "--objective "+o.String())
		}
	}
	if have.MinGPUs != want.MinGPUs {
		flags = append(flags, fmt.Sprintf("--min-gpus %d", want.MinGPUs))
	}
	if have.MaxGPUs != want.MaxGPUs {
		flags = append(flags, fmt.Sprintf("--max-gpus %d", want.MaxGPUs))
	}
	if have.StrictSLA != want.StrictSLA {
		flags = append(flags, fmt.Sprintf("--strict-sla=%t", want.StrictSLA))
	}
	for _, b := range []struct {
		flag      string
		have, val float64
	}{{"--max-rejected-ratio", have.MaxRejectedRatio, want.MaxRejectedRatio},
		{"--min-goodput-rps", have.MinGoodputRPS, want.MinGoodputRPS},
		{"--max-cost-usd-per-hour", have.MaxCostUSDPerHour, want.MaxCostUSDPerHour},
		{"--max-usd-per-million-output-tokens", have.MaxUSDPerMillionOutputTokens, want.MaxUSDPerMillionOutputTokens}} {
		if b.have != b.val {
			flags = append(flags, b.flag+" "+strconv.FormatFloat(b.val, 'g', -1, 64))
		}
	}
	return flags, len(flags) > 0
}

// afterExpand, when set (by tests only), runs once a sweep's grid is expanded, before its
// directory is prepared and its points' configs are written: an interrupt there is the one the
// configs' preparation must stop at.
var afterExpand func()

// materializePoints writes and decodes the configs of the sweep's points before they run. From
// largeGrid points it says on stderr how much memory they will take (bytesPerPoint, and
// liveBytesPerPoint under holdSweepMemory's limit), and warns when even the latter is more than
// the machine has available (sharding splits it: each shard holds its own points only). An interrupt stops it at once (exit 130): nothing was simulated, and a journal
// this run created is removed.
func materializePoints(ctx context.Context, io ioStreams, opts *sweepOptions, x *grid.Expansion, freshJournal bool) error {
	if n := len(x.Points); n >= largeGrid {
		need, live := float64(n)*bytesPerPoint/(1<<30), float64(n)*liveBytesPerPoint/(1<<30)
		fmt.Fprintf(io.Err, "servesweep: preparing the configs of %d points: about %.1f GiB of memory while the sweep runs "+
			"(%.1f GiB when memory is short: the collector then runs more often)\n", n, need, live)
		if avail, ok := availableMemoryGiB(); ok && live > avail {
			fmt.Fprintf(io.Err, "warning: %d points need at least about %.1f GiB, more than the %.1f GiB this machine has available: "+
				"run the sweep in shards (--shard I/N, one after the other or on several machines; each holds its own points), "+
				"then servesweep merge --results %s\n", n, live, avail, opts.OutputDir)
		}
	}
	err := x.MaterializeContext(ctx, x.Points)
	if err != nil && ctx.Err() != nil {
		if freshJournal {
			sweep.DiscardEmptyJournal(opts.OutputDir)
		}
		return &interruptedError{"interrupted while preparing the points' configs: nothing was simulated"}
	}
	return err
}

// checkSweepFlags refuses (exit 2) a bad --format, --show, --parallelism or --timeout, and
// --show or --export where they would be ignored (without --dry-run, with it).
func checkSweepFlags(opts *sweepOptions) error {
	if err := checkFormat(opts.Format); err != nil {
		return err
	}
	if opts.Show < 0 {
		return &usageError{fmt.Errorf("--show must be a whole number >= 0 (the points --dry-run lists), got %d", opts.Show)}
	}
	if opts.configSet && opts.ConfigPath == "" {
		return &usageError{errors.New("-c is empty: give a sweep spec file, or leave -c out to run the built-in spec")}
	}
	if opts.OutputDir == "" {
		return &usageError{errors.New("--output-dir must not be empty")} // as predict says
	}
	switch {
	case opts.showSet && !opts.DryRun:
		return &usageError{errors.New("--show lists the points of --dry-run; add --dry-run, or remove --show to run the sweep")}
	case opts.DryRun && len(opts.Export) > 0:
		return &usageError{errors.New("--export writes launch files for a sweep's recommendations, and --dry-run simulates nothing to recommend; remove one")}
	}
	if opts.Parallelism < 0 {
		return &usageError{fmt.Errorf("--parallelism must be a whole number >= 1 (or 0 for the default), got %d", opts.Parallelism)}
	}
	// NaN passes every comparison and a huge value overflows time.Duration: check both.
	if t := opts.TimeoutSeconds; math.IsNaN(t) || t < 0 || t > maxTimeoutSeconds {
		return &usageError{fmt.Errorf("--timeout must be a number of seconds > 0 and <= %d (a year; or 0 for the default), got %g",
			maxTimeoutSeconds, t)}
	}
	return nil
}

// checkTraces refuses, before anything is expanded or simulated (a dry run included), a trace
// file the spec names that does not exist or is a directory: a config error naming
// traffic.source.paths and the file.
func checkTraces(spec *grid.Spec) error {
	var errs config.Errors
	for _, p := range spec.TracePaths() {
		st, err := os.Stat(p)
		switch {
		case err != nil:
			errs = append(errs, &config.Error{File: spec.File, Path: "traffic.source.paths", Msg: "cannot read trace " + p + ": " +
				config.PathCause(err).Error() + " (a relative path in the spec names a file beside it; in --set, one in the working directory)", Err: err})
		case st.IsDir():
			errs = append(errs, &config.Error{File: spec.File, Path: "traffic.source.paths", Msg: p + " is a directory; give trace files (JSON lines)"})
		}
	}
	if len(errs) > 0 {
		return errs
	}
	return nil
}

// expandSweep loads the spec with the performance database systems and expands it (the points'
// configs are decoded and written only for the points that run), refuses a mode without a valid
// point unless --allow-empty-mode, checks the points' backends against the export targets, and
// prints the expansion's warnings (with the objectives whose direction ranks the worst
// deployments first, results.ReversedObjective) and timing notes on stderr.
func expandSweep(ctx context.Context, io ioStreams, opts *sweepOptions, systems *opdb.DB, exportTargets []string) (*grid.Expansion, error) {
	spec, err := loadSpec(opts)
	if err != nil {
		return nil, err
	}
	spec.Systems = systems
	spec.Build = buildIdentity(debug.ReadBuildInfo())
	if err := checkTraces(spec); err != nil {
		return nil, err
	}
	if err := spec.DigestTraces(); err != nil {
		return nil, &config.Error{File: spec.File, Path: "traffic.source.paths", Msg: err.Error(), Err: err}
	}
	x, err := spec.ExpandLazyContext(ctx)
	if err != nil && ctx.Err() != nil {
		return nil, &interruptedError{"interrupted while expanding the grid: nothing was simulated"}
	}
	if err != nil {
		return nil, err
	}
	if err := x.CheckModes(); err != nil {
		// An error of the spec itself (every invalid point of a mode, or of a router policy,
		// fails with it) is refused even under --allow-empty-mode: dropping the mode is not the
		// fix. One that needs the performance database says how to give it.
		if se := (*grid.SpecError)(nil); errors.As(err, &se) {
			if x.NeedsSystems {
				return nil, &advisedError{se.Err, systemsAdvice}
			}
			return nil, se.Err
		}
		if !opts.AllowEmptyMode {
			advice := "pass --allow-empty-mode to sweep the other modes alone"
			if x.NeedsSystems {
				advice = systemsAdvice + "; or " + advice
			}
			return nil, &advisedError{err, advice}
		}
	}
	if err := checkExports(ctx, io, spec.File, x, exportTargets); err != nil {
		return nil, err
	}
	x.Warnings = append(x.Warnings, spec.ObjectiveWarnings(results.ReversedObjective)...)
	for _, w := range x.Warnings {
		fmt.Fprintln(io.Err, "warning: "+w)
	}
	for _, n := range x.Notes {
		fmt.Fprintln(io.Err, "note: "+n)
	}
	if x.NeedsSystems {
		fmt.Fprintln(io.Err, "hint: some grid points need a performance database: "+systemsAdvice)
	}
	for _, n := range aggregateNotes(x.TimingNotes) {
		fmt.Fprintln(io.Err, "servesweep: "+n)
	}
	return x, nil
}

// dryRun prints what the sweep (or the shard) would simulate, as a table or JSON, and from
// largeGrid points the memory a run of them would take, on stderr.
func dryRun(io ioStreams, opts *sweepOptions, x *grid.Expansion, shard *shardChoice) error {
	points, what := x.Points, ""
	var sd *shardDoc
	if shard != nil {
		points, what = x.ShardPoints(shard.Shard), " of shard "+shard.Shard.String()
		sd = newShardDoc(shard, len(points), x.SpecHash())
	}
	if n := len(points); n >= largeGrid {
		fmt.Fprintf(io.Err, "servesweep: running these %d points takes about %.1f GiB of memory (%.1f GiB when memory is short)\n",
			n, float64(n)*bytesPerPoint/(1<<30), float64(n)*liveBytesPerPoint/(1<<30))
	}
	if opts.Format == formatJSON {
		return printJSON(io.Out, newDryRunDoc(x, points, opts.Show, sd))
	}
	printDryRun(io.Out, x, points, what, opts.Show)
	if sd != nil {
		fmt.Fprintf(io.Out, "shard %s (from %s): %d of %d selected points; spec hash %s\n",
			shard.Shard, shard.Source, len(points), len(x.Points), sd.SpecHash)
	}
	return nil
}

// prepareWholeSweep readies --output-dir for the unsharded sweep of x and claims its journal for
// the spec (sweep.PrepareDir); fresh says the journal is new (none before, or --overwrite removed
// it). A directory whose sweep ran the same points and differs only in its analysis settings, or
// ran more points under wider GPU bounds, is pointed to servesweep report, which applies new
// settings without simulating (otherSpecAdvice); any other spec is refused, saying what differs.
func prepareWholeSweep(ctx context.Context, opts *sweepOptions, x *grid.Expansion) (fresh bool, err error) {
	fresh, err = sweep.PrepareDir(opts.OutputDir, opts.Overwrite, x.SpecHash(), x.SpecIdentity()...)
	var de *sweep.DirError
	var se *results.JournalSpecError
	switch {
	case errors.As(err, &de) && de.Problem == sweep.DirOtherSpec:
		m, _ := results.ReadManifest(opts.OutputDir)
		advice, changes := otherSpecAdvice(ctx, opts, x, m, de.Hash)
		if advice != nil {
			return false, advice
		}
		if changes != nil {
			de.Changes = changes
		}
	case errors.As(err, &se):
		// No sweep.json (a sweep killed before writing one): the journal's identity is all there is.
		advice, changes := otherSpecAdvice(ctx, opts, x, nil, se.Have)
		if advice != nil {
			return false, advice
		}
		if changes != nil {
			se.Changes = changes
		}
	}
	if err != nil {
		err = specErr(damagedSpecErr(lockedErr(dirErr(err), "--output-dir "+opts.OutputDir)), "choose another --output-dir, or pass --overwrite to start over")
	}
	return fresh, err
}

// damagedSpecErr turns a *results.JournalSpecDamagedError into a usage error (exit 2), whose
// text says how to go on; other errors pass unchanged.
func damagedSpecErr(err error) error {
	var de *results.JournalSpecDamagedError
	if errors.As(err, &de) {
		return &usageError{err}
	}
	return err
}

// sweepRunOptions are the options of the sweep's run: the spec's worker count and per-point
// timeout unless the flags replace them, a progress bar on stderr unless --quiet, the capacity
// search and the performance database.
func sweepRunOptions(io ioStreams, opts *sweepOptions, spec *grid.Spec, systems *opdb.DB) sweep.Options {
	par := spec.Optimizer.Parallelism
	if opts.Parallelism > 0 {
		par = opts.Parallelism
	}
	timeout, from := spec.Optimizer.CandidateTimeout, ""
	if opts.TimeoutSeconds > 0 {
		timeout, from = time.Duration(opts.TimeoutSeconds*float64(time.Second)), "--timeout"
	}
	var progress sweep.Progress
	if !opts.Quiet {
		progress = sweep.NewProgress(io.Err, isTerminal(io.Err), 2*time.Second)
	}
	return sweep.Options{OutputDir: opts.OutputDir, Parallelism: par, Timeout: timeout, TimeoutFrom: from, Progress: progress, Simulate: opts.Simulate,
		Capacity: spec.Optimization.CapacitySearch, Systems: systems}
}

// finishSweep writes the outputs of the finished (or interrupted) sweep out of x, its exports,
// and prints its summary and front (or the JSON document).
func finishSweep(ctx context.Context, io ioStreams, opts *sweepOptions, x *grid.Expansion, out *sweep.Outcome, elapsed time.Duration,
	exportTargets []string, runOpts sweep.Options) (err error) {
	spec := x.Spec
	manifest := sweep.NewManifest(x, out, examplePrices(opts, spec))
	manifest.SpecHash = x.SpecHash()
	m := &manifest
	checkStopped := false // Ctrl-C during the seed check: the outputs are written without it
	switch {
	case !opts.SeedCheck:
		m.SeedCheckSkipped = results.SeedCheckDisabled
	case out.Interrupted:
		m.SeedCheckSkipped = results.SeedCheckInterrupted
	default:
		check, cerr := seedCheck(ctx, io, opts, x, out.Rows, m, runOpts)
		switch {
		case cerr == nil && check == nil:
			m.SeedCheckSkipped = results.SeedCheckNoCandidate
		case cerr == nil:
			m.SeedCheck = check
		case ctx.Err() != nil:
			checkStopped, m.SeedCheckSkipped = true, results.SeedCheckInterrupted
		default:
			// The sweep's results stand: a check that cannot run is reported, not fatal.
			msg := strings.Join(strings.Fields(cerr.Error()), " ")
			fmt.Fprintln(io.Err, "warning: the seed check could not run: "+msg)
			m.SeedCheckSkipped = "failed: " + msg
		}
	}
	a, w, err := results.WriteOutputs(opts.OutputDir, out.Rows, m)
	if err != nil {
		return err
	}
	if checkStopped {
		defer func() {
			if err == nil {
				err = &interruptedError{msg: "interrupted during the seed check: every point is saved and the report is written " +
					"without it; to check, rerun: " + resumeCommand(opts)}
			}
		}()
	}
	if err := writeExports(io, w, exportTargets); err != nil {
		return err
	}
	if opts.Format == formatJSON {
		// The document counts the failed points; the first one's reason is a warning.
		if msg := firstFailure(out.Rows); msg != "" {
			fmt.Fprintln(io.Err, "warning: "+msg)
		}
		if err := sweepOutcome(opts, x, out, a, w); err != nil {
			return err
		}
		pareto, err := results.ParetoDocument(out.Rows, a, m, w.RecommendedRows)
		if err != nil {
			return err
		}
		rf := newReportFiles(w)
		return printJSON(io.Out, sweepDoc{Counts: m.Counts, Settings: m.Settings, Pareto: pareto, Files: sweepFilesDoc{
			Journal: filepath.Join(opts.OutputDir, results.JournalFile), Manifest: filepath.Join(opts.OutputDir, results.ManifestFile),
			Exports: rf.Exports, HTML: rf.HTML, Pareto: rf.Pareto, Plot: rf.Plot, Recommendations: rf.Recommendations, Report: rf.Report, Ties: rf.Ties,
			Results: filepath.Join(opts.OutputDir, results.ParquetFile), Probes: probesFile(opts.OutputDir, spec)}})
	}
	fmt.Fprintf(io.Out, "servesweep sweep: %s:\n%d points selected of %d valid (%d in the grid", spec.File, len(x.Points), x.Valid, x.GridPoints)
	if len(x.Filtered) > 0 {
		fmt.Fprintf(io.Out, "; filtered: %s", results.CountList(x.Filtered))
	}
	fmt.Fprintln(io.Out, ")")
	printRunCounts(io.Out, out, elapsed)
	if msg := firstFailure(out.Rows); msg != "" {
		fmt.Fprintln(io.Out, msg)
	}
	if out.Interrupted {
		fmt.Fprintf(io.Out, "PARTIAL: interrupted with %d of %d selected points finished; the front below is of those points only\n",
			len(out.Rows), len(x.Points))
	}
	printFront(io.Out, out.Rows, a, m, w)
	fmt.Fprintf(io.Out, "Saved results to: %s (report: %s)\n", filepath.Join(opts.OutputDir, results.ParquetFile), w.Report)
	return sweepOutcome(opts, x, out, a, w)
}

// seedCheck simulates again, with every seed moved (sweep.Recheck), the points that make and
// could change the answer of rows under m's settings (results.SeedCheckPoints) and compares the
// answers (results.NewSeedCheck); nil when there is no candidate. Errors: the analysis, a point
// that cannot be re-seeded or simulated (sweep.Recheck), or ctx done.
func seedCheck(ctx context.Context, io ioStreams, opts *sweepOptions, x *grid.Expansion, rows []results.Row, m *results.Manifest,
	runOpts sweep.Options) (*results.SeedCheck, error) {
	a, err := results.Analyze(rows, m.Settings)
	if err != nil {
		return nil, err
	}
	idx, answer, omitted := results.SeedCheckPoints(rows, a, m)
	if len(idx) == 0 {
		return nil, nil
	}
	byID := make(map[string]*grid.Point, len(x.Points))
	for i := range x.Points {
		byID[x.Points[i].ID] = &x.Points[i]
	}
	points := make([]*grid.Point, 0, len(idx))
	for _, i := range idx {
		p, ok := byID[rows[i].PointID]
		if !ok {
			return nil, fmt.Errorf("seed check: point %s of the results is not one of the sweep's", rows[i].PointID)
		}
		points = append(points, p)
	}
	seeded, err := sweep.Reseed(points)
	if err != nil {
		return nil, err
	}
	if !opts.Quiet && len(seeded) > 0 {
		fmt.Fprintf(io.Err, "seed check: simulating %s again with every seed they draw from moved\n", results.Plural(len(seeded), "point"))
	}
	reseeded, err := sweep.Recheck(ctx, seeded, runOpts)
	if err != nil {
		return nil, err
	}
	c, err := results.NewSeedCheck(rows, a, idx, reseeded, answer, omitted, sweep.SeedOffset)
	if err != nil {
		return nil, err
	}
	for i := range c.Points {
		if p := byID[c.Points[i].PointID]; p != nil {
			c.Points[i].SeedsMoved = grid.DrawingSeeds(p.Config)
		}
	}
	return c, nil
}

// sweepOutcome returns the error of a finished sweep whose outputs are written: interrupted
// (exit 130, with the command that resumes), or no feasible point (exit 1); nil otherwise.
func sweepOutcome(opts *sweepOptions, x *grid.Expansion, out *sweep.Outcome, a *results.Analysis, w *results.Written) error {
	if out.Interrupted {
		return &interruptedError{msg: fmt.Sprintf("interrupted: %d of %d points finished and saved; to resume, rerun: %s",
			len(out.Rows), len(x.Points), resumeCommand(opts))}
	}
	if len(a.Candidates) == 0 {
		return fmt.Errorf("no feasible point: none of the %d points passed the filters (%s); see %s%s",
			len(out.Rows), results.CountList(a.Excluded), w.Report, results.NoFeasibleHint(out.Rows, a, opts.OutputDir))
	}
	return nil
}

// firstFailure returns "first failure: point ID: reason" for the first failed row, or "".
func firstFailure(rows []results.Row) string {
	for _, r := range rows {
		if r.Status == results.StatusFailed {
			return fmt.Sprintf("first failure: point %s: %s", r.PointID, r.Reason)
		}
	}
	return ""
}

// interruptedError reports a sweep stopped by Ctrl-C or SIGTERM (exit 130).
type interruptedError struct{ msg string }

func (e *interruptedError) Error() string { return e.msg }
func (e *interruptedError) Unwrap() error { return context.Canceled }

// resumeCommand rebuilds the command line that resumes the sweep; extra arguments go last.
func resumeCommand(opts *sweepOptions, extra ...string) string {
	parts := []string{shellQuote(programName(os.Args[0])), "sweep"}
	if opts.ConfigPath != "" {
		parts = append(parts, "-c", shellQuote(opts.ConfigPath))
	}
	for _, s := range opts.Sets {
		parts = append(parts, "--set", shellQuote(s))
	}
	parts = append(parts, "--output-dir", shellQuote(opts.OutputDir))
	if opts.AllowEmptyMode {
		parts = append(parts, "--allow-empty-mode")
	}
	// What changes the files written, so that the resumed run writes what this one would have:
	// the launch files of --export (a rerun without it removes them) and the op database.
	for _, e := range opts.Export {
		parts = append(parts, "--export", shellQuote(e))
	}
	if opts.SystemsDirSet {
		parts = append(parts, "--systems-dir", shellQuote(opts.SystemsDir))
	}
	for _, e := range extra {
		parts = append(parts, shellQuote(e))
	}
	return strings.Join(parts, " ")
}

// programName is how a printed command should invoke servesweep, given the path it was started
// as (arg0): that path when it names servesweep through a directory (bin/servesweep after
// `make build`, which is not on PATH), else "servesweep".
func programName(arg0 string) string {
	if filepath.Base(arg0) == "servesweep" && strings.ContainsRune(arg0, '/') {
		return arg0
	}
	return "servesweep"
}

func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r == '/' || r == '.' || r == '_' || r == '-' || r == '=' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// dirErr turns a *sweep.DirError into a usage error (exit 2) that names --output-dir and says
// which flags or directories fix it; other errors pass unchanged.
func dirErr(err error) error {
	var de *sweep.DirError
	if !errors.As(err, &de) {
		return err
	}
	dir := de.Dir
	var msg string
	switch de.Problem {
	case sweep.DirNotDirectory:
		msg = fmt.Sprintf("--output-dir %s exists and is not a directory", dir)
	case sweep.DirCannotCreate:
		msg = fmt.Sprintf("--output-dir %s: cannot create it: %v", dir, config.PathCause(de.Err))
	case sweep.DirNotEmpty:
		msg = fmt.Sprintf("--output-dir %s is not empty (%s) and holds no sweep journal (%s) to resume; "+
			"choose another directory, or pass --overwrite to replace the sweep files", dir, strings.Join(de.Names, ", "), results.JournalFile)
	case sweep.DirManifestIsDir:
		// --overwrite could not remove it: the sweep removes only the files it writes.
		msg = fmt.Sprintf("--output-dir %s cannot be resumed: %s is a directory where the sweep writes its manifest; "+
			"remove that directory and rerun (the journal keeps the finished points)", dir, de.Path)
	case sweep.DirOutputIsDir:
		msg = fmt.Sprintf("--output-dir %s cannot be resumed: %s is a directory where the sweep writes a file; "+
			"move that directory away and rerun (the journal keeps the finished points)", dir, de.Path)
	case sweep.DirBadManifest:
		msg = fmt.Sprintf("--output-dir %s cannot be resumed: %v; move that file away to resume (the journal keeps "+
			"the finished points and their spec), choose another directory, or pass --overwrite to start over", dir, de.Err)
	case sweep.DirOtherSpec:
		msg = fmt.Sprintf("--output-dir %s holds a sweep of another spec, of other contents of its trace files, or of another servesweep build (spec hash %s, this one %s%s): "+
			"resuming would mix the two; choose another directory, or pass --overwrite to start over", dir, de.Hash, de.WantHash, results.ChangesText(de.Changes))
	case sweep.DirShardCount:
		msg = fmt.Sprintf("--output-dir %s holds shards of a sweep split into %d (%s), but this shard is %s, "+
			"split into %d: give every shard the same count (--shard I/N, --shard-count, SERVESWEEP_SHARD_COUNT), "+
			"or use another --output-dir", dir, de.Count, de.Path, de.Shard, de.Shard.Count)
	case sweep.DirBadPart:
		msg = fmt.Sprintf("--output-dir %s: %v; remove that part file (%s) and rerun the shard that wrote it "+
			"(its journal keeps the finished points), or use another --output-dir", dir, de.Err, de.Path)
	case sweep.DirOtherSpecPart:
		if de.Own {
			msg = fmt.Sprintf("%s was written by another sweep spec, from other contents of its trace files, or by another servesweep build (%s, spec hash %s; this one is %s%s): "+
				"pass --overwrite to replace this shard's part and journal, or use another --output-dir", de.Path, de.Spec, de.Hash, de.WantHash, results.ChangesText(de.Changes))
		} else {
			msg = fmt.Sprintf("--output-dir %s holds parts of another sweep spec, of other contents of its trace files, or of another servesweep build (%s: %s, "+
				"spec hash %s; this one is %s%s); give each sweep spec and build its own --output-dir", dir, de.Path, de.Spec, de.Hash, de.WantHash, results.ChangesText(de.Changes))
		}
	default:
		msg = "--output-dir " + err.Error()
	}
	return &usageError{errors.New(msg)}
}

// lockedErr turns a *results.JournalLockedError into a usage error (exit 2) that names what is
// being written (the output directory, or the shard in it); other errors pass unchanged.
func lockedErr(err error, what string) error {
	var le *results.JournalLockedError
	if !errors.As(err, &le) {
		return err
	}
	return &usageError{fmt.Errorf("%s: another servesweep process is writing it (its journal %s is locked); "+
		"wait for it to end, or stop it, then rerun to resume", what, le.Path)}
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// printDryRun prints the grid counts and domains, then the first show of points (the selected
// points, or a shard's: what says which, e.g. " of shard 2/4").
func printDryRun(w io.Writer, x *grid.Expansion, points []grid.Point, what string, show int) {
	s := x.Spec
	fmt.Fprintf(w, "servesweep sweep --dry-run: %s\n", s.File)
	fmt.Fprintf(w, "grid: %d points before filtering, %d valid, %d selected (optimizer %s)\n",
		x.GridPoints, x.Valid, len(x.Points), s.Optimizer.Algorithm)
	for _, r := range []string{grid.FilteredInvalid, grid.FilteredUnsupported, grid.FilteredGPUBudget, grid.FilteredDuplicate} {
		if n := x.Filtered[r]; n > 0 {
			fmt.Fprintf(w, "filtered %s: %d (e.g. %s)\n", r, n, x.Examples[r])
		}
	}
	if n, first := equivalentPoints(x.Points); n > 0 {
		fmt.Fprintf(w, "equivalent: %d selected point(s) simulate as an earlier one (e.g. #%d %s is %s): each class runs once "+
			"and its twins copy the results (results.parquet's equivalent_to; kept off the front)\n", n, first.Index, first.ID, first.EquivalentTo)
	}
	if cs := s.Optimization.CapacitySearch; cs != nil {
		fmt.Fprintf(w, "capacity search: each point runs up to %d simulations to find its largest %s within evaluation.sla "+
			"(attainment >= %g, from %g to %g, relative tolerance %g)\n", cs.MaxProbes, x.Points[0].Config.Traffic.Load.IntensityField(),
			cs.Attainment, cs.Min, cs.Max, cs.RelativeTolerance)
	}
	fmt.Fprintln(w, "domains:")
	for _, d := range s.Domains {
		vals := d.ValueStrings()
		if len(vals) > 12 {
			vals = append(vals[:10:10], fmt.Sprintf("... (%d values, up to %s)", len(vals), vals[len(vals)-1]))
		}
		fmt.Fprintf(w, "  %s: %s\n", d.Path, strings.Join(vals, ", "))
	}
	n := min(max(show, 0), len(points))
	if n == 0 {
		return
	}
	if n == len(points) {
		fmt.Fprintf(w, "all %s%s:\n", results.Plural(n, "point"), what)
	} else {
		fmt.Fprintf(w, "first %s%s:\n", results.Plural(n, "point"), what)
	}
	for _, p := range points[:n] {
		fmt.Fprintf(w, "  #%d %s %s: %s\n", p.Index, p.ID, results.Plural(p.GPUs, "GPU"), p.Label())
	}
}

// equivalentPoints counts the points that simulate as an earlier one (grid.Point.EquivalentTo
// set) and returns the first of them.
func equivalentPoints(points []grid.Point) (n int, first grid.Point) {
	for _, p := range points {
		if p.EquivalentTo != "" {
			if n == 0 {
				first = p
			}
			n++
		}
	}
	return n, first
}

// newShardDoc describes shard sh, which holds points of the selected points, of the sweep of
// spec hash hash (grid.Expansion.SpecHash).
func newShardDoc(sh *shardChoice, points int, hash string) *shardDoc {
	return &shardDoc{Count: sh.Count, Index: sh.Index, Points: points, Source: sh.Source, SpecHash: hash}
}

// newDryRunDoc is the JSON form of printDryRun: the counts, the domains with every value, and
// the first show of points (sd describes the shard they belong to, nil for the whole sweep).
func newDryRunDoc(x *grid.Expansion, points []grid.Point, show int, sd *shardDoc) dryRunDoc {
	n, _ := equivalentPoints(x.Points)
	d := dryRunDoc{GridPoints: x.GridPoints, ValidPoints: x.Valid, SelectedPoints: len(x.Points), EquivalentPoints: n, Filtered: map[string]int{},
		Domains: []domainDoc{}, Points: []pointDoc{}, Shard: sd}
	for r, n := range x.Filtered {
		d.Filtered[r] = n
	}
	for _, dom := range x.Spec.Domains {
		d.Domains = append(d.Domains, domainDoc{Path: dom.Path, Values: dom.ValueStrings()})
	}
	for _, p := range points[:min(max(show, 0), len(points))] {
		d.Points = append(d.Points, pointDoc{GPUs: p.GPUs, Label: p.Label(), PointID: p.ID, PointIndex: p.Index})
	}
	return d
}

// printFront prints the SLA, the prices and the latency-ranking note, a PARTIAL warning naming
// the points that timed out or failed (results.UnfinishedText: the answer is of the finished
// points only), then the recommended points, one line each, and the notes on the answer: its SLA
// attainment when nothing enforced the SLA (results.AttainmentText), what the capacity search left
// unsettled, the chunking hint and the seed check.
func printFront(w io.Writer, rows []results.Row, a *results.Analysis, m *results.Manifest, wr *results.Written) {
	for _, line := range []string{results.SLAText(rows, m), results.PricesText(rows, m), results.LatencyRankingNote(a, m)} {
		if line != "" {
			fmt.Fprintln(w, wrapText(line, maxLineWidth, "  "))
		}
	}
	var objs []string
	for _, o := range a.Settings.Objectives {
		objs = append(objs, string(o.Direction)+" "+o.Metric)
	}
	labels := results.LabelsFor(rows)
	if note := results.UnfinishedText(rows, a, labels, false); note != "" {
		fmt.Fprintln(w, wrapText("PARTIAL: "+note, maxLineWidth, "  "))
	}
	if n := a.Excluded[results.ExcludedNoSamples]; n > 0 {
		// Points that finished ok but measured nothing are off every answer; say so here, not
		// only in report.md (a user trial, 2026-12-07: two of three points, their requests all
		// within a 30 s warm-up, left a front of one without a word).
		fmt.Fprintln(w, wrapText(fmt.Sprintf("Not candidates: %s completed no measured request (%s: every request within "+
			"the warm-up, or none finished; lengthen traffic.stop or shorten traffic.load.warmup_seconds).",
			results.Plural(n, "point"), results.ExcludedNoSamples), maxLineWidth, "  "))
	}
	colon := ":" // a list follows
	if len(wr.RecommendedRows) == 0 {
		colon = "."
	}
	if a.Ranking != nil || a.Settings.Target != "" && a.Settings.Target != optimization.TargetPareto {
		// A scalar target ranks its candidates, none when every point was filtered out.
		fmt.Fprintf(w, "Best points by %s (of %d candidates)%s\n", a.Settings.Target, len(a.Candidates), colon)
	} else {
		points := "points"
		if len(a.Front) == 1 {
			points = "point"
		}
		fmt.Fprintln(w, wrapText(fmt.Sprintf("Pareto front: %d %s of %d candidates (%s)%s", len(a.Front), points, len(a.Candidates),
			strings.Join(objs, ", "), colon), maxLineWidth, "  "))
	}
	for n, i := range wr.RecommendedRows {
		r := &rows[i]
		var vals []string
		// A scalar target's own column leads: the points are ranked by it, whatever the objectives.
		if metric, v, ok := results.TargetValue(r, a.Settings.Target); ok && a.Ranking != nil &&
			!slices.ContainsFunc(a.Settings.Objectives, func(o optimization.Objective) bool { return o.Metric == metric }) {
			vals = append(vals, metric+"="+results.FixedNum(v))
		}
		for k, o := range a.Settings.Objectives {
			vals = append(vals, o.Metric+"="+results.FixedNum(a.Values[i][k]))
		}
		tied := ""
		if t := len(a.Ties[i]); t > 0 && a.Ranking == nil {
			tied = fmt.Sprintf(" (+%d tied)", t)
		}
		fmt.Fprint(w, frontEntry(n+1, vals, tied, fmt.Sprintf("gpus=%d %s %s %s %s %s", r.GPUs, labels.Hardware(r),
			r.Mode, labels.Shape(r), r.RouterPolicy, labels.Load(r)), wr.Recommendations[n]))
	}
	u := results.UnsettledOf(rows, a, m)
	notes := append([]string{results.AttainmentText(rows, a, m, false), results.ThinText(rows, a, false), results.UnjudgedText(rows, a, false), results.MultiNodeText(rows, a, false)}, u.Sentences(rows, a, labels, false)...)
	for _, line := range append(notes, results.ChunkingHint(rows), results.SeedCheckText(rows, m, a, labels, false)) {
		if line == "" {
			continue
		}
		fmt.Fprintln(w, wrapText(line, maxLineWidth, "  "))
	}
}

// statusCounts renders the row counts by status, e.g. "90 ok, 2 degraded, 0 failed, 0 timed
// out"; the infeasible count (capacity search) appears only when nonzero.
func statusCounts(ok, degraded, infeasible, failed, timedOut int) string {
	s := fmt.Sprintf("%d ok, %d degraded", ok, degraded)
	if infeasible > 0 {
		s += fmt.Sprintf(", %d infeasible", infeasible)
	}
	return s + fmt.Sprintf(", %d failed, %d timed out", failed, timedOut)
}

// probesFile is dir/probes.parquet when spec runs a capacity search, else "".
func probesFile(dir string, spec *grid.Spec) string {
	if spec.Optimization.CapacitySearch == nil {
		return ""
	}
	return filepath.Join(dir, results.ProbesFile)
}

// specErr turns a *results.JournalSpecError into a usage error (exit 2) that says what to do;
// other errors pass unchanged.
func specErr(err error, advice string) error {
	var se *results.JournalSpecError
	if errors.As(err, &se) {
		return &usageError{fmt.Errorf("%v; %s", err, advice)}
	}
	return err
}

// sweepShard is the shard a sweep runs (resolveShard from the flags and the environment; nil
// for the whole sweep). --export beside a shard is refused: a shard writes no report, so no
// recommendation to export, and ignoring the flag would leave the user without launch files.
func sweepShard(opts *sweepOptions) (*shardChoice, error) {
	shard, err := resolveShard(opts, os.LookupEnv)
	if err == nil && shard != nil && len(opts.Export) > 0 {
		return nil, &usageError{fmt.Errorf("--export writes launch files for a report's recommendations, and a shard writes no report: "+
			"after the shards, run servesweep merge --results %s, then servesweep report --results %s --output-dir DIR --export %s",
			opts.OutputDir, opts.OutputDir, strings.Join(opts.Export, ","))}
	}
	return shard, err
}

// printBuiltInSpec writes the built-in spec as embedded to stdout: the file a user without the
// repository starts a spec of their own from. -c, --set and every other flag of sweep are refused
// (exit 2): -c names another spec, --set applies when a spec runs, not to its text, and the
// others (--format, --dry-run, --output-dir, ...) would be ignored.
func printBuiltInSpec(io ioStreams, opts *sweepOptions) error {
	var why []string
	if opts.configSet {
		why = append(why, fmt.Sprintf("-c %q names another spec: give one of them", opts.ConfigPath))
	}
	if len(opts.Sets) > 0 {
		why = append(why, "--set applies when a spec runs: edit the printed file instead, or run it with -c and --set")
	}
	if len(opts.otherFlags) > 0 {
		why = append(why, "it exits without running, so it takes no "+strings.Join(opts.otherFlags, ", "))
	}
	if len(why) > 0 {
		return &usageError{errors.New("--print-spec prints the built-in spec as it is; " + strings.Join(why, "; "))}
	}
	_, err := io.Out.Write(examples.DefaultSweep())
	return err
}
