package results

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/servesweep/servesweep/sim/optimization"
)

// seedObjectives are the built-in sweep's: cost per token down, throughput up.
var seedObjectives = []optimization.Objective{{Metric: "output_throughput_tok_s", Direction: optimization.Maximize},
	{Metric: "usd_per_million_output_tokens", Direction: optimization.Minimize}}

// seedRows are a front of a (1000 tok/s at 0.10 USD per M) and b (800 at 0.08) above c (780 at
// 0.083, dominated by b but within SeedNoise of it: 800 / 780 = 1.026) and d (600 at 0.12,
// dominated by a and b, 1.25 away), each found at a capacity whose bracket is 3 % (met at 100,
// missed at 104): no capacity-search contender, so the check takes a, b and the close c.
func seedRows() ([]Row, *Analysis, *Manifest) {
	rows := []Row{nearTieRow("a", 100, 104, 1000, 0.10), nearTieRow("b", 100, 104, 800, 0.08),
		nearTieRow("c", 100, 104, 780, 0.083), nearTieRow("d", 100, 104, 600, 0.12)}
	a, err := Analyze(rows, optimization.Settings{Target: optimization.TargetPareto, Objectives: seedObjectives})
	if err != nil {
		panic(err)
	}
	m := &Manifest{CapacitySearch: &optimization.CapacitySearch{RelativeTolerance: 0.05, Min: 1, Max: 4096}, Settings: a.Settings}
	return rows, a, m
}

func ids(rows []Row, idx []int) (s []string) {
	for _, i := range idx {
		s = append(s, rows[i].PointID)
	}
	return s
}

func TestSeedCheckHeld(t *testing.T) {
	rows, a, m := seedRows()
	idx, answer, omitted := SeedCheckPoints(rows, a, m)
	if got := ids(rows, idx); !slices.Equal(got, []string{"a", "b", "c"}) || answer != 2 || omitted != 0 {
		t.Fatalf("points %v (answer %d, omitted %d), want the front a, b and the close c", got, answer, omitted)
	}
	// Under the moved seeds a makes 1 % more, b 1 % less at a capacity 2 % lower, c the same: the
	// front holds.
	re := map[string]Row{"a": nearTieRow("a", 100, 104, 1010, 0.10), "b": nearTieRow("b", 98, 104, 792, 0.08), "c": rows[2]}
	c, err := NewSeedCheck(rows, a, idx, re, answer, omitted, 1)
	if err != nil {
		t.Fatal(err)
	}
	if c.Changed() || !slices.Equal(c.Answer, []string{"a", "b"}) || c.AnswerPoints != 2 || c.AnswerEntries != 2 || c.Unseeded != 0 {
		t.Errorf("check %+v, want the front a, b held", c)
	}
	if p := c.Points[0]; math.Abs(p.ObjectiveChange-0.01) > 1e-12 || p.CapacityChange != 0 || *p.CapacityLoadReseeded != 100 {
		t.Errorf("point a %+v, want its throughput 1 %% up at capacity 100", p)
	}
	if p := c.Points[1]; math.Abs(p.CapacityChange-0.02) > 1e-12 || math.Abs(p.ObjectiveChange-0.01) > 1e-12 {
		t.Errorf("point b %+v, want its capacity 2 %% and throughput 1 %% down", p)
	}
	m.SeedCheck = c
	got := SeedCheckText(rows, m, a, LabelsFor(rows), false)
	want := "Seed check: the front's 2 entries and 1 candidate that could displace it, simulated again with every seed they " +
		"draw from moved by 1: the front's objective values moved by at most 1 % (output_throughput_tok_s of #1, point a) and capacities by at most 2 % (#2, point b: 100 → 98); " +
		"the candidates' objective values moved by at most 0 % and capacities by at most 0 %; the front is the same."
	if got != want {
		t.Errorf("text\n%q\nwant\n%q", got, want)
	}
	// A move under 0.005 % reads as under 0.01 %, not as 0 %: c's throughput 780 → 780.02.
	re["c"] = nearTieRow("c", 100, 104, 780.02, 0.083)
	tiny, err := NewSeedCheck(rows, a, idx, re, answer, omitted, 1)
	if err != nil {
		t.Fatal(err)
	}
	mt := *m
	mt.SeedCheck = tiny
	if got := SeedCheckText(rows, &mt, a, LabelsFor(rows), false); !strings.Contains(got, "the candidates' objective values moved by under 0.01 % and capacities by at most 0 %") {
		t.Errorf("text of a 0.003 %% move:\n%q\nwant the candidates' objective values moved by under 0.01 %%", got)
	}
	// pareto.json carries it, with the verdict.
	data, err := ParetoDocument(rows, a, m, nil)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		SeedCheck *SeedCheck `json:"seed_check"`
		Changed   *bool      `json:"seed_check_changed"`
	}
	if err := json.Unmarshal(data, &doc); err != nil || doc.SeedCheck == nil || doc.Changed == nil || *doc.Changed ||
		len(doc.SeedCheck.Points) != 3 {
		t.Errorf("pareto.json seed check %+v (changed %v, %v)", doc.SeedCheck, doc.Changed, err)
	}
}

// Before and after compare the checked points alone: b falling below c (re-run) changes the front;
// a shift every checked point shares cannot put an unchecked one (d) on it.
func TestSeedCheckChanged(t *testing.T) {
	rows, a, m := seedRows()
	idx, answer, omitted := SeedCheckPoints(rows, a, m)
	re := map[string]Row{"a": nearTieRow("a", 100, 104, 590, 0.125), "b": nearTieRow("b", 100, 104, 650, 0.095), "c": rows[2]}
	c, err := NewSeedCheck(rows, a, idx, re, answer, omitted, 1)
	if err != nil {
		t.Fatal(err)
	}
	// After: a 590 at 0.125, b 650 at 0.095, c 780 at 0.083: c dominates both. d (600, 0.12),
	// not checked, would dominate a as measured but is not compared.
	if !c.Changed() || !slices.Equal(c.AnswerReseeded, []string{"c"}) {
		t.Errorf("answer after %v, want c alone", c.AnswerReseeded)
	}
	m.SeedCheck = c
	got := SeedCheckText(rows, m, a, LabelsFor(rows), true)
	for _, want := range []string{"; the front changed: #1, point `a` (1 GPU,", "left it; point `c` (1 GPU,",
		"joined it. Those deployments are apart by less than the random draws move them"} {
		if !strings.Contains(got, want) {
			t.Errorf("text %q lacks %q", got, want)
		}
	}
	// Another analysis (other objectives) has another answer: the check does not speak for it.
	other, err := Analyze(rows, optimization.Settings{Target: optimization.TargetPareto, Objectives: seedObjectives[:1]})
	if err != nil {
		t.Fatal(err)
	}
	if got := SeedCheckText(rows, m, other, LabelsFor(rows), false); !strings.Contains(got, "covers the answer of its own settings, not this one's") ||
		!strings.Contains(got, "into another --output-dir") {
		t.Errorf("text for other settings: %q", got)
	}
}

// A front entry that stops meeting the SLA is named, and the advice is about the SLA's edge.
func TestSeedCheckStatusChange(t *testing.T) {
	rows, a, m := seedRows()
	idx, answer, omitted := SeedCheckPoints(rows, a, m)
	gone := nearTieRow("b", 100, 104, 800, 0.08)
	gone.Status, gone.CapacityLoad = StatusInfeasible, nil
	c, err := NewSeedCheck(rows, a, idx, map[string]Row{"a": rows[0], "b": gone, "c": rows[2]}, answer, omitted, 1)
	if err != nil {
		t.Fatal(err)
	}
	m.SeedCheck = c
	got := SeedCheckText(rows, m, a, LabelsFor(rows), false)
	for _, want := range []string{"#2, point b (1 GPU,", "is infeasible under them (it was ok)", "the front changed: #2, point b",
		"left it; point c", "sits on its edge"} {
		if !strings.Contains(got, want) {
			t.Errorf("text %q lacks %q", got, want)
		}
	}
}

// Points that set no seed moving them are not simulated again; an answer of such points only has
// no verdict in pareto.json.
func TestSeedCheckUnseeded(t *testing.T) {
	rows, a, m := seedRows()
	idx, answer, omitted := SeedCheckPoints(rows, a, m)
	c, err := NewSeedCheck(rows, a, idx, map[string]Row{}, answer, omitted, 1)
	if err != nil {
		t.Fatal(err)
	}
	if c.Unseeded != 3 || len(c.Points) != 0 || c.Changed() {
		t.Errorf("check %+v, want 3 unseeded and no verdict", c)
	}
	m.SeedCheck = c
	if got := SeedCheckText(rows, m, a, LabelsFor(rows), false); !strings.HasPrefix(got, "Seed check: nothing to simulate again: the 3 points chosen (the front's 2 entries and 1 candidate that could displace it)") {
		t.Errorf("text %q", got)
	}
	// Of the answer a, b and the candidate c, b alone is simulated again: a is named as the
	// answer's, c as a candidate, apart.
	part, err := NewSeedCheck(rows, a, idx, map[string]Row{"b": nearTieRow("b", 98, 104, 792, 0.08)}, answer, omitted, 1)
	if err != nil {
		t.Fatal(err)
	}
	mp := *m
	mp.SeedCheck = part
	if got := SeedCheckText(rows, &mp, a, LabelsFor(rows), false); !strings.HasPrefix(got, "Seed check: 1 of the front's 2 entries, "+
		"simulated again with every seed it draws from moved by 1 (#1, point a and 1 more candidate draw from no seed and kept their values): ") ||
		!strings.HasSuffix(got, "; the front is the same.") {
		t.Errorf("text of a partly re-simulated answer: %q", got)
	}
	// b, simulated again, now makes 1,010 tok/s at 0.079: it dominates a, which was not simulated
	// again and leaves the front because b moved; the verdict says a kept its values.
	moved, err := NewSeedCheck(rows, a, idx, map[string]Row{"b": nearTieRow("b", 100, 104, 1010, 0.079)}, answer, omitted, 1)
	if err != nil {
		t.Fatal(err)
	}
	mp.SeedCheck = moved
	if got := SeedCheckText(rows, &mp, a, LabelsFor(rows), false); !strings.Contains(got,
		"the front changed: #1, point a (1 GPU, ") || !strings.Contains(got, ") (not simulated again: it draws from no seed) left it.") {
		t.Errorf("text of an unseeded entry displaced by a re-simulated one: %q", got)
	}
	// With only a candidate simulated again, the lead says the answer's points draw from no seed.
	cand, err := NewSeedCheck(rows, a, idx, map[string]Row{"c": rows[2]}, answer, omitted, 1)
	if err != nil {
		t.Fatal(err)
	}
	mp.SeedCheck = cand
	if got := SeedCheckText(rows, &mp, a, LabelsFor(rows), false); !strings.HasPrefix(got, "Seed check: 1 candidate that could displace "+
		"the front's 2 entries (whose points draw from no seed), simulated again with every seed it draws from moved by 1: ") {
		t.Errorf("text of a check of a candidate alone: %q", got)
	}
	data, err := ParetoDocument(rows, a, m, nil)
	if err != nil || !strings.Contains(string(data), `"seed_check"`) || strings.Contains(string(data), "seed_check_changed") {
		t.Errorf("pareto.json (%v):\n%s", err, data)
	}
	for reason, want := range map[string]string{SeedCheckDisabled: "--seed-check=false", SeedCheckInterrupted: "interrupted",
		SeedCheckSharded: "a merge simulates nothing", "failed: boom": "it could not run (boom)"} {
		if got := SeedCheckText(rows, &Manifest{SeedCheckSkipped: reason}, a, LabelsFor(rows), false); !strings.Contains(got, want) {
			t.Errorf("skipped %q: text %q lacks %q", reason, got, want)
		}
	}
	if got := SeedCheckText(rows, &Manifest{}, a, LabelsFor(rows), false); got != "" {
		t.Errorf("text without a seed check or a reason: %q", got)
	}
}

// A scalar target's answer is its best point: the runner-up within SeedNoise is checked, a
// Pareto objective's near tie is not, and the ranked metric is reported.
func TestSeedCheckScalar(t *testing.T) {
	rows, _, m := seedRows()
	rows[2] = nearTieRow("c", 100, 104, 990, 0.09) // 1000 / 990 = 1.01: within SeedNoise of a
	a, err := Analyze(rows, optimization.Settings{Target: optimization.TargetThroughput, Objectives: seedObjectives})
	if err != nil {
		t.Fatal(err)
	}
	idx, answer, _ := SeedCheckPoints(rows, a, m)
	if got := ids(rows, idx); !slices.Equal(got, []string{"a", "c"}) || answer != 1 {
		t.Fatalf("points %v (answer %d), want a then its runner-up c", got, answer)
	}
	c, err := NewSeedCheck(rows, a, idx, map[string]Row{"a": rows[0], "c": nearTieRow("c", 90, 104, 1005, 0.09)}, answer, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	if p := c.Points[1]; p.Score == nil || *p.Score != 990 || *p.ScoreReseeded != 1005 || math.Abs(p.CapacityChange-0.1) > 1e-12 {
		t.Errorf("point c %+v, want score 990 → 1005 at capacity 100 → 90", p)
	}
	m.SeedCheck, m.Settings = c, a.Settings
	got := SeedCheckText(rows, m, a, LabelsFor(rows), false)
	for _, want := range []string{"Seed check: the best point and 1 candidate that could displace it",
		"the best point's output_throughput_tok_s moved by 0 %, objective values by at most 0 % and capacities by at most 0 %",
		"capacities by at most 10 % (#2, point c: 100 → 90)", "; the best point changed from #1, point a (1 GPU,", "to #2, point c (1 GPU,",
		"capacity concurrency 100)",
		// The objective that moved the most is named (throughput 990 → 1005; cost per token unmoved).
		"the candidates' objective values moved by at most 1.52 % (output_throughput_tok_s of #2, point c)"} {
		if !strings.Contains(got, want) {
			t.Errorf("text %q lacks %q", got, want)
		}
	}
	// A target outside the objectives: its score's 1.52 % move is reported as the target's, and
	// the objective values (cost per token alone, unmoved) are not said to have moved with it.
	costOnly := optimization.Settings{Target: optimization.TargetThroughput, Objectives: seedObjectives[1:]}
	a, err = Analyze(rows, costOnly)
	if err != nil {
		t.Fatal(err)
	}
	idx, answer, _ = SeedCheckPoints(rows, a, m)
	c, err = NewSeedCheck(rows, a, idx, map[string]Row{"a": rows[0], "c": nearTieRow("c", 90, 104, 1005, 0.09)}, answer, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	m.SeedCheck, m.Settings = c, a.Settings
	got = SeedCheckText(rows, m, a, LabelsFor(rows), false)
	if !strings.Contains(got, "the candidates' objective values moved by at most 0 %") || strings.Contains(got, "objective values moved by at most 1.52 %") {
		t.Errorf("text %q: want the candidates' objective values at most 0 %%, the score's move apart", got)
	}
}

func TestSeedCheckPointsBound(t *testing.T) {
	var rows []Row
	for i := range MaxSeedCheckPoints + 5 {
		// Each trades throughput for cost: all on the front.
		rows = append(rows, nearTieRow(strings.Repeat("p", i+1), 100, 104, float64(1000+i), 0.1+0.001*float64(i)))
	}
	a, err := Analyze(rows, optimization.Settings{Target: optimization.TargetPareto, Objectives: seedObjectives})
	if err != nil {
		t.Fatal(err)
	}
	idx, answer, omitted := SeedCheckPoints(rows, a, nil)
	if len(idx) != MaxSeedCheckPoints || answer != MaxSeedCheckPoints || omitted != 5 || rows[idx[0]].PointID != strings.Repeat("p", MaxSeedCheckPoints+5) {
		t.Errorf("%d points (answer %d, omitted %d), first %s; want the %d best by throughput and 5 omitted",
			len(idx), answer, omitted, rows[idx[0]].PointID, MaxSeedCheckPoints)
	}
}

// Hand-computed margins: off the front, c needs 800 / 780 = 1.026 to escape b (within SeedNoise),
// d 1000 / 600 on throughput against a and 0.12 / 0.08 = 1.5 on cost against b (beyond it).
func TestCloseToAnswer(t *testing.T) {
	rows, a, _ := seedRows()
	if got := ids(rows, closeToAnswer(rows, a)); !slices.Equal(got, []string{"c"}) {
		t.Errorf("close %v, want c", got)
	}
	for _, tc := range []struct {
		o    optimization.Objective
		x, y float64
		want float64
		ok   bool
	}{
		{seedObjectives[0], 780, 800, 800.0 / 780, true},
		{seedObjectives[1], 0.083, 0.08, 0.083 / 0.08, true},
		{seedObjectives[0], 900, 800, 1, true},
		{seedObjectives[0], 0, 800, 0, false},
	} {
		if f, ok := needed(tc.o, tc.x, tc.y); ok != tc.ok || math.Abs(f-tc.want) > 1e-12 {
			t.Errorf("needed(%s, %g, %g) = %g, %v; want %g, %v", tc.o.Metric, tc.x, tc.y, f, ok, tc.want, tc.ok)
		}
	}
}

// A shift every checked point shares leaves the answer as it was: all three 30 % worse under
// the moved seeds, the unchecked d (600 at 0.12) would sit on a front of every row, but it was
// not simulated again and is not compared.
func TestSeedCheckComparesCheckedPointsOnly(t *testing.T) {
	rows, a, m := seedRows()
	idx, answer, omitted := SeedCheckPoints(rows, a, m)
	re := map[string]Row{"a": nearTieRow("a", 70, 104, 700, 0.13), "b": nearTieRow("b", 70, 104, 560, 0.104),
		"c": nearTieRow("c", 70, 104, 546, 0.108)}
	c, err := NewSeedCheck(rows, a, idx, re, answer, omitted, 1)
	if err != nil {
		t.Fatal(err)
	}
	if c.Changed() || !slices.Equal(c.AnswerReseeded, []string{"a", "b"}) {
		t.Errorf("answer after %v, want a, b", c.AnswerReseeded)
	}
	all := slices.Clone(rows)
	all[0], all[1], all[2] = re["a"], re["b"], re["c"]
	if full, err := Analyze(all, a.Settings); err != nil || !slices.Contains(ids(all, full.Front), "d") {
		t.Fatalf("the premise: d is on the front of every row after (%v)", err)
	}
}

// A re-simulation that ran out of host time says nothing of the draws: the point is compared as
// it was, named, and the answer holds.
func TestSeedCheckInconclusive(t *testing.T) {
	rows, a, m := seedRows()
	idx, answer, omitted := SeedCheckPoints(rows, a, m)
	late := Row{PointID: "b", Status: StatusTimedOut}
	c, err := NewSeedCheck(rows, a, idx, map[string]Row{"a": rows[0], "b": late, "c": rows[2]}, answer, omitted, 1)
	if err != nil {
		t.Fatal(err)
	}
	if c.Changed() || c.Inconclusive != 1 || c.Points[1].StatusReseeded != StatusTimedOut {
		t.Errorf("check %+v, want b inconclusive and the front held", c)
	}
	m.SeedCheck = c
	got := SeedCheckText(rows, m, a, LabelsFor(rows), false)
	for _, want := range []string{"(1 point failed or ran out of host time under the moved seeds: compared as measured before)",
		"#2, point b (1 GPU,", "timed out under them (compared as it was)", "; the front is the same."} {
		if !strings.Contains(got, want) {
			t.Errorf("text %q lacks %q", got, want)
		}
	}
}

// Exact ties come after every entry, so that a binding cap spends itself on distinct deployments;
// a check with no candidate records why, and pareto.json carries the reason.
func TestSeedCheckTiesLastAndNoCandidate(t *testing.T) {
	rows := []Row{nearTieRow("a", 100, 104, 1000, 0.10), nearTieRow("a2", 100, 104, 1000, 0.10), nearTieRow("b", 100, 104, 800, 0.08)}
	a, err := Analyze(rows, optimization.Settings{Target: optimization.TargetPareto, Objectives: seedObjectives})
	if err != nil {
		t.Fatal(err)
	}
	if idx, answer, _ := SeedCheckPoints(rows, a, nil); !slices.Equal(ids(rows, idx), []string{"a", "b", "a2"}) || answer != 3 {
		t.Errorf("points %v (answer %d), want the entries a, b, then a's tie a2", ids(rows, idx), answer)
	}
	m := &Manifest{SeedCheckSkipped: SeedCheckNoCandidate}
	if got := SeedCheckText(rows, m, a, LabelsFor(rows), false); !strings.Contains(got, "no point passed the analysis' filters") {
		t.Errorf("text %q", got)
	}
	data, err := ParetoDocument(rows, a, m, nil)
	if err != nil || !strings.Contains(string(data), `"seed_check_skipped": "no_candidate"`) {
		t.Errorf("pareto.json (%v):\n%s", err, data)
	}
}

// Nothing measured under the moved seeds (every re-simulation out of host time) is no verdict.
func TestSeedCheckNothingMeasured(t *testing.T) {
	rows, a, m := seedRows()
	idx, answer, omitted := SeedCheckPoints(rows, a, m)
	late := map[string]Row{}
	for _, id := range []string{"a", "b", "c"} {
		late[id] = Row{PointID: id, Status: StatusTimedOut}
	}
	c, err := NewSeedCheck(rows, a, idx, late, answer, omitted, 1)
	if err != nil {
		t.Fatal(err)
	}
	if c.Measured() != 0 || c.Points[0].ObjectivesReseeded != nil || c.Points[0].CapacityLoadReseeded != nil {
		t.Errorf("check %+v, want nothing measured and no values after", c)
	}
	m.SeedCheck = c
	got := SeedCheckText(rows, m, a, LabelsFor(rows), false)
	// Said once, not once per part of the paragraph.
	if !strings.HasPrefix(got, "Seed check: unchecked: 3 points could not be simulated again under the moved seeds (#1, point a (1 GPU, ") ||
		!strings.HasSuffix(got, ") timed out); rerun the sweep with a longer --timeout to check the answer.") ||
		strings.Count(got, "timed out") != 3 || strings.Contains(got, "cannot be compared") {
		t.Errorf("text %q", got)
	}
	if data, err := ParetoDocument(rows, a, m, nil); err != nil || strings.Contains(string(data), "seed_check_changed") {
		t.Errorf("pareto.json gives a verdict (%v)", err)
	}
}

// The answer's size counts its ties whether or not the cap let them be checked, and a tie is
// named as its entry's.
func TestSeedCheckAnswerSizeAndTies(t *testing.T) {
	rows := []Row{nearTieRow("a", 100, 104, 1000, 0.10), nearTieRow("a2", 100, 104, 1000, 0.10), nearTieRow("b", 100, 104, 800, 0.08)}
	a, err := Analyze(rows, optimization.Settings{Target: optimization.TargetPareto, Objectives: seedObjectives})
	if err != nil {
		t.Fatal(err)
	}
	// As if the cap had stopped after the entries: a2 unchecked.
	c, err := NewSeedCheck(rows, a, []int{0, 2}, map[string]Row{"a": rows[0], "b": nearTieRow("b", 100, 104, 700, 0.12)}, 2, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	if c.AnswerSize != 3 || c.AnswerEntries != 2 {
		t.Errorf("answer size %d, entries %d; want 3 and 2", c.AnswerSize, c.AnswerEntries)
	}
	st := &seedText{c: c, rows: rows, a: a, labels: LabelsFor(rows), byID: map[string]int{"a": 0, "a2": 1, "b": 2}}
	if got := st.rank("a2", false); got != "#1's tie, point a2" {
		t.Errorf("a2 named %q", got)
	}
}

// The lead's count of the answer's points simulated again, for a front with and without ties and
// a scalar target's tied best points; more than three not simulated again are counted, not named.
func TestSeedCheckAnswerPart(t *testing.T) {
	rows, a, _ := seedRows()
	for _, tc := range []struct {
		c      SeedCheck
		ranked bool
		want   string
	}{
		{SeedCheck{AnswerPoints: 2, AnswerSize: 3, AnswerEntries: 3}, false, "2 of the front's 3 entries"},
		{SeedCheck{AnswerPoints: 2, AnswerSize: 4, AnswerEntries: 3}, false, "2 of the front's 4 points (3 entries with their ties)"},
		{SeedCheck{AnswerPoints: 1, AnswerSize: 2, AnswerEntries: 1}, false, "1 of the front's 2 points (1 entry with its ties)"},
		{SeedCheck{AnswerPoints: 2, AnswerSize: 3, AnswerEntries: 1}, true, "2 of the 3 points tied for best"},
	} {
		an := *a
		if tc.ranked {
			an.Ranking = []int{0}
		}
		st := &seedText{c: &tc.c, rows: rows, a: &an, byID: map[string]int{}}
		if got := st.answerPart(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.c, got, tc.want)
		}
	}
	st := &seedText{c: &SeedCheck{}, rows: rows, a: a, byID: map[string]int{}}
	if got := st.unseededNames(5, 2); got != "the answer's other 5 points and 2 more candidates" {
		t.Errorf("unseeded names: %q", got)
	}
	if got := st.unseededNames(0, 1); got != "1 more point" {
		t.Errorf("unseeded names: %q", got)
	}
}

// A scalar target's best point that stops meeting the SLA under the moved seeds, when no other
// point was close enough to be simulated again, is said to drop out among the points simulated
// again only: the others were not compared.
func TestSeedCheckScalarDroppedOut(t *testing.T) {
	rows, _, m := seedRows() // by throughput: a 1000, then b 800, 20 % behind: a alone is checked
	a, err := Analyze(rows, optimization.Settings{Target: optimization.TargetThroughput, Objectives: seedObjectives})
	if err != nil {
		t.Fatal(err)
	}
	idx, answer, omitted := SeedCheckPoints(rows, a, m)
	if got := ids(rows, idx); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("checked %v, want a alone", got)
	}
	gone := nearTieRow("a", 100, 104, 1000, 0.10)
	gone.Status, gone.CapacityLoad = StatusInfeasible, nil
	c, err := NewSeedCheck(rows, a, idx, map[string]Row{"a": gone}, answer, omitted, 1)
	if err != nil {
		t.Fatal(err)
	}
	m.SeedCheck = c
	got := SeedCheckText(rows, m, a, LabelsFor(rows), false)
	for _, want := range []string{"Seed check: the best point, simulated again with every seed it draws from moved by 1: ",
		"none of the points simulated again is best under them: #1, point a (1 GPU, ",
		"dropped out (no other point was simulated again: those behind it were more than 5 % away)"} {
		if !strings.Contains(got, want) {
			t.Errorf("text %q lacks %q", got, want)
		}
	}
}

// TestNearMisses checks which infeasible points a seed check adds: e (1,600 tok/s, p99 ITL 110 ms
// against 100: 10 % past) would beat every point, so it is checked; f missed by 60 % (past
// NearMissBand), g, at 110 ms too, is dominated by a on both objectives, and h missed an
// attainment, not a percentile term.
func TestNearMisses(t *testing.T) {
	rows, _, m := seedRows()
	miss := func(id string, tput, usd, p99 float64, termsMet bool) Row {
		r := nearTieRow(id, 100, 104, tput, usd)
		r.Status, r.CapacityProbes, r.CapacityLoad = StatusInfeasible, nil, nil
		r.P99ITLMs, r.SLAP99ITLMs, r.SLAPercentileTermsMet = f64(p99), f64(100), &termsMet
		if !termsMet {
			r.SLAPercentileTermsFailed = str("p99_itl_ms")
		}
		return r
	}
	rows = append(rows, miss("e", 1600, 0.05, 110, false), miss("f", 1700, 0.05, 160, false), miss("g", 900, 0.11, 110, false),
		miss("h", 1800, 0.04, 90, true))
	for _, target := range []string{optimization.TargetPareto, optimization.TargetThroughput} {
		a, err := Analyze(rows, optimization.Settings{Target: target, Objectives: seedObjectives})
		if err != nil {
			t.Fatal(err)
		}
		if got := ids(rows, nearMisses(rows, a)); !slices.Equal(got, []string{"e"}) {
			t.Errorf("%s: near misses %v, want e", target, got)
		}
		idx, _, _ := SeedCheckPoints(rows, a, m)
		if !slices.Contains(ids(rows, idx), "e") {
			t.Errorf("%s: seed check points %v lack e", target, ids(rows, idx))
		}
	}
}
