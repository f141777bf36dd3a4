package config

import (
	"fmt"
	"strings"
	"testing"
)

// Errors prints its first MaxErrorLines errors one per line and counts the rest on one more line,
// so that a config of thousands of misspelt keys gets a message of bounded length.
func TestErrorsPrintAtMostMaxErrorLines(t *testing.T) {
	var es Errors
	for i := range MaxErrorLines + 250 {
		es = append(es, &Error{File: "c.yaml", Path: fmt.Sprintf("k%d", i), Msg: "unknown field"})
	}
	lines := strings.Split(es.Error(), "\n")
	if len(lines) != MaxErrorLines+1 || lines[0] != "c.yaml: k0: unknown field" ||
		lines[MaxErrorLines] != "... and 250 more errors like these; fix those above and run again" {
		t.Errorf("%d lines, first %q, last %q", len(lines), lines[0], lines[len(lines)-1])
	}
	if got := es[:3].Error(); strings.Count(got, "\n") != 2 || strings.Contains(got, "more errors") {
		t.Errorf("three errors: %q", got)
	}
}
