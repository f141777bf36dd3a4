//go:build linux

package hugepages

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"unsafe"
)

// madvHugePage is MADV_HUGEPAGE from <sys/mman.h> (14 on every Linux architecture).
const madvHugePage = 14

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
// fatal out-of-memory error: under an address-space limit (RLIMIT_AS, ulimit -v) at an eighth of
// the address space the process has left (the limit minus its size in /proc/self/statm; nothing
// when that cannot be read), and at nothing under strict overcommit accounting
// (vm.overcommit_memory = 2), where the mapping counts against the commit limit although it is
// never touched.
func limit(n int) int {
	if b, err := os.ReadFile("/proc/sys/vm/overcommit_memory"); err == nil && strings.TrimSpace(string(b)) == "2" {
		return 0
	}
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_AS, &rl); err != nil || rl.Cur == ^uint64(0) {
		return n
	}
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	pages, err := strconv.ParseUint(f[0], 10, 64)
	if err != nil {
		return 0
	}
	used := pages * uint64(os.Getpagesize())
	if used >= rl.Cur {
		return 0
	}
	return int(min(uint64(n), (rl.Cur-used)/8))
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
	if err := syscall.Madvise(b[start-p:end-p], madvHugePage); err != nil {
		return 0, 0, err
	}
	return start, end, nil
}
