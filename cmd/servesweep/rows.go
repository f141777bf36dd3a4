package main

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/parquet-go/parquet-go"
	"github.com/servesweep/servesweep/results"
	"github.com/servesweep/servesweep/sim/config"
	"github.com/spf13/cobra"
)

// rowsOptions are the flags of `servesweep rows`.
type rowsOptions struct {
	ResultsDir string
	// Format is csv or jsonl.
	Format string
	// Columns lists the --columns values as given (comma-separated lists); empty: every column.
	Columns []string
	// Front keeps only the rows of the Pareto front (pareto.json's points and their ties).
	Front bool
	// Table is the table printed: results (results.parquet, one row per point) or probes
	// (probes.parquet, one row per capacity-search probe).
	Table string
	// columnsSet says --columns was given (an empty value is then refused, not read as all).
	columnsSet bool
}

// The values of rows --format.
const (
	rowsCSV   = "csv"
	rowsJSONL = "jsonl"
)

// The values of rows --table.
const (
	rowsTableResults = "results"
	rowsTableProbes  = "probes"
)

func newRowsCmd(io ioStreams) *cobra.Command {
	opts := &rowsOptions{}
	cmd := &cobra.Command{
		Use:   "rows --results DIR [--table results|probes] [--format csv|jsonl] [--columns a,b,...] [--front]",
		Short: "Print results.parquet's rows (or probes.parquet's) as CSV or JSON lines, for tools without a Parquet reader",
		Long: `Print the rows of DIR/results.parquet on stdout, in the file's row order (point order):
as CSV with a header line (--format csv, the default), or as one JSON object per line
(--format jsonl). Columns come in the file's order, or in the order --columns names them.

--table probes prints DIR/probes.parquet instead, which a sweep under
optimization.capacity_search writes: one row per probe (simulation) of every point's search, in
the file's order (each point's probes in the order they ran). --front then keeps the probes of
the front's points, point by point in the front's order.

--front keeps only the points of the Pareto front that DIR/pareto.json records (with the
points tied to them, from pareto_ties.parquet when pareto.json lists only the first ones), in
pareto.json's order, each entry followed by its ties: the order of report.md's Pareto table
(and of the summary and recommendations/ when the sweep's target is pareto). A front point the
table does not hold is an error (pareto.json is stale, or probes.parquet lacks its probes); so is
a pareto.json whose schema_version is missing or not the one this servesweep writes.

A sharded sweep's directory reads the same once servesweep merge has written its
results.parquet (and probes.parquet). A partial sweep (interrupted, or merged without all its
shards) prints the rows it holds, saying on stderr that they are part of the sweep.

Values: numbers in fixed notation, exactly as stored (a float64 prints the shortest text that
reads back to the same value, never with an exponent); booleans true or false; NaN and
infinities as NaN, +Inf and -Inf (in JSON as those strings). A null (a column that does not
apply to the row, such as a decode role's column on an aggregated point, or any metric of a
failed point) is an empty field in CSV, so it reads like an empty string there, and null in
JSON lines, where the two differ.`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 0 {
				return &usageError{fmt.Errorf("rows takes no positional arguments, got %q", args)}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.columnsSet = cmd.Flags().Changed("columns")
			return runRows(io, opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.ResultsDir, "results", "", "a sweep's output directory, holding results.parquet (and probes.parquet after a capacity search) (required)")
	f.StringVar(&opts.Format, "format", rowsCSV, "stdout format: csv (a header line, then one line per row) or jsonl (one JSON object per row)")
	f.StringArrayVar(&opts.Columns, "columns", nil, "the columns to print, in this order, comma-separated (repeatable; default: every column, in file order)")
	f.BoolVar(&opts.Front, "front", false, "print only the rows of the Pareto front's points (pareto.json), or with --table probes their probes")
	f.StringVar(&opts.Table, "table", rowsTableResults, "the table to print: results (results.parquet, a row per point) or probes (probes.parquet, a row per capacity-search probe)")
	mustDirname(cmd, "results")
	mustComplete(cmd, "format", fixed(rowsCSV+"\ta header line, then one line per row", rowsJSONL+"\tone JSON object per row"))
	mustComplete(cmd, "table", fixed(rowsTableResults+"\tresults.parquet: a row per point", rowsTableProbes+"\tprobes.parquet: a row per capacity-search probe"))
	mustComplete(cmd, "columns", completeColumns)
	return cmd
}

// completeColumns completes --columns with the column names of the --table given
// (results.parquet's by default).
func completeColumns(cmd *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
	var names []cobra.Completion
	if table, _ := cmd.Flags().GetString("table"); table == rowsTableProbes {
		for _, name := range probeColumnNames() {
			names = append(names, name)
		}
	} else {
		for _, c := range results.Columns() {
			names = append(names, c.Name)
		}
	}
	return names, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
}

// probeColumnNames are probes.parquet's column names, in file order (results.ProbeRow's).
func probeColumnNames() []string {
	return results.ColumnNames(parquet.SchemaOf(results.ProbeRow{}))
}

func runRows(io ioStreams, opts *rowsOptions) error {
	if opts.Format != rowsCSV && opts.Format != rowsJSONL {
		return &usageError{fmt.Errorf("--format must be csv or jsonl, got %q", opts.Format)}
	}
	if opts.Table != rowsTableResults && opts.Table != rowsTableProbes {
		return &usageError{fmt.Errorf("--table must be results or probes, got %q", opts.Table)}
	}
	if opts.ResultsDir == "" {
		return &usageError{errors.New("--results is required: a sweep's output directory")}
	}
	path := filepath.Join(opts.ResultsDir, results.ParquetFile)
	open := openResultsTable
	if opts.Table == rowsTableProbes {
		path, open = filepath.Join(opts.ResultsDir, results.ProbesFile), openProbesTable
	}
	t, err := open(opts.ResultsDir, path)
	if err != nil {
		return err
	}
	defer t.Close()
	switch m, err := results.ReadManifest(opts.ResultsDir); {
	case err != nil || m == nil:
		// Without the manifest the table cannot be told whole or partial: say so.
		why := "is missing"
		if err != nil {
			why = "cannot be read (" + err.Error() + ")"
		}
		fmt.Fprintf(io.Err, "servesweep rows: note: %s %s: whether these rows are every selected point of the sweep "+
			"(or part of an interrupted one) is unknown\n", filepath.Join(opts.ResultsDir, results.ManifestFile), why)
	case m.Incomplete():
		// The table reads like a whole sweep's: say it is not, as report does.
		fmt.Fprintf(io.Err, "servesweep rows: PARTIAL: the sweep in %s is incomplete (%s): its tables hold the points that have "+
			"results, not all %d selected points\n", opts.ResultsDir, partialWhy(m), m.Counts.SelectedPoints)
	}
	if opts.columnsSet && len(opts.Columns) == 0 {
		return &usageError{errors.New("--columns is empty: name at least one column (omit the flag for every column)")}
	}
	cols, err := t.pick(opts.Columns)
	if err != nil {
		return err
	}
	keep, err := frontFilter(opts, t, path)
	if err != nil {
		return err
	}
	if opts.Front && len(keep) == 0 {
		// An empty output is an answer too: say which, so that it does not read as a failure.
		fmt.Fprintf(io.Err, "servesweep rows: the front of %s is empty: no point was a candidate "+
			"(report.md says why: failed, infeasible or filtered points)\n", filepath.Join(opts.ResultsDir, results.ParetoFile))
	}
	if err := writeRows(io.Out, t, cols, keep, opts.Format == rowsCSV); err != nil {
		var re *tableReadError
		if errors.As(err, &re) {
			return &usageError{fmt.Errorf("%s is damaged: %v; rerun the sweep into %s (its journal keeps every finished point) to "+
				"write it again, or servesweep merge for a sharded sweep's", path, re.err, opts.ResultsDir)}
		}
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// tableReadError is an error reading a table's rows (a damaged page), as opposed to one writing
// them out.
type tableReadError struct{ err error }

func (e *tableReadError) Error() string { return e.err.Error() }
func (e *tableReadError) Unwrap() error { return e.err }

// writeRows writes the columns cols of t's rows to w, as CSV with a header line or as JSON
// lines. With keep (--front) only the rows whose point_id it holds are written, in the order of
// their rank there (pareto.json's, which the sweep's summary, report.md and recommendations/
// number), not the table's; rows of one rank keep the table's order.
func writeRows(w io.Writer, t *table, cols []int, keep map[string]int, asCSV bool) error {
	out := bufio.NewWriter(w)
	var line bytes.Buffer
	lineOut := bufio.NewWriter(&line)
	cw := csv.NewWriter(&line) // Flush writes the record into line
	record := make([]string, len(cols))
	if asCSV {
		for i, c := range cols {
			record[i] = t.names[c]
		}
		if err := cw.Write(record); err != nil {
			return err
		}
		cw.Flush()
	}
	// With --front nothing is written until every front point was found (the header waits too).
	header := bytes.Clone(line.Bytes())
	if keep == nil {
		if _, err := out.Write(header); err != nil {
			return err
		}
	}
	type ranked struct {
		rank int
		row  []byte
	}
	var held []ranked
	seen := map[string]bool{}
	err := t.each(func(vals []parquet.Value) error {
		rank, ok := 0, true
		if keep != nil {
			id := vals[t.index["point_id"]].String()
			if rank, ok = keep[id]; ok {
				seen[id] = true
			}
		}
		if !ok {
			return nil
		}
		line.Reset()
		if asCSV {
			for i, c := range cols {
				record[i] = csvValue(vals[c])
			}
			if err := cw.Write(record); err != nil {
				return err
			}
			cw.Flush()
		} else if err := writeJSONRow(lineOut, t.names, cols, vals); err != nil {
			return err
		}
		if err := lineOut.Flush(); err != nil {
			return err
		}
		if keep != nil {
			held = append(held, ranked{rank, bytes.Clone(line.Bytes())})
			return nil
		}
		_, err := out.Write(line.Bytes())
		return err
	})
	if err != nil {
		return err
	}
	if len(seen) < len(keep) {
		var missing []string
		for id := range keep {
			if !seen[id] {
				missing = append(missing, id)
			}
		}
		slices.Sort(missing)
		if t.file == results.ProbesFile {
			return &usageError{fmt.Errorf("the front names point %s, whose probes %s does not hold (%d such points): the file is "+
				"of another sweep than pareto.json, or lost rows; rerun the sweep into its directory (every point resumes from "+
				"its journal, which keeps the probes) to write both again", missing[0], t.file, len(missing))}
		}
		return &usageError{fmt.Errorf("the front names point %s, which %s does not hold (%d such): pareto.json is stale or of another sweep; "+
			"run servesweep report --overwrite on the sweep's directory to rewrite it", missing[0], t.file, len(missing))}
	}
	slices.SortStableFunc(held, func(a, b ranked) int { return a.rank - b.rank })
	if keep != nil {
		if _, err := out.Write(header); err != nil {
			return err
		}
	}
	for _, h := range held {
		if _, err := out.Write(h.row); err != nil {
			return err
		}
	}
	return out.Flush()
}

// frontFilter returns, with --front, the point IDs of the front's rows with their rank on it
// (frontPointIDs), which the table t at path selects by its point_id column; nil without --front.
func frontFilter(opts *rowsOptions, t *table, path string) (map[string]int, error) {
	if !opts.Front {
		return nil, nil
	}
	keep, err := frontPointIDs(opts.ResultsDir)
	if err != nil {
		return nil, err
	}
	if _, ok := t.index["point_id"]; !ok {
		return nil, &usageError{fmt.Errorf("%s has no point_id column to select the front's rows by", path)}
	}
	return keep, nil
}

// openResultsTable opens the results table at path in the sweep output directory dir; a missing
// table is a usage error that says what dir is instead (a file, a sharded sweep's output to
// merge first, or no sweep's), and so is another Parquet table in its place (the front's ties
// table, a probe table, another tool's).
func openResultsTable(dir, path string) (*table, error) {
	return openSweepTable(dir, path, missingResults, func(t *table) string {
		if msg := results.MissingResultsColumns(t.names); msg != "" {
			return fmt.Sprintf("%s: %s; give a sweep's output directory, whose %s servesweep sweep wrote", path, msg, results.ParquetFile)
		}
		return ""
	})
}

// openProbesTable opens the probes table at path in the sweep output directory dir (rows
// --table probes). A missing table is a usage error that says why (missingProbes); so is another
// Parquet table in its place.
func openProbesTable(dir, path string) (*table, error) {
	return openSweepTable(dir, path, missingProbes, func(t *table) string {
		for _, c := range []string{"point_id", "probe_index"} {
			if _, ok := t.index[c]; !ok {
				return fmt.Sprintf("%s has no %s column: not a probes table servesweep sweep wrote", path, c)
			}
		}
		return ""
	})
}

// openSweepTable opens the table at path in the sweep output directory dir. A dir that does not
// exist or is a file (checkSweepDir), a missing table (missing(dir)), an unreadable one, and one
// wrong says is another table (its text follows "--results DIR: ") are usage errors.
func openSweepTable(dir, path string, missing func(dir string) error, wrong func(t *table) string) (*table, error) {
	if err := checkSweepDir(dir); err != nil {
		return nil, err
	}
	t, err := openTable(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, missing(dir)
	}
	if err != nil {
		return nil, &usageError{fmt.Errorf("--results %s: %w", dir, err)}
	}
	if msg := wrong(t); msg != "" {
		t.f.Close()
		return nil, &usageError{fmt.Errorf("--results %s: %s", dir, msg)}
	}
	return t, nil
}

// missingProbes is the usage error for a --results directory dir without probes.parquet, saying
// why: its shards' probe tables are not merged yet, the file was removed from a sweep that ran a
// capacity search (its sweep.json records the search: rerunning the sweep writes it again from
// the journal), the sweep ran none, or dir holds no sweep (missingResults).
func missingProbes(dir string) error {
	if _, err := os.Stat(filepath.Join(dir, results.ParquetFile)); err != nil {
		return missingResults(dir)
	}
	if parts, _ := results.FindParts(filepath.Join(dir, results.ProbesDir)); len(parts) > 0 {
		return &usageError{fmt.Errorf("--results %s has no %s, but its shards' probe tables are in %s: "+
			"run servesweep merge --results %s to join them", dir, results.ProbesFile, filepath.Join(dir, results.ProbesDir), dir)}
	}
	m, err := results.ReadManifest(dir)
	if m == nil {
		why := "is missing"
		if err != nil {
			why = "cannot be read (" + err.Error() + ")"
		}
		return &usageError{fmt.Errorf("--results %s has no %s, and its %s %s, so whether its sweep ran a capacity search is "+
			"unknown: if it did, rerun the sweep into %s with the spec and --set overrides it ran with (its journal keeps the "+
			"probes, and both files are written again)", dir, results.ProbesFile, results.ManifestFile, why, dir)}
	}
	if m.CapacitySearch != nil {
		if rows, err := results.ReadParquet(filepath.Join(dir, results.ParquetFile)); err == nil &&
			!slices.ContainsFunc(rows, func(r results.Row) bool { return r.CapacityProbes != nil }) {
			// A search that failed or timed out keeps the probes that ran before it stopped
			// (capacity_probes): none here ran one.
			why := "each failed or timed out: results.parquet's status and reason say why"
			if m.Incomplete() {
				why = fmt.Sprintf("the sweep is incomplete, %s: rerun it into %s to finish, or see results.parquet's status and "+
					"reason for those that ran", partialWhy(m), dir)
			}
			return &usageError{fmt.Errorf("--results %s has no %s: its sweep ran a capacity search (%s), but no point's "+
				"search finished (%s), and none ran a probe before it stopped, so no probe was kept", dir, results.ProbesFile, results.ManifestFile, why)}
		}
		return &usageError{fmt.Errorf("--results %s has no %s, though its sweep ran a capacity search (%s): rerun the sweep "+
			"into %s with the spec and --set overrides it ran with (every point resumes from its journal, which keeps "+
			"the probes, and the file is written again)", dir, results.ProbesFile, results.ManifestFile, dir)}
	}
	return &usageError{fmt.Errorf("--results %s has no %s: its sweep ran no capacity search "+
		"(optimization.capacity_search writes a row per probe); --table results prints its points", dir, results.ProbesFile)}
}

// checkSweepDir is the usage error for a --results dir that does not exist or is a file; nil
// otherwise.
func checkSweepDir(dir string) error {
	switch st, err := os.Stat(dir); {
	case errors.Is(err, os.ErrNotExist):
		return &usageError{fmt.Errorf("--results %s does not exist; give a sweep's output directory", dir)}
	case err == nil && !st.IsDir():
		return &usageError{fmt.Errorf("--results %s is a file; give a sweep's output directory (the folder that holds %s)",
			dir, results.ParquetFile)}
	}
	return nil
}

// missingResults is the usage error for a --results directory dir without results.parquet, saying
// what dir holds instead: the parts of a sharded sweep (merge them first), the analysis `report
// --output-dir` wrote apart from its sweep (give the sweep's directory), or no sweep's output.
func missingResults(dir string) error {
	if parts, _ := results.FindParts(filepath.Join(dir, results.PartsDir)); len(parts) > 0 {
		return &usageError{fmt.Errorf("--results %s holds the parts of a sharded sweep but no %s; "+
			"run servesweep merge --results %s first", dir, results.ParquetFile, dir)}
	}
	for _, f := range []string{results.ReportFile, results.ParetoFile} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			return &usageError{fmt.Errorf("--results %s holds a report (%s) but no %s: servesweep report --output-dir "+
				"writes its analysis apart from the sweep it read; give that sweep's output directory (report's --results)",
				dir, f, results.ParquetFile)}
		}
	}
	return &usageError{fmt.Errorf("--results %s has no %s; give a sweep's output directory, or run servesweep sweep --output-dir %s first",
		dir, results.ParquetFile, dir)}
}

// table is a flat Parquet file opened for reading its rows as values.
type table struct {
	f     *os.File
	file  string // the file's base name, for messages
	pf    *parquet.File
	names []string       // leaf column names, in file order
	index map[string]int // column name → position in names
}

// openTable opens the Parquet file at path. A file that is not Parquet is an error naming it;
// a missing file is an error satisfying errors.Is(err, os.ErrNotExist).
func openTable(path string) (*table, error) {
	if k := config.NotRegular(path); k != "" { // opening a named pipe would block
		return nil, fmt.Errorf("%s is %s, not a regular file", path, k)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s is not a readable Parquet file: %v", path, err)
	}
	t := &table{f: f, file: filepath.Base(path), pf: pf, index: map[string]int{}}
	t.names = results.ColumnNames(pf.Schema())
	for i, name := range t.names {
		t.index[name] = i
	}
	return t, nil
}

// Close closes the file.
func (t *table) Close() error { return t.f.Close() }

// pick resolves --columns (its values as given, each a comma-separated list) to column
// positions; none means every column. An empty value, an empty name, a name given twice or an
// unknown name is a usage error; an unknown one lists the table's columns, and says so when the
// name is a column of the other table (--table).
func (t *table) pick(given []string) ([]int, error) {
	if len(given) == 0 {
		all := make([]int, len(t.names))
		for i := range all {
			all[i] = i
		}
		return all, nil
	}
	example := "point_id,status"
	if t.file == results.ProbesFile {
		example = "point_id,load"
	}
	var cols []int
	var unknown []string
	var other string // an unknown name that is a column of the other table
	for _, v := range given {
		if strings.TrimSpace(v) == "" {
			return nil, &usageError{errors.New("--columns is empty: name at least one column (omit the flag for every column)")}
		}
		for _, name := range strings.Split(v, ",") {
			name = strings.TrimSpace(name)
			if name == "" {
				return nil, &usageError{fmt.Errorf("--columns %q has an empty column name (a comma with nothing beside it); "+
					"give names separated by single commas, e.g. %s", v, example)}
			}
			i, ok := t.index[name]
			if !ok {
				q := strconv.Quote(name)
				if near := config.NearestName(name, t.names); near != "" && !t.otherTableHas(name) {
					q += " (did you mean " + near + "?)"
				}
				if !slices.Contains(unknown, q) {
					unknown = append(unknown, q)
				}
				if other == "" && t.otherTableHas(name) {
					other = name
				}
				continue
			}
			if slices.Contains(cols, i) {
				// A JSON line cannot hold one key twice, nor should a CSV header.
				return nil, &usageError{fmt.Errorf("--columns names %s twice; name each column once", name)}
			}
			cols = append(cols, i)
		}
	}
	if len(unknown) > 0 {
		hint := ""
		if other != "" {
			table, file := rowsTableProbes, results.ProbesFile
			if t.file == results.ProbesFile {
				table, file = rowsTableResults, results.ParquetFile
			}
			hint = fmt.Sprintf(" (%s is a column of %s: --table %s prints it)", other, file, table)
		}
		return nil, &usageError{fmt.Errorf("--columns: no column %s in %s%s; its columns are: %s",
			strings.Join(unknown, ", "), t.file, hint, strings.Join(t.names, ", "))}
	}
	return cols, nil
}

// otherTableHas reports whether name is a column of the table rows --table does not print now:
// results.parquet's for probes.parquet, probes.parquet's for results.parquet.
func (t *table) otherTableHas(name string) bool {
	if t.file == results.ProbesFile {
		return slices.ContainsFunc(results.Columns(), func(c results.Column) bool { return c.Name == name })
	}
	return t.file == results.ParquetFile && slices.Contains(probeColumnNames(), name)
}

// each calls fn with every row's values, one per leaf column in file order (a null is a null
// Value), row groups in file order.
func (t *table) each(fn func([]parquet.Value) error) error {
	vals := make([]parquet.Value, len(t.names))
	buf := make([]parquet.Row, 128)
	for _, rg := range t.pf.RowGroups() {
		rows := rg.Rows()
		for {
			n, err := rows.ReadRows(buf)
			for _, row := range buf[:n] {
				clear(vals)
				for _, v := range row {
					if c := v.Column(); c >= 0 && c < len(vals) {
						vals[c] = v
					}
				}
				if ferr := fn(vals); ferr != nil {
					rows.Close()
					return ferr
				}
			}
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				rows.Close()
				return &tableReadError{err}
			}
		}
		if err := rows.Close(); err != nil {
			return &tableReadError{err}
		}
	}
	return nil
}

// csvValue renders v for CSV: "" for a null, else valueText.
func csvValue(v parquet.Value) string {
	if v.IsNull() {
		return ""
	}
	s, _ := valueText(v)
	return s
}

// valueText renders a non-null value as text: integers in decimal, floating-point numbers as
// the shortest fixed-notation text that reads back to the same value (NaN, +Inf, -Inf for the
// special values), booleans as true or false, byte arrays as their (UTF-8) text. quoted reports
// whether JSON must write the text as a string.
func valueText(v parquet.Value) (s string, quoted bool) {
	switch v.Kind() {
	case parquet.Boolean:
		return strconv.FormatBool(v.Boolean()), false
	case parquet.Int32:
		return strconv.FormatInt(int64(v.Int32()), 10), false
	case parquet.Int64:
		return strconv.FormatInt(v.Int64(), 10), false
	case parquet.Float:
		return floatText(float64(v.Float()), 32)
	case parquet.Double:
		return floatText(v.Double(), 64)
	}
	return string(v.ByteArray()), true
}

// floatText is valueText for a float of bitSize bits.
func floatText(x float64, bitSize int) (string, bool) {
	switch {
	case math.IsNaN(x):
		return "NaN", true
	case math.IsInf(x, 1):
		return "+Inf", true
	case math.IsInf(x, -1):
		return "-Inf", true
	}
	return strconv.FormatFloat(x, 'f', -1, bitSize), false
}

// writeJSONRow writes the columns cols of one row as a JSON object on one line, keys in the
// order of cols.
func writeJSONRow(w *bufio.Writer, names []string, cols []int, vals []parquet.Value) error {
	w.WriteByte('{')
	for i, c := range cols {
		if i > 0 {
			w.WriteByte(',')
		}
		key, err := json.Marshal(names[c])
		if err != nil {
			return err
		}
		w.Write(key)
		w.WriteByte(':')
		v := vals[c]
		if v.IsNull() {
			w.WriteString("null")
			continue
		}
		s, quoted := valueText(v)
		if !quoted {
			w.WriteString(s)
			continue
		}
		q, err := json.Marshal(s)
		if err != nil {
			return err
		}
		w.Write(q)
	}
	w.WriteString("}\n")
	return nil
}

// paretoFront is the part of pareto.json that names the front's points, and its version.
type paretoFront struct {
	// SchemaVersion is nil when the document has none.
	SchemaVersion *string `json:"schema_version"`
	Front         []struct {
		PointID        string   `json:"point_id"`
		TiedPointIDs   []string `json:"tied_point_ids"`
		TiedPointCount int      `json:"tied_point_count"`
	} `json:"front"`
	TiesFile string `json:"ties_file"`
}

// checkParetoVersion refuses the pareto.json at path (of the results directory dir) unless its
// schema_version, v (nil: none), is the one servesweep writes: another version's front may not
// mean what this one's does.
func checkParetoVersion(path, dir string, v *string) error {
	rewrite := fmt.Sprintf("run servesweep report --results %s --overwrite to rewrite it", dir)
	switch {
	case v == nil:
		return &usageError{fmt.Errorf("--front: %s has no schema_version; this servesweep reads pareto.json schema_version %q: %s",
			path, results.ParetoSchemaVersion, rewrite)}
	case *v != results.ParetoSchemaVersion:
		return &usageError{fmt.Errorf("--front: %s has schema_version %q; this servesweep reads pareto.json schema_version %q: %s",
			path, *v, results.ParetoSchemaVersion, rewrite)}
	}
	return nil
}

// frontPointIDs returns the point IDs of dir's Pareto front, each with its entry's index in
// pareto.json's front (its rank, from 0): each front entry, the points tied to it that it lists
// and, when it lists only the first of them, every tied point of pareto_ties.parquet (under the
// entry its point_id column names).
func frontPointIDs(dir string) (map[string]int, error) {
	path := filepath.Join(dir, results.ParetoFile)
	if k := config.NotRegular(path); k != "" {
		return nil, &usageError{fmt.Errorf("--front: %s is %s, not a regular file; remove it and run servesweep report --results %s --overwrite to rewrite it",
			path, k, dir)}
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, &usageError{fmt.Errorf("--front needs %s, which is missing; run servesweep report --results %s --overwrite to write it", path, dir)}
	}
	if err != nil {
		return nil, err
	}
	var doc paretoFront
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, &usageError{fmt.Errorf("--front: %s is not a pareto.json document: %v; run servesweep report --results %s --overwrite to rewrite it",
			path, err, dir)}
	}
	if err := checkParetoVersion(path, dir, doc.SchemaVersion); err != nil {
		return nil, err
	}
	if doc.Front == nil {
		return nil, &usageError{fmt.Errorf("--front: %s has no front; run servesweep report --results %s --overwrite to rewrite it", path, dir)}
	}
	keep := map[string]int{}
	complete := true
	for rank, p := range doc.Front {
		keep[p.PointID] = rank
		for _, id := range p.TiedPointIDs {
			keep[id] = rank
		}
		complete = complete && p.TiedPointCount <= len(p.TiedPointIDs)
	}
	if complete {
		return keep, nil
	}
	tiesPath := filepath.Join(dir, results.TiesFile)
	rewrite := fmt.Sprintf("run servesweep report --results %s --overwrite to rewrite it with pareto.json", dir)
	ties, err := openTable(tiesPath)
	if err != nil {
		return nil, &usageError{fmt.Errorf("--front: pareto.json lists only the first points of a tie, and the full list is unreadable: %v; %s",
			config.PathCause(err), rewrite)}
	}
	defer ties.Close()
	c, ok := ties.index["tied_point_id"]
	if !ok {
		return nil, &usageError{fmt.Errorf("--front: %s has no tied_point_id column: not the ties table servesweep writes; %s", tiesPath, rewrite)}
	}
	entry, hasEntry := ties.index["point_id"]
	err = ties.each(func(vals []parquet.Value) error {
		rank, ok := len(doc.Front), false
		if hasEntry {
			rank, ok = keep[vals[entry].String()]
		}
		if !ok {
			rank = len(doc.Front)
		}
		keep[vals[c].String()] = rank
		return nil
	})
	if err != nil {
		return nil, &usageError{fmt.Errorf("--front: %s is damaged: %v; %s", tiesPath, err, rewrite)}
	}
	return keep, nil
}
