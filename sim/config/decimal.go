package config

import (
	"strconv"
	"strings"
)

// ParseDecimal is strconv.ParseFloat of a number in decimal notation only (digits, a sign, a
// point, an exponent; "inf" and "nan" as ParseFloat reads them). Go's digit separators and
// hexadecimal floats, which ParseFloat also reads ("6_0" as 60, "0x1p4" as 16), are a syntax
// error (*strconv.NumError with strconv.ErrSyntax): in a CSV of measurements or a command-line
// flag they are typos rather than numbers. A decimal number beyond a float64's range is
// ParseFloat's strconv.ErrRange.
func ParseDecimal(s string) (float64, error) {
	if strings.ContainsAny(s, "_xXpP") {
		return 0, &strconv.NumError{Func: "ParseFloat", Num: s, Err: strconv.ErrSyntax}
	}
	return strconv.ParseFloat(s, 64)
}
