package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/servesweep/servesweep/sim/metrics"
)

// The table's closing lines count the requests its rows leave out (rejected, unfinished) or
// shorten (truncated), so that they stay beside the figures when stderr is not kept; a run with
// none prints no such line.
func TestRequestOutcomesLine(t *testing.T) {
	for _, tc := range []struct {
		name string
		s    metrics.Summary
		want string
	}{
		{"rejected and truncated", metrics.Summary{NumRequests: 320, CompletedRequests: 308, RejectedRequests: 12, TruncatedRequests: 2, TruncatedOutputTokens: 183},
			"Request Outcomes: 320 offered, 308 completed (2 truncated: 183 output tokens not generated), 12 rejected (excluded from every metric)"},
		{"unfinished", metrics.Summary{NumRequests: 10, CompletedRequests: 7, UnfinishedRequests: 3},
			"Request Outcomes: 10 offered, 7 completed, 3 unfinished (excluded from every metric)"},
		{"rejected and unfinished", metrics.Summary{NumRequests: 10, CompletedRequests: 5, RejectedRequests: 4, UnfinishedRequests: 1},
			"Request Outcomes: 10 offered, 5 completed, 4 rejected, 1 unfinished (excluded from every metric)"},
		{"every request completed in full", metrics.Summary{NumRequests: 10, CompletedRequests: 10}, ""},
	} {
		if got := requestOutcomesLine(&tc.s); got != tc.want {
			t.Errorf("%s: %q\nwant %q", tc.name, got, tc.want)
		}
		var b bytes.Buffer
		writeTable(&b, &tc.s)
		if n := strings.Count(b.String(), "Request Outcomes:"); (tc.want != "") != (n == 1) || n > 1 {
			t.Errorf("%s: the table has %d outcome lines:\n%s", tc.name, n, b.String())
		}
	}
}
