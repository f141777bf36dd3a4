package results

import (
	"fmt"
	"strings"

	"github.com/parquet-go/parquet-go"
)

// ColumnReference renders the columns of results.parquet, in file order, as the Markdown page
// docs/results-columns.md: one table row per column with its name, its Parquet type as the
// library names it (e.g. INT64, DOUBLE, BOOLEAN, STRING) and whether it may be null. The page is
// generated from Row's schema, so it cannot drift from the file (TestColumnReferenceIsCurrent);
// what each column means is in docs/outputs.md.
func ColumnReference() string {
	var b strings.Builder
	schema := parquet.SchemaOf(Row{})
	b.WriteString("# results.parquet columns\n\n")
	b.WriteString("Generated from `results.Row` by `go test ./results -run ColumnReference -args -update`; do not edit.\n")
	b.WriteString("What each column means: [Outputs](outputs.md#resultsparquet).\n\n")
	fmt.Fprintf(&b, "%d columns.\n\n", len(schema.Fields()))
	b.WriteString("| # | column | type | nullable |\n|---:|---|---|---|\n")
	for i, f := range schema.Fields() {
		typ := "group"
		if f.Leaf() {
			typ = f.Type().String()
		}
		null := "no"
		if f.Optional() {
			null = "yes"
		}
		fmt.Fprintf(&b, "| %d | `%s` | %s | %s |\n", i+1, f.Name(), typ, null)
	}
	return b.String()
}
