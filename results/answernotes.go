package results

import (
	"fmt"
	"strings"
)

// maxNamedUnfinished is how many timed-out or failed points UnfinishedText names by ID and
// deployment; pareto.json lists up to MaxTiedPointIDs of each.
const maxNamedUnfinished = 3

// Unfinished holds the points of an analysis that have no result to compare yet could have been
// candidates: timed-out and failed rows (not twins, whose point stands for them) within the
// analysis' GPU bounds, in row order, as indexes into the rows. The answer (front, best points,
// ranking) is of the finished points only; any of these could change it once it runs.
type Unfinished struct {
	// TimedOut ran out of host time (--timeout, optimizer.candidate_timeout_seconds): a resumed
	// sweep simulates them again. Failed returned an error or panicked: a resumed sweep keeps
	// them, and each one's reason says why.
	TimedOut, Failed []int
}

// Len is the number of unfinished points, timed out and failed.
func (u Unfinished) Len() int { return len(u.TimedOut) + len(u.Failed) }

// UnfinishedOf returns the timed-out and failed rows of rows that a's settings would have let
// compete: neither a twin (EquivalentTo) nor outside a.Settings' MinGPUs and MaxGPUs, which a
// row knows without a result.
func UnfinishedOf(rows []Row, a *Analysis) Unfinished {
	var u Unfinished
	s := a.Settings
	for i := range rows {
		r := &rows[i]
		if s.MinGPUs > 0 && r.GPUs < int64(s.MinGPUs) || s.MaxGPUs > 0 && r.GPUs > int64(s.MaxGPUs) {
			continue
		}
		switch exclusion(r, s, false) {
		case ExcludedTimedOut:
			u.TimedOut = append(u.TimedOut, i)
		case ExcludedFailed:
			u.Failed = append(u.Failed, i)
		}
	}
	return u
}

// UnfinishedText is the warning printed beside the answer (stdout after "PARTIAL: ", report.md,
// report.html) when points that could change it have no result (UnfinishedOf): how many timed out
// and failed, the first maxNamedUnfinished of each by ID and deployment (a failed one with its
// reason), that the answer covers only the finished points and could change, and what to do: rerun
// the sweep into the same --output-dir with a longer --timeout (timed-out points are simulated
// again on resume), and read a failed point's reason (a resume keeps it failed). md writes IDs as
// code spans. "" when every such point finished.
func UnfinishedText(rows []Row, a *Analysis, labels Labels, md bool) string {
	u := UnfinishedOf(rows, a)
	if u.Len() == 0 {
		return ""
	}
	name := func(list []int, reason bool) string {
		var names []string
		for _, i := range list[:min(len(list), maxNamedUnfinished)] {
			r := &rows[i]
			n := fmt.Sprintf("%s (%s, %s %s %s %s", idText(r.PointID, md), Plural(int(r.GPUs), "GPU"), labels.Hardware(r), r.Mode,
				labels.Shape(r), r.RouterPolicy)
			if reason && r.Reason != "" {
				n += ": " + r.Reason
			}
			names = append(names, n+")")
		}
		if more := len(list) - maxNamedUnfinished; more > 0 {
			names = append(names, fmt.Sprintf("%d more", more))
		}
		return strings.Join(names, ", ")
	}
	var what, todo []string
	if n := len(u.TimedOut); n > 0 {
		what = append(what, fmt.Sprintf("%s timed out: %s", Plural(n, "point"), name(u.TimedOut, false)))
		todo = append(todo, "rerun the sweep's command (the same --output-dir) with a longer --timeout: timed-out points are "+
			"simulated again on resume, the finished ones kept")
	}
	if n := len(u.Failed); n > 0 {
		what = append(what, fmt.Sprintf("%s failed: %s", Plural(n, "point"), name(u.Failed, true)))
		todo = append(todo, "a failed point stays failed on resume: its reason says what to change")
	}
	n := CountStatuses(rows)
	they := "they run"
	if u.Len() == 1 {
		they = "it runs"
	}
	return fmt.Sprintf("%s. The answer below is of the %s that finished only, and could change once %s: %s.",
		strings.Join(what, "; "), Plural(len(rows)-n.Failed-n.TimedOut, "point"), they, strings.Join(todo, "; "))
}
