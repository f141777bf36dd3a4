package config

import (
	"errors"
	"strconv"
	"testing"
)

// Decimal notation is read as ParseFloat reads it; digit separators and hexadecimal floats are
// syntax errors; a decimal beyond float64 is a range error.
func TestParseDecimal(t *testing.T) {
	for s, want := range map[string]float64{"60": 60, "6e1": 60, "-0.5": -0.5, "+1.25": 1.25} {
		if got, err := ParseDecimal(s); err != nil || got != want {
			t.Errorf("%q: %v, %v; want %v", s, got, err, want)
		}
	}
	for _, s := range []string{"6_0", "0x10", "0x1p4", "1P3", "abc", ""} {
		if _, err := ParseDecimal(s); !errors.Is(err, strconv.ErrSyntax) {
			t.Errorf("%q: %v, want a syntax error", s, err)
		}
	}
	if _, err := ParseDecimal("1e400"); !errors.Is(err, strconv.ErrRange) {
		t.Errorf("1e400: %v, want a range error", err)
	}
}
