package results

import (
	"slices"
	"strings"
	"testing"

	"github.com/servesweep/servesweep/sim/optimization"
)

// Every numeric column, the set CheckMetric accepts, has a unit rule or entry and a meaning, and
// Metrics lists exactly those columns in file order.
func TestMetricsDescribeEveryNumericColumn(t *testing.T) {
	var names []string
	for _, m := range Metrics() {
		names = append(names, m.Name)
		if _, _, ok := describeColumn(m.Name); !ok || m.Meaning == "" {
			t.Errorf("column %s has no description", m.Name)
		}
		if err := CheckMetric(m.Name); err != nil {
			t.Errorf("listed metric %s is refused: %v", m.Name, err)
		}
	}
	if want := NumericColumns(); !slices.Equal(names, want) {
		t.Errorf("Metrics lists %d names, NumericColumns %d:\n%v\n%v", len(names), len(want), names, want)
	}
	for _, name := range HostTimeColumns() {
		if err := CheckMetric(name); err == nil || !strings.Contains(err.Error(), "measures the host") {
			t.Errorf("CheckMetric(%s) = %v; a host-time column cannot rank deployments", name, err)
		}
	}
	if err := CheckMetric("mode"); err == nil || err.Error() != `column "mode" holds string values, not numbers, so it cannot rank `+
		"deployments; use a numeric column such as output_throughput_per_gpu_tok_s or p99_ttft_ms (servesweep list metrics prints them all)" {
		t.Errorf("CheckMetric(mode) = %v; the string column is to be named as not numeric", err)
	}
	if err := CheckMetric("nosuch"); err == nil || !strings.HasPrefix(err.Error(), `unknown metric "nosuch"`) {
		t.Errorf("CheckMetric(nosuch) = %v", err)
	}
	// No table entry is left over from a column that is gone.
	for name := range otherColumns {
		if !slices.Contains(names, name) && !slices.Contains(HostTimeColumns(), name) {
			t.Errorf("otherColumns describes %s, which is not a numeric column", name)
		}
	}
}

// The naming rules give the expected unit and meaning.
func TestMetricsRules(t *testing.T) {
	for _, c := range []struct{ name, unit, meaning string }{
		{"p99_ttft_ms", "ms", "99th percentile of time to first token"},
		{"std_itl_ms", "ms", "standard deviation of inter-token latency (every gap of every request)"},
		{"median_output_token_throughput_per_user_tok_s", "tokens/s", "median of output tokens per second one user sees"},
		{"decode_kv_capacity_blocks", "KV blocks", "decode: KV cache capacity per attention-DP rank"},
		{"sla_p95_itl_ms", "ms", "evaluation.sla bound on the run's 95th percentile ITL"},
		{"sla_ttft_ms", "ms", "evaluation.sla bound on each request's TTFT"},
		{"usd_per_million_output_tokens", "USD per 1M output tokens", "cost of a million output tokens"},
	} {
		unit, meaning, ok := describeColumn(c.name)
		if !ok || unit != c.unit || meaning != c.meaning {
			t.Errorf("%s: got (%q, %q, %v), want (%q, %q)", c.name, unit, meaning, ok, c.unit, c.meaning)
		}
	}
}

// BetterDirection knows the better direction of latencies, costs and failure counts (lower) and
// of throughputs, goodput, attainment and capacities (higher), and none of a setting or a run's
// size; every column its tables name is a numeric column, so a renamed column cannot drop out
// of them unseen.
func TestBetterDirection(t *testing.T) {
	for metric, want := range map[string]optimization.Direction{
		"p99_ttft_ms": optimization.Minimize, "mean_e2e_latency_ms": optimization.Minimize, "std_itl_ms": optimization.Minimize,
		"median_output_token_throughput_per_user_tok_s": optimization.Maximize,
		"output_throughput_tok_s":                       optimization.Maximize, "goodput_output_throughput_per_gpu_tok_s": optimization.Maximize,
		"sla_attainment": optimization.Maximize, "capacity_load": optimization.Maximize, "decode_kv_capacity_blocks": optimization.Maximize,
		"cost_usd_per_hour": optimization.Minimize, "rejected_requests": optimization.Minimize, "unfinished_requests": optimization.Minimize,
		"gpus": "", "load_concurrency": "", "sla_p99_ttft_ms": "", "agg_tensor": "", "num_requests": "", "duration_ms": "",
	} {
		got, ok := BetterDirection(metric)
		if got != want || ok != (want != "") {
			t.Errorf("BetterDirection(%s) = %q, %v; want %q", metric, got, ok, want)
		}
	}
	for _, name := range append(slices.Clone(lowerIsBetter), higherIsBetter...) {
		if !slices.Contains(NumericColumns(), name) {
			t.Errorf("%s is not a numeric column", name)
		}
	}
}

// An objective whose direction is the opposite of its metric's better one is described with the
// metric's meaning; one in the better direction, or on a metric without one, is not.
func TestReversedObjective(t *testing.T) {
	got := ReversedObjective(optimization.Objective{Metric: "p99_ttft_ms", Direction: optimization.Maximize})
	want := "maximize p99_ttft_ms, but a lower p99_ttft_ms (99th percentile of time to first token) is better, so this objective " +
		"favours the deployments that do worst on it"
	if got != want {
		t.Errorf("max p99_ttft_ms: %q\nwant %q", got, want)
	}
	got = ReversedObjective(optimization.Objective{Metric: "output_throughput_tok_s", Direction: optimization.Minimize})
	want = "minimize output_throughput_tok_s, but a higher output_throughput_tok_s (output tokens per second) is better, so this " +
		"objective favours the deployments that do worst on it"
	if got != want {
		t.Errorf("min output_throughput_tok_s: %q\nwant %q", got, want)
	}
	for _, o := range []optimization.Objective{{Metric: "p99_ttft_ms", Direction: optimization.Minimize},
		{Metric: "gpus", Direction: optimization.Maximize}, {Metric: "gpus", Direction: optimization.Minimize}} {
		if got := ReversedObjective(o); got != "" {
			t.Errorf("%s: %q, want none", o, got)
		}
	}
}
