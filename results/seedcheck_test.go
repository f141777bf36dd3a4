package results

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/servesweep/servesweep/sim/optimization"
)

// seedRows are a front of a (1000 tok/s at 0.10 USD per M) and b (800 at 0.08) above c (700 at
// 0.09, dominated by b), each found at a capacity whose bracket is 3 % (met at 100, missed at
// 104): c cannot reach b within it (700 × 1.03 < 800), so the answer is a and b alone.
func seedRows() ([]Row, *Analysis, *Manifest) {
	rows := []Row{nearTieRow("a", 100, 104, 1000, 0.10), nearTieRow("b", 100, 104, 800, 0.08), nearTieRow("c", 100, 104, 700, 0.09)}
	objs := []optimization.Objective{{Metric: "output_throughput_tok_s", Direction: optimization.Maximize},
		{Metric: "usd_per_million_output_tokens", Direction: optimization.Minimize}}
	a, err := Analyze(rows, optimization.Settings{Target: optimization.TargetPareto, Objectives: objs})
	if err != nil {
		panic(err)
	}
	return rows, a, &Manifest{CapacitySearch: &optimization.CapacitySearch{RelativeTolerance: 0.05, Min: 1, Max: 4096}}
}

func TestSeedCheckHeld(t *testing.T) {
	rows, a, m := seedRows()
	idx, answer, omitted := SeedCheckPoints(rows, a, m)
	if !slices.Equal(idx, []int{0, 1}) || answer != 2 || omitted != 0 {
		t.Fatalf("points %v (answer %d, omitted %d), want the front a, b", idx, answer, omitted)
	}
	// Under the moved seeds a makes 1 % more and b 1 % less at a capacity 2 % lower: the front holds.
	a2, b2 := nearTieRow("a", 100, 104, 1010, 0.10), nearTieRow("b", 98, 104, 792, 0.08)
	c, err := NewSeedCheck(rows, a, idx, map[string]Row{"a": a2, "b": b2}, answer, omitted, 1)
	if err != nil {
		t.Fatal(err)
	}
	if c.Changed() || !slices.Equal(c.Answer, []string{"a", "b"}) || c.AnswerPoints != 2 || c.Unseeded != 0 {
		t.Errorf("check %+v, want the front a, b held", c)
	}
	if got := c.LargestChange(); math.Abs(got-0.02) > 1e-12 {
		t.Errorf("largest change %g, want 0.02 (b's capacity 100 → 98)", got)
	}
	if p := c.Points[0]; math.Abs(p.LargestChange-0.01) > 1e-12 || *p.CapacityLoad != 100 || *p.CapacityLoadReseeded != 100 ||
		p.Objectives[0] != 1000 || p.ObjectivesReseeded[0] != 1010 {
		t.Errorf("point a %+v, want throughput 1000 → 1010 at capacity 100", p)
	}
	m.SeedCheck = c
	m.Settings = a.Settings
	got := SeedCheckText(m, a, false)
	for _, want := range []string{"Seed check: the front's 2 points, simulated again with every seed moved by 1",
		": the front's values moved by at most 2 %; the front is the same 2 deployments."} {
		if !strings.Contains(got, want) {
			t.Errorf("text %q lacks %q", got, want)
		}
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
		len(doc.SeedCheck.Points) != 2 {
		t.Errorf("pareto.json seed check %+v (changed %v, %v)", doc.SeedCheck, doc.Changed, err)
	}
}

func TestSeedCheckChanged(t *testing.T) {
	rows, a, m := seedRows()
	idx, answer, omitted := SeedCheckPoints(rows, a, m)
	// Under the moved seeds b falls below c (650 tok/s at 0.095): b leaves the front, c joins it.
	c, err := NewSeedCheck(rows, a, idx, map[string]Row{"b": nearTieRow("b", 100, 104, 650, 0.095)}, answer, omitted, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !c.Changed() || !slices.Equal(c.AnswerReseeded, []string{"a", "c"}) || c.Unseeded != 1 || len(c.Points) != 1 || c.AnswerPoints != 1 {
		t.Errorf("check %+v, want the front a, c with a unseeded", c)
	}
	m.SeedCheck = c
	m.Settings = a.Settings
	got := SeedCheckText(m, a, true)
	for _, want := range []string{"the front's 1 point, simulated again", "(1 more draw nothing at random)",
		"the front changed: `b` left it, `c` joined it.", "choose among them on other grounds"} {
		if !strings.Contains(got, want) {
			t.Errorf("text %q lacks %q", got, want)
		}
	}
	// Another analysis (other objectives) has another answer: the check does not speak for it.
	other, err := Analyze(rows, optimization.Settings{Target: optimization.TargetPareto,
		Objectives: []optimization.Objective{{Metric: "output_throughput_tok_s", Direction: optimization.Maximize}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := SeedCheckText(m, other, false); !strings.Contains(got, "covers its own settings' answer, not this one's") {
		t.Errorf("text for other settings: %q", got)
	}
	if got := SeedCheckText(&Manifest{}, a, false); got != "" {
		t.Errorf("text without a seed check: %q", got)
	}
}

// A scalar target's answer is its best point; a contender within its bracket is checked too.
func TestSeedCheckScalar(t *testing.T) {
	rows, _, m := seedRows()
	rows[2] = nearTieRow("c", 100, 110, 990, 0.09) // within a's reach: 990 × 1.09 > 1000
	a, err := Analyze(rows, optimization.Settings{Target: optimization.TargetThroughput,
		Objectives: []optimization.Objective{{Metric: "output_throughput_tok_s", Direction: optimization.Maximize}}})
	if err != nil {
		t.Fatal(err)
	}
	idx, answer, _ := SeedCheckPoints(rows, a, m)
	if len(idx) < 2 || rows[idx[0]].PointID != "a" || answer != 1 || !slices.ContainsFunc(idx, func(i int) bool { return rows[i].PointID == "c" }) {
		t.Fatalf("points %v (answer %d), want a then its near tie's rival c", idx, answer)
	}
	c, err := NewSeedCheck(rows, a, idx, map[string]Row{"a": rows[0], "c": nearTieRow("c", 90, 110, 1005, 0.09)}, answer, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	m.SeedCheck, m.Settings = c, a.Settings
	if got := SeedCheckText(m, a, false); !c.Changed() || !strings.Contains(got, "the best point and 1 candidate that could displace it") ||
		!strings.Contains(got, "the best point's values moved by at most 0 %, the candidates' by at most 10 % (c's capacity: 100 → 90)") ||
		!strings.Contains(got, "the best point changed from a to c") {
		t.Errorf("changed %v, text %q", c.Changed(), got)
	}
}

func TestSeedCheckPointsBound(t *testing.T) {
	var rows []Row
	for i := range MaxSeedCheckPoints + 5 {
		// Each trades throughput for cost: all on the front.
		rows = append(rows, nearTieRow(strings.Repeat("p", i+1), 100, 104, float64(1000+i), 0.1+0.001*float64(i)))
	}
	objs := []optimization.Objective{{Metric: "output_throughput_tok_s", Direction: optimization.Maximize},
		{Metric: "usd_per_million_output_tokens", Direction: optimization.Minimize}}
	a, err := Analyze(rows, optimization.Settings{Target: optimization.TargetPareto, Objectives: objs})
	if err != nil {
		t.Fatal(err)
	}
	idx, answer, omitted := SeedCheckPoints(rows, a, nil)
	if len(idx) != MaxSeedCheckPoints || answer != MaxSeedCheckPoints || omitted != 5 || rows[idx[0]].PointID != strings.Repeat("p", MaxSeedCheckPoints+5) {
		t.Errorf("%d points (answer %d, omitted %d), first %s; want the %d best by throughput and 5 omitted",
			len(idx), answer, omitted, rows[idx[0]].PointID, MaxSeedCheckPoints)
	}
}
