package main

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/servesweep/servesweep/results"
	"github.com/servesweep/servesweep/sim/optimization"
)

func TestWrapText(t *testing.T) {
	for _, c := range []struct {
		s     string
		width int
		want  string
	}{
		{"  line    3  short", 40, "  line    3  short"},
		{"aaa bbb ccc ddd", 7, "aaa bbb\n  ccc\n  ddd"},
		{"  a   b", 4, "  a\n  b"},
		{"x " + strings.Repeat("y", 12) + " z", 5, "x\n  " + strings.Repeat("y", 12) + "\n  z"},
		{strings.Repeat("w", 9), 4, strings.Repeat("w", 9)},
		{"moved by 16.29 % now", 15, "moved by\n  16.29 % now"}, // a number keeps its percent sign
	} {
		if got := wrapText(c.s, c.width, "  "); got != c.want {
			t.Errorf("wrapText(%q, %d) = %q, want %q", c.s, c.width, got, c.want)
		}
	}
}

// checkLines fails the test for a stdout line longer than maxLineWidth characters or a number in
// exponent notation (1.412e+04).
func checkLines(t *testing.T, what, out string) {
	t.Helper()
	if strings.TrimSpace(out) == "" {
		t.Fatalf("%s printed nothing", what)
	}
	for _, l := range strings.Split(out, "\n") {
		if runeLen(l) > maxLineWidth {
			t.Errorf("%s: a line of %d characters:\n%s", what, runeLen(l), l)
		}
		if exponent.MatchString(l) {
			t.Errorf("%s: a number in exponent notation:\n%s", what, l)
		}
	}
}

// exponent matches a number in exponent notation.
// (Go's %g writes the exponent's sign and at least two digits; a hex hash such as c322ec76 is not
// one).
var exponent = regexp.MustCompile(`\d(\.\d+)?[eE][+-]\d\d`)

// sweep, report, merge and validate print lines of at most 120 characters and numbers in fixed
// notation, also with objective values above 10,000 (total_throughput_tok_s: 2,048 + 128 tokens
// per request at about 1,700 output tokens/s, above 28,000), an SLA, prices and an output
// directory whose path makes the lines that name it longer than a line (a path longer than a
// line by itself would stay whole).
func TestStdoutLinesShortAndFixed(t *testing.T) {
	dir := filepath.Join(t.TempDir(), strings.Repeat("d", 30))
	sets := []string{"--set", "engine.workers.aggregated.parallelism.tensor={choices: [1, 2]}",
		"--set", "traffic.load.concurrency={choices: [16, 64]}",
		"--set", "evaluation.sla={ttft_ms: 60000, itl_ms: 500}",
		"--set", "optimization.cost.gpu_hour_usd={h200_sxm: 3.5}",
		"--set", "optimization.objectives=[{metric: total_throughput_tok_s, direction: maximize}, " +
			"{metric: usd_per_million_output_tokens, direction: minimize}, {metric: p99_ttft_ms, direction: minimize}]"}
	out := runOK(t, append([]string{"sweep", "-q", "-c", seedConfig, "--output-dir", dir}, sets...)...)
	checkLines(t, "sweep", out)
	if !strings.Contains(out, "total_throughput_tok_s=") || !strings.Contains(out, "SLA") || !strings.Contains(out, "Prices") {
		t.Errorf("the sweep's stdout lacks the front's values, the SLA or the prices:\n%s", out)
	}
	checkLines(t, "report", runOK(t, "report", "--results", dir, "--output-dir", dir+"-report"))
	shared := filepath.Join(t.TempDir(), strings.Repeat("s", 30))
	for _, s := range []string{"0/2", "1/2"} {
		checkLines(t, "sweep --shard "+s, runOK(t, append([]string{"sweep", "-q", "-c", seedConfig, "--output-dir", shared, "--shard", s}, sets...)...))
	}
	checkLines(t, "merge", runOK(t, "merge", "--results", shared))
	checkLines(t, "validate --aiperf", runOK(t, "validate", "--aiperf", aiperfRuns, "-c", seedConfig))
}

// A line the wrapper passes on keeps its indentation and is cut at spaces; JSON is never wrapped.
func TestWrapWriter(t *testing.T) {
	var b strings.Builder
	w := newWrapWriter(&b)
	long := "  " + strings.Repeat("word ", 30) + "end"
	fmt.Fprintf(w, "short\n%s\nunfinished", long)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	if lines[0] != "short" || lines[len(lines)-1] != "unfinished" || len(lines) != 4 {
		t.Fatalf("got %q", b.String())
	}
	if !strings.HasPrefix(lines[1], "  word") || len(lines[1]) > maxLineWidth || !strings.HasPrefix(lines[2], "    word") ||
		strings.Join(strings.Fields(lines[1]+" "+lines[2]), " ") != strings.TrimSpace(long) {
		t.Errorf("wrapped %q into %q", long, lines[1:3])
	}
	doc := runOK(t, "sweep", "--dry-run", "--format", "json")
	if !strings.Contains(doc, `"grid_points"`) || !strings.HasSuffix(doc, "}\n") {
		t.Errorf("--format json: %.200s", doc)
	}
}

// unwrapLines undoes wrapWriter: a line indented two spaces more than the line before it, whose
// first word would not have fitted on that line, is joined back to it.
func unwrapLines(out string) string {
	var joined []string
	indent := func(l string) int { return len(l) - len(strings.TrimLeft(l, " ")) }
	last := "" // the line before, as printed
	for _, l := range strings.Split(out, "\n") {
		if n := len(joined); n > 0 {
			word, _, _ := strings.Cut(strings.TrimLeft(l, " "), " ")
			if word != "" && indent(l) == indent(joined[n-1])+2 && runeLen(last)+1+runeLen(word) > maxLineWidth {
				joined[n-1] += " " + strings.TrimLeft(l, " ")
				last = l
				continue
			}
		}
		joined = append(joined, l)
		last = l
	}
	return strings.Join(joined, "\n")
}

// unwrapLines gives back what the wrapper was given.
func TestUnwrapLines(t *testing.T) {
	in := "head\n" + strings.Repeat("alpha beta ", 30) + "end\n  " + strings.Repeat("gamma ", 40) + "end\n  1: short\n"
	var b strings.Builder
	w := newWrapWriter(&b)
	fmt.Fprint(w, in)
	if b.String() == in || unwrapLines(b.String()) != in {
		t.Errorf("wrapped %q\nunwrapped %q\nwant %q", b.String(), unwrapLines(b.String()), in)
	}
}

// printFront ends with a near tie when a rival's capacity bracket reaches the best value: b's
// 900 tok/s at capacity 50, missed at 60 (59 at most), could be 1,062 against a's 1,000.
func TestPrintFrontNamesANearTie(t *testing.T) {
	f := func(x float64) *float64 { return &x }
	n := func(x int64) *int64 { return &x }
	unit := "concurrency"
	mk := func(id string, lo, miss, tput float64) results.Row {
		return results.Row{PointID: id, Status: results.StatusOK, GPUs: 1, CompletedRequests: n(10), OutputThroughputTokS: f(tput),
			P99TTFTMs: f(100), CapacityLoad: f(lo), CapacityLoadUnit: &unit, LoadConcurrency: n(int64(lo)),
			Probes: []results.ProbeRow{{Load: lo, MeetsSLA: true}, {Load: miss, MeetsSLA: false}}}
	}
	rows := []results.Row{mk("a", 100, 104, 1000), mk("b", 50, 60, 900), mk("c", 200, 205, 800)}
	objs := []optimization.Objective{{Metric: "output_throughput_tok_s", Direction: optimization.Maximize}}
	a, err := results.Analyze(rows, optimization.Settings{Target: optimization.TargetPareto, Objectives: objs})
	if err != nil {
		t.Fatal(err)
	}
	m := &results.Manifest{CapacitySearch: &optimization.CapacitySearch{RelativeTolerance: 0.05}}
	var b strings.Builder
	printFront(&b, rows, a, m, &results.Written{RecommendedRows: a.Front, Recommendations: []string{"r/0001.yaml"}})
	// The sentence is wrapped to the terminal's width: compare it with single spaces.
	want := "Near tie: the highest output_throughput_tok_s (1000, point a) is not settled by the capacity search: 1 other candidate " +
		"could reach it within the brackets their capacities were found in: b (1 GPU, - ) 900, 1062 at the top of its bracket. Choose"
	// One objective: the near tie says what a marginal entry or a contender would.
	if out := strings.Join(strings.Fields(b.String()), " "); !strings.Contains(out, want) || strings.Contains(out, "Marginal:") || strings.Contains(out, "Contenders:") {
		t.Errorf("stdout lacks the near tie %q:\n%s", want, b.String())
	}
}

// printFront warns before the front when a point that could have joined it timed out: "PARTIAL:",
// the point, and the remedy (a longer --timeout, as a resume simulates it again).
func TestPrintFrontWarnsOfTimedOutPoints(t *testing.T) {
	f := func(x float64) *float64 { return &x }
	n := func(x int64) *int64 { return &x }
	rows := []results.Row{
		{PointID: "a", Status: results.StatusOK, GPUs: 2, Hardware: "h200_sxm", Mode: "aggregated", CompletedRequests: n(10),
			OutputThroughputTokS: f(1000)},
		{PointID: "t", Status: results.StatusTimedOut, GPUs: 1, Hardware: "h100_sxm", Mode: "aggregated"},
	}
	objs := []optimization.Objective{{Metric: "output_throughput_tok_s", Direction: optimization.Maximize}}
	a, err := results.Analyze(rows, optimization.Settings{Target: optimization.TargetPareto, Objectives: objs})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	printFront(&b, rows, a, nil, &results.Written{RecommendedRows: a.Front, Recommendations: []string{"r/0001.yaml"}})
	out := strings.Join(strings.Fields(b.String()), " ")
	want := "PARTIAL: 1 point timed out: t (1 GPU, h100_sxm aggregated - ). The answer below is of the 1 point that finished only, " +
		"and could change once it runs: rerun the sweep's command (the same --output-dir) with a longer --timeout: timed-out " +
		"points are simulated again on resume, the finished ones kept. Pareto front: 1 point of 1 candidates"
	if !strings.Contains(out, want) {
		t.Errorf("stdout lacks %q:\n%s", want, b.String())
	}
}

// printFront states the answer's SLA attainment after its entries when per-request bounds are
// enforced by nothing (no capacity search), and says a point under 0.99 can miss the SLA.
func TestPrintFrontStatesAttainment(t *testing.T) {
	f := func(x float64) *float64 { return &x }
	n := func(x int64) *int64 { return &x }
	rows := []results.Row{{PointID: "a", Status: results.StatusOK, GPUs: 2, Hardware: "h200_sxm", Mode: "aggregated", RouterPolicy: "round_robin",
		CompletedRequests: n(10), OutputThroughputTokS: f(1000), SLATTFTMs: f(100), SLAAttainment: f(0)}}
	objs := []optimization.Objective{{Metric: "output_throughput_tok_s", Direction: optimization.Maximize}}
	a, err := results.Analyze(rows, optimization.Settings{Target: optimization.TargetPareto, Objectives: objs})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	printFront(&b, rows, a, &results.Manifest{Settings: a.Settings}, &results.Written{RecommendedRows: a.Front, Recommendations: []string{"r/0001.yaml"}})
	out := strings.Join(strings.Fields(b.String()), " ")
	want := "config: r/0001.yaml SLA attainment of the answer (sla_attainment: the share of each point's offered requests within " +
		"ttft_ms 100): #1 0. 1 of 1 is under 0.99: nothing holds each request to these bounds here (no capacity search), so the " +
		"answer can be a deployment whose requests miss the SLA. To enforce it, use optimization.capacity_search"
	if !strings.Contains(out, want) {
		t.Errorf("stdout lacks %q:\n%s", want, b.String())
	}
}
