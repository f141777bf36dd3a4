package calibrate

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync/atomic"

	"github.com/servesweep/servesweep/sim"
	"github.com/servesweep/servesweep/sim/config"
	"github.com/servesweep/servesweep/sim/engine"
	"github.com/servesweep/servesweep/sim/timing/opdb"
	"golang.org/x/sync/errgroup"
)

// Options tunes a validation run. The zero value means the defaults.
type Options struct {
	// Parallelism is the number of rows simulated at once (default GOMAXPROCS).
	Parallelism int
	// Factors replaces the calibrated factors (the timing efficiency, the front-end time and the
	// hand-off latency); nil means those of the forward model: CalibratedFactors, or
	// CalibratedOpLevelFactors with ForwardModel op_level.
	Factors *Factors
	// Worst is how many rows the summary lists as the largest errors (default 10).
	Worst int
	// Progress, when set, is called after each row with the rows done and the total (from
	// several goroutines; it must be safe for concurrent use).
	Progress func(done, total int)
	// ForwardModel is every simulated role's timing.forward_model ("" or auto: the shipped
	// choice, timing.AutoForwardModel; op_level: the performance database's tables).
	ForwardModel string
	// OneWorkerPerRole simulates a disaggregated row that gives neither prefill_num_workers nor
	// decode_num_workers as one worker of each role (DisaggWorkersNote). Off by default: such a
	// row is skipped with the reason, since the file does not say what was deployed and that
	// reading disagrees with most such rows of measured_moe_calibration.csv (docs/timing.md, MoE accuracy).
	OneWorkerPerRole bool
	// Systems is the performance database every row's simulation is given (sim.Options.Systems;
	// nil: none). ForwardModel op_level needs one.
	Systems *opdb.DB
}

func (o Options) withDefaults() Options {
	if o.Parallelism <= 0 {
		o.Parallelism = runtime.GOMAXPROCS(0)
	}
	if o.Factors == nil {
		f := CalibratedFactors()
		if o.ForwardModel == config.ForwardOpLevel {
			f = CalibratedOpLevelFactors()
		}
		o.Factors = &f
	}
	if o.Worst <= 0 {
		o.Worst = 10
	}
	return o
}

// IncompleteNote starts the note of a row whose simulation did not complete every request it sent
// (RowResult.Notes; Summary.Notes counts such rows).
const IncompleteNote = "incomplete"

// RowResult is the outcome of one row: predicted against measured, or why it was skipped.
// Times are ms; APEs are absolute percentage errors |predicted − measured| / measured × 100.
type RowResult struct {
	// Line is the row's line in the CSV (the header is line 1) and ID its id column.
	Line int    `json:"line"`
	ID   string `json:"id"`
	// Source is the row's source column (who measured it; "" when the file has none) and
	// Harness the benchmark client simulated for it (HarnessInferenceX or HarnessAssumed; empty
	// when the row could not be planned).
	Source  string `json:"source"`
	Harness string `json:"harness,omitempty"`
	// Model, System, Backend and Mode are the row's model_path, system, backend and mode.
	Model   string `json:"model"`
	System  string `json:"system"`
	Backend string `json:"backend"`
	Mode    string `json:"mode"`
	// Precision is the simulated weight and KV-cache format, e.g. "weights fp8, kv fp8", and the
	// attention format when the row's config sets one ("weights fp4, kv fp8, attention bf16").
	Precision string `json:"precision,omitempty"`
	// Shape is the simulated worker layout (Plan.Shape).
	Shape string `json:"shape,omitempty"`
	// ISL and OSL are input and output tokens per request.
	ISL int `json:"isl"`
	OSL int `json:"osl"`
	// Concurrency is the simulated closed-loop concurrency.
	Concurrency int `json:"concurrency,omitempty"`
	// GPUs is the number of GPUs of the simulated deployment (every replica of every role).
	GPUs int `json:"gpus,omitempty"`
	// Speculation is the speculative decoding simulated, "mtp N" for N draft tokens per round
	// (empty without).
	Speculation string `json:"speculation,omitempty"`
	// Scheduler is the scheduler style simulated: the row's backend (vllm, sglang or trtllm).
	Scheduler string `json:"scheduler,omitempty"`
	// BackendVersion is the version the row was measured with; TimingProvider the timing model
	// that simulated it (sim.Result.TimingProvider: "roofline", or the op_level tables and their
	// versions, the newest the performance database holds).
	BackendVersion string `json:"backend_version,omitempty"`
	TimingProvider string `json:"timing_provider,omitempty"`
	// Notes say where the simulation departs from the row (Plan.Notes).
	Notes []string `json:"notes,omitempty"`
	// MeasuredTTFTMs and MeasuredTPOTMs are the row's silicon_ttft_ms and silicon_tpot_ms.
	MeasuredTTFTMs float64 `json:"measured_ttft_ms"`
	MeasuredTPOTMs float64 `json:"measured_tpot_ms"`
	// PredictedTTFTMs and PredictedTPOTMs are the simulated means (see Validate).
	PredictedTTFTMs float64 `json:"predicted_ttft_ms"`
	PredictedTPOTMs float64 `json:"predicted_tpot_ms"`
	// TTFTAPEPct and TPOTAPEPct are the absolute percentage errors.
	TTFTAPEPct float64 `json:"ttft_ape_pct"`
	TPOTAPEPct float64 `json:"tpot_ape_pct"`
	// Preemptions in the simulated runs (a sign of KV pressure).
	Preemptions int64 `json:"preemptions"`
	// Skipped rows were not simulated; Reason says why.
	Skipped bool   `json:"skipped"`
	Reason  string `json:"reason,omitempty"`
}

// MarshalJSON writes the row with null in place of the values a skipped row does not have: its
// predictions and errors, and a measured value its cell did not give (0 after a parse problem).
// A zero would read as a measurement or a perfect prediction.
func (r RowResult) MarshalJSON() ([]byte, error) {
	type plain RowResult
	out := struct {
		plain
		MeasuredTTFTMs  *float64 `json:"measured_ttft_ms"`
		MeasuredTPOTMs  *float64 `json:"measured_tpot_ms"`
		PredictedTTFTMs *float64 `json:"predicted_ttft_ms"`
		PredictedTPOTMs *float64 `json:"predicted_tpot_ms"`
		TTFTAPEPct      *float64 `json:"ttft_ape_pct"`
		TPOTAPEPct      *float64 `json:"tpot_ape_pct"`
	}{plain: plain(r)}
	some := func(x float64) *float64 { return &x }
	if r.MeasuredTTFTMs > 0 || !r.Skipped {
		out.MeasuredTTFTMs = some(r.MeasuredTTFTMs)
	}
	if r.MeasuredTPOTMs > 0 || !r.Skipped {
		out.MeasuredTPOTMs = some(r.MeasuredTPOTMs)
	}
	if !r.Skipped {
		out.PredictedTTFTMs, out.PredictedTPOTMs = some(r.PredictedTTFTMs), some(r.PredictedTPOTMs)
		out.TTFTAPEPct, out.TPOTAPEPct = some(r.TTFTAPEPct), some(r.TPOTAPEPct)
	}
	return json.Marshal(out)
}

// Group is the accuracy of one (model, system, backend) group.
type Group struct {
	// Model, System and Backend identify the group.
	Model   string `json:"model"`
	System  string `json:"system"`
	Backend string `json:"backend"`
	// Rows is the number of simulated rows in the group.
	Rows int `json:"rows"`
	// TTFTMAPEPct and TPOTMAPEPct are the mean APEs, the Median fields the median APEs (%).
	TTFTMAPEPct      float64 `json:"ttft_mape_pct"`
	TPOTMAPEPct      float64 `json:"tpot_mape_pct"`
	TTFTMedianAPEPct float64 `json:"ttft_median_ape_pct"`
	TPOTMedianAPEPct float64 `json:"tpot_median_ape_pct"`
	// TTFTMedianRatio and TPOTMedianRatio are the medians of predicted ÷ measured (unitless):
	// the direction of the error the APEs leave out. Below 1 the prediction is optimistic (less
	// latency than measured), which is what breaks an SLA servesweep's pick was predicted to meet.
	TTFTMedianRatio float64 `json:"ttft_median_ratio"`
	TPOTMedianRatio float64 `json:"tpot_median_ratio"`
}

// Worst is one of the largest errors: a row line and which metric.
type Worst struct {
	// Line and ID identify the row.
	Line int    `json:"line"`
	ID   string `json:"id"`
	// Metric is "ttft" or "tpot"; APEPct its absolute percentage error.
	Metric string  `json:"metric"`
	APEPct float64 `json:"ape_pct"`
}

// NoteCount is how many simulated rows carry one kind of note.
type NoteCount struct {
	// Note is the note up to its first colon (the cells it reads, or the departure).
	Note string `json:"note"`
	// Rows is the number of simulated rows with such a note.
	Rows int `json:"rows"`
}

// SourceSummary is the accuracy on the rows of one source (the CSV's source column).
type SourceSummary struct {
	// Source is the column's value in lower case ("" when the file has none or the cell is
	// empty), Harness the client simulated for its rows (HarnessFor), and Known says that harness
	// is documented.
	Source  string `json:"source"`
	Harness string `json:"harness"`
	Known   bool   `json:"known"`
	// RowsSimulated and RowsSkipped count the source's rows.
	RowsSimulated int `json:"rows_simulated"`
	RowsSkipped   int `json:"rows_skipped"`
	// The MAPEs and median APEs of the source's simulated rows, in percent (nil without one).
	TTFTMAPEPct      *float64 `json:"ttft_mape_pct"`
	TPOTMAPEPct      *float64 `json:"tpot_mape_pct"`
	TTFTMedianAPEPct *float64 `json:"ttft_median_ape_pct"`
	TPOTMedianAPEPct *float64 `json:"tpot_median_ape_pct"`
	// TTFTMedianRatio and TPOTMedianRatio are the medians of predicted ÷ measured over them, as
	// Group's (nil without one).
	TTFTMedianRatio *float64 `json:"ttft_median_ratio"`
	TPOTMedianRatio *float64 `json:"tpot_median_ratio"`
}

// Summary aggregates the simulated rows. MAPE is the mean APE in percent; the median APE is
// reported beside it because a few rows were measured far past saturation. The headline figures
// (the four APE fields, RowsSimulated, RowsSkipped and Decision) cover the rows of a known
// harness (Harness.Known) when the file has any, else every row (Headline says which): rows of
// an assumed harness are scored per source (Sources), never mixed into a headline with rows
// benchmarked as documented. With no simulated row there is no accuracy: the four APE fields are
// then nil (null in JSON, N/A in String).
type Summary struct {
	// Headline says which rows the headline figures cover: "known harness" or "all rows".
	Headline string `json:"headline"`
	// TTFTMAPEPct and TPOTMAPEPct are the mean APEs over the headline's simulated rows, in
	// percent (nil when none was simulated).
	TTFTMAPEPct *float64 `json:"ttft_mape_pct"`
	TPOTMAPEPct *float64 `json:"tpot_mape_pct"`
	// TTFTMedianAPEPct and TPOTMedianAPEPct are the median APEs, in percent (nil when no row
	// was simulated).
	TTFTMedianAPEPct *float64 `json:"ttft_median_ape_pct"`
	TPOTMedianAPEPct *float64 `json:"tpot_median_ape_pct"`
	// TTFTMedianRatio and TPOTMedianRatio are the medians of predicted ÷ measured over the
	// headline's simulated rows, as Group's (nil when none was simulated).
	TTFTMedianRatio *float64 `json:"ttft_median_ratio"`
	TPOTMedianRatio *float64 `json:"tpot_median_ratio"`
	// RowsSimulated and RowsSkipped count the headline's rows.
	RowsSimulated int `json:"rows_simulated"`
	RowsSkipped   int `json:"rows_skipped"`
	// Decision scores the deployment servesweep would pick from its predictions on the
	// headline's rows (Decide).
	Decision DecisionSummary `json:"decision"`
	// Sources has one summary per source column value, sorted by source.
	Sources []SourceSummary `json:"sources"`
	// Speculative summarizes the simulated rows with speculative decoding (RowResult.Speculation;
	// their acceptance is published, not measured with the row), per source as Sources; they
	// count in Sources and the headline too. Empty when no row has any.
	Speculative []SourceSummary `json:"speculative_rows"`
	// Groups (every simulated row, whatever its harness) are sorted by model, system, backend.
	Groups []Group `json:"groups"`
	// Notes counts the simulated rows per kind of note (Plan.Notes, each cut at its first colon,
	// e.g. "prefill_num_workers and decode_num_workers empty"), most frequent first: how many
	// of the scored rows rest on a reading of empty cells or depart from the row.
	Notes []NoteCount `json:"notes"`
	// LargestTTFTErrors and LargestTPOTErrors list the rows with the largest APEs, largest first.
	LargestTTFTErrors []Worst `json:"largest_ttft_errors"`
	LargestTPOTErrors []Worst `json:"largest_tpot_errors"`
}

// Report is the outcome of Validate: one result per row, in file order, and the summary.
type Report struct {
	// Rows holds one result per CSV row, in file order.
	Rows []RowResult `json:"rows"`
	// Summary aggregates them.
	Summary Summary `json:"summary"`
	// Holdout is set when the report comes from Holdout: every row was predicted with factors
	// fitted on the other groups only.
	Holdout *HoldoutInfo `json:"holdout,omitempty"`
}

// Validate simulates every row with o.Parallelism simulations at a time and compares the
// predicted mean TTFT and mean TPOT with the measured ones. A row is one predict run of
// Plan.Config (PlanRow, then sim.Run; Factors.FrontendMs is its engine.frontend.overhead_ms): the
// benchmark as its harness ran it, the means taken as its client takes them, over every request.
//
// Every row is planned first; then each distinct config is simulated once for all the rows that
// plan it (groupRuns), the costliest first, so that no simulation waits for another and the last
// to finish are short ones.
//
// Rows that cannot be planned or run are skipped with the reason; when every row is skipped the
// summary's APEs are nil and Report.CheckSimulated says why. The report is deterministic: it
// does not depend on Parallelism. The error is only ctx's.
func Validate(ctx context.Context, rows []Row, o Options) (*Report, error) {
	o = o.withDefaults()
	out := make([]RowResult, len(rows))
	plans := make([]*Plan, len(rows))
	var done atomic.Int64
	progress := func(n int) {
		for range n {
			if o.Progress != nil {
				o.Progress(int(done.Add(1)), len(rows))
			}
		}
	}
	err := forEach(ctx, len(rows), o.Parallelism, func(_ context.Context, i int) int {
		out[i], plans[i] = planRow(rows[i], o)
		if plans[i] == nil {
			return 1
		}
		return 0
	}, progress)
	if err != nil {
		return nil, err
	}
	runs := groupRuns(rows, plans)
	err = forEach(ctx, len(runs), o.Parallelism, func(ctx context.Context, k int) int {
		first := runs[k].rows[0]
		outcome := simulate(ctx, plans[first].Config, o)
		for _, i := range runs[k].rows {
			out[i] = scoreRow(out[i], rows[i], outcome)
		}
		return len(runs[k].rows)
	}, progress)
	if err != nil {
		return nil, err
	}
	return &Report{Rows: out, Summary: summarize(out, o.Worst)}, nil
}

// forEach calls f(ctx, i) for every i in [0, n) in order, limit calls at a time, and then
// progress with the number of rows f says it finished. Once ctx ends it starts no other call
// and reports no more progress, and it returns ctx's error.
func forEach(ctx context.Context, n, limit int, f func(ctx context.Context, i int) (rowsDone int), progress func(rows int)) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(limit)
	for i := range n {
		g.Go(func() error {
			if err := gctx.Err(); err != nil {
				return err
			}
			rowsDone := f(gctx, i)
			if err := gctx.Err(); err != nil {
				return err
			}
			progress(rowsDone)
			return nil
		})
	}
	return g.Wait()
}

// runOutcome is what a row's score takes from its simulation: the mean TTFT and TPOT (ms) over
// the completed requests, how many completed of how many were sent, the preemptions and the
// timing provider; or the error that stopped the run.
type runOutcome struct {
	ttft, tpot     float64
	n, sent        int
	preemptions    int64
	timingProvider string
	err            error
}

// configRun is one simulation of Validate: the rows, in file order, whose plans have the same
// config (configKey), and the estimated cost of simulating it (runCost).
type configRun struct {
	rows []int
	cost float64
}

// groupRuns groups the planned rows (plans[i] != nil) by config: a measured file repeats a
// deployment under several ids (280 of the MoE file's 1,596 rows repeat another row's every
// setting), and a run depends on nothing but its config and the shared options, so the repeats
// take the first row's run instead of simulating it again. The runs are sorted by decreasing
// cost, ties in file order of their first rows.
func groupRuns(rows []Row, plans []*Plan) []configRun {
	var runs []configRun
	byKey := map[string]int{}
	for i, p := range plans {
		if p == nil {
			continue
		}
		key := configKey(p.Config, rows[i].Line)
		if k, ok := byKey[key]; ok {
			runs[k].rows = append(runs[k].rows, i)
			continue
		}
		byKey[key] = len(runs)
		runs = append(runs, configRun{rows: []int{i}, cost: runCost(p.Config)})
	}
	slices.SortStableFunc(runs, func(a, b configRun) int { return cmp.Compare(b.cost, a.cost) })
	return runs
}

// runCost estimates the CPU time of simulating cfg, in arbitrary units, to start the longest
// runs first: the requests times their prompt blocks and output tokens, the work of the
// per-request steps of every pass.
func runCost(cfg *config.Config) float64 {
	s := cfg.Traffic.Source
	return float64(cfg.Traffic.Stop.Requests) * (float64(s.InputTokens)/64 + float64(s.OutputTokens))
}

// configKey is the JSON encoding of a plan's config without its file name and without which
// optional sections were spelled out, the text grid.PointID hashes (calibrate may not import
// grid: the packages' direction is grid → sim): equal keys simulate identically. A config that
// cannot be encoded (it holds only plain values, so never) gets a key of its own.
func configKey(cfg *config.Config, line int) string {
	c := *cfg
	c.File, c.HasRouter, c.HasPlanner = "", false, false
	data, err := json.Marshal(&c)
	if err != nil {
		return fmt.Sprintf("line %d", line)
	}
	return string(data)
}

// planRow plans one row (PlanRow) and fills in what its result takes from the plan; a row that
// cannot be planned comes back skipped, with a nil plan.
func planRow(r Row, o Options) (RowResult, *Plan) {
	res := RowResult{
		Source: r.Source, Line: r.Line, ID: r.ID, Model: r.Model, System: r.System, Backend: r.Backend, Mode: r.Mode,
		ISL: r.ISL, OSL: r.OSL, MeasuredTTFTMs: r.TTFTMs, MeasuredTPOTMs: r.TPOTMs,
	}
	p, err := PlanRow(r, o)
	if err != nil {
		if r.ConfigID != "" && r.SpecMethod == "" && errors.Is(err, errNoSpecColumn) {
			// SpecMethodsByConfig settles a row's method from the other rows of its config_id in
			// the same file: say so, since a file of this row alone (or of rows that leave the
			// method open) cannot.
			err = fmt.Errorf("%w; the other rows of its config_id %s in the file settle it when they allow one method between "+
				"them (those of this file do not)", err, r.ConfigID)
		}
		return skipRow(res, err), nil
	}
	res.Precision = fmt.Sprintf("weights %s, kv %s", p.Precisions.Weights, p.Precisions.KVCache)
	if a := p.Config.Engine.Precision.Attention; a != "" {
		res.Precision += ", attention " + a
	}
	res.Shape, res.Concurrency, res.Scheduler, res.Notes = p.Shape, p.Concurrency, p.Config.Engine.Backend, p.Notes
	res.Harness = p.Harness.Name
	res.GPUs = p.Config.GPUs()
	if sp := p.Config.Engine.Speculation; sp != nil {
		res.Speculation = fmt.Sprintf("%s %d", sp.Kind, sp.NumSpeculativeTokens)
	}
	return res, p
}

// skipRow marks res skipped for err.
func skipRow(res RowResult, err error) RowResult {
	res.Skipped, res.Reason = true, csvColumns(err.Error())
	return res
}

// simulate runs cfg as the benchmark ran: one closed-loop run of the harness's requests,
// averaged over every request.
func simulate(ctx context.Context, cfg *config.Config, o Options) runOutcome {
	run, err := sim.Run(ctx, cfg, sim.Options{Efficiency: &o.Factors.Efficiency, Systems: o.Systems})
	if err != nil {
		return runOutcome{err: err}
	}
	ttft, tpot, n := means(run.Requests)
	out := runOutcome{ttft: ttft, tpot: tpot, n: n, sent: len(run.Requests), preemptions: run.Summary.Preemptions,
		timingProvider: run.TimingProvider}
	run.Release()
	return out
}

// scoreRow completes the result res of the planned row r with the outcome of its config's run.
func scoreRow(res RowResult, r Row, out runOutcome) RowResult {
	if out.err != nil {
		return skipRow(res, out.err)
	}
	if out.n == 0 {
		return skipRow(res, fmt.Errorf("no request completed"))
	}
	if out.n < out.sent {
		// The benchmark clients average their successful requests too; the row says how many
		// the simulation did not complete, so a row is never scored on part of its work unseen.
		res.Notes = append(slices.Clip(res.Notes), fmt.Sprintf("%s: %d of %d simulated requests did not complete (rejected or unfinished); the means cover the %d that did",
			IncompleteNote, out.sent-out.n, out.sent, out.n))
	}
	res.PredictedTTFTMs, res.PredictedTPOTMs = out.ttft, out.tpot
	res.TTFTAPEPct = ape(out.ttft, r.TTFTMs)
	res.TPOTAPEPct = ape(out.tpot, r.TPOTMs)
	res.Preemptions = out.preemptions
	res.BackendVersion, res.TimingProvider = r.BackendVersion, out.timingProvider
	return res
}

// means is the mean TTFT and mean TPOT (ms) over the completed requests, as the benchmark
// clients average their successful requests, and how many completed; TPOT is (last token − first
// token) / (output − 1) per request with at least two output tokens (aiperf-metrics.md).
func means(reqs []engine.Request) (ttft, tpot float64, n int) {
	var sumT, sumP float64
	var nP int
	for i := range reqs {
		r := &reqs[i]
		if r.Status != engine.Completed || r.FirstTokenMs < 0 {
			continue
		}
		sumT += r.FirstTokenMs - r.ArrivalMs
		n++
		if r.Generated > 1 {
			sumP += (r.LastTokenMs - r.FirstTokenMs) / float64(r.Generated-1)
			nP++
		}
	}
	if n == 0 {
		return 0, 0, 0
	}
	if nP > 0 {
		tpot = sumP / float64(nP)
	}
	return sumT / float64(n), tpot, n
}

func ape(pred, meas float64) float64 { return math.Abs(pred-meas) / meas * 100 }

// stats returns the mean and the median of xs (0, 0 when empty).
func stats(xs []float64) (mean, median float64) {
	if len(xs) == 0 {
		return 0, 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	sum := 0.0
	for _, x := range s {
		sum += x
	}
	m := len(s) / 2
	median = s[m]
	if len(s)%2 == 0 {
		median = (s[m-1] + s[m]) / 2
	}
	return sum / float64(len(s)), median
}

// predictedOverMeasured is a simulated row's predicted ÷ measured TTFT and TPOT.
func predictedOverMeasured(r RowResult) (ttft, tpot float64) {
	return r.PredictedTTFTMs / r.MeasuredTTFTMs, r.PredictedTPOTMs / r.MeasuredTPOTMs
}

// medianOrNil is the median of xs, nil when xs is empty.
func medianOrNil(xs []float64) *float64 {
	if len(xs) == 0 {
		return nil
	}
	_, m := stats(xs)
	return &m
}

// Headline values (Summary.Headline).
const (
	HeadlineKnownHarness = "known harness"
	HeadlineAllRows      = "all rows"
)

// apeStats fills the mean and median APE pointers from the APEs of the simulated rows (nil
// pointers when there is none).
func apeStats(ttft, tpot []float64) (ttftMean, tpotMean, ttftMedian, tpotMedian *float64) {
	if len(ttft) == 0 {
		return nil, nil, nil, nil
	}
	a, b := stats(ttft)
	c, d := stats(tpot)
	return &a, &c, &b, &d
}

func summarize(rows []RowResult, worst int) Summary {
	var s Summary
	type key struct{ model, system, backend string }
	groups := map[key][]int{}
	known := false
	for _, r := range rows {
		if HarnessFor(Row{Source: r.Source}).Known {
			known = true
			break
		}
	}
	s.Headline = HeadlineAllRows
	if known {
		s.Headline = HeadlineKnownHarness
	}
	type acc struct {
		sum                  SourceSummary
		ttft, tpot           []float64
		ttftRatio, tpotRatio []float64
	}
	bySource, spec := map[string]*acc{}, map[string]*acc{}
	var ttft, tpot, ttftRatio, tpotRatio []float64
	var headline []RowResult
	for i, r := range rows {
		h := HarnessFor(Row{Source: r.Source})
		src := strings.ToLower(r.Source) // as HarnessFor reads it
		a := bySource[src]
		if a == nil {
			a = &acc{sum: SourceSummary{Source: src, Harness: h.Name, Known: h.Known}}
			bySource[src] = a
		}
		inHeadline := !known || h.Known
		if r.Skipped {
			a.sum.RowsSkipped++
			if inHeadline {
				s.RowsSkipped++
			}
			continue
		}
		a.sum.RowsSimulated++
		a.ttft, a.tpot = append(a.ttft, r.TTFTAPEPct), append(a.tpot, r.TPOTAPEPct)
		rt, rp := predictedOverMeasured(r)
		a.ttftRatio, a.tpotRatio = append(a.ttftRatio, rt), append(a.tpotRatio, rp)
		if r.Speculation != "" {
			b := spec[src]
			if b == nil {
				b = &acc{sum: a.sum}
				b.sum.RowsSimulated, b.sum.RowsSkipped = 0, 0
				spec[src] = b
			}
			b.sum.RowsSimulated++
			b.ttft, b.tpot = append(b.ttft, r.TTFTAPEPct), append(b.tpot, r.TPOTAPEPct)
			b.ttftRatio, b.tpotRatio = append(b.ttftRatio, rt), append(b.tpotRatio, rp)
		}
		k := key{r.Model, r.System, r.Backend}
		groups[k] = append(groups[k], i)
		if inHeadline {
			s.RowsSimulated++
			ttft, tpot = append(ttft, r.TTFTAPEPct), append(tpot, r.TPOTAPEPct)
			ttftRatio, tpotRatio = append(ttftRatio, rt), append(tpotRatio, rp)
			headline = append(headline, r)
		}
	}
	s.TTFTMAPEPct, s.TPOTMAPEPct, s.TTFTMedianAPEPct, s.TPOTMedianAPEPct = apeStats(ttft, tpot)
	s.TTFTMedianRatio, s.TPOTMedianRatio = medianOrNil(ttftRatio), medianOrNil(tpotRatio)
	s.Decision = Decide(headline)
	s.Sources = []SourceSummary{}
	for _, a := range bySource {
		a.sum.TTFTMAPEPct, a.sum.TPOTMAPEPct, a.sum.TTFTMedianAPEPct, a.sum.TPOTMedianAPEPct = apeStats(a.ttft, a.tpot)
		a.sum.TTFTMedianRatio, a.sum.TPOTMedianRatio = medianOrNil(a.ttftRatio), medianOrNil(a.tpotRatio)
		s.Sources = append(s.Sources, a.sum)
	}
	sort.Slice(s.Sources, func(i, j int) bool { return s.Sources[i].Source < s.Sources[j].Source })
	s.Speculative = []SourceSummary{}
	for _, a := range spec {
		a.sum.TTFTMAPEPct, a.sum.TPOTMAPEPct, a.sum.TTFTMedianAPEPct, a.sum.TPOTMedianAPEPct = apeStats(a.ttft, a.tpot)
		a.sum.TTFTMedianRatio, a.sum.TPOTMedianRatio = medianOrNil(a.ttftRatio), medianOrNil(a.tpotRatio)
		s.Speculative = append(s.Speculative, a.sum)
	}
	sort.Slice(s.Speculative, func(i, j int) bool { return s.Speculative[i].Source < s.Speculative[j].Source })
	keys := make([]key, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.model != b.model {
			return a.model < b.model
		}
		if a.system != b.system {
			return a.system < b.system
		}
		return a.backend < b.backend
	})
	s.Groups = []Group{}
	for _, k := range keys {
		var a, b, ra, rb []float64
		for _, i := range groups[k] {
			a = append(a, rows[i].TTFTAPEPct)
			b = append(b, rows[i].TPOTAPEPct)
			rt, rp := predictedOverMeasured(rows[i])
			ra, rb = append(ra, rt), append(rb, rp)
		}
		g := Group{Model: k.model, System: k.system, Backend: k.backend, Rows: len(a)}
		g.TTFTMAPEPct, g.TTFTMedianAPEPct = stats(a)
		g.TPOTMAPEPct, g.TPOTMedianAPEPct = stats(b)
		_, g.TTFTMedianRatio = stats(ra)
		_, g.TPOTMedianRatio = stats(rb)
		s.Groups = append(s.Groups, g)
	}
	s.Notes = noteCounts(rows)
	s.LargestTTFTErrors = largest(rows, worst, "ttft", func(r *RowResult) float64 { return r.TTFTAPEPct })
	s.LargestTPOTErrors = largest(rows, worst, "tpot", func(r *RowResult) float64 { return r.TPOTAPEPct })
	return s
}

// noteCounts counts the simulated rows per note kind (a row counts once per kind), most
// frequent first, equal counts by note.
func noteCounts(rows []RowResult) []NoteCount {
	counts := map[string]int{}
	for _, r := range rows {
		if r.Skipped {
			continue
		}
		seen := map[string]bool{}
		for _, n := range r.Notes {
			k, _, _ := strings.Cut(n, ":")
			if !seen[k] {
				seen[k] = true
				counts[k]++
			}
		}
	}
	out := make([]NoteCount, 0, len(counts))
	for k, n := range counts {
		out = append(out, NoteCount{Note: k, Rows: n})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Rows != out[j].Rows {
			return out[i].Rows > out[j].Rows
		}
		return out[i].Note < out[j].Note
	})
	return out
}

// largest lists the n simulated rows with the largest metric, largest first (ties by line).
func largest(rows []RowResult, n int, metric string, f func(*RowResult) float64) []Worst {
	var w []Worst
	for i := range rows {
		if !rows[i].Skipped {
			w = append(w, Worst{Line: rows[i].Line, ID: rows[i].ID, Metric: metric, APEPct: f(&rows[i])})
		}
	}
	sort.SliceStable(w, func(i, j int) bool {
		if w[i].APEPct != w[j].APEPct {
			return w[i].APEPct > w[j].APEPct
		}
		return w[i].Line < w[j].Line
	})
	if len(w) > n {
		w = w[:n]
	}
	if w == nil {
		w = []Worst{}
	}
	return w
}

// SkippedReasons counts skipped rows per reason as "N × reason (lines L1, L2, …)", most
// frequent first (equal counts by reason), naming the first maxLinesListed CSV lines of each;
// for a short listing.
func (r *Report) SkippedReasons() []string {
	counts, lines := map[string]int{}, map[string][]int{}
	for _, row := range r.Rows {
		if row.Skipped {
			counts[row.Reason]++
			lines[row.Reason] = append(lines[row.Reason], row.Line)
		}
	}
	reasons := make([]string, 0, len(counts))
	for reason := range counts {
		reasons = append(reasons, reason)
	}
	sort.Slice(reasons, func(i, j int) bool {
		a, b := reasons[i], reasons[j]
		if counts[a] != counts[b] {
			return counts[a] > counts[b]
		}
		return a < b
	})
	out := make([]string, len(reasons))
	for i, reason := range reasons {
		out[i] = fmt.Sprintf("%d × %s (%s)", counts[reason], reason, lineList(lines[reason]))
	}
	return out
}

// maxLinesListed is how many CSV lines a skip reason names (SkippedReasons).
const maxLinesListed = 5

// lineList names CSV lines: "line 4", "lines 4, 9", or the first maxLinesListed and how many more.
func lineList(lines []int) string {
	if len(lines) == 1 {
		return fmt.Sprintf("line %d", lines[0])
	}
	var parts []string
	for _, l := range lines[:min(len(lines), maxLinesListed)] {
		parts = append(parts, fmt.Sprint(l))
	}
	s := "lines " + strings.Join(parts, ", ")
	if n := len(lines) - maxLinesListed; n > 0 {
		s += fmt.Sprintf(" and %d more", n)
	}
	return s
}

// maxReasonsInError is how many skip reasons CheckSimulated names.
const maxReasonsInError = 3

// CheckSimulated returns nil when at least one row was simulated. Otherwise there is no accuracy
// to report, and the error says so with the number of rows and the most frequent skip reasons
// with their counts (SkippedReasons, at most 3 of them, one per indented line).
func (r *Report) CheckSimulated() error {
	if r.Summary.RowsSimulated > 0 {
		return nil
	}
	if len(r.Rows) == 0 {
		return fmt.Errorf("no row could be simulated: there is no row")
	}
	reasons := r.SkippedReasons()
	var b strings.Builder
	fmt.Fprintf(&b, "no row could be simulated: all %d rows were skipped; by reason, most frequent first:", len(r.Rows))
	for i, reason := range reasons {
		if i == maxReasonsInError {
			more := len(reasons) - maxReasonsInError
			fmt.Fprintf(&b, "\n  ... and %d more %s", more, map[bool]string{true: "reason", false: "reasons"}[more == 1])
			break
		}
		b.WriteString("\n  " + reason)
	}
	return errors.New(b.String())
}

// String renders a one-line accuracy summary of the headline rows: which rows they are, the
// MAPEs and median APEs (N/A when no row was simulated), the simulated and skipped row counts,
// and the decision quality when an SLA was scored.
func (s Summary) String() string {
	pct := func(x *float64) string {
		if x == nil {
			return "N/A"
		}
		return fmt.Sprintf("%.1f%%", *x)
	}
	rows := fmt.Sprintf("%d rows simulated", s.RowsSimulated)
	if s.RowsSimulated == 1 {
		rows = "1 row simulated"
	}
	head := ""
	if s.Headline != "" {
		head = s.Headline + ": "
	}
	if s.TTFTMAPEPct == nil || s.TPOTMAPEPct == nil {
		return fmt.Sprintf("%sTTFT MAPE N/A, TPOT MAPE N/A, %s, %d skipped", head, rows, s.RowsSkipped)
	}
	ratio := func(x *float64) string {
		if x == nil {
			return ""
		}
		return fmt.Sprintf(", predicted ÷ measured %.2f", *x)
	}
	out := fmt.Sprintf("%sTTFT MAPE %s (median APE %s%s), TPOT MAPE %s (median APE %s%s), %s, %d skipped",
		head, pct(s.TTFTMAPEPct), pct(s.TTFTMedianAPEPct), ratio(s.TTFTMedianRatio), pct(s.TPOTMAPEPct), pct(s.TPOTMedianAPEPct),
		ratio(s.TPOTMedianRatio), rows, s.RowsSkipped)
	if s.Decision.SLAs > 0 {
		out += "; " + s.Decision.String()
	}
	return out
}

// parallelismPath matches a worker role's parallelism field in a config error.
var parallelismPath = regexp.MustCompile(`engine\.workers\.(aggregated|prefill|decode)\.parallelism\.(replicas|tensor|pipeline|attention_data|moe_tensor|moe_expert)\b`)

// lengthPath matches the request lengths and the context limit a row's isl and osl set.
var lengthPath = regexp.MustCompile(`traffic\.source\.(input|output)_tokens\b|engine\.context_length\b`)

// capacityPath matches a worker role's derived KV capacity in a config error (the weights do not
// fit on the role's GPUs, or leave no room for KV).
var capacityPath = regexp.MustCompile(`engine\.workers\.(aggregated|prefill|decode)\.kv_cache\.capacity( \(default\))?`)

// csvColumns names, in a skip reason, the measured CSV's column for the request lengths (isl,
// osl) and every worker parallelism field of the simulated config (engine.workers.decode.parallelism.tensor becomes
// decode_tp_size, engine.workers.aggregated.parallelism.moe_expert becomes moe_ep_size), and for
// a role's KV capacity the columns of its GPUs (engine.workers.prefill.kv_cache.capacity becomes
// "prefill_tp_size × prefill_pp_size (KV capacity)"), so a reason points at the cells to look at.
func csvColumns(reason string) string {
	reason = lengthPath.ReplaceAllStringFunc(reason, func(path string) string {
		return map[string]string{"traffic.source.input_tokens": "isl", "traffic.source.output_tokens": "osl",
			"engine.context_length": "isl + osl (context length)"}[path]
	})
	reason = capacityPath.ReplaceAllStringFunc(reason, func(path string) string {
		prefix := ""
		if m := capacityPath.FindStringSubmatch(path); m[1] != "aggregated" {
			prefix = m[1] + "_"
		}
		return prefix + "tp_size × " + prefix + "pp_size (KV capacity)"
	})
	return parallelismPath.ReplaceAllStringFunc(reason, func(path string) string {
		m := parallelismPath.FindStringSubmatch(path)
		prefix := ""
		if m[1] != "aggregated" {
			prefix = m[1] + "_"
		}
		col := map[string]string{"replicas": "num_workers", "tensor": "tp_size", "pipeline": "pp_size",
			"attention_data": "attention_dp_size", "moe_tensor": "moe_tp_size", "moe_expert": "moe_ep_size"}[m[2]]
		return prefix + col
	})
}
