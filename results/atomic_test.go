package results

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWriteAtomic checks that a write replaces the file whole with mode 0644 and leaves no
// temporary file, and that a failed write keeps the old content, removes its temporary file and
// returns the error naming the path.
func TestWriteAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.json")
	if err := os.WriteFile(path, []byte("old\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileAtomic(path, []byte("new\n")); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(path); err != nil || string(got) != "new\n" {
		t.Fatalf("content %q (%v), want %q", got, err, "new\n")
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o644 {
		t.Errorf("mode %v (%v), want 0644", st.Mode().Perm(), err)
	}

	boom := errors.New("boom")
	err := WriteAtomic(path, func(w io.Writer) error {
		if _, err := io.WriteString(w, "partial"); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "writing "+path+": ") {
		t.Errorf("failed write: %v, want boom naming %s", err, path)
	}
	if got, _ := os.ReadFile(path); string(got) != "new\n" {
		t.Errorf("a failed write changed the file to %q", got)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != "out.json" {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("directory holds %v, want only out.json (no temporary file)", names)
	}

	missing := filepath.Join(dir, "nope", "x.json")
	if err := WriteFileAtomic(missing, nil); !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), missing) {
		t.Errorf("missing directory: %v, want ErrNotExist naming %s", err, missing)
	}
}
