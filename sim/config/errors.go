package config

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
)

// Error is one problem with a prediction config: a YAML syntax error, a malformed --set
// override, a schema or cross-field violation, or a feature the schema accepts but servesweep
// does not simulate yet (Unsupported). Every Error maps to exit code 2
// (dynosim-spec.md §2.5).
//
// Error formats it as "<file>: <path>: <msg>", or "<file>: <msg>" when Path is empty (file-level
// problems such as YAML syntax errors, whose Msg carries the line number the YAML library
// reports, and --set problems, whose Msg names the --set argument).
type Error struct {
	// File is the config file name as given to LoadFile or Decode ("" omits the prefix).
	File string
	// Set is the --set argument that gave the field (PATH=VALUE), "" when the file did; Error
	// then reads "<file> (--set <Set>): <path>: <msg>".
	Set string
	// Path is the full dotted field path, e.g. "traffic.load.concurrency"; "" for file-level errors.
	Path string
	// Msg says what is wrong and what is valid, e.g. "must be an int > 0, got 0".
	Msg string
	// Unsupported marks a value the schema accepts but the simulator cannot run yet; Msg then
	// reads "<value> is not supported yet". errors.Is(err, errors.ErrUnsupported) reports it.
	Unsupported bool
	// Err is the underlying cause, if any (for example the *fs.PathError of an unreadable file).
	Err error
}

// Error formats the error as "<file>: <path>: <msg>", leaving out empty parts.
func (e *Error) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		if e.Set != "" {
			b.WriteString(" (--set ")
			b.WriteString(e.Set)
			b.WriteString(")")
		}
		b.WriteString(": ")
	}
	if e.Path != "" {
		b.WriteString(e.Path)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Unwrap returns the underlying cause, if any.
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is errors.ErrUnsupported and e is an Unsupported error, so that
// errors.Is(err, errors.ErrUnsupported) detects "not supported yet" configs.
func (e *Error) Is(target error) bool {
	return e.Unsupported && target == errors.ErrUnsupported
}

// Errors is every problem found in one pass over a config, in document order. Decode
// returns it as its error; Error prints one Error per line. Use errors.As with a
// *Error or a Errors target to detect a configuration error (exit code 2).
type Errors []*Error

// Error prints one error per line, the first MaxErrorLines of them.
func (es Errors) Error() string {
	lines := make([]string, 0, min(len(es), MaxErrorLines+1))
	for _, e := range es[:min(len(es), MaxErrorLines)] {
		lines = append(lines, e.Error())
	}
	if n := len(es) - MaxErrorLines; n > 0 {
		lines = append(lines, fmt.Sprintf("... and %d more errors like these; fix those above and run again", n))
	}
	return strings.Join(lines, "\n")
}

// MaxErrorLines is the most errors Errors.Error prints one per line; the rest are counted on one
// more line (a file of thousands of misspelt keys would otherwise print thousands of lines).
const MaxErrorLines = 100

// Unwrap exposes the individual errors to errors.Is and errors.As.
func (es Errors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

// err returns es as an error, or nil when es is empty (avoiding a typed-nil error).
func (es Errors) err() error {
	if len(es) == 0 {
		return nil
	}
	return es
}

// PathCause is the cause of a file-system error without the operation and path an
// *fs.PathError prefixes (a message names the path itself, and a temporary file's name means
// nothing to a user): "no such file or directory" for a missing file. Any other error is
// returned as is.
func PathCause(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
