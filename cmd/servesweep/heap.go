package main

import (
	"os"
	"runtime/debug"
	"unsafe"

	"github.com/servesweep/servesweep/results"
)

// Bounds of the soft memory limit holdHeapFor sets.
const (
	// heapHeadroom is the heap allowed beyond 1.5 times the rows table: the rows' strings and
	// optional values (about 0.35 times the table for a sweep's rows), the Parquet reader's and
	// writer's buffers, and the analysis.
	heapHeadroom = 160 << 20
	// minHeapLimit is the smallest limit set: below it the collector's work would not pay.
	minHeapLimit = 256 << 20
)

// holdHeapFor sets the Go runtime's soft memory limit (runtime/debug.SetMemoryLimit) for a
// command that holds a table of rows results.Row values, as merge and report do: 1.5 times the
// table's bytes plus heapHeadroom, at least minHeapLimit, so that the heap stays near what is
// live instead of growing to twice it between collections (a 100,000-row merge of 1,000 parts:
// 484 MB instead of 872 MB RSS, for 7.1-7.3 instead of 5.7 CPU-s; see docs/development.md). It returns
// the limit in bytes, or 0 when the user set GOMEMLIMIT, which is then left in force, and a
// function that puts back the limit in force before (the caller defers it when the command ends:
// a limit left behind would make the collector run all through a later simulation in the same
// process, as in the command tests, where it slowed TestGoldenDigests, mostly the built-in
// sweep, by 40-47 %).
func holdHeapFor(rows int) (limit int64, release func()) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return 0, func() {}
	}
	limit = max(int64(rows)*int64(unsafe.Sizeof(results.Row{}))*3/2+heapHeadroom, minHeapLimit)
	before := debug.SetMemoryLimit(limit)
	return limit, func() { debug.SetMemoryLimit(before) }
}
