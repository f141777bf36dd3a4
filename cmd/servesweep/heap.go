package main

import (
	"os"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
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

// bytesPerPoint and liveBytesPerPoint are the memory an unsharded sweep holds per selected point
// while it runs, in bytes: its decoded config and YAML, then its row. The first is the peak RSS
// with the Go runtime's default collection (the heap grows to about twice what is live between
// collections), the second under a soft memory limit that keeps the heap near what is live
// (holdSweepMemory). Measured 2026-12-06 on a 200,200-point grid of one-request runs: 5.0 GB peak
// RSS and 111 CPU-s (24 KiB a point; 19.4 GB for an 800,800-point one), 2.8 GB and 149 CPU-s under
// a 2.5 GiB limit (14 KiB a point).
const (
	bytesPerPoint     = 24 << 10
	liveBytesPerPoint = 14 << 10
)

// largeGrid is the selected point count from which a sweep says how much memory its points take
// before writing their configs (a few seconds per 100,000 points).
const largeGrid = 100_000

// holdSweepMemory sets the Go runtime's soft memory limit (runtime/debug.SetMemoryLimit) for a
// sweep of points selected points, from largeGrid points on: what the process holds now (the
// runtime's /memory/classes/total:bytes) plus 85 % of the memory the machine has available
// beside it (availableMemoryGiB), so that a grid whose live heap fits keeps its heap near what is
// live when memory runs short instead of growing to twice it (bytesPerPoint against
// liveBytesPerPoint); below the limit the collector works as by default. Nothing is set for fewer
// points, where /proc/meminfo is unreadable, when the user set GOMEMLIMIT, or when that limit
// would be below the points' live heap (the collector would run without end and the sweep would
// not fit either way). The returned function puts back the limit in force before.
func holdSweepMemory(points int) (release func()) {
	avail, ok := availableMemoryGiB()
	if points < largeGrid || !ok || os.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	held := []metrics.Sample{{Name: "/memory/classes/total:bytes"}}
	metrics.Read(held)
	limit := float64(held[0].Value.Uint64()) + 0.85*avail*(1<<30)
	if limit < float64(points)*liveBytesPerPoint {
		return func() {}
	}
	before := debug.SetMemoryLimit(int64(limit))
	return func() { debug.SetMemoryLimit(before) }
}

// availableMemoryGiB is the memory a new process can take without swapping, in GiB: the
// system's MemAvailable (/proc/meminfo), or less when the process's cgroup (v2) caps its memory
// below that (memory.max less memory.current, as in a container with a memory limit); false
// where /proc/meminfo is not (not Linux).
func availableMemoryGiB() (float64, bool) {
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0, false
	}
	avail, ok := 0.0, false
	for _, line := range strings.Split(string(data), "\n") {
		if rest, found := strings.CutPrefix(line, "MemAvailable:"); found {
			if f := strings.Fields(rest); len(f) >= 1 {
				if kb, err := strconv.ParseFloat(f[0], 64); err == nil {
					avail, ok = kb/(1<<20), true
				}
			}
		}
	}
	if !ok {
		return 0, false
	}
	read := func(name string) (float64, bool) {
		b, err := os.ReadFile("/sys/fs/cgroup/" + name)
		if err != nil {
			return 0, false
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(string(b)), 64) // "max" (no limit) fails here
		return v, err == nil
	}
	if limit, ok := read("memory.max"); ok {
		used, _ := read("memory.current")
		avail = min(avail, max(limit-used, 0)/(1<<30))
	}
	return avail, true
}
