package optimization

import "testing"

// Directions parse in both spellings and compare strictly; every scalar target ranks by a column
// with a direction, and only the goodput targets and min_gpus need an SLA.
func TestDirectionsAndTargets(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Direction
	}{{"max", Maximize}, {"maximize", Maximize}, {"min", Minimize}, {"minimize", Minimize}} {
		if d, err := ParseDirection(c.in); err != nil || d != c.want {
			t.Errorf("ParseDirection(%q) = %q, %v", c.in, d, err)
		}
	}
	if _, err := ParseDirection("up"); err == nil {
		t.Error("ParseDirection accepted up")
	}
	if !Maximize.Better(2, 1) || Maximize.Better(1, 1) || !Minimize.Better(1, 2) || Minimize.Better(2, 2) {
		t.Error("Better is not a strict comparison in the objective's direction")
	}
	if (Objective{Metric: "p99_ttft_ms", Direction: Minimize}).String() != "min:p99_ttft_ms" {
		t.Error("Objective.String does not render the --objective form")
	}
	needs := 0
	for _, target := range Targets() {
		if err := CheckTarget(target); err != nil {
			t.Errorf("CheckTarget(%s): %v", target, err)
		}
		o, ok := TargetObjective(target)
		if ok == (target == TargetPareto) || ok && (o.Metric == "" || o.Direction == "") {
			t.Errorf("TargetObjective(%s) = %+v, %v", target, o, ok)
		}
		if NeedsSLA(target) {
			needs++
		}
	}
	if needs != 3 || CheckTarget("") != nil || CheckTarget("fastest") == nil {
		t.Errorf("%d targets need an SLA (want 3: goodput, goodput_per_gpu, min_gpus), or CheckTarget misjudges \"\" or fastest", needs)
	}
}
