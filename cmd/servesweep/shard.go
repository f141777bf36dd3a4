package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/servesweep/servesweep/grid"
	"github.com/servesweep/servesweep/results"
	"github.com/servesweep/servesweep/sweep"
)

// Environment variables that give a sweep its shard when --shard is not set.
const (
	// envK8sIndex is set by Kubernetes in each pod of an Indexed Job (0 to completions-1).
	envK8sIndex = "JOB_COMPLETION_INDEX"
	// envSlurmIndex and envSlurmCount are set by Slurm in each task of a job array.
	envSlurmIndex = "SLURM_ARRAY_TASK_ID"
	envSlurmCount = "SLURM_ARRAY_TASK_COUNT"
	// envShardCount gives the shard count with an index from the environment (Kubernetes does
	// not expose the completions count to the pod; set it in the manifest).
	envShardCount = "SERVESWEEP_SHARD_COUNT"
)

// shardChoice is the shard a sweep runs and where it came from.
type shardChoice struct {
	grid.Shard
	// Source says which flags or environment variables gave it, for the log.
	Source string
}

// resolveShard decides which shard the sweep runs, or nil for the whole sweep. --shard I/N
// wins (and the environment is then ignored); without it the index comes from
// JOB_COMPLETION_INDEX (Kubernetes Indexed Job) or SLURM_ARRAY_TASK_ID (Slurm job array), and the
// count from --shard-count, else SERVESWEEP_SHARD_COUNT, else (Slurm only)
// SLURM_ARRAY_TASK_COUNT. Usage errors (exit 2) naming the flag or variable: bad values, both
// index variables set (ambiguous), and a shard count (--shard-count or SERVESWEEP_SHARD_COUNT)
// without any index, which would otherwise run the whole sweep in every task.
func resolveShard(opts *sweepOptions, getenv func(string) (string, bool)) (*shardChoice, error) {
	countSet := opts.shardCountSet || opts.ShardCount != 0
	if countSet && (opts.ShardCount < 1 || opts.ShardCount > grid.MaxShards) {
		return nil, &usageError{fmt.Errorf("--shard-count must be between 1 and %d, got %d", grid.MaxShards, opts.ShardCount)}
	}
	if opts.Shard != "" {
		s, err := grid.ParseShard(opts.Shard)
		if err != nil {
			return nil, &usageError{fmt.Errorf("--shard: %v", err)}
		}
		if countSet && opts.ShardCount != s.Count {
			return nil, &usageError{fmt.Errorf("--shard-count %d contradicts --shard %s; give one of them", opts.ShardCount, opts.Shard)}
		}
		return &shardChoice{Shard: s, Source: "--shard " + s.String()}, nil
	}
	lookup := func(name string) (string, bool) {
		if getenv == nil {
			return "", false
		}
		v, ok := getenv(name)
		v = strings.TrimSpace(v)
		return v, ok && v != ""
	}
	k8sText, k8sOK := lookup(envK8sIndex)
	slurmText, slurmOK := lookup(envSlurmIndex)
	if k8sOK && slurmOK {
		return nil, &usageError{fmt.Errorf("both %s=%s (Kubernetes Indexed Job) and %s=%s (Slurm job array) are set, so the shard "+
			"index is ambiguous: unset one of them, or pass --shard I/N", envK8sIndex, k8sText, envSlurmIndex, slurmText)}
	}
	indexVar, indexText := envK8sIndex, k8sText
	if slurmOK {
		indexVar, indexText = envSlurmIndex, slurmText
	}
	if !k8sOK && !slurmOK {
		// A count without an index would silently run the whole sweep in every task.
		if countSet {
			return nil, &usageError{fmt.Errorf("--shard-count needs a shard index: pass --shard I/N, or run where %s "+
				"(Kubernetes Indexed Job) or %s (Slurm job array) is set", envK8sIndex, envSlurmIndex)}
		}
		if text, ok := lookup(envShardCount); ok {
			return nil, &usageError{fmt.Errorf("%s=%s gives a shard count but no shard index is set: pass --shard I/N, or run where %s "+
				"(Kubernetes Indexed Job) or %s (Slurm job array) is set, or unset %s to run the whole sweep",
				envShardCount, text, envK8sIndex, envSlurmIndex, envShardCount)}
		}
		return nil, nil
	}
	index, err := strconv.Atoi(indexText)
	if err != nil || index < 0 {
		return nil, &usageError{fmt.Errorf("environment variable %s must be a whole number >= 0 (the 0-based shard index), got %q",
			indexVar, indexText)}
	}
	var count int
	var countSrc string
	switch {
	case countSet:
		count, countSrc = opts.ShardCount, "--shard-count "+strconv.Itoa(opts.ShardCount)
	default:
		countVar := envShardCount
		text, ok := lookup(envShardCount)
		if !ok && indexVar == envSlurmIndex {
			countVar = envSlurmCount
			text, ok = lookup(envSlurmCount)
		}
		if !ok {
			return nil, &usageError{fmt.Errorf("%s=%d gives the shard index but the shard count is unknown: pass --shard-count N "+
				"or set %s to the Job's completions", indexVar, index, envShardCount)}
		}
		count, err = strconv.Atoi(text)
		if err != nil || count < 1 || count > grid.MaxShards {
			return nil, &usageError{fmt.Errorf("environment variable %s must be a whole number between 1 and %d (the shard count), got %q",
				countVar, grid.MaxShards, text)}
		}
		countSrc = countVar + "=" + text
	}
	s := grid.Shard{Index: index, Count: count}
	if s.Index >= s.Count {
		hint := ""
		if indexVar == envSlurmIndex {
			hint = "; number the array from 0 (sbatch --array=0-" + strconv.Itoa(count-1) + "), and pass --shard-count N when resubmitting only some tasks"
		}
		return nil, &usageError{fmt.Errorf("%s=%d is not a shard of %s: the shard index must be < the shard count (0 to %d)%s",
			indexVar, index, countSrc, count-1, hint)}
	}
	return &shardChoice{Shard: s, Source: fmt.Sprintf("%s=%d and %s", indexVar, index, countSrc)}, nil
}

// runShard simulates the points of one shard and writes its part
// (<output-dir>/results/part-IIIII-of-NNNNN.parquet) with its own journal
// (<output-dir>/journals/part-IIIII-of-NNNNN.jsonl), so shards can share the output directory;
// under a capacity search also its probes (<output-dir>/probes/probes-IIIII-of-NNNNN.parquet).
func runShard(ctx context.Context, io ioStreams, opts *sweepOptions, x *grid.Expansion, sh *shardChoice, run sweep.Options) error {
	if opts.seedCheckSet && opts.SeedCheck {
		fmt.Fprintln(io.Err, "warning: --seed-check: a shard runs no seed check (its front is partial, and merge simulates nothing)")
	}
	hash := x.SpecHash()
	jsonOut := opts.Format == formatJSON
	files := sweep.FilesOfShard(opts.OutputDir, sh.Shard)
	// The directory is checked first: a refusal leaves stdout empty.
	if err := checkShardDir(opts, sh.Shard, files, hash, x.SpecIdentity()); err != nil {
		return err
	}
	if !jsonOut {
		fmt.Fprintf(io.Out, "servesweep sweep: shard %s (from %s): %d of %d selected points of %s (spec hash %s)\n",
			sh.Shard, sh.Source, len(x.ShardPoints(sh.Shard)), len(x.Points), x.Spec.File, hash)
	}
	release := holdSweepMemory(len(x.ShardPoints(sh.Shard)))
	defer release()
	start := time.Now()
	so, err := sweep.RunShard(ctx, x, sh.Shard, files, run, examplePrices(opts, x.Spec))
	if err != nil && ctx.Err() != nil && errors.Is(err, context.Canceled) {
		// Interrupted while its points' configs were prepared, before any ran: the claim of a
		// journal never opened is discarded (a journal with records is kept), as a whole sweep's.
		_, _ = results.DiscardEmptyJournal(files.Journal)
		return &interruptedError{fmt.Sprintf("interrupted while preparing the points' configs of shard %s: nothing was simulated", sh.Shard)}
	}
	if err != nil {
		return lockedErr(err, fmt.Sprintf("shard %s of --output-dir %s", sh.Shard, opts.OutputDir))
	}
	elapsed, out := time.Since(start), so.Outcome
	shardProbes := ""
	if run.Capacity != nil {
		shardProbes = files.Probes
	}
	interrupted := func() error {
		return &interruptedError{msg: fmt.Sprintf("interrupted: %d of %d points of shard %s finished and saved; to resume, rerun: %s",
			len(out.Rows), len(so.Points), sh.Shard, resumeCommand(opts, "--shard", sh.Shard.String()))}
	}
	if jsonOut {
		if msg := firstFailure(out.Rows); msg != "" {
			fmt.Fprintln(io.Err, "warning: "+msg)
		}
		if out.Interrupted {
			return interrupted()
		}
		return printJSON(io.Out, shardSweepDoc{Counts: so.Meta.Manifest.Counts, Settings: so.Meta.Manifest.Settings,
			Shard: *newShardDoc(sh, len(so.Points), hash), Files: shardFilesDoc{Journal: files.Journal, Part: files.Part, Probes: shardProbes}})
	}
	printRunCounts(io.Out, out, elapsed)
	fmt.Fprintf(io.Out, "Saved part to: %s (journal: %s)\n", files.Part, files.Journal)
	if out.Interrupted {
		return interrupted()
	}
	fmt.Fprintf(io.Out, "When all %d shards are done, merge them: servesweep merge --results %s\n", sh.Count, shellQuote(opts.OutputDir))
	return nil
}

// checkShardDir readies the output directory for shard sh and claims its journal for the spec
// hash (sweep.PrepareShardDir, --overwrite removing the shard's own files).
func checkShardDir(opts *sweepOptions, sh grid.Shard, files sweep.ShardFiles, hash string, identity []string) error {
	if _, err := os.Stat(filepath.Join(opts.OutputDir, results.JournalFile)); err == nil {
		// Shards would not resume the whole sweep's finished points, and merge refuses the mix.
		return &usageError{fmt.Errorf("--output-dir %s holds an unsharded sweep (%s): a shard would not reuse its finished "+
			"points, and merge refuses a directory that mixes the two; rerun without --shard to resume it, or give the shards "+
			"another --output-dir", opts.OutputDir, results.JournalFile)}
	}
	err := sweep.PrepareShardDir(opts.OutputDir, sh, files, opts.Overwrite, hash, identity...)
	if err != nil {
		err = specErr(damagedSpecErr(lockedErr(dirErr(err), "--output-dir "+opts.OutputDir)),
			"rerun the shard with the spec and --set overrides it was started with, or pass --overwrite to start it over")
	}
	return err
}

// printRunCounts prints a run's counts by status, its time and its rate in points per second.
func printRunCounts(w io.Writer, out *sweep.Outcome, elapsed time.Duration) {
	rate := 0.0
	if s := elapsed.Seconds(); s > 0 {
		rate = float64(out.Simulated) / s
	}
	fmt.Fprintf(w, "simulated %d, resumed %d: %s in %.1fs (%.1f points/s)\n",
		out.Simulated, out.Resumed, statusCounts(out.OK, out.Degraded, out.Infeasible, out.Failed, out.TimedOut), elapsed.Seconds(), rate)
}
