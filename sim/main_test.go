package sim

import (
	"os"
	"testing"

	"github.com/servesweep/servesweep/internal/hugepages"
)

// TestMain backs the heap with transparent huge pages as the servesweep command does at start
// (cmd/servesweep reserveHeap), so that the benchmarks measure the memory the command runs on.
func TestMain(m *testing.M) {
	_, _, _ = hugepages.Reserve(hugepages.DefaultReserve)
	os.Exit(m.Run())
}
