// Package aiperf reads the summary a benchmark run leaves, AIPerf's profile_export_aiperf.json
// or GenAI-Perf's profile_export_genai_perf.json (aiperf-metrics.md §4.1, §6), and scores a
// simulation against it: per metric and statistic, the predicted value, the measured one and
// the error. Start at ReadRuns and Compare.
package aiperf

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/servesweep/servesweep/sim/config"
	"github.com/servesweep/servesweep/sim/metrics"
)

// File names of the summaries a run leaves in its artifact directory.
const (
	AIPerfFile    = "profile_export_aiperf.json"
	GenAIPerfFile = "profile_export_genai_perf.json"
)

// Kinds of summary.
const (
	KindAIPerf    = "aiperf"
	KindGenAIPerf = "genai-perf"
)

// supportedSchemaMajor is the schema_version major AIPerf's JSON export carries (absent before
// it was introduced, which reads the same way).
const supportedSchemaMajor = "1"

// Stat is one metric's block: its display unit and the statistics Compare uses (nil when the
// file leaves one out).
type Stat struct {
	Unit string   `json:"unit"`
	Avg  *float64 `json:"avg"`
	P50  *float64 `json:"p50"`
	P90  *float64 `json:"p90"`
	P99  *float64 `json:"p99"`
}

// Load is what the run's input_config says of its load: the concurrency or request rate and the
// request count, each nil when the file does not say.
type Load struct {
	Concurrency  *int
	RequestRate  *float64
	RequestCount *int
	// RampSeconds is the concurrency ramp (loadgen.concurrency_ramp_duration, seconds), nil when
	// the summary does not say; Echoed is whether it has an input_config at all (then an absent
	// ramp is none: AIPerf's default starts every session at once, and GenAI-Perf has none).
	RampSeconds *float64
	Echoed      bool
}

// Run is one benchmark run's summary.
type Run struct {
	// File is the summary's path; Kind is KindAIPerf or KindGenAIPerf.
	File, Kind string
	// Metrics are the metric blocks by tag (time_to_first_token, ...).
	Metrics map[string]Stat
	// Load is the run's load as its input_config echoes it.
	Load Load
	// Workload is the rest of what the summary says of the benchmark (CheckWorkload).
	Workload Workload
}

// CheckWorkload lists what in run suggests it did not measure what cfg simulates: another
// model, mean prompt or output lengths more than 10 % from a fixed synthetic ISL/OSL, an open-loop
// run the config's concurrency load replaces or a closed-loop run its open-loop load replaces, a
// cancelled run, failed requests. Each entry names
// the summary's field.
func CheckWorkload(run *Run, cfg *config.Config) []string {
	var out []string
	w := &run.Workload
	if len(w.Models) > 0 && !slices.Contains(w.Models, cfg.Engine.Model) {
		out = append(out, fmt.Sprintf("input_config model_names %v: the config simulates %s", w.Models, cfg.Engine.Model))
	}
	src := &cfg.Traffic.Source
	if src.Type == config.SourceSynthetic {
		for _, c := range []struct {
			tag  string
			got  *float64
			want int
			dist bool
		}{{"input_sequence_length", w.MeanISL, src.InputTokens, src.InputTokensDist != nil},
			{"output_sequence_length", w.MeanOSL, src.OutputTokens, src.OutputTokensDist != nil}} {
			if c.got != nil && !c.dist && math.Abs(*c.got-float64(c.want)) > 0.1*float64(c.want) {
				out = append(out, fmt.Sprintf("%s.avg %g: the config's requests have %d tokens", c.tag, *c.got, c.want))
			}
		}
	}
	if run.Load.Concurrency == nil && run.Load.RequestRate != nil && cfg.Traffic.Load.Type == config.LoadConcurrency {
		out = append(out, fmt.Sprintf("input_config request_rate %g: the run was open loop; simulated at the config's concurrency %d",
			*run.Load.RequestRate, cfg.Traffic.Load.Concurrency))
	}
	if c, r := run.Load.Concurrency, run.Load.RequestRate; c != nil && r != nil {
		out = append(out, fmt.Sprintf("input_config request_rate %g with concurrency %d: the run was an open loop capped at %d "+
			"in flight, which the config's %s load does not simulate", *r, *c, *c, cfg.Traffic.Load.Type))
	}
	if c := run.Load.Concurrency; c != nil && run.Load.RequestRate == nil && cfg.Traffic.Load.Type != config.LoadConcurrency {
		out = append(out, fmt.Sprintf("input_config concurrency %d: the run was a closed loop; simulated at the config's %s load", *c, cfg.Traffic.Load.Type))
	}
	if w.Cancelled {
		out = append(out, "was_cancelled true: the run stopped early; its statistics cover part of the benchmark")
	}
	if w.Errors > 0 {
		out = append(out, fmt.Sprintf("error_summary: %d failed requests, which the simulation does not have", w.Errors))
	}
	return append(out, statGaps(run)...)
}

// scoredMetrics are the metric blocks both summary kinds carry and Compare scores, in report
// order (inter_chunk_latency is AIPerf's only).
var scoredMetrics = []string{"time_to_first_token", "inter_token_latency", "request_latency", "output_token_throughput", "request_throughput"}

// statGaps lists what the run's summary leaves out of the comparison or cannot be scored on: a
// scored metric block that is absent, a block without its mean, and a mean of 0 (no measured
// latency or throughput is 0: its error would divide by zero, so the MAPE leaves it out).
func statGaps(run *Run) []string {
	var out []string
	for _, tag := range scoredMetrics {
		s, ok := run.Metrics[tag]
		switch {
		case !ok:
			out = append(out, tag+": absent: not compared")
		case s.Avg == nil:
			out = append(out, tag+".avg: absent: its mean is not compared")
		case *s.Avg == 0:
			out = append(out, tag+".avg: 0, which no run measures: its error is N/A and the MAPE leaves it out")
		}
	}
	return out
}

// ReadRuns reads path: a summary file, or a directory holding one (an artifact directory) or
// holding artifact directories, one per run, at any depth (in path order). A file of another
// kind or version, or a directory with no summary, is a *config.Error naming the file and what
// was expected (exit 2).
func ReadRuns(path string) ([]Run, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, &config.Error{File: path, Msg: fmt.Sprintf("cannot read it (%v); give %s, %s or the directory holding them", config.PathCause(err), AIPerfFile, GenAIPerfFile)}
	}
	if !st.IsDir() {
		r, err := ReadFile(path)
		if err != nil {
			return nil, err
		}
		return []Run{*r}, nil
	}
	var files []string
	err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && (d.Name() == AIPerfFile || d.Name() == GenAIPerfFile) {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	if len(files) == 0 {
		return nil, &config.Error{File: path, Msg: fmt.Sprintf("holds no %s (AIPerf) or %s (GenAI-Perf); give a run's artifact directory or the file", AIPerfFile, GenAIPerfFile)}
	}
	var runs []Run
	for _, f := range files {
		r, err := ReadFile(f)
		if err != nil {
			return nil, err
		}
		runs = append(runs, *r)
	}
	return runs, nil
}

// maxMeasured bounds every statistic of a compared metric block: 1e15 is over 30,000 years in ms,
// or a sum of a million such latencies; a larger number is a corrupt or hand-edited file, whose
// error would print as a 300-digit number.
const maxMeasured = 1e15

// comparedUnits is the unit each metric Compare reads must carry (AIPerf's and GenAI-Perf's
// display units): the latencies in ms, the throughputs per second.
var comparedUnits = map[string]string{
	"time_to_first_token": "ms", "inter_token_latency": "ms", "inter_chunk_latency": "ms", "request_latency": "ms",
	"output_token_throughput": "tokens/sec", "request_throughput": "requests/sec",
}

// ReadFile reads one summary. The kind comes from the file name (GenAI-Perf's name, else
// AIPerf's layout); an AIPerf schema_version other than 1.x, the older layout with every metric
// under "records", a file that is not a JSON object, one with no time_to_first_token, or a
// latency not in ms is an error naming what was expected.
func ReadFile(path string) (*Run, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &config.Error{File: path, Msg: fmt.Sprintf("cannot read it (%v)", config.PathCause(err))}
	}
	bad := func(field, msg string) error { return &config.Error{File: path, Path: field, Msg: msg} }
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, bad("", fmt.Sprintf("is not an AIPerf or GenAI-Perf summary: want the JSON object of %s or %s (not the CSV or the per-request JSONL): %v",
			AIPerfFile, GenAIPerfFile, err))
	}
	if path := repeatedKey(data); path != "" {
		// encoding/json keeps the last of a repeated key: a hand-edited file would be scored on
		// whichever came last.
		return nil, bad(path, "key appears more than once in its object; give it once")
	}
	run := &Run{File: path, Kind: KindAIPerf, Metrics: map[string]Stat{}}
	if filepath.Base(path) == GenAIPerfFile {
		run.Kind = KindGenAIPerf
	}
	if raw, ok := doc["schema_version"]; ok {
		var v string
		if json.Unmarshal(raw, &v) != nil {
			return nil, bad("schema_version", fmt.Sprintf("want a version string such as \"%s.0\", got %s", supportedSchemaMajor, clip(string(raw))))
		}
		if strings.SplitN(v, ".", 2)[0] != supportedSchemaMajor {
			return nil, bad("schema_version", fmt.Sprintf("%s is not a version servesweep reads: want %s.x (AIPerf's summary JSON)", string(raw), supportedSchemaMajor))
		}
	}
	if _, ok := doc["records"]; ok {
		if _, top := doc["time_to_first_token"]; !top {
			return nil, bad("records", "is the layout of AIPerf releases before the summary matched GenAI-Perf's (every metric under \"records\"); "+
				"want each metric tag as a top-level key: rerun with a newer AIPerf")
		}
	}
	for tag, raw := range doc {
		var s Stat
		unit, compared := comparedUnits[tag]
		if string(raw) == "null" || json.Unmarshal(raw, &s) != nil || s.Unit == "" {
			if compared {
				return nil, bad(tag, fmt.Sprintf("want a metric block {unit: %q, avg, p50, p90, p99 numbers}, got %s", unit, clip(string(raw))))
			}
			continue // input_config, error_summary, a metric servesweep does not compare, ...
		}
		if !compared {
			run.Metrics[tag] = s
			continue
		}
		if s.Unit != unit {
			return nil, bad(tag+".unit", fmt.Sprintf("%q: want %q, the display unit of AIPerf's and GenAI-Perf's %s", s.Unit, unit, tag))
		}
		// Every statistic of a compared metric (avg, percentiles, min, max, std, count, sum) is a
		// number >= 0; the ones compared must be numbers when present.
		var fields map[string]json.RawMessage
		_ = json.Unmarshal(raw, &fields) // s decoded, so raw is an object
		for name, f := range fields {
			if name == "unit" {
				continue
			}
			var v float64
			if err := json.Unmarshal(f, &v); err != nil || string(f) == "null" {
				return nil, bad(tag+"."+name, fmt.Sprintf("want a number of %s, got %s", unit, clip(string(f))))
			}
			if !(v >= 0) {
				return nil, bad(tag+"."+name, fmt.Sprintf("%g: a measured value is >= 0", v))
			}
			if v > maxMeasured {
				return nil, bad(tag+"."+name, fmt.Sprintf("%g: beyond any benchmark's measurement (at most %g)", v, maxMeasured))
			}
		}
		if s.P50 != nil && s.P99 != nil && *s.P99 < *s.P50 || s.P50 != nil && s.P90 != nil && *s.P90 < *s.P50 ||
			s.P90 != nil && s.P99 != nil && *s.P99 < *s.P90 {
			return nil, bad(tag, "percentiles decrease (want p50 <= p90 <= p99): not a summary of one population")
		}
		run.Metrics[tag] = s
	}
	run.Workload = readWorkload(doc)
	if _, ok := run.Metrics["time_to_first_token"]; !ok {
		return nil, bad("time_to_first_token", fmt.Sprintf("missing: want a streaming run's summary (%s or %s with time_to_first_token, inter_token_latency, request_latency ...; "+
			"run aiperf profile with --streaming)", AIPerfFile, GenAIPerfFile))
	}
	if run.Load, err = readLoad(doc["input_config"]); err != nil {
		return nil, &config.Error{File: path, Path: err.(*config.Error).Path, Msg: err.(*config.Error).Msg}
	}
	return run, nil
}

// clip shortens a raw JSON value for a message.
func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}

// Workload is what the summary says of the benchmark beyond its load, for checking that it
// measured the simulated config: the model names, the mean prompt and output lengths (tokens,
// nil when absent), whether the run was cancelled, and its error count.
type Workload struct {
	Models           []string
	MeanISL, MeanOSL *float64
	Cancelled        bool
	Errors           int
}

// readWorkload reads input_config.endpoint.model_names (AIPerf; GenAI-Perf's top-level
// model_names), the input/output_sequence_length means, was_cancelled and error_summary counts.
func readWorkload(doc map[string]json.RawMessage) Workload {
	var w Workload
	var ic struct {
		Endpoint struct {
			ModelNames []string `json:"model_names"`
		} `json:"endpoint"`
		ModelNames []string `json:"model_names"`
		Model      []string `json:"model"`
	}
	if raw := doc["input_config"]; raw != nil && json.Unmarshal(raw, &ic) == nil {
		w.Models = ic.Endpoint.ModelNames
		if len(w.Models) == 0 {
			w.Models = ic.ModelNames
		}
		if len(w.Models) == 0 {
			w.Models = ic.Model
		}
	}
	mean := func(tag string) *float64 {
		var s struct {
			Avg *float64 `json:"avg"`
		}
		if raw := doc[tag]; raw != nil && json.Unmarshal(raw, &s) == nil {
			return s.Avg
		}
		return nil
	}
	w.MeanISL, w.MeanOSL = mean("input_sequence_length"), mean("output_sequence_length")
	_ = json.Unmarshal(doc["was_cancelled"], &w.Cancelled)
	var errs []struct {
		Count int `json:"count"`
	}
	if raw := doc["error_summary"]; raw != nil && json.Unmarshal(raw, &errs) == nil {
		for _, e := range errs {
			w.Errors += max(e.Count, 1)
		}
	}
	return w
}

// readLoad reads input_config.loadgen (AIPerf) or input_config's top-level fields (GenAI-Perf
// dumps its whole config): concurrency and request_count (whole numbers >= 1) and request_rate
// (requests/s > 0); absent or null fields are unknown. A field of another type or range is a
// *config.Error naming it (without the file).
func readLoad(raw json.RawMessage) (Load, error) {
	var l Load
	var ic map[string]json.RawMessage
	if raw == nil || string(raw) == "null" {
		return l, nil // no input_config: the load is unknown
	}
	if json.Unmarshal(raw, &ic) != nil {
		return l, &config.Error{Path: "input_config", Msg: fmt.Sprintf("want an object (the run's configuration), got %s", clip(string(raw)))}
	}
	l.Echoed = true
	var lg map[string]json.RawMessage
	if r, ok := ic["loadgen"]; ok && string(r) != "null" {
		if err := json.Unmarshal(r, &lg); err != nil {
			return l, &config.Error{Path: "input_config.loadgen", Msg: fmt.Sprintf("want an object, got %s", clip(string(r)))}
		}
	}
	// field returns the raw value of name and its path: loadgen's first, else the top level's.
	field := func(name string) (json.RawMessage, string) {
		if r, ok := lg[name]; ok && string(r) != "null" {
			return r, "input_config.loadgen." + name
		}
		if r, ok := ic[name]; ok && string(r) != "null" {
			return r, "input_config." + name
		}
		return nil, ""
	}
	whole := func(name string) (*int, error) {
		r, path := field(name)
		if r == nil {
			return nil, nil
		}
		var v float64
		if json.Unmarshal(r, &v) != nil || v != math.Trunc(v) || v < 1 || v > 1e9 {
			return nil, &config.Error{Path: path, Msg: fmt.Sprintf("want a whole number from 1 to 1e9, got %s", clip(string(r)))}
		}
		n := int(v)
		return &n, nil
	}
	var err error
	if l.Concurrency, err = whole("concurrency"); err != nil {
		return Load{}, err
	}
	if l.RequestCount, err = whole("request_count"); err != nil {
		return Load{}, err
	}
	if r, path := field("request_rate"); r != nil {
		var v float64
		if json.Unmarshal(r, &v) != nil || !(v > 0) || v > 1e9 {
			return Load{}, &config.Error{Path: path, Msg: fmt.Sprintf("want requests per second > 0 (at most 1e9), got %s", clip(string(r)))}
		}
		l.RequestRate = &v
	}
	if r, path := field("concurrency_ramp_duration"); r != nil {
		var v float64
		if json.Unmarshal(r, &v) != nil || !(v >= 0) || v > 1e9 {
			return Load{}, &config.Error{Path: path, Msg: fmt.Sprintf("want seconds >= 0 (at most 1e9), got %s", clip(string(r)))}
		}
		l.RampSeconds = &v
	}
	return l, nil
}

// Comparison is one predicted value against its measured one.
type Comparison struct {
	// Metric is the row name (TTFT, ITL, TPOT, E2E, output throughput, request throughput);
	// Stat is mean, p50, p90 or p99; Unit is ms, tokens/s or requests/s.
	Metric string `json:"metric"`
	Stat   string `json:"stat"`
	Unit   string `json:"unit"`
	// Measured is the run's tag the value came from, e.g. inter_token_latency.
	Measured string `json:"measured_tag"`
	// MeasuredValue and PredictedValue are the two values; ErrorPct is (predicted − measured) /
	// measured × 100 (nil when measured is 0) and APEPct its absolute value.
	MeasuredValue  float64  `json:"measured"`
	PredictedValue float64  `json:"predicted"`
	ErrorPct       *float64 `json:"error_pct"`
	APEPct         *float64 `json:"ape_pct"`
}

// metricMap pairs the simulator's distributions with AIPerf's tags. AIPerf's
// inter_token_latency is per request, (E2E − TTFT) / (OSL − 1): the simulator's TPOT; the
// simulator's ITL pools every gap between tokens, as AIPerf's inter_chunk_latency pools the gaps
// between chunks (one token each when the server streams token by token).
var metricMap = []struct {
	name, tag string
	stats     func(*metrics.Summary) metrics.Stats
}{
	{"TTFT", "time_to_first_token", func(s *metrics.Summary) metrics.Stats { return s.TTFT }},
	{"ITL", "inter_chunk_latency", func(s *metrics.Summary) metrics.Stats { return s.ITL }},
	{"TPOT", "inter_token_latency", func(s *metrics.Summary) metrics.Stats { return s.TPOT }},
	{"E2E", "request_latency", func(s *metrics.Summary) metrics.Stats { return s.E2E }},
}

// Compare scores the simulated summary s against run: TTFT, ITL, TPOT and E2E at mean, p50,
// p90 and p99, then output-token and request throughput, each only where the run has the value.
func Compare(run *Run, s *metrics.Summary) []Comparison {
	var out []Comparison
	for _, m := range metricMap {
		st, ok := run.Metrics[m.tag]
		if !ok {
			continue
		}
		pred := m.stats(s)
		for _, p := range []struct {
			stat string
			meas *float64
			pred float64
		}{{"mean", st.Avg, pred.Mean}, {"p50", st.P50, pred.Median}, {"p90", st.P90, pred.P90}, {"p99", st.P99, pred.P99}} {
			if p.meas != nil {
				out = append(out, newComparison(m.name, p.stat, "ms", m.tag, *p.meas, p.pred))
			}
		}
	}
	for _, t := range []struct {
		name, tag, unit string
		pred            float64
	}{
		{"output throughput", "output_token_throughput", "tokens/s", s.OutputThroughputTokS},
		{"request throughput", "request_throughput", "requests/s", s.RequestThroughputRPS},
	} {
		if st, ok := run.Metrics[t.tag]; ok && st.Avg != nil {
			out = append(out, newComparison(t.name, "mean", t.unit, t.tag, *st.Avg, t.pred))
		}
	}
	return out
}

func newComparison(metric, stat, unit, tag string, meas, pred float64) Comparison {
	c := Comparison{Metric: metric, Stat: stat, Unit: unit, Measured: tag, MeasuredValue: meas, PredictedValue: pred}
	if meas != 0 && !math.IsNaN(pred) && !math.IsInf(pred, 0) {
		e := (pred - meas) / meas * 100
		a := math.Abs(e)
		c.ErrorPct, c.APEPct = &e, &a
	}
	return c
}

// MAPE is the mean absolute percentage error of one metric and statistic over several runs.
type MAPE struct {
	Metric  string  `json:"metric"`
	Stat    string  `json:"stat"`
	Runs    int     `json:"runs"`
	MAPEPct float64 `json:"mape_pct"`
}

// MAPEs returns, for every (metric, stat) the runs' comparisons share, the mean of their
// absolute percentage errors over the runs that have one, in the order of first appearance.
func MAPEs(perRun [][]Comparison) []MAPE {
	type key struct{ metric, stat string }
	var order []key
	sums := map[key]float64{}
	counts := map[key]int{}
	for _, cs := range perRun {
		for _, c := range cs {
			if c.APEPct == nil {
				continue
			}
			k := key{c.Metric, c.Stat}
			if counts[k] == 0 {
				order = append(order, k)
			}
			sums[k] += *c.APEPct
			counts[k]++
		}
	}
	out := make([]MAPE, len(order))
	for i, k := range order {
		out[i] = MAPE{Metric: k.metric, Stat: k.stat, Runs: counts[k], MAPEPct: sums[k] / float64(counts[k])}
	}
	return out
}

// repeatedKey returns the dotted path of the first key that appears twice in one object of the
// valid JSON data ("time_to_first_token.avg"), or "".
func repeatedKey(data []byte) string {
	dec := json.NewDecoder(bytes.NewReader(data))
	var walk func(prefix string) (string, bool)
	walk = func(prefix string) (string, bool) {
		t, err := dec.Token()
		if err != nil {
			return "", false
		}
		switch d := t.(type) {
		case json.Delim:
			switch d {
			case '{':
				keys := map[string]bool{}
				for dec.More() {
					kt, err := dec.Token()
					if err != nil {
						return "", false
					}
					k, _ := kt.(string)
					if keys[k] {
						return prefix + k, true
					}
					keys[k] = true
					if p, found := walk(prefix + k + "."); found {
						return p, true
					}
				}
				dec.Token() // '}'
			case '[':
				for i := 0; dec.More(); i++ {
					if p, found := walk(fmt.Sprintf("%s%d.", prefix, i)); found {
						return p, true
					}
				}
				dec.Token() // ']'
			}
		}
		return "", false
	}
	p, _ := walk("")
	return p
}
