package sweep

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/servesweep/servesweep/grid"
	"github.com/servesweep/servesweep/results"
)

// PrepareDir creates a missing directory (a fresh journal), refuses a file and a directory of
// other files (naming them), and PrepareShardDir refuses shards of another count, each as a
// *DirError of its problem.
func TestPrepareDirProblems(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "new")
	if fresh, err := PrepareDir(dir, false, "h1"); err != nil || !fresh {
		t.Fatalf("missing directory: fresh %v, %v", fresh, err)
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		t.Fatalf("PrepareDir did not create %s: %v", dir, err)
	}
	file := filepath.Join(root, "file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	var de *DirError
	if _, err := PrepareDir(file, false, "h1"); !errors.As(err, &de) || de.Problem != DirNotDirectory || de.Dir != file {
		t.Errorf("a file: %v", err)
	}
	other := filepath.Join(root, "other")
	for _, name := range []string{"b.txt", "a.csv"} {
		if err := os.MkdirAll(other, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(other, name), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := PrepareDir(other, false, "h1"); !errors.As(err, &de) || de.Problem != DirNotEmpty || !slices.Equal(de.Names, []string{"a.csv", "b.txt"}) {
		t.Errorf("a directory of other files: %v", err)
	}
	shards := filepath.Join(root, "shards")
	sh := grid.Shard{Index: 0, Count: 2}
	if err := PrepareShardDir(shards, sh, FilesOfShard(shards, sh), false, "h1"); err != nil {
		t.Fatalf("first shard: %v", err)
	}
	journals := filepath.Join(shards, "journals")
	if err := os.MkdirAll(journals, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(journals, "part-00001-of-00003.jsonl"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	err := PrepareShardDir(shards, sh, FilesOfShard(shards, sh), false, "h1")
	if !errors.As(err, &de) || de.Problem != DirShardCount || de.Count != 3 || de.Shard != sh {
		t.Errorf("shards of another count: %v", err)
	}
}

// A sweep to resume whose report path is a directory is refused before any point runs, naming
// that path; a symbolic link there is not (the report's rename replaces the link).
func TestPrepareDirRefusesAnOutputThatIsADirectory(t *testing.T) {
	dir := t.TempDir()
	if _, err := PrepareDir(dir, false, "h1"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, results.JournalFile), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "report.md")
	if err := os.Symlink(t.TempDir(), link); err != nil {
		t.Fatal(err)
	}
	if _, err := PrepareDir(dir, false, "h1"); err != nil {
		t.Errorf("a symbolic link where the report goes: %v", err)
	}
	pareto := filepath.Join(dir, "pareto.json")
	if err := os.Mkdir(pareto, 0o755); err != nil {
		t.Fatal(err)
	}
	var de *DirError
	if _, err := PrepareDir(dir, false, "h1"); !errors.As(err, &de) || de.Problem != DirOutputIsDir || de.Path != pareto {
		t.Errorf("pareto.json a directory: %v", err)
	} else if want := dir + " cannot be resumed: " + pareto + " is a directory where the sweep writes a file"; err.Error() != want {
		t.Errorf("message %q, want %q", err, want)
	}
}
