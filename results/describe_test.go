package results

import (
	"slices"
	"strings"
	"testing"
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
