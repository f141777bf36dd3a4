package main

import (
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
	if got, want := holdHeapFor(100_000), 100_000*row*3/2+160<<20; got != want || debug.SetMemoryLimit(-1) != want {
		t.Errorf("100,000 rows: limit %d (runtime %d), want %d", got, debug.SetMemoryLimit(-1), want)
	}
	if got := holdHeapFor(10); got != 256<<20 {
		t.Errorf("10 rows: limit %d, want the 256 MiB floor", got)
	}
	t.Setenv("GOMEMLIMIT", "3GiB")
	debug.SetMemoryLimit(before)
	if got := holdHeapFor(100_000); got != 0 || debug.SetMemoryLimit(-1) != before {
		t.Errorf("with GOMEMLIMIT set: limit %d, runtime %d; want the user's left in force", got, debug.SetMemoryLimit(-1))
	}
}
