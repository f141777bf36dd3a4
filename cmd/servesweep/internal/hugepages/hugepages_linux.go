//go:build linux

package hugepages

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

func reserve(n int) (start, end uintptr, err error) {
	if n = limit(n); n < pageSize {
		return 0, 0, nil
	}
	start, end, err = advise(n)
	// Free the reserved block now, so that the allocations that follow reuse its pages instead of
	// growing the heap past it while a collection is pending.
	runtime.GC()
	return start, end, err
}

// limit caps a reservation of n bytes where mapping it could fail, which the runtime treats as a
// fatal out-of-memory error:
//   - under an address-space limit (RLIMIT_AS, ulimit -v) at an eighth of what the process has
//     left (the limit minus its size, /proc/self/statm field 1), and likewise under a data limit
//     (RLIMIT_DATA, ulimit -d, which counts private writable mappings since Linux 4.7; statm
//     field 6); nothing when statm cannot be read;
//   - at an eighth of RAM plus swap (sysinfo), which the default heuristic overcommit checks a
//     single mapping against;
//   - at nothing under strict overcommit accounting (vm.overcommit_memory = 2), where the
//     mapping counts against the commit limit although it is never touched.
func limit(n int) int {
	if b, err := os.ReadFile("/proc/sys/vm/overcommit_memory"); err == nil && strings.TrimSpace(string(b)) == "2" {
		return 0
	}
	left := uint64(n)
	var si unix.Sysinfo_t
	if unix.Sysinfo(&si) == nil {
		total := (uint64(si.Totalram) + uint64(si.Totalswap)) * uint64(si.Unit)
		left = min(left, total/8)
	}
	for _, c := range []struct {
		resource int
		field    int // statm field (0-based) the limit counts
	}{{unix.RLIMIT_AS, 0}, {unix.RLIMIT_DATA, 5}} {
		var rl unix.Rlimit
		if err := unix.Getrlimit(c.resource, &rl); err != nil || rl.Cur == unix.RLIM_INFINITY {
			continue
		}
		used, ok := statmBytes(c.field)
		if !ok || used >= rl.Cur {
			return 0
		}
		left = min(left, (rl.Cur-used)/8)
	}
	return int(left)
}

// statmBytes returns field i (0-based, in pages) of /proc/self/statm in bytes.
func statmBytes(i int) (uint64, bool) {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0, false
	}
	f := strings.Fields(string(b))
	if len(f) <= i {
		return 0, false
	}
	pages, err := strconv.ParseUint(f[i], 10, 64)
	if err != nil {
		return 0, false
	}
	return pages * uint64(os.Getpagesize()), true
}

// advise allocates n bytes plus one huge page of slack, advises the whole huge pages inside them
// and drops the allocation: the runtime maps fresh memory for a block this large and reuses it
// once the block is collected.
//
//go:noinline
func advise(n int) (start, end uintptr, err error) {
	b := make([]byte, n+pageSize)
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	start = (p + pageSize - 1) &^ (pageSize - 1)
	end = (p + uintptr(len(b))) &^ (pageSize - 1)
	if err := unix.Madvise(b[start-p:end-p], unix.MADV_HUGEPAGE); err != nil {
		return 0, 0, err
	}
	return start, end, nil
}
