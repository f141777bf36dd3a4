package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/servesweep/servesweep/results"
	"github.com/servesweep/servesweep/sim/optimization"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// reportOptions are the flags of `servesweep report`.
type reportOptions struct {
	ResultsDir string
	// OutputDir is where the report goes ("" when not given: ResultsDir); Overwrite allows
	// replacing a report it already holds.
	OutputDir  string
	Overwrite  bool
	Objectives []string
	Target     string
	StrictSLA  bool
	MinGPUs    int
	MaxGPUs    int
	// MaxRejectedRatio is optimization.Settings.MaxRejectedRatio (used when set is true for it).
	MaxRejectedRatio float64
	// MaxCostUSDPerHour, MaxUSDPerMillionOutputTokens and MinGoodputRPS are the settings of
	// those names (0: no bound; used when set is true for them).
	MaxCostUSDPerHour, MaxUSDPerMillionOutputTokens, MinGoodputRPS float64
	// Format is the stdout format, table or json.
	Format string
	// Export lists the --export targets as given (comma-separated lists).
	Export []string
	// set records which flags were given, so the others keep the sweep's settings.
	set map[string]bool
}

func newReportCmd(io ioStreams, runF func(context.Context, *reportOptions) error) *cobra.Command {
	opts := &reportOptions{}
	cmd := &cobra.Command{
		Use: "report --results DIR [--output-dir OUT] [--overwrite] [--objective max:METRIC]... [--target T] [--strict-sla] " +
			"[--min-gpus N] [--max-gpus N] [--max-rejected-ratio R] [--format table|json]",
		Short: "Analyze a sweep's results.parquet again: pareto.json, report.md, the plot and recommendations",
		Long: `Analyze a sweep's DIR/results.parquet again, without simulating, and write pareto.json,
report.md, report.html, pareto.png, recommendations/NNNN.yaml and, when points of the front tie,
pareto_ties.parquet into OUT (--output-dir, created if missing; default DIR).

The sweep's own report is never replaced by accident: when OUT already holds a report (as DIR
does after a sweep), give another --output-dir, or --overwrite to replace it.

The settings default to the sweep's (DIR/sweep.json); flags replace them. --objective takes
max:METRIC or min:METRIC, where METRIC is a numeric column of results.parquet (repeat it for
several objectives; e.g. --objective max:output_throughput_per_gpu_tok_s --objective min:p99_ttft_ms).

Prints the recommended points and where the report went, or with --format json one JSON object:
{"files": the paths written, "pareto": the document written as pareto.json}; on an error
nothing is printed on stdout.`,
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
	f.StringVar(&opts.OutputDir, "output-dir", "", "where to write the report, created if missing (default: --results)")
	f.BoolVar(&opts.Overwrite, "overwrite", false, "replace the report the output directory holds (pareto.json, report.md, report.html, pareto.png, recommendations/NNNN.yaml)")
	f.StringArrayVar(&opts.Objectives, "objective", nil, "Pareto objective max:METRIC or min:METRIC (repeatable)")
	f.StringVar(&opts.Target, "target", "", "pareto or a scalar target: throughput, throughput_per_gpu, throughput_per_user, goodput, goodput_per_gpu, ttft, e2e_latency, min_gpus")
	f.BoolVar(&opts.StrictSLA, "strict-sla", false, "drop points whose mean TTFT/TPOT/E2E break evaluation.sla")
	intFlag(f, &opts.MinGPUs, "min-gpus", 0, "least GPUs of a candidate (0: no bound)")
	intFlag(f, &opts.MaxGPUs, "max-gpus", 0, "most GPUs of a candidate, an autoscaled one's planner.max_num_gpus included, as the sweep's max_candidate_gpus (0: no bound)")
	floatFlag(f, &opts.MaxRejectedRatio, "max-rejected-ratio", 0, "largest share of its offered requests, from 0 to 1, a degraded point "+
		"may have rejected or truncated (stopped short of their output) and stay a candidate (default: the sweep's, else 0)")
	floatFlag(f, &opts.MaxCostUSDPerHour, "max-cost-usd-per-hour", 0, "most USD per hour of a candidate's GPUs, as the sweep's "+
		"max_cost_usd_per_hour (0: no bound; needs the sweep's prices)")
	floatFlag(f, &opts.MaxUSDPerMillionOutputTokens, "max-usd-per-million-output-tokens", 0, "most USD per million output tokens "+
		"of a candidate, as the sweep's max_usd_per_million_output_tokens (0: no bound; needs the sweep's prices)")
	floatFlag(f, &opts.MinGoodputRPS, "min-goodput-rps", 0, "least goodput, in requests/s, of a candidate under target min_gpus, "+
		"as the sweep's min_goodput_rps (0: no bound)")
	addFormatFlag(cmd, &opts.Format, "the recommended points and the report's path")
	addExportFlag(cmd, &opts.Export)
	mustDirname(cmd, "results")
	mustDirname(cmd, "output-dir")
	mustComplete(cmd, "objective", completeObjective)
	mustComplete(cmd, "target", fixed(optimization.Targets()...))
	mustComplete(cmd, "min-gpus", noFiles)
	mustComplete(cmd, "max-gpus", noFiles)
	mustComplete(cmd, "max-rejected-ratio", noFiles)
	for _, name := range []string{"max-cost-usd-per-hour", "max-usd-per-million-output-tokens", "min-goodput-rps"} {
		mustComplete(cmd, name, noFiles)
	}
	return cmd
}

func runReport(io ioStreams, opts *reportOptions) error {
	if err := checkFormat(opts.Format); err != nil {
		return err
	}
	if opts.Format != formatJSON { // a JSON document keeps its lines whole
		out := newWrapWriter(io.Out)
		defer out.Flush()
		io.Out = out
	}
	exportTargets, err := parseExportTargets(opts.Export)
	if err != nil {
		return err
	}
	if opts.ResultsDir == "" {
		return &usageError{errors.New("--results is required: a sweep's output directory")}
	}
	out := opts.ResultsDir
	if opts.set["output-dir"] {
		if opts.OutputDir == "" {
			return &usageError{errors.New("--output-dir must not be empty; leave it out to write into --results")}
		}
		out = opts.OutputDir
	}
	if opts.set["max-rejected-ratio"] {
		if err := checkRejectedRatio("--max-rejected-ratio", opts.MaxRejectedRatio); err != nil {
			return err
		}
	}
	if n, err := results.CountRows(filepath.Join(opts.ResultsDir, results.ParquetFile)); err == nil {
		_, release := holdHeapFor(n)
		defer release()
	}
	rows, m, err := readSweepResults(io, opts)
	if err != nil {
		return err
	}
	if err := reportSettings(io.Err, opts, rows, m); err != nil {
		return err
	}
	a, err := results.Analyze(rows, m.Settings)
	if err != nil {
		return &usageError{err}
	}
	if err := checkReportDir(out, opts); err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return &usageError{fmt.Errorf("--output-dir: %w", err)}
	}
	w, err := results.WriteReport(out, rows, a, m)
	if err != nil {
		return err
	}
	if err := writeExports(io, w, exportTargets); err != nil {
		return err
	}
	return printReport(io, opts, rows, a, m, w)
}

// printReport prints the re-analysis: the JSON document, or the partial-results note, the
// recommended points and where the report went. No candidate point is an error (exit 1).
func printReport(io ioStreams, opts *reportOptions, rows []results.Row, a *results.Analysis, m *results.Manifest, w *results.Written) error {
	noFeasible := func() error {
		return fmt.Errorf("no feasible point: none of the %d rows passed the filters (%s)%s", len(rows), results.CountList(a.Excluded), results.NoFeasibleHint(rows, a, opts.ResultsDir))
	}
	if n, sel := len(rows), int(m.Counts.SelectedPoints); !m.Incomplete() && !m.Defaulted && sel > 0 && n < sel {
		fmt.Fprintf(io.Err, "warning: %s holds %d rows where %s counts %d selected points of a finished sweep: rows were lost or "+
			"removed since, and the front below is of the %d\n", filepath.Join(opts.ResultsDir, results.ParquetFile), n,
			filepath.Join(opts.ResultsDir, results.ManifestFile), sel, n)
	}
	if opts.Format == formatJSON {
		if len(a.Candidates) == 0 {
			return noFeasible()
		}
		pareto, err := results.ParetoDocument(rows, a, m, w.RecommendedRows)
		if err != nil {
			return err
		}
		return printJSON(io.Out, reportDoc{Files: newReportFiles(w), Pareto: pareto})
	}
	if m.Incomplete() {
		fmt.Fprintf(io.Out, "PARTIAL: %d of %d selected points have results (%s); the front below is of those points only\n",
			len(rows), m.Counts.SelectedPoints, partialWhy(m))
	}
	if t := results.GPUBudgetText(a); t != "" {
		fmt.Fprintln(io.Out, t)
	}
	printFront(io.Out, rows, a, m, w)
	fmt.Fprintf(io.Out, "Saved report to: %s\n", w.Report)
	if len(a.Candidates) == 0 {
		return noFeasible()
	}
	return nil
}

// partialWhy says why the sweep of manifest m is incomplete (m.Incomplete): interrupted, or a
// merge whose parts lack points or capacity probes.
func partialWhy(m *results.Manifest) string {
	switch {
	case m.Merge != nil && m.Merge.MissingPoints == 0 && len(m.Merge.MissingProbePoints) > 0:
		return fmt.Sprintf("the merged parts lack the capacity probes of %s", results.Plural(len(m.Merge.MissingProbePoints), "point"))
	case m.Merge != nil:
		return "the merged parts lack points"
	}
	return "the sweep was interrupted"
}

// readSweepResults reads --results' results.parquet and its manifest (sweep.json; the defaults,
// with a warning, when it is missing).
func readSweepResults(io ioStreams, opts *reportOptions) ([]results.Row, *results.Manifest, error) {
	manifestPath := filepath.Join(opts.ResultsDir, results.ManifestFile)
	if st, err := os.Stat(opts.ResultsDir); err == nil && !st.IsDir() {
		return nil, nil, &usageError{fmt.Errorf("--results %s is a file; give a sweep's output directory", opts.ResultsDir)}
	} else if errors.Is(err, os.ErrNotExist) {
		return nil, nil, &usageError{fmt.Errorf("--results %s does not exist; give a sweep's output directory "+
			"(servesweep sweep --output-dir DIR)", opts.ResultsDir)}
	}
	rows, err := results.ReadParquet(filepath.Join(opts.ResultsDir, results.ParquetFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil, missingResults(opts.ResultsDir)
	}
	if err != nil {
		return nil, nil, &usageError{fmt.Errorf("--results %s: %w", opts.ResultsDir, err)}
	}
	// The capacity probes, for what the report says of a capacity below a load that also met.
	probes := filepath.Join(opts.ResultsDir, results.ProbesFile)
	if err := results.AttachProbeTable(probes, rows); err != nil {
		return nil, nil, &usageError{fmt.Errorf("--results %s: %w", opts.ResultsDir, err)}
	}
	if err := results.CheckRows(rows); err != nil {
		return nil, nil, &usageError{fmt.Errorf("--results %s: %w", opts.ResultsDir, err)}
	}
	if missing := results.MissingProbes(rows); len(missing) > 0 {
		fmt.Fprintf(io.Err, "warning: %s lacks the probes of %s (e.g. %s): the report judges their capacities' knife edges, "+
			"meets above a miss and brackets without them (a closed search's bracket is then its relative tolerance)\n",
			probes, results.Plural(len(missing), "point"), missing[0])
	}
	m, err := results.ReadManifest(opts.ResultsDir)
	var bad *results.ManifestError
	if errors.As(err, &bad) {
		return nil, nil, &usageError{fmt.Errorf("%v; rerun the sweep (with this servesweep), or move it away to analyze with default settings", err)}
	}
	if err != nil {
		return nil, nil, err
	}
	if m == nil {
		m = results.DefaultManifest()
		fmt.Fprintf(io.Err, "warning: %s is missing, so the sweep's own settings are unknown: the report uses the defaults "+
			"(target pareto, objectives %v, no SLA filter, no GPU bounds, max rejected ratio 0) where no flag replaces them\n",
			manifestPath, optimization.DefaultObjectives())
	}
	return rows, m, nil
}

// reportSettings resolves the analysis settings of m: the sweep's, replaced by the flags given
// (reportOverrides, results.Overrides), then checked, blaming a bad setting on its flag or on
// the manifest it came from; an objective whose direction ranks the worst deployments first is
// a warning on stderr (reversedObjectiveWarnings).
func reportSettings(stderr io.Writer, opts *reportOptions, rows []results.Row, m *results.Manifest) error {
	manifestPath := filepath.Join(opts.ResultsDir, results.ManifestFile)
	o, err := reportOverrides(opts)
	if err != nil {
		return err
	}
	s := &m.Settings
	o.Apply(s)
	from := func(flag, key string) string {
		if opts.set[flag] {
			return "--" + flag
		}
		return "settings." + key + " of " + manifestPath
	}
	switch {
	case s.MinGPUs < 0:
		return &usageError{fmt.Errorf("%s: must be >= 0 (0: no bound), got %d", from("min-gpus", "min_candidate_gpus"), s.MinGPUs)}
	case s.MaxGPUs < 0:
		return &usageError{fmt.Errorf("%s: must be >= 0 (0: no bound), got %d", from("max-gpus", "max_candidate_gpus"), s.MaxGPUs)}
	case s.MaxGPUs > 0 && s.MinGPUs > s.MaxGPUs:
		return &usageError{fmt.Errorf("%s (%d) must be at most %s (%d)", from("min-gpus", "min_candidate_gpus"), s.MinGPUs,
			from("max-gpus", "max_candidate_gpus"), s.MaxGPUs)}
	}
	if !opts.set["max-rejected-ratio"] {
		if err := checkRejectedRatio("settings.max_rejected_ratio of "+manifestPath, s.MaxRejectedRatio); err != nil {
			return &usageError{fmt.Errorf("%v; pass --max-rejected-ratio R to replace it", err)}
		}
	}
	if err := checkReportSLA(rows, s, opts.set); err != nil {
		return err
	}
	if err := checkReportCost(rows, s, opts.set["objective"], manifestPath); err != nil {
		return err
	}
	if err := checkReportBounds(rows, s, from); err != nil {
		return err
	}
	// Settings from the sweep's manifest are blamed on it, those from flags on the flags.
	if err := results.CheckObjectives(s.Objectives); err != nil {
		if opts.set["objective"] {
			return &usageError{fmt.Errorf("--objective: %v", err)}
		}
		return &usageError{fmt.Errorf("settings.objectives of %s: %v; --objective replaces them", manifestPath, err)}
	}
	if err := optimization.CheckTarget(s.Target); err != nil {
		return &usageError{fmt.Errorf("settings.target of %s %v; --target replaces it", manifestPath, err)}
	}
	for _, w := range reversedObjectiveWarnings(opts, s.Objectives, manifestPath) {
		fmt.Fprintln(stderr, "warning: "+w)
	}
	return nil
}

// reversedObjectiveWarnings returns a warning for each of the report's objectives objs whose
// direction is the opposite of its metric's better one (results.ReversedObjective), naming the
// --objective flag that gave it, or the settings of the manifest at manifestPath when no
// --objective was passed (objs[i] is then the sweep's i-th objective), and the flag that
// reverses it.
func reversedObjectiveWarnings(opts *reportOptions, objs []optimization.Objective, manifestPath string) []string {
	var out []string
	for i, o := range objs {
		msg := results.ReversedObjective(o)
		if msg == "" {
			continue
		}
		fix := optimization.Objective{Metric: o.Metric, Direction: optimization.Maximize}
		if o.Direction == optimization.Maximize {
			fix.Direction = optimization.Minimize
		}
		if opts.set["objective"] && i < len(opts.Objectives) {
			out = append(out, fmt.Sprintf("--objective %s: %s; if that was not meant, pass --objective %s", opts.Objectives[i], msg, fix))
			continue
		}
		out = append(out, fmt.Sprintf("settings.objectives[%d] of %s: %s; if that was not meant, pass --objective %s "+
			"(with an --objective for each other objective: the flags replace the list)", i, manifestPath, msg, fix))
	}
	return out
}

// reportOverrides are the settings report's flags replace: the --objective list (parsed), and
// each of --target, --strict-sla, --min-gpus, --max-gpus and --max-rejected-ratio given.
func reportOverrides(opts *reportOptions) (results.Overrides, error) {
	var o results.Overrides
	if opts.set["objective"] {
		o.Objectives = []optimization.Objective{}
		for _, text := range opts.Objectives {
			obj, err := results.ParseObjective(text)
			if err != nil {
				return o, &usageError{fmt.Errorf("--objective: %v", err)}
			}
			o.Objectives = append(o.Objectives, obj)
		}
	}
	if opts.set["target"] {
		if err := optimization.CheckTarget(opts.Target); err != nil || opts.Target == "" {
			return o, &usageError{fmt.Errorf("--target must be one of %v, got %q", optimization.Targets(), opts.Target)}
		}
		o.Target = &opts.Target
	}
	if opts.set["strict-sla"] {
		o.StrictSLA = &opts.StrictSLA
	}
	if opts.set["min-gpus"] {
		o.MinGPUs = &opts.MinGPUs
	}
	if opts.set["max-gpus"] {
		o.MaxGPUs = &opts.MaxGPUs
	}
	if opts.set["max-rejected-ratio"] {
		o.MaxRejectedRatio = &opts.MaxRejectedRatio
	}
	for _, b := range []struct {
		flag string
		v    *float64
		dst  **float64
	}{{"max-cost-usd-per-hour", &opts.MaxCostUSDPerHour, &o.MaxCostUSDPerHour},
		{"max-usd-per-million-output-tokens", &opts.MaxUSDPerMillionOutputTokens, &o.MaxUSDPerMillionOutputTokens},
		{"min-goodput-rps", &opts.MinGoodputRPS, &o.MinGoodputRPS}} {
		if !opts.set[b.flag] {
			continue
		}
		if !(*b.v >= 0) || math.IsInf(*b.v, 1) {
			return o, &usageError{fmt.Errorf("--%s must be a number >= 0 (0: no bound), got %g", b.flag, *b.v)}
		}
		*b.dst = b.v
	}
	return o, nil
}

// checkReportSLA refuses (exit 2) settings that need evaluation.sla (--strict-sla, a goodput
// --target, min_gpus, or a goodput_* objective) when no row of the results has an SLA bound,
// with the message the sweep spec validation gives (optimization.SLARequired).
func checkReportSLA(rows []results.Row, s *optimization.Settings, set map[string]bool) error {
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
		msgs = append(msgs, name("strict-sla", "strict_sla")+": "+optimization.SLARequired)
	}
	if optimization.NeedsSLA(s.Target) {
		msgs = append(msgs, name("target", "target")+": "+s.Target+" "+optimization.SLARequired)
	}
	for _, o := range s.Objectives {
		if optimization.MetricNeedsSLA(o.Metric) {
			msgs = append(msgs, name("objective", "objectives")+": "+o.Metric+" "+optimization.SLARequired)
		}
	}
	if len(msgs) == 0 {
		return nil
	}
	return &usageError{fmt.Errorf("the results have no SLA (no evaluation.sla in the sweep spec):\n  %s", strings.Join(msgs, "\n  "))}
}

// checkReportCost refuses (exit 2) a cost objective (cost_usd_per_hour,
// usd_per_million_output_tokens) when no row of the results has a cost (the sweep spec had no
// optimization.cost), as the sweep spec validation does, naming where the objective came from:
// --objective when flagged, else the settings of the manifest at manifestPath.
func checkReportCost(rows []results.Row, s *optimization.Settings, flagged bool, manifestPath string) error {
	for i := range rows {
		if rows[i].CostUSDPerHour != nil {
			return nil
		}
	}
	for _, o := range s.Objectives {
		if o.Metric == "cost_usd_per_hour" || o.Metric == "usd_per_million_output_tokens" {
			from := "--objective"
			if !flagged {
				from = "settings.objectives of " + manifestPath
			}
			return &usageError{fmt.Errorf("%s: objective %s needs cost columns, and the results have none (no "+
				"optimization.cost.gpu_hour_usd in the sweep spec); rerun the sweep with prices", from, o.Metric)}
		}
	}
	return nil
}

// checkReportBounds refuses (exit 2) a cost bound (max_cost_usd_per_hour,
// max_usd_per_million_output_tokens) over results without cost columns, and a min_goodput_rps
// under a target other than min_gpus, as the sweep spec's validation does; from names where a
// setting came from (its flag, or the manifest's key).
func checkReportBounds(rows []results.Row, s *optimization.Settings, from func(flag, key string) string) error {
	priced := slices.ContainsFunc(rows, func(r results.Row) bool { return r.CostUSDPerHour != nil })
	for _, b := range []struct {
		flag, key string
		v         float64
	}{{"max-cost-usd-per-hour", "max_cost_usd_per_hour", s.MaxCostUSDPerHour},
		{"max-usd-per-million-output-tokens", "max_usd_per_million_output_tokens", s.MaxUSDPerMillionOutputTokens}} {
		if b.v > 0 && !priced {
			return &usageError{fmt.Errorf("%s: needs cost columns, and the results have none (no optimization.cost.gpu_hour_usd "+
				"in the sweep spec); rerun the sweep with prices", from(b.flag, b.key))}
		}
	}
	if s.MinGoodputRPS > 0 && s.Target != optimization.TargetMinGPUs {
		return &usageError{fmt.Errorf("%s: only valid with target min_gpus, got target %s: pass --min-goodput-rps 0 to drop the bound, "+
			"or --target min_gpus", from("min-goodput-rps", "min_goodput_rps"), s.Target)}
	}
	return nil
}

// checkRejectedRatio refuses (exit 2) a maximum rejected ratio outside [0, 1] (NaN included);
// what names where the value came from.
func checkRejectedRatio(what string, r float64) error {
	if r >= 0 && r <= 1 {
		return nil
	}
	return &usageError{fmt.Errorf("%s must be a number from 0 to 1 (the largest share of its offered requests a degraded "+
		"point may have rejected and stay a candidate), got %g", what, r)}
}

// checkReportDir refuses (exit 2) to write the report into out when out is not a directory, when
// it holds a report file the report cannot replace (results.ReportBlockers: a directory named
// pareto.json, say; even with --overwrite), or when it already holds a report
// (results.ReportFilesIn) and --overwrite is not given: by default out is the sweep's own
// directory, whose report the sweep wrote.
func checkReportDir(out string, opts *reportOptions) error {
	flag := "--output-dir"
	if !opts.set["output-dir"] {
		flag = "--results"
	}
	st, err := os.Stat(out)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return &usageError{fmt.Errorf("%s: %w", flag, err)}
	}
	if !st.IsDir() {
		return &usageError{fmt.Errorf("%s %s exists and is not a directory", flag, out)}
	}
	if blocked := results.ReportBlockers(out); len(blocked) > 0 {
		// Refused before anything is written: the report would stop half replaced at the first.
		return &usageError{fmt.Errorf("%s %s: %s; the report cannot replace it: remove it and run the command again",
			flag, out, strings.Join(blocked, "; "))}
	}
	if opts.Overwrite {
		return nil
	}
	found, err := results.ReportFilesIn(out)
	if err != nil {
		return err
	}
	if len(found) == 0 {
		return nil
	}
	where := "another --output-dir DIR"
	if flag == "--results" {
		where = "--output-dir DIR"
	}
	return &usageError{fmt.Errorf("%s %s already holds a report (%s); pass %s to write the new analysis elsewhere, "+
		"or --overwrite to replace it", flag, out, abbreviate(found, 4), where)}
}

// abbreviate joins the first n items of list, noting how many more there are.
func abbreviate(list []string, n int) string {
	if len(list) <= n {
		return strings.Join(list, ", ")
	}
	return strings.Join(list[:n], ", ") + fmt.Sprintf(", ... (%d more)", len(list)-n)
}
