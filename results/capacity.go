package results

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/parquet-go/parquet-go"

	"github.com/servesweep/servesweep/sim/metrics"
)

// StatusInfeasible marks a point that misses the SLA: under a capacity search, one that missed
// the attainment or a percentile bound of evaluation.sla already at the search's min load (its
// metrics are those measured at min); with or without one, a point whose run missed a percentile
// bound at its load. Its reason starts with ExcludedSLA (sla_constraint) or, when rejections
// alone make a search miss its attainment, DegradedReason (rejected_requests), and it is never a
// candidate. Its journal record is ok; the status is derived when the row is built.
const StatusInfeasible = "infeasible"

// ProbesFile is the name of the capacity search's probe table inside an output directory.
const ProbesFile = "probes.parquet"

// ProbesDir holds the probe tables of a sharded sweep's shards (ProbesPartName), beside
// PartsDir, which must hold nothing but parts of results.parquet.
const ProbesDir = "probes"

// ProbesPartName is the file name of the probes of shard index of count inside ProbesDir, e.g.
// probes-00002-of-00004.parquet.
func ProbesPartName(index, count int) string {
	return fmt.Sprintf("probes-%05d-of-%05d.parquet", index, count)
}

var probesPartName = regexp.MustCompile(`^probes-\d+-of-\d+\.parquet$`)

// AttachProbes reads the shards' probe tables under dir (ProbesDir files at any depth, hidden
// ones skipped, in path order) and sets the Probes of each row that is not a twin (equivalent_to
// null) from the first table holding its point. It returns the IDs of the rows, in row order,
// whose capacity_probes no table supplied in full (a lost or deleted probe table). An
// unreadable table is a *PartError.
func AttachProbes(dir string, rows []Row) (missing []string, err error) {
	var paths []string
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if path != dir && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.IsDir() && probesPartName.MatchString(d.Name()) {
			paths = append(paths, path)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(paths)
	byPoint := map[string][]ProbeRow{}
	for _, p := range paths {
		probes, err := ReadProbes(p)
		if err != nil {
			return nil, err
		}
		seen := map[string]bool{}
		for _, pr := range probes {
			if _, done := byPoint[pr.PointID]; done && !seen[pr.PointID] {
				continue // an earlier table holds this point
			}
			seen[pr.PointID] = true
			byPoint[pr.PointID] = append(byPoint[pr.PointID], pr)
		}
	}
	for i := range rows {
		r := &rows[i]
		if r.EquivalentTo != "" {
			continue
		}
		r.Probes = byPoint[r.PointID]
		if r.CapacityProbes != nil && int64(len(r.Probes)) != *r.CapacityProbes {
			missing = append(missing, r.PointID)
		}
	}
	return missing, nil
}

// CheckRows refuses rows an analysis cannot trust, as read back from a results file: a point ID
// given twice (its point would count twice among the candidates), a capacity_load that is not
// a finite number > 0, or a capacity probe whose load is not one or whose load_unit differs from
// its row's capacity_load_unit. The error names the point.
func CheckRows(rows []Row) error {
	seen := make(map[string]bool, len(rows))
	for i := range rows {
		r := &rows[i]
		if seen[r.PointID] {
			return fmt.Errorf("point %s appears twice (rows for one point_id: a file edited or concatenated by hand?)", r.PointID)
		}
		seen[r.PointID] = true
		if c := r.CapacityLoad; c != nil && !(isFinite(*c) && *c > 0) {
			return fmt.Errorf("point %s: capacity_load %g is not a finite load > 0", r.PointID, *c)
		}
		for _, p := range r.Probes {
			if !(isFinite(p.Load) && p.Load > 0) {
				return fmt.Errorf("point %s: probe %d's load %g is not a finite load > 0", r.PointID, p.ProbeIndex, p.Load)
			}
			if u := r.CapacityLoadUnit; u != nil && p.LoadUnit != *u {
				return fmt.Errorf("point %s: probe %d's load_unit %q is not its capacity's %q", r.PointID, p.ProbeIndex, p.LoadUnit, *u)
			}
		}
	}
	return nil
}

// MissingProbes returns the IDs of the rows (in row order) that are not twins and whose
// capacity_probes the attached Probes do not match: their probes table lost them (or holds
// others), and what reads the probes (KnifeEdge, MetAbove, CapacityBracket) sees less than the
// search ran.
func MissingProbes(rows []Row) []string {
	var out []string
	for i := range rows {
		r := &rows[i]
		if r.EquivalentTo == "" && r.CapacityProbes != nil && int64(len(r.Probes)) != *r.CapacityProbes {
			out = append(out, r.PointID)
		}
	}
	return out
}

// AttachProbeTable sets the Probes of each row of rows that is not a twin (equivalent_to null)
// from the probes table at path (a sweep's probes.parquet), so that what reads them
// (MetAbove) sees a sweep read back as it saw the sweep run. A missing file attaches nothing
// (a sweep without a capacity search writes none); an unreadable one is the error.
func AttachProbeTable(path string, rows []Row) error {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	probes, err := ReadProbes(path)
	if err != nil {
		return err
	}
	byPoint := map[string][]ProbeRow{}
	for _, pr := range probes {
		byPoint[pr.PointID] = append(byPoint[pr.PointID], pr)
	}
	for i := range rows {
		if rows[i].EquivalentTo == "" {
			rows[i].Probes = byPoint[rows[i].PointID]
		}
	}
	return nil
}

// Capacity is what a capacity search found for one point, as the journal stores it.
type Capacity struct {
	// Feasible is false when attainment was missed at the search's min load.
	Feasible bool `json:"feasible"`
	// Load is the capacity (the largest load probed that met the target attainment; the min
	// load when infeasible), in the unit Unit names.
	Load float64 `json:"load"`
	Unit string  `json:"unit"`
	// Target is the attainment the search asked for; Attainment is the one measured at Load.
	Target     float64 `json:"target"`
	Attainment float64 `json:"attainment"`
	// Bounded is set when the SLA still held at the search's max (Load = max), or at the largest
	// load measured below one the trace could not hold (TraceBound): the capacity is a lower bound.
	Bounded bool `json:"bounded"`
	// TraceBound, when set, says why the search could not go above Load: the least load above it
	// was one a closed loop over the trace could not hold at all (its sessions all started before a
	// steady state; more sessions would measure it), e.g. "at concurrency 31 the run measured no
	// steady state: …".
	TraceBound string `json:"trace_bound,omitempty"`
	// Unclosed is set when the search stopped at max_probes before the bracket met the tolerance;
	// Upper is then the least load probed that missed (0 when none did).
	Unclosed bool    `json:"unclosed,omitempty"`
	Upper    float64 `json:"upper,omitempty"`
	// Probes are the simulations the search ran, in order.
	Probes []Probe `json:"probes"`
	// Stopped is set on the record of a point whose search failed or timed out: it found no
	// capacity (the other fields are zero), and Probes are those that ran before it stopped,
	// kept for probes.parquet because they explain the failure.
	Stopped bool `json:"stopped,omitempty"`
}

// binding is the SLA term that limits the capacity: the one that broke at the least load above
// it that missed (Probe.Binding), or at the search's min for an infeasible point; "" when no
// probe missed there (a bounded search, or one stopped at max_probes before any miss: the
// search's limits, not an SLA term, ended it) or the probes do not say.
func (c *Capacity) binding() string {
	if !c.Feasible {
		if p := c.At(c.Load); p != nil {
			return p.Binding
		}
		return ""
	}
	var miss *Probe
	for i := range c.Probes {
		if p := &c.Probes[i]; !p.Meets && p.Load > c.Load && (miss == nil || p.Load < miss.Load) {
			miss = p
		}
	}
	if miss != nil {
		return miss.Binding
	}
	return ""
}

// At returns the last probe at load x (the one whose metrics a row at that load carries), nil
// when none was.
func (c *Capacity) At(x float64) *Probe {
	for i := len(c.Probes) - 1; i >= 0; i-- {
		if c.Probes[i].Load == x {
			return &c.Probes[i]
		}
	}
	return nil
}

// Probe is one simulation of a capacity search.
type Probe struct {
	// Load is the intensity probed; Attainment the SLA attainment measured; Meets whether it
	// reached the target and every percentile bound held; Headroom the SLA headroom (metrics.SLAHeadroom; +Inf is stored as -1,
	// unknown as 0).
	Load       float64 `json:"load"`
	Attainment float64 `json:"attainment"`
	Meets      bool    `json:"meets"`
	Headroom   float64 `json:"headroom"`
	// TermsMet is whether every percentile bound of evaluation.sla held at the probe (nil
	// without a percentile bound); Meets requires it.
	TermsMet *bool `json:"terms_met,omitempty"`
	// Binding is the SLA term closest to breaking at the probe, or furthest past it
	// (metrics.SLABinding: ttft_ms, itl_ms, e2e_ms, a percentile key such as p99_itl_ms, or
	// completion); "" in a journal of an earlier servesweep.
	Binding string `json:"binding,omitempty"`
	// Unmeasured says why the probe's run measured no steady state ("measured no steady state:
	// the trace's 90 sessions all started within 70.3 s, ..." or most requests still in flight
	// at the window's end); Meets is false then and no term binds. "" when measured (and in a
	// journal of an earlier servesweep).
	Unmeasured string `json:"unmeasured,omitempty"`
	// WallTimeMs is the host time of the probe, its pilot run included.
	WallTimeMs float64 `json:"wall_time_ms"`
	// RampSeconds and WarmupSeconds are the traffic.load.ramp_seconds and warmup_seconds the
	// probe ran under, the ones the search chose (sweep's searchCapacity: a concurrency probe's
	// first wave spread over one pilot-measured request lifetime, and a warm-up of two lifetimes
	// for concurrency and open-loop probes) or the point's config gave; nil when neither set
	// one (an open loop too short for a steady window, an omitted warm-up, a journal of an
	// earlier servesweep).
	RampSeconds   *float64 `json:"ramp_seconds,omitempty"`
	WarmupSeconds *float64 `json:"warmup_seconds,omitempty"`
	// PerLoadUnit is the per-load-unit stop (traffic.stop.requests_per_load_unit or
	// sessions_per_load_unit) of a probe whose run the search lengthened to reach a steady
	// state; nil when it ran the point's own.
	PerLoadUnit *float64 `json:"per_load_unit,omitempty"`
	// Cooldown is traffic.load.cooldown of the probe: its closed loop was measured up to its last
	// session start (the search sets it with the ramp it chooses).
	Cooldown bool `json:"cooldown,omitempty"`
	// Summary holds the probe's prediction.json values that probes.parquet keeps (ProbeRow).
	Summary map[string]float64 `json:"summary,omitempty"`
}

// ProbeSummaryKeys returns the summary keys a Probe keeps: the columns of ProbeRow that come
// from the simulation. The slice is new on every call.
func ProbeSummaryKeys() []string {
	return []string{"offered_requests", "completed_requests", "rejected_requests", "unfinished_requests", "censored_requests",
		"goodput_completed_requests", "mean_ttft_ms", "median_ttft_ms", "p99_ttft_ms", "mean_itl_ms", "median_itl_ms", "p99_itl_ms",
		"mean_tpot_ms", "request_throughput_rps", "output_throughput_tok_s", "goodput_request_throughput_rps", "duration_ms"}
}

// ProbeRow is one row of probes.parquet: one simulation of a capacity search. Latency in ms,
// throughput per virtual second; null where the probe has no such value.
type ProbeRow struct {
	// PointID is the point searched (results.parquet's point_id); ProbeIndex is the probe's
	// 0-based position in the search.
	PointID    string `parquet:"point_id"`
	ProbeIndex int64  `parquet:"probe_index"`
	// Load is the intensity probed, in the unit LoadUnit names.
	Load     float64 `parquet:"load"`
	LoadUnit string  `parquet:"load_unit"`
	// SLAAttainment is (goodput_completed_requests − the good ones cut short of their requested
	// output) / (offered_requests − censored_requests), as results' sla_attainment; MeetsSLA whether it reached
	// the search's attainment and every percentile bound held; SLAHeadroom the factor every SLA bound would need scaling by for
	// it to be reached exactly (< 1: margin; null when no scaling would do).
	SLAAttainment float64  `parquet:"sla_attainment"`
	MeetsSLA      bool     `parquet:"meets_sla"`
	SLAHeadroom   *float64 `parquet:"sla_headroom,optional"`
	// SLAPercentileTermsMet is whether every percentile bound of evaluation.sla held at the
	// probe (null without one, and left out of the probe's JSON then); meets_sla requires it.
	SLAPercentileTermsMet *bool `parquet:"sla_percentile_terms_met,optional" json:",omitempty"`
	// SLABindingTerm is Probe.Binding (null when unknown).
	SLABindingTerm *string `parquet:"sla_binding_term,optional" json:",omitempty"`
	// Unmeasured is Probe.Unmeasured: why the probe measured no steady state, so that its
	// meets_sla false is no SLA miss (null when measured).
	Unmeasured *string `parquet:"unmeasured,optional" json:",omitempty"`

	OfferedRequests             *int64   `parquet:"offered_requests,optional" summary:"offered_requests"`
	CompletedRequests           *int64   `parquet:"completed_requests,optional" summary:"completed_requests"`
	RejectedRequests            *int64   `parquet:"rejected_requests,optional" summary:"rejected_requests"`
	UnfinishedRequests          *int64   `parquet:"unfinished_requests,optional" summary:"unfinished_requests"`
	CensoredRequests            *int64   `parquet:"censored_requests,optional" summary:"censored_requests"`
	GoodputCompletedRequests    *int64   `parquet:"goodput_completed_requests,optional" summary:"goodput_completed_requests"`
	MeanTTFTMs                  *float64 `parquet:"mean_ttft_ms,optional" summary:"mean_ttft_ms"`
	MedianTTFTMs                *float64 `parquet:"median_ttft_ms,optional" summary:"median_ttft_ms"`
	P99TTFTMs                   *float64 `parquet:"p99_ttft_ms,optional" summary:"p99_ttft_ms"`
	MeanITLMs                   *float64 `parquet:"mean_itl_ms,optional" summary:"mean_itl_ms"`
	MedianITLMs                 *float64 `parquet:"median_itl_ms,optional" summary:"median_itl_ms"`
	P99ITLMs                    *float64 `parquet:"p99_itl_ms,optional" summary:"p99_itl_ms"`
	MeanTPOTMs                  *float64 `parquet:"mean_tpot_ms,optional" summary:"mean_tpot_ms"`
	RequestThroughputRPS        *float64 `parquet:"request_throughput_rps,optional" summary:"request_throughput_rps"`
	OutputThroughputTokS        *float64 `parquet:"output_throughput_tok_s,optional" summary:"output_throughput_tok_s"`
	GoodputRequestThroughputRPS *float64 `parquet:"goodput_request_throughput_rps,optional" summary:"goodput_request_throughput_rps"`
	DurationMs                  *float64 `parquet:"duration_ms,optional" summary:"duration_ms"`
	// RampSeconds and WarmupSeconds are the ramp and warm-up the probe ran under, in seconds
	// (Probe.RampSeconds); null when none was set.
	RampSeconds   *float64 `parquet:"ramp_seconds,optional"`
	WarmupSeconds *float64 `parquet:"warmup_seconds,optional"`
	// StopPerLoadUnit is the lengthened per-load-unit stop of the probe (Probe.PerLoadUnit);
	// null when it ran the point's own.
	StopPerLoadUnit *float64 `parquet:"stop_per_load_unit,optional"`
	// Cooldown is whether the probe left its closed loop's drain out (Probe.Cooldown).
	Cooldown bool `parquet:"cooldown"`
	// WallTimeMs is the host time of the probe (ms), its pilot run included.
	WallTimeMs float64 `parquet:"wall_time_ms"`
}

// ProbeRows returns the rows of probes.parquet for point pointID from its capacity search.
func ProbeRows(pointID string, c *Capacity) []ProbeRow {
	out := make([]ProbeRow, len(c.Probes))
	for i, p := range c.Probes {
		r := ProbeRow{PointID: pointID, ProbeIndex: int64(i), Load: p.Load, LoadUnit: c.Unit,
			SLAAttainment: p.Attainment, MeetsSLA: p.Meets, SLAPercentileTermsMet: p.TermsMet, WallTimeMs: p.WallTimeMs,
			RampSeconds: p.RampSeconds, WarmupSeconds: p.WarmupSeconds, StopPerLoadUnit: p.PerLoadUnit, Cooldown: p.Cooldown}
		if p.Binding != "" {
			r.SLABindingTerm = str(p.Binding)
		}
		if p.Unmeasured != "" {
			r.Unmeasured = str(p.Unmeasured)
		}
		if p.Headroom > 0 {
			r.SLAHeadroom = f64(p.Headroom)
		}
		fillTagged(&r, withoutTruncatedGoodput(p.Summary))
		out[i] = r
	}
	return out
}

// TraceBoundMark begins the reason of a row whose capacity search its trace bounded
// (Capacity.TraceBound): capacity_bounded is set, and the trace, not the search's max, is what
// to change to measure further.
const TraceBoundMark = "capacity_search: bounded by the trace"

// TraceBounded reports whether r's capacity search was bounded by its trace: its reason holds
// TraceBoundMark (a degraded row's keeps it after its own).
func TraceBounded(r *Row) bool { return strings.Contains(r.Reason, TraceBoundMark) }

// fillCapacity sets the capacity columns of r and keeps its probes for probes.parquet.
func fillCapacity(r *Row, c *Capacity) {
	r.CapacityLoadUnit = str(c.Unit)
	r.CapacityProbes = i64(len(c.Probes))
	r.CapacityBounded = boolp(c.Bounded)
	if c.Feasible {
		r.CapacityLoad = f64(c.Load)
	}
	r.Probes = ProbeRows(r.PointID, c)
	if b := c.binding(); b != "" {
		r.SLABindingTerm = str(b)
	}
	switch {
	case c.TraceBound != "" && c.Feasible:
		r.Reason = fmt.Sprintf("%s: the capacity is at least %s %g (the SLA held there), and %s", TraceBoundMark, c.Unit, c.Load, c.TraceBound)
	case c.Unclosed && c.Feasible && c.Upper > 0:
		r.Reason = fmt.Sprintf("capacity_search: stopped at max_probes (%d) with the capacity between %g and %g %s, "+
			"wider than relative_tolerance", len(c.Probes), c.Load, c.Upper, c.Unit)
	case c.Unclosed && c.Feasible:
		r.Reason = fmt.Sprintf("capacity_search: stopped at max_probes (%d) before any load missed the SLA: the capacity "+
			"is at least %g %s", len(c.Probes), c.Load, c.Unit)
	}
}

// Unmeasured reports whether row r measured no request: every one arrived within the run's
// warm-up (a capacity search's infeasible row says so in its reason, and NoFeasibleHint counts
// such rows apart from those that missed the SLA).
func Unmeasured(r *Row) bool {
	return deref(r.OfferedRequests) == 0 && deref(r.WarmupRequests) > 0 && r.WarmupSeconds != nil
}

// infeasibleReason is the reason of an infeasible row of a capacity search: sla_constraint with
// the attainment measured at min (and the percentile bounds of evaluation.sla that failed there,
// terms), or rejected_requests when the rejections alone keep attainment below the target.
func infeasibleReason(r *Row, c *Capacity, terms []metrics.TermResult) string {
	offered, rejected := deref(r.OfferedRequests), deref(r.RejectedRequests)
	if Unmeasured(r) {
		// The warm-up is the config's warmup_seconds or, when it gives none, the one the search
		// sets for a ramped closed loop (its ramp_seconds): say which could be the cause.
		fix := "shorten the warm-up or ramp, or lengthen the run (traffic.stop)"
		switch {
		case deref(r.StopSessions) > 0:
			// A fixed count ends sooner the faster the deployment: scaled with the load, the
			// search lengthens the run past the warm-up.
			fix = fmt.Sprintf("traffic.stop.sessions is a fixed %d: use traffic.stop.sessions_per_load_unit, whose runs are "+
				"lengthened past the warm-up", deref(r.StopSessions))
		case deref(r.StopRequests) > 0:
			fix = fmt.Sprintf("traffic.stop.requests is a fixed %d: use traffic.stop.requests_per_load_unit, whose runs are "+
				"lengthened past the warm-up", deref(r.StopRequests))
		}
		return fmt.Sprintf("%s: every one of the %d requests at the minimum load %g %s arrived within the probe's %.4g s warm-up "+
			"(traffic.load.warmup_seconds, or, when that is unset, the search's warm-up over traffic.load.ramp_seconds), so none "+
			"was measured and the deployment's capacity is unknown, not missed: %s",
			ExcludedSLA, deref(r.WarmupRequests), c.Load, c.Unit, *r.WarmupSeconds, fix)
	}
	if offered > 0 && float64(offered-rejected)/float64(offered) < c.Target {
		return fmt.Sprintf("%s: %d of %d offered requests rejected at the minimum load %g %s, more than attainment %g allows",
			DegradedReason, rejected, offered, c.Load, c.Unit, c.Target)
	}
	var msg string
	failed := metrics.DescribeFailed(terms)
	switch {
	case failed != "" && c.Attainment >= c.Target:
		msg = fmt.Sprintf("%s: percentile bound missed at the minimum load %g %s: %s (SLA attainment %.4g >= %g)",
			ExcludedSLA, c.Load, c.Unit, failed, c.Attainment, c.Target)
	case failed != "":
		msg = fmt.Sprintf("%s: SLA attainment %.4g < %g and percentile bound missed at the minimum load %g %s: %s",
			ExcludedSLA, c.Attainment, c.Target, c.Load, c.Unit, failed)
	default:
		msg = fmt.Sprintf("%s: SLA attainment %.4g < %g at the minimum load %g %s", ExcludedSLA, c.Attainment,
			c.Target, c.Load, c.Unit)
	}
	if u := deref(r.UnfinishedRequests); u > 0 {
		censored := ""
		if c := deref(r.CensoredRequests); c > 0 {
			censored = fmt.Sprintf(", %d of them still within every bound then and left out of the attainment;", c)
		}
		msg += fmt.Sprintf(" (%d of %d offered requests unfinished when the run stopped%s %d rejected)", u, offered,
			cmp.Or(censored, ","), rejected)
	}
	if n := deref(r.TruncatedRequests); n > 0 {
		msg += fmt.Sprintf(" (%d of %d completed requests stopped short of their requested output, which counts as missed)",
			n, deref(r.CompletedRequests))
	}
	return msg
}

// percentileReason is the reason of a row whose run missed a percentile bound of evaluation.sla
// at its load: sla_constraint, the failed bounds, and the rejections or truncations of a
// degraded row after them.
func percentileReason(r *Row, terms []metrics.TermResult) string {
	msg := fmt.Sprintf("%s: percentile bound missed: %s", ExcludedSLA, metrics.DescribeFailed(terms))
	if r.Status == StatusDegraded && r.Reason != "" {
		msg += " (also " + r.Reason + ")"
	}
	return msg
}

// WriteProbes writes every row's probes, in row order, to the Parquet file at path (atomically),
// or removes a stale file when no row has probes.
func WriteProbes(path string, rows []Row) error {
	var probes []ProbeRow
	for i := range rows {
		probes = append(probes, rows[i].Probes...)
	}
	if len(probes) == 0 {
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		return nil
	}
	return writeTable(path, probes)
}

// ReadProbes reads every row of the probes.parquet file at path.
func ReadProbes(path string) ([]ProbeRow, error) {
	rows, err := parquet.ReadFile[ProbeRow](path)
	if err != nil {
		return nil, &PartError{Path: path, Msg: "not a readable probes table: " + err.Error()}
	}
	return rows, nil
}
