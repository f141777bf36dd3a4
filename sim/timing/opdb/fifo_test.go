//go:build unix

package opdb

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A named pipe in place of <gpu>.yaml or of a table is an error naming it, not a read that
// waits forever for a writer.
func TestNamedPipesAreRefused(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "h100_sxm.yaml"), 0o644); err != nil {
		t.Skipf("cannot make a named pipe here: %v", err)
	}
	db, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = db.GEMM("h100_sxm", "vllm", "", "bfloat16")
	if err == nil || !strings.Contains(err.Error(), "h100_sxm.yaml is not a regular file") {
		t.Errorf("pipe as h100_sxm.yaml: %v", err)
	}

	if err := os.WriteFile(filepath.Join(dir, "h200_sxm.yaml"), []byte("data_dir: data/h200_sxm\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tables := filepath.Join(dir, "data", "h200_sxm", "gemm", "vllm", "0.24.0")
	if err := os.MkdirAll(tables, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(tables, gemmFile), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = db.GEMM("h200_sxm", "vllm", "0.24.0", "bfloat16")
	if err == nil || !strings.Contains(err.Error(), gemmFile+" is not a regular file") {
		t.Errorf("pipe as the GEMM table: %v", err)
	}
}
