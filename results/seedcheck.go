package results

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/servesweep/servesweep/sim/optimization"
)

// MaxSeedCheckPoints bounds how many points a seed check simulates again (SeedCheckPoints): the
// answer and its contenders take a few percent of a large sweep's simulations, not another sweep.
const MaxSeedCheckPoints = 32

// SeedNoise is the relative margin within which a candidate off the answer counts as able to
// displace it under other random draws, with or without a capacity search: 5 %, the built-in
// sweep's capacity tolerance and twice the 90th percentile of how far its capacities moved with
// the seed (2.5 %, docs/sweep.md).
const SeedNoise = 0.05

// Seed-check skip reasons (Manifest.SeedCheckSkipped).
const (
	SeedCheckDisabled    = "disabled"     // --seed-check=false
	SeedCheckInterrupted = "interrupted"  // the sweep, or the check, was interrupted
	SeedCheckSharded     = "sharded"      // a merge of a sharded sweep's parts (it simulates nothing)
	SeedCheckNoCandidate = "no_candidate" // no point passed the analysis' filters: no answer
	// SeedCheckOtherSettings marks a report (pareto.json) whose settings differ from the sweep's:
	// the sweep's check covers another answer.
	SeedCheckOtherSettings = "other_settings"
)

// SeedCheckPoints returns the rows (indexes into rows) a seed check simulates again under other
// seeds, in order: the answer — under target pareto every front row (the entries, then their
// exact ties), under a scalar target the best point and the rows tied with it — then the
// candidates that could displace it: those its capacity search left able to (UnsettledOf: near
// ties' best points and rivals, a scalar target's own near tie only; marginal entries' rivals;
// contenders), those within SeedNoise of it (closeToAnswer) and the infeasible points that missed
// only a percentile bound, narrowly, and would join the answer (nearMisses), each once, at most
// MaxSeedCheckPoints of them. answer counts the answer's points among them (the first ones) and
// omitted the points left out. Without candidates it returns none.
func SeedCheckPoints(rows []Row, a *Analysis, m *Manifest) (idx []int, answer, omitted int) {
	seen := map[int]bool{}
	add := func(i int) {
		if !seen[i] {
			seen[i] = true
			idx = append(idx, i)
		}
	}
	if a.Ranking != nil {
		for _, i := range scalarBest(rows, a) {
			add(i)
		}
	} else {
		// The entries first, so that a cap that binds spends the budget on distinct deployments
		// rather than on exact ties, which often differ only in a setting that does not bind.
		for _, i := range a.Front {
			add(i)
		}
		for _, i := range a.Front {
			for _, j := range a.Ties[i] {
				add(j)
			}
		}
	}
	answer = len(idx)
	u := UnsettledOf(rows, a, m)
	target, scalar := optimization.TargetObjective(a.Settings.Target)
	for _, t := range u.NearTies {
		if scalar && t.Objective.Metric != target.Metric {
			continue // a Pareto objective's best point cannot displace a scalar target's
		}
		add(t.Best)
		for _, j := range t.Rivals {
			add(j)
		}
	}
	for _, mg := range u.Marginal {
		add(mg.By)
	}
	for _, c := range u.Contenders {
		add(c)
	}
	for _, i := range closeToAnswer(rows, a) {
		add(i)
	}
	for _, i := range nearMisses(rows, a) {
		add(i)
	}
	if len(idx) > MaxSeedCheckPoints {
		return idx[:MaxSeedCheckPoints], min(answer, MaxSeedCheckPoints), len(idx) - MaxSeedCheckPoints
	}
	return idx, answer, 0
}

// NearMissBand is how far past its bound, as a share of it, a percentile term of evaluation.sla
// may have gone for its point to be simulated again by a seed check (nearMisses). A p99 over
// inter-token gaps rests on the few passes that stall every request of a batch at once: user
// trials, 2026-12-07, measured 97.9 and 119.6 ms against a 100 ms bound for the same deployment
// (concurrency 64, 640 requests) under two seeds, and the answer moved from it to concurrency 16
// at half its throughput; near saturation a poisson point at 30 requests/s moved from 131 to 97
// ms over about 2,800 requests.
const NearMissBand = 0.5

// nearMisses returns the rows a seed check simulates again because another draw could make them
// the answer: points without a capacity search, infeasible only because a percentile term of
// evaluation.sla failed (sla_percentile_terms_met false), each failed term within NearMissBand of
// its bound, and which would beat a scalar target's best point, or which no front entry
// dominates, on the analysis' objectives. In row order.
func nearMisses(rows []Row, a *Analysis) []int {
	var out []int
	target, _ := optimization.TargetObjective(a.Settings.Target)
	var best []int
	if a.Ranking != nil {
		best = scalarBest(rows, a)
	}
	for i := range rows {
		r := &rows[i]
		if r.Status != StatusInfeasible || r.CapacityProbes != nil || r.SLAPercentileTermsMet == nil || *r.SLAPercentileTermsMet ||
			r.SLAPercentileTermsFailed == nil || !narrowMiss(r) {
			continue
		}
		if a.Ranking != nil {
			if len(best) == 0 {
				out = append(out, i)
				continue
			}
			x, b := score(r, target), score(&rows[best[0]], target)
			if target.Direction == optimization.Maximize && x > b || target.Direction == optimization.Minimize && x < b {
				out = append(out, i)
			}
			continue
		}
		vals := make([]float64, len(a.Settings.Objectives))
		dirs := make([]optimization.Direction, len(a.Settings.Objectives))
		ok := true
		for k, o := range a.Settings.Objectives {
			x, present, _ := numericValue(r, o.Metric)
			if !present || math.IsNaN(x) || math.IsInf(x, 0) {
				ok = false
				break
			}
			vals[k], dirs[k] = atObjectiveDigits(x), o.Direction
		}
		if !ok || slices.ContainsFunc(a.Front, func(f int) bool { return dominates(a.compared[f], vals, dirs) }) {
			continue
		}
		out = append(out, i)
	}
	return out
}

// narrowMiss reports whether every percentile term r failed (sla_percentile_terms_failed) went
// past its bound (the sla_ column of the same key) by at most NearMissBand of it. A term's value is
// the row's column of its statistic (p50 is the median; e2e is e2e_latency).
func narrowMiss(r *Row) bool {
	for _, key := range strings.Split(*r.SLAPercentileTermsFailed, ",") {
		col := strings.Replace(strings.Replace(key, "p50_", "median_", 1), "_e2e_ms", "_e2e_latency_ms", 1)
		v, ok, _ := numericValue(r, col)
		b, okBound, _ := numericValue(r, "sla_"+key)
		if !ok || !okBound || b <= 0 || v > b*(1+NearMissBand) {
			return false
		}
	}
	return true
}

// scalarBest is a scalar ranking's first point and the points ranked equal to it (the same score
// at ObjectiveDigits), in ranking order; none without candidates.
func scalarBest(rows []Row, a *Analysis) []int {
	if len(a.Ranking) == 0 {
		return nil
	}
	o, _ := optimization.TargetObjective(a.Settings.Target)
	best := atObjectiveDigits(score(&rows[a.Ranking[0]], o))
	var out []int
	for _, i := range a.Ranking {
		if atObjectiveDigits(score(&rows[i], o)) != best {
			break
		}
		out = append(out, i)
	}
	return out
}

// closeToAnswer lists the candidates within SeedNoise of a's answer, least margin first: under
// target pareto the rows off the front that some front row dominates but none would were each of
// their objective values SeedNoise more favourable (a throughput × 1.05, a latency ÷ 1.05; an
// objective whose values are not both positive cannot be scaled and compares as measured), and
// under a scalar target the rows after the best (and its ties) whose score is within SeedNoise
// of the best's, in ranking order.
func closeToAnswer(rows []Row, a *Analysis) []int {
	if a.Ranking != nil {
		best := scalarBest(rows, a)
		if len(best) == 0 {
			return nil
		}
		o, _ := optimization.TargetObjective(a.Settings.Target)
		b := score(&rows[best[0]], o)
		var out []int
		for _, i := range a.Ranking[len(best):] {
			if f, ok := needed(o, score(&rows[i], o), b); !ok || f > 1+SeedNoise {
				break
			}
			out = append(out, i)
		}
		return out
	}
	onFront := map[int]bool{}
	for _, i := range a.Front {
		onFront[i] = true
		for _, j := range a.Ties[i] {
			onFront[j] = true
		}
	}
	type close struct {
		row int
		f   float64
	}
	dirs := make([]optimization.Direction, len(a.Settings.Objectives))
	for k, o := range a.Settings.Objectives {
		dirs[k] = o.Direction
	}
	var found []close
	for _, j := range a.Candidates {
		if onFront[j] {
			continue
		}
		f := 1.0 // the factor j needs to escape every front row that dominates it
		for _, i := range a.Front {
			if !dominates(a.compared[i], a.compared[j], dirs) {
				continue
			}
			fi := math.Inf(1) // the least factor that beats i on some objective
			for k, o := range a.Settings.Objectives {
				if g, ok := needed(o, a.Values[j][k], a.Values[i][k]); ok {
					fi = min(fi, g)
				}
			}
			f = max(f, fi)
		}
		if f <= 1+SeedNoise {
			found = append(found, close{j, f})
		}
	}
	slices.SortStableFunc(found, func(x, y close) int { return cmp.Compare(x.f, y.f) })
	out := make([]int, len(found))
	for k, c := range found {
		out[k] = c.row
	}
	return out
}

// needed is the factor by which value x must become more favourable under o to match y (x × f
// for a maximized objective, x ÷ f for a minimized one); ok is false when either value is not
// positive (no factor scales it there).
func needed(o optimization.Objective, x, y float64) (f float64, ok bool) {
	if !(x > 0 && y > 0) || math.IsInf(x, 0) || math.IsInf(y, 0) {
		return 0, false
	}
	if o.Direction == optimization.Maximize {
		return max(1, y/x), true
	}
	return max(1, x/y), true
}

// SeedCheck is what became of a sweep's answer when the points that make and could change it
// (SeedCheckPoints) were simulated again with every seed that draws moved, set or default
// (sweep.Recheck): the same deployments under other random draws of prompt and output lengths,
// mixture picks, session think times, arrival gaps, draft acceptance and the router's choices
// (kv_router's ties and samples, the random policy's picks). Before and after are
// compared among those points alone, so that a shift every re-run point shares (all a little
// slower under the new draws) cannot put a point that was not re-run on the answer. An answer
// that changes moves with the draws, not with the deployments. It is written in sweep.json and
// shown in the report when the report's settings are the sweep's own.
type SeedCheck struct {
	// SeedOffset is how far each seed moved (sweep.SeedOffset).
	SeedOffset uint64 `json:"seed_offset"`
	// Settings are the analysis settings whose answer was checked.
	Settings optimization.Settings `json:"settings"`
	// Points are the points simulated again, in SeedCheckPoints order: the answer's first
	// (AnswerPoints of them), then the candidates that could displace it.
	Points       []SeedCheckPoint `json:"points"`
	AnswerPoints int              `json:"answer_points"`
	// AnswerEntries is the number of entries of the answer (a front's, ties folded; 1 for a
	// scalar target's best point), and AnswerSize its points with their ties, checked or not.
	AnswerEntries int `json:"answer_entries"`
	AnswerSize    int `json:"answer_size"`
	// Unseeded counts the chosen points whose simulation draws from no seed
	// (nothing to simulate again); Inconclusive the points whose simulation under the moved seeds
	// failed or timed out (compared as they were); Omitted the points beyond MaxSeedCheckPoints,
	// answer points first: the comparison covers the points checked.
	Unseeded     int `json:"unseeded"`
	Inconclusive int `json:"inconclusive"`
	Omitted      int `json:"omitted"`
	// Answer and AnswerReseeded are the point IDs of the answer among the checked points before
	// and after: every front row (entries and ties), or the best point by the scalar target and
	// those tied with it.
	Answer         []string `json:"answer"`
	AnswerReseeded []string `json:"answer_reseeded"`
}

// SeedCheckPoint is one point of a SeedCheck, as the sweep found it and under the moved seeds.
type SeedCheckPoint struct {
	PointID string `json:"point_id"`
	// Status and StatusReseeded are the row's status (ok, degraded, infeasible, failed,
	// timed_out) before and after.
	Status         string `json:"status"`
	StatusReseeded string `json:"status_reseeded"`
	// CapacityLoad and CapacityLoadReseeded are the capacity search's load (concurrency, or
	// requests or sessions per second), nil without a search or for an infeasible point.
	CapacityLoad         *float64 `json:"capacity_load,omitempty"`
	CapacityLoadReseeded *float64 `json:"capacity_load_reseeded,omitempty"`
	// Objectives and ObjectivesReseeded are the values of Settings.Objectives before and after
	// (nil when the row is no candidate).
	Objectives         []float64 `json:"objectives"`
	ObjectivesReseeded []float64 `json:"objectives_reseeded"`
	// Score and ScoreReseeded are the scalar target's ranking value before and after (its
	// column, results.TargetValue; nil under target pareto).
	Score         *float64 `json:"score,omitempty"`
	ScoreReseeded *float64 `json:"score_reseeded,omitempty"`
	// ObjectiveChange is the largest relative change |after / before − 1| over the objectives
	// and the score both rows have, CapacityChange the capacity load's (0 when either is
	// missing).
	ObjectiveChange float64 `json:"objective_change"`
	CapacityChange  float64 `json:"capacity_change"`
	// SeedsMoved lists the config paths of the seeds moved for the point's re-simulation
	// (grid.DrawingSeeds: traffic.source.seed, traffic.load.seed, engine.speculation.seed,
	// router.seed). Points lists only points simulated again, so it is never empty there; it is
	// omitted when the check was built without it (results.NewSeedCheck alone).
	SeedsMoved []string `json:"seeds_moved,omitempty"`
}

// NewSeedCheck compares the answer of the rows idx of rows with the one where each is replaced by
// its re-seeded row in reseeded (by point ID; a point absent from it counts as unseeded, and one
// whose re-seeded simulation failed or timed out as inconclusive: each keeps its row on both
// sides), under a's settings, analyzing those rows alone. answer and
// omitted are SeedCheckPoints' counts; offset the seeds' move. Errors: an analysis fails.
func NewSeedCheck(rows []Row, a *Analysis, idx []int, reseeded map[string]Row, answer, omitted int, offset uint64) (*SeedCheck, error) {
	before := make([]Row, len(idx))
	after := make([]Row, len(idx))
	c := &SeedCheck{SeedOffset: offset, Settings: a.Settings, Omitted: omitted, Points: []SeedCheckPoint{}, AnswerEntries: 1,
		AnswerSize: len(answerIDs(rows, a))}
	if a.Ranking == nil {
		c.AnswerEntries = len(a.Front)
	}
	for n, i := range idx {
		before[n], after[n] = rows[i], rows[i]
		r, ok := reseeded[rows[i].PointID]
		switch {
		case !ok:
			c.Unseeded++
		case inconclusive(r.Status) && !inconclusive(rows[i].Status):
			// A simulation that failed or ran out of host time says nothing of the draws: the point
			// is compared as it was.
			c.Inconclusive++
		default:
			after[n] = r
		}
	}
	x, err := Analyze(before, a.Settings)
	if err != nil {
		return nil, fmt.Errorf("seed check: %w", err)
	}
	y, err := Analyze(after, a.Settings)
	if err != nil {
		return nil, fmt.Errorf("seed check: %w", err)
	}
	target, scalar := optimization.TargetObjective(a.Settings.Target)
	for n := range idx {
		if _, ok := reseeded[before[n].PointID]; !ok {
			continue
		}
		if n < answer {
			c.AnswerPoints++
		}
		p := SeedCheckPoint{PointID: before[n].PointID, Status: before[n].Status, StatusReseeded: reseeded[before[n].PointID].Status,
			CapacityLoad: capacityOf(&before[n]), CapacityLoadReseeded: capacityOf(&after[n]),
			Objectives: x.Values[n], ObjectivesReseeded: y.Values[n]}
		measured := !(inconclusive(p.StatusReseeded) && !inconclusive(p.Status))
		if !measured { // compared as it was, but nothing was measured under the moved seeds
			p.CapacityLoadReseeded, p.ObjectivesReseeded = nil, nil
		}
		if p.CapacityLoad != nil && p.CapacityLoadReseeded != nil {
			p.CapacityChange = relChange(*p.CapacityLoad, *p.CapacityLoadReseeded)
		}
		if p.Objectives != nil && p.ObjectivesReseeded != nil {
			for k := range p.Objectives {
				p.ObjectiveChange = max(p.ObjectiveChange, relChange(p.Objectives[k], p.ObjectivesReseeded[k]))
			}
		}
		if scalar {
			s := score(&before[n], target)
			p.Score = &s
			if measured {
				t := score(&after[n], target)
				p.ScoreReseeded = &t
				p.ObjectiveChange = max(p.ObjectiveChange, relChange(s, t))
			}
		}
		c.Points = append(c.Points, p)
	}
	c.Answer, c.AnswerReseeded = answerIDs(before, x), answerIDs(after, y)
	return c, nil
}

// inconclusive reports whether a row of status s measured nothing of its deployment: its
// simulation failed or ran out of host time.
func inconclusive(s string) bool { return s == StatusFailed || s == StatusTimedOut }

// capacityOf is r's capacity load, nil without one (no search, or infeasible: null
// capacity_load).
func capacityOf(r *Row) *float64 {
	if r.CapacityLoad == nil {
		return nil
	}
	x := *r.CapacityLoad
	return &x
}

// relChange is |y / x − 1| (|y| when x is 0; 0 for two equal values and for a non-finite one).
func relChange(x, y float64) float64 {
	switch {
	case x == y || math.IsNaN(x) || math.IsNaN(y) || math.IsInf(x, 0) || math.IsInf(y, 0):
		return 0
	case x == 0:
		return math.Abs(y)
	}
	return math.Abs(y/x - 1)
}

// answerIDs is a's answer as point IDs: every front row (entries, then each one's ties), or the
// scalar ranking's best point and those tied with it.
func answerIDs(rows []Row, a *Analysis) []string {
	ids := []string{}
	if a.Ranking != nil {
		for _, i := range scalarBest(rows, a) {
			ids = append(ids, rows[i].PointID)
		}
		return ids
	}
	for _, i := range a.Front {
		ids = append(ids, rows[i].PointID)
		for _, j := range a.Ties[i] {
			ids = append(ids, rows[j].PointID)
		}
	}
	return ids
}

// Changed reports whether the answer differs under the moved seeds: points leaving or joining the
// front (their order follows their values and is not compared), or another best point.
func (c *SeedCheck) Changed() bool {
	x, y := slices.Clone(c.Answer), slices.Clone(c.AnswerReseeded)
	slices.Sort(x)
	slices.Sort(y)
	return !slices.Equal(x, y)
}

// Measured is the number of points measured under the moved seeds: simulated again without
// failing or running out of host time. With none, c has no verdict.
func (c *SeedCheck) Measured() int {
	n := 0
	for _, p := range c.Points {
		if !(inconclusive(p.StatusReseeded) && !inconclusive(p.Status)) {
			n++
		}
	}
	return n
}

// For reports whether c checked the answer of settings s (the sweep's own): a report with other
// objectives, target or filters has another answer, which c says nothing about.
func (c *SeedCheck) For(s optimization.Settings) bool {
	x, err1 := json.Marshal(c.Settings)
	y, err2 := json.Marshal(s)
	return err1 == nil && err2 == nil && string(x) == string(y)
}

// SeedCheckText is the seed check's paragraph for stdout, report.md (md: point IDs as code spans)
// and report.html: what was simulated again, how far the values moved, which points changed
// status, and whether the answer held, naming points by rank and deployment; why there is none
// when m records a reason (Manifest.SeedCheckSkipped); a sentence saying whose answer it checked
// when m holds one for other settings than a's; "" otherwise.
func SeedCheckText(rows []Row, m *Manifest, a *Analysis, labels Labels, md bool) string {
	if m == nil {
		return ""
	}
	c := m.SeedCheck
	if c == nil {
		return seedCheckSkippedText(m.SeedCheckSkipped)
	}
	if !c.For(a.Settings) {
		return "The sweep's seed check (sweep.json) covers the answer of its own settings, not this one's: to check this answer, " +
			"set these objectives, target and constraints in the spec (optimization) and run the sweep into another --output-dir " +
			"(it simulates every point again)."
	}
	t := &seedText{c: c, rows: rows, a: a, labels: labels, md: md, byID: make(map[string]int, len(rows))}
	for i := range rows {
		t.byID[rows[i].PointID] = i
	}
	if len(c.Points) == 0 {
		return t.nothing()
	}
	if c.Measured() == 0 {
		// Every point simulated again failed or ran out of host time: say that once.
		return fmt.Sprintf("Seed check: unchecked: %s could not be simulated again under the moved seeds (%s); "+
			"rerun the sweep with a longer --timeout to check the answer.", Plural(len(c.Points), "point"), t.inconclusiveNames())
	}
	turned := t.turned()
	parts := append([]string{t.moves()}, turned...)
	return t.lead() + ": " + strings.Join(parts, "; ") + "; " + t.verdict(len(turned) > 0)
}

// seedCheckSkippedText says why no seed check ran, "" for no recorded reason.
func seedCheckSkippedText(reason string) string {
	switch reason {
	case SeedCheckDisabled:
		return "No seed check: the sweep ran with --seed-check=false."
	case SeedCheckInterrupted:
		return "No seed check: the sweep or its seed check was interrupted; rerun the sweep (every finished point resumes) to check its answer."
	case SeedCheckSharded:
		return "No seed check: a merge simulates nothing; to check the answer, sweep the front's points again with every seed they draw " +
			"from moved (traffic.source.seed, traffic.load.seed of a poisson load, engine.speculation.seed, router.seed under kv_router " +
			"or random) and compare."
	case SeedCheckNoCandidate:
		return "No seed check: no point passed the analysis' filters, so there is no answer to check (a point that misses the SLA is no candidate under any draws)."
	}
	if r, ok := strings.CutPrefix(reason, "failed: "); ok {
		return "No seed check: it could not run (" + r + "); the sweep's results stand without it."
	}
	return ""
}

// seedText renders one SeedCheck for one analysis.
type seedText struct {
	c      *SeedCheck
	rows   []Row
	a      *Analysis
	labels Labels
	md     bool
	byID   map[string]int
}

// rank is a point's place as the printed answer numbers it: "#k, point ID" (its front rank, or a
// scalar ranking's place), "point ID" off both; with full, its deployment and load follow, as
// the printed front shows them.
func (t *seedText) rank(id string, full bool) string {
	i, ok := t.byID[id]
	if !ok {
		return idText(id, t.md)
	}
	name := "point " + idText(id, t.md)
	if full {
		r := &t.rows[i]
		name = fmt.Sprintf("point %s (%s, %s %s %s %s, %s)", idText(id, t.md), Plural(int(r.GPUs), "GPU"), t.labels.Hardware(r), r.Mode,
			t.labels.Shape(r), r.RouterPolicy, t.labels.Load(r))
	}
	order := t.a.Front
	if t.a.Ranking != nil {
		order = t.a.Ranking
	}
	for k, e := range order {
		switch {
		case e == i:
			return fmt.Sprintf("#%d, %s", k+1, name)
		case t.a.Ranking == nil && slices.Contains(t.a.Ties[e], i):
			return fmt.Sprintf("#%d's tie, %s", k+1, name)
		}
	}
	return name
}

// nothing is the paragraph of a check none of whose points sets a seed that moves it.
func (t *seedText) nothing() string {
	c := t.c
	what := t.answerNoun()
	if n := c.Unseeded - c.AnswerSize; n > 0 {
		what += " and " + Plural(n, "candidate") + " that could displace it"
	}
	return fmt.Sprintf("Seed check: nothing to simulate again: the %s chosen (%s) "+agree(c.Unseeded, "draws", "draw")+" from no seed "+
		"(fixed lengths or a trace, without a poisson load, speculative decoding or a router that draws), so no seed a config "+
		"sets can change the answer.", Plural(c.Unseeded, "point"), what)
}

// answerNoun names the answer: "the front's N entries (M points with their ties)", or "the best
// point (M points tied)".
func (t *seedText) answerNoun() string {
	c := t.c
	if t.a.Ranking != nil {
		if c.AnswerSize > 1 {
			return fmt.Sprintf("the best point (%d points tied)", c.AnswerSize)
		}
		return "the best point"
	}
	what := fmt.Sprintf("the front's %d entries", c.AnswerEntries)
	if c.AnswerEntries == 1 {
		what = "the front's 1 entry"
	}
	if c.AnswerSize > c.AnswerEntries {
		what += fmt.Sprintf(" (%d points with their ties)", c.AnswerSize)
	}
	return what
}

// lead says what was simulated again, and what was not: it counts the answer's points that were
// (its others, with none omitted, draw from no seed) apart from the candidates.
func (t *seedText) lead() string {
	c := t.c
	own := 0 // the answer's points not simulated again
	if c.Omitted == 0 {
		own = min(max(c.AnswerSize-c.AnswerPoints, 0), c.Unseeded)
	}
	rest := c.Unseeded - own // the candidates not simulated again
	what := t.answerNoun()
	switch n := len(c.Points) - c.AnswerPoints; {
	case c.AnswerPoints == 0:
		what = Plural(n, "candidate") + " that could displace " + what + " (whose points draw from no seed)"
		own = 0 // said
	case own > 0:
		what = t.answerPart()
		if n > 0 {
			what += " and " + Plural(n, "candidate") + " that could displace it"
		}
	case n > 0:
		what += " and " + Plural(n, "candidate") + " that could displace it"
	}
	var notes []string
	if c.Omitted > 0 {
		notes = append(notes, fmt.Sprintf("the first %d points, answer first; %d more were not, so the comparison covers those %d",
			MaxSeedCheckPoints, c.Omitted, MaxSeedCheckPoints))
	}
	if own+rest > 0 {
		notes = append(notes, fmt.Sprintf("%s %s from no seed and kept %s values", t.unseededNames(own, rest),
			agree(own+rest, "draws", "draw"), agree(own+rest, "its", "their")))
	}
	if c.Inconclusive > 0 {
		notes = append(notes, fmt.Sprintf("%s failed or ran out of host time under the moved seeds: compared as measured before",
			Plural(c.Inconclusive, "point")))
	}
	s := fmt.Sprintf("Seed check: %s, simulated again with every seed %s from moved by %d", what,
		agree(len(c.Points), "it draws", "they draw"), c.SeedOffset)
	if len(notes) > 0 {
		s += " (" + strings.Join(notes, "; ") + ")"
	}
	return s
}

// unseededNames names the points not simulated again: the answer's own (own of them) by rank
// when at most three, and rest more candidates counted.
func (t *seedText) unseededNames(own, rest int) string {
	var names []string
	if own > 3 {
		names = append(names, fmt.Sprintf("the answer's other %d points", own))
	} else if own > 0 {
		checked := make(map[string]bool, len(t.c.Points))
		for _, p := range t.c.Points {
			checked[p.PointID] = true
		}
		for _, id := range t.c.Answer {
			if !checked[id] {
				names = append(names, t.rank(id, false))
			}
		}
	}
	switch {
	case rest > 0 && own > 0:
		names = append(names, Plural(rest, "more candidate"))
	case rest > 0:
		names = append(names, Plural(rest, "more point"))
	}
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// answerPart names the answer's points simulated again when some of them were not: "2 of the
// front's 3 entries", "2 of the front's 4 points (3 entries with their ties)", "2 of the 3 points
// tied for best".
func (t *seedText) answerPart() string {
	c := t.c
	switch {
	case t.a.Ranking != nil:
		return fmt.Sprintf("%d of the %d points tied for best", c.AnswerPoints, c.AnswerSize)
	case c.AnswerSize == c.AnswerEntries:
		return fmt.Sprintf("%d of the front's %d entries", c.AnswerPoints, c.AnswerEntries)
	}
	return fmt.Sprintf("%d of the front's %d points (%d %s)", c.AnswerPoints, c.AnswerSize, c.AnswerEntries,
		agree(c.AnswerEntries, "entry with its ties", "entries with their ties"))
}

// agree is one when n is 1, many otherwise: the verb or pronoun that agrees with a count.
func agree(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// moves says how far the answer's values and the candidates' moved: the objectives (a scalar
// target's own metric first), the capacities and the largest capacity move, over the points
// measured both times.
func (t *seedText) moves() string {
	c := t.c
	// pct is f (a fraction) in percent, rounded to two decimals; a move that rounds to 0 but is
	// not 0 reads "under 0.01 %", not "0 %", which would say nothing moved. atMost is pct of a
	// largest move, "at most" before a rounded figure.
	tiny := func(f float64) bool { return f > 0 && math.Round(1e4*f) == 0 }
	pct := func(f float64) string {
		if tiny(f) {
			return "under 0.01 %"
		}
		return FixedNum(math.Round(1e4*f)/100) + " %"
	}
	atMost := func(f float64) string {
		if tiny(f) {
			return pct(f)
		}
		return "at most " + pct(f)
	}
	// largest is the point of [from, to) whose f is largest among those where has holds, -1 for none.
	largest := func(from, to int, has func(SeedCheckPoint) bool, f func(SeedCheckPoint) float64) (k int, x float64) {
		k = -1
		for n := from; n < to; n++ {
			if p := c.Points[n]; has(p) && (k < 0 || f(p) > x) {
				k, x = n, f(p)
			}
		}
		return k, x
	}
	objHas := func(p SeedCheckPoint) bool { return p.Objectives != nil && p.ObjectivesReseeded != nil }
	capHas := func(p SeedCheckPoint) bool { return p.CapacityLoad != nil && p.CapacityLoadReseeded != nil }
	scoreHas := func(p SeedCheckPoint) bool { return p.Score != nil && p.ScoreReseeded != nil }
	// part is one group's moves: "the front's objective values moved by at most X % and
	// capacities by at most Y % (#k, point ID: a → b)".
	part := func(from, to int, whose string) string {
		var s []string
		if t.a.Ranking != nil && from == 0 {
			if k, x := largest(from, to, scoreHas, func(p SeedCheckPoint) float64 { return relChange(*p.Score, *p.ScoreReseeded) }); k >= 0 {
				metric, _ := optimization.TargetObjective(t.a.Settings.Target)
				s = append(s, fmt.Sprintf("%s by %s", metric.Metric, pct(x)))
			}
		}
		// The objectives' own moves (ObjectiveChange folds in a scalar target's score, reported
		// above), the one that moved the most named where the move is not negligible: a scalar
		// target's own metric may have moved far less than another objective.
		if k, x := largest(from, to, objHas, objectivesMove); k >= 0 {
			os := "objective values by " + atMost(x)
			if name, ok := t.movedMost(c.Points[k]); ok && x > 0 && !tiny(x) {
				os += fmt.Sprintf(" (%s of %s)", name, t.rank(c.Points[k].PointID, false))
			}
			s = append(s, os)
		}
		if k, x := largest(from, to, capHas, func(p SeedCheckPoint) float64 { return p.CapacityChange }); k >= 0 {
			cs := "capacities by " + atMost(x)
			if x > 0 {
				p := c.Points[k]
				cs += fmt.Sprintf(" (%s: %s → %s)", t.rank(p.PointID, false), FixedNum(*p.CapacityLoad), FixedNum(*p.CapacityLoadReseeded))
			}
			s = append(s, cs)
		}
		if len(s) == 0 {
			return whose + " values cannot be compared (none was measured both times)"
		}
		if len(s) > 1 {
			s = []string{strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]}
		}
		return whose + " " + strings.Replace(s[0], " by ", " moved by ", 1)
	}
	var out []string
	if c.AnswerPoints > 0 {
		whose := "the front's"
		if t.a.Ranking != nil {
			whose = "the best point's"
		}
		out = append(out, part(0, c.AnswerPoints, whose))
	}
	if c.AnswerPoints < len(c.Points) {
		out = append(out, part(c.AnswerPoints, len(c.Points), "the candidates'"))
	}
	return strings.Join(out, "; ")
}

// objectivesMove is the largest relative move |after / before − 1| of p's objective values
// (not its scalar score's, which ObjectiveChange also covers); 0 without values both times.
func objectivesMove(p SeedCheckPoint) float64 {
	m := 0.0
	if p.Objectives != nil && p.ObjectivesReseeded != nil {
		for k := range p.Objectives {
			m = max(m, relChange(p.Objectives[k], p.ObjectivesReseeded[k]))
		}
	}
	return m
}

// movedMost names the objective of p that moved the most under the moved seeds (its
// Settings.Objectives metric, e.g. p99_ttft_ms; the first of equal moves); false when p has no
// objective values both times or the settings name fewer objectives than p has.
func (t *seedText) movedMost(p SeedCheckPoint) (string, bool) {
	objs := t.c.Settings.Objectives
	if p.Objectives == nil || p.ObjectivesReseeded == nil || len(objs) < len(p.Objectives) || len(p.Objectives) == 0 {
		return "", false
	}
	at, best := 0, -1.0
	for k := range p.Objectives {
		if d := relChange(p.Objectives[k], p.ObjectivesReseeded[k]); d > best {
			at, best = k, d
		}
	}
	return objs[at].Metric, true
}

// inconclusiveNames names, by rank and deployment, the points whose simulation under the moved
// seeds failed or ran out of host time, each with which.
func (t *seedText) inconclusiveNames() string {
	var out []string
	for _, p := range t.c.Points {
		if inconclusive(p.StatusReseeded) && !inconclusive(p.Status) {
			out = append(out, fmt.Sprintf("%s %s", t.rank(p.PointID, true),
				map[bool]string{true: "timed out", false: "failed"}[p.StatusReseeded == StatusTimedOut]))
		}
	}
	return strings.Join(out, "; ")
}

// turned lists the points whose status changed under the moved seeds, or that stopped being
// candidates (a point that no longer meets a strict SLA), by rank and deployment.
func (t *seedText) turned() []string {
	var out []string
	for _, p := range t.c.Points {
		switch {
		case inconclusive(p.StatusReseeded) && !inconclusive(p.Status):
			out = append(out, fmt.Sprintf("%s %s under them (compared as it was)", t.rank(p.PointID, true),
				map[bool]string{true: "timed out", false: "failed"}[p.StatusReseeded == StatusTimedOut]))
		case p.StatusReseeded != p.Status:
			out = append(out, fmt.Sprintf("%s is %s under them (it was %s)", t.rank(p.PointID, true), p.StatusReseeded, p.Status))
		case p.Objectives != nil && p.ObjectivesReseeded == nil:
			out = append(out, fmt.Sprintf("%s is no candidate under them (it breaks the SLA or another filter of the analysis)",
				t.rank(p.PointID, true)))
		}
	}
	return out
}

// verdict says whether the answer held, which points left and joined it, and what to do; turned
// says some point changed status (the advice is then about the SLA's edge).
func (t *seedText) verdict(turned bool) string {
	c, scalar := t.c, t.a.Ranking != nil
	if c.Measured() == 0 {
		return "nothing was measured under the moved seeds, so the answer is unchecked: rerun the sweep with a longer --timeout to check it."
	}
	if !c.Changed() {
		if scalar {
			return "the best point is the same."
		}
		return "the front is the same."
	}
	var left, joined []string
	for _, s := range c.Answer {
		if !slices.Contains(c.AnswerReseeded, s) {
			left = append(left, t.verdictName(s))
		}
	}
	for _, s := range c.AnswerReseeded {
		if !slices.Contains(c.Answer, s) {
			joined = append(joined, t.verdictName(s))
		}
	}
	var b strings.Builder
	switch {
	case scalar && len(joined) == 0:
		fmt.Fprintf(&b, "none of the points simulated again is best under them: %s dropped out", strings.Join(left, "; "))
		if len(c.Points) == c.AnswerPoints {
			b.WriteString(" (no other point was simulated again: those behind it were more than 5 % away)")
		}
	case scalar:
		fmt.Fprintf(&b, "the best point changed from %s to %s", strings.Join(left, "; "), strings.Join(joined, "; "))
	default:
		b.WriteString("the front changed")
		if len(c.AnswerReseeded) == 0 {
			b.WriteString(" (none of the points simulated again is on it under them)")
		}
		if len(left) > 0 {
			fmt.Fprintf(&b, ": %s left it", strings.Join(left, "; "))
		}
		if len(joined) > 0 {
			sep := ":"
			if len(left) > 0 {
				sep = ";"
			}
			fmt.Fprintf(&b, "%s %s joined it", sep, strings.Join(joined, "; "))
		}
	}
	if turned {
		b.WriteString(". A deployment that meets the SLA under some draws and not under others sits on its edge: lengthen the runs " +
			"(traffic.stop), or tighten the SLA a few percent, and sweep them again.")
	} else {
		b.WriteString(". Those deployments are apart by less than the random draws move them: choose among them on other grounds, " +
			"or lengthen the runs (traffic.stop) and sweep them again.")
	}
	return b.String()
}

// verdictName is a point that left or joined the answer, by rank and deployment, saying so when
// its values are those measured before: a point that draws from no seed, or whose simulation
// under the moved seeds measured nothing, moves on or off the answer because the others moved.
func (t *seedText) verdictName(id string) string {
	name := t.rank(id, true)
	k := slices.IndexFunc(t.c.Points, func(p SeedCheckPoint) bool { return p.PointID == id })
	switch {
	case k < 0:
		return name + " (not simulated again: it draws from no seed)"
	case inconclusive(t.c.Points[k].StatusReseeded) && !inconclusive(t.c.Points[k].Status):
		return name + " (as measured before: nothing was measured under them)"
	}
	return name
}

// idText is a point ID as the report shows it: a code span in report.md (md).
func idText(id string, md bool) string {
	if md {
		return "`" + id + "`"
	}
	return id
}
