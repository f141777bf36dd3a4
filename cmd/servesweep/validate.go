package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/servesweep/servesweep/sim"
	"github.com/servesweep/servesweep/sim/calibrate"
	"github.com/servesweep/servesweep/sim/calibrate/aiperf"
	"github.com/servesweep/servesweep/sim/config"
	"github.com/servesweep/servesweep/sim/timing/opdb"
	"github.com/spf13/cobra"
)

// validateOptions are the flags of `servesweep validate`.
type validateOptions struct {
	// SystemsDir is --systems-dir ("" = $SERVESWEEP_SYSTEMS_DIR); SystemsDirSet says the flag
	// was given.
	SystemsDir    string
	SystemsDirSet bool
	// Measured is the CSV path; OutputJSON, when set, where the JSON report goes.
	Measured   string
	OutputJSON string
	// Parallelism is the rows simulated at once (0: GOMAXPROCS); Quiet leaves out the row table
	// and the fit progress.
	Parallelism int
	Quiet       bool
	// Fit re-fits the calibration factors on the file instead of using the shipped ones.
	Fit bool
	// FitEvaluations caps the full validations of each fit (calibrate.FitOptions.MaxEvaluations).
	FitEvaluations int
	// HoldoutBy, when set (system, backend or model), scores each group with factors fitted on
	// the other groups (calibrate.Holdout).
	HoldoutBy string
	// Format is the stdout format, table or json.
	Format string
	// OneWorkerPerRole is --assume-one-worker-per-role (calibrate.Options.OneWorkerPerRole).
	OneWorkerPerRole bool
	// AIPerf lists the AIPerf (or GenAI-Perf) summaries or artifact directories of
	// --aiperf; ConfigPath (-c) and Sets (--set) are the config those runs measured.
	AIPerf     []string
	ConfigPath string
	Sets       []string
	// ForwardModel is --forward-model (calibrate.Options.ForwardModel).
	ForwardModel string
	// Explain, when > 0, is --explain LINE: print the prediction config of that CSV line and
	// exit.
	Explain int
	// holdoutSet, fitEvaluationsSet and explainSet say whether the flags were given (an empty
	// --holdout-by, a cap without a fit and --explain 0 are mistakes, not defaults).
	holdoutSet, fitEvaluationsSet, explainSet, forwardModelSet bool
}

func newValidateCmd(io ioStreams, runF func(context.Context, *validateOptions) error) *cobra.Command {
	opts := &validateOptions{}
	cmd := &cobra.Command{
		Use:   "validate --measured FILE.csv | --aiperf RUN... -c CONFIG.yaml [--output-json FILE] [--format table|json]",
		Short: "Simulate measured GPU deployments and report the timing model's accuracy",
		Long: `Simulate every row of a measured-deployments CSV (the format of
measured_dense_calibration.csv: backend, model_path, system, precision, mode, isl, osl,
concurrency, worker shape, silicon_ttft_ms, silicon_tpot_ms) with default timing and KV capacity,
and compare the predicted mean TTFT and mean TPOT with the measured ones: per row, MAPE and
median APE per (model, system, backend) group, per source and overall, and the rows with the
largest errors. Each row is simulated as it was benchmarked: rows whose source is inferencex
under InferenceX's public client, the server flags its scripts set on the row's date and the
deployment and recipe its public configuration listed then (a row that configuration did not
list is skipped, with the reason; docs/validation.md); rows of another source under one
documented assumption (AIConfigurator's generator), scored apart from the headline. The decision quality scores the deployment servesweep would pick from its
predictions over a ladder of 45 mean-TPOT x mean-TTFT SLAs (regret, exact share, rank
correlation). --explain LINE prints a row's config for predict -c. Rows that cannot be
simulated are listed with the reason. Each row runs on its own backend's
scheduler style and defaults (vllm, sglang or trtllm). When no row can be simulated the MAPEs are
N/A (null in the JSON) and the exit status is 1.

With --aiperf PATH -c CONFIG.yaml it scores one deployment instead: PATH is AIPerf's
profile_export_aiperf.json (or GenAI-Perf's profile_export_genai_perf.json), a run's artifact
directory, or a directory of such directories (--aiperf repeats). CONFIG is simulated as predict
does, once per run with the run's concurrency or request rate, concurrency ramp and request
count when its input_config gives them and counting every request (warmup_seconds 0, no cooldown: AIPerf's
summary counts its whole run), and the report puts predicted against measured TTFT, ITL (AIPerf's
inter_chunk_latency), TPOT (AIPerf's inter_token_latency: (E2E - TTFT) / (OSL - 1) per request)
and E2E (request_latency) at mean, p50, p90 and p99, and output-token and request throughput,
with the error of each; several runs add a MAPE table. A file of the wrong kind or version is
exit 2 naming what was expected.

--format json prints the JSON report (the bytes --output-json writes) instead of the tables; on
an error, a failed run without any simulated row included, nothing is printed on stdout.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return &usageError{fmt.Errorf("validate takes no positional arguments, got %q%s", args, positionalHint(cmd, args, "measured", ".csv"))}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.SystemsDirSet = cmd.Flags().Changed("systems-dir")
			opts.holdoutSet = cmd.Flags().Changed("holdout-by")
			opts.fitEvaluationsSet = cmd.Flags().Changed("fit-evaluations")
			opts.explainSet = cmd.Flags().Changed("explain")
			opts.forwardModelSet = cmd.Flags().Changed("forward-model")
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return config.AttributeSets(runValidate(cmd.Context(), io, opts), opts.Sets)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Measured, "measured", "", "CSV of measured deployments (required, unless --aiperf scores one deployment)")
	f.StringVar(&opts.OutputJSON, "output-json", "", "also write the report as JSON to this file")
	f.StringArrayVar(&opts.AIPerf, "aiperf", nil, "an AIPerf run's "+aiperf.AIPerfFile+" (or GenAI-Perf's "+aiperf.GenAIPerfFile+
		"), its artifact directory, or a directory of runs (repeatable); needs -c")
	f.StringVarP(&opts.ConfigPath, "config", "c", "", "with --aiperf: the prediction YAML of the deployment the runs measured")
	f.StringArrayVar(&opts.Sets, "set", nil, "with --aiperf: override PATH=YAML after loading -c (repeatable)")
	intFlag(f, &opts.Parallelism, "parallelism", 0, "rows simulated at once, >= 1; 0 means the default: the number of CPUs")
	// --parallel was this flag's name before every command used --parallelism; scripts keep
	// working, with a notice on stderr.
	intFlag(f, &opts.Parallelism, "parallel", 0, "")
	_ = f.MarkDeprecated("parallel", "use --parallelism")
	f.BoolVarP(&opts.Quiet, "quiet", "q", false, "print only the summary: no per-row table, the 20 most frequent notes, skipped rows counted by reason, no fit progress on stderr")
	f.StringVar(&opts.HoldoutBy, "holdout-by", "", "score on data the model was not fitted on: for each system, backend or model "+
		"in turn, fit on the other rows and predict its rows (a fit per group: long); figures pool every left-out row")
	f.BoolVar(&opts.Fit, "fit", false, "re-fit the efficiency factors on the file (coordinate descent, many full validations; minutes) and report with them; Memory, ExpertGEMM and the MLA attention rates come from kernel measurements and are not refitted")
	f.StringVar(&opts.ForwardModel, "forward-model", "auto", "timing.forward_model of every simulated row: auto (the shipped choice, "+
		"the roofline) or op_level (the performance database's tables; needs --systems-dir)")
	f.Var((*decimalInt)(&opts.Explain), "explain", "print the prediction config (YAML for predict -c) that simulates the row on this CSV line "+
		"(the header is line 1) as it was benchmarked, with its notes, and exit")
	f.BoolVar(&opts.OneWorkerPerRole, "assume-one-worker-per-role", false, "simulate a disaggregated row that gives no worker counts "+
		"as one prefill and one decode worker (noted per row) instead of skipping it; an InferenceX row only where InferenceX's public "+
		"configuration lists no deployment for it")
	intFlag(f, &opts.FitEvaluations, "fit-evaluations", 120, "most full validations per fit (--fit, and each fold of --holdout-by), >= 2")
	addFormatFlag(cmd, &opts.Format, "per-row, per-group and overall accuracy tables")
	addSystemsDirFlag(cmd, &opts.SystemsDir)
	mustFilename(cmd, "measured", "csv")
	mustFilename(cmd, "aiperf", "json")
	mustFilename(cmd, "config", "yaml", "yml")
	mustComplete(cmd, "set", noFiles)
	mustFilename(cmd, "output-json", "json")
	mustComplete(cmd, "parallelism", noFiles)
	mustComplete(cmd, "forward-model", fixed("auto\tthe shipped forward model (the roofline)", "op_level\tthe performance database's kernel tables"))
	mustComplete(cmd, "holdout-by", fixed("system\tleave out one GPU at a time", "backend\tleave out one backend at a time",
		"model\tleave out one model at a time"))
	return cmd
}

func runValidate(ctx context.Context, io ioStreams, opts *validateOptions) error {
	systems, err := openSystems(opts.SystemsDir, opts.SystemsDirSet, os.Getenv)
	if err != nil {
		return err
	}
	if err := checkFormat(opts.Format); err != nil {
		return err
	}
	if opts.Format != formatJSON && opts.Explain == 0 { // a JSON document and --explain's YAML keep their lines whole
		out := newWrapWriter(io.Out)
		defer out.Flush()
		io.Out = out
	}
	if len(opts.AIPerf) > 0 {
		if opts.Measured != "" {
			return &usageError{fmt.Errorf("--aiperf and --measured are exclusive: score one deployment's runs, or a CSV of deployments")}
		}
		return runValidateAIPerf(ctx, io, opts, systems)
	}
	if err := checkMeasuredFlags(opts, systems); err != nil {
		return err
	}
	rows, err := calibrate.ReadCSVFile(opts.Measured)
	if err != nil {
		return &usageError{err}
	}
	for _, w := range calibrate.MeasuredWarnings(rows, opts.Measured) {
		fmt.Fprintln(io.Err, "warning: "+w)
	}
	vo := calibrate.Options{Parallelism: opts.Parallelism, OneWorkerPerRole: opts.OneWorkerPerRole, ForwardModel: opts.ForwardModel,
		Systems: systems}
	if opts.explainSet {
		return explainRow(io.Out, rows, opts.Explain, vo, opts.Measured)
	}
	rep, fitted, err := scoreMeasured(ctx, io, opts, rows, vo)
	if err != nil {
		return err
	}
	return printMeasured(io, opts, rep, fitted)
}

// printMeasured writes the validation report rep (--output-json) and prints it, as a table or
// JSON, with the factors of a fit (fitted, nil without one). Without a simulated row there is
// no accuracy: the report (MAPEs N/A, null in JSON) is written for the skip reasons, and the
// run fails (exit 1).
func printMeasured(io ioStreams, opts *validateOptions, rep *calibrate.Report, fitted *calibrate.Factors) error {
	data, err := reportJSON(rep, opts.OutputJSON)
	if err != nil {
		return err
	}
	failed := rep.CheckSimulated()
	if failed != nil {
		failed = fmt.Errorf("%s: %w", opts.Measured, failed)
	}
	if opts.Format == formatJSON {
		if failed != nil {
			return failed
		}
		if fitted != nil {
			fmt.Fprintf(io.Err, "Fitted factors (put them in timing.CalibratedEfficiency and calibrate.Calibrated*):\n%+v\n", *fitted)
		}
		_, err := io.Out.Write(data)
		return err
	}
	renderValidation(io.Out, rep, opts.Quiet)
	if failed != nil {
		return failed
	}
	if fitted != nil {
		fmt.Fprintf(io.Out, "\nFitted factors (put them in timing.CalibratedEfficiency and calibrate.Calibrated*):\n%+v\n", *fitted)
	}
	return nil
}

// checkMeasuredFlags refuses (exit 2) the flags of validate --measured that are missing, out of
// range or do not combine, and an op_level forward model without a performance database
// (systems).
func checkMeasuredFlags(opts *validateOptions, systems *opdb.DB) error {
	if opts.ConfigPath != "" || len(opts.Sets) > 0 {
		return &usageError{fmt.Errorf("-c and --set give the config of --aiperf runs; add --aiperf PATH, or drop them for --measured")}
	}
	if opts.Measured == "" {
		return &usageError{fmt.Errorf("--measured is required (a CSV such as ../shared/data/silicon/measured_dense_calibration.csv), " +
			"or --aiperf with -c to score an AIPerf run")}
	}
	if opts.Parallelism < 0 {
		return &usageError{fmt.Errorf("--parallelism must be a whole number >= 1 (or 0 for the default), got %d", opts.Parallelism)}
	}
	if (opts.holdoutSet || opts.HoldoutBy != "") && !slices.Contains(calibrate.HoldoutKeys(), opts.HoldoutBy) {
		return &usageError{fmt.Errorf("--holdout-by must be one of %s, got %q", strings.Join(calibrate.HoldoutKeys(), ", "), opts.HoldoutBy)}
	}
	if opts.ForwardModel != config.ForwardAuto && opts.ForwardModel != config.ForwardOpLevel {
		return &usageError{fmt.Errorf("--forward-model must be auto or op_level, got %q", opts.ForwardModel)}
	}
	if opts.ForwardModel == config.ForwardOpLevel && systems == nil {
		return &usageError{fmt.Errorf("--forward-model op_level prices passes from a performance database: " + systemsAdvice)}
	}
	if opts.explainSet {
		for _, c := range []struct {
			on   bool
			flag string
		}{{opts.Fit, "--fit"}, {opts.HoldoutBy != "", "--holdout-by"}, {opts.OutputJSON != "", "--output-json"}, {opts.Format == formatJSON, "--format json"}} {
			if c.on {
				return &usageError{fmt.Errorf("--explain prints one row's config as YAML; it does not combine with %s", c.flag)}
			}
		}
	}
	if opts.FitEvaluations < 2 {
		return &usageError{fmt.Errorf("--fit-evaluations must be a whole number >= 2, got %d", opts.FitEvaluations)}
	}
	if opts.fitEvaluationsSet && !opts.Fit && opts.HoldoutBy == "" {
		return &usageError{fmt.Errorf("--fit-evaluations caps a fit: use it with --fit or --holdout-by")}
	}
	if opts.OutputJSON != "" {
		// Found out now, not after minutes of fitting.
		if err := checkOutputFile(opts.OutputJSON); err != nil {
			return &usageError{fmt.Errorf("--output-json %s: %v", opts.OutputJSON, err)}
		}
	}
	if opts.HoldoutBy != "" && opts.Fit {
		return &usageError{fmt.Errorf("--holdout-by and --fit are exclusive: --holdout-by fits once per left-out group")}
	}
	return nil
}

// scoreMeasured simulates the measured rows and scores them (calibrate.Validate), or fits the
// factors first (--fit), or fits once per left-out group (--holdout-by); fitted is the fitted
// factors of --fit.
func scoreMeasured(ctx context.Context, io ioStreams, opts *validateOptions, rows []calibrate.Row, vo calibrate.Options) (
	rep *calibrate.Report, fitted *calibrate.Factors, err error) {
	if opts.HoldoutBy != "" {
		fo := calibrate.FitOptions{Validate: vo, MaxEvaluations: opts.FitEvaluations}
		if !opts.Quiet {
			fo.Log = func(line string) { fmt.Fprintln(io.Err, "fit:", line) }
		}
		if rep, err = calibrate.Holdout(ctx, rows, opts.HoldoutBy, fo); err != nil {
			return nil, nil, &usageError{err}
		}
	} else if opts.Fit {
		var f calibrate.Factors
		fo := calibrate.FitOptions{Validate: vo, MaxEvaluations: opts.FitEvaluations}
		if !opts.Quiet {
			fo.Log = func(line string) { fmt.Fprintln(io.Err, "fit:", line) }
		}
		f, rep, err = calibrate.Fit(ctx, rows, fo)
		if err != nil {
			return nil, nil, err
		}
		fitted = &f
	} else if rep, err = calibrate.Validate(ctx, rows, vo); err != nil {
		return nil, nil, err
	}
	return rep, fitted, nil
}

// commentText makes CSV text safe inside a YAML comment line: a line break in a cell would
// otherwise end the comment and put the rest of the cell into the YAML.
var commentText = strings.NewReplacer("\r\n", `\r\n`, "\r", `\r`, "\n", `\n`)

// explainRow prints the prediction config of the row on CSV line line: comment lines with the
// row's id, source, harness and notes, then the YAML. A line that holds no data row, or a row
// that cannot be simulated, is a usage error naming the line.
func explainRow(w io.Writer, rows []calibrate.Row, line int, o calibrate.Options, file string) error {
	i := slices.IndexFunc(rows, func(r calibrate.Row) bool { return r.Line == line })
	if i < 0 {
		// A line between two rows' starts is blank or inside a quoted cell of the row above it.
		if j := slices.IndexFunc(rows, func(r calibrate.Row) bool { return r.Line > line }); j > 0 {
			return &usageError{fmt.Errorf("--explain %d: %s: no row starts on line %d: it is blank or inside a quoted cell of the row "+
				"that starts on line %d (give --explain %d for that row)", line, file, line, rows[j-1].Line, rows[j-1].Line)}
		}
		return &usageError{fmt.Errorf("--explain %d: %s has no data row on line %d (data rows are lines %d to %d; the header is line 1)",
			line, file, line, rows[0].Line, rows[len(rows)-1].Line)}
	}
	p, err := calibrate.PlanRow(rows[i], o)
	if err == nil {
		// The roles must be buildable too (weights that fit, a KV pool), as validate would
		// find when it simulates the row: a config predict would refuse is not printed.
		for _, role := range p.Config.Engine.Mode.Roles() {
			if _, err = sim.CapacityBlocks(p.Config, role); err != nil {
				break
			}
		}
	}
	if err != nil {
		hint := ""
		if !o.OneWorkerPerRole && strings.Contains(err.Error(), calibrate.NoIXDeployment) {
			hint = " (--assume-one-worker-per-role simulates such a row as one prefill and one decode worker, noted in the printed config)"
		}
		return &usageError{fmt.Errorf("--explain %d: %s line %d cannot be simulated: %v%s", line, file, line, err, hint)}
	}
	data, err := p.YAML()
	if err != nil {
		return err
	}
	r := rows[i]
	measured := "measured on an unknown date"
	if r.MeasuredAt != "" {
		measured = "measured " + r.MeasuredAt
	}
	fmt.Fprint(w, commentText.Replace(fmt.Sprintf("# %s line %d: %s", file, line, r.ID)), "\n",
		commentText.Replace(fmt.Sprintf("# source %q, %s, %s %s on %s, %s, ISL %d, OSL %d, concurrency %d",
			r.Source, measured, r.Model, r.Backend, r.System, p.Shape, r.ISL, r.OSL, p.Concurrency)), "\n")
	for _, n := range p.Notes {
		fmt.Fprint(w, commentText.Replace("# "+n), "\n")
	}
	_, err = w.Write(data)
	return err
}

// quietNotes is how many of the most frequent notes --quiet prints.
const quietNotes = 20

// renderValidation prints the rows (unless quiet), the groups, the notes (quiet: the quietNotes
// most frequent), the largest errors, the skipped rows and the overall accuracy.
func renderValidation(w io.Writer, rep *calibrate.Report, quiet bool) {
	if !quiet {
		// Each row's shape and notes go on the lines under it, so that every line fits
		// maxLineWidth.
		fmt.Fprintf(w, "%5s %-23s %-8s %-6s %-6s %9s %4s %9s %9s %5s %9s %9s %5s\n",
			"line", "model", "system", "backend", "mode", "isl/osl", "conc",
			"ttft_meas", "ttft_pred", "ape%", "tpot_meas", "tpot_pred", "ape%")
		fmt.Fprintf(w, "%5s %s\n", "", "shape; notes (TTFT and TPOT in ms)")
		for _, r := range rep.Rows {
			if r.Skipped {
				continue
			}
			fmt.Fprintf(w, "%5d %-23s %-8s %-6s %-6s %9s %4d %9.1f %9.1f %5.1f %9.2f %9.2f %5.1f\n",
				r.Line, trunc(r.Model, 23), r.System, r.Backend, r.Mode, fmt.Sprintf("%d/%d", r.ISL, r.OSL), r.Concurrency,
				r.MeasuredTTFTMs, r.PredictedTTFTMs, r.TTFTAPEPct, r.MeasuredTPOTMs, r.PredictedTPOTMs, r.TPOTAPEPct)
			fmt.Fprintln(w, wrapText("      "+strings.Join(append([]string{r.Shape}, r.Notes...), "; "), maxLineWidth, "        "))
		}
		fmt.Fprintln(w)
	}
	s := rep.Summary
	renderAccuracy(w, s)
	renderDecision(w, s.Decision)
	if len(s.Notes) > 0 {
		fmt.Fprintf(w, "Simulated rows with notes (readings of empty cells, departures from the row; see each row's notes):\n")
		shown := s.Notes
		if quiet && len(shown) > quietNotes {
			shown = shown[:quietNotes]
		}
		for _, n := range shown {
			fmt.Fprintln(w, wrapText(fmt.Sprintf("  %4d × %s", n.Rows, n.Note), maxLineWidth, "         "))
		}
		if rest := s.Notes[len(shown):]; len(rest) > 0 {
			fmt.Fprintf(w, "  … and %d notes more, each on fewer rows (every note is in the JSON report: --output-json, --format json)\n", len(rest))
		}
		fmt.Fprintln(w)
	}
	for _, l := range []struct {
		name string
		w    []calibrate.Worst
	}{{"TTFT", s.LargestTTFTErrors}, {"TPOT", s.LargestTPOTErrors}} {
		fmt.Fprintf(w, "Largest %s errors (inspect rather than fit):\n", l.name)
		for _, x := range l.w {
			line := fmt.Sprintf("  line %4d  %6.1f%%  %s", x.Line, x.APEPct, x.ID)
			if runeLen(line) > maxLineWidth { // a long row id goes on a line of its own
				line = fmt.Sprintf("  line %4d  %6.1f%%\n    %s", x.Line, x.APEPct, x.ID)
			}
			fmt.Fprintln(w, line)
		}
	}
	skipped := 0
	for _, r := range rep.Rows {
		if r.Skipped {
			skipped++
		}
	}
	switch {
	case skipped > 0 && quiet:
		// The summary only: skipped rows by reason, each reason once.
		fmt.Fprintf(w, "\nSkipped rows by reason:\n")
		for _, line := range rep.SkippedReasons() {
			for i, l := range strings.Split(line, "\n") {
				fmt.Fprintln(w, wrapText(strings.Repeat("  ", min(i, 1)+1)+l, maxLineWidth, "      "))
			}
		}
	case skipped > 0:
		fmt.Fprintf(w, "\nSkipped rows:\n")
		for _, r := range rep.Rows {
			if r.Skipped {
				for i, l := range strings.Split(fmt.Sprintf("  line %4d  %s: %s", r.Line, r.ID, r.Reason), "\n") {
					if i > 0 {
						l = "             " + l
					}
					fmt.Fprintln(w, wrapText(l, maxLineWidth, "             "))
				}
			}
		}
	}
	if slices.ContainsFunc(rep.Rows, func(r calibrate.RowResult) bool { return r.Skipped && r.Reason == calibrate.NoWorkerCounts }) {
		fmt.Fprintln(w, "hint: --assume-one-worker-per-role simulates a disaggregated row without worker counts as one worker of each role")
	}
	renderOverall(w, rep, s)
}

// renderAccuracy prints the accuracy per (model, system, backend) group and per source, each
// with the median of predicted ÷ measured beside the APEs.
func renderAccuracy(w io.Writer, s calibrate.Summary) {
	fmt.Fprintf(w, "Accuracy per (model, system, backend) group; p/m: the median of each row's predicted ÷ measured (below 1: optimistic)\n")
	fmt.Fprintf(w, "%-33s %-8s %-7s %5s  %9s %11s %8s  %9s %11s %8s\n", "model", "system", "backend", "rows",
		"ttft_mape", "ttft_median", "ttft_p/m", "tpot_mape", "tpot_median", "tpot_p/m")
	for _, g := range s.Groups {
		fmt.Fprintf(w, "%-33s %-8s %-7s %5d  %8.1f%% %10.1f%% %8.2f  %8.1f%% %10.1f%% %8.2f\n", trunc(g.Model, 33), g.System, g.Backend, g.Rows,
			g.TTFTMAPEPct, g.TTFTMedianAPEPct, g.TTFTMedianRatio, g.TPOTMAPEPct, g.TPOTMedianAPEPct, g.TPOTMedianRatio)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "Accuracy per source (the headline covers the rows of a known harness; an assumed harness is scored apart)\n")
	fmt.Fprintf(w, "%-20s %-10s %5s %5s  %9s %11s %8s  %9s %11s %8s\n", "source", "harness", "rows", "skip",
		"ttft_mape", "ttft_median", "ttft_p/m", "tpot_mape", "tpot_median", "tpot_p/m")
	for _, src := range s.Sources {
		renderSourceRow(w, src, "", fmt.Sprint(src.RowsSkipped))
	}
	if len(s.Speculative) > 0 {
		fmt.Fprintf(w, "(\", MTP\": the rows above that run speculative decoding, whose acceptance is published, not measured)\n")
	}
	for _, src := range s.Speculative {
		// Rows with speculative decoding, also counted above: their skips are the source's.
		renderSourceRow(w, src, ", MTP", "")
	}
	fmt.Fprintln(w)
}

// renderSourceRow prints one line of the per-source table: the source's name (with suffix),
// harness, simulated rows, skip (the skipped rows, or empty), and the APEs and median predicted
// ÷ measured of TTFT and TPOT.
func renderSourceRow(w io.Writer, src calibrate.SourceSummary, suffix, skip string) {
	name := src.Source
	if name == "" {
		name = "(none)"
	}
	fmt.Fprintf(w, "%-20s %-10s %5d %5s  %9s %11s %8s  %9s %11s %8s\n", trunc(name+suffix, 20), src.Harness, src.RowsSimulated, skip,
		pctOrNA(src.TTFTMAPEPct), pctOrNA(src.TTFTMedianAPEPct), fixedOrNA(src.TTFTMedianRatio),
		pctOrNA(src.TPOTMAPEPct), pctOrNA(src.TPOTMedianAPEPct), fixedOrNA(src.TPOTMedianRatio))
}

// renderDecision prints the decision quality per (model, GPU, backend, ISL, OSL) group, with the
// SLAs whose pick misses them as measured and those without a pick; nothing without a group.
func renderDecision(w io.Writer, d calibrate.DecisionSummary) {
	if len(d.Groups) == 0 {
		return
	}
	fmt.Fprintf(w, "Decision quality on the headline rows: the row predicted best per SLA (mean TPOT %s ms × mean TTFT %s ms)\n",
		"{8..60}", "{300..5000}")
	fmt.Fprintf(w, "(broken: picks that miss their SLA as measured, optimistic, with how many miss its TTFT and its TPOT bound "+
		"(by_ttft, by_tpot; a pick can miss both); no_pick: SLAs no row is predicted to meet, pessimistic)\n")
	fmt.Fprintf(w, "%-26s %-8s %-7s %9s %4s %4s  %7s %6s %9s %6s %7s %7s %7s\n", "model", "system", "backend", "isl/osl", "rows", "slas",
		"regret", "exact", "rank_corr", "broken", "by_ttft", "by_tpot", "no_pick")
	for _, g := range d.Groups {
		fmt.Fprintf(w, "%-26s %-8s %-7s %9s %4d %4d  %7s %6s %9s %6d %7d %7d %7d\n", trunc(g.Model, 26), g.System, g.Backend,
			fmt.Sprintf("%d/%d", g.ISL, g.OSL), g.Rows, g.SLAs, pctOrNA(scale100(g.MeanRegret)), pctOrNA(scale100(g.ExactShare)),
			fixedOrNA(g.RankCorrelation), g.BrokenSLAs, g.BrokenByTTFT, g.BrokenByTPOT, g.UnansweredSLAs)
	}
	fmt.Fprintln(w)
}

// renderOverall prints the validation's closing figures: each left-out fold and the pooled
// figures under --holdout-by, else the headline with every skipped row counted.
func renderOverall(w io.Writer, rep *calibrate.Report, s calibrate.Summary) {
	if h := rep.Holdout; h != nil {
		fmt.Fprintf(w, "\nLeft out by %s (each fitted on the other %ss only):\n", h.By, h.By)
		for _, f := range h.Folds {
			fmt.Fprintf(w, "  %-34s fitted on %4d rows, scored %4d: %s\n", trunc(f.Group, 34), f.TrainRows, f.TestRows, f.Summary)
		}
		fmt.Fprintf(w, "\n%s\n", wrapText(fmt.Sprintf("Overall, pooled over the left-out rows: %s", s), maxLineWidth, "  "))
		return
	}
	overall := fmt.Sprintf("Overall: %s", s)
	if all := skippedRows(rep); all > s.RowsSkipped {
		// The headline scores one harness; rows outside it (e.g. a line with no source) were
		// skipped too and must not read as none.
		overall += fmt.Sprintf("; %d skipped in all (%d outside the headline's rows)", all, all-s.RowsSkipped)
	}
	fmt.Fprintf(w, "\n%s\n", wrapText(overall, maxLineWidth, "  "))
}

// skippedRows counts rep's skipped rows, of every source.
func skippedRows(rep *calibrate.Report) int {
	n := 0
	for _, r := range rep.Rows {
		if r.Skipped {
			n++
		}
	}
	return n
}

// pctOrNA formats a percentage with one decimal, or N/A for nil.
func pctOrNA(x *float64) string {
	if x == nil {
		return "N/A"
	}
	return fmt.Sprintf("%.1f%%", *x)
}

// fixedOrNA formats x with two decimals, or N/A for nil.
func fixedOrNA(x *float64) string {
	if x == nil {
		return "N/A"
	}
	return fmt.Sprintf("%.2f", *x)
}

// scale100 is x × 100 (a fraction as a percentage), nil for nil.
func scale100(x *float64) *float64 {
	if x == nil {
		return nil
	}
	v := *x * 100
	return &v
}

func trunc(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-1] + "…"
}

// checkOutputFile checks, before any work, that a report can be written to path: its directory
// exists and takes a new file, and path is absent or a validation report written before (a
// regular file holding a JSON object with a "summary" key, or "runs" and "mape" for AIPerf
// runs). The report replaces path
// atomically (a new file renamed over it), so a directory, a symbolic link, a device or a named
// pipe there is refused rather than replaced, and so is any other file (the measured CSV given
// by mistake, a config, another tool's JSON), whose contents would be lost.
func checkOutputFile(path string) error {
	if info, err := os.Lstat(path); err == nil {
		switch {
		case info.IsDir():
			return fmt.Errorf("is a directory; give the path of the JSON file to write, e.g. %s", filepath.Join(path, "validation.json"))
		case !info.Mode().IsRegular():
			return fmt.Errorf("is %s, not a regular file; the report replaces its path with a new file: give a regular file's path", config.FileKind(info.Mode()))
		case !isValidationReport(path):
			return fmt.Errorf("exists and is not a validation report (a JSON object with a \"summary\", or \"runs\" and \"mape\"); it would be replaced: remove it or give another path")
		}
	}
	return checkWritableDir(filepath.Dir(path))
}

// isValidationReport reports whether the file at path is a JSON object with a "summary" key (a
// measured file's report) or "runs" and "mape" keys (AIPerf runs' report).
func isValidationReport(path string) bool {
	data, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(data, &top) != nil {
		return false
	}
	_, summary := top["summary"]
	_, runs := top["runs"]
	_, mape := top["mape"]
	return summary || runs && mape
}

// checkWritableDir reports why dir cannot receive a new file: it does not exist, is not a
// directory, or a file cannot be created in it.
func checkWritableDir(dir string) error {
	info, err := os.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("directory %s does not exist; create it first", dir)
	}
	if err != nil {
		return fmt.Errorf("directory %s: %v", dir, config.PathCause(err))
	}
	if !info.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	f, err := os.CreateTemp(dir, ".servesweep-write-check-*")
	if err != nil {
		return fmt.Errorf("cannot create a file in %s: %v", dir, config.PathCause(err))
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}
