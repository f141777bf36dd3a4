package grid

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/servesweep/servesweep/sim/config"
	"github.com/servesweep/servesweep/sim/timing"
	"gopkg.in/yaml.v3"
)

// pathModel is the field that names the model.
const pathModel = "engine.model"

// nameFields are the fields whose values name a model or a GPU of the catalogs.
var nameFields = []struct {
	path string
	gpu  bool
}{
	{"engine.model", false},
	{"engine.hardware", true},
	{"engine.workers.prefill.hardware", true},
	{"engine.workers.decode.hardware", true},
}

// checkNames refuses a model or GPU name no simulation knows: a value of engine.model,
// engine.hardware or a prefill or decode worker's hardware, fixed or in a domain, that is neither
// in the catalogs (servesweep list models, list hardware) nor, for a model, a directory holding a
// Hugging Face config.json. Under a hardware-aware timing each point with it would be an invalid
// config and the value would drop out of the grid with a warning; under fixed or polynomial
// timing, which do not read the GPU or the model, it would be a label that changes nothing. A
// typo is neither, so it is a spec error naming the field, its line and the known names. The
// value auto (hardware resolved from optimization.hardware) and ${NAME} references are left to
// the expansion.
func (p *parser) checkNames(root *yaml.Node) {
	for _, f := range nameFields {
		var values []*yaml.Node
		if d := findDomain(p.domains, f.path); d != nil {
			values = d.Values
		} else {
			n := root
			for _, key := range strings.Split(f.path, ".") {
				n = child(n, key)
			}
			if n != nil && n.Kind == yaml.ScalarNode && n.ShortTag() == "!!str" {
				values = []*yaml.Node{n}
			}
		}
		for _, v := range values {
			if v.Value == "" || v.Value == "auto" || strings.HasPrefix(v.Value, "${") {
				continue
			}
			var err error
			if f.gpu {
				_, err = timing.LookupHardware(v.Value)
			} else {
				_, err = timing.ResolveModel(v.Value)
			}
			if err != nil {
				list := "models"
				if f.gpu {
					list = "hardware"
				}
				p.errorf(f.path, "%s (servesweep list %s prints them)", err, list)
			}
		}
	}
}

// values returns the string values the spec gives the field path: a domain's, or its fixed
// value; neither empty strings nor auto nor ${NAME} references, each once.
func (s *Spec) values(path string) []string {
	var nodes []*yaml.Node
	if d := findDomain(s.Domains, path); d != nil {
		nodes = d.Values
	} else {
		n := s.root
		for _, key := range strings.Split(path, ".") {
			n = child(n, key)
		}
		if n != nil {
			nodes = []*yaml.Node{n}
		}
	}
	var out []string
	for _, v := range nodes {
		if v.Kind == yaml.ScalarNode && v.ShortTag() == "!!str" && v.Value != "" && v.Value != "auto" &&
			!strings.HasPrefix(v.Value, "${") && !slices.Contains(out, v.Value) {
			out = append(out, v.Value)
		}
	}
	return out
}

// modelNotes notes each engine.model value (fixed or a domain's) that names an organization the
// catalog does not know for the model it reads as (timing.OrganizationNote), naming the file and
// the field path.
func (s *Spec) modelNotes() []string {
	var out []string
	for _, id := range s.values(pathModel) {
		if n := timing.OrganizationNote(id); n != "" {
			out = append(out, fmt.Sprintf("%s: %s: %s", s.at(pathModel), pathModel, n))
		}
	}
	return out
}

// precisionNotes notes each engine.precision.weights value (fixed or a domain's) that contradicts
// the weight format an engine.model value's name gives (timing.WeightsConflict), for the points
// that combine the two: the explicit format wins.
func (s *Spec) precisionNotes() []string {
	const path = "engine.precision.weights"
	var out []string
	for _, model := range s.values(pathModel) {
		for _, w := range s.values(path) {
			if msg := timing.WeightsConflict(model, w); msg != "" {
				out = append(out, fmt.Sprintf("%s: %s: %s", s.at(path), path, msg))
			}
		}
	}
	return out
}

// equivalentChoiceWarnings warns about each value of a domain over engine.model or a GPU that
// names what another value of it names (CanonicalKey reads them as one: a model spelling of
// the same architecture and formats, a GPU alias): its points are twins of the earlier value's,
// simulated once, which a sweep over both almost never means.
func (s *Spec) equivalentChoiceWarnings() []string {
	var out []string
	for _, f := range nameFields {
		d := findDomain(s.Domains, f.path)
		if d == nil {
			continue
		}
		resolve, what := timing.CanonicalModelID, "the model"
		if f.gpu {
			resolve, what = timing.ResolveHardwareID, "the GPU"
		}
		// The choices naming one model or GPU, in listed order, by what they name.
		var names []string
		same := map[string][]string{}
		for _, v := range d.Values {
			c, _ := resolve(v.Value)
			if _, seen := same[c]; !seen {
				names = append(names, c)
			}
			same[c] = append(same[c], v.Value)
		}
		for _, c := range names {
			vals := same[c]
			// The representative (markEquivalents): the catalog's own name when listed, else the first.
			rep := vals[0]
			if slices.Contains(vals, c) {
				rep = c
			}
			for _, v := range vals {
				if v == rep {
					continue
				}
				a, b := rep, v
				if slices.Index(vals, v) < slices.Index(vals, rep) {
					a, b = v, rep
				}
				out = append(out, fmt.Sprintf("%s: %s: the choices %s and %s both name %s %s: each point with %s simulates as "+
					"its twin with %s and copies its results (results.parquet's equivalent_to); drop one of them",
					s.at(f.path), f.path, a, b, what, c, v, rep))
			}
		}
	}
	return out
}

// findDomain returns the domain of the field path among ds, or nil.
func findDomain(ds []Domain, path string) *Domain {
	for i := range ds {
		if ds[i].Path == path {
			return &ds[i]
		}
	}
	return nil
}

// TracePaths returns the trace files the spec names in traffic.source.paths (a string or a list,
// fixed or a domain's values), in document order, each once: relative paths as the run reads
// them (a YAML file's resolved against its folder when it was loaded, --set ones against the
// working directory). ${NAME} references are left out.
func (s *Spec) TracePaths() []string {
	var nodes []*yaml.Node
	for _, d := range s.Domains {
		if d.Path == "traffic.source.paths" {
			nodes = append(nodes, d.Values...)
		}
	}
	n := child(child(child(s.root, "traffic"), "source"), "paths")
	if n != nil && n.Kind == yaml.SequenceNode {
		nodes = append(nodes, n.Content...)
	} else if n != nil {
		nodes = append(nodes, n)
	}
	var out []string
	for _, v := range nodes {
		if v.Kind == yaml.ScalarNode && v.ShortTag() == "!!str" && v.Value != "" && !strings.HasPrefix(v.Value, "${") &&
			!slices.Contains(out, v.Value) {
			out = append(out, v.Value)
		}
	}
	return out
}

// labelOnlyWarnings warns about a domain over engine.model or a GPU whose values cannot change
// what is simulated: every worker role of cfg (a valid point's config) times its passes with
// fixed or polynomial timing, which read neither the GPU nor the model, and sizes its KV pool as
// a fixed block count, so the points differ only in their labels and prices. cfg stands for every
// point when no domain is on a timing or KV capacity field; otherwise nothing is warned.
func (s *Spec) labelOnlyWarnings(cfg *config.Config) []string {
	for _, d := range s.Domains {
		if strings.Contains(d.Path, ".timing") || strings.Contains(d.Path, ".kv_cache.capacity") {
			return nil
		}
	}
	if !cfg.LabelsOnly() {
		return nil
	}
	var out []string
	for _, f := range nameFields {
		if d := findDomain(s.Domains, f.path); d != nil && len(d.Values) > 1 {
			out = append(out, fmt.Sprintf("%s: %s: its values change only labels and prices: every worker role uses fixed or "+
				"polynomial timing, which reads neither the GPU nor the model, and a fixed KV pool; time each value with "+
				"timing {type: default} and kv_cache.capacity {type: default}", s.at(f.path), f.path))
		}
	}
	// The GPUs a worker's passes are split over: fixed and polynomial timing price a pass alike on
	// any split, so such a domain changes only the GPU count and the price.
	for _, d := range s.Domains {
		field := d.Path[strings.LastIndex(d.Path, ".")+1:]
		if strings.Contains(d.Path, ".parallelism.") && slices.Contains(splitFields, field) && len(d.Values) > 1 {
			out = append(out, fmt.Sprintf("%s: %s: its values change only the GPU count and the price: every worker role uses "+
				"fixed or polynomial timing, which prices a pass alike on any split of the model, and a fixed KV pool; time each "+
				"value with timing {type: default} and kv_cache.capacity {type: default}", s.at(d.Path), d.Path))
		}
	}
	return out
}

// splitFields are the parallelism fields that only split a worker's passes over more GPUs
// (replicas and attention_data change the scheduling, and pipeline the overlap of host time,
// so they are not among them).
var splitFields = []string{"tensor", "moe_tensor", "moe_expert"}

// shortFixedRunWarnings are the warnings for a sweep without a capacity search whose concurrency
// load (ramp_seconds other than 0, or none) stops at a fixed count (traffic.stop.requests or
// sessions), as cfg, the first valid point's config, has them: one naming the concurrencies the
// count gives fewer than SteadyCyclesPerSlot cycles per slot (sweep runs those points as
// configured, their first wave at once, where it measures the others in steady state), and one
// naming those it gives enough cycles but fewer than MinMeasuredRequests(PercentileFloorAttainment)
// requests measured after SteadyWarmupCycles and before the last cycle (their tail latencies rest
// on a few requests; a user trial, 2026-12-07: 400 requests left concurrency 64 262 measured under
// a p99 ITL bound, unwarned, and the answer moved with the count). None otherwise.
func (s *Spec) shortFixedRunWarnings(cfg *config.Config) []string {
	l, st := &cfg.Traffic.Load, &cfg.Traffic.Stop
	if w := s.shortOpenLoopWarning(cfg); w != "" {
		return []string{w}
	}
	if s.Optimization.CapacitySearch != nil || l.Type != config.LoadConcurrency || l.RampSeconds != nil && *l.RampSeconds == 0 ||
		cfg.Traffic.Source.Type == config.SourceTrace {
		return nil // ramp_seconds 0 asks for the synchronized start
	}
	// count is in slot cycles: sessions, or requests of single-turn sources.
	count, given, key := float64(st.Sessions), st.Sessions, "sessions"
	turns := 1.0
	if src := cfg.Traffic.Source.Session; src != nil && src.Turns > 0 {
		turns = float64(src.Turns)
	}
	if st.Sessions == 0 {
		count, given, key = float64(st.Requests)/turns, st.Requests, "requests"
	}
	if count <= 0 {
		return nil
	}
	concurrency := []string{strconv.Itoa(l.Concurrency)}
	if d := findDomain(s.Domains, "traffic.load.concurrency"); d != nil {
		concurrency = d.ValueStrings()
	}
	var short, thin []string
	floor := PercentileFloorAttainment(cfg)
	least := MinMeasuredRequests(floor)
	for _, v := range concurrency {
		n, err := strconv.Atoi(v)
		measured := (count - (SteadyWarmupCycles+1)*float64(n)) * turns
		switch {
		case err != nil || n <= 0:
		case count < SteadyCyclesPerSlot*float64(n):
			short = append(short, v)
		case measured < float64(least):
			thin = append(thin, fmt.Sprintf("%s (about %g)", v, math.Floor(measured)))
		}
	}
	var out []string
	if len(short) > 0 {
		out = append(out, fmt.Sprintf("%s: traffic.stop.%s: %d gives the points at concurrency %s fewer than %d per slot, too few to spread the first wave, "+
			"leave a warm-up out and measure a steady state: they run as configured, their first wave at once or over the ramp "+
			"given, and their tail latencies "+
			"can move with the run's length; set traffic.stop.%s_per_load_unit instead (lengthened where short) or a count of "+
			"at least %d × the concurrency, or ramp_seconds: 0 to run every point that way",
			s.at("traffic.stop."+key), key, given, strings.Join(short, ", "), SteadyCyclesPerSlot, key, SteadyCyclesPerSlot))
	}
	if len(thin) > 0 {
		out = append(out, fmt.Sprintf("%s: traffic.stop.%s: %d leaves the points at concurrency %s fewer requests measured in steady state "+
			"(after %d cycles per slot of ramp and warm-up, before the last) than the %d %s: their tail latencies rest on their "+
			"few slowest requests and can move with the run's length; set traffic.stop.%s_per_load_unit instead (lengthened "+
			"where short) or a larger count",
			s.at("traffic.stop."+key), key, given, strings.Join(thin, ", "), SteadyWarmupCycles, least, floorNeed(floor), key))
	}
	return out
}

// floorNeed says what a floor of MinMeasuredRequests(attainment) requests is for: an attainment of
// DefaultCapacityAttainment to allow two misses, or evaluation.sla's percentile bounds
// (PercentileFloorAttainment).
func floorNeed(attainment float64) string {
	if attainment > DefaultCapacityAttainment {
		return "evaluation.sla's percentile bounds need to rest on more than a few samples past the percentile"
	}
	return fmt.Sprintf("an attainment of %g needs to allow two misses", DefaultCapacityAttainment)
}

// shortOpenLoopWarning is the warning for a sweep without a capacity search whose open loop
// (constant_rate or poisson, without a rate profile) stops at a fixed count (traffic.stop.requests,
// or sessions × turns) below the floor a point measures after its warm-up (FixedRateMeasured, or
// the percentile bounds' MinMeasuredRequests(PercentileFloorAttainment) when more): sweep
// measures each point whole, its fill of an empty deployment included, and its rate and tail
// move with the count (a user trial, 2026-12-07: poisson at 30 requests/s, 100 requests: 1,347
// output tok/s per GPU and p99 ITL 122.5 ms, infeasible, where 1,500 measured 1,683, and the
// answer moved to 28 requests/s). "" otherwise.
func (s *Spec) shortOpenLoopWarning(cfg *config.Config) string {
	l, st := &cfg.Traffic.Load, &cfg.Traffic.Stop
	if s.Optimization.CapacitySearch != nil || l.Type != config.LoadConstantRate && l.Type != config.LoadPoisson || len(l.Profile) > 0 {
		return ""
	}
	n, given, key := st.Requests, st.Requests, "requests"
	if st.Sessions > 0 {
		turns := 1
		if src := cfg.Traffic.Source.Session; src != nil && src.Turns > 0 {
			turns = src.Turns
		}
		n, given, key = st.Sessions*turns, st.Sessions, "sessions"
	}
	least := max(FixedRateMeasured, MinMeasuredRequests(PercentileFloorAttainment(cfg)))
	if n <= 0 || n >= least {
		return ""
	}
	return fmt.Sprintf("%s: traffic.stop.%s: %d brings each point fewer than the %d requests a point without a capacity search "+
		"measures after its warm-up under an open loop: each is measured whole, its fill of an empty deployment included, and "+
		"its rate and tail latencies move with the count; set traffic.stop.%s_per_load_unit instead (lengthened where short) "+
		"or a count of at least %d", s.at("traffic.stop."+key), key, given, least, key, least)
}

// burstStartWarning is the warning for a sweep whose concurrency load sets ramp_seconds: 0, as
// cfg, the first valid point's config, has it (a trace source excepted, whose start is the
// trace's): every point (every capacity probe, with a capacity search) sends its first wave at
// once and is measured with that start and its drain, as a benchmark that sends it so counts
// them, so its throughput and latencies move with the run's length (a user trial, 2026-12-07:
// the DeepSeek-R1 example's best point by output tokens/s per GPU, aggregated 1× DEP8 at
// concurrency 1,024, gave 1,063, 1,004 and 925 at 5, 10 and 60 requests per load unit, and led
// the front at 10 but not at 30). "" otherwise.
func (s *Spec) burstStartWarning(cfg *config.Config) string {
	l := &cfg.Traffic.Load
	if l.Type != config.LoadConcurrency || l.RampSeconds == nil || *l.RampSeconds != 0 || cfg.Traffic.Source.Type == config.SourceTrace {
		return ""
	}
	return fmt.Sprintf("%s: traffic.load.ramp_seconds: 0 sends every point's first wave at once and measures it with that start and its drain, "+
		"as a benchmark that sends it so counts them: each point's throughput and tail latencies then move with the run's length, "+
		"and so can the answer; omit ramp_seconds to measure each point in steady state (its first wave spread over a request "+
		"lifetime and left out with its warm-up and drain)", s.at("traffic.load.ramp_seconds"))
}

// speedupWindowWarning is the warning for a sweep without a capacity search whose points replay
// a trace at several speedups (a traffic.load.speedup domain) under a virtual-time stop and no
// max_trace_seconds, as cfg, the first valid point's config, has them; "" otherwise. A point at
// speedup s stops at T virtual seconds, so it replays s × T seconds of the trace: the points
// compare different requests (on the Mooncake conversation trace with T = 600 s, 927 requests at
// speedup 0.5 and 3,658 at 2; 2026-12-07), not one workload at several rates. A capacity search
// replays one segment at every probe instead (AtProbeRun).
func (s *Spec) speedupWindowWarning(cfg *config.Config) string {
	st := &cfg.Traffic.Stop
	d := findDomain(s.Domains, "traffic.load.speedup")
	if s.Optimization.CapacitySearch != nil || cfg.Traffic.Load.Type != config.LoadTraceTimestamps || d == nil ||
		len(d.Values) < 2 || st.MaxVirtualTimeSeconds <= 0 || st.MaxTraceSeconds > 0 {
		return ""
	}
	var segs []string
	for _, v := range d.ValueStrings() {
		if x, err := strconv.ParseFloat(v, 64); err == nil {
			segs = append(segs, strconv.FormatFloat(x*st.MaxVirtualTimeSeconds, 'g', 6, 64))
		}
	}
	return fmt.Sprintf("%s: traffic.stop.max_virtual_time_seconds: %g ends each point at that virtual time, so the points at speedup %s "+
		"replay the first %s s of the trace (less where it ends first): different requests, not one workload at several rates; traffic.stop: {max_trace_seconds: S} "+
		"replays the sessions that start in the trace's first S s at every speedup, each run to its end",
		s.at("traffic.stop.max_virtual_time_seconds"), st.MaxVirtualTimeSeconds, strings.Join(d.ValueStrings(), ", "), strings.Join(segs, ", "))
}

// thinkTimeWarning is the warning for a sweep without a capacity search (capacityWarnings has
// fixedThinkTime, under kv_router) whose points run multi-turn synthetic sessions with a
// constant, positive think time under a concurrency load, as cfg, the first valid point's config,
// has them, unless the spec keeps the synchronized start (ramp_seconds 0): sessions whose turns
// end in one pass come back after the same delay, together, and the closed loop drifts into step
// over a long run whatever the router. Measured in a user trial (2026-12-06): Llama-3.1-8B on one
// H200 TP1, 16 sessions of 3 turns, a constant 500 ms think time: p99 TTFT over the run's tenths
// rose from 169 to 301 ms over 160 sessions per load unit, and the best point of a sweep moved
// with its sessions_per_load_unit (10, 40, 160); with a 250 ms standard deviation it held (241
// and 239 ms). "" otherwise.
func (s *Spec) thinkTimeWarning(cfg *config.Config) string {
	l := &cfg.Traffic.Load
	if s.Optimization.CapacitySearch != nil || l.Type != config.LoadConcurrency || l.RampSeconds != nil && *l.RampSeconds == 0 {
		return ""
	}
	sh := constantThinkTime(&cfg.Traffic.Source)
	if sh == nil {
		return ""
	}
	return fmt.Sprintf("%s: traffic.source.session.inter_turn_delay_ms is a constant %g ms: sessions whose turns end together come "+
		"back together after it, and over a long run the closed loop drifts into step, so the points' tail latencies and ranking "+
		"move with the run's length; draw the think times with traffic.source.session.inter_turn_delay_stddev_ms, e.g. half the mean",
		s.at("traffic.source.session.inter_turn_delay_ms"), sh.InterTurnDelayMs)
}

// lockstepWarning is the warning for a sweep without a capacity search (capacityWarnings has its
// own, fixedLengths) whose points at a concurrency above 1 run synthetic requests (or session
// turns) of one prompt and one output length, as cfg, the first valid point's config, has them:
// such a closed loop falls into step, ramped or not (fixedLengths), so each point measures
// synchronized waves rather than a steady state, and the ranking of the points can move with the
// run's length. Lengths drawn from a distribution of one value count as fixed (oneLengthFields),
// and neither a ramp nor an explicit ramp_seconds 0 (the synchronized start) exempts a point. "" when no point has
// a concurrency above 1, and for a mixture (its components' lengths are drawn by component). The
// source's kind, its load's kind and its ramp take no domain, and a domain on a length gives each
// point one: cfg's verdict holds for every point.
func (s *Spec) lockstepWarning(cfg *config.Config) string {
	if s.Optimization.CapacitySearch != nil || cfg.Traffic.Load.Type != config.LoadConcurrency {
		return ""
	}
	if s.searchesLengthDistribution() {
		return "" // cfg's lengths are not every point's
	}
	in, out := oneLengthFields(cfg) // ramped or not: fixed lengths fall into step
	if in == "" {
		return ""
	}
	concurrency := []string{strconv.Itoa(cfg.Traffic.Load.Concurrency)}
	if d := findDomain(s.Domains, "traffic.load.concurrency"); d != nil {
		concurrency = d.ValueStrings()
	}
	var above []string
	for _, v := range concurrency {
		if n, err := strconv.Atoi(v); err == nil && n > 1 {
			above = append(above, v)
		}
	}
	if len(above) == 0 {
		return ""
	}
	which := "the points at concurrency " + strings.Join(above, ", ") + " measure"
	if len(above) == len(concurrency) {
		which = "every point (concurrency " + strings.Join(above, ", ") + ") measures"
	}
	return fmt.Sprintf("%s: traffic.source.%s and %s are fixed: under a concurrency load requests of one length fall into step "+
		"(batched together, they finish together and come back together), so %s those waves, not a steady state, "+
		"and the points' ranking can move with the run's length; draw them from a distribution, e.g. %s: {distribution: "+
		"uniform, min: ..., max: ...}", s.at("traffic.source."+out), in, out, which, out)
}
