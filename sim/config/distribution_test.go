package config

import (
	"reflect"
	"strings"
	"testing"
)

// A token count takes an int or a distribution; the int then holds the distribution's mean,
// rounded: uniform [100, 301] → 200.5 → 201 (half away from zero), normal mean 1000.4 → 1000,
// empirical 100 (weight 3) and 500 (weight 1) → 200.
func TestDistributionDecodes(t *testing.T) {
	c := mustDecode(t, seedSynthetic,
		"traffic.source.input_tokens={distribution: uniform, min: 100, max: 301}",
		"traffic.source.output_tokens={distribution: empirical, values: [100, 500], weights: [3, 1]}",
		"traffic.source.seed=7")
	s := &c.Traffic.Source
	if s.InputTokens != 201 || s.OutputTokens != 200 || *s.Seed != 7 || s.DrawSeed() != 7 {
		t.Errorf("input %d output %d seed %v, want 201, 200, 7", s.InputTokens, s.OutputTokens, s.Seed)
	}
	if want := (Distribution{Distribution: DistUniform, Min: 100, Max: 301}); !reflect.DeepEqual(*s.InputTokensDist, want) {
		t.Errorf("input distribution %+v, want %+v", *s.InputTokensDist, want)
	}
	c = mustDecode(t, seedSynthetic, "traffic.source.input_tokens={distribution: normal, mean: 1000.4, stddev: 80}")
	if d := c.Traffic.Source.InputTokensDist; c.Traffic.Source.InputTokens != 1000 || d.Min != 1 || d.Max != 0 {
		t.Errorf("normal: input %d, min %d (default 1), max %d (0: the token limit)", c.Traffic.Source.InputTokens, d.Min, d.Max)
	}
	if c.Traffic.Source.Seed != nil || c.Traffic.Source.DrawSeed() != DefaultSeed {
		t.Errorf("an omitted seed is nil and draws with %d", DefaultSeed)
	}
	// Sessions take distributions per turn.
	c = mustDecode(t, seedSynthetic, setSession[0], setSession[1],
		"traffic.source.new_input_tokens_per_turn={distribution: lognormal, mean: 512, stddev: 256, max: 4096}")
	if d := c.Traffic.Source.NewInputTokensPerTurnDist; d == nil || d.Distribution != DistLognormal || c.Traffic.Source.NewInputTokensPerTurn != 512 {
		t.Errorf("session distribution %+v, int %d", d, c.Traffic.Source.NewInputTokensPerTurn)
	}
}

// Bad distribution parameters are errors naming the field.
func TestDistributionErrors(t *testing.T) {
	const p = "traffic.source.input_tokens"
	for _, c := range []struct{ set, path, frag string }{
		{"{distribution: normal, mean: 100, stddev: -1}", p + ".stddev", "must be >= 0, got -1"},
		{"{distribution: uniform, min: 300, max: 100}", p + ".min", "must be <= max (100), got 300"},
		{"{distribution: uniform, min: 10}", p + ".max", "required: a uniform distribution draws from [min, max]"},
		{"{distribution: normal, mean: 100}", p + ".stddev", "required: a normal distribution takes mean and stddev"},
		{"{distribution: normal, mean: 50, stddev: 5, min: 60}", p + ".mean", "must be within [min, max] = [60, 16777216], got 50"},
		{"{distribution: empirical, values: [10, 20], weights: [1, 0]}", p + ".weights[1]", "must be > 0, got 0"},
		{"{distribution: empirical, values: [10, 20], weights: [1]}", p + ".weights", "must have one weight per value (2), got 1"},
		{"{distribution: empirical}", p + ".values", "required: an empirical distribution lists at least one token count"},
		{"{distribution: empirical, values: [1, 2], weights: [1e308, 1e308]}", p + ".weights", "must sum to a finite number"},
		{"{distribution: empirical, values: [1, 99999999999]}", p + ".values[1]", "must be <= 16777216, got 99999999999"},
		{"{distribution: zipf}", p + ".distribution", "must be one of uniform, normal, lognormal, empirical"},
		{"{mean: 5}", p, "must be an int or a distribution {distribution: uniform|normal|lognormal|empirical, ...}"},
		{"{distribution: uniform, min: 1, max: 2, mean: 3}", p, "does not accept [mean]"},
	} {
		wantError(t, decodeErrs(t, seedSynthetic, p+"="+c.set), c.path, c.frag)
	}
}

// A mixture of synthetic sources; its components' errors name their list index.
func TestMixture(t *testing.T) {
	const mix = "traffic.source={type: mixture, seed: 3, components: [" +
		"{weight: 3, source: {type: synthetic, input_tokens: 512, output_tokens: 64}}, " +
		"{weight: 1, source: {input_tokens: {distribution: uniform, min: 4000, max: 8000}}}]}"
	c := mustDecode(t, seedSynthetic, mix)
	s := &c.Traffic.Source
	if len(s.Components) != 2 || s.Components[0].Weight != 3 || s.Components[1].Source.Type != SourceSynthetic ||
		s.Components[1].Source.InputTokens != 6000 || s.Components[1].Source.OutputTokens != 128 || s.DrawSeed() != 3 {
		t.Errorf("mixture %+v, second source %+v", s, s.Components[1].Source)
	}
	const src = "traffic.source="
	for _, c := range []struct{ set, path, frag string }{
		{src + "{type: mixture}", "traffic.source.components", "required: a mixture lists at least one component"},
		{src + "{type: mixture, components: [{weight: 0, source: {}}]}", "traffic.source.components[0].weight", "must be > 0, got 0"},
		{src + "{type: mixture, components: [{weight: 1}]}", "traffic.source.components[0].source", "required: a synthetic or synthetic-session source"},
		{src + "{type: mixture, components: [{weight: 1, source: {type: trace, paths: [a.jsonl]}}]}", "traffic.source.components[0].source.type",
			"a mixture component is a synthetic or synthetic-session source, got trace"},
		{src + "{type: mixture, components: [{weight: 1, source: {}}, {weight: 1, source: {type: synthetic-session, session: {turns: 2}}}]}",
			"traffic.source.components[1].source.type", "every component of a mixture has the same type (component 0 is synthetic)"},
		{src + "{type: mixture, components: [{weight: 1, source: {seed: 5}}]}", "traffic.source.components[0].source.seed", "the mixture's traffic.source.seed"},
		{src + "{type: mixture, components: [{weight: 1, source: {input_tokens: 0}}]}", "traffic.source.components[0].source.input_tokens", "must be an int > 0, got 0"},
		{src + "{type: mixture, components: {weight: 1}}", "traffic.source.components", "must be a list of mappings"},
		{src + "{type: mixture, components: [{weight: 1, source: {type: synthetic-session}}]}", "traffic.source.components[0].source.session", "required for synthetic-session sources"},
	} {
		wantError(t, decodeErrs(t, seedSynthetic, c.set), c.path, c.frag)
	}
}

func TestLookupThroughListsAndDistributions(t *testing.T) {
	for _, c := range []struct {
		path  string
		ok    bool
		sweep bool
	}{
		{"traffic.source.input_tokens.mean", true, true},
		{"traffic.source.input_tokens.values", true, false},
		{"traffic.source.components[0].weight", true, true},
		{"traffic.source.components[12].source.output_tokens.stddev", true, true},
		{"traffic.source.components[].weight", true, true},
		{"traffic.source.components[x].weight", false, false},
		{"traffic.source.components.weight", false, false},
		{"traffic.source.components[0]", false, false},
		{"traffic.load.concurrency.mean", false, false},
	} {
		f, ok := Lookup(c.path)
		if ok != c.ok || f.Sweep != c.sweep {
			t.Errorf("Lookup(%s) = ok %v sweep %v, want %v %v", c.path, ok, f.Sweep, c.ok, c.sweep)
		}
	}
}

// wantError fails t unless errs holds an error at path whose message contains frag.
func wantError(t *testing.T, errs Errors, path, frag string) {
	t.Helper()
	for _, e := range errs {
		if e.Path == path && strings.Contains(e.Msg, frag) {
			return
		}
	}
	t.Errorf("errors %v, want %s: ...%s", errs, path, frag)
}
