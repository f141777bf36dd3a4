package results

import "testing"

// LoadFor names the token counts only when the rows differ in them.
func TestLoadForNamesSweptLengths(t *testing.T) {
	i64 := func(v int64) *int64 { return &v }
	c := int64(8)
	a := Row{LoadConcurrency: &c, SourceInputTokens: i64(512), SourceOutputTokens: i64(128)}
	b := Row{LoadConcurrency: &c, SourceInputTokens: i64(1024), SourceOutputTokens: i64(128)}
	if got := LoadFor(&a, []Row{a, a}); got != "concurrency 8" {
		t.Errorf("same lengths: %q", got)
	}
	if got := LoadFor(&a, []Row{a, b}); got != "concurrency 8, ISL 512 / OSL 128" {
		t.Errorf("swept lengths: %q", got)
	}
	s := Row{LoadConcurrency: &c, SourceNewInputTokensPerTurn: i64(64), SourceOutputTokensPerTurn: i64(16)}
	if got := LoadFor(&s, []Row{s, a}); got != "concurrency 8, 64 new / 16 output tokens a turn" {
		t.Errorf("sessions: %q", got)
	}
}
