package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/servesweep/servesweep/results"
	"github.com/servesweep/servesweep/sweep"
	"github.com/spf13/cobra"
)

// mergeOptions are the flags of `servesweep merge`.
type mergeOptions struct {
	ResultsDir      string
	OutputDir       string
	RequireComplete bool
}

func newMergeCmd(io ioStreams, runF func(context.Context, *mergeOptions) error) *cobra.Command {
	opts := &mergeOptions{}
	cmd := &cobra.Command{
		Use:   "merge --results DIR [--output-dir OUT] [--require-complete]",
		Short: "Merge the parts of a sharded sweep and write its results and report",
		Long: `Merge the parts that the shards of a sweep (servesweep sweep --shard I/N) wrote under DIR
(every part-*.parquet at any depth, usually DIR/results/), and write what an unsharded run
writes: results.parquet, sweep.json, pareto.json, report.md, pareto.png and
recommendations/NNNN.yaml, into OUT (default DIR).

Every part must carry the same spec hash; parts of different specs are refused (exit 2). Rows
of the same point from several parts (reruns) are kept once, preferring status ok. Shards
without a part and unfinished points are reported by shard index; the merge still writes what
it has, marked incomplete in report.md and pareto.json, and exits 0 with a warning (exit 1 with
--require-complete).`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 0 {
				return &usageError{fmt.Errorf("merge takes no positional arguments, got %q", args)}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runMerge(io, opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.ResultsDir, "results", "", "the sharded sweep's output directory, holding results/part-*.parquet (required)")
	f.StringVar(&opts.OutputDir, "output-dir", "", "where to write the merged results and report (default: --results)")
	f.BoolVar(&opts.RequireComplete, "require-complete", false, "exit 1 (after writing) when points or shards are missing")
	mustDirname(cmd, "results")
	mustDirname(cmd, "output-dir")
	return cmd
}

func runMerge(io ioStreams, opts *mergeOptions) error {
	stdout := newWrapWriter(io.Out)
	defer stdout.Flush()
	io.Out = stdout
	if opts.ResultsDir == "" {
		return &usageError{errors.New("--results is required: the output directory of the sweep's shards")}
	}
	st, err := os.Stat(opts.ResultsDir)
	if errors.Is(err, os.ErrNotExist) {
		return &usageError{fmt.Errorf("--results %s does not exist; give the --output-dir of servesweep sweep --shard I/N", opts.ResultsDir)}
	}
	if err != nil || !st.IsDir() {
		return &usageError{fmt.Errorf("--results %s is not a directory; give the --output-dir of servesweep sweep --shard I/N", opts.ResultsDir)}
	}
	paths, err := results.FindParts(opts.ResultsDir)
	if err != nil {
		return err
	}
	if len(paths) == 0 {
		if _, err := os.Stat(filepath.Join(opts.ResultsDir, results.JournalFile)); err == nil {
			return &usageError{fmt.Errorf("--results %s holds an unsharded sweep (%s), whose results need no merge: "+
				"servesweep report --results %s analyses them", opts.ResultsDir, results.JournalFile, opts.ResultsDir)}
		}
		return &usageError{fmt.Errorf("--results %s holds no part-*.parquet file; run servesweep sweep --shard I/N --output-dir %s first",
			opts.ResultsDir, opts.ResultsDir)}
	}
	out := opts.OutputDir
	if out == "" {
		out = opts.ResultsDir
	}
	if _, err := os.Stat(filepath.Join(out, results.JournalFile)); err == nil {
		return &usageError{fmt.Errorf("--output-dir %s holds an unsharded sweep (%s); merging there would replace its results, "+
			"so give another --output-dir", out, results.JournalFile)}
	}
	if meta, err := results.ReadPartMeta(paths[0]); err == nil {
		_, release := holdHeapFor(meta.Manifest.Counts.SelectedPoints)
		defer release()
	}
	merged, err := sweep.Merge(paths, opts.ResultsDir, out)
	var pe *results.PartError
	var sme *results.SpecMismatchError
	var nd *sweep.NotDirError
	switch {
	case errors.As(err, &pe):
		return &usageError{fmt.Errorf("%w; remove that part file and rerun the shard that wrote it (servesweep sweep "+
			"--shard I/N --output-dir %s: its journal keeps the finished points), then merge again", err, opts.ResultsDir)}
	case errors.As(err, &sme):
		return &usageError{err}
	case errors.As(err, &nd):
		return &usageError{fmt.Errorf("--output-dir %s exists and is not a directory", out)}
	case err != nil:
		return err
	}
	return printMerge(io, opts, out, merged)
}

// printMerge prints the merge into out: its counts, front and files, and what an incomplete
// merge lacks (an error with --require-complete). No candidate point is an error (exit 1).
func printMerge(io ioStreams, opts *mergeOptions, out string, merged *sweep.Merged) error {
	rows, m, a, w := merged.Rows, merged.Manifest, merged.Analysis, merged.Written
	mi, c := m.Merge, m.Counts
	parts := results.Plural(len(mi.Parts), "part")
	fmt.Fprintf(io.Out, "servesweep merge: %s of %s (spec hash %s):\n%d rows of %d selected points (%d duplicate rows removed): "+
		"%s\n", parts, m.Spec, mi.SpecHash, len(rows), c.SelectedPoints, mi.DuplicateRows,
		statusCounts(c.OK, c.Degraded, c.Infeasible, c.Failed, c.TimedOut))
	switch {
	case mi.Complete || opts.RequireComplete:
	case mi.MissingPoints > 0:
		// The warning on standard error says what is missing; standard output alone must not
		// read as a whole sweep's answer.
		fmt.Fprintf(io.Out, "PARTIAL: %d of %d selected points have results; the front below is of those points only (see the warning)\n",
			c.SelectedPoints-mi.MissingPoints, c.SelectedPoints)
	default:
		fmt.Fprintln(io.Out, "PARTIAL: the merge is incomplete (see the warning)")
	}
	if mi.ConflictingDuplicates > 0 {
		fmt.Fprintf(io.Err, "warning: %d duplicate rows differ from the kept row in simulated columns (parts written by different servesweep versions?)\n",
			mi.ConflictingDuplicates)
	}
	printFront(io.Out, rows, a, m, w)
	fmt.Fprintf(io.Out, "Saved results to: %s (report: %s)\n", filepath.Join(out, results.ParquetFile), w.Report)
	if !mi.Complete {
		var b strings.Builder
		if mi.MissingPoints > 0 {
			fmt.Fprintf(&b, "incomplete merge: %d of %d selected points have no result:\n", mi.MissingPoints, c.SelectedPoints)
		} else {
			b.WriteString("incomplete merge: every selected point has a result, but:\n")
		}
		for _, line := range mi.MissingLines(20) {
			fmt.Fprintf(&b, "  %s\n", line)
		}
		b.WriteString("  the outputs are marked incomplete (report.md, pareto.json); run those shards again " +
			"(servesweep sweep --shard I/N with the same spec, --set and --output-dir resumes them), then merge again")
		if opts.RequireComplete {
			return errors.New(b.String())
		}
		fmt.Fprintln(io.Err, "warning: "+b.String())
	}
	if len(a.Candidates) == 0 {
		return fmt.Errorf("no feasible point: none of the %d rows passed the filters (%s); see %s%s", len(rows), results.CountList(a.Excluded), w.Report, results.NoFeasibleHint(rows, a, out))
	}
	return nil
}
