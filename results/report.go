package results

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/servesweep/servesweep/sim/config"
	"github.com/servesweep/servesweep/sim/optimization"
	"gopkg.in/yaml.v3"
)

// Names of the report files inside an output directory.
const (
	ManifestFile = "sweep.json"
	ParetoFile   = "pareto.json"
	ReportFile   = "report.md"
	PlotFile     = "pareto.png"
	// TiesFile holds every tie group's full membership when the front has ties
	// (WriteReport; TieRow).
	TiesFile            = "pareto_ties.parquet"
	RecommendationsDir  = "recommendations"
	maxScalarRecommends = 10
)

// Counts summarizes a sweep: its grid and what became of its points.
type Counts struct {
	// GridPoints is the size of the Cartesian product before filtering.
	GridPoints int `json:"grid_points"`
	// ValidPoints passed decoding, the schema's cross-field rules and the GPU budget, after
	// removing duplicate configs; SelectedPoints is how many the optimizer picked of them.
	ValidPoints    int `json:"valid_points"`
	SelectedPoints int `json:"selected_points"`
	// Filtered counts the grid points dropped before simulation, by reason.
	Filtered map[string]int `json:"filtered"`
	// Resumed points were finished by an earlier run; Simulated ones by this run.
	Resumed   int `json:"resumed_points"`
	Simulated int `json:"simulated_points"`
	// OK, Degraded, Infeasible, Failed and TimedOut count the rows by status.
	OK         int `json:"ok"`
	Degraded   int `json:"degraded"`
	Infeasible int `json:"infeasible"`
	Failed     int `json:"failed"`
	TimedOut   int `json:"timed_out"`
	// Interrupted is set when the sweep stopped before every selected point finished.
	Interrupted bool `json:"interrupted"`
}

// CountStatuses counts rows by status into the OK, Degraded, Infeasible, Failed and TimedOut fields of a
// Counts (the other fields are zero).
func CountStatuses(rows []Row) Counts {
	var c Counts
	for i := range rows {
		c.addStatus(rows[i].Status)
	}
	return c
}

// addStatus counts one row of status st.
func (c *Counts) addStatus(st string) {
	switch st {
	case StatusOK:
		c.OK++
	case StatusDegraded:
		c.Degraded++
	case StatusInfeasible:
		c.Infeasible++
	case StatusTimedOut:
		c.TimedOut++
	default:
		c.Failed++
	}
}

// Manifest describes a sweep run; it is written as sweep.json beside results.parquet, and the
// report command reads its settings as defaults.
type Manifest struct {
	// SchemaVersion is the version of the sweep.json format (set by WriteManifest).
	SchemaVersion string `json:"schema_version"`
	// Defaulted marks a manifest made up for results that had none (servesweep report on a bare
	// results.parquet): default settings, no spec, no counts. Never written.
	Defaulted bool `json:"-"`
	// Spec names the sweep spec file; SpecHash identifies the expanded spec
	// (grid.Expansion.SpecHash), so that a sweep does not resume into another spec's directory.
	Spec     string `json:"spec"`
	SpecHash string `json:"spec_hash,omitempty"`
	// Algorithm is optimizer.algorithm (grid or random).
	Algorithm string `json:"algorithm"`
	// Settings are the sweep's analysis settings (the report command's defaults).
	Settings optimization.Settings `json:"settings"`
	// Counts describe the grid and the run. For a merge (see Merge), Simulated counts the
	// merged rows and Resumed is 0.
	Counts Counts `json:"counts"`
	// CapacitySearch is the spec's optimization.capacity_search (nil: none); GPUHourUSD its
	// optimization.cost.gpu_hour_usd prices by hardware id (nil: none).
	CapacitySearch *optimization.CapacitySearch `json:"capacity_search,omitempty"`
	GPUHourUSD     map[string]float64           `json:"gpu_hour_usd,omitempty"`
	// ExamplePrices is set when GPUHourUSD are the built-in sweep's example prices
	// (examples/default-sweep.yaml run without -c and without changing them), not the user's.
	ExamplePrices bool `json:"example_prices,omitempty"`
	// Merge is set when the results were merged from the parts of a sharded sweep
	// (`servesweep merge`): which parts, and what is missing.
	Merge *MergeInfo `json:"merge,omitempty"`
	// FilteredExamples holds, per reason of Counts.Filtered, the first grid point filtered for it
	// and why ("point <label>: <message>"); EmptyValues the domain values no valid point takes.
	// report.md lists both (absent from a sweep.json of an older servesweep).
	FilteredExamples map[string]string `json:"filtered_examples,omitempty"`
	EmptyValues      []EmptyValue      `json:"empty_values,omitempty"`
	// SeedCheck is the sweep's seed check of its answer (nil: none ran; absent from a sweep.json
	// of an older servesweep), SeedCheckSkipped why none ran when the reason is one a reader
	// should see (SeedCheckDisabled, SeedCheckInterrupted, SeedCheckSharded, or "failed: " and
	// the error).
	SeedCheck        *SeedCheck `json:"seed_check,omitempty"`
	SeedCheckSkipped string     `json:"seed_check_skipped,omitempty"`
	// Warnings are the spec's warnings as the sweep printed them on stderr (a run-length
	// artifact, a dropped section, a reversed objective, ...), so that report.md keeps them
	// beside the answer; absent when there were none or the manifest predates them.
	Warnings []string `json:"warnings,omitempty"`
}

// EmptyValue is a domain value of a sweep that no valid point takes: every grid point with the
// value was filtered out before simulation.
type EmptyValue struct {
	// Path is the domain's field path and Value the value as YAML text.
	Path  string `json:"path"`
	Value string `json:"value"`
	// Points counts the grid points that take the value; Filtered counts them by reason
	// (invalid_config, unsupported, gpu_budget, duplicate), adding up to Points.
	Points   int            `json:"points"`
	Filtered map[string]int `json:"filtered"`
	// Example is the message of the first of those points filtered for a reason other than the
	// GPU budget (of the first of them when there is none).
	Example string `json:"example"`
}

// BudgetOnly reports whether the GPU budget (reason gpu_budget) alone ruled the value out.
func (v EmptyValue) BudgetOnly() bool {
	return len(v.Filtered) == 1 && v.Filtered[FilteredGPUBudget] > 0
}

// FilteredGPUBudget is the reason of Counts.Filtered for grid points outside the GPU budget of
// optimization.constraints (grid.FilteredGPUBudget).
const FilteredGPUBudget = "gpu_budget"

// Incomplete reports whether some selected point has no result (or, merged, no probes): the sweep was interrupted, or a
// merge lacks shards or points.
func (m *Manifest) Incomplete() bool {
	return m != nil && (m.Counts.Interrupted || (m.Merge != nil && !m.Merge.Complete))
}

// manifestVersion is the schema version of sweep.json and pareto.json.
const manifestVersion = "1"

// ParetoSchemaVersion is the schema_version servesweep writes pareto.json with, and the only
// one its readers (rows --front) accept.
const ParetoSchemaVersion = manifestVersion

// WriteManifest writes m as dir/sweep.json (atomically).
func WriteManifest(dir string, m *Manifest) error {
	m.SchemaVersion = manifestVersion
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return WriteFileAtomic(filepath.Join(dir, ManifestFile), append(data, '\n'))
}

// ManifestError is a sweep.json that is not a manifest this servesweep reads: a directory, not
// JSON, JSON of the wrong shape (`[]`, a string where a number goes), JSON without a
// schema_version (as `{}` or `null`), or another schema_version.
type ManifestError struct {
	// Path is the file read.
	Path string
	// Err says what is wrong with it.
	Err error
	// IsDir says the path is a directory (Err then reads "it is a directory").
	IsDir bool
}

// Error names the file, what a manifest is, and what is wrong with this one.
func (e *ManifestError) Error() string {
	return fmt.Sprintf("%s is not a sweep manifest servesweep wrote (a JSON object with schema_version, spec, settings and counts): %v",
		e.Path, e.Err)
}

// Unwrap returns Err.
func (e *ManifestError) Unwrap() error { return e.Err }

// jsonKind names the JSON kind that decodes into t, for messages: "a string", "an object", ...
func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Pointer:
		return jsonKind(t.Elem())
	}
	return "an object"
}

// ReadManifest reads dir/sweep.json; a missing file gives (nil, nil). A file that cannot be
// read is its error; one that is not a manifest (WriteManifest's) a *ManifestError.
func ReadManifest(dir string) (*Manifest, error) {
	path := filepath.Join(dir, ManifestFile)
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return nil, &ManifestError{Path: path, Err: errors.New("it is a directory"), IsDir: true}
	}
	data, err := config.ReadFile(path)
	var notRegular *config.NotRegularError
	if errors.As(err, &notRegular) {
		return nil, &ManifestError{Path: path, Err: notRegular}
	}
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	// The schema version first: a newer servesweep's fields are not misspellings of this one's.
	var version struct {
		SchemaVersion any `json:"schema_version"`
	}
	if json.Unmarshal(data, &version) == nil {
		switch v := version.SchemaVersion.(type) {
		case string:
			if v != manifestVersion && v != "" {
				return nil, &ManifestError{Path: path, Err: fmt.Errorf("schema_version %q; this servesweep reads %q", v, manifestVersion)}
			}
		}
	}
	var m Manifest
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields() // a misspelt key would otherwise leave its setting at zero
	if err := dec.Decode(&m); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			where := "the file"
			if te.Field != "" {
				where = "field " + te.Field
			}
			err = fmt.Errorf("%s holds a JSON %s where servesweep writes %s", where, te.Value, jsonKind(te.Type))
		} else if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
			err = fmt.Errorf("unknown field %s, which servesweep does not write (a misspelling?)", name)
		}
		return nil, &ManifestError{Path: path, Err: err}
	}
	if dec.More() {
		return nil, &ManifestError{Path: path, Err: errors.New("more than one JSON value")}
	}
	if err := checkCapacitySearch(m.CapacitySearch); err != nil {
		return nil, &ManifestError{Path: path, Err: err}
	}
	switch m.SchemaVersion {
	case manifestVersion:
	case "":
		return nil, &ManifestError{Path: path, Err: errors.New("no schema_version")}
	default:
		return nil, &ManifestError{Path: path, Err: fmt.Errorf("schema_version %q; this servesweep reads %q", m.SchemaVersion, manifestVersion)}
	}
	return &m, nil
}

// interTokenTerms are the SLA terms on the gaps between tokens, which prefill work sharing a
// pass with decodes stretches.
var interTokenTerms = map[string]bool{"itl_ms": true, "p50_itl_ms": true, "p90_itl_ms": true, "p95_itl_ms": true, "p99_itl_ms": true,
	"p50_tpot_ms": true, "p90_tpot_ms": true, "p95_tpot_ms": true, "p99_tpot_ms": true}

// bindingTally is report.md's line counting the capacity searches by the SLA term that limits
// them (sla_binding_term), most first, e.g. "Capacities limited by (...): p99_itl_ms 180,
// ttft_ms 60.", followed by ChunkingHint; "" when no row names a term.
func bindingTally(rows []Row) string {
	count := map[string]int{}
	for i := range rows {
		if r := &rows[i]; r.SLABindingTerm != nil && *r.SLABindingTerm != "" && r.EquivalentTo == "" {
			count[*r.SLABindingTerm]++
		}
	}
	if len(count) == 0 {
		return ""
	}
	terms := slicesSortedKeys(count)
	slices.SortStableFunc(terms, func(x, y string) int { return cmp.Compare(count[y], count[x]) })
	parts := make([]string, len(terms))
	for k, t := range terms {
		parts[k] = fmt.Sprintf("%s %d", t, count[t])
	}
	line := "Capacities limited by (`sla_binding_term`: the SLA term that broke just above each capacity): " +
		strings.Join(parts, ", ") + "."
	if hint := ChunkingHint(rows); hint != "" {
		line += " " + hint
	}
	return line
}

// ChunkingHint says, when an inter-token term (interTokenTerms) limits the capacity of most
// aggregated deployments searched and their token budget (max_batched_tokens) took one value,
// that a smaller budget (chunked prefill) or disaggregated serving is the knob the grid did not
// try; "" otherwise. Printed with the front and in report.md: the capacities, and so the
// answer, would move with it.
func ChunkingHint(rows []Row) string {
	aggregated, interToken := 0, 0
	budgets := map[int64]bool{}
	for i := range rows {
		r := &rows[i]
		if r.SLABindingTerm == nil || r.EquivalentTo != "" || r.AggMaxBatchedTokens == nil {
			continue
		}
		aggregated++
		budgets[*r.AggMaxBatchedTokens] = true
		if interTokenTerms[*r.SLABindingTerm] {
			interToken++
		}
	}
	if aggregated == 0 || 2*interToken <= aggregated || len(budgets) != 1 {
		return ""
	}
	var budget int64
	for v := range budgets {
		budget = v
	}
	return fmt.Sprintf("An inter-token term limits %d of %d aggregated deployments, all with max_batched_tokens %d: decode steps "+
		"wait behind the prefill work a pass carries, so a smaller token budget (chunked prefill: engine.workers.aggregated."+
		"scheduler.max_batched_tokens) or disaggregated serving may raise their capacity; the grid tried no other budget.",
		interToken, aggregated, budget)
}

// checkCapacitySearch checks a manifest's capacity_search against the ranges a spec allows
// (grid's capacitySearch): nil is none.
func checkCapacitySearch(cs *optimization.CapacitySearch) error {
	switch {
	case cs == nil:
		return nil
	case !(cs.Attainment > 0 && cs.Attainment <= 1):
		return fmt.Errorf("capacity_search.attainment %g is outside (0, 1]", cs.Attainment)
	case !(cs.RelativeTolerance > 0 && cs.RelativeTolerance < 1):
		return fmt.Errorf("capacity_search.relative_tolerance %g is outside (0, 1)", cs.RelativeTolerance)
	case !(cs.Min > 0 && cs.Min <= cs.Max && isFinite(cs.Max)):
		return fmt.Errorf("capacity_search.min %g and max %g are not 0 < min <= max", cs.Min, cs.Max)
	case cs.MaxProbes < 2:
		return fmt.Errorf("capacity_search.max_probes %d is below 2", cs.MaxProbes)
	}
	return nil
}

// Written lists the files WriteReport produced, as paths inside the output directory.
type Written struct {
	// Pareto, Report, Plot and HTML are the paths of pareto.json, report.md, pareto.png and
	// report.html; Ties is pareto_ties.parquet's ("" when the front has no tie and none was
	// written).
	Pareto, Report, Plot, HTML, Ties string
	// Recommendations are the recommendation YAMLs in order (front order, or ranking order for a
	// scalar target).
	Recommendations []string
	// RecommendedRows are the rows the recommendations came from, in the same order.
	RecommendedRows []int
	// Exports are the files an --export wrote beside the recommendations
	// (recommendations/NNNN/*), in recommendation order; WriteReport leaves it nil and the
	// command that exports sets it.
	Exports []string
}

// WriteReport writes pareto.json, report.md, the plot, report.html, recommendations/NNNN.yaml (each
// recommended point's concrete prediction config) and, when the front has ties,
// pareto_ties.parquet (every tie, as TieRows; a stale one is removed otherwise) into dir from rows
// and their analysis.
// Recommendations are the Pareto front for target pareto, else the best 10 of the ranking.
// Stale NNNN.yaml files from an earlier report are removed; other files are left alone.
func WriteReport(dir string, rows []Row, a *Analysis, m *Manifest) (*Written, error) {
	w := &Written{
		Pareto: filepath.Join(dir, ParetoFile),
		Report: filepath.Join(dir, ReportFile),
		Plot:   filepath.Join(dir, PlotFile),
		HTML:   filepath.Join(dir, HTMLFile),
	}
	w.RecommendedRows = AnswerRows(a)
	recDir := filepath.Join(dir, RecommendationsDir)
	if err := os.MkdirAll(recDir, 0o755); err != nil {
		return nil, err
	}
	if err := removeStaleRecommendations(recDir); err != nil {
		return nil, err
	}
	for n, i := range w.RecommendedRows {
		path := filepath.Join(recDir, fmt.Sprintf("%04d.yaml", n+1))
		if err := WriteFileAtomic(path, recommendationYAML(&rows[i], n+1, len(w.RecommendedRows), a)); err != nil {
			return nil, err
		}
		w.Recommendations = append(w.Recommendations, path)
	}
	data, err := ParetoDocument(rows, a, m, w.RecommendedRows)
	if err != nil {
		return nil, err
	}
	if ties := tieRows(rows, a); len(ties) > 0 {
		w.Ties = filepath.Join(dir, TiesFile)
		if err := writeTable(w.Ties, ties); err != nil {
			return nil, err
		}
	} else if err := os.Remove(filepath.Join(dir, TiesFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	if err := WriteFileAtomic(w.Pareto, data); err != nil {
		return nil, err
	}
	if err := WriteFileAtomic(w.Report, reportMarkdown(rows, a, m, w)); err != nil {
		return nil, err
	}
	png, err := Plot(rows, a)
	if err != nil {
		return nil, err
	}
	if err := WriteFileAtomic(w.Plot, png); err != nil {
		return nil, err
	}
	page, err := ReportHTML(rows, a, m, w.RecommendedRows)
	if err != nil {
		return nil, err
	}
	if err := WriteFileAtomic(w.HTML, page); err != nil {
		return nil, err
	}
	return w, nil
}

var recommendationName = regexp.MustCompile(`^[0-9]{4}\.yaml$`)

// ReportFilesIn returns the files of a report that dir already holds, the ones WriteReport would
// replace: pareto.json, report.md, pareto.png, report.html and pareto_ties.parquet, then recommendations/NNNN.yaml (as
// slash-separated paths relative to dir, in name order). A missing dir holds none.
func ReportFilesIn(dir string) ([]string, error) {
	var found []string
	for _, name := range []string{ParetoFile, ReportFile, PlotFile, HTMLFile, TiesFile} {
		_, err := os.Lstat(filepath.Join(dir, name))
		if err == nil {
			found = append(found, name)
		} else if !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
	}
	entries, err := os.ReadDir(filepath.Join(dir, RecommendationsDir))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	for _, e := range entries {
		if !e.IsDir() && recommendationName.MatchString(e.Name()) {
			found = append(found, RecommendationsDir+"/"+e.Name())
		}
	}
	return found, nil
}

// ReportBlockers describes each path in dir that WriteReport would have to replace but cannot:
// a report file (pareto.json, report.md, pareto.png, report.html, pareto_ties.parquet, or a
// recommendations/NNNN.yaml) that exists and is not a regular file (config.NotRegular), and a
// recommendations that is not a directory, each as "<path> is a directory, not a regular file".
// A command refuses these before writing anything, so that a report is never half replaced.
func ReportBlockers(dir string) []string {
	var out []string
	for _, name := range []string{ParetoFile, ReportFile, PlotFile, HTMLFile, TiesFile} {
		path := filepath.Join(dir, name)
		if k := config.NotRegular(path); k != "" {
			out = append(out, fmt.Sprintf("%s is %s, not a regular file", path, k))
		}
	}
	recs := filepath.Join(dir, RecommendationsDir)
	if st, err := os.Stat(recs); err == nil && !st.IsDir() {
		return append(out, recs+" is a file, not a directory")
	}
	entries, _ := os.ReadDir(recs)
	for _, e := range entries {
		if path := filepath.Join(recs, e.Name()); recommendationName.MatchString(e.Name()) {
			if k := config.NotRegular(path); k != "" {
				out = append(out, fmt.Sprintf("%s is %s, not a regular file", path, k))
			}
		}
	}
	return out
}

// removeStaleRecommendations removes from dir (a report's recommendations directory) the
// NNNN.yaml files and the NNNN/ export directories of an earlier report, leaving everything else.
func removeStaleRecommendations(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		switch {
		case !e.IsDir() && recommendationName.MatchString(e.Name()):
			err = os.Remove(filepath.Join(dir, e.Name()))
		case e.IsDir() && exportDirName.MatchString(e.Name()):
			// An --export of an earlier report: its launch scripts are of the point that
			// NNNN.yaml named then, not of the one it will name now.
			err = os.RemoveAll(filepath.Join(dir, e.Name()))
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// exportDirName matches the directories an --export writes beside the recommendations,
// recommendations/NNNN/ for recommendations/NNNN.yaml.
var exportDirName = regexp.MustCompile(`^[0-9]{4}$`)

// recommendationYAML is a row's concrete config with a comment header saying where it came from.
func recommendationYAML(r *Row, n, total int, a *Analysis) []byte {
	var b bytes.Buffer
	what := "Pareto front point"
	if a.Ranking != nil {
		what = "ranked point (target " + a.Settings.Target + ")"
	}
	fmt.Fprintf(&b, "# servesweep recommendation %d of %d: %s, point %s, %s.\n", n, total, what, r.PointID, Plural(int(r.GPUs), "GPU"))
	var objs []string
	for _, o := range a.Settings.Objectives {
		if x, ok, _ := numericValue(r, o.Metric); ok {
			objs = append(objs, o.Metric+"="+fmtNum(x))
		}
	}
	fmt.Fprintf(&b, "# %s\n", strings.Join(objs, ", "))
	if r.TimingProvider != nil && strings.Contains(*r.TimingProvider, "op_level") {
		p := *r.TimingProvider
		// Priced from a performance database: predict needs the same one to reproduce it.
		fmt.Fprintf(&b, "# Timing: %s\n", p)
		b.WriteString("# Run it: servesweep predict --stack dynamo -c THIS_FILE --systems-dir DIR (the database the sweep used)\n")
	} else {
		b.WriteString("# Run it: servesweep predict --stack dynamo -c THIS_FILE\n")
	}
	b.WriteString(absTracePaths(r.ConfigYAML))
	return b.Bytes()
}

// absTracePaths returns a point's config YAML with each relative traffic.source.paths entry, and
// an engine.model naming a model directory by a relative path (config.RelativeModelDir), made
// absolute against the working directory, so that a recommendation, whose own relative paths
// would resolve against its folder, runs from any directory. A path the spec file gave is
// absolute already (grid.Load); one --set gave is relative to the working directory, where the
// sweep resolved it. Text without a relative path, or that does not parse, comes back unchanged.
func absTracePaths(text string) string {
	var doc yaml.Node
	if yaml.Unmarshal([]byte(text), &doc) != nil || len(doc.Content) == 0 {
		return text
	}
	child := config.MappingValue
	var nodes []*yaml.Node
	if paths := child(child(child(doc.Content[0], "traffic"), "source"), "paths"); paths != nil && paths.Kind == yaml.SequenceNode {
		nodes = paths.Content
	}
	changed := false
	for _, p := range nodes {
		if p.Kind == yaml.ScalarNode && p.Value != "" && !filepath.IsAbs(p.Value) {
			if abs, err := filepath.Abs(p.Value); err == nil {
				p.Value, changed = abs, true
			}
		}
	}
	if m := child(child(doc.Content[0], "engine"), "model"); m != nil && m.Kind == yaml.ScalarNode && config.RelativeModelDir(m.Value, ".") {
		if abs, err := filepath.Abs(m.Value); err == nil {
			m.Value, changed = abs, true
		}
	}
	if !changed {
		return text
	}
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if enc.Encode(&doc) != nil || enc.Close() != nil {
		return text
	}
	return b.String()
}

type paretoPoint struct {
	Rank    int    `json:"rank"`
	PointID string `json:"point_id"`
	// Hardware is the point's GPU and weight format as report.md labels it (Labels.Hardware:
	// "h100_sxm fp8", the model first when the rows hold several).
	Hardware       string             `json:"hardware"`
	GPUs           int64              `json:"gpus"`
	Mode           string             `json:"mode"`
	Shape          string             `json:"shape"`
	RouterPolicy   string             `json:"router_policy"`
	Load           string             `json:"load"`
	Objectives     map[string]float64 `json:"objectives"`
	Score          *float64           `json:"score,omitempty"`
	Recommendation string             `json:"recommendation,omitempty"`
	// TiedPointIDs lists the other front points whose objectives equal this one's, in point
	// order (Analysis.Ties), the first MaxTiedPointIDs of them; the entry stands for them all.
	// TiedPointCount is how many there are (0: none); TiesFile lists every one.
	TiedPointIDs   []string `json:"tied_point_ids,omitempty"`
	TiedPointCount int      `json:"tied_point_count,omitempty"`
	// MarginalTo names the candidate that could dominate this front entry within its capacity's
	// bracket (MarginalFront), MarginalCapacityFactor the capacity it would need over its
	// measured one; absent for a settled entry.
	MarginalTo             string  `json:"marginal_to,omitempty"`
	MarginalCapacityFactor float64 `json:"marginal_capacity_factor,omitempty"`
}

// MaxTiedPointIDs is how many tied point IDs a pareto.json entry lists, so that a front whose
// points mostly tie (a grid over knobs the workload never exercises) stays small; the tie group's
// full membership is in TiesFile.
const MaxTiedPointIDs = 100

// TieRow is one row of pareto_ties.parquet: a front point whose objectives equal those of the
// entry that stands for it, in front order and then point order.
type TieRow struct {
	// FrontRank is the 1-based rank of the standing entry on the front (pareto.json's rank).
	FrontRank int64 `parquet:"front_rank"`
	// PointID is the standing entry's point_id and TiedPointID the tied point's.
	PointID     string `parquet:"point_id"`
	TiedPointID string `parquet:"tied_point_id"`
}

// tieRows lists every tie of a's front as TieRows.
func tieRows(rows []Row, a *Analysis) []TieRow {
	var out []TieRow
	for n, i := range a.Front {
		for _, j := range a.Ties[i] {
			out = append(out, TieRow{FrontRank: int64(n + 1), PointID: rows[i].PointID, TiedPointID: rows[j].PointID})
		}
	}
	return out
}

type paretoBest struct {
	Metric    string                 `json:"metric"`
	Direction optimization.Direction `json:"direction"`
	PointID   string                 `json:"point_id"`
	Value     float64                `json:"value"`
}

// paretoNearTie is a NearTie in pareto.json: the best point and the rivals that could reach its
// value, each with its value and its value at the top of its capacity's bracket (reach).
type paretoNearTie struct {
	Metric    string                 `json:"metric"`
	Direction optimization.Direction `json:"direction"`
	PointID   string                 `json:"point_id"`
	Value     float64                `json:"value"`
	// Worst is the best point's least favourable value within its own bracket (NearTie.Worst).
	Worst  float64       `json:"worst"`
	Rivals []paretoRival `json:"rivals"`
}

type paretoRival struct {
	PointID string  `json:"point_id"`
	Value   float64 `json:"value"`
	Reach   float64 `json:"reach"`
}

type paretoDoc struct {
	SchemaVersion string                `json:"schema_version"`
	Spec          string                `json:"spec,omitempty"`
	Incomplete    bool                  `json:"incomplete,omitempty"`
	Merge         *MergeInfo            `json:"merge,omitempty"`
	Settings      optimization.Settings `json:"settings"`
	Rows          int                   `json:"rows"`
	Candidates    int                   `json:"candidates"`
	Excluded      map[string]int        `json:"excluded"`
	// ExcludedExamples is Analysis.ExcludedExamples: why the first row a GPU budget excluded is
	// outside it (absent when none was).
	ExcludedExamples map[string]string `json:"excluded_examples,omitempty"`
	Front            []paretoPoint     `json:"front"`
	Best             []paretoBest      `json:"best"`
	Ranking          []paretoPoint     `json:"ranking,omitempty"`
	// NearTies are the best points whose lead the capacity search did not resolve (NearTies).
	NearTies []paretoNearTie `json:"near_ties,omitempty"`
	// FrontContenders are the first MaxTiedPointIDs candidates off the front that could join it
	// within their capacity's bracket (FrontContenders), FrontContenderCount all of them.
	FrontContenders     []string `json:"front_contenders,omitempty"`
	FrontContenderCount int      `json:"front_contender_count,omitempty"`
	// CapacityBoundedPoints are the first MaxTiedPointIDs candidates whose capacity search held
	// the SLA at its max (BoundedCandidates), CapacityBoundedCount all of them.
	CapacityBoundedPoints []string `json:"capacity_bounded_points,omitempty"`
	CapacityBoundedCount  int      `json:"capacity_bounded_count,omitempty"`
	// TiesFile names pareto_ties.parquet when the front has ties.
	TiesFile string `json:"ties_file,omitempty"`
	// SeedCheck is the sweep's seed check of this answer (SeedCheck; absent when none was run
	// or it checked other settings), Changed whether the answer moved with the seeds.
	SeedCheck *SeedCheck `json:"seed_check,omitempty"`
	Changed   *bool      `json:"seed_check_changed,omitempty"`
	// SeedCheckSkipped is why no seed check ran (Manifest.SeedCheckSkipped), when none did.
	SeedCheckSkipped string `json:"seed_check_skipped,omitempty"`
	// TimedOutPointIDs and FailedPointIDs are the first MaxTiedPointIDs points of UnfinishedOf
	// (timed out, failed), whose results could change the answer; the counts are all of them.
	// Absent when there are none.
	TimedOutPointIDs   []string `json:"timed_out_point_ids,omitempty"`
	TimedOutPointCount int      `json:"timed_out_point_count,omitempty"`
	FailedPointIDs     []string `json:"failed_point_ids,omitempty"`
	FailedPointCount   int      `json:"failed_point_count,omitempty"`
}

// ParetoDocument returns the bytes of pareto.json (indented JSON and a final newline) for rows,
// their analysis a and the sweep's manifest m (nil when there is none): the settings, the
// exclusion counts, the front, the best point per objective and, for a scalar target, the
// ranking. recommended are the rows of the recommendations in order (Written.RecommendedRows);
// each such point names its file, recommendations/NNNN.yaml, relative to the report's directory.
// WriteReport writes these bytes, and the commands print them with --format json.
func ParetoDocument(rows []Row, a *Analysis, m *Manifest, recommended []int) ([]byte, error) {
	recFor := map[int]string{}
	for n, i := range recommended {
		recFor[i] = filepath.ToSlash(filepath.Join(RecommendationsDir, fmt.Sprintf("%04d.yaml", n+1)))
	}
	labels := LabelsFor(rows)
	point := func(rank, i int) paretoPoint {
		r := &rows[i]
		p := paretoPoint{Rank: rank, PointID: r.PointID, Hardware: labels.Hardware(r), GPUs: r.GPUs, Mode: r.Mode, Shape: labels.Shape(r),
			RouterPolicy: r.RouterPolicy, Load: labels.Load(r), Objectives: map[string]float64{}, Recommendation: recFor[i]}
		for k, o := range a.Settings.Objectives {
			p.Objectives[o.Metric] = a.Values[i][k]
		}
		ties := a.Ties[i]
		for _, j := range ties[:min(len(ties), MaxTiedPointIDs)] {
			p.TiedPointIDs = append(p.TiedPointIDs, rows[j].PointID)
		}
		p.TiedPointCount = len(ties)
		return p
	}
	doc := paretoDoc{SchemaVersion: manifestVersion, Settings: a.Settings, Rows: len(rows),
		Candidates: len(a.Candidates), Excluded: a.Excluded, ExcludedExamples: a.ExcludedExamples,
		Front: []paretoPoint{}, Best: []paretoBest{}}
	if m != nil {
		doc.Spec, doc.Incomplete, doc.Merge = m.Spec, m.Incomplete(), m.Merge
	}
	for n, i := range a.Front {
		doc.Front = append(doc.Front, point(n+1, i))
	}
	if len(a.Ties) > 0 {
		doc.TiesFile = TiesFile
	}
	u := UnfinishedOf(rows, a)
	for _, i := range u.TimedOut[:min(len(u.TimedOut), MaxTiedPointIDs)] {
		doc.TimedOutPointIDs = append(doc.TimedOutPointIDs, rows[i].PointID)
	}
	for _, i := range u.Failed[:min(len(u.Failed), MaxTiedPointIDs)] {
		doc.FailedPointIDs = append(doc.FailedPointIDs, rows[i].PointID)
	}
	doc.TimedOutPointCount, doc.FailedPointCount = len(u.TimedOut), len(u.Failed)
	for _, b := range a.Best {
		doc.Best = append(doc.Best, paretoBest{Metric: b.Objective.Metric, Direction: b.Objective.Direction,
			PointID: rows[b.Row].PointID, Value: b.Value})
	}
	switch {
	case m == nil:
	case m.SeedCheck == nil:
		doc.SeedCheckSkipped = m.SeedCheckSkipped
	case !m.SeedCheck.For(a.Settings):
		doc.SeedCheckSkipped = SeedCheckOtherSettings
	default:
		doc.SeedCheck = m.SeedCheck
		if m.SeedCheck.AnswerPoints > 0 && m.SeedCheck.Measured() > 0 { // else no verdict
			changed := m.SeedCheck.Changed()
			doc.Changed = &changed
		}
	}
	us := UnsettledOf(rows, a, m)
	for _, c := range us.Contenders[:min(len(us.Contenders), MaxTiedPointIDs)] {
		doc.FrontContenders = append(doc.FrontContenders, rows[c].PointID)
	}
	doc.FrontContenderCount = len(us.Contenders)
	for _, c := range us.Bounded[:min(len(us.Bounded), MaxTiedPointIDs)] {
		doc.CapacityBoundedPoints = append(doc.CapacityBoundedPoints, rows[c].PointID)
	}
	doc.CapacityBoundedCount = len(us.Bounded)
	for _, mg := range us.Marginal {
		k := slices.Index(a.Front, mg.Entry)
		doc.Front[k].MarginalTo = rows[mg.By].PointID
		doc.Front[k].MarginalCapacityFactor = mg.Factor
	}
	for _, t := range us.NearTies {
		nt := paretoNearTie{Metric: t.Objective.Metric, Direction: t.Objective.Direction, PointID: rows[t.Best].PointID, Value: t.Value,
			Worst: t.Worst}
		for k, i := range t.Rivals {
			nt.Rivals = append(nt.Rivals, paretoRival{PointID: rows[i].PointID, Value: score(&rows[i], t.Objective), Reach: t.Reach[k]})
		}
		doc.NearTies = append(doc.NearTies, nt)
	}
	if a.Ranking != nil {
		o, _ := optimization.TargetObjective(a.Settings.Target)
		for n, i := range a.Ranking {
			p := point(n+1, i)
			s := score(&rows[i], o)
			if o.Direction == optimization.Minimize {
				s = -s
			}
			if !isFinite(s) {
				s = 0
			}
			p.Score = &s
			doc.Ranking = append(doc.Ranking, p)
		}
	}
	data, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}

func isFinite(x float64) bool { return x == x && x-x == 0 }

// Shape describes a row's deployment in the field's terms, e.g. "4× TP2" (aggregated: replicas ×
// tensor parallelism, with PP, attention DP, expert parallelism EP and MoE tensor parallelism
// MoE-TP when > 1; "1× TP8 EP8") or "P 1× TP1 + D 2× TP1" (disaggregated): the starting shape.
// An autoscaled row (planner enabled: peak_gpus set) adds what the planner provisioned, "2× TP4
// autoscaled (avg 5.76 GPUs, peak 8)", so that it never reads as the fixed deployment it
// started from.
func Shape(r *Row) string {
	s := staticShape(r)
	if r.PeakGPUs != nil && r.AvgGPUs != nil {
		s += fmt.Sprintf(" autoscaled (avg %.3g GPUs, peak %d)", *r.AvgGPUs, *r.PeakGPUs)
	}
	return s
}

// staticShape is Shape without the planner's part.
func staticShape(r *Row) string {
	role := func(rep, tp, pp, dp, mt, me *int64) string {
		if rep == nil {
			return "-"
		}
		s := fmt.Sprintf("%d× TP%d", *rep, *tp)
		for _, f := range []struct {
			name string
			v    *int64
		}{{"PP", pp}, {"DP", dp}, {"EP", me}, {"MoE-TP", mt}} {
			if f.v != nil && *f.v > 1 {
				s += fmt.Sprintf(" %s%d", f.name, *f.v)
			}
		}
		return s
	}
	if r.Mode == "disaggregated" {
		return "P " + role(r.PrefillReplicas, r.PrefillTensor, r.PrefillPipeline, r.PrefillAttentionData, r.PrefillMoeTensor, r.PrefillMoeExpert) +
			" + D " + role(r.DecodeReplicas, r.DecodeTensor, r.DecodePipeline, r.DecodeAttentionData, r.DecodeMoeTensor, r.DecodeMoeExpert)
	}
	return role(r.AggReplicas, r.AggTensor, r.AggPipeline, r.AggAttentionData, r.AggMoeTensor, r.AggMoeExpert)
}

// Hardware describes a row's GPU and weight format, e.g. "h100_sxm fp8", or "P b200_sxm + D
// h200_sxm fp8" when a disaggregated role runs on its own GPU (the GPU alone when the format is
// unknown).
func Hardware(r *Row) string {
	hw := r.Hardware
	if p, d := r.PrefillHardware, r.DecodeHardware; p != nil && d != nil && (*p != r.Hardware || *d != r.Hardware) {
		hw = "P " + *p + " + D " + *d
	}
	if r.WeightPrecision != nil {
		return hw + " " + *r.WeightPrecision
	}
	return hw
}

// HardwareFor is Hardware, prefixed with the row's model ("Qwen/Qwen3-30B-A3B on h100_sxm fp8")
// when rows hold more than one model (a sweep over engine.model), so front entries of different
// models read differently. It reads every row; to label many rows, use LabelsFor once.
func HardwareFor(r *Row, rows []Row) string { return LabelsFor(rows).Hardware(r) }

// LoadFor is Load, followed by the row's token counts when the rows differ in them (a sweep over
// ISL, OSL or a length distribution's mean, whose mean the columns hold): "concurrency 32, ISL
// 512 / OSL 128", "4 sessions/s, 1024 new / 128 output tokens a turn". It reads every row; to
// label many rows, use LabelsFor once.
func LoadFor(r *Row, rows []Row) string { return LabelsFor(rows).Load(r) }

// Labels says what distinguishes the rows of one result set, so that each row's hardware and
// load labels name it (HardwareFor, LoadFor) at O(1) per row.
type Labels struct {
	// Models: the rows hold more than one model. Tokens: they differ in their token counts
	// (source input/output tokens, or new input/output tokens per turn). Scheduler: they differ
	// in a worker role's max_batched_tokens or max_sequences (a sweep over them), which Shape
	// then names.
	Models, Tokens, Scheduler bool
}

// LabelsFor scans rows once (O(n)) for what distinguishes them.
func LabelsFor(rows []Row) Labels {
	var l Labels
	if len(rows) == 0 {
		return l
	}
	same := func(a, b *int64) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }
	r := &rows[0]
	byMode := map[string]*Row{r.Mode: r} // each mode's first row
	for i := range rows[1:] {
		q := &rows[i+1]
		if q.Model != r.Model {
			l.Models = true
		}
		if !same(q.SourceInputTokens, r.SourceInputTokens) || !same(q.SourceOutputTokens, r.SourceOutputTokens) ||
			!same(q.SourceNewInputTokensPerTurn, r.SourceNewInputTokensPerTurn) || !same(q.SourceOutputTokensPerTurn, r.SourceOutputTokensPerTurn) {
			l.Tokens = true
		}
		// The knobs are compared within a mode: an aggregated row has no prefill role.
		if first, ok := byMode[q.Mode]; !ok {
			byMode[q.Mode] = q
		} else if !same(q.AggMaxBatchedTokens, first.AggMaxBatchedTokens) || !same(q.AggMaxSequences, first.AggMaxSequences) ||
			!same(q.PrefillMaxBatchedTokens, first.PrefillMaxBatchedTokens) || !same(q.PrefillMaxSequences, first.PrefillMaxSequences) ||
			!same(q.DecodeMaxBatchedTokens, first.DecodeMaxBatchedTokens) || !same(q.DecodeMaxSequences, first.DecodeMaxSequences) {
			l.Scheduler = true
		}
		if l.Models && l.Tokens && l.Scheduler {
			break
		}
	}
	return l
}

// Hardware is Hardware(r), prefixed with r's model when the rows hold more than one.
func (l Labels) Hardware(r *Row) string {
	if l.Models {
		return r.Model + " on " + Hardware(r)
	}
	return Hardware(r)
}

// Shape is Shape(r), followed by its roles' max_batched_tokens and max_sequences when the rows
// differ in them: "1× TP1 (max_batched_tokens 2048, max_sequences 256)", "P 2× TP1 + D 1× TP2 (P
// max_batched_tokens 8192, max_sequences 16; D ...)".
func (l Labels) Shape(r *Row) string {
	s := Shape(r)
	if !l.Scheduler {
		return s
	}
	knobs := func(mbt, seqs *int64) string {
		var parts []string
		if mbt != nil {
			parts = append(parts, fmt.Sprintf("max_batched_tokens %d", *mbt))
		}
		if seqs != nil {
			parts = append(parts, fmt.Sprintf("max_sequences %d", *seqs))
		}
		return strings.Join(parts, ", ")
	}
	if r.Mode == "disaggregated" {
		return fmt.Sprintf("%s (P %s; D %s)", s, knobs(r.PrefillMaxBatchedTokens, r.PrefillMaxSequences),
			knobs(r.DecodeMaxBatchedTokens, r.DecodeMaxSequences))
	}
	if k := knobs(r.AggMaxBatchedTokens, r.AggMaxSequences); k != "" {
		return s + " (" + k + ")"
	}
	return s
}

// Load is Load(r), followed by r's token counts when the rows differ in them.
func (l Labels) Load(r *Row) string {
	s := Load(r)
	if !l.Tokens {
		return s
	}
	switch {
	case r.SourceInputTokens != nil && r.SourceOutputTokens != nil:
		return fmt.Sprintf("%s, ISL %d / OSL %d", s, *r.SourceInputTokens, *r.SourceOutputTokens)
	case r.SourceNewInputTokensPerTurn != nil && r.SourceOutputTokensPerTurn != nil:
		return fmt.Sprintf("%s, %d new / %d output tokens a turn", s, *r.SourceNewInputTokensPerTurn, *r.SourceOutputTokensPerTurn)
	}
	return s
}

// Load describes a row's load, e.g. "concurrency 32", "4 req/s", "speedup 2"; under a capacity
// search the capacity found, e.g. "capacity concurrency 60", or "capacity >= concurrency 4096 (the
// search's max)" when the SLA still held at the search's max, and the load a probe met above the
// capacity when one did (MetAbove), so that a capacity below what the deployment also met reads
// as such; a knife edge (KnifeEdge); a search that stopped at max_probes before its bracket
// closed, e.g. "capacity concurrency 122 (not converged: below 134, the search stopped at
// max_probes)", or "capacity >= concurrency 40 (not converged: ...)" when no load missed; each
// led by the SLA term that limits the capacity when the row names it (sla_binding_term), e.g.
// "capacity concurrency 83 (limited by p99_itl_ms)".
func Load(r *Row) string {
	// limited names the SLA term that limits the capacity (sla_binding_term), first in the notes.
	limited := func(notes ...string) string {
		if r.SLABindingTerm != nil && *r.SLABindingTerm != "" {
			notes = append([]string{"limited by " + *r.SLABindingTerm}, notes...)
		}
		if len(notes) == 0 {
			return ""
		}
		return " (" + strings.Join(notes, "; ") + ")"
	}
	if r.CapacityLoad != nil && r.CapacityBounded != nil && *r.CapacityBounded {
		if TraceBounded(r) {
			return "capacity >= " + load(r) + " (bounded by its trace)"
		}
		return "capacity >= " + load(r) + " (the search's max)"
	}
	if r.CapacityLoad != nil {
		if above := MetAbove(r); above > 0 {
			return "capacity " + load(r) + limited(fmt.Sprintf("a probe also met at %s above a miss: the SLA is not monotone in load here", fmtNum(above)))
		}
		if k := KnifeEdge(r); k.Hi > 0 {
			return "capacity " + load(r) + limited(fmt.Sprintf("knife edge: its binding latency stays at %.0f-%.0f %% of the SLA bound from %s to %s",
				100*k.MinHeadroom, 100*k.MaxHeadroom, fmtNum(k.Lo), fmtNum(k.Hi)))
		}
		if Unconverged(r) {
			// The search stopped at max_probes: the capacity is a lower bound, or within a bracket
			// wider than the tolerance asked for.
			if miss, _ := unconvergedUpper(r); miss > 0 {
				return "capacity " + load(r) + limited(fmt.Sprintf("not converged: below %s, the search stopped at max_probes", fmtNum(miss)))
			}
			return "capacity >= " + load(r) + " (not converged: no load missed before the search stopped at max_probes)"
		}
		return "capacity " + load(r) + limited()
	}
	return load(r)
}

// KnifeEdgeBand and KnifeEdgeSpan define a knife-edge capacity (KnifeEdge): probes whose SLA
// headroom lies within KnifeEdgeBand of 1 at loads KnifeEdgeSpan times apart or more. 5 % is
// the headroom's own spread between run lengths (the capacity search reruns a meeting probe
// until its headroom stops rising by more than 5 %); 1.5 times is a load range wide enough to
// change a decision between deployments.
const (
	KnifeEdgeBand = 0.05
	KnifeEdgeSpan = 1.5
)

// KnifeEdgeRange is where a capacity search found the SLA headroom flat at the bound: the least
// and largest loads (Lo, Hi; the capacity's unit) of the probes whose headroom lies within
// KnifeEdgeBand of 1, and the least and largest of those headrooms.
type KnifeEdgeRange struct {
	Lo, Hi                   float64
	MinHeadroom, MaxHeadroom float64
}

// KnifeEdge returns the range over which r's capacity probes measured an SLA headroom within
// KnifeEdgeBand of 1, when that range spans KnifeEdgeSpan or more (its zero value otherwise, and
// for a row without a capacity, a bounded capacity or no probes). Such a capacity is a knife
// edge: the latency the SLA bounds is nearly flat in load there (e.g. a p99 inter-token gap set
// by one prefill pass at any load), so an SLA a few % tighter, or a few % of timing error, moves
// the capacity anywhere across the range. It is found from the probes the search ran, not
// searched for: a flat range the probes did not visit is not reported.
func KnifeEdge(r *Row) KnifeEdgeRange {
	var k KnifeEdgeRange
	if r.CapacityLoad == nil || r.CapacityBounded != nil && *r.CapacityBounded {
		return k
	}
	for _, p := range r.Probes {
		if h := p.SLAHeadroom; h != nil && math.Abs(*h-1) <= KnifeEdgeBand {
			if k.Hi == 0 {
				k = KnifeEdgeRange{Lo: p.Load, Hi: p.Load, MinHeadroom: *h, MaxHeadroom: *h}
				continue
			}
			k.Lo, k.Hi = min(k.Lo, p.Load), max(k.Hi, p.Load)
			k.MinHeadroom, k.MaxHeadroom = min(k.MinHeadroom, *h), max(k.MaxHeadroom, *h)
		}
	}
	if k.Hi < KnifeEdgeSpan*k.Lo {
		return KnifeEdgeRange{}
	}
	return k
}

// MetAbove is the largest load at which one of r's capacity probes met the SLA above its
// capacity (capacity_load): the SLA missed at a load in between, since the capacity lies below
// the least load that missed (a tail bound need not fall monotonically with load). 0 when no
// probe met above the capacity, or r has no capacity or probes.
func MetAbove(r *Row) float64 {
	if r.CapacityLoad == nil {
		return 0
	}
	var above float64
	for _, p := range r.Probes {
		if p.MeetsSLA && p.Load > *r.CapacityLoad {
			above = max(above, p.Load)
		}
	}
	return above
}

func load(r *Row) string {
	switch {
	case r.LoadConcurrency != nil:
		return "concurrency " + strconv.FormatInt(*r.LoadConcurrency, 10)
	case r.LoadRequestsPerSecond != nil:
		return fmtNum(*r.LoadRequestsPerSecond) + " req/s"
	case r.LoadSessionsPerSecond != nil:
		return fmtNum(*r.LoadSessionsPerSecond) + " sessions/s"
	case r.LoadSpeedup != nil:
		return "speedup " + fmtNum(*r.LoadSpeedup)
	}
	return r.LoadType
}

// warningsMarkdown lists m's spec warnings (Manifest.Warnings) in report.md; nothing without them.
func warningsMarkdown(b *bytes.Buffer, m *Manifest) {
	if m == nil || len(m.Warnings) == 0 {
		return
	}
	b.WriteString("\nWarnings of the spec (printed on stderr when the sweep ran; each can change the answer):\n\n")
	for _, w := range m.Warnings {
		b.WriteString("- " + w + "\n")
	}
}

func reportMarkdown(rows []Row, a *Analysis, m *Manifest, w *Written) []byte {
	var b bytes.Buffer
	s := a.Settings
	b.WriteString("# servesweep sweep report\n\n")
	manifestMarkdown(&b, rows, m, s.Target)
	n := CountStatuses(rows)
	infeasible := ""
	if n.Infeasible > 0 {
		infeasible = fmt.Sprintf(", %d infeasible", n.Infeasible)
	}
	fmt.Fprintf(&b, "Results: %d rows (%d ok, %d degraded%s, %d failed, %d timed out); %d candidates after filters",
		len(rows), n.OK, n.Degraded, infeasible, n.Failed, n.TimedOut, len(a.Candidates))
	if len(a.Excluded) > 0 {
		fmt.Fprintf(&b, " (excluded: %s)", CountList(a.Excluded))
	}
	b.WriteString(".\n")
	if t := GPUBudgetText(a); t != "" {
		fmt.Fprintf(&b, "\n%s\n", t)
	}
	warningsMarkdown(&b, m)
	if sla := SLAText(rows, m); sla != "" {
		fmt.Fprintf(&b, "\n%s\n", sla)
	}
	capacityMarkdown(&b, rows, m)
	cons := constraints(s)
	if len(cons) > 0 {
		fmt.Fprintf(&b, "Constraints: %s.\n", strings.Join(cons, ", "))
	}
	var objs []string
	for _, o := range s.Objectives {
		objs = append(objs, string(o.Direction)+" `"+o.Metric+"`")
	}
	fmt.Fprintf(&b, "\nObjectives: %s.\n\n", strings.Join(objs, ", "))
	if note := LatencyRankingNote(a, m); note != "" {
		b.WriteString(note + "\n\n")
	}

	recFor := map[int]string{}
	for n, i := range w.RecommendedRows {
		recFor[i] = filepath.ToSlash(filepath.Join(RecommendationsDir, fmt.Sprintf("%04d.yaml", n+1)))
	}
	header := "| # | point | hardware | mode | shape | router | load | GPUs |"
	sep := "|---|---|---|---|---|---|---|---:|"
	for _, o := range s.Objectives {
		header += " " + o.Metric + " |"
		sep += "---:|"
	}
	header += " config |"
	sep += "---|"
	labels := LabelsFor(rows)
	table := func(list []int) {
		b.WriteString(header + "\n" + sep + "\n")
		first := map[string]int{} // objective vector at ObjectiveDigits → its first entry's number
		for n, i := range list {
			r := &rows[i]
			same := ""
			key := vectorKey(a.compared[i])
			if k, ok := first[key]; ok {
				same = fmt.Sprintf(" (ties #%d)", k+1)
			} else {
				first[key] = n
			}
			if t := len(a.Ties[i]); t > 0 {
				same += fmt.Sprintf(" (+%d tied)", t)
			}
			fmt.Fprintf(&b, "| %d | `%s`%s | %s | %s | %s | %s | %s | %d |", n+1, r.PointID, same, labels.Hardware(r), r.Mode, labels.Shape(r),
				r.RouterPolicy, labels.Load(r), r.GPUs)
			for k := range s.Objectives {
				fmt.Fprintf(&b, " %s |", fmtNum(a.Values[i][k]))
			}
			if f := recFor[i]; f != "" {
				fmt.Fprintf(&b, " [%s](%s) |\n", f, f)
			} else {
				b.WriteString(" |\n")
			}
		}
	}
	points := "points"
	if len(a.Front) == 1 {
		points = "point"
	}
	fmt.Fprintf(&b, "## Pareto front (%d %s)\n\n", len(a.Front), points)
	if note := UnfinishedText(rows, a, labels, true); note != "" {
		b.WriteString("**Partial answer:** " + note + "\n\n")
	}
	if len(a.Front) == 0 {
		b.WriteString("No candidate point: nothing passed the filters above.\n\n")
	} else {
		b.WriteString("Non-dominated points over the objectives, best first by the first objective. " +
			"Points with identical objective values form one entry, the first in point order (\"+N tied\"; " +
			"pareto.json lists them in tied_point_ids).\n\n")
		if slices.ContainsFunc(a.Front, func(i int) bool { return len(a.Ties[i]) > MaxTiedPointIDs }) {
			fmt.Fprintf(&b, "An entry tied with more than %d points lists the first %d in pareto.json (tied_point_count "+
				"counts them all); `%s` holds every tie (front_rank, point_id, tied_point_id).\n\n", MaxTiedPointIDs, MaxTiedPointIDs, TiesFile)
		}
		table(a.Front)
		b.WriteString("\n")
	}
	if a.Ranking != nil {
		fmt.Fprintf(&b, "## Ranking by target `%s` (best %d)\n\n", s.Target, min(len(a.Ranking), maxScalarRecommends))
		table(a.Ranking[:min(len(a.Ranking), maxScalarRecommends)])
		b.WriteString("\n")
	}
	for _, note := range []string{AttainmentText(rows, a, m, true), ThinText(rows, a, true), UnjudgedText(rows, a, true), MultiNodeText(rows, a, true)} {
		if note != "" {
			b.WriteString(note + "\n\n")
		}
	}
	bestMarkdown(&b, rows, a, labels)
	u := UnsettledOf(rows, a, m)
	for _, line := range append(u.Sentences(rows, a, labels, true), SeedCheckText(rows, m, a, labels, true)) {
		if line != "" {
			b.WriteString(line + "\n\n")
		}
	}
	fmt.Fprintf(&b, "## Plot\n\n![the objectives against each other, one panel per pair](%s)\n\n", PlotFile)
	b.WriteString("Grey: candidates; red: the Pareto front. Every row, including failed points, is in " +
		"`results.parquet` (query it with DuckDB: `SELECT * FROM 'results.parquet'`).\n")
	return b.Bytes()
}

// bestMarkdown writes report.md's table of the best point per objective (nothing without one).
func bestMarkdown(b *bytes.Buffer, rows []Row, a *Analysis, labels Labels) {
	if len(a.Best) == 0 {
		return
	}
	b.WriteString("## Best point per objective\n\n| objective | best value | point | hardware | mode | shape | router | load | GPUs |\n" +
		"|---|---:|---|---|---|---|---|---|---:|\n")
	for _, bst := range a.Best {
		r := &rows[bst.Row]
		fmt.Fprintf(b, "| %s `%s` | %s | `%s` | %s | %s | %s | %s | %s | %d |\n", bst.Objective.Direction, bst.Objective.Metric,
			fmtNum(bst.Value), r.PointID, labels.Hardware(r), r.Mode, labels.Shape(r), r.RouterPolicy, labels.Load(r), r.GPUs)
	}
	b.WriteString("\n")
}

// constraints lists the candidate filters of s in words, for report.md's Constraints line.
func constraints(s optimization.Settings) []string {
	cons := gpuBounds(s)
	if s.StrictSLA || s.Target == optimization.TargetMinGPUs {
		cons = append(cons, "strict SLA (mean TTFT, mean TPOT, mean E2E within evaluation.sla)")
	}
	if s.MaxCostUSDPerHour > 0 {
		cons = append(cons, fmt.Sprintf("at most %g USD per hour", s.MaxCostUSDPerHour))
	}
	if s.MaxUSDPerMillionOutputTokens > 0 {
		cons = append(cons, fmt.Sprintf("at most %g USD per million output tokens", s.MaxUSDPerMillionOutputTokens))
	}
	if s.MaxRejectedRatio > 0 {
		cons = append(cons, fmt.Sprintf("degraded points with at most %g of their requests rejected", s.MaxRejectedRatio))
	}
	return cons
}

// manifestMarkdown writes report.md's lines about the sweep that produced rows: its spec,
// optimizer and target, its grid, whether it was interrupted, its merge and its filtered points
// (from m; the target alone without a manifest).
func manifestMarkdown(b *bytes.Buffer, rows []Row, m *Manifest, target string) {
	if m != nil && m.Defaulted {
		// No manifest was found (servesweep report on a bare results.parquet).
		fmt.Fprintf(b, "Target `%s` · settings: the defaults and the flags given (no %s beside the results)\n\n", target, ManifestFile)
	} else if m != nil {
		fmt.Fprintf(b, "Spec: `%s` · optimizer `%s` · target `%s`\n\n", m.Spec, m.Algorithm, target)
		c := m.Counts
		fmt.Fprintf(b, "Grid: %d points before filtering, %d valid", c.GridPoints, c.ValidPoints)
		if len(c.Filtered) > 0 {
			fmt.Fprintf(b, " (filtered: %s)", CountList(c.Filtered))
		}
		fmt.Fprintf(b, ", %d selected.\n\n", c.SelectedPoints)
		if c.Interrupted {
			fmt.Fprintf(b, "**Partial results:** the sweep was interrupted; %d of %d selected points are finished. "+
				"Rerun the same command with the same --output-dir to finish it.\n\n", len(rows), c.SelectedPoints)
		}
		if m.Merge != nil {
			mergeMarkdown(b, m.Merge, c.SelectedPoints)
		}
		filteredMarkdown(b, m)
	} else {
		fmt.Fprintf(b, "Target `%s`\n\n", target)
	}
}

// maxEmptyValueLines bounds the list of domain values without a valid point in report.md.
const maxEmptyValueLines = 20

// filteredMarkdown lists the grid points filtered before simulation by reason, with their
// counts and the first point's reason, then the domain values no valid point takes.
func filteredMarkdown(b *bytes.Buffer, m *Manifest) {
	c := m.Counts
	if len(c.Filtered) == 0 {
		return
	}
	reasons := make([]string, 0, len(c.Filtered))
	for r := range c.Filtered {
		reasons = append(reasons, r)
	}
	slices.Sort(reasons)
	b.WriteString("Filtered before simulation, by reason:\n\n")
	for _, r := range reasons {
		points := "points"
		if c.Filtered[r] == 1 {
			points = "point"
		}
		fmt.Fprintf(b, "- `%s`: %d %s", r, c.Filtered[r], points)
		if ex := m.FilteredExamples[r]; ex != "" {
			fmt.Fprintf(b, ", e.g. %s", ex)
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
	if len(m.EmptyValues) == 0 {
		return
	}
	b.WriteString("Domain values no valid point takes:\n\n")
	for i, v := range m.EmptyValues {
		if i == maxEmptyValueLines {
			fmt.Fprintf(b, "- ... and %d more (sweep.json lists them in empty_values)\n", len(m.EmptyValues)-i)
			break
		}
		fmt.Fprintf(b, "- `%s` %s: all %d of its points filtered (%s), e.g. %s\n", v.Path, v.Value, v.Points, CountList(v.Filtered), v.Example)
	}
	b.WriteString("\n")
}

// mergeMarkdown says where merged results came from and, when points are missing, which.
func mergeMarkdown(b *bytes.Buffer, mi *MergeInfo, selected int) {
	counts := make([]string, len(mi.ShardCounts))
	for i, n := range mi.ShardCounts {
		counts[i] = strconv.Itoa(n)
	}
	parts := Plural(len(mi.Parts), "part")
	fmt.Fprintf(b, "Merged from %s of a sweep sharded %s ways (spec hash `%s`); %d duplicate rows removed",
		parts, strings.Join(counts, " and "), mi.SpecHash, mi.DuplicateRows)
	if mi.ConflictingDuplicates > 0 {
		fmt.Fprintf(b, " (%d of them differed in simulated columns: parts of different servesweep versions?)", mi.ConflictingDuplicates)
	}
	b.WriteString(".\n\n")
	if mi.Complete {
		return
	}
	if mi.MissingPoints > 0 {
		fmt.Fprintf(b, "**Incomplete:** %d of %d selected points have no result, so the front below may miss points.\n\n",
			mi.MissingPoints, selected)
	} else {
		b.WriteString("**Incomplete:** every selected point has a result, but `probes.parquet` lacks some points' probes.\n\n")
	}
	for _, line := range mi.MissingLines(maxMissingLines) {
		fmt.Fprintf(b, "- %s\n", line)
	}
	b.WriteString("\nRerun those shards (`servesweep sweep --shard I/N` with the same spec and --output-dir; a rerun " +
		"resumes), then merge again.\n\n")
}

// abbreviate joins the first n items of list, noting how many more there are.
func abbreviate(list []string, n int) string {
	if len(list) <= n {
		return strings.Join(list, ", ")
	}
	return strings.Join(list[:n], ", ") + fmt.Sprintf(", ... (%d more)", len(list)-n)
}

// CountList renders a reason → count map as "a 3, b 1", sorted by reason (report.md's and the
// commands' summaries of excluded and filtered points).
func CountList(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}

// WriteOutputs writes everything a sweep leaves in dir from its rows (in point order):
// results.parquet, sweep.json (m), then the analysis under m.Settings as pareto.json,
// report.md, the plot, report.html and the recommendations. Each file is written atomically.
func WriteOutputs(dir string, rows []Row, m *Manifest) (*Analysis, *Written, error) {
	if err := WriteParquet(filepath.Join(dir, ParquetFile), rows); err != nil {
		return nil, nil, err
	}
	if err := WriteProbes(filepath.Join(dir, ProbesFile), rows); err != nil {
		return nil, nil, err
	}
	if err := WriteManifest(dir, m); err != nil {
		return nil, nil, err
	}
	a, err := Analyze(rows, m.Settings)
	if err != nil {
		return nil, nil, err
	}
	w, err := WriteReport(dir, rows, a, m)
	if err != nil {
		return nil, nil, err
	}
	return a, w, nil
}

// OwnedFiles are the names a sweep writes in its output directory (besides
// recommendations/NNNN.yaml); starting a sweep over removes only these.
func OwnedFiles() []string {
	return []string{JournalFile, JournalFile + SpecSuffix, ParquetFile, ProbesFile, ManifestFile, ParetoFile, ReportFile, PlotFile,
		HTMLFile, TiesFile}
}

// RemoveOutputs deletes the files a sweep owns in dir (OwnedFiles and recommendations/NNNN.yaml),
// leaving everything else.
func RemoveOutputs(dir string) error {
	for _, name := range OwnedFiles() {
		if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	err := removeStaleRecommendations(filepath.Join(dir, RecommendationsDir))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}

// capacityMarkdown summarizes the capacity search of rows, when there was one: its settings (from
// m, when known), how many points were searched, feasible, bounded and infeasible, how many
// probes it took, how many met the SLA above their capacity (MetAbove, with an example), and the
// prices used and whose they are (PricesText).
func capacityMarkdown(b *bytes.Buffer, rows []Row, m *Manifest) {
	if prices := PricesText(rows, m); prices != "" {
		fmt.Fprintf(b, "\n%s\n", prices)
	}
	for k, p := range capacityParagraphs(rows, m) {
		if k == 0 {
			b.WriteString("\n")
		}
		b.WriteString(p + "\n\n")
	}
}

// capacityParagraphs are report.md's paragraphs on the capacity search of rows (none without
// one), in markdown (point IDs as code spans): the settings and counts, with the capacities met
// again above a miss and the knife edges; the limiting terms (bindingTally); a search stopped at
// max_probes. report.html shows them too.
func capacityParagraphs(rows []Row, m *Manifest) []string {
	searched, bounded, byTrace, infeasible, probes, unclosed := 0, 0, 0, 0, 0, 0
	var firstUnclosed *Row
	unit := ""
	var above []*Row // rows whose probes met the SLA above their capacity (MetAbove)
	var knife []*Row // rows whose capacity is a knife edge (KnifeEdge)
	for i := range rows {
		r := &rows[i]
		if r.CapacityProbes == nil || r.EquivalentTo != "" {
			continue
		}
		searched++
		if MetAbove(r) > 0 {
			above = append(above, r)
		}
		if KnifeEdge(r).Hi > 0 {
			knife = append(knife, r)
		}
		probes += int(*r.CapacityProbes)
		unit = *r.CapacityLoadUnit
		switch {
		case r.Status == StatusInfeasible:
			infeasible++
		case r.CapacityBounded != nil && *r.CapacityBounded:
			bounded++
			if TraceBounded(r) {
				byTrace++
			}
		}
		if Unconverged(r) {
			if unclosed++; firstUnclosed == nil {
				firstUnclosed = r
			}
		}
	}
	if searched == 0 {
		return nil
	}
	settings := ""
	if m != nil && m.CapacitySearch != nil {
		cs := m.CapacitySearch
		settings = fmt.Sprintf(", attainment >= %g of evaluation.sla, %s from %g to %g, relative tolerance %g, at most %d probes",
			cs.Attainment, unit, cs.Min, cs.Max, cs.RelativeTolerance, cs.MaxProbes)
	}
	nonMonotone := ""
	if len(above) > 0 {
		r := above[0]
		nonMonotone = fmt.Sprintf(" %d met the SLA again above their capacity, past a load that missed (e.g. `%s`: capacity %s, "+
			"also met at %s): the SLA is not monotone in load there, and the capacity is where it first fails as load rises.",
			len(above), r.PointID, fmtNum(*r.CapacityLoad), fmtNum(MetAbove(r)))
	}
	if len(knife) > 0 {
		r := knife[0]
		k := KnifeEdge(r)
		which, eg := Plural(len(knife), "deployment")+" sits on a knife edge: probes at loads %g times apart or more measured its", ""
		if len(knife) > 1 {
			which, eg = strings.Replace(which, "sits", "sit", 1), "e.g. "
			which = strings.Replace(which, "measured its", "measured their", 1)
		}
		nonMonotone += fmt.Sprintf(" "+which+" binding latency within %g %% of the SLA's bound (%s`%s`: capacity %s %s, at %.0f-%.0f %% of the "+
			"bound from %s to %s), so an SLA a few %% tighter, or a few %% of timing error, moves such a capacity across that range: before "+
			"choosing one, sweep it again with the SLA's bounds %g %% tighter.",
			KnifeEdgeSpan, 100*KnifeEdgeBand, eg, r.PointID, fmtNum(*r.CapacityLoad), unit, 100*k.MinHeadroom, 100*k.MaxHeadroom,
			fmtNum(k.Lo), fmtNum(k.Hi), 100*KnifeEdgeBand)
	}
	boundedAt := "SLA still met at the maximum"
	switch {
	case byTrace > 0 && byTrace == bounded:
		boundedAt = "SLA met below a load their trace cannot hold: a closed loop over a trace of too few sessions " +
			"cannot hold it (their reason names the load)"
	case byTrace > 0:
		boundedAt = fmt.Sprintf("SLA still met at the maximum, or for %d below a load their trace cannot hold: a closed "+
			"loop over a trace of too few sessions cannot hold it (their reason names the load)", byTrace)
	}
	out := []string{fmt.Sprintf("Capacity search (%s%s): %d deployments searched, %d infeasible (SLA missed at the minimum load), "+
		"%d bounded (%s), %d stopped at max_probes; %d probes, %.1f per deployment "+
		"(each a row of `%s`).%s Each row is measured at its capacity load (an infeasible one at the minimum load).",
		unit, settings, searched, infeasible, bounded, boundedAt, unclosed, probes, float64(probes)/float64(searched), ProbesFile, nonMonotone)}
	if line := bindingTally(rows); line != "" {
		out = append(out, line)
	}
	if firstUnclosed != nil {
		eg := ""
		if unclosed > 1 {
			eg = "e.g. "
		}
		out = append(out, fmt.Sprintf("Stopped at max_probes before the bracket closed (%s`%s`: %s): such a capacity is known only "+
			"to that bracket; raise capacity_search.max_probes to settle it.", eg, firstUnclosed.PointID, Load(firstUnclosed)))
	}
	return out
}

// NoFeasibleHint is what a "no feasible point" error adds after its filter counts: SLAUnitHint's
// unit hint, the objectives that left points without a value (missingMetricHint), the first
// point outside the GPU budget with its reason (Analysis.ExcludedExamples), and, when
// points were excluded as degraded (rejected or unfinished requests, overloaded, drained), the
// first such point's reason under each key, the constraint that admits them
// (optimization.constraints.max_rejected_ratio) and the command that lists every point's reason
// (degradedHint); "" when none applies.
func NoFeasibleHint(rows []Row, a *Analysis, dir string) string {
	hint := SLAUnitHint(rows)
	unmeasured, first := 0, -1
	for i := range rows {
		if rows[i].Status == StatusInfeasible && Unmeasured(&rows[i]) {
			if unmeasured++; first < 0 {
				first = i
			}
		}
	}
	if unmeasured > 0 {
		// Not deployments that missed the SLA: the run measured nothing at all.
		hint += fmt.Sprintf("; %s measured no request at all, every one within the warm-up (unknown, not missed), e.g. %s: %s",
			Plural(unmeasured, "point"), rows[first].PointID, rows[first].Reason)
	}
	if a.Excluded[ExcludedMissingMetric] > 0 {
		hint += missingMetricHint(rows, a.Settings)
	}
	if ex := a.ExcludedExamples[ExcludedGPUBudget]; ex != "" {
		hint += fmt.Sprintf("; %s outside the GPU budget (%s), e.g. %s", Plural(a.Excluded[ExcludedGPUBudget], "point"),
			strings.Join(gpuBounds(a.Settings), ", "), ex)
	}
	return hint + degradedHint(rows, a, dir)
}

// degradedHint is NoFeasibleHint's clause on the points excluded as degraded beyond
// optimization.constraints.max_rejected_ratio: for each key with any, how many
// and the first one's reason, then the constraint and the rows command; "" when there are none.
func degradedHint(rows []Row, a *Analysis, dir string) string {
	s := a.Settings
	strict := s.StrictSLA || s.Target == optimization.TargetMinGPUs
	// Each key a degraded point can be excluded under (degradedExclusion), in the order named.
	hints := []struct{ key, what string }{
		{ExcludedRejected, "rejected requests"},
		{ExcludedTruncated, "stopped requests short of their requested output (truncated_requests)"},
		{ExcludedUnfinished, "left a backlog of requests unfinished when the run stopped (unfinished_requests: lower the load, " +
			"add workers or lengthen traffic.stop.max_virtual_time_seconds)"},
		{ExcludedOverloaded, "fell behind the open-loop arrivals (overloaded: lower the load, add workers or search for " +
			"each deployment's capacity with optimization.capacity_search)"},
		{ExcludedDrained, "drained work queued before the measured window (drained: lengthen the run)"},
	}
	var parts []string
	for _, h := range hints {
		if a.Excluded[h.key] == 0 {
			continue
		}
		for i := range rows {
			if r := &rows[i]; exclusion(r, s, strict) == h.key {
				parts = append(parts, fmt.Sprintf("%s %s, e.g. %s (%s)", Plural(a.Excluded[h.key], "point"), h.what, r.PointID, r.Reason))
				break
			}
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("; %s: such points stay off the front beyond optimization.constraints.max_rejected_ratio (%g now); "+
		"servesweep rows --results %s --columns point_id,status,reason lists every point's reason", strings.Join(parts, "; "), s.MaxRejectedRatio, dir)
}

// missingMetricHint names the objectives that left points out as missing_metric: those no row
// has a finite value of (e.g. decode_tensor on a sweep of aggregated deployments), or else the
// ones some rows lack.
func missingMetricHint(rows []Row, s optimization.Settings) string {
	var none, some []string
	for _, o := range s.Objectives {
		have := 0
		for i := range rows {
			if x, ok, _ := numericValue(&rows[i], o.Metric); ok && !math.IsNaN(x) && !math.IsInf(x, 0) {
				have++
			}
		}
		switch {
		case have == 0:
			none = append(none, o.Metric)
		case have < len(rows):
			some = append(some, o.Metric)
		}
	}
	if len(none) > 0 {
		return fmt.Sprintf("; no row has a value of the objective %s, so no point can be ranked by it: choose another "+
			"(servesweep list metrics)", strings.Join(none, ", "))
	}
	if len(some) > 0 {
		return fmt.Sprintf("; missing_metric: points without a value of the objective %s are left out", strings.Join(some, ", "))
	}
	return ""
}

// SLAUnitHint returns advice for a sweep in which no row is a candidate when a bound of its SLA
// (read from the first row that records one) is implausibly small for milliseconds, as a bound
// typed in seconds is: a TTFT or E2E bound under 10 ms (less than any deployment's front end
// takes) or an ITL or TPOT bound under 1 ms. The advice names each such bound and what it would
// be in seconds ("; the SLA's bounds are in ms: ttft_ms 1 asks for 1 ms (1 s is ttft_ms: 1000)");
// "" when every bound is plausible or no row records an SLA.
func SLAUnitHint(rows []Row) string {
	for i := range rows {
		r := &rows[i]
		var small []string
		recorded := false
		for _, b := range []struct {
			key   string
			v     *float64
			floor float64
		}{{"ttft_ms", r.SLATTFTMs, 10}, {"e2e_ms", r.SLAE2EMs, 10}, {"itl_ms", r.SLAITLMs, 1},
			{"p50_ttft_ms", r.SLAP50TTFTMs, 10}, {"p90_ttft_ms", r.SLAP90TTFTMs, 10}, {"p95_ttft_ms", r.SLAP95TTFTMs, 10},
			{"p99_ttft_ms", r.SLAP99TTFTMs, 10}, {"p50_itl_ms", r.SLAP50ITLMs, 1}, {"p90_itl_ms", r.SLAP90ITLMs, 1},
			{"p95_itl_ms", r.SLAP95ITLMs, 1}, {"p99_itl_ms", r.SLAP99ITLMs, 1}} {
			recorded = recorded || b.v != nil
			if b.v != nil && *b.v < b.floor {
				small = append(small, fmt.Sprintf("%s %g asks for %g ms (%g s is %s: %g)", b.key, *b.v, *b.v, *b.v, b.key, *b.v*1000))
			}
		}
		if !recorded {
			continue
		}
		if len(small) == 0 {
			return ""
		}
		return "; the SLA's bounds are in ms: " + strings.Join(small, ", ")
	}
	return ""
}
