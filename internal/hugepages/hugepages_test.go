package hugepages

import (
	"bufio"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
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
	start, end, err := Reserve(8 << 20)
	if err != nil {
		t.Fatalf("Reserve: %v", err)
	}
	if start%pageSize != 0 || end%pageSize != 0 || end-start < 8<<20 {
		t.Fatalf("advised [%#x, %#x): want at least 8 MiB aligned to 2 MiB", start, end)
	}
	if !thpOffered(t) {
		t.Skip("the kernel offers no transparent huge pages here; the advice was accepted but cannot be seen")
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
	t.Setenv("GODEBUG", "madvdontneed=1, disablethp=1")
	if !Disabled() {
		t.Fatal("Disabled() = false with GODEBUG disablethp=1")
	}
	if start, end, err := Reserve(8 << 20); start != 0 || end != 0 || err != nil {
		t.Errorf("Reserve with GODEBUG disablethp=1 = %#x, %#x, %v; want nothing advised", start, end, err)
	}
	t.Setenv("GODEBUG", "disablethp=0")
	if Disabled() {
		t.Error("Disabled() = true with GODEBUG disablethp=0")
	}
}
