package calibrate

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/agnivade/levenshtein"
	"github.com/servesweep/servesweep/sim/config"
)

// WorkerShape is one role of a measured deployment.
type WorkerShape struct {
	// BatchSize is the engine's maximum running requests per worker (0 = not given).
	BatchSize int
	// Workers is the number of replicas of the role (aggregated rows: derived, see Plan).
	Workers int
	// Tensor, Pipeline and AttentionData are the parallel degrees (1 when not given).
	Tensor, Pipeline, AttentionData int
	// MoETensor and MoEExpert split a mixture-of-experts model's experts (moe_tp_size,
	// moe_ep_size; 0 when not given or 0: see PlanRow).
	MoETensor, MoEExpert int
	// RedundantExperts is the expert slots per MoE layer the role places beside the model's
	// experts (config.Parallelism.RedundantExperts): no CSV column gives it; Plan sets it from
	// an InferenceX row's serving recipe (RecipeRedundantExperts).
	RedundantExperts int
	// MaxBatchedTokens is the role's tokens per pass per attention-DP rank (0: MaxBatchedTokens,
	// the engines' default): no CSV column gives it; Plan sets it from an InferenceX row's
	// serving recipe (RecipePrefillLimits).
	MaxBatchedTokens int
	// ChunkedPrefillSize and RecvInterval are SGLang's --chunked-prefill-size (over the role's
	// attention-DP ranks) and --scheduler-recv-interval (0: SGLang's defaults): no CSV column
	// gives them; Plan sets them from an InferenceX row's SGLang serving recipe
	// (RecipeSGLangLimits).
	ChunkedPrefillSize, RecvInterval int
	// MaxTotalTokens caps the KV pool of each attention-DP rank, in tokens (SGLang's
	// --max-total-tokens; 0: no cap), and MemoryFraction is the share of GPU memory for
	// weights and KV cache (SGLang's --mem-fraction-static; 0: the engine's default): no CSV
	// column gives them; Plan sets them from an InferenceX row's SGLang serving recipe
	// (RecipeSGLangLimits).
	MaxTotalTokens int
	MemoryFraction float64
}

// Row is one measured benchmark of a real deployment (one line of a CSV in the format of
// measured_dense_calibration.csv).
type Row struct {
	// Line is the 1-based line number in the file (the header is line 1).
	Line int
	// ID is the row's id column.
	ID string
	// Backend (vllm, sglang, trtllm) and BackendVersion.
	Backend, BackendVersion string
	// Model is the Hugging Face model id (model_path).
	Model string
	// System is the GPU id (h100_sxm, b200_sxm, gb200, ...).
	System string
	// Precision and GEMMQuant are the raw precision and gemm_quant_mode columns ("" = bf16).
	Precision, GEMMQuant string
	// Mode is agg or disagg.
	Mode string
	// ISL and OSL are input and output tokens per request.
	ISL, OSL int
	// Concurrency is the benchmark client's closed-loop concurrency over the whole deployment
	// (0 = not given).
	Concurrency int
	// Agg is the aggregated worker shape (batch_size, tp_size, pp_size, attention_dp_size);
	// Prefill and Decode the disaggregated roles (prefill_*, decode_*).
	Agg, Prefill, Decode WorkerShape
	// TTFTMs and TPOTMs are the measured mean TTFT and mean TPOT in ms.
	TTFTMs, TPOTMs float64
	// Source, MeasuredAt and Image are the provenance columns source (who measured the row:
	// inferencex, aic-gap-analysis, ...), measured_at (YYYY-MM-DD) and image (the serving
	// container); "" when absent. Source selects the row's benchmark harness (HarnessFor).
	Source, MeasuredAt, Image string
	// ConfigID is the config_id column: the key of the row's configuration in InferenceX's
	// results database, whose natural key holds the hardware, framework, model, precision,
	// speculative-decoding method, disaggregation and parallel topology
	// (github.com/SemiAnalysisAI/InferenceX-app, packages/db/migrations/001_initial_schema.sql,
	// table configs); "" when not given. Rows of one ConfigID ran the same speculative decoding
	// (SpecMethodsByConfig).
	ConfigID string
	// SpecMethod, when not "", is the speculative decoding the row ran ("none" or "mtp") as the
	// other rows of its ConfigID determine it (SpecMethodsByConfig), or its pair
	// (SpecMethodsByPair); the CSV has no such column.
	SpecMethod string
	// SpecPair, when SpecMethodsByPair set SpecMethod, is the other row of the pair: its line
	// and measured mean TPOT (ms); zero otherwise.
	SpecPair struct {
		Line   int
		TPOTMs float64
	}
	// Problem, when not empty, says why the row cannot be read (a malformed cell); such a row is
	// reported as skipped.
	Problem string
}

// maxShownColumn is the most characters of an unknown header field an error quotes.
const maxShownColumn = 40

// requiredColumns must be in the header; the others are optional (empty when absent).
func requiredColumns() []string {
	return []string{"backend", "model_path", "system", "mode", "isl", "osl", "silicon_ttft_ms", "silicon_tpot_ms"}
}

// knownColumns are the columns a measured-deployments CSV may name, in the order of
// measured_dense_calibration.csv's header (the README beside it describes them). Columns the
// simulation does not read (precision details, prefill and decode batch sizes of rows that give
// worker counts, provenance such as config_id) are known too, so that a file of that format
// reads whole; any other name is an error, since a misspelt column would read as absent.
var knownColumns = []string{
	"id", "backend", "backend_version", "model_path", "system", "precision", "gemm_quant_mode", "mode",
	"isl", "osl", "concurrency", "moe_quant_mode", "batch_size", "tp_size", "pp_size", "attention_dp_size",
	"moe_tp_size", "moe_ep_size", "prefill_batch_size", "prefill_num_workers", "prefill_tp_size",
	"prefill_pp_size", "prefill_attention_dp_size", "prefill_moe_tp_size", "prefill_moe_ep_size",
	"decode_batch_size", "decode_num_workers", "decode_tp_size", "decode_pp_size", "decode_attention_dp_size",
	"decode_moe_tp_size", "decode_moe_ep_size", "silicon_ttft_ms", "silicon_tpot_ms", "source",
	"source_snapshot", "measured_at", "image", "wip", "config_id", "workflow_run_id",
}

// nearestColumn is h in lower case when that is a known column, else the known column closest
// to h by edit (Levenshtein) distance, when within 3 edits; "" else.
func nearestColumn(h string) string {
	l := strings.ToLower(h)
	if slices.Contains(knownColumns, l) {
		return l // the columns are lower case: ISL is isl, not the nearer "id"
	}
	if c, ok := columnSynonyms[l]; ok {
		return c
	}
	// A close spelling only: within 3 edits and less than half the name's length ("gpu" is
	// three edits from "id" too, which would mislead).
	best, bestD := "", min(4, (len([]rune(h))+1)/2)
	for _, c := range knownColumns {
		if d := levenshtein.ComputeDistance(h, c); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// columnSynonyms maps the field's other names for a column (lower case) to the column.
var columnSynonyms = map[string]string{
	"gpu": "system", "hardware": "system", "gpu_type": "system", "model": "model_path", "model_name": "model_path",
	"engine": "backend", "framework": "backend", "ttft": "silicon_ttft_ms", "ttft_ms": "silicon_ttft_ms",
	"tpot": "silicon_tpot_ms", "tpot_ms": "silicon_tpot_ms", "itl_ms": "silicon_tpot_ms", "tp": "tp_size", "conc": "concurrency",
	"input_len": "isl", "output_len": "osl",
}

// ReadCSVFile reads a measured-deployments CSV; see ReadCSV.
func ReadCSVFile(path string) ([]Row, error) {
	if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file; want a CSV of measured deployments (the format of measured_dense_calibration.csv)", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%s: cannot read it (%v); want a CSV of measured deployments (the format of measured_dense_calibration.csv)", path, config.PathCause(err))
	}
	defer f.Close()
	return ReadCSV(f, path)
}

// ReadCSV parses a measured-deployments CSV with a header line (the columns of
// measured_dense_calibration.csv; see the README beside it). name labels errors. A missing
// required column, a column not among knownColumns (with the nearest known name) or a malformed
// CSV is an error naming the file (and line); a malformed cell
// (a non-integer isl, a non-positive measured TTFT, ...) or a row with more or fewer fields than
// the header marks only its row, in Row.Problem. The rows come back with Row.SpecMethod set where
// their config_id settles it (SpecMethodsByConfig, which reads the whole file's rows).
func ReadCSV(r io.Reader, name string) ([]Row, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	header, err := cr.Read()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s: empty file; want a CSV with a header line (%s, ...)", name, strings.Join(requiredColumns(), ", "))
		}
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	col := map[string]int{}
	for i, h := range header {
		h = strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))
		if j, dup := col[h]; dup && h != "" {
			return nil, fmt.Errorf("%s: line 1: column %q appears twice (fields %d and %d); each column must be named once", name, h, j+1, i+1)
		}
		col[h] = i
	}
	for i, h := range header {
		h = strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))
		if h == "" || slices.Contains(knownColumns, h) {
			continue
		}
		hint := ""
		if near := nearestColumn(h); near != "" {
			hint = fmt.Sprintf("; did you mean %q?", near)
		}
		shown := h
		if r := []rune(h); len(r) > maxShownColumn {
			// A binary file's first "field" can be kilobytes long: its start says enough.
			shown = string(r[:maxShownColumn]) + "…"
		}
		return nil, fmt.Errorf("%s: line 1: unknown column %q (field %d%s): a misspelt column would read as absent; the columns are %s",
			name, shown, i+1, hint, strings.Join(knownColumns, ", "))
	}
	var missing []string
	for _, c := range requiredColumns() {
		if _, ok := col[c]; !ok {
			missing = append(missing, c)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%s: line 1: missing column(s) %s; the header must name %s", name,
			strings.Join(missing, ", "), strings.Join(requiredColumns(), ", "))
	}
	var rows []Row
	type firstRow struct{ line, index int }
	seen := map[string]firstRow{} // id -> its first row
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %v", name, err)
		}
		line, _ := cr.FieldPos(0)
		row := parseRow(rec, col, line)
		if len(rec) != len(header) {
			// A ragged row's cells cannot be matched to their columns.
			row.Problem = fmt.Sprintf("has %d fields, the header %d: its cells cannot be matched to columns", len(rec), len(header))
		}
		if first, dup := seen[row.ID]; dup && row.ID != "" {
			if row.Problem == "" {
				// One measurement listed twice would count twice in every score; an id given to two
				// different measurements says the file disagrees with itself.
				f := rows[first.index]
				if f.TTFTMs == row.TTFTMs && f.TPOTMs == row.TPOTMs {
					row.Problem = fmt.Sprintf("repeats the id %q of line %d: a measurement listed twice is scored once", row.ID, first.line)
				} else {
					row.Problem = fmt.Sprintf("has the id %q of line %d with other measurements (TTFT %g against %g ms, TPOT %g "+
						"against %g ms): an id names one measurement; only line %d is scored", row.ID, first.line,
						row.TTFTMs, f.TTFTMs, row.TPOTMs, f.TPOTMs, first.line)
				}
			}
		} else if row.ID != "" {
			seen[row.ID] = firstRow{line: line, index: len(rows)}
		}
		rows = append(rows, row)
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("%s: no data rows after the header", name)
	}
	if err := SpecMethodsByConfig(rows); err != nil {
		return nil, err
	}
	if err := SpecMethodsByPair(rows); err != nil {
		return nil, err
	}
	return rows, nil
}

// rowParser reads the cells of one record, remembering the first problem.
type rowParser struct {
	rec     []string
	col     map[string]int
	problem string
}

func (p *rowParser) str(name string) string {
	i, ok := p.col[name]
	if !ok || i >= len(p.rec) {
		return ""
	}
	return strings.TrimSpace(p.rec[i])
}

// intv reads an optional non-negative int column; "" gives def. Numbers written as floats with
// no fraction ("4.0") are accepted.
func (p *rowParser) intv(name string, def int) int {
	s := p.str(name)
	if s == "" {
		return def
	}
	if v, err := strconv.Atoi(s); err == nil && v >= 0 {
		return v
	}
	if f, err := config.ParseDecimal(s); err == nil && f >= 0 && f == math.Trunc(f) && f < math.MaxInt32 {
		return int(f)
	}
	if p.problem == "" {
		p.problem = fmt.Sprintf("%s: must be an int >= 0, got %q", name, s)
	}
	return def
}

// posInt reads a required positive integer (a token count).
func (p *rowParser) posInt(name string) int {
	s, had := p.str(name), p.problem != ""
	if v := p.intv(name, 0); v > 0 {
		return v
	}
	if !had {
		p.problem = fmt.Sprintf("%s: must be an int > 0, got %q", name, s)
	}
	return 0
}

// posFloat reads a required positive number.
func (p *rowParser) posFloat(name string) float64 {
	s := p.str(name)
	f, err := config.ParseDecimal(s)
	if err != nil || !(f > 0) || math.IsInf(f, 0) {
		if p.problem == "" {
			p.problem = fmt.Sprintf("%s: must be a number > 0, got %q", name, s)
			switch {
			case errors.Is(err, strconv.ErrRange):
				p.problem = fmt.Sprintf("%s: must be a finite number > 0, got %q (beyond a 64-bit float's range)", name, s)
			case math.IsInf(f, 0):
				p.problem = fmt.Sprintf("%s: must be a finite number > 0, got %q", name, s)
			}
		}
		return 0
	}
	return f
}

// minMeasuredMs is the least measured mean time in ms a row may give: one microsecond, a
// hundredth of the least TPOT any GPU serves (implausibleTPOTMs, 0.1 ms), so that every error and
// ratio against it stays finite (a denormal 1e-310 ms made them overflow to +Inf).
const minMeasuredMs = 1e-3

// measuredMs reads a measured mean time in ms: a finite number of at least minMeasuredMs,
// else a problem naming the column.
func (p *rowParser) measuredMs(name string) float64 {
	f := p.posFloat(name)
	if f > 0 && f < minMeasuredMs {
		if p.problem == "" {
			p.problem = fmt.Sprintf("%s: a measured mean time must be at least %g ms (one microsecond), got %q; give it in milliseconds", name, minMeasuredMs, p.str(name))
		}
		return 0
	}
	return f
}

// count reads an optional count of at least 1: def when empty, a problem when 0 (a batch, a
// worker count, a tensor or pipeline degree of zero cannot have been measured; empty says "not
// given"). attention_dp_size and the moe_* columns are read with intv instead: the measured
// files write 0 there for "not used" (a dense model's moe_ep_size), which normalize reads as 1.
func (p *rowParser) count(name string, def int) int {
	v := p.intv(name, def)
	if v == 0 && p.str(name) != "" && p.problem == "" {
		p.problem = fmt.Sprintf("%s: must be >= 1 (or empty when not given), got 0", name)
	}
	return v
}

func (p *rowParser) shape(prefix string) WorkerShape {
	return WorkerShape{
		BatchSize:     p.count(prefix+"batch_size", 0),
		Workers:       p.count(prefix+"num_workers", 0),
		Tensor:        p.count(prefix+"tp_size", 1),
		Pipeline:      p.count(prefix+"pp_size", 1),
		AttentionData: p.intv(prefix+"attention_dp_size", 1),
		MoETensor:     p.intv(prefix+"moe_tp_size", 0),
		MoEExpert:     p.intv(prefix+"moe_ep_size", 0),
	}
}

func parseRow(rec []string, col map[string]int, line int) Row {
	p := &rowParser{rec: rec, col: col}
	r := Row{
		Line: line, ID: p.str("id"), Backend: strings.ToLower(p.str("backend")), BackendVersion: p.str("backend_version"),
		Source: p.str("source"), MeasuredAt: p.str("measured_at"), Image: p.str("image"), ConfigID: p.str("config_id"),
		Model: p.str("model_path"), System: strings.ToLower(p.str("system")), Precision: p.str("precision"),
		GEMMQuant: p.str("gemm_quant_mode"), Mode: p.str("mode"),
		ISL: p.posInt("isl"), OSL: p.posInt("osl"), Concurrency: p.intv("concurrency", 0),
		Agg: p.shape(""), Prefill: p.shape("prefill_"), Decode: p.shape("decode_"),
		TTFTMs: p.measuredMs("silicon_ttft_ms"), TPOTMs: p.measuredMs("silicon_tpot_ms"),
	}
	if c := p.str("concurrency"); c != "" && r.Concurrency == 0 && (p.problem == "" || strings.HasPrefix(p.problem, "concurrency: ")) {
		p.problem = fmt.Sprintf("concurrency: must be an int > 0 (or empty: then batch_size, or decode_batch_size × decode_num_workers), got %q", c)
	}
	r.Problem = p.problem
	return r
}

// Bounds below which a measured mean looks like seconds written where milliseconds belong: a
// mean TPOT under 0.1 ms is 10,000 tokens per second for each user, a mean TTFT under 1 ms less
// than one pass of any model on any GPU (the fastest rows of the shared files measure about
// 1.9 ms and 37 ms).
const (
	implausibleTPOTMs = 0.1
	implausibleTTFTMs = 1.0
)

// MeasuredWarnings says what in rows (read from the file name) changes how they are scored
// without making them invalid, one line each: InferenceX rows without a measured_at (a missing
// column or empty cells), whose server settings and deployments, given by date in InferenceX's
// public record, cannot be looked up and run at servesweep's engine defaults; and measured means
// too small to be milliseconds (implausibleTPOTMs, implausibleTTFTMs), naming up to five lines.
// Rows with a Problem (a malformed cell, a ragged line) come first, up to five named with their
// problem: they are skipped with it, and the others are scored.
func MeasuredWarnings(rows []Row, name string) []string {
	var out []string
	var undated int
	var small, malformed []string
	for _, r := range rows {
		if r.Problem != "" {
			malformed = append(malformed, fmt.Sprintf("line %d: %s", r.Line, r.Problem))
			continue
		}
		if HarnessFor(r).Name == HarnessInferenceX && strings.TrimSpace(r.MeasuredAt) == "" {
			undated++
		}
		switch {
		case r.TPOTMs < implausibleTPOTMs:
			small = append(small, fmt.Sprintf("line %d silicon_tpot_ms %g", r.Line, r.TPOTMs))
		case r.TTFTMs < implausibleTTFTMs:
			small = append(small, fmt.Sprintf("line %d silicon_ttft_ms %g", r.Line, r.TTFTMs))
		}
	}
	if len(malformed) > 0 {
		more := ""
		if len(malformed) > 5 {
			more = fmt.Sprintf("; and %d more", len(malformed)-5)
		}
		out = append(out, fmt.Sprintf("%s: %d row(s) are not scored (%s%s); the other rows are scored",
			name, len(malformed), strings.Join(malformed[:min(5, len(malformed))], "; "), more))
	}
	if undated > 0 {
		out = append(out, fmt.Sprintf("%s: %d InferenceX row(s) give no measured_at (the column is missing or the cells empty): "+
			"the server settings and deployments InferenceX's public record gives by date cannot be looked up, so they run at "+
			"servesweep's engine defaults (each row's notes say so); give each row its YYYY-MM-DD", name, undated))
	}
	if len(small) > 0 {
		more := ""
		if len(small) > 5 {
			more = fmt.Sprintf(" and %d more", len(small)-5)
			small = small[:5]
		}
		out = append(out, fmt.Sprintf("%s: %s%s: a mean TPOT under %g ms or TTFT under %g ms is faster than any GPU serves; "+
			"seconds where milliseconds belong?", name, strings.Join(small, ", "), more, implausibleTPOTMs, implausibleTTFTMs))
	}
	return out
}
