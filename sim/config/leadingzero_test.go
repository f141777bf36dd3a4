package config

import (
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// LeadingZeroNumeral flags the plain numerals yaml.v3 would read as octal (or, with an 8 or 9,
// as a decimal float) and nothing else; the octal values are YAML's own reading.
func TestLeadingZeroNumeral(t *testing.T) {
	for _, c := range []struct{ yaml, want string }{
		{"x: 010", "010, whose leading zero makes YAML read it as octal (8); write 10, or 0o10 for an octal number"},
		{"x: 0256", "0256, whose leading zero makes YAML read it as octal (174); write 256, or 0o256 for an octal number"},
		{"x: -010", "-010, whose leading zero makes YAML read it as octal (-8); write -10, or -0o10 for an octal number"},
		{"x: +010", "+010, whose leading zero makes YAML read it as octal (8); write 10, or 0o10 for an octal number"},
		{"x: 0_10", "0_10, whose leading zero makes YAML read it as octal (8); write 10, or 0o10 for an octal number"},
		{"x: 0258", "0258, a number with a leading zero; write 258"},
		{"x: 00", "00, whose leading zero makes YAML read it as octal (0); write 0, or 0o0 for an octal number"},
		{"x: 0", ""}, {"x: 10", ""}, {"x: 0.5", ""}, {"x: 00.5", ""}, {"x: 1e3", ""}, {"x: 0x1F", ""}, {"x: 0o17", ""},
		{"x: 0b101", ""}, {"x: '010'", ""}, {`x: "010"`, ""}, {"x: abc", ""}, {"x: --010", ""}, {"x: [010]", ""},
		{"x: !!int 010", "010, whose leading zero makes YAML read it as octal (8); write 10, or 0o10 for an octal number"},
		{"x: !!float 010", "010, a number with a leading zero; write 10"},
		{"x: !!str 010", ""}, {"x: _010", ""}, {"x: 007.5", ""}, {"x: |\n  010\n", ""},
	} {
		var doc yaml.Node
		if err := yaml.Unmarshal([]byte(c.yaml), &doc); err != nil {
			t.Fatalf("%s: %v", c.yaml, err)
		}
		if got := LeadingZeroNumeral(doc.Content[0].Content[1]); got != c.want {
			t.Errorf("%s: %q, want %q", c.yaml, got, c.want)
		}
	}
}

// A config int or float written with a leading zero is refused, naming the field and what to
// write; the YAML 1.2 octal form 0o10 is an int like any other.
func TestDecodeRefusesLeadingZeroNumbers(t *testing.T) {
	base := `engine: {model: meta-llama/Llama-3.1-8B-Instruct, hardware: h100_sxm,
  workers: {aggregated: {scheduler: {max_sequences: %s}, kv_cache: {capacity: {type: default, memory_fraction: %s}}}}}
traffic:
  source: {type: synthetic, input_tokens: 128, output_tokens: 16}
  load: {type: concurrency, concurrency: 4}
  stop: {requests: 10}
`
	doc := func(seqs, frac string) []byte {
		return []byte(strings.Replace(strings.Replace(base, "%s", seqs, 1), "%s", frac, 1))
	}
	for _, c := range []struct{ seqs, frac, path, msg string }{
		{"010", "0.9", "engine.workers.aggregated.scheduler.max_sequences", "got 010, whose leading zero makes YAML read it as octal (8)"},
		{"8", "01", "engine.workers.aggregated.kv_cache.capacity.memory_fraction", "got 01, whose leading zero makes YAML read it as octal (1)"},
	} {
		if _, err := Decode(doc(c.seqs, c.frac), "x.yaml", nil); err == nil || !strings.Contains(err.Error(), c.path) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("max_sequences %s, memory_fraction %s: %v, want %s: ...%s", c.seqs, c.frac, err, c.path, c.msg)
		}
	}
	cfg, err := Decode(doc("0o10", "0.9"), "x.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := cfg.Engine.Workers.Aggregated.Scheduler.MaxSequences; n != 8 {
		t.Errorf("0o10 decoded as %d, want 8", n)
	}
}
