package main

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/servesweep/servesweep/grid"
	"github.com/servesweep/servesweep/results"
	"github.com/servesweep/servesweep/sim/optimization"
)

// otherSpecAdvice looks closer at --output-dir, whose sweep (spec hash hash; m its sweep.json,
// nil when it has none) is of another spec than x's. The directory's analysis settings come from
// m, or else from its journal's spec identity (results.IdentitySettings). When the sweep ran x's
// points, or x's and more under wider GPU bounds (the spec expanded again under the old bounds
// hashes to hash and holds every point of x), and only analysis settings differ, advice is the
// usage error that points to servesweep report (after finishing the sweep, when it is not
// finished). Otherwise, under narrower GPU bounds, changes names the bounds and what else
// differs from the spec expanded again under the old ones (nil: leave the refusal's own). Both
// are nil when the directory's settings are unknown.
func otherSpecAdvice(ctx context.Context, opts *sweepOptions, x *grid.Expansion, m *results.Manifest, hash string) (advice error, changes []string) {
	var identity []string
	if h, id, err := results.ReadJournalSpec(filepath.Join(opts.OutputDir, results.JournalFile)); err == nil && h == hash {
		identity = id
	}
	want := x.Spec.Optimization.Settings()
	have := want
	switch s, ok := results.IdentitySettings(identity); {
	case m != nil:
		have = m.Settings
	case ok:
		// What a spec hash does not cover (the cost and rejection bounds) is not recorded: a
		// finished sweep would record this spec's.
		have.Target, have.Objectives, have.MinGPUs, have.MaxGPUs = s.Target, s.Objectives, s.MinGPUs, s.MaxGPUs
		have.StrictSLA, have.MinGoodputRPS = s.StrictSLA, s.MinGoodputRPS
	default:
		return nil, nil
	}
	held, same := "this sweep's points", x.SpecHashWith(have) == hash
	var wide *grid.Expansion
	if !same {
		wide = expandUnderBounds(ctx, opts, x, have)
	}
	if wide != nil && wide.SpecHashWith(have) == hash && holdsPoints(wide, x) {
		same, held = true, fmt.Sprintf("this sweep's points and more (it ran under wider GPU bounds: %s then, %s now)",
			results.GPUBoundsText(have.MinGPUs, have.MaxGPUs), results.GPUBoundsText(want.MinGPUs, want.MaxGPUs))
	}
	if same {
		if flags, ok := reportFlags(have, want); ok {
			return sameSpecAdvice(opts, m, have, want, held, flags), nil
		}
		return nil, nil
	}
	if wide == nil || identity == nil {
		return nil, nil
	}
	return nil, narrowedChanges(identity, wide, have, want, len(x.Points))
}

// sameSpecAdvice is the usage error for a directory that holds held (x's points, or those and
// more) under the analysis settings have, where the spec asks for want (flags: report's flags
// for them): apply them with servesweep report; a sweep not finished (no sweep.json, or one
// that says so) is finished first under the settings it was started with.
func sameSpecAdvice(opts *sweepOptions, m *results.Manifest, have, want optimization.Settings, held string, flags []string) error {
	// A directory beside the results, so the suggestion runs as printed.
	report := fmt.Sprintf("servesweep report --results %s --output-dir %s %s", shellQuote(opts.OutputDir),
		shellQuote(filepath.Clean(opts.OutputDir)+"-report"), strings.Join(flags, " "))
	if m != nil && !m.Incomplete() {
		if strings.HasSuffix(held, ")") {
			held += "," // "(it ran under wider GPU bounds: ...), analyzed"
		}
		return &usageError{fmt.Errorf("--output-dir %s holds %s analyzed with other settings; "+
			"apply the new ones to its rows without simulating again: %s; or pass --overwrite to run the sweep anew",
			opts.OutputDir, held, report)}
	}
	state := "not all finished"
	if m == nil {
		state = fmt.Sprintf("and no sweep.json (a run stopped before writing it; the journal's spec identity, %s, records the settings)",
			filepath.Join(opts.OutputDir, results.JournalFile+results.SpecSuffix))
	}
	finish := "rerun the spec into it with the optimization section it was started with"
	if sets, ok := settingsSets(have, want); ok {
		finish = finishCommand(opts, sets)
	}
	return &usageError{fmt.Errorf("--output-dir %s holds %s under other analysis settings, %s: finish it under the settings it "+
		"was started with (%s): %s; then apply the new ones to its rows without simulating again: %s; or pass --overwrite to run the "+
		"sweep anew (only the points the new settings select)", opts.OutputDir, held, state, settingsText(have, want), finish, report)}
}

// finishCommand is the sweep's command (resumeCommand) with the --set arguments sets (pairs of
// "--set" and a value) in place of its own --set of the same paths.
func finishCommand(opts *sweepOptions, sets []string) string {
	o := *opts
	o.Sets = nil
	paths := map[string]bool{}
	for i := 1; i < len(sets); i += 2 {
		path, _, _ := strings.Cut(sets[i], "=")
		paths[path] = true
	}
	for _, s := range opts.Sets {
		if path, _, _ := strings.Cut(s, "="); !paths[strings.TrimSpace(path)] {
			o.Sets = append(o.Sets, s)
		}
	}
	for i := 1; i < len(sets); i += 2 {
		o.Sets = append(o.Sets, sets[i])
	}
	return resumeCommand(&o)
}

// settingsSets are the --set arguments that turn a spec's analysis settings from want back to
// have, each a "--set" then its value, where a spec hash covers them (reportFlags gives the
// rest to report); ok is false when one cannot be written as a --set.
func settingsSets(have, want optimization.Settings) (sets []string, ok bool) {
	add := func(path, value string) { sets = append(sets, "--set", path+"="+value) }
	if have.Target != want.Target {
		add("optimization.target", have.Target)
	}
	if !slices.Equal(have.Objectives, want.Objectives) {
		if len(have.Objectives) == 0 {
			return nil, false
		}
		var objs []string
		for _, o := range have.Objectives {
			objs = append(objs, fmt.Sprintf("{metric: %s, direction: %s}", o.Metric, o.Direction))
		}
		add("optimization.objectives", "["+strings.Join(objs, ", ")+"]")
	}
	if have.MinGPUs != want.MinGPUs {
		add("optimization.constraints.min_candidate_gpus", strconv.Itoa(max(have.MinGPUs, 1))) // 1 is no bound
	}
	if have.MaxGPUs != want.MaxGPUs {
		add("optimization.constraints.max_candidate_gpus", strconv.Itoa(have.MaxGPUs))
	}
	if have.StrictSLA != want.StrictSLA {
		add("optimization.strict_sla", strconv.FormatBool(have.StrictSLA))
	}
	if have.MinGoodputRPS != want.MinGoodputRPS {
		if have.MinGoodputRPS == 0 {
			return nil, false
		}
		add("optimization.constraints.min_goodput_rps", strconv.FormatFloat(have.MinGoodputRPS, 'g', -1, 64))
	}
	return sets, true
}

// settingsText is what differs between the analysis settings have and want that a spec hash
// covers, have's values first: "max_candidate_gpus 8 then, max_candidate_gpus 4 now".
func settingsText(have, want optimization.Settings) string {
	var out []string
	if have.Target != want.Target {
		out = append(out, fmt.Sprintf("target %s then, %s now", have.Target, want.Target))
	}
	if !slices.Equal(have.Objectives, want.Objectives) {
		out = append(out, fmt.Sprintf("objectives %s then, %s now", objectivesText(have.Objectives), objectivesText(want.Objectives)))
	}
	if have.MinGPUs != want.MinGPUs || have.MaxGPUs != want.MaxGPUs {
		out = append(out, fmt.Sprintf("%s then, %s now", results.GPUBoundsText(have.MinGPUs, have.MaxGPUs), results.GPUBoundsText(want.MinGPUs, want.MaxGPUs)))
	}
	if have.StrictSLA != want.StrictSLA {
		out = append(out, fmt.Sprintf("strict_sla %t then, %t now", have.StrictSLA, want.StrictSLA))
	}
	if have.MinGoodputRPS != want.MinGoodputRPS {
		out = append(out, fmt.Sprintf("min_goodput_rps %g then, %g now", have.MinGoodputRPS, want.MinGoodputRPS))
	}
	if len(out) == 0 {
		return "the same settings the spec hash covers"
	}
	return strings.Join(out, "; ")
}

// objectivesText is objectives as report's --objective values, comma-separated ("the default"
// for none).
func objectivesText(objectives []optimization.Objective) string {
	if len(objectives) == 0 {
		return "the default"
	}
	var out []string
	for _, o := range objectives {
		out = append(out, o.String())
	}
	return strings.Join(out, ", ")
}

// expandUnderBounds expands x's spec again under the GPU bounds (min and max candidate GPUs)
// of have, when they are wider than x's and differ from them; nil when they are not, or the spec
// cannot be expanded again (its traces unreadable, say).
func expandUnderBounds(ctx context.Context, opts *sweepOptions, x *grid.Expansion, have optimization.Settings) *grid.Expansion {
	want := x.Spec.Optimization.Settings()
	if have.MinGPUs == want.MinGPUs && have.MaxGPUs == want.MaxGPUs || have.MinGPUs > want.MinGPUs ||
		have.MaxGPUs > 0 && (want.MaxGPUs == 0 || have.MaxGPUs < want.MaxGPUs) {
		return nil
	}
	// A fresh parse: expanding x's own spec again would share its templates with x's points.
	spec, err := loadSpec(opts)
	if err != nil {
		return nil
	}
	spec.Systems, spec.Build = x.Spec.Systems, x.Spec.Build
	if spec.DigestTraces() != nil {
		return nil
	}
	spec.Optimization.MinCandidateGPUs, spec.Optimization.MaxCandidateGPUs = have.MinGPUs, have.MaxGPUs
	wide, err := spec.ExpandLazyContext(ctx)
	if err != nil {
		return nil
	}
	return wide
}

// holdsPoints reports whether every point of x is among wide's. report's --min-gpus and
// --max-gpus then apply x's bounds to the rows of wide's sweep (results.GPUBudgetExclusion drops
// what the sweep's filter would have).
func holdsPoints(wide, x *grid.Expansion) bool {
	ids := make(map[string]bool, len(wide.Points))
	for _, p := range wide.Points {
		ids[p.ID] = true
	}
	for _, p := range x.Points {
		if !ids[p.ID] {
			return false
		}
	}
	return true
}

// narrowedChanges says what differs between a directory's sweep (identity, its journal's spec
// identity, recorded under the GPU bounds of have) and this spec under the narrower bounds of
// want (points of them): the bounds, then what still differs once the spec is expanded again
// under the old bounds (wide), as results.SpecChanges says it.
func narrowedChanges(identity []string, wide *grid.Expansion, have, want optimization.Settings, points int) []string {
	rest := results.SpecChanges(identity, wide.SpecIdentity())
	bounds := fmt.Sprintf("the GPU bounds (%s then, %s now", results.GPUBoundsText(have.MinGPUs, have.MaxGPUs),
		results.GPUBoundsText(want.MinGPUs, want.MaxGPUs))
	i := slices.IndexFunc(rest, func(c string) bool { return strings.HasPrefix(c, "the grid's points (") })
	if i < 0 {
		// The spec under the old bounds has the sweep's points: the bounds alone filter them.
		bounds += fmt.Sprintf(", which alone take the sweep's %d points to %d)", len(wide.Points), points)
		return append([]string{bounds}, rest...)
	}
	rest[i] = "and, under the old bounds, " + rest[i]
	return append([]string{bounds + ")"}, rest...)
}
