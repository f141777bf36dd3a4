package sweep

import (
	"context"
	"os"
	"path/filepath"

	"github.com/servesweep/servesweep/grid"
	"github.com/servesweep/servesweep/results"
)

// ShardFiles are the files of shard index of count in a sharded sweep's output directory dir,
// which the shards share: its part of results.parquet, its probe table (written only under a
// capacity search) and its journal.
type ShardFiles struct {
	Part, Probes, Journal string
}

// FilesOfShard returns the files of shard sh in dir: dir/results/part-IIIII-of-NNNNN.parquet,
// dir/probes/probes-IIIII-of-NNNNN.parquet and dir/journals/part-IIIII-of-NNNNN.jsonl.
func FilesOfShard(dir string, sh grid.Shard) ShardFiles {
	return ShardFiles{
		Part:    filepath.Join(dir, results.PartsDir, results.PartName(sh.Index, sh.Count)),
		Probes:  filepath.Join(dir, results.ProbesDir, results.ProbesPartName(sh.Index, sh.Count)),
		Journal: filepath.Join(dir, results.JournalsDir, results.PartJournalName(sh.Index, sh.Count)),
	}
}

// ShardOutcome is what RunShard leaves: the run's outcome, the part's metadata as written, and
// the shard's points.
type ShardOutcome struct {
	*Outcome
	Meta   *results.PartMeta
	Points []grid.Point
}

// RunShard simulates the points of shard sh of the expansion x (Run, with opts.JournalPath the
// shard's journal, files.Journal) and writes its part, with the metadata merge checks (spec hash,
// shard sizes, the points without a result, the manifest of NewManifest), and under a capacity
// search its probe table. The caller has checked the output directory and claimed the journal
// for the spec hash. Errors: those of Run, and the part or probe table that cannot be written.
func RunShard(ctx context.Context, x *grid.Expansion, sh grid.Shard, files ShardFiles, opts Options, examplePrices bool) (*ShardOutcome, error) {
	points := x.ShardPoints(sh)
	if err := x.MaterializeContext(ctx, points); err != nil {
		return nil, err // ctx's error when interrupted: nothing simulated, the journal not opened
	}
	if err := os.MkdirAll(filepath.Dir(files.Part), 0o755); err != nil {
		return nil, err
	}
	opts.JournalPath = files.Journal
	out, err := Run(ctx, points, opts)
	if err != nil {
		return nil, err
	}
	have := make(map[string]bool, len(out.Rows))
	for _, r := range out.Rows {
		have[r.PointID] = true
	}
	var missing []string
	for _, p := range points {
		if !have[p.ID] {
			missing = append(missing, p.ID)
		}
	}
	meta := &results.PartMeta{SpecHash: x.SpecHash(), ShardIndex: sh.Index, ShardCount: sh.Count, ShardSizes: x.ShardSizes(sh.Count),
		MissingPointIDs: missing, Manifest: NewManifest(x, out, examplePrices)}
	if err := results.WritePart(files.Part, out.Rows, meta); err != nil {
		return nil, err
	}
	if opts.Capacity != nil {
		if err := os.MkdirAll(filepath.Dir(files.Probes), 0o755); err != nil {
			return nil, err
		}
		if err := results.WriteProbes(files.Probes, out.Rows); err != nil {
			return nil, err
		}
	}
	return &ShardOutcome{Outcome: out, Meta: meta, Points: points}, nil
}
