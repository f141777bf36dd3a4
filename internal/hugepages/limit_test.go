//go:build linux && !race

package hugepages

import (
	"fmt"
	"os"
	"os/exec"
	"testing"
)

// Under an address-space limit (ulimit -v) the reservation shrinks to an eighth of the limit
// instead of asking for more than the process may map, which the Go runtime answers with a fatal
// out-of-memory error: the test runs itself under a 1.5 GB limit, reserves 512 MiB, and the
// child must live and advise at most 192 MB. (Not under the race detector, whose shadow memory
// needs more address space than the limit.)
func TestReserveUnderAddressSpaceLimit(t *testing.T) {
	if os.Getenv("HUGEPAGES_LIMIT_CHILD") == "1" {
		start, end, err := Reserve(DefaultReserve)
		fmt.Printf("advised %d bytes, err %v\n", end-start, err)
		if end-start > 1_500_000*1024/8+pageSize { // an eighth of the limit, whole huge pages
			os.Exit(3)
		}
		return
	}
	cmd := exec.Command("sh", "-c", `ulimit -v 1500000 && exec "$0" -test.run '^TestReserveUnderAddressSpaceLimit$'`, os.Args[0])
	cmd.Env = append(os.Environ(), "HUGEPAGES_LIMIT_CHILD=1", "GODEBUG=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("Reserve under ulimit -v 1500000 failed (%v):\n%s", err, out)
	}
}
