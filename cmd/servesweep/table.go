package main

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/servesweep/servesweep/sim/metrics"
)

// tableFamilies are the distribution rows of the console table, in order (dynosim-spec.md §4.4).
var tableFamilies = map[string]bool{
	"ttft_ms": true, "ttst_ms": true, "e2e_latency_ms": true, "itl_ms": true, "output_token_throughput_per_user": true,
}

// throughputFamily is the distribution row that is a throughput (shown as N/A with the scalar
// throughputs when the run's duration is floored).
const throughputFamily = "output_token_throughput_per_user"

// writeTable prints the AIPerf-style console summary of dynosim-spec.md §4.4: a box table of the
// latency distributions (avg, min, max, p99, p90, p75, std) and the scalar throughputs, then the
// wall time and prefix reuse lines, and with percentile bounds in evaluation.sla which it met. A distribution with no sample shows N/A (prediction.json
// keeps the reference's 0.0 beside its sample count). When the run took under the 1e-9 s floor
// of the rates (metrics.DurationFloored) every throughput row, per-user included, shows N/A.
func writeTable(w io.Writer, s *metrics.Summary) {
	header := []string{"Metric", "avg", "min", "max", "p99", "p90", "p75", "std"}
	floored := s.ThroughputsFloored()
	rows := [][]string{}
	for _, f := range s.Families() {
		if !tableFamilies[f.Suffix] {
			continue
		}
		st := f.Stats
		if st.Samples == 0 || floored && f.Suffix == throughputFamily {
			nan := math.NaN()
			st = metrics.Stats{Mean: nan, Min: nan, Max: nan, P99: nan, P90: nan, P75: nan, Std: nan}
		}
		rows = append(rows, []string{f.Label, num(st.Mean), num(st.Min), num(st.Max), num(st.P99), num(st.P90), num(st.P75), num(st.Std)})
	}
	scalar := func(label string, v float64) {
		rows = append(rows, []string{label, num(v), "N/A", "N/A", "N/A", "N/A", "N/A", "N/A"})
	}
	rate := func(v float64) float64 {
		if floored {
			return math.NaN()
		}
		return v
	}
	scalar("Output Token Throughput (tokens/sec)", rate(s.OutputThroughputTokS))
	scalar("Request Throughput (requests/sec)", rate(s.RequestThroughputRPS))
	scalar("Request Count (requests)", float64(s.CompletedRequests))
	// prediction.json always carries power_w and power_coverage (null: no power model), so the
	// power rows are shown, as N/A (dynosim-spec.md §4.4).
	scalar("Active Power per GPU (W)", math.NaN())
	scalar("Power Data Coverage (%)", math.NaN())

	widths := make([]int, len(header))
	for i, h := range header {
		widths[i] = utf8.RuneCountInString(h)
	}
	for _, r := range rows {
		for i, c := range r {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	line := func(left, mid, right string) string {
		parts := make([]string, len(widths))
		for i, wd := range widths {
			parts[i] = strings.Repeat("━", wd+2)
		}
		return left + strings.Join(parts, mid) + right
	}
	cells := func(r []string) string {
		parts := make([]string, len(r))
		for i, c := range r {
			pad := strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c))
			if i == 0 {
				parts[i] = " " + c + pad + " "
			} else {
				parts[i] = " " + pad + c + " "
			}
		}
		return "┃" + strings.Join(parts, "┃") + "┃"
	}
	fmt.Fprintln(w, "NVIDIA AIPerf | LLM Metrics")
	fmt.Fprintln(w, line("┏", "┳", "┓"))
	fmt.Fprintln(w, cells(header))
	fmt.Fprintln(w, line("┡", "╇", "┩"))
	for _, r := range rows {
		fmt.Fprintln(w, cells(r))
	}
	fmt.Fprintln(w, line("└", "┴", "┘"))
	fmt.Fprintf(w, "Wall Time (ms): %s\n", num(s.WallTimeMs))
	fmt.Fprintf(w, "Prefix Cache Reused Ratio: %s\n", num(s.PrefixCacheReusedRatio))
	fmt.Fprintf(w, "First Admission Prefix Cache Reused Ratio: %s\n", num(s.FirstAdmissionPrefixCacheReusedRatio))
	if line := requestOutcomesLine(s); line != "" {
		fmt.Fprintln(w, line)
	}
	if len(s.SLATerms) > 0 {
		fmt.Fprintln(w, slaTermsLine(s.SLATerms))
	}
}

// requestOutcomesLine counts the requests the table's rows leave out or shorten, "" when there
// are none: rejected at arrival and unfinished when the run stopped (excluded from every row;
// Request Count is the completed ones), and completed ones truncated short of their requested
// output (counted, with the shorter output). The stderr warnings give the reasons; this line keeps
// the counts beside the figures they qualify when stderr is not kept, e.g.
// "Request Outcomes: 320 offered, 308 completed (2 truncated: 183 output tokens not generated), 12 rejected (excluded from every metric)".
func requestOutcomesLine(s *metrics.Summary) string {
	if s.RejectedRequests == 0 && s.UnfinishedRequests == 0 && s.TruncatedRequests == 0 {
		return ""
	}
	completed := fmt.Sprintf("%d completed", s.CompletedRequests)
	if s.TruncatedRequests > 0 {
		completed += fmt.Sprintf(" (%d truncated: %d output tokens not generated)", s.TruncatedRequests, s.TruncatedOutputTokens)
	}
	parts := []string{fmt.Sprintf("%d offered", s.NumRequests), completed}
	var left []string
	if s.RejectedRequests > 0 {
		left = append(left, fmt.Sprintf("%d rejected", s.RejectedRequests))
	}
	if s.UnfinishedRequests > 0 {
		left = append(left, fmt.Sprintf("%d unfinished", s.UnfinishedRequests))
	}
	if len(left) > 0 {
		parts = append(parts, strings.Join(left, ", ")+" (excluded from every metric)")
	}
	return "Request Outcomes: " + strings.Join(parts, ", ")
}

// slaTermsLine says how the run fared against the percentile bounds of evaluation.sla, e.g.
// "SLA percentile bounds: missed p99_itl_ms 45.2 > 40; met p99_ttft_ms".
func slaTermsLine(terms []metrics.TermResult) string {
	var met []string
	for _, r := range terms {
		if r.Met {
			met = append(met, r.Term.Key())
		}
	}
	var parts []string
	if failed := metrics.DescribeFailed(terms); failed != "" {
		parts = append(parts, "missed "+failed)
	}
	if len(met) > 0 {
		parts = append(parts, "met "+strings.Join(met, ", "))
	}
	return "SLA percentile bounds: " + strings.Join(parts, "; ")
}

// num formats v with two decimals and a thousands separator (1,390.00); non-finite prints N/A.
func num(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "N/A"
	}
	s := strconv.FormatFloat(math.Abs(v), 'f', 2, 64)
	intPart, frac := s[:len(s)-3], s[len(s)-3:]
	var b strings.Builder
	if v < 0 && s != "0.00" {
		b.WriteByte('-')
	}
	for i, c := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	b.WriteString(frac)
	return b.String()
}
