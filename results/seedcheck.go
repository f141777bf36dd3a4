package results

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/servesweep/servesweep/sim/optimization"
)

// MaxSeedCheckPoints bounds how many points a seed check simulates again (SeedCheckPoints): the
// answer and its contenders take a few percent of a sweep's simulations, not another sweep.
const MaxSeedCheckPoints = 32

// SeedCheckPoints returns the rows (indexes into rows) a seed check simulates again under other
// seeds, in order: the answer — under target pareto the front's entries and their exact ties,
// under a scalar target its best point — then the candidates a capacity search left able to
// displace it (UnsettledOf: near ties' best points and rivals, marginal entries' rivals,
// contenders), each once, at most MaxSeedCheckPoints of them; answer counts the answer's
// points among them (the first ones) and omitted the points left out. Without candidates it
// returns none.
func SeedCheckPoints(rows []Row, a *Analysis, m *Manifest) (idx []int, answer, omitted int) {
	seen := map[int]bool{}
	add := func(i int) {
		if !seen[i] {
			seen[i] = true
			idx = append(idx, i)
		}
	}
	if a.Ranking != nil {
		if len(a.Ranking) > 0 {
			add(a.Ranking[0])
		}
	} else {
		for _, i := range a.Front {
			add(i)
			for _, j := range a.Ties[i] {
				add(j)
			}
		}
	}
	answer = len(idx)
	u := UnsettledOf(rows, a, m)
	for _, t := range u.NearTies {
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
	if len(idx) > MaxSeedCheckPoints {
		return idx[:MaxSeedCheckPoints], min(answer, MaxSeedCheckPoints), len(idx) - MaxSeedCheckPoints
	}
	return idx, answer, 0
}

// SeedCheck is what became of a sweep's answer when the points that make and could change it
// (SeedCheckPoints) were simulated again with every seed of their configs moved
// (sweep.Recheck): the same deployments under other random draws of prompt and output lengths,
// session think times, arrival gaps and draft acceptance. An answer that changes moves with the
// draws, not with the deployments. It is written in sweep.json and shown in the report when the
// report's settings are the sweep's own.
type SeedCheck struct {
	// SeedOffset is how far each seed moved (sweep.SeedOffset).
	SeedOffset uint64 `json:"seed_offset"`
	// Settings are the analysis settings whose answer was checked.
	Settings optimization.Settings `json:"settings"`
	// Points are the points simulated again, in SeedCheckPoints order: the answer's first
	// (AnswerPoints of them), then the candidates that could displace it.
	Points       []SeedCheckPoint `json:"points"`
	AnswerPoints int              `json:"answer_points"`
	// Unseeded counts the chosen points whose configs draw nothing at random (nothing to move);
	// Omitted the candidates beyond MaxSeedCheckPoints.
	Unseeded int `json:"unseeded"`
	Omitted  int `json:"omitted"`
	// Answer and AnswerReseeded are the point IDs of the answer before and after: the Pareto
	// front's entries best first (target pareto), or the best point by the scalar target.
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
	// LargestChange is the largest relative change |after / before − 1| over the capacity load
	// and the objectives both rows have (0 when they share none).
	LargestChange float64 `json:"largest_change"`
}

// NewSeedCheck compares the analysis a of rows with the one where each row of idx is replaced by
// its re-seeded row in reseeded (by point ID; a point absent from it counts as unseeded),
// under a's settings. answer and omitted are SeedCheckPoints' counts; offset the seeds' move.
// Errors: the analysis of the re-seeded rows fails (settings a's own analysis accepted cannot).
func NewSeedCheck(rows []Row, a *Analysis, idx []int, reseeded map[string]Row, answer, omitted int, offset uint64) (*SeedCheck, error) {
	after := slices.Clone(rows)
	c := &SeedCheck{SeedOffset: offset, Settings: a.Settings, Omitted: omitted, Points: []SeedCheckPoint{}}
	for _, i := range idx {
		r, ok := reseeded[rows[i].PointID]
		if !ok {
			c.Unseeded++
			continue
		}
		after[i] = r
	}
	b, err := Analyze(after, a.Settings)
	if err != nil {
		return nil, fmt.Errorf("seed check: %w", err)
	}
	for n, i := range idx {
		if _, ok := reseeded[rows[i].PointID]; !ok {
			continue
		}
		if n < answer {
			c.AnswerPoints++
		}
		p := SeedCheckPoint{PointID: rows[i].PointID, Status: rows[i].Status, StatusReseeded: after[i].Status,
			CapacityLoad: capacityOf(&rows[i]), CapacityLoadReseeded: capacityOf(&after[i]),
			Objectives: a.Values[i], ObjectivesReseeded: b.Values[i]}
		if p.CapacityLoad != nil && p.CapacityLoadReseeded != nil {
			p.LargestChange = relChange(*p.CapacityLoad, *p.CapacityLoadReseeded)
		}
		if p.Objectives != nil && p.ObjectivesReseeded != nil {
			for k := range p.Objectives {
				p.LargestChange = max(p.LargestChange, relChange(p.Objectives[k], p.ObjectivesReseeded[k]))
			}
		}
		c.Points = append(c.Points, p)
	}
	c.Answer, c.AnswerReseeded = answerIDs(rows, a), answerIDs(after, b)
	return c, nil
}

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

// answerIDs is a's answer as point IDs: the front best first, or the scalar ranking's best.
func answerIDs(rows []Row, a *Analysis) []string {
	ids := []string{}
	if a.Ranking != nil {
		if len(a.Ranking) > 0 {
			ids = append(ids, rows[a.Ranking[0]].PointID)
		}
		return ids
	}
	for _, i := range a.Front {
		ids = append(ids, rows[i].PointID)
	}
	return ids
}

// Changed reports whether the answer differs under the moved seeds: another front (entries
// leaving or joining it; their order follows their values and is not compared) or another best
// point.
func (c *SeedCheck) Changed() bool {
	x, y := slices.Clone(c.Answer), slices.Clone(c.AnswerReseeded)
	slices.Sort(x)
	slices.Sort(y)
	return !slices.Equal(x, y)
}

// LargestChange is the largest of the points' LargestChange (0 with none).
func (c *SeedCheck) LargestChange() float64 {
	m := 0.0
	for _, p := range c.Points {
		m = max(m, p.LargestChange)
	}
	return m
}

// For reports whether c checked the answer of settings s (the sweep's own): a report with other
// objectives, target or filters has another answer, which c says nothing about.
func (c *SeedCheck) For(s optimization.Settings) bool {
	x, err1 := json.Marshal(c.Settings)
	y, err2 := json.Marshal(s)
	return err1 == nil && err2 == nil && string(x) == string(y)
}

// SeedCheckText is the seed check's sentence for stdout, report.md (md: point IDs as code spans)
// and report.html: what was simulated again, how far the values moved, and whether the answer
// held; "" when m has no seed check for a's settings, a sentence saying so when it has one for
// other settings.
func SeedCheckText(m *Manifest, a *Analysis, md bool) string {
	if m == nil || m.SeedCheck == nil {
		return ""
	}
	c := m.SeedCheck
	if !c.For(a.Settings) {
		return "The sweep's seed check (sweep.json) covers its own settings' answer, not this one's; run the sweep with these settings to check it."
	}
	id := func(s string) string {
		if md {
			return "`" + s + "`"
		}
		return s
	}
	var b strings.Builder
	what := "the front's " + Plural(c.AnswerPoints, "point")
	if a.Ranking != nil {
		what = "the best point"
	}
	if n := len(c.Points) - c.AnswerPoints; n > 0 {
		what += " and " + Plural(n, "candidate") + " that could displace it"
	}
	fmt.Fprintf(&b, "Seed check: %s, simulated again with every seed moved by %d", what, c.SeedOffset)
	if c.Unseeded > 0 {
		fmt.Fprintf(&b, " (%d more draw nothing at random)", c.Unseeded)
	}
	if c.Omitted > 0 {
		fmt.Fprintf(&b, " (%d more candidates beyond the %d checked were not)", c.Omitted, MaxSeedCheckPoints)
	}
	if len(c.Points) == 0 {
		b.WriteString(": nothing to check.")
		return b.String()
	}
	part := func(from, to int) (most int, change float64) {
		most = -1
		for k := from; k < to; k++ {
			if p := c.Points[k]; most < 0 || p.LargestChange > change {
				most, change = k, p.LargestChange
			}
		}
		return most, change
	}
	pct := func(f float64) string { return FixedNum(math.Round(1e4*f)/100) + " %" }
	b.WriteString(": ")
	if c.AnswerPoints > 0 {
		_, ch := part(0, c.AnswerPoints)
		fmt.Fprintf(&b, "the %s values moved by at most %s", map[bool]string{true: "best point's", false: "front's"}[a.Ranking != nil], pct(ch))
	}
	if k, ch := part(c.AnswerPoints, len(c.Points)); k >= 0 {
		if c.AnswerPoints > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "the candidates' by at most %s", pct(ch))
		if p := c.Points[k]; p.CapacityLoad != nil && p.CapacityLoadReseeded != nil && relChange(*p.CapacityLoad, *p.CapacityLoadReseeded) == ch && ch > 0 {
			fmt.Fprintf(&b, " (%s's capacity: %s → %s)", id(p.PointID), FixedNum(*p.CapacityLoad), FixedNum(*p.CapacityLoadReseeded))
		}
	}
	if !c.Changed() {
		if a.Ranking != nil {
			b.WriteString("; the best point is the same.")
		} else {
			fmt.Fprintf(&b, "; the front is the same %s.", Plural(len(c.Answer), "deployment"))
		}
		return b.String()
	}
	var left, joined []string
	for _, s := range c.Answer {
		if !slices.Contains(c.AnswerReseeded, s) {
			left = append(left, id(s))
		}
	}
	for _, s := range c.AnswerReseeded {
		if !slices.Contains(c.Answer, s) {
			joined = append(joined, id(s))
		}
	}
	if a.Ranking != nil {
		fmt.Fprintf(&b, "; the best point changed from %s to %s", strings.Join(left, ", "), strings.Join(joined, ", "))
	} else {
		b.WriteString("; the front changed")
		if len(left) > 0 {
			fmt.Fprintf(&b, ": %s left it", strings.Join(left, ", "))
		}
		if len(joined) > 0 {
			sep := ":"
			if len(left) > 0 {
				sep = ","
			}
			fmt.Fprintf(&b, "%s %s joined it", sep, strings.Join(joined, ", "))
		}
	}
	b.WriteString(". Those deployments are apart by less than the random draws move them: choose among them on other grounds, " +
		"or lengthen the runs (traffic.stop) and sweep them again.")
	return b.String()
}
