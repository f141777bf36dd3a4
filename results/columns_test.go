package results

import (
	"flag"
	"os"
	"strings"
	"testing"
)

var updateColumns = flag.Bool("update", false, "rewrite ../docs/results-columns.md from results.Row")

// columnsPage is the generated column reference, beside the other reference pages.
const columnsPage = "../docs/results-columns.md"

// TestColumnReferenceIsCurrent fails when docs/results-columns.md differs from what Row's schema
// generates (ColumnReference): a column added, removed, renamed or retyped without the page.
func TestColumnReferenceIsCurrent(t *testing.T) {
	want := ColumnReference()
	if *updateColumns {
		if err := os.WriteFile(columnsPage, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(columnsPage)
	if err != nil {
		t.Fatalf("%v; generate it with go test ./results -run ColumnReference -args -update", err)
	}
	if string(got) != want {
		t.Errorf("%s is out of date with results.Row; regenerate it with go test ./results -run ColumnReference -args -update", columnsPage)
	}
	// Spot checks on the generated page itself.
	for _, frag := range []string{"| 1 | `point_id` | STRING | no |", "`status`", "`output_throughput_tok_s` | DOUBLE"} {
		if !strings.Contains(want, frag) {
			t.Errorf("the generated page lacks %q", frag)
		}
	}
}
