package calibrate

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// Holdout keys: the column whose groups are left out in turn.
const (
	HoldoutSystem  = "system"
	HoldoutBackend = "backend"
	HoldoutModel   = "model"
)

// HoldoutKeys lists the valid --holdout-by values.
func HoldoutKeys() []string { return []string{HoldoutSystem, HoldoutBackend, HoldoutModel} }

// holdoutKey returns the function that gives a row's group under key, or nil for an unknown key.
func holdoutKey(key string) func(Row) string {
	switch key {
	case HoldoutSystem:
		return func(r Row) string { return r.System }
	case HoldoutBackend:
		return func(r Row) string { return r.Backend }
	case HoldoutModel:
		return func(r Row) string { return r.Model }
	}
	return nil
}

// Fold is one left-out group of a holdout validation.
type Fold struct {
	// Group is the left-out value of the holdout key (e.g. h100_sxm); TrainRows and TestRows
	// count the rows fitted on (every other group) and scored (this group).
	Group     string `json:"group"`
	TrainRows int    `json:"train_rows"`
	TestRows  int    `json:"test_rows"`
	// Factors were fitted on the other groups only.
	Factors Factors `json:"factors"`
	// Summary scores the left-out rows with those factors.
	Summary Summary `json:"summary"`
}

// HoldoutInfo says how a Report was made by Holdout: which key, and each fold.
type HoldoutInfo struct {
	By    string `json:"by"`
	Folds []Fold `json:"folds"`
}

// fitFunc is Fit; tests replace it.
var fitFunc = Fit

// Holdout scores the model on data it was not fitted on: for each group of rows under key
// (HoldoutSystem, HoldoutBackend or HoldoutModel), in sorted order, it fits the factors on the
// rows of every other group (Fit with o, starting from o.Start or PriorFactors, never from the
// shipped factors, which were fitted on every row) and
// validates the group's rows with them. The returned report holds every row once, in file order,
// each predicted by the fold that left it out; its summary pools all of them, and Holdout
// describes the folds. Errors: an unknown key, fewer than two groups, or a Fit/Validate error.
func Holdout(ctx context.Context, rows []Row, key string, o FitOptions) (*Report, error) {
	group := holdoutKey(key)
	if group == nil {
		return nil, fmt.Errorf("unknown holdout key %q; valid: %v", key, HoldoutKeys())
	}
	var groups []string
	for _, r := range rows {
		if g := group(r); !slices.Contains(groups, g) {
			groups = append(groups, g)
		}
	}
	slices.Sort(groups)
	if len(groups) < 2 {
		return nil, fmt.Errorf("holdout by %s needs rows of at least two %ss, got %v", key, key, groups)
	}
	if o.Start == nil {
		prior := PriorFactors()
		o.Start = &prior
	}
	info := &HoldoutInfo{By: key}
	byLine := map[int]RowResult{}
	for _, g := range groups {
		var train, test []Row
		for _, r := range rows {
			if group(r) == g {
				test = append(test, r)
			} else {
				train = append(train, r)
			}
		}
		fo := o
		if o.Log != nil {
			fo.Log = func(line string) { o.Log(fmt.Sprintf("%s %s left out: %s", key, g, line)) }
		}
		f, fitRep, err := fitFunc(ctx, train, fo)
		if err != nil {
			return nil, fmt.Errorf("holdout %s %s: fit: %w", key, g, err)
		}
		if fitRep != nil && sourceRows(fitRep.Summary) == 0 {
			// Nothing was fitted: scoring the group with the start factors would pass them off as
			// a left-out fit.
			return nil, fmt.Errorf("holdout %s %s: none of the %d rows of the other %ss could be simulated to fit on (%s)",
				key, g, len(train), key, strings.Join(fitRep.SkippedReasons(), "; "))
		}
		vo := o.Validate
		vo.Factors = &f
		rep, err := Validate(ctx, test, vo)
		if err != nil {
			return nil, fmt.Errorf("holdout %s %s: %w", key, g, err)
		}
		for _, rr := range rep.Rows {
			byLine[rr.Line] = rr
		}
		info.Folds = append(info.Folds, Fold{Group: g, TrainRows: len(train), TestRows: len(test), Factors: f, Summary: rep.Summary})
	}
	out := &Report{Holdout: info}
	for _, r := range rows {
		out.Rows = append(out.Rows, byLine[r.Line])
	}
	worst := o.Validate.withDefaults().Worst
	out.Summary = summarize(out.Rows, worst)
	return out, nil
}

// sourceRows is the number of simulated rows over every source of s (its headline may cover only
// the rows of a known harness).
func sourceRows(s Summary) int {
	n := 0
	for _, src := range s.Sources {
		n += src.RowsSimulated
	}
	return n
}
