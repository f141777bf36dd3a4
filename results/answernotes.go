package results

import (
	"fmt"
	"github.com/servesweep/servesweep/sim/config"
	"math"
	"strings"

	"github.com/servesweep/servesweep/sim/optimization"
	"github.com/servesweep/servesweep/sim/timing"
)

// maxNamedUnfinished is how many timed-out or failed points UnfinishedText names by ID and
// deployment; pareto.json lists up to MaxTiedPointIDs of each.
const maxNamedUnfinished = 3

// Unfinished holds the points of an analysis that have no result to compare yet could have been
// candidates: timed-out and failed rows (not twins, whose point stands for them) within the
// analysis' GPU bounds, in row order, as indexes into the rows. The answer (front, best points,
// ranking) is of the finished points only; any of these could change it once it runs.
type Unfinished struct {
	// TimedOut ran out of host time (--timeout, optimizer.candidate_timeout_seconds): a resumed
	// sweep simulates them again. Failed returned an error or panicked: a resumed sweep keeps
	// them, and each one's reason says why.
	TimedOut, Failed []int
}

// Len is the number of unfinished points, timed out and failed.
func (u Unfinished) Len() int { return len(u.TimedOut) + len(u.Failed) }

// UnfinishedOf returns the timed-out and failed rows of rows that a's settings would have let
// compete: neither a twin (EquivalentTo) nor outside a.Settings' GPU budget (GPUBudgetExclusion),
// which a row knows without a result.
func UnfinishedOf(rows []Row, a *Analysis) Unfinished {
	var u Unfinished
	s := a.Settings
	for i := range rows {
		r := &rows[i]
		if GPUBudgetExclusion(r, s) != "" {
			continue
		}
		switch exclusion(r, s, false) {
		case ExcludedTimedOut:
			u.TimedOut = append(u.TimedOut, i)
		case ExcludedFailed:
			u.Failed = append(u.Failed, i)
		}
	}
	return u
}

// UnfinishedText is the warning printed beside the answer (stdout after "PARTIAL: ", report.md,
// report.html) when points that could change it have no result (UnfinishedOf): how many timed out
// and failed, the first maxNamedUnfinished of each by ID and deployment (a failed one with its
// reason), that the answer covers only the finished points and could change, and what to do: rerun
// the sweep into the same --output-dir with a longer --timeout (timed-out points are simulated
// again on resume), and read a failed point's reason (a resume keeps it failed). md writes IDs as
// code spans. "" when every such point finished.
func UnfinishedText(rows []Row, a *Analysis, labels Labels, md bool) string {
	u := UnfinishedOf(rows, a)
	if u.Len() == 0 {
		return ""
	}
	name := func(list []int, reason bool) string {
		var names []string
		for _, i := range list[:min(len(list), maxNamedUnfinished)] {
			r := &rows[i]
			n := fmt.Sprintf("%s (%s, %s %s %s %s", idText(r.PointID, md), Plural(int(r.GPUs), "GPU"), labels.Hardware(r), r.Mode,
				labels.Shape(r), r.RouterPolicy)
			if reason && r.Reason != "" {
				n += ": " + r.Reason
			}
			names = append(names, n+")")
		}
		if more := len(list) - maxNamedUnfinished; more > 0 {
			names = append(names, fmt.Sprintf("%d more", more))
		}
		return strings.Join(names, ", ")
	}
	var what, todo []string
	if n := len(u.TimedOut); n > 0 {
		what = append(what, fmt.Sprintf("%s timed out: %s", Plural(n, "point"), name(u.TimedOut, false)))
		todo = append(todo, "rerun the sweep's command (the same --output-dir) with a longer --timeout: timed-out points are "+
			"simulated again on resume, the finished ones kept")
	}
	if n := len(u.Failed); n > 0 {
		what = append(what, fmt.Sprintf("%s failed: %s", Plural(n, "point"), name(u.Failed, true)))
		todo = append(todo, "a failed point stays failed on resume: its reason says what to change")
	}
	n := CountStatuses(rows)
	they := "they run"
	if u.Len() == 1 {
		they = "it runs"
	}
	finished := len(rows) - n.Failed - n.TimedOut
	of := fmt.Sprintf("The answer below is of the %s that finished only, and could change once %s", Plural(finished, "point"), they)
	if finished == 0 {
		of = "No point finished, so there is no answer yet"
	}
	return fmt.Sprintf("%s. %s: %s.", strings.Join(what, "; "), of, strings.Join(todo, "; "))
}

// MinAnswerRequests is the fewest completed requests an answer point's metrics should rest on
// (completed_requests, those of its steady window when it has one): below it a percentile is one
// of a handful of requests and a mean moves with any one of them (a user trial, 2026-12-06: an
// open loop with an explicit warmup_seconds of 15 s in a 20 s run ranked first on 3 requests).
// ThinText names answer points under it.
const MinAnswerRequests = 30

// ThinText is the warning printed beside the answer (stdout, report.md, report.html) naming its
// points (AnswerRows, numbered as the answer is) whose metrics rest on fewer than
// MinAnswerRequests completed requests, with what to change; "" when none does.
func ThinText(rows []Row, a *Analysis, md bool) string {
	var thin []string
	for n, i := range AnswerRows(a) {
		if c := rows[i].CompletedRequests; c != nil && *c > 0 && *c < MinAnswerRequests {
			thin = append(thin, fmt.Sprintf("#%d %s (%d)", n+1, idText(rows[i].PointID, md), *c))
		}
	}
	if len(thin) == 0 {
		return ""
	}
	return fmt.Sprintf("Few requests measured: %s of the answer rest%s on fewer than %d completed requests (completed_requests: %s): "+
		"their percentiles are one of a handful of requests and their ranking can move with any of them; lengthen traffic.stop "+
		"(or shorten traffic.load.warmup_seconds) and sweep again.", Plural(len(thin), "point"), agree(len(thin), "s", ""),
		MinAnswerRequests, strings.Join(thin, ", "))
}

// UnjudgedText is the warning printed beside the answer (stdout, report.md, report.html) naming
// its points (AnswerRows, numbered as the answer is) that ran an open loop (constant_rate or
// poisson) without a capacity search and whose measured window was too short, or too early, to
// judge whether the deployment keeps up with the offered rate (window_arrived_requests null:
// sim.RunBacklogAfterFill judged nothing), with what to change; "" when none did. Such a point's
// throughput and latencies may be those of a deployment falling behind (a user trial,
// 2026-12-07: an autoscaled point under a fixed count of 3,000 requests ranked first on a 6 s
// window, serving 53 of the 60 requests/s offered, its p99 TTFT 18 s).
func UnjudgedText(rows []Row, a *Analysis, md bool) string {
	var unjudged []string
	for n, i := range AnswerRows(a) {
		r := &rows[i]
		open := r.LoadType == config.LoadConstantRate || r.LoadType == config.LoadPoisson
		if open && r.CapacityLoad == nil && r.WindowArrivedRequests == nil {
			unjudged = append(unjudged, fmt.Sprintf("#%d %s", n+1, idText(r.PointID, md)))
		}
	}
	if len(unjudged) == 0 {
		return ""
	}
	return fmt.Sprintf("Not judged for overload: the answer's %s (%s): each ran an open loop whose measured window was too short "+
		"to tell whether the deployment keeps up with the offered rate (window_arrived_requests null), so its throughput and "+
		"latencies may be those of a deployment falling behind. Lengthen traffic.stop (a per-load-unit stop is lengthened where "+
		"short) and sweep again.", Plural(len(unjudged), "point"), strings.Join(unjudged, ", "))
}

// MultiNodeText is the warning printed beside the answer (stdout, report.md, report.html) naming
// its points (AnswerRows, numbered as the answer is) with a worker of more GPUs than one link
// domain of its GPU holds (timing.Hardware.WorkerSpansLinkDomain: more than 8 H100s, more than 72
// GB200s), with the role and size; "" when none has one. The roofline prices such a worker's
// collectives between nodes optimistically (the predict note says which; timing.MultiNodeBias
// gives the bias measured), so such a point can rank above a shape within one link domain that
// measures faster.
func MultiNodeText(rows []Row, a *Analysis, md bool) string {
	var wide []string
	for n, i := range AnswerRows(a) {
		if roles := multiNodeRoles(&rows[i]); roles != "" {
			wide = append(wide, fmt.Sprintf("#%d %s (%s)", n+1, idText(rows[i].PointID, md), roles))
		}
	}
	if len(wide) == 0 {
		return ""
	}
	return fmt.Sprintf("Across nodes: the answer's %s (%s) run%s workers wider than one NVLink domain, whose collectives between "+
		"nodes the timing prices optimistically (%s): benchmark such a point before preferring it to a shape within one NVLink domain.",
		Plural(len(wide), "point"), strings.Join(wide, ", "), agree(len(wide), "s", ""), timing.MultiNodeBias)
}

// multiNodeRoles names the roles of r whose worker spans more than one link domain of its GPU,
// with their GPUs per worker ("decode 16 × h100_sxm"); "" when none does, or the GPU is not in
// the catalog.
func multiNodeRoles(r *Row) string {
	var out []string
	for _, role := range []struct {
		name                   string
		tensor, pipeline, data *int64
		hardware               *string
	}{
		{"aggregated", r.AggTensor, r.AggPipeline, r.AggAttentionData, r.AggHardware},
		{"prefill", r.PrefillTensor, r.PrefillPipeline, r.PrefillAttentionData, r.PrefillHardware},
		{"decode", r.DecodeTensor, r.DecodePipeline, r.DecodeAttentionData, r.DecodeHardware},
	} {
		if role.tensor == nil || role.pipeline == nil || role.data == nil {
			continue
		}
		id := r.Hardware
		if role.hardware != nil && *role.hardware != "" {
			id = *role.hardware
		}
		hw, err := timing.LookupHardware(id)
		gpus := config.Parallelism{Tensor: int(*role.tensor), Pipeline: int(*role.pipeline), AttentionData: int(*role.data)}.GPUsPerWorker()
		if err == nil && hw.WorkerSpansLinkDomain(gpus) {
			out = append(out, fmt.Sprintf("%s %d × %s", role.name, gpus, hw.ID))
		}
	}
	return strings.Join(out, ", ")
}

// maxAttainmentListed is how many answer points AttainmentText lists with their attainment; the
// lowest over the rest is given after them.
const maxAttainmentListed = 10

// AnswerRows are the rows of a's answer, as the recommendations number them: the Pareto front
// for target pareto, else the best maxScalarRecommends of the ranking.
func AnswerRows(a *Analysis) []int {
	if a.Ranking != nil {
		return a.Ranking[:min(len(a.Ranking), maxScalarRecommends)]
	}
	return a.Front
}

// perRequestBounds names the per-request bounds of the first row of rows that records an SLA
// ("ttft_ms 100 and itl_ms 5"); "" when no row has one.
func perRequestBounds(rows []Row) string {
	for i := range rows {
		r := &rows[i]
		var b []string
		for _, x := range []struct {
			key string
			ms  *float64
		}{{"ttft_ms", r.SLATTFTMs}, {"itl_ms", r.SLAITLMs}, {"e2e_ms", r.SLAE2EMs}} {
			if x.ms != nil {
				b = append(b, x.key+" "+ms(*x.ms))
			}
		}
		if len(b) > 0 {
			return strings.Join(b, ", ")
		}
	}
	return ""
}

// AttainmentText states, for an answer that no capacity search held to the per-request bounds of
// evaluation.sla (m records none and no row was searched), the SLA attainment of each answer
// point (AnswerRows, numbered as the answer is; the first maxAttainmentListed, then the lowest of
// the rest): the share of its offered requests that met every bound, sla_attainment. When one is
// under optimization.DefaultAttainment it says so, and that the answer may then miss the SLA,
// and names the settings that enforce it that a's settings do not use: optimization.capacity_search,
// optimization.strict_sla (which holds the means only; said when it is on), optimization.target
// goodput, and a percentile bound of evaluation.sla. md writes keys as code spans. "" when the
// rows have no per-request bound, a capacity search ran, or the answer is empty.
func AttainmentText(rows []Row, a *Analysis, m *Manifest, md bool) string {
	bounds := perRequestBounds(rows)
	answer := AnswerRows(a)
	if bounds == "" || len(answer) == 0 || (m != nil && m.CapacitySearch != nil) {
		return ""
	}
	for i := range rows {
		if rows[i].CapacityProbes != nil {
			return ""
		}
	}
	code := func(s string) string { return idText(s, md) }
	value := func(i int) (float64, string) {
		if x := rows[i].SLAAttainment; x != nil {
			return *x, FixedNum(*x)
		}
		return math.NaN(), "n/a" // no offered request: nothing met the SLA
	}
	var list []string
	low, lowest := 0, math.Inf(1)
	for n, i := range answer {
		x, text := value(i)
		if !(x >= optimization.DefaultAttainment) {
			low++
		}
		if n < maxAttainmentListed {
			list = append(list, fmt.Sprintf("#%d %s", n+1, text))
		} else if x < lowest || math.IsNaN(x) {
			lowest = x
		}
	}
	if len(answer) > maxAttainmentListed {
		list = append(list, fmt.Sprintf("the lowest of the other %d %s", len(answer)-maxAttainmentListed, FixedNum(lowest)))
	}
	text := fmt.Sprintf("SLA attainment of the answer (%s: the share of each point's offered requests within %s): %s.",
		code("sla_attainment"), bounds, strings.Join(list, ", "))
	if low == 0 {
		return text
	}
	s := a.Settings
	strict := s.StrictSLA || s.Target == optimization.TargetMinGPUs
	held := "nothing holds each request to these bounds here (no capacity search)"
	if strict {
		held = code("optimization.strict_sla") + " holds only the mean TTFT, mean TPOT and mean E2E latency within them, not each request"
	}
	ways := []string{code("optimization.capacity_search") + " (each deployment at the largest load where at least " +
		percent(optimization.DefaultAttainment) + " of requests meet them)"}
	if !strict {
		ways = append(ways, code("optimization.strict_sla: true")+" (drops points whose mean TTFT, mean TPOT or mean E2E latency breaks them)")
	}
	if s.Target != optimization.TargetGoodput && s.Target != optimization.TargetGoodputPerGPU {
		goodput := optimization.TargetGoodput
		if s.Target == optimization.TargetThroughputPerGPU {
			goodput = optimization.TargetGoodputPerGPU
		}
		ways = append(ways, code("optimization.target: "+goodput)+" (ranks by the throughput of the requests that meet them)")
	}
	ways = append(ways, "a percentile bound such as "+code("evaluation.sla.p99_ttft_ms")+" (a run that misses it is infeasible)")
	verb := "are"
	if low == 1 {
		verb = "is"
	}
	return text + fmt.Sprintf(" %d of %d %s under %g: %s, so the answer can be a deployment whose requests miss the SLA. To enforce it, use %s.",
		low, len(answer), verb, optimization.DefaultAttainment, held, orList(ways))
}

// orList joins items as "a, b or c".
func orList(items []string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " or " + items[len(items)-1]
}
