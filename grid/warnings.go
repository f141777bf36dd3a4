package grid

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/servesweep/servesweep/sim/config"
	"github.com/servesweep/servesweep/sim/optimization"

	"gopkg.in/yaml.v3"
)

// emptyValuesWarning is one warning for the domain values of vs, none of which any valid point
// takes: emptyWarning's for a single value; for several, one line that counts them, names each
// as a short path=value with its point count, and gives the first value's example (sweep.json's
// empty_values has every value's filter counts). A 70B sweep whose small TP and large replica counts cannot hold the
// weights says so once rather than once per value.
func emptyValuesWarning(vs []EmptyValue) string {
	if len(vs) == 1 {
		return emptyWarning(vs[0])
	}
	names := make([]string, len(vs))
	for i, v := range vs {
		points := "points"
		if v.Points == 1 {
			points = "point"
		}
		names[i] = fmt.Sprintf("%s=%s (%d %s)", ShortPath(v.Path), v.Value, v.Points, points)
	}
	return fmt.Sprintf("%d domain values have no valid point: %s; e.g. %s", len(vs), strings.Join(names, ", "), vs[0].Example)
}

// specWideError is the error of a grid whose bad invalid or unsupported points (of grid in all,
// or of a mode's: of names it, e.g. "of mode aggregated ") all failed with the same decode error
// full: that error once, as the config.Errors its lines ("<file>: <path>: <msg>") were, so that a
// command can name the --set that gave the field (config.AttributeSets), with the count of
// points it ruled out (none for a grid of one point).
func (s *Spec) specWideError(full string, bad, grid int, of string) error {
	what := fmt.Sprintf("every one of the %d grid points %sfails", grid, of)
	if bad < grid {
		what = fmt.Sprintf("all %d invalid grid points %s(of %d; the others are outside the GPU budget) fail", bad, of, grid)
	}
	note := " (" + what + " with this error: it is in the spec, not in a domain's values)"
	if grid == 1 {
		// One point (a spec without a domain, or a mode or policy with one point) is a config:
		// its error as predict gives it.
		note = ""
	}
	var errs config.Errors
	for _, line := range strings.Split(full, "\n") {
		rest, ok := strings.CutPrefix(line, s.File+": ")
		path, msg, hasPath := strings.Cut(rest, ": ")
		if !ok || !hasPath || !fieldPath.MatchString(path) {
			// Not one field's error: the message as it is, once.
			return config.Errors{{File: s.File, Msg: "no valid point: " + strings.TrimPrefix(full, s.File+": ") + note}}
		}
		errs = append(errs, &config.Error{File: s.File, Path: path, Msg: msg})
	}
	errs[len(errs)-1].Msg += note
	return errs
}

// fieldPath matches a dotted field path such as engine.workers.decode.parallelism.tensor or
// traffic.source.components[0].weight.
var fieldPath = regexp.MustCompile(`^[a-z][a-z0-9_]*(\[[0-9]+\])?(\.[a-z][a-z0-9_]*(\[[0-9]+\])?)*$`)

// modeSections are the engine sections only one mode uses: the worker roles and
// engine.kv_transfer (the prefill-to-decode hand-off), each with its mode and what it is, for
// unusedSectionWarning.
var modeSections = []struct {
	path string
	mode config.Mode
	what string
}{
	{"engine.workers.aggregated", config.ModeAggregated, "aggregated workers"},
	{"engine.workers.prefill", config.ModeDisaggregated, "prefill workers"},
	{"engine.workers.decode", config.ModeDisaggregated, "decode workers"},
	{"engine.kv_transfer", config.ModeDisaggregated, "KV transfer"},
}

// unusedSectionWarning is the warning (or "") for the sections of modeSections that root (the
// spec before a concrete mode prunes it) gives but no mode of the grid uses: engine.mode is
// concrete, or a domain (in domains) of that one mode, so every point drops them (prune) and
// they change nothing, where predict refuses them. It names the sections, the mode and the
// --set that gave any of them or the mode. A --set of the mode alone, narrowing a file that gives
// both modes' sections (the built-in sweep's, say), is not warned about. A spec without engine.mode (aggregated by default)
// is not pruned: its points' decode refuses the other mode's sections. An explicit null section
// is not given.
func (s *Spec) unusedSectionWarning(root *yaml.Node, domains []Domain) string {
	engine := child(root, "engine")
	m := child(engine, "mode")
	var modes []string
	modeText := ""
	if d := findDomain(domains, pathMode); d != nil {
		modes = d.ValueStrings()
		modeText = "engine.mode's only choice is " + strings.Join(modes, ", ")
	} else if m != nil && m.Kind == yaml.ScalarNode {
		modes = []string{m.Value}
		modeText = "engine.mode is " + m.Value
	} else {
		return ""
	}
	modeSet := config.SetFor(pathMode, s.sets)
	if modeSet != "" {
		modeText += " (--set " + modeSet + ")"
	}
	var paths, whats, sets []string
	other := ""
	for _, sec := range modeSections {
		n := engine
		for _, key := range strings.Split(strings.TrimPrefix(sec.path, "engine."), ".") {
			n = child(n, key)
		}
		if n == nil || n.ShortTag() == "!!null" || slices.Contains(modes, string(sec.mode)) {
			continue
		}
		paths, whats, other = append(paths, sec.path), append(whats, sec.what), string(sec.mode)
		if set := s.setWithin(sec.path); !slices.Contains(sets, set) {
			sets = append(sets, set)
		}
	}
	if len(paths) == 0 || modeSet != "" && slices.Equal(slices.Compact(slices.Clone(sets)), []string{""}) {
		// None, or a file written for both modes narrowed to one by a --set of the mode alone:
		// dropping the other mode's sections is what that --set asks for.
		return ""
	}
	at := s.File
	if len(sets) == 1 && sets[0] != "" {
		at += " (--set " + sets[0] + ")"
	} else if len(sets) > 1 {
		for i, p := range paths {
			if set := s.setWithin(p); set != "" {
				paths[i] += " (--set " + set + ")"
			}
		}
	}
	them := "it"
	if len(paths) > 1 {
		them = "them"
	}
	return fmt.Sprintf("%s: %s: dropped from every point: %s, which has no %s; remove %s, or set engine.mode: %s "+
		"(or {choices: [aggregated, disaggregated]}) to use %s", at, strings.Join(paths, ", "), modeText, orList(whats), them, other, them)
}

// setWithin returns the last --set that wrote path, a mapping holding it or a field under it
// (config.SetFor, then a deeper path): the --set that gave a section or part of it; "" when
// none did.
func (s *Spec) setWithin(path string) string {
	if set := config.SetFor(path, s.sets); set != "" {
		return set
	}
	for k := len(s.sets) - 1; k >= 0; k-- {
		if p, _, ok := strings.Cut(s.sets[k], "="); ok && strings.HasPrefix(strings.TrimSpace(p), path+".") {
			return s.sets[k]
		}
	}
	return ""
}

// orList joins items as "a", "a or b", "a, b or c".
func orList(items []string) string {
	if len(items) <= 1 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " or " + items[len(items)-1]
}

// ObjectiveWarnings returns a warning for each of the spec's objectives (optimization.objectives)
// that reversed calls reversed: results.ReversedObjective, a direction opposite to the metric's
// better one (grid does not know the columns), which ranks the worst deployments first. Each
// names the spec, the --set that gave the objective, its field path and the direction that
// would rank the better deployments first. The default objectives are never reversed.
func (s *Spec) ObjectiveWarnings(reversed func(optimization.Objective) string) []string {
	var out []string
	for i, o := range s.Optimization.Objectives {
		msg := reversed(o)
		if msg == "" {
			continue
		}
		other := optimization.Minimize
		if o.Direction == optimization.Minimize {
			other = optimization.Maximize
		}
		path := fmt.Sprintf("optimization.objectives[%d].direction", i)
		out = append(out, fmt.Sprintf("%s: %s: %s; if that was not meant, write direction: %s", s.at(path), path, msg, other))
	}
	return out
}

// kvBytesMark starts a sim.KVBytesWarnings message in the notes the points' checks collect
// (checker), which expand moves from the timing notes to the warnings (kvBytesWarnings).
const kvBytesMark = "\x00kv-bytes\x00"

// kvBytesWarnings turns the valid points' sim.KVBytesWarnings msgs (each "<field path>: ...",
// any order, each once) into one warning per field, located by the spec's file and the --set
// that gave the field: the first message in sorted order, and, when other combinations of
// model, KV precision and shape in the grid give the field other messages, their count.
func (s *Spec) kvBytesWarnings(msgs []string) []string {
	slices.Sort(msgs)
	var out []string
	for i := 0; i < len(msgs); {
		path, _, _ := strings.Cut(msgs[i], ": ")
		j := i + 1
		for j < len(msgs) && strings.HasPrefix(msgs[j], path+": ") {
			j++
		}
		w := s.at(path) + ": " + msgs[i]
		switch more := j - i - 1; {
		case more == 1:
			w += " (also at 1 other combination of model, KV precision and shape in the grid)"
		case more > 1:
			w += fmt.Sprintf(" (also at %d other combinations of model, KV precision and shape in the grid)", more)
		}
		out = append(out, w)
		i = j
	}
	return out
}
