package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/servesweep/servesweep/results"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// reportOptions are the flags of `servesweep report`.
type reportOptions struct {
	ResultsDir string
	Objectives []string
	Target     string
	StrictSLA  bool
	MinGPUs    int
	MaxGPUs    int
	// set records which flags were given, so the others keep the sweep's settings.
	set map[string]bool
}

func newReportCmd(io ioStreams, runF func(context.Context, *reportOptions) error) *cobra.Command {
	opts := &reportOptions{}
	cmd := &cobra.Command{
		Use:   "report --results DIR [--objective max:METRIC]... [--target T] [--strict-sla] [--min-gpus N] [--max-gpus N]",
		Short: "Rebuild pareto.json, report.md, the plot and recommendations from a sweep's results.parquet",
		Long: `Rebuild a sweep's report from DIR/results.parquet without simulating.

The settings default to the sweep's (DIR/sweep.json); flags replace them. --objective takes
max:METRIC or min:METRIC, where METRIC is a numeric column of results.parquet (repeat it for
several objectives; e.g. --objective max:output_throughput_per_gpu_tok_s --objective min:p99_ttft_ms).`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 0 {
				return &usageError{fmt.Errorf("report takes no positional arguments, got %q", args)}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.set = map[string]bool{}
			cmd.Flags().Visit(func(f *pflag.Flag) { opts.set[f.Name] = true })
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runReport(io, opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.ResultsDir, "results", "", "a sweep's output directory (required)")
	f.StringArrayVar(&opts.Objectives, "objective", nil, "Pareto objective max:METRIC or min:METRIC (repeatable)")
	f.StringVar(&opts.Target, "target", "", "pareto or a scalar target: throughput, throughput_per_gpu, throughput_per_user, goodput, goodput_per_gpu, ttft, e2e_latency, min_gpus")
	f.BoolVar(&opts.StrictSLA, "strict-sla", false, "drop points whose mean TTFT/TPOT/E2E break evaluation.sla")
	f.IntVar(&opts.MinGPUs, "min-gpus", 0, "least GPUs of a candidate")
	f.IntVar(&opts.MaxGPUs, "max-gpus", 0, "most GPUs of a candidate")
	mustDirname(cmd, "results")
	mustComplete(cmd, "objective", completeObjective)
	mustComplete(cmd, "target", fixed(results.Targets()...))
	mustComplete(cmd, "min-gpus", noFiles)
	mustComplete(cmd, "max-gpus", noFiles)
	return cmd
}

func runReport(io ioStreams, opts *reportOptions) error {
	if opts.ResultsDir == "" {
		return &usageError{errors.New("--results is required: a sweep's output directory")}
	}
	rows, err := results.ReadParquet(filepath.Join(opts.ResultsDir, results.ParquetFile))
	if errors.Is(err, os.ErrNotExist) {
		return &usageError{fmt.Errorf("--results %s has no %s; run servesweep sweep --output-dir %s first",
			opts.ResultsDir, results.ParquetFile, opts.ResultsDir)}
	}
	if err != nil {
		return err
	}
	m, err := results.ReadManifest(opts.ResultsDir)
	if err != nil {
		return err
	}
	if m == nil {
		m = &results.Manifest{Settings: results.Settings{Target: results.TargetPareto}}
	}
	s := &m.Settings
	if opts.set["objective"] {
		s.Objectives = nil
		for _, o := range opts.Objectives {
			obj, err := results.ParseObjective(o)
			if err != nil {
				return &usageError{fmt.Errorf("--objective: %v", err)}
			}
			s.Objectives = append(s.Objectives, obj)
		}
	}
	if opts.set["target"] {
		if _, ok := results.TargetObjective(opts.Target); !ok && opts.Target != results.TargetPareto {
			return &usageError{fmt.Errorf("--target must be one of %v, got %q", results.Targets(), opts.Target)}
		}
		s.Target = opts.Target
	}
	if opts.set["strict-sla"] {
		s.StrictSLA = opts.StrictSLA
	}
	if opts.set["min-gpus"] {
		s.MinGPUs = opts.MinGPUs
	}
	if opts.set["max-gpus"] {
		s.MaxGPUs = opts.MaxGPUs
	}
	if s.MinGPUs < 0 || s.MaxGPUs < 0 || (s.MaxGPUs > 0 && s.MinGPUs > s.MaxGPUs) {
		return &usageError{fmt.Errorf("--min-gpus (%d) and --max-gpus (%d) must be >= 0 with min <= max", s.MinGPUs, s.MaxGPUs)}
	}
	if err := checkReportSLA(rows, s, opts.set); err != nil {
		return err
	}
	a, err := results.Analyze(rows, *s)
	if err != nil {
		return &usageError{err}
	}
	w, err := results.WriteReport(opts.ResultsDir, rows, a, m)
	if err != nil {
		return err
	}
	printFront(io.Out, rows, a, w)
	fmt.Fprintf(io.Out, "Saved report to: %s\n", w.Report)
	if len(a.Candidates) == 0 {
		return fmt.Errorf("no feasible point: none of the %d rows passed the filters (%s)", len(rows), countList(a.Excluded))
	}
	return nil
}

// checkReportSLA refuses (exit 2) settings that need evaluation.sla (--strict-sla, a goodput
// --target, min_gpus, or a goodput_* objective) when no row of the results has an SLA bound,
// with the message the sweep spec validation gives (results.SLARequired).
func checkReportSLA(rows []results.Row, s *results.Settings, set map[string]bool) error {
	for i := range rows {
		if results.HasSLA(&rows[i]) {
			return nil
		}
	}
	name := func(flag, key string) string {
		if set[flag] {
			return "--" + flag
		}
		return "optimization." + key + " (from " + results.ManifestFile + ")"
	}
	var msgs []string
	if s.StrictSLA {
		msgs = append(msgs, name("strict-sla", "strict_sla")+": "+results.SLARequired)
	}
	if results.NeedsSLA(s.Target) {
		msgs = append(msgs, name("target", "target")+": "+s.Target+" "+results.SLARequired)
	}
	for _, o := range s.Objectives {
		if strings.HasPrefix(o.Metric, "goodput_") {
			msgs = append(msgs, name("objective", "objectives")+": "+o.Metric+" "+results.SLARequired)
		}
	}
	if len(msgs) == 0 {
		return nil
	}
	return &usageError{fmt.Errorf("the results have no SLA (no evaluation.sla in the sweep spec):\n  %s", strings.Join(msgs, "\n  "))}
}
