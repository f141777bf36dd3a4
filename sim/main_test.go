package sim

import (
	"flag"
	"os"
	"testing"

	"github.com/servesweep/servesweep/internal/hugepages"
)

// TestMain backs the heap with transparent huge pages as the servesweep command does at start
// (cmd/servesweep reserveHeap) when benchmarks run, so that they measure the memory the command
// runs on; tests run without it.
func TestMain(m *testing.M) {
	flag.Parse()
	if f := flag.Lookup("test.bench"); f != nil && f.Value.String() != "" {
		_, _, _ = hugepages.Reserve(hugepages.DefaultReserve)
	}
	os.Exit(m.Run())
}
