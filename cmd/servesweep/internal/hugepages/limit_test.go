//go:build linux && !race

package hugepages

import (
	"fmt"
	"os"
	"os/exec"
	"testing"
)

// Under an address-space limit (ulimit -v) or a data limit (ulimit -d) the reservation shrinks
// to an eighth of what is left instead of asking for more than the process may map, which the Go
// runtime answers with a fatal out-of-memory error: the test runs itself under a 1.5 GB address
// space limit and under a 600 MB data limit, reserves 512 MiB, and the child must live and
// advise at most an eighth of the limit. (Not under the race detector, whose shadow memory
// needs more address space than the limit.)
func TestReserveUnderAddressSpaceLimit(t *testing.T) {
	if kb := os.Getenv("HUGEPAGES_LIMIT_CHILD_KB"); kb != "" {
		start, end, err := Reserve(DefaultReserve)
		fmt.Printf("advised %d bytes, err %v\n", end-start, err)
		var limitKB uint64
		fmt.Sscan(kb, &limitKB)
		if uint64(end-start) > limitKB*1024/8+pageSize { // an eighth of the limit, whole huge pages
			os.Exit(3)
		}
		return
	}
	for _, c := range []struct{ flag, kb string }{{"-v", "1500000"}, {"-d", "600000"}} {
		cmd := exec.Command("sh", "-c", `ulimit `+c.flag+` `+c.kb+` && exec "$0" -test.run '^TestReserveUnderAddressSpaceLimit$'`, os.Args[0])
		cmd.Env = append(os.Environ(), "HUGEPAGES_LIMIT_CHILD_KB="+c.kb, "GODEBUG=")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("Reserve under ulimit %s %s failed (%v):\n%s", c.flag, c.kb, err, out)
		}
	}
}
