package main

import (
	"path/filepath"
	"runtime/debug"
	"testing"
	"unsafe"

	"github.com/servesweep/servesweep/results"
)

func TestHoldHeapFor(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(before) })
	t.Setenv("GOMEMLIMIT", "")
	row := int64(unsafe.Sizeof(results.Row{}))
	got, release := holdHeapFor(100_000)
	if want := 100_000*row*3/2 + 160<<20; got != want || debug.SetMemoryLimit(-1) != want {
		t.Errorf("100,000 rows: limit %d (runtime %d), want %d", got, debug.SetMemoryLimit(-1), want)
	}
	release()
	if now := debug.SetMemoryLimit(-1); now != before {
		t.Errorf("after release: runtime limit %d, want the one before, %d", now, before)
	}
	got, release = holdHeapFor(10)
	if got != 256<<20 {
		t.Errorf("10 rows: limit %d, want the 256 MiB floor", got)
	}
	release()
	t.Setenv("GOMEMLIMIT", "3GiB")
	if got, release := holdHeapFor(100_000); got != 0 || debug.SetMemoryLimit(-1) != before {
		t.Errorf("with GOMEMLIMIT set: limit %d, runtime %d; want the user's left in force", got, debug.SetMemoryLimit(-1))
	} else {
		release()
	}
}

// The report and merge commands leave the process's memory limit as they found it, so that a
// later command in the same process (a sweep after a report, as in these tests) is not
// collected under it.
func TestReportLeavesTheMemoryLimit(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "")
	before := debug.SetMemoryLimit(-1)
	dir := filepath.Join(t.TempDir(), "sweep")
	runTinySweep(t, dir)
	if code, _, errs := runCLI(t, "report", "--results", dir, "--output-dir", filepath.Join(t.TempDir(), "report")); code != 0 {
		t.Fatalf("report: exit %d: %s", code, errs)
	}
	if now := debug.SetMemoryLimit(-1); now != before {
		t.Errorf("memory limit %d after report, want %d as before", now, before)
	}
	shared := filepath.Join(t.TempDir(), "shared")
	runShardCLI(t, shared, "--shard", "0/2")
	runShardCLI(t, shared, "--shard", "1/2")
	if code, _, errs := runCLI(t, "merge", "--results", shared); code != 0 {
		t.Fatalf("merge: exit %d: %s", code, errs)
	}
	if now := debug.SetMemoryLimit(-1); now != before {
		t.Errorf("memory limit %d after merge, want %d as before", now, before)
	}
}
