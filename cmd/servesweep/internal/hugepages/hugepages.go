// Package hugepages backs the start of the Go heap with transparent huge pages (2 MiB on
// x86-64 and arm64 Linux) where the kernel offers them on request.
//
// A simulation touches tens to hundreds of MB of heap at random (per-request state, KV block
// tables, pass logs). In 4 KiB pages that costs a page fault per page as the heap grows, about
// 10,000 for a 40 MB run (roughly 0.1 CPU-s on a virtual machine), and TLB misses on every
// random access. Linux hands out 2 MiB pages for memory advised with madvise(MADV_HUGEPAGE) when
// /sys/kernel/mm/transparent_hugepage/enabled is "madvise" (the common default) or "always";
// the Go runtime does not advise its heap itself. Reserve maps the first bytes of heap the
// process will use and advises them; the runtime reuses those pages for later allocations.
package hugepages

import (
	"os"
	"strings"
)

// pageSize is the transparent huge page size the advice is aligned to: 2 MiB, the PMD size of
// x86-64 and of arm64 with 4 KiB base pages.
const pageSize = 2 << 20

// DefaultReserve is what servesweep reserves at start, in bytes: 512 MiB covers the heap of a
// trace replay (60 MB peak RSS) and of a two-worker sweep over the Mooncake trace (330-340 MB),
// as measured 2026-12-01 (docs/development.md, "Speed and memory").
// Reserved memory that is never touched costs no resident memory.
const DefaultReserve = 512 << 20

// disabled reports whether the process asked the Go runtime not to use transparent huge pages
// with GODEBUG disablethp (Go's own switch, documented in the runtime package), read as the
// runtime reads GODEBUG: comma-separated name=value settings, the last one of a name winning,
// any value but 0 turning it on. Reserve then does nothing.
func disabled() bool {
	off := false
	for _, kv := range strings.Split(os.Getenv("GODEBUG"), ",") {
		if v, ok := strings.CutPrefix(kv, "disablethp="); ok {
			off = v != "0"
		}
	}
	return off
}

// Reserve grows the Go heap by n bytes that no object keeps and advises the whole huge pages
// inside them for transparent huge pages, so that the heap's first n bytes are backed by 2 MiB
// pages as they are touched; it then runs a garbage collection (a few ms) so that the runtime
// reuses those pages for the allocations that follow. The memory is not touched here: it costs
// resident memory only as the program uses it, in 2 MiB steps, but the mapping counts against
// address-space and data limits until the runtime returns it. So that a failed mapping (fatal in
// Go) cannot happen, it reserves at most an eighth of what is left under an address-space
// limit (ulimit -v) or a data limit (ulimit -d), at most an eighth of RAM plus swap, and nothing
// under strict overcommit accounting. It returns the advised range [start, end) (0, 0 when
// nothing was advised: n < 2 MiB, GODEBUG disablethp, a limit, or an operating system without
// transparent huge pages) and the madvise error, if any (the advice is only a hint: callers may
// ignore it).
func Reserve(n int) (start, end uintptr, err error) {
	if n < pageSize || disabled() {
		return 0, 0, nil
	}
	return reserve(n)
}
