package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/servesweep/servesweep/sim/config"
	"github.com/spf13/pflag"

	"github.com/spf13/cobra"
)

// decimalInt is a flag value read as a base-10 integer only: pflag's int flags read Go integer
// literals, so --show 010 would list 8 points (octal), 0x10 16 and 1_2 12, where a spec's YAML
// refuses a leading zero. 010 is read as 10.
type decimalInt int

// Set parses s in base 10 ("010" is 10; "0x10" and "1_2" are errors).
func (d *decimalInt) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return fmt.Errorf("%q is out of range for a whole number", s)
		}
		return fmt.Errorf("%q is not a whole number in decimal", s)
	}
	*d = decimalInt(n)
	return nil
}

// String renders the value in decimal.
func (d *decimalInt) String() string { return strconv.Itoa(int(*d)) }

// Type names the value in usage text.
func (d *decimalInt) Type() string { return "int" }

// decimalFloat is a flag value read as a number in decimal notation only: pflag's float flags
// read Go float literals, so 1_0 would be 10 and 0x1p4 16.
type decimalFloat float64

// Set parses s as a decimal number (config.ParseDecimal); digit separators and hexadecimal
// floats are errors.
func (d *decimalFloat) Set(s string) error {
	f, err := config.ParseDecimal(s)
	if errors.Is(err, strconv.ErrRange) {
		return fmt.Errorf("%q is out of range for a number", s)
	}
	if err != nil {
		return fmt.Errorf("%q is not a number in decimal", s)
	}
	*d = decimalFloat(f)
	return nil
}

// String renders the value as strconv's shortest decimal form.
func (d *decimalFloat) String() string { return strconv.FormatFloat(float64(*d), 'g', -1, 64) }

// Type names the value in usage text.
func (d *decimalFloat) Type() string { return "float" }

// intFlag defines an int flag read in decimal only (decimalInt), with default value.
func intFlag(f *pflag.FlagSet, p *int, name string, value int, usage string) {
	*p = value
	f.Var((*decimalInt)(p), name, usage)
}

// floatFlag defines a float flag read in decimal notation only (decimalFloat), with default value.
func floatFlag(f *pflag.FlagSet, p *float64, name string, value float64, usage string) {
	*p = value
	f.Var((*decimalFloat)(p), name, usage)
}

// positionalHint is the hint of a "takes no positional arguments" error whose one argument looks
// like the file flag takes (its name ends in one of exts) when cmd's flag is not set already:
// "; did you mean --FLAG ARG?" ("-c" for config), or "".
func positionalHint(cmd *cobra.Command, args []string, flag string, exts ...string) string {
	if len(args) != 1 || cmd.Flags().Changed(flag) {
		return ""
	}
	shown := "--" + flag
	if flag == "config" {
		shown = "-c"
	}
	for _, e := range exts {
		if strings.HasSuffix(strings.ToLower(args[0]), e) {
			return fmt.Sprintf("; did you mean %s %s?", shown, args[0])
		}
	}
	return ""
}
