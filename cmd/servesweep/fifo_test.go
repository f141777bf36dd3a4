//go:build unix

package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/servesweep/servesweep/results"
)

// runCLIWithin is runCLI failing the test when the command has not returned after limit (it
// would block for good on opening a named pipe nobody writes to).
func runCLIWithin(t *testing.T, limit time.Duration, args ...string) (code int, stderr string) {
	t.Helper()
	type result struct {
		code int
		errs string
	}
	done := make(chan result, 1)
	go func() {
		var out, errb bytes.Buffer
		code := run(context.Background(), args, ioStreams{Out: &out, Err: &errb})
		done <- result{code, errb.String()}
	}()
	select {
	case r := <-done:
		return r.code, r.errs
	case <-time.After(limit):
		t.Fatalf("%s blocked for %s", strings.Join(args, " "), limit)
		return 0, ""
	}
}

// A -c config or spec, a pareto.json or a results.parquet that is a named pipe is refused with
// exit 2 naming the path and that it is not a regular file, before it is opened (which would
// block); a config given as an anonymous pipe's descriptor (process substitution, -c <(...)) is
// read.
func TestNamedPipeInputs(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo.yaml")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	const limit = 20 * time.Second
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"predict", "-c", fifo, "--output-dir", filepath.Join(t.TempDir(), "out")}, fifo + ": cannot read config: "},
		{[]string{"export", "-c", fifo, "--target", "vllm", "--output-dir", filepath.Join(t.TempDir(), "out")}, fifo + ": cannot read config: "},
		{[]string{"sweep", "--dry-run", "-c", fifo}, fifo + ": cannot read sweep spec: "},
	} {
		code, errs := runCLIWithin(t, limit, c.args...)
		if want := c.want + "it is a named pipe (FIFO), not a regular file"; code != exitConfigError || !strings.Contains(errs, want) {
			t.Errorf("%s: exit %d, stderr %q; want exit 2 and %q", c.args[0], code, errs, want)
		}
	}

	dir := filepath.Join(t.TempDir(), "sweep")
	if err := os.CopyFS(dir, os.DirFS(rowsSweep(t))); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{results.ParetoFile, results.ParquetFile} {
		path := filepath.Join(dir, name)
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Mkfifo(path, 0o644); err != nil {
			t.Fatal(err)
		}
		code, errs := runCLIWithin(t, limit, "rows", "--results", dir, "--front")
		if want := path + " is a named pipe (FIFO), not a regular file"; code != exitConfigError || !strings.Contains(errs, want) {
			t.Errorf("rows --front with %s a named pipe: exit %d, stderr %q; want exit 2 and %q", name, code, errs, want)
		}
	}

	data, err := os.ReadFile(seedConfig)
	if err != nil {
		t.Fatal(err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	go func() { w.Write(data); w.Close() }()
	code, errs := runCLIWithin(t, limit, "predict", "--stack", "dynamo", "-c", fmt.Sprintf("/dev/fd/%d", r.Fd()),
		"--set", "traffic.stop.requests=8", "--output-dir", filepath.Join(t.TempDir(), "out"))
	if code != exitOK {
		t.Errorf("-c /dev/fd/N (a pipe): exit %d, stderr %q", code, errs)
	}
}
