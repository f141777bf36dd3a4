#!/usr/bin/env bash
# servesweep on Slurm: one shard of a sweep per task of a job array, then a dependent merge.
#
# Submit both from the repository root (or anywhere, with SPEC and OUT set):
#
#   SHARDS=4 SPEC=examples/default-sweep.yaml OUT=$PWD/out/cluster-sweep \
#     bash examples/cluster/slurm-array.sh
#
# Run outside a Slurm job, the script submits itself as an array of SHARDS tasks
# (sbatch --array=0-(SHARDS-1)) and a merge job that starts when every task has ended
# (--dependency=afterany, so a failed task shows up in the merge's log as a missing shard
# rather than blocking it). Inside the array, each task runs `servesweep sweep` on shard
# SLURM_ARRAY_TASK_ID of SHARDS; --shard-count is passed explicitly so that a single task
# resubmitted later (sbatch --array=2 ...) still knows the shard count. A resubmitted task
# resumes from its shard's journal.
#
# OUT must be on a file system every node sees (NFS, Lustre, GPFS, ...). Shards write
# OUT/results/part-IIIII-of-NNNNN.parquet and OUT/journals/part-IIIII-of-NNNNN.jsonl; the merge
# writes OUT/results.parquet, pareto.json, report.md, pareto.png and recommendations/.
#
# Variables (all optional; the script passes them on to the tasks with --export):
#   SHARDS      number of shards = array tasks (default 4)
#   SPEC        the sweep spec (default examples/default-sweep.yaml)
#   OUT         the shared output directory (default $PWD/out/cluster-sweep)
#   SERVESWEEP  the servesweep binary: a command on PATH or a path (default `servesweep`;
#               e.g. SERVESWEEP=$PWD/bin/servesweep after `make build`). It must run on the
#               compute nodes too; the script checks it with `command -v` before submitting
#               (a relative path is made absolute) and in each task.
#
# Rerun one shard by hand:
#   sbatch --array=2 --export=ALL,SHARDS=4,SPEC=$SPEC,OUT=$OUT,SERVESWEEP=$SERVESWEEP examples/cluster/slurm-array.sh
# then merge again: servesweep merge --results "$OUT"
#
#SBATCH --job-name=servesweep
#SBATCH --array=0-3
#SBATCH --cpus-per-task=2
#SBATCH --mem=2G
#SBATCH --time=01:00:00
#SBATCH --output=servesweep-%A_%a.out
set -euo pipefail

SHARDS="${SHARDS:-4}"
SPEC="${SPEC:-examples/default-sweep.yaml}"
OUT="${OUT:-$PWD/out/cluster-sweep}"
SERVESWEEP="${SERVESWEEP:-servesweep}"

if ! command -v "$SERVESWEEP" >/dev/null 2>&1; then
  echo "slurm-array.sh: the servesweep binary '$SERVESWEEP' is not found or not executable${SLURM_JOB_ID:+ on $(hostname)};" \
    "build it (make build) and set SERVESWEEP to its path, e.g. SERVESWEEP=\$PWD/bin/servesweep, or put servesweep on PATH" >&2
  exit 2
fi
if [[ "$SERVESWEEP" == */* && "$SERVESWEEP" != /* ]]; then
  SERVESWEEP="$PWD/$SERVESWEEP" # the tasks and the merge may start in another directory
fi

if [[ -z "${SLURM_ARRAY_TASK_ID:-}" ]]; then
  if [[ -n "${SLURM_JOB_ID:-}" ]]; then
    echo "slurm-array.sh: inside Slurm job $SLURM_JOB_ID but not in a job array; submit it with sbatch --array=0-$((SHARDS - 1))" >&2
    exit 2
  fi
  if ! [[ "$SHARDS" =~ ^[1-9][0-9]*$ ]]; then
    echo "slurm-array.sh: SHARDS must be a whole number >= 1, got '$SHARDS'" >&2
    exit 2
  fi
  array_job=$(sbatch --parsable --array="0-$((SHARDS - 1))" \
    --export="ALL,SHARDS=$SHARDS,SPEC=$SPEC,OUT=$OUT,SERVESWEEP=$SERVESWEEP" "$0")
  array_job="${array_job%%;*}"
  merge_job=$(sbatch --parsable --job-name=servesweep-merge --dependency="afterany:$array_job" \
    --cpus-per-task=1 --mem=2G --time=00:30:00 --output="servesweep-merge-%j.out" \
    --wrap="$(printf '%q merge --results %q' "$SERVESWEEP" "$OUT")")
  echo "submitted shards as job array $array_job (tasks 0-$((SHARDS - 1))) and the merge as job $merge_job"
  echo "results: $OUT/results.parquet, report: $OUT/report.md"
  exit 0
fi

# One task of the array: shard SLURM_ARRAY_TASK_ID of SHARDS.
exec "$SERVESWEEP" sweep -c "$SPEC" --output-dir "$OUT" --shard-count "$SHARDS" \
  --parallelism "${SLURM_CPUS_PER_TASK:-1}" --quiet
