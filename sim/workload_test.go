package sim

import (
	"errors"
	"strings"
	"testing"

	"github.com/servesweep/servesweep/sim/config"
	"github.com/servesweep/servesweep/sim/traffic"
)

// Values beyond the simulator's bounds are config errors naming the field and the bound, not
// truncations, panics or runaway allocations.
func TestCheckTrace(t *testing.T) {
	rows := []traffic.TraceRow{
		{Line: 1, InputLength: 10, OutputLength: 5, HasTimestamp: true},
		{Line: 2, SessionID: "a", InputLength: 10, OutputLength: 5},
	}
	err := checkTrace(rows, "t.jsonl", config.LoadTraceTimestamps, true, false)
	var te *traffic.TraceError
	if !errors.As(err, &te) || te.Line != 2 || te.Field != "timestamp" {
		t.Fatalf("missing timestamp: %v", err)
	}
	if err := checkTrace(rows, "t.jsonl", config.LoadConcurrency, true, false); err != nil {
		t.Fatalf("concurrency load needs no timestamps: %v", err)
	}
	rows[0].OutputLength = config.MaxTokensPerRequest + 1
	if err := checkTrace(rows, "t.jsonl", config.LoadConcurrency, true, false); !errors.As(err, &te) || te.Line != 1 || te.Field != "output_length" {
		t.Fatalf("huge output: %v", err)
	}
	rows[0].OutputLength = 5
	rows[1].HasDelay, rows[1].DelayMs = true, 3
	if err := checkTrace(rows, "t.jsonl", config.LoadConcurrency, true, false); !errors.As(err, &te) || te.Field != "delay" {
		t.Fatalf("first-row delay: %v", err)
	}
}

// A run over drawn lengths counts exactly the tokens its workload holds, is reproduced by its
// seed, and changes with it; a mixture of sessions builds every component's turns.
func TestRunDrawnLengths(t *testing.T) {
	run := func(seed int64) *Result {
		cfg := testConfig(0, 0, 300, 8, 4096)
		cfg.Traffic.Source.Seed = &seed
		cfg.Traffic.Source.InputTokensDist = &config.Distribution{Distribution: config.DistLognormal, Min: 16, Max: 2000, Mean: 300, Stddev: 200}
		cfg.Traffic.Source.OutputTokensDist = &config.Distribution{Distribution: config.DistUniform, Min: 4, Max: 40}
		cfg.Traffic.Source.InputTokens, cfg.Traffic.Source.OutputTokens = 300, 22
		return mustRun(t, cfg)
	}
	a, b, c := run(42), run(42), run(43)
	checkConservation(t, a)
	w, err := BuildWorkload(func() *config.Config {
		cfg := testConfig(0, 0, 300, 8, 4096)
		seed := int64(42)
		cfg.Traffic.Source.Seed = &seed
		cfg.Traffic.Source.InputTokensDist = &config.Distribution{Distribution: config.DistLognormal, Min: 16, Max: 2000, Mean: 300, Stddev: 200}
		cfg.Traffic.Source.OutputTokensDist = &config.Distribution{Distribution: config.DistUniform, Min: 4, Max: 40}
		return cfg
	}())
	if err != nil {
		t.Fatal(err)
	}
	var in, out int64
	for _, r := range w.Requests {
		in, out = in+int64(r.PromptLen), out+int64(r.OutputLen)
	}
	if a.Summary.TotalInputTokens != in || a.Summary.TotalOutputTokens != out {
		t.Errorf("run counted %d/%d tokens, workload holds %d/%d", a.Summary.TotalInputTokens, a.Summary.TotalOutputTokens, in, out)
	}
	if a.Summary.TTFT != b.Summary.TTFT || a.Summary.TotalInputTokens != b.Summary.TotalInputTokens {
		t.Error("the same seed gave different runs")
	}
	if a.Summary.TotalInputTokens == c.Summary.TotalInputTokens {
		t.Error("seeds 42 and 43 drew the same prompts")
	}

	cfg := testConfig(0, 0, 0, 4, 4096)
	cfg.Traffic.Stop = config.Stop{Sessions: 40}
	short := &config.Source{Type: config.SourceSyntheticSession, NewInputTokensPerTurn: 64, OutputTokensPerTurn: 8,
		Session: &config.SessionShape{Turns: 2}}
	long := &config.Source{Type: config.SourceSyntheticSession, NewInputTokensPerTurn: 256, OutputTokensPerTurn: 8,
		Session: &config.SessionShape{Turns: 3}}
	cfg.Traffic.Source = config.Source{Type: config.SourceMixture, Components: []config.MixtureComponent{{Weight: 1, Source: short}, {Weight: 1, Source: long}}}
	res := mustRun(t, cfg)
	checkConservation(t, res)
	turns := map[int32]int{}
	for _, s := range res.Workload.Sessions {
		turns[s.Turns]++
	}
	if turns[2]+turns[3] != 40 || turns[2] == 0 || turns[3] == 0 {
		t.Errorf("sessions by turns %v, want 40 of 2 and 3 turns", turns)
	}
	if want := int64(turns[2]*(64+136) + turns[3]*(256+520+784)); res.Summary.TotalInputTokens != want {
		t.Errorf("input tokens %d, want %d", res.Summary.TotalInputTokens, want)
	}
}

// A request needs a prompt: input_length 0 is refused naming its line, except on a later turn of
// a mooncake-delta session, whose prompt holds the previous turn's prompt and output.
func TestCheckTraceEmptyPrompt(t *testing.T) {
	rows := []traffic.TraceRow{
		{Line: 1, SessionID: "a", InputLength: 10, OutputLength: 5, HasTimestamp: true},
		{Line: 2, SessionID: "a", InputLength: 0, OutputLength: 5},
	}
	var te *traffic.TraceError
	if err := checkTrace(rows, "t.jsonl", config.LoadConcurrency, true, false); !errors.As(err, &te) || te.Line != 2 || te.Field != "input_length" {
		t.Fatalf("empty prompt: %v", err)
	}
	if err := checkTrace(rows, "t.jsonl", config.LoadConcurrency, true, true); err != nil {
		t.Fatalf("a later mooncake-delta turn may add no input: %v", err)
	}
	rows[0].InputLength = 0
	if err := checkTrace(rows, "t.jsonl", config.LoadConcurrency, true, true); !errors.As(err, &te) || te.Line != 1 {
		t.Fatalf("a mooncake-delta session's first turn needs a prompt: %v", err)
	}
}

// A later turn whose timestamp goes back before its session's previous turn is refused naming
// both lines; with a delay the delay decides its arrival and the timestamp is not compared.
func TestCheckTraceBackwardTimestamp(t *testing.T) {
	rows := []traffic.TraceRow{
		{Line: 1, SessionID: "a", InputLength: 16, OutputLength: 4, HasTimestamp: true, Timestamp: traffic.TraceTime{Whole: 100}},
		{Line: 2, SessionID: "a", InputLength: 16, OutputLength: 1, HasTimestamp: true, Timestamp: traffic.TraceTime{Whole: 50}},
	}
	var te *traffic.TraceError
	if err := checkTrace(rows, "t.jsonl", config.LoadTraceTimestamps, true, false); !errors.As(err, &te) || te.Line != 2 ||
		te.Field != "timestamp" || !strings.Contains(te.Msg, "line 1") {
		t.Fatalf("backward timestamp: %v", err)
	}
	rows[1].HasDelay, rows[1].DelayMs = true, 5
	if err := checkTrace(rows, "t.jsonl", config.LoadTraceTimestamps, true, false); err != nil {
		t.Fatalf("a delay decides the arrival: %v", err)
	}
}
