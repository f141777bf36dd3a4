package config

import (
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"
)

// LeadingZeroNumeral returns the problem with the plain YAML scalar v when it writes a number
// with a leading zero (010, -0_256, 0258), and "" otherwise. yaml.v3 reads such an integer as
// octal, as YAML 1.1 does (010 is 8, 0256 is 174), and one with an 8 or 9 among its digits as
// a decimal float: a leading zero typed by hand would silently change the value, so the fields
// that take numbers refuse it, saying what to write; an explicit tag (!!int 010) reads the same
// way and is refused too. Quoted and block scalars, strings (_010, !!str 010), 0, 0.5, 007.5
// (YAML reads it as 7.5), 1e3 and the prefixed forms 0x1F, 0o17 and 0b101 are not such numerals.
func LeadingZeroNumeral(v *yaml.Node) string {
	const written = yaml.SingleQuotedStyle | yaml.DoubleQuotedStyle | yaml.LiteralStyle | yaml.FoldedStyle
	if v == nil || v.Kind != yaml.ScalarNode || v.Style&written != 0 || v.ShortTag() != "!!int" && v.ShortTag() != "!!float" {
		return ""
	}
	body := strings.TrimLeft(v.Value, "+-")
	s := strings.ReplaceAll(body, "_", "")
	if len(s) < 2 || s[0] != '0' || len(v.Value)-len(body) > 1 {
		return ""
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return ""
		}
	}
	sign := strings.TrimPrefix(v.Value[:len(v.Value)-len(body)], "+")
	digits := strings.TrimLeft(s, "0")
	if digits == "" {
		digits = "0"
	}
	var x int64
	if v.ShortTag() == "!!int" && v.Decode(&x) == nil {
		return fmt.Sprintf("%s, whose leading zero makes YAML read it as octal (%d); write %s%s, or %s0o%s for an octal number",
			v.Value, x, sign, digits, sign, digits)
	}
	return fmt.Sprintf("%s, a number with a leading zero; write %s%s", v.Value, sign, digits)
}
