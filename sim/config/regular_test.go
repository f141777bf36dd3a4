//go:build unix

package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// ReadFile reads a regular file and an anonymous pipe given as a descriptor (process
// substitution's /dev/fd/N), and refuses a directory and a named pipe before opening them, with
// a *NotRegularError inside an *fs.PathError naming the path; a named pipe nobody writes to does
// not block it.
func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	regular := filepath.Join(dir, "c.yaml")
	if err := os.WriteFile(regular, []byte("a: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if data, err := ReadFile(regular); err != nil || string(data) != "a: 1\n" {
		t.Errorf("regular file: %q, %v", data, err)
	}
	fifo := filepath.Join(dir, "fifo.yaml")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for path, kind := range map[string]string{dir: "a directory", fifo: "a named pipe (FIFO)"} {
		done := make(chan error, 1)
		go func() { _, err := ReadFile(path); done <- err }()
		select {
		case err := <-done:
			var pe *fs.PathError
			var nr *NotRegularError
			if !errors.As(err, &pe) || pe.Path != path || !errors.As(err, &nr) || nr.Kind != kind ||
				PathCause(err).Error() != "it is "+kind+", not a regular file" {
				t.Errorf("%s: %v; want it is %s, not a regular file", path, err, kind)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("ReadFile(%s) blocked", path)
		}
	}
	if _, err := ReadFile(filepath.Join(dir, "missing.yaml")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	go func() { w.Write([]byte("b: 2\n")); w.Close() }()
	if data, err := ReadFile(fmt.Sprintf("/dev/fd/%d", r.Fd())); err != nil || string(data) != "b: 2\n" {
		t.Errorf("a pipe as /dev/fd/N: %q, %v", data, err)
	}
}
