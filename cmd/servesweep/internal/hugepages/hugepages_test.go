package hugepages

import (
	"bufio"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

// thpOffered reports whether the kernel hands out transparent huge pages on request.
func thpOffered(t *testing.T) bool {
	t.Helper()
	b, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil {
		return false
	}
	return !strings.Contains(string(b), "[never]")
}

// advisedFlags returns the VmFlags of every mapping of /proc/self/smaps that overlaps [start, end).
func advisedFlags(t *testing.T, start, end uintptr) []string {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var flags []string
	overlaps := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if rng, _, ok := strings.Cut(line, " "); ok && strings.Contains(rng, "-") && !strings.HasSuffix(rng, ":") {
			a, b, _ := strings.Cut(rng, "-")
			lo, err1 := strconv.ParseUint(a, 16, 64)
			hi, err2 := strconv.ParseUint(b, 16, 64)
			if err1 == nil && err2 == nil {
				overlaps = uintptr(lo) < end && start < uintptr(hi)
				continue
			}
		}
		if v, ok := strings.CutPrefix(line, "VmFlags:"); ok && overlaps {
			flags = append(flags, strings.TrimSpace(v))
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return flags
}

func TestReserveAdvisesWholeHugePages(t *testing.T) {
	if runtime.GOOS != "linux" {
		start, end, err := Reserve(8 << 20)
		if start != 0 || end != 0 || err != nil {
			t.Fatalf("Reserve on %s = %#x, %#x, %v; want nothing advised", runtime.GOOS, start, end, err)
		}
		return
	}
	t.Setenv("GODEBUG", "")
	if !thpOffered(t) {
		t.Skip("the kernel offers no transparent huge pages here (madvise may refuse the advice)")
	}
	if limit(8<<20) < 8<<20 {
		t.Skip("strict overcommit or a memory limit leaves no room for an 8 MiB reservation here")
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start, end, err := Reserve(8 << 20)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatalf("Reserve: %v", err)
	}
	if after.NumForcedGC <= before.NumForcedGC {
		t.Error("Reserve forced no garbage collection: the reserved block would stay allocated until the next one")
	}
	if start%pageSize != 0 || end%pageSize != 0 || end-start < 8<<20 {
		t.Fatalf("advised [%#x, %#x): want at least 8 MiB aligned to 2 MiB", start, end)
	}
	// The collection Reserve ends with frees the block, so that new allocations land in it. Not
	// all of them: the allocator also fills spans it already holds, 31 to 64 of the 64 in runs on
	// 2 loaded cores, so a quarter is the bound.
	inside := 0
	keep := make([][]byte, 64)
	for i := range keep {
		keep[i] = make([]byte, 64<<10)
		if p := uintptr(unsafe.Pointer(unsafe.SliceData(keep[i]))); start <= p && p < end {
			inside++
		}
	}
	if inside < len(keep)/4 {
		t.Errorf("%d of %d new 64 KiB allocations fall in the advised range: the runtime does not reuse it", inside, len(keep))
	}
	flags := advisedFlags(t, start, end)
	if len(flags) == 0 {
		t.Fatalf("no mapping of /proc/self/smaps covers the advised range [%#x, %#x)", start, end)
	}
	for _, f := range flags {
		if !strings.Contains(" "+f+" ", " hg ") {
			t.Errorf("a mapping in the advised range has VmFlags %q; want hg (MADV_HUGEPAGE)", f)
		}
	}
}

func TestReserveSkipsSmallAndDisabled(t *testing.T) {
	t.Setenv("GODEBUG", "")
	if start, end, err := Reserve(pageSize - 1); start != 0 || end != 0 || err != nil {
		t.Errorf("Reserve(2 MiB - 1) = %#x, %#x, %v; want nothing advised", start, end, err)
	}
	for _, c := range []struct {
		godebug string
		off     bool
	}{
		{"madvdontneed=1,disablethp=1", true},
		{"disablethp=2", true}, // any value but 0, as the runtime reads it
		{"disablethp=0", false},
		{"disablethp=1,disablethp=0", false}, // the last setting wins
		{"disablethp=0,disablethp=1", true},
		{"madvdontneed=1, disablethp=1", false}, // the runtime does not trim spaces
		{"", false},
	} {
		t.Setenv("GODEBUG", c.godebug)
		if got := disabled(); got != c.off {
			t.Errorf("GODEBUG %q: disabled() = %v, want %v", c.godebug, got, c.off)
		}
	}
	t.Setenv("GODEBUG", "disablethp=1")
	if start, end, err := Reserve(8 << 20); start != 0 || end != 0 || err != nil {
		t.Errorf("Reserve with GODEBUG disablethp=1 = %#x, %#x, %v; want nothing advised", start, end, err)
	}
}
