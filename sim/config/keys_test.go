package config

import (
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

func parseNode(t *testing.T, text string) *yaml.Node {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Content[0]
}

// CheckKeys reports each unknown or refused key once, with Decode's message for it, in
// document order, including keys in roles the mode does not use, in list elements and in a
// token count's distribution; a close spelling of a valid key is suggested (stdev, tensr), a key
// near none is not (max_batch_tokens, temprature).
func TestCheckKeysMatchesDecode(t *testing.T) {
	text := strings.Replace(seedSynthetic, "  policy: round_robin\n", "  policy: round_robin\n  temprature: 0.5\n", 1)
	text = strings.Replace(text, "replicas: 2, tensor: 1,", "replicas: 2, tensr: 1,", 1)
	text = strings.Replace(text, "    aggregated:\n", "    prefill: {max_batch_tokens: 4096, model: x}\n    aggregated:\n", 1)
	text = strings.Replace(text, "input_tokens: 2048,", "input_tokens: {distribution: normal, mean: 2048, stdev: 8},", 1)
	got := CheckKeys(parseNode(t, text), "c.yaml", nil)
	want := []string{
		"c.yaml: traffic.source.input_tokens.stdev: unknown field; valid fields: distribution, min, max, mean, stddev (did you mean stddev?)",
		"c.yaml: engine.workers.prefill.max_batch_tokens: unknown field; valid fields: hardware, startup_seconds, parallelism, scheduler, kv_cache, timing",
		"c.yaml: engine.workers.prefill.model: per-role overrides are not allowed; set engine.model",
		"c.yaml: engine.workers.aggregated.parallelism.tensr: unknown field; valid fields: replicas, tensor, pipeline, attention_data, moe_tensor, moe_expert, redundant_experts (did you mean tensor?)",
		"c.yaml: router.temprature: unknown field; valid fields: policy, prefill_load_model",
	}
	if got.Error() != strings.Join(want, "\n") {
		t.Errorf("CheckKeys:\n%v\nwant\n%s", got, strings.Join(want, "\n"))
	}
	// Decode, which walks the values too, says the same of each key.
	_, err := Decode([]byte(text), "c.yaml", nil)
	if err == nil {
		t.Fatal("Decode accepted the typos")
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("Decode lacks %q:\n%v", w, err)
		}
	}
	if es := CheckKeys(parseNode(t, seedSynthetic), "c.yaml", nil); es != nil {
		t.Errorf("clean config: %v", es)
	}
}

// A mixture's components are checked element by element; a KeyFilter claims entries, which are
// then neither reported nor entered.
func TestCheckKeysListsAndFilter(t *testing.T) {
	text := strings.Replace(seedSynthetic, "source: {type: synthetic, input_tokens: 2048, output_tokens: 128}",
		"source: {type: mixture, components: [{weight: 1, source: {type: synthetic}}, {wieght: 1, source: {type: synthetic, input_tokns: 4}}]}", 1)
	text = strings.Replace(text, "concurrency: 16}", "concurrency: {choices: [1, 2]}}", 1)
	text = strings.Replace(text, "timing: {type: polynomial}", "timing: {type: polynomial, preset: x}", 1)
	es := CheckKeys(parseNode(t, text), "c.yaml", nil)
	var paths []string
	for _, e := range es {
		paths = append(paths, e.Path)
	}
	want := "traffic.source.components[1].wieght traffic.source.components[1].source.input_tokns engine.workers.aggregated.timing.preset"
	if strings.Join(paths, " ") != want {
		t.Errorf("paths %q, want %q", paths, want)
	}
	var seen []string
	skip := func(path string, n *yaml.Node, known bool) bool {
		if !known || path == "traffic.load.concurrency" {
			seen = append(seen, path)
		}
		return strings.HasSuffix(path, ".preset") || path == "traffic.source.components"
	}
	es = CheckKeys(parseNode(t, text), "c.yaml", skip)
	if es != nil {
		t.Errorf("with the filter: %v", es)
	}
	if strings.Join(seen, " ") != "traffic.load.concurrency engine.workers.aggregated.timing.preset" {
		t.Errorf("filter saw %q", seen)
	}
}

// NearestName suggests the one valid key within two edits and less than half the typed key's
// length, and nothing for a tie or a short key.
func TestNearestKey(t *testing.T) {
	keys := []string{"replicas", "tensor", "pipeline", "attention_data", "moe_tensor", "moe_expert"}
	for _, c := range []struct{ key, want string }{
		{"tensr", "tensor"}, {"atention_data", "attention_data"}, {"moe_tensr", "moe_tensor"},
		{"replica", "replicas"}, {"pipe", ""}, {"tp", ""}, {"moe_xpert", "moe_expert"}, {"foo", ""},
	} {
		if got := NearestName(c.key, keys); got != c.want {
			t.Errorf("NearestName(%q) = %q, want %q", c.key, got, c.want)
		}
	}
	if got := NearestName("ab", []string{"ac", "ad"}); got != "" {
		t.Errorf("a tie or a short key: got %q, want none", got)
	}
}
