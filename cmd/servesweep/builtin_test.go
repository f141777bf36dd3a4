package main

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// builtIn is the built-in sweep (`servesweep sweep` with no -c, the sweep `make run` runs), run
// once per test binary by builtInSweep and shared by the tests that read it: about three minutes
// on 2 cores, which three end-to-end tests would otherwise spend each.
var builtIn struct {
	once           sync.Once
	dir            string // the sweep's output directory
	code           int
	stdout, stderr string
	err            error
}

// builtInSweep runs the built-in sweep into a shared directory the first time it is called and
// returns that directory and the run's exit code, stdout and stderr. Callers must not modify the
// directory; copyDir it first. TestMain removes it.
func builtInSweep(t *testing.T) (dir string, code int, stdout, stderr string) {
	t.Helper()
	builtIn.once.Do(func() {
		d, err := os.MkdirTemp("", "servesweep-builtin-")
		if err != nil {
			builtIn.err = err
			return
		}
		builtIn.dir = filepath.Join(d, "sweep")
		var out, errb bytes.Buffer
		builtIn.code = run(context.Background(), []string{"sweep", "--quiet", "--output-dir", builtIn.dir}, ioStreams{Out: &out, Err: &errb})
		builtIn.stdout, builtIn.stderr = out.String(), errb.String()
	})
	if builtIn.err != nil {
		t.Fatal(builtIn.err)
	}
	if builtIn.code != 0 {
		t.Fatalf("built-in sweep: exit %d: %s", builtIn.code, builtIn.stderr)
	}
	return builtIn.dir, builtIn.code, builtIn.stdout, builtIn.stderr
}

// copyDir copies the regular files under src to dst (created), keeping their modes.
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("%s is not a regular file", path)
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, info.Mode().Perm())
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestMain(m *testing.M) {
	code := m.Run()
	if builtIn.dir != "" {
		os.RemoveAll(filepath.Dir(builtIn.dir))
	}
	os.Exit(code)
}
