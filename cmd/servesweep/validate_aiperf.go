package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/servesweep/servesweep/grid"
	"github.com/servesweep/servesweep/sim"
	"github.com/servesweep/servesweep/sim/calibrate/aiperf"
	"github.com/servesweep/servesweep/sim/config"
	"github.com/servesweep/servesweep/sim/timing/opdb"
)

// aiperfRunReport is one run's part of validate --aiperf's report.
type aiperfRunReport struct {
	File string `json:"file"`
	Kind string `json:"kind"`
	// Load lists the --set overrides that simulate the run as it was measured (runLoadSets):
	// its load from its input_config, and every request counted; [] when the config is it.
	Load []string `json:"load_from_run"`
	// Warnings say what in the run suggests it measured something else than the config
	// (aiperf.CheckWorkload), [] when nothing does; also printed on stderr.
	Warnings    []string            `json:"warnings"`
	Comparisons []aiperf.Comparison `json:"comparisons"`
}

// aiperfReport is validate --aiperf's JSON report.
type aiperfReport struct {
	Config string `json:"config"`
	// ConfigWarnings say what in the config makes the scores another model's than servesweep's
	// (blindTiming), [] when nothing does; also printed on stderr.
	ConfigWarnings []string          `json:"config_warnings"`
	Runs           []aiperfRunReport `json:"runs"`
	// MAPE is the mean absolute percentage error per metric and statistic over the runs.
	MAPE []aiperf.MAPE `json:"mape"`
}

// readAIPerfRuns reads the AIPerf or GenAI-Perf runs at paths, in order. A summary file reached
// twice (the same --aiperf given twice, or a run inside a directory also given) is a usage error
// naming it: it would weigh that run twice in the MAPE.
func readAIPerfRuns(paths []string) ([]aiperf.Run, error) {
	var runs []aiperf.Run
	seen := map[string]string{}
	for _, p := range paths {
		rs, err := aiperf.ReadRuns(p)
		if err != nil {
			return nil, err
		}
		for _, r := range rs {
			key, err := filepath.Abs(r.File)
			if err != nil {
				key = filepath.Clean(r.File)
			}
			if first, dup := seen[key]; dup {
				return nil, &usageError{fmt.Errorf("--aiperf: the run %s is given twice (also as %s): each run counts once; drop one", r.File, first)}
			}
			seen[key] = r.File
		}
		runs = append(runs, rs...)
	}
	return runs, nil
}

// checkAIPerfFlags refuses (exit 2) the flags validate --aiperf lacks or does not take.
func checkAIPerfFlags(opts *validateOptions) error {
	if opts.ConfigPath == "" {
		return &usageError{fmt.Errorf("--aiperf needs -c CONFIG.yaml: the prediction config of the deployment the runs measured")}
	}
	if opts.HoldoutBy != "" || opts.Fit || opts.fitEvaluationsSet || opts.OneWorkerPerRole || opts.forwardModelSet {
		return &usageError{fmt.Errorf("--fit, --holdout-by, --fit-evaluations, --assume-one-worker-per-role and --forward-model apply to --measured, not --aiperf " +
			"(the config's own engine.workers.<role>.timing.forward_model prices an --aiperf run)")}
	}
	if opts.OutputJSON != "" {
		if err := checkOutputFile(opts.OutputJSON); err != nil {
			return &usageError{fmt.Errorf("--output-json %s: %v", opts.OutputJSON, err)}
		}
	}
	return nil
}

// runValidateAIPerf scores the --aiperf runs against -c's config simulated at each run's load.
func runValidateAIPerf(ctx context.Context, io ioStreams, opts *validateOptions, systems *opdb.DB) error {
	if err := checkAIPerfFlags(opts); err != nil {
		return err
	}
	runs, err := readAIPerfRuns(opts.AIPerf)
	if err != nil {
		return err
	}
	base, err := config.LoadFile(opts.ConfigPath, opts.Sets, config.WithMarker(grid.ConcreteMarker))
	if err != nil {
		return err
	}
	rep := aiperfReport{Config: opts.ConfigPath, ConfigWarnings: append([]string{}, blindTiming(base)...)}
	for _, w := range rep.ConfigWarnings {
		fmt.Fprintf(io.Err, "warning: %s: %s\n", opts.ConfigPath, w)
	}
	var all [][]aiperf.Comparison
	for i := range runs {
		run := &runs[i]
		load := runLoadSets(base, run.Load)
		cfg := base
		if len(load) > 0 {
			if cfg, err = config.LoadFile(opts.ConfigPath, append(append([]string(nil), opts.Sets...), load...),
				config.WithMarker(grid.ConcreteMarker)); err != nil {
				return fmt.Errorf("%s: the run's load does not fit %s: %w", run.File, opts.ConfigPath, err)
			}
		}
		wl, err := sim.BuildWorkload(cfg)
		if err != nil {
			return err
		}
		res, err := sim.Run(ctx, cfg, sim.Options{Workload: wl, Systems: systems})
		if err != nil {
			return err
		}
		cs := aiperf.Compare(run, res.Summary)
		all = append(all, cs)
		warnings := append([]string{}, aiperf.CheckWorkload(run, cfg)...)
		for _, w := range warnings {
			fmt.Fprintf(io.Err, "warning: %s: %s\n", run.File, w)
		}
		rep.Runs = append(rep.Runs, aiperfRunReport{File: run.File, Kind: run.Kind, Load: load, Warnings: warnings, Comparisons: cs})
	}
	rep.MAPE = aiperf.MAPEs(all)
	data, err := reportJSON(rep, opts.OutputJSON)
	if err != nil {
		return err
	}
	if opts.Format == formatJSON {
		_, err := io.Out.Write(data)
		return err
	}
	renderAIPerf(io.Out, &rep)
	return nil
}

// blindTiming says, for each worker role of cfg whose timing does not read the GPU and the
// model (fixed or polynomial: a curve fitted to one deployment), that the run scores that curve,
// not servesweep's timing model; none when every role's timing is hardware-aware.
func blindTiming(cfg *config.Config) []string {
	var out []string
	for _, name := range cfg.Engine.Mode.Roles() {
		if role := cfg.Engine.Workers.Role(name); role != nil && !role.Timing.HardwareAware() {
			out = append(out, fmt.Sprintf("engine.workers.%s.timing is %s, which reads neither engine.hardware nor engine.model: "+
				"these errors score that curve, not servesweep's timing model (timing {type: default})", name, role.Timing.Type))
		}
	}
	return out
}

// runLoadSets returns the --set overrides that give the config the run's load, where the run's
// input_config says it and the config's load type takes it: the concurrency of a concurrency
// load, the rate of a constant_rate or poisson load of requests, the concurrency ramp of a run
// that echoes its configuration (an absent concurrency_ramp_duration is none), and the request
// count (an explicit traffic.stop.requests, or a requests_per_load_unit the count divided by the
// load unit, so that the run resolves to it: config.ResolveCount). A config that leaves requests
// out of its statistics (traffic.load.warmup_seconds, cooldown: a capacity probe's
// recommendation measures its steady window) is simulated counting every request, as AIPerf's
// summary counts every request of its profiling phase; comparing a steady window with a whole
// run would score the start and the drain as model error.
func runLoadSets(cfg *config.Config, l aiperf.Load) []string {
	var sets []string
	t := &cfg.Traffic
	if t.Load.Warmup() > 0 {
		sets = append(sets, "traffic.load.warmup_seconds=0")
	}
	if t.Load.HasCooldown() {
		sets = append(sets, "traffic.load.cooldown=false")
	}
	unit := t.Load.Unit()
	if t.Load.Type == config.LoadConcurrency {
		if l.Concurrency != nil && *l.Concurrency != t.Load.Concurrency {
			sets = append(sets, fmt.Sprintf("traffic.load.concurrency=%d", *l.Concurrency))
			unit = float64(*l.Concurrency)
		}
		ramp := 0.0
		if l.RampSeconds != nil {
			ramp = *l.RampSeconds
		}
		if (l.Echoed || l.RampSeconds != nil) && ramp != t.Load.Ramp() {
			sets = append(sets, "traffic.load.ramp_seconds="+strconv.FormatFloat(ramp, 'g', -1, 64))
		}
	}
	if l.RequestRate != nil && (t.Load.Type == config.LoadConstantRate || t.Load.Type == config.LoadPoisson) &&
		t.Load.RequestsPerSecond > 0 && *l.RequestRate != t.Load.RequestsPerSecond {
		sets = append(sets, fmt.Sprintf("traffic.load.requests_per_second=%g", *l.RequestRate))
		unit = *l.RequestRate
	}
	if n := l.RequestCount; n != nil && *n != config.ResolveCount(t.Stop.Requests, t.Stop.RequestsPerLoadUnit, unit) {
		switch {
		case t.Stop.Requests > 0:
			sets = append(sets, fmt.Sprintf("traffic.stop.requests=%d", *n))
		case t.Stop.RequestsPerLoadUnit > 0 && unit > 0:
			sets = append(sets, "traffic.stop.requests_per_load_unit="+strconv.FormatFloat(float64(*n)/unit, 'g', -1, 64))
		}
	}
	return sets
}

// renderAIPerf prints each run's comparison table, then the MAPE table when there are several
// runs.
func renderAIPerf(w io.Writer, rep *aiperfReport) {
	for i, r := range rep.Runs {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "Run %d of %d: %s (%s)", i+1, len(rep.Runs), r.File, r.Kind)
		if len(r.Load) > 0 {
			fmt.Fprintf(w, "; simulated as the run was measured: %s", strings.Join(r.Load, ", "))
		}
		fmt.Fprintf(w, "\n%-32s %-5s %12s %12s %8s  %s\n", "metric", "stat", "measured", "predicted", "error%", "measured as")
		for _, c := range r.Comparisons {
			e := "N/A"
			if c.ErrorPct != nil {
				e = fmt.Sprintf("%+.1f", *c.ErrorPct)
			}
			fmt.Fprintf(w, "%-32s %-5s %12.2f %12.2f %8s  %s\n", c.Metric+" ("+c.Unit+")", c.Stat, c.MeasuredValue, c.PredictedValue, e, c.Measured)
		}
	}
	if len(rep.Runs) < 2 {
		return
	}
	fmt.Fprintf(w, "\nAccuracy over %d runs (%s)\n%-32s %-5s %5s %9s\n", len(rep.Runs), rep.Config, "metric", "stat", "runs", "mape")
	for _, m := range rep.MAPE {
		fmt.Fprintf(w, "%-32s %-5s %5d %8.1f%%\n", m.Metric, m.Stat, m.Runs, m.MAPEPct)
	}
}
