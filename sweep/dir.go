package sweep

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/servesweep/servesweep/grid"
	"github.com/servesweep/servesweep/results"
)

// DirProblem says why an output directory cannot take a sweep or a shard (DirError.Problem).
type DirProblem int

// Output-directory problems.
const (
	// DirNotDirectory: the path exists and is not a directory.
	DirNotDirectory DirProblem = iota
	// DirCannotCreate: the directory cannot be created (Err).
	DirCannotCreate
	// DirNotEmpty: a non-empty directory without a sweep journal to resume (Names lists what
	// it holds).
	DirNotEmpty
	// DirManifestIsDir: the sweep's manifest path (Path) is a directory.
	DirManifestIsDir
	// DirBadManifest: the sweep's manifest is not one this servesweep reads (Err).
	DirBadManifest
	// DirOtherSpec: the directory holds a sweep of another spec (Hash; this one WantHash).
	DirOtherSpec
	// DirShardCount: the directory holds shards of another count (Count, one of them at Path).
	DirShardCount
	// DirBadPart: a part in the directory cannot be read (Path, Err).
	DirBadPart
	// DirOtherSpecPart: the shard's own part (Own) or another part (Path) belongs to another
	// spec (Spec, Hash; this one WantHash).
	DirOtherSpecPart
	// DirOutputIsDir: a path where the resumed sweep writes one of its files (results, report,
	// front, plot; Path) is a directory, which would fail the sweep only after every point had
	// run (the files are written by renaming over the path).
	DirOutputIsDir
)

// DirError says why the output directory Dir cannot take a sweep or a shard: Problem, with the
// fields that problem sets.
type DirError struct {
	Dir     string
	Problem DirProblem
	// Path is the file concerned; Names the entries of a directory that is not empty.
	Path  string
	Names []string
	// Hash is the spec hash found (Spec the spec's file name) and WantHash this sweep's.
	Hash, WantHash, Spec string
	// Changes says what differs between the two specs (results.SpecChanges; DirOtherSpec and
	// DirOtherSpecPart, when the journal of the sweep or shard recorded its spec's identity).
	Changes []string
	// Count is the shard count found; Shard this shard; Own says Path is the shard's own part.
	Count int
	Shard grid.Shard
	Own   bool
	// Err is the underlying cause.
	Err error
}

// Error says what is wrong with the directory.
func (e *DirError) Error() string {
	switch e.Problem {
	case DirNotDirectory:
		return fmt.Sprintf("%s exists and is not a directory", e.Dir)
	case DirCannotCreate:
		return fmt.Sprintf("%s: cannot create it: %v", e.Dir, e.Err)
	case DirNotEmpty:
		return fmt.Sprintf("%s is not empty (%s) and holds no sweep journal (%s) to resume", e.Dir, strings.Join(e.Names, ", "), results.JournalFile)
	case DirManifestIsDir:
		return fmt.Sprintf("%s cannot be resumed: %s is a directory where the sweep writes its manifest", e.Dir, e.Path)
	case DirBadManifest:
		return fmt.Sprintf("%s cannot be resumed: %v", e.Dir, e.Err)
	case DirOtherSpec:
		return fmt.Sprintf("%s holds a sweep of another spec, of other contents of its trace files, or of another servesweep build (spec hash %s, this one %s%s): "+
			"resuming would mix the two", e.Dir, e.Hash, e.WantHash, results.ChangesText(e.Changes))
	case DirShardCount:
		return fmt.Sprintf("%s holds shards of a sweep split into %d (%s), but this shard is %s, split into %d", e.Dir, e.Count, e.Path, e.Shard, e.Shard.Count)
	case DirBadPart:
		return fmt.Sprintf("%s: %v", e.Dir, e.Err)
	case DirOtherSpecPart:
		if e.Own {
			return fmt.Sprintf("%s was written by another sweep spec, trace contents or servesweep build (%s, spec hash %s; this one is %s%s)", e.Path, e.Spec, e.Hash, e.WantHash, results.ChangesText(e.Changes))
		}
		return fmt.Sprintf("%s holds parts of another sweep spec, trace contents or servesweep build (%s: %s, spec hash %s; this one is %s%s)", e.Dir, e.Path, e.Spec, e.Hash, e.WantHash, results.ChangesText(e.Changes))
	case DirOutputIsDir:
		return fmt.Sprintf("%s cannot be resumed: %s is a directory where the sweep writes a file", e.Dir, e.Path)
	}
	return fmt.Sprintf("%s: %v", e.Dir, e.Err)
}

// Unwrap returns the underlying cause.
func (e *DirError) Unwrap() error { return e.Err }

// PrepareDir readies dir for an unsharded sweep of spec hash specHash (and identity,
// grid.Expansion.SpecIdentity, which a refusal compares with the directory's to say what differs)
// and claims its journal for the spec (results.ClaimJournalSpec): a missing directory is created; a non-empty one must hold
// a sweep journal of the same spec (the sweep resumes; its sweep.json, when present, carries the
// spec hash) unless overwrite is set, which deletes the sweep's own files (and nothing else)
// first. fresh says the journal is new (none before, or overwrite removed it). Errors: a
// *DirError, a *results.JournalLockedError (overwrite while another process writes the journal),
// a *results.JournalSpecError, or the file system's.
func PrepareDir(dir string, overwrite bool, specHash string, identity ...string) (fresh bool, err error) {
	if err := checkDir(dir, overwrite, specHash, identity); err != nil {
		return false, err
	}
	journal := filepath.Join(dir, results.JournalFile)
	_, statErr := os.Stat(journal)
	fresh = errors.Is(statErr, os.ErrNotExist)
	if err := results.ClaimJournalSpec(journal, specHash, identity...); err != nil {
		return false, err
	}
	return fresh, nil
}

// checkDir is PrepareDir without the journal's claim.
func checkDir(dir string, overwrite bool, specHash string, identity []string) error {
	st, err := os.Stat(dir)
	if errors.Is(err, os.ErrNotExist) {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return &DirError{Dir: dir, Problem: DirCannotCreate, Err: err}
		}
		return nil
	}
	if err != nil {
		return err
	}
	if !st.IsDir() {
		return &DirError{Dir: dir, Problem: DirNotDirectory}
	}
	if overwrite {
		if err := results.CheckJournalUnlocked(filepath.Join(dir, results.JournalFile)); err != nil {
			return err
		}
		return results.RemoveOutputs(dir)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var names []string
	for _, e := range entries {
		switch e.Name() {
		case results.JournalFile:
			return checkResume(dir, specHash, identity)
		case results.JournalFile + results.LockSuffix, results.JournalFile + results.SpecSuffix:
			continue
		}
		names = append(names, e.Name())
	}
	if len(names) == 0 {
		return nil
	}
	slices.Sort(names)
	return &DirError{Dir: dir, Problem: DirNotEmpty, Names: names}
}

// checkResume checks that the sweep in dir, which holds a journal, may be resumed by a sweep of
// spec hash specHash: its manifest, when present, is readable and of the same spec (a refusal
// says what differs from identity when the journal recorded its spec's), and no other file it
// writes is a directory.
func checkResume(dir, specHash string, identity []string) error {
	for _, name := range results.OwnedFiles() {
		if name == results.ManifestFile {
			continue // checked below (DirManifestIsDir)
		}
		if path := filepath.Join(dir, name); isDir(path) {
			return &DirError{Dir: dir, Problem: DirOutputIsDir, Path: path}
		}
	}
	m, err := results.ReadManifest(dir)
	var bad *results.ManifestError
	switch {
	case errors.As(err, &bad) && bad.IsDir:
		return &DirError{Dir: dir, Problem: DirManifestIsDir, Path: bad.Path}
	case bad != nil:
		return &DirError{Dir: dir, Problem: DirBadManifest, Err: err}
	case err != nil:
		return err
	case m != nil && m.SpecHash != "" && m.SpecHash != specHash:
		var changes []string
		if h, have, err := results.ReadJournalSpec(filepath.Join(dir, results.JournalFile)); err == nil && h == m.SpecHash {
			changes = results.SpecChanges(have, identity)
		}
		return &DirError{Dir: dir, Problem: DirOtherSpec, Hash: m.SpecHash, WantHash: specHash, Changes: changes}
	}
	return nil
}

// isDir reports whether path is a directory itself (not a symbolic link to one, which a rename
// replaces).
func isDir(path string) bool {
	st, err := os.Lstat(path)
	return err == nil && st.IsDir()
}

// PrepareShardDir readies dir, which other shards may share (so, unlike an unsharded sweep's,
// it may hold other files), for shard sh of a sweep of spec hash specHash, whose files are
// files: overwrite deletes the shard's own files and nothing else; the directory must hold no
// shard of another count and no part of another spec; then its journal is claimed for the spec
// (a refused shard leaves no claim behind).
// Errors: a *DirError, a *results.JournalLockedError, a *results.JournalSpecError, or the file
// system's.
func PrepareShardDir(dir string, sh grid.Shard, files ShardFiles, overwrite bool, specHash string, identity ...string) error {
	own := []string{files.Part, files.Probes, files.Journal, files.Journal + results.SpecSuffix}
	if err := checkShardDir(dir, own, overwrite); err != nil {
		return err
	}
	if err := checkShardCount(dir, sh); err != nil {
		return err
	}
	if err := checkSharedParts(dir, files.Part, specHash, identity); err != nil {
		return err
	}
	// Claimed last: a refused shard writes nothing, so it cannot block the right rerun.
	return results.ClaimJournalSpec(files.Journal, specHash, identity...)
}

// checkShardDir checks a shard's output directory: a path that is not a directory is an error;
// overwrite deletes the shard's own files (own) and nothing else.
func checkShardDir(dir string, own []string, overwrite bool) error {
	st, err := os.Stat(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if !st.IsDir() {
		return &DirError{Dir: dir, Problem: DirNotDirectory}
	}
	if !overwrite {
		return nil
	}
	for _, p := range own {
		if strings.HasSuffix(p, ".jsonl") {
			if err := results.CheckJournalUnlocked(p); err != nil {
				return err
			}
		}
	}
	for _, p := range own {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}

// checkShardCount refuses a shard whose count differs from the count of the parts or journals
// already in dir (results/part-*-of-NNNNN.parquet, journals/part-*-of-NNNNN.jsonl): a
// misconfigured shard count would otherwise add a second, overlapping partition of the same
// points, which a merge would count as duplicates. Overwriting the shard does not lift it (that
// removes only the shard's own files).
func checkShardCount(dir string, sh grid.Shard) error {
	for _, sub := range []string{results.PartsDir, results.JournalsDir} {
		entries, err := os.ReadDir(filepath.Join(dir, sub))
		if err != nil {
			continue
		}
		for _, e := range entries {
			var index, count int
			var ext string
			if e.IsDir() || strings.HasPrefix(e.Name(), ".") {
				continue
			}
			if n, _ := fmt.Sscanf(e.Name(), "part-%05d-of-%05d.%s", &index, &count, &ext); n != 3 ||
				(ext != "parquet" && ext != "jsonl") || count == sh.Count {
				continue
			}
			return &DirError{Dir: dir, Problem: DirShardCount, Count: count, Path: filepath.Join(dir, sub, e.Name()), Shard: sh}
		}
	}
	return nil
}

// checkSharedParts refuses to add a part of spec hash hash to dir when its parts belong to
// another spec (a changed spec, or a directory reused for another sweep): the shard's own
// earlier part (own), and the first other part, so the check stays cheap with many shards.
func checkSharedParts(dir, own, hash string, identity []string) error {
	paths := []string{own}
	if entries, err := os.ReadDir(filepath.Join(dir, results.PartsDir)); err == nil {
		for _, e := range entries {
			if p := filepath.Join(dir, results.PartsDir, e.Name()); !e.IsDir() && p != own &&
				strings.HasPrefix(e.Name(), "part-") && strings.HasSuffix(e.Name(), ".parquet") {
				paths = append(paths, p)
				break
			}
		}
	}
	for i, p := range paths {
		m, err := results.ReadPartMeta(p)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return &DirError{Dir: dir, Problem: DirBadPart, Path: p, Err: err}
		}
		if m.SpecHash != hash {
			// The journal of the shard that wrote the part recorded its spec's identity.
			var changes []string
			journal := FilesOfShard(dir, grid.Shard{Index: m.ShardIndex, Count: m.ShardCount}).Journal
			if h, have, err := results.ReadJournalSpec(journal); err == nil && h == m.SpecHash {
				changes = results.SpecChanges(have, identity)
			}
			return &DirError{Dir: dir, Problem: DirOtherSpecPart, Path: p, Own: i == 0, Spec: m.Manifest.Spec, Hash: m.SpecHash,
				WantHash: hash, Changes: changes}
		}
	}
	return nil
}
