//go:build linux

package hugepages

import (
	"runtime"
	"syscall"
	"unsafe"
)

// madvHugePage is MADV_HUGEPAGE from <sys/mman.h> (14 on every Linux architecture).
const madvHugePage = 14

func reserve(n int) (start, end uintptr, err error) {
	start, end, err = advise(n)
	// Free the reserved block now, so that the allocations that follow reuse its pages instead of
	// growing the heap past it while a collection is pending.
	runtime.GC()
	return start, end, err
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
