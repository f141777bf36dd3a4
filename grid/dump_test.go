package grid

import (
	"bufio"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/servesweep/servesweep/examples"
	"github.com/servesweep/servesweep/results"
)

// TestDumpPoints writes, when SERVESWEEP_DUMP_DIR names a directory, every example sweep's and
// scaleSpec's expansion (counts, filter messages, spec hash, and per point its index, ID, class,
// twin, GPUs, prices, label and configs' JSON) so that two builds' expansions can be compared byte
// for byte (cmp). Without the variable it is skipped.
func TestDumpPoints(t *testing.T) {
	dir := os.Getenv("SERVESWEEP_DUMP_DIR")
	if dir == "" {
		t.Skip("SERVESWEEP_DUMP_DIR not set")
	}
	specs := map[string][]byte{"scale": []byte(scaleSpec), "default-embedded": examples.DefaultSweep()}
	files, _ := filepath.Glob("../examples/*.yaml")
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		specs[strings.TrimSuffix(filepath.Base(f), ".yaml")] = data
	}
	for name, data := range specs {
		out, err := os.Create(filepath.Join(dir, name+".txt"))
		if err != nil {
			t.Fatal(err)
		}
		w := bufio.NewWriter(out)
		dumpSpec(t, w, name, data)
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		out.Close()
	}
}

func dumpSpec(t *testing.T, w *bufio.Writer, name string, data []byte) {
	s, err := Parse(data, name+".yaml", nil, func(string) (string, bool) { return "/tmp/trace.jsonl", true }, results.CheckMetric)
	if err != nil {
		fmt.Fprintf(w, "parse: %v\n", err)
		return
	}
	x, err := s.ExpandLazy()
	if err != nil {
		fmt.Fprintf(w, "expand: %v\n", err)
		return
	}
	fmt.Fprintf(w, "grid %d valid %d selected %d hash %s\nfiltered %v\nexamples %q\nerrors %q\nwarnings %q\nnotes %q\nempty %+v\n",
		x.GridPoints, x.Valid, len(x.Points), x.SpecHash(), x.Filtered, x.Examples, x.Errors, x.Warnings, x.TimingNotes, x.EmptyValues)
	full := len(x.Points) <= 20_000
	for i := range x.Points {
		p := &x.Points[i]
		fmt.Fprintf(w, "#%d %s class %s twin %q gpus %d cost %v %v %v shard7 %d %s\n", p.Index, p.ID, p.Class, p.EquivalentTo,
			p.GPUs, p.CostUSDPerHour, p.PrefillGPUHourUSD, p.DecodeGPUHourUSD, ShardOf(p.ID, 7), p.Label())
		if err := x.Materialize(x.Points[i : i+1]); err != nil {
			t.Fatal(err)
		}
		js, err := json.Marshal(p.Config)
		if err != nil {
			t.Fatal(err)
		}
		if full {
			fmt.Fprintf(w, "  %s\n  %q\n", js, p.YAML)
		} else {
			fmt.Fprintf(w, "  %x %x\n", sha256.Sum256(js), sha256.Sum256(p.YAML))
		}
		p.Config, p.YAML = nil, nil
	}
}
