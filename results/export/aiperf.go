package export

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/servesweep/servesweep/sim/config"
)

// aiperf returns aiperf.sh: one `aiperf profile` command that sends the simulated workload to
// the deployment (flag names of AIPerf's `profile` command-line reference). Lengths the
// simulator draws from a distribution AIPerf does not have are sent with the same mean and
// standard deviation, and the script says so; a workload AIPerf cannot send at all is an error.
func (x *exporter) aiperf() File {
	t := &x.cfg.Traffic
	var notes []string
	args := []arg{
		{"--model", x.model},
		{"--tokenizer", x.model},
		{"--url", x.url},
		{"--endpoint-type", "chat"},
		{"--streaming", ""},
	}
	src := &t.Source
	switch src.Type {
	case config.SourceTrace:
		args, notes = x.aiperfTrace(args, notes)
	case config.SourceMixture:
		args, notes = x.aiperfMixture(args, notes)
	case config.SourceSyntheticSession:
		args, notes = x.aiperfSessions(args, notes)
	default:
		a, n := lengthArgs("traffic.source.input_tokens", src.InputTokens, src.InputTokensDist,
			"--synthetic-input-tokens-mean", "--synthetic-input-tokens-stddev")
		args, notes = append(args, a...), append(notes, n...)
		a, n = lengthArgs("traffic.source.output_tokens", src.OutputTokens, src.OutputTokensDist,
			"--output-tokens-mean", "--output-tokens-stddev")
		args, notes = append(args, a...), append(notes, n...)
	}
	if src.Type != config.SourceTrace {
		// Each request generates exactly its requested output, as in the simulation.
		args = append(args, arg{"--extra-inputs", "ignore_eos:true"}, arg{"--random-seed", fmt.Sprint(src.DrawSeed())})
	}
	args = x.aiperfLoad(args)
	if n := steadyWindowNote(&t.Load); n != "" {
		notes = append(notes, n)
	}
	if n := x.engineWorkers(); n > 1 && !x.urlGiven {
		notes = append(notes, fmt.Sprintf("--url %s is the first worker's port: the simulated load is spread over the %d workers "+
			"the launch script starts (PORT=8000, 8001, ...); put a round-robin load balancer in front of them and pass its "+
			"address (servesweep export --url HOST:PORT), or this benchmark loads one worker with all of it.", x.url, n))
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "#!/bin/sh\n# AIPerf benchmark of the workload simulated for %s (servesweep export).\n", x.sourceName())
	score := "servesweep validate --aiperf artifacts/ -c " + shellQuote(x.sourceName())
	for _, set := range x.cfg.Sets {
		// The deployment exported is the file with its overrides: scoring it simulates the same.
		score += " --set " + shellQuote(set)
	}
	fmt.Fprintf(&b, "# Score the run against the prediction:\n#   %s\n", score)
	for _, n := range notes {
		b.WriteString("# " + n + "\n")
	}
	shellCommand(&b, []string{"aiperf", "profile"}, args)
	return File{Name: AIPerfFile, Data: b.Bytes(), Executable: true}
}

// steadyWindowNote says, for a load that leaves requests out of the prediction's statistics
// (warmup_seconds, cooldown), that AIPerf's summary counts them and how validate compares the
// two; "" for a load that counts every request. AIPerf's own warm-up phase (--warmup-*) is not
// the same window: it drains before profiling starts, and profiling then starts from an idle
// server, so the script does not use it.
func steadyWindowNote(l *config.Load) string {
	var left []string
	if w := l.Warmup(); w > 0 {
		left = append(left, fmt.Sprintf("that arrive in its first %s s (traffic.load.warmup_seconds)", trimFloat(w)))
	}
	if l.HasCooldown() {
		left = append(left, "of the drain after the last session starts (traffic.load.cooldown)")
	}
	if len(left) == 0 {
		return ""
	}
	return "The prediction leaves the requests " + strings.Join(left, " and those ") + " out of its statistics; AIPerf's summary " +
		"counts every request of the run, so servesweep validate --aiperf simulates the whole run to compare the two."
}

// lengthArgs returns the mean and standard-deviation flags of one token count: a fixed count,
// a normal distribution as it is, any other distribution by its mean and standard deviation
// with a note saying so.
func lengthArgs(path string, n int, d *config.Distribution, meanFlag, stddevFlag string) ([]arg, []string) {
	mean, sd, note := lengthMoments(path, n, d)
	a := []arg{{meanFlag, itoa(int(math.Round(mean)))}, {stddevFlag, trimFloat(sd)}}
	if note != "" {
		return a, []string{note}
	}
	return a, nil
}

// lengthMoments returns a token count's mean and standard deviation, and a note when AIPerf's
// normal draw only approximates the distribution.
func lengthMoments(path string, n int, d *config.Distribution) (mean, sd float64, note string) {
	if d == nil {
		return float64(n), 0, ""
	}
	switch d.Distribution {
	case config.DistNormal:
		return d.Mean, d.Stddev, ""
	case config.DistLognormal:
		mean, sd = d.Mean, d.Stddev
	case config.DistUniform:
		mean, sd = d.Expected(), float64(d.Max-d.Min+1)/math.Sqrt(12)
	case config.DistEmpirical:
		mean = d.Expected()
		var wsum, acc float64
		for i, v := range d.Values {
			w := 1.0
			if i < len(d.Weights) {
				w = d.Weights[i]
			}
			acc += w * (float64(v) - mean) * (float64(v) - mean)
			wsum += w
		}
		sd = math.Sqrt(acc / wsum)
	}
	return mean, sd, fmt.Sprintf("%s is %s; AIPerf draws normal lengths: mean %s, stddev %s (same mean and spread, not the same shape).",
		path, d.Distribution, trimFloat(mean), trimFloat(sd))
}

// aiperfTrace replays a Mooncake trace on its own timestamps.
func (x *exporter) aiperfTrace(args []arg, notes []string) ([]arg, []string) {
	src, t := &x.cfg.Traffic.Source, &x.cfg.Traffic
	if src.Format != "mooncake" {
		x.unsupported("traffic.source.format", src.Format, "AIPerf replays traces of format mooncake (--custom-dataset-type mooncake_trace)")
		return args, notes
	}
	if len(src.Paths) != 1 {
		x.unsupported("traffic.source.paths", fmt.Sprintf("%d paths", len(src.Paths)), "AIPerf replays one trace file (--input-file)")
		return args, notes
	}
	args = append(args,
		arg{"--input-file", src.Paths[0]},
		arg{"--custom-dataset-type", "mooncake_trace"},
		arg{"--prompt-input-tokens-block-size", itoa(src.BlockSize)})
	if t.Load.Type != config.LoadTraceTimestamps {
		if v := t.Stop.MaxVirtualTimeSeconds; v > 0 {
			// A closed-loop replay of the trace, stopped as the simulation stops.
			args = append(args, arg{"--benchmark-duration", trimFloat(v)})
		}
		return args, notes
	}
	args = append(args, arg{"--fixed-schedule", ""}, arg{"--fixed-schedule-auto-offset", ""})
	if s := t.Load.Speedup; s != 1 {
		args = append(args, arg{"--fixed-schedule-speedup", trimFloat(s)})
		notes = append(notes, "--fixed-schedule-speedup needs an AIPerf release that has it (traffic.load.speedup).")
	}
	// The trace's own clock, before the speedup divides it: the end of the segment replayed.
	end := t.Stop.MaxVirtualTimeSeconds * t.Load.Speedup
	if w := t.Stop.MaxTraceSeconds; w > 0 && (end == 0 || w < end) {
		end = w
	}
	if end > 0 {
		args = append(args, arg{"--fixed-schedule-end-offset", itoa(int(math.Round(end * 1000)))})
	}
	if t.Stop.MaxTraceSeconds > 0 {
		notes = append(notes, "--fixed-schedule-end-offset keeps the trace's rows by their own timestamps; "+
			"traffic.stop.max_trace_seconds keeps every turn of a session that starts before it, so a session running past it sends fewer turns.")
	}
	return args, notes
}

// aiperfMixture sends a mixture of synthetic sources as AIPerf's sequence distribution.
func (x *exporter) aiperfMixture(args []arg, notes []string) ([]arg, []string) {
	comps := x.cfg.Traffic.Source.Components
	var total float64
	for _, c := range comps {
		total += c.Weight
	}
	var parts []string
	for i, c := range comps {
		p := fmt.Sprintf("traffic.source.components[%d].source", i)
		if c.Source == nil || c.Source.Type != config.SourceSynthetic {
			x.unsupported(p+".type", "a synthetic-session component", "AIPerf's --sequence-distribution mixes single-turn requests only")
			return args, notes
		}
		im, isd, n1 := lengthMoments(p+".input_tokens", c.Source.InputTokens, c.Source.InputTokensDist)
		om, osd, n2 := lengthMoments(p+".output_tokens", c.Source.OutputTokens, c.Source.OutputTokensDist)
		for _, n := range []string{n1, n2} {
			if n != "" {
				notes = append(notes, n)
			}
		}
		parts = append(parts, fmt.Sprintf("%d|%s,%d|%s:%s", int(math.Round(im)), trimFloat(isd), int(math.Round(om)), trimFloat(osd),
			trimFloat(math.Round(c.Weight/total*10000)/100)))
	}
	return append(args, arg{"--sequence-distribution", strings.Join(parts, ";")}), notes
}

// aiperfSessions sends synthetic multi-turn sessions: AIPerf's chat history grows each turn by
// the last answer and the new input, as the simulated prompts do.
func (x *exporter) aiperfSessions(args []arg, notes []string) ([]arg, []string) {
	src := &x.cfg.Traffic.Source
	a, n := lengthArgs("traffic.source.new_input_tokens_per_turn", src.NewInputTokensPerTurn, src.NewInputTokensPerTurnDist,
		"--synthetic-input-tokens-mean", "--synthetic-input-tokens-stddev")
	args, notes = append(args, a...), append(notes, n...)
	a, n = lengthArgs("traffic.source.output_tokens_per_turn", src.OutputTokensPerTurn, src.OutputTokensPerTurnDist,
		"--output-tokens-mean", "--output-tokens-stddev")
	args, notes = append(args, a...), append(notes, n...)
	if s := src.Session; s != nil {
		args = append(args, arg{"--conversation-turn-mean", itoa(s.Turns)}, arg{"--conversation-turn-stddev", "0"})
		if s.InterTurnDelayMs > 0 {
			args = append(args, arg{"--conversation-turn-delay-mean", trimFloat(s.InterTurnDelayMs)})
		}
		if s.InterTurnDelayStddevMs > 0 {
			args = append(args, arg{"--conversation-turn-delay-stddev", trimFloat(s.InterTurnDelayStddevMs)})
		}
		if s.SharedPrefixRatio > 0 && s.PrefixGroups > 0 {
			prefix := int(math.Round(s.SharedPrefixRatio * float64(src.NewInputTokensPerTurn)))
			args = append(args, arg{"--num-prefix-prompts", itoa(s.PrefixGroups)}, arg{"--prefix-prompt-length", itoa(prefix)})
			notes = append(notes, "AIPerf picks each session's shared prefix at random from the pool; the simulation assigns session i to group i mod prefix_groups.")
			// AIPerf prepends the prefix prompt to the synthetic prompt, so the synthetic part is
			// what the simulated first turn holds beyond its shared prefix.
			if src.NewInputTokensPerTurnDist == nil {
				for i := range args {
					if args[i].flag == "--synthetic-input-tokens-mean" {
						args[i].value = itoa(max(1, src.NewInputTokensPerTurn-prefix))
					}
				}
				switch rest := src.NewInputTokensPerTurn - prefix; {
				case rest < 1:
					notes = append(notes, fmt.Sprintf("--synthetic-input-tokens-mean is 1, AIPerf's least: the shared prefix is the whole new input (%d tokens), "+
						"so each prompt is one token longer than simulated.", prefix))
				case s.Turns > 1:
					notes = append(notes, fmt.Sprintf("--synthetic-input-tokens-mean is new_input_tokens_per_turn minus the prefix (%d − %d): AIPerf prepends the prefix prompt, "+
						"so the first turn sends the simulated %d tokens; later turns, which the simulation extends by %d new tokens, send %d (or %d if AIPerf prepends the prefix to every turn).",
						src.NewInputTokensPerTurn, prefix, src.NewInputTokensPerTurn, src.NewInputTokensPerTurn, rest, src.NewInputTokensPerTurn))
				}
			} else {
				notes = append(notes, "AIPerf prepends the prefix prompt to the synthetic prompt: its prompts are about the prefix length longer than the simulated new_input_tokens_per_turn distribution.")
			}
		}
	}
	return args, notes
}

// aiperfLoad adds the load type, its intensity and the request (or session) count.
func (x *exporter) aiperfLoad(args []arg) []arg {
	t := &x.cfg.Traffic
	l := &t.Load
	switch l.Type {
	case config.LoadConcurrency:
		args = append(args, arg{"--concurrency", itoa(l.Concurrency)})
		if l.Ramp() > 0 {
			args = append(args, arg{"--concurrency-ramp-duration", trimFloat(l.Ramp())})
		}
	case config.LoadConstantRate, config.LoadPoisson:
		mode := "constant"
		if l.Type == config.LoadPoisson {
			mode = "poisson"
		}
		if len(l.Profile) > 0 {
			x.unsupported("traffic.load.profile", "a rate profile", "AIPerf runs one request rate for the whole benchmark")
		}
		args = append(args, arg{"--request-rate", trimFloat(l.RequestsPerSecond + l.SessionsPerSecond)}, arg{"--request-rate-mode", mode})
	case config.LoadTraceTimestamps:
		if t.Source.Type != config.SourceTrace {
			x.unsupported("traffic.load.type", l.Type, "AIPerf replays timestamps from a trace only")
		}
	}
	// The counts the simulation ran (config.ResolveCount).
	if n := config.ResolveCount(t.Stop.Requests, t.Stop.RequestsPerLoadUnit, l.Unit()); n > 0 {
		args = append(args, arg{"--request-count", itoa(n)})
	}
	if n := config.ResolveCount(t.Stop.Sessions, t.Stop.SessionsPerLoadUnit, l.Unit()); n > 0 {
		args = append(args, arg{"--num-sessions", itoa(n)})
	}
	if v := t.Stop.MaxVirtualTimeSeconds; v > 0 && t.Source.Type != config.SourceTrace {
		args = append(args, arg{"--benchmark-duration", trimFloat(v)})
	}
	return args
}

// trimFloat formats f with at most 4 decimals and no trailing zeros; a value those decimals
// would round to 0 keeps its first significant digits (a 1e-05 s ramp is not none).
func trimFloat(f float64) string {
	s := fmt.Sprintf("%.4f", f)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	if s == "0" || s == "-0" {
		if f != 0 {
			return strconv.FormatFloat(f, 'f', -1, 64)
		}
		return "0"
	}
	return s
}

// engineWorkers is the number of engine processes an engine target's launch script starts (every
// role's replicas), each on its own port; 0 for Dynamo, whose frontend routes over them.
func (x *exporter) engineWorkers() int {
	if x.target == TargetDynamo {
		return 0
	}
	n := 0
	for _, r := range x.roles() {
		n += max(r.w.Parallelism.Replicas, 1)
	}
	return n
}
