// Command servesweep simulates LLM serving deployments on CPUs and tells which serving
// configuration to run. `servesweep predict` evaluates one workload against one deployment and is
// compatible with DynoSim's `aisimulate predict` in input and output.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"reflect"
	"regexp"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/agnivade/levenshtein"
	"github.com/servesweep/servesweep/cmd/servesweep/internal/hugepages"
	"github.com/servesweep/servesweep/results"
	"github.com/servesweep/servesweep/sim/config"
	"github.com/servesweep/servesweep/sim/traffic"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Exit codes (dynosim-spec.md §2.5).
const (
	exitOK          = 0
	exitRunFailure  = 1
	exitConfigError = 2
	exitInterrupted = 130
)

// ioStreams carries the process's standard streams so commands can run in tests.
type ioStreams struct {
	Out, Err io.Writer
}

// usageError is a command-line syntax error (exit 2).
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], ioStreams{Out: os.Stdout, Err: os.Stderr})
	stop()
	os.Exit(code)
}

// reserveHeap backs the start of the heap with transparent huge pages (internal/hugepages), once
// per process, before a command that simulates (simulates) runs; not with --memprofile, whose
// allocation profile would show the reservation, and not for the other commands, which it would
// only slow by the collection it forces (6-18 ms). Measured 2026-12-01 on examples/trace-replay.yaml: page faults fell from
// about 11,800 to 1,600-2,100 and the run from 0.53-0.59 to 0.38-0.44 CPU-s (fewer faults and
// TLB misses), the same peak RSS. The advice is a hint: where the kernel ignores or refuses it,
// nothing changes.
var reserveHeap = sync.OnceFunc(func() { _, _, _ = hugepages.Reserve(hugepages.DefaultReserve) })

// simulates names the commands that run simulations, for which reserveHeap pays off.
var simulates = map[string]bool{"predict": true, "sweep": true, "validate": true}

// run executes the command line args and returns the process exit code.
// outWriter passes writes on to w and keeps the first error: a command whose stdout could not
// be written (a full disk, a closed descriptor) fails with exit 1 instead of exiting 0 with its
// output lost.
type outWriter struct {
	w   io.Writer
	err error
}

func (o *outWriter) Write(p []byte) (int, error) {
	if o.err != nil {
		return 0, o.err
	}
	n, err := o.w.Write(p)
	if err != nil {
		o.err = err
	}
	return n, err
}

func run(ctx context.Context, args []string, io ioStreams) int {
	var prof profiler
	out := &outWriter{w: io.Out}
	io.Out = out
	root := newRootCmd(io)
	prof.addFlags(root)
	refuseRepeats(root)
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error {
		if err := repeatedFlag(cmd); err != nil {
			return err
		}
		if prof.memPath == "" && simulates[cmd.Name()] {
			reserveHeap()
		}
		return prof.start()
	}
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if perr := prof.stop(); perr != nil && err == nil {
		err = perr
	}
	if err == nil && out.err != nil {
		err = fmt.Errorf("writing to stdout: %w", out.err)
	}
	if err == nil {
		return exitOK
	}
	reportError(io.Err, err)
	return exitCode(err)
}

// reportError prints err for the user: a bare interruption (Ctrl-C or SIGTERM, however wrapped)
// as "interrupted (...)"; an *interruptedError, which says what was saved and how to resume, and any
// other error after "error:", followed by a "hint:" line with the flags that fix it when there
// is one (flagAdvice).
func reportError(w io.Writer, err error) {
	var ie *interruptedError
	if errors.Is(err, context.Canceled) && !errors.As(err, &ie) {
		fmt.Fprintln(w, "interrupted (Ctrl-C or SIGTERM) before the command finished")
		return
	}
	fmt.Fprintln(w, "error:", err)
	if advice := flagAdvice(err); advice != "" {
		fmt.Fprintln(w, "hint:", advice)
	}
}

// exitCode maps an error to the process exit code: configuration and usage errors 2,
// interruption 130, anything else 1.
func exitCode(err error) int {
	var ce *config.Error
	var ces config.Errors
	var te *traffic.TraceError
	var ue *usageError
	var le *results.JournalLockedError
	switch {
	case errors.Is(err, context.Canceled):
		return exitInterrupted
	case errors.As(err, &ce), errors.As(err, &ces), errors.As(err, &te), errors.As(err, &ue), errors.As(err, &le):
		return exitConfigError
	}
	return exitRunFailure
}

func newRootCmd(io ioStreams) *cobra.Command {
	version := versionText(debug.ReadBuildInfo())
	root := &cobra.Command{
		Use:           "servesweep",
		Short:         "Simulate LLM serving deployments and find the configuration to run",
		SilenceUsage:  true,
		SilenceErrors: true,
		// An unknown subcommand is command-line syntax (exit 2). Without Args, cobra would
		// report it as an untyped error.
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return nil
			}
			msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
			if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
				msg += "; did you mean " + strings.Join(s, " or ") + "?"
			}
			return &usageError{errors.New(msg)}
		},
		RunE:                       func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
		SuggestionsMinimumDistance: 2,
		// Version enables --version; the template prints the whole build description.
		Version: "servesweep",
	}
	root.SetVersionTemplate(version)
	root.SetOut(io.Out)
	root.SetErr(io.Err)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		// A mistyped command followed by its flags (servesweep predikt -c x) fails on the root's
		// flags first; the command is the mistake to name.
		if a := c.Flags().Args(); c == root && len(a) > 0 {
			return root.Args(root, a)
		}
		return &usageError{unknownFlagError(c, flagValueError(err))}
	})
	root.AddCommand(newPredictCmd(io, nil))
	root.AddCommand(newSweepCmd(io, nil))
	root.AddCommand(newReportCmd(io, nil))
	root.AddCommand(newMergeCmd(io, nil))
	root.AddCommand(newValidateCmd(io, nil))
	root.AddCommand(newExportCmd(io, nil))
	root.AddCommand(newVersionCmd(io, version))
	root.AddCommand(newListCmd(io))
	root.AddCommand(newRowsCmd(io))
	addExamples(root)
	// cobra's completion command shows its help for a shell it has no script for; that is a
	// mistyped command line (exit 2), as an unknown subcommand is.
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		if c.Name() != "completion" {
			continue
		}
		var shells []string
		for _, sc := range c.Commands() {
			shells = append(shells, sc.Name())
			sc.Args = func(cmd *cobra.Command, args []string) error {
				if len(args) > 0 {
					return &usageError{fmt.Errorf("%s takes no arguments, got %q", cmd.CommandPath(), args)}
				}
				return nil
			}
		}
		c.Args = func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return nil
			}
			return &usageError{fmt.Errorf("completion: no script for shell %q; one of %s", args[0], strings.Join(shells, ", "))}
		}
		c.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
		c.Example = "  # Print the bash completion script (source its output from ~/.bashrc; zsh, fish and powershell alike)\n" +
			"  servesweep completion bash"
	}
	// Notices from flag parsing (a deprecated flag's) go to stderr: cobra would print them on
	// stdout, in front of predict --format json's object.
	root.Flags().SetOutput(io.Err)
	for _, c := range root.Commands() {
		c.Flags().SetOutput(io.Err)
	}
	return root
}

// onceFlag wraps a single-valued flag to record every value given: with `-c a.yaml -c b.yaml`
// the last would otherwise win without a word, and a.yaml would be ignored. The refusal is
// repeatedFlag's, once the command line is parsed: a completion request parses it twice.
type onceFlag struct {
	pflag.Value
	values []string
}

// Set records s and passes it to the wrapped value.
func (f *onceFlag) Set(s string) error {
	f.values = append(f.values, s)
	return f.Value.Set(s)
}

// repeatedFlag returns a usage error naming the first single-valued flag of cmd (refuseRepeats)
// given more than once and its values, or nil. A deprecated alias sets the same variable as its
// flag (pflag's values are pointers to it), so the two count as one flag.
func repeatedFlag(cmd *cobra.Command) error {
	type given struct {
		names  []string
		values []string
	}
	byVar := map[string]*given{}
	var order []string
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		o, ok := f.Value.(*onceFlag)
		if !ok || len(o.values) == 0 {
			return
		}
		key := "--" + f.Name
		if v := reflect.ValueOf(o.Value); v.Kind() == reflect.Pointer {
			key = fmt.Sprint(v.Pointer()) // the variable the flag sets
		}
		g := byVar[key]
		if g == nil {
			g = &given{}
			byVar[key] = g
			order = append(order, key)
		}
		g.names = append(g.names, "--"+f.Name)
		g.values = append(g.values, o.values...)
	})
	for _, key := range order {
		if g := byVar[key]; len(g.values) > 1 {
			return &usageError{fmt.Errorf("%s given %d times (%s); it takes one value: give it once",
				strings.Join(g.names, " and "), len(g.values), quoteList(g.values))}
		}
	}
	return nil
}

// quoteList renders values as "a", "b", ...
func quoteList(values []string) string {
	q := make([]string, len(values))
	for i, v := range values {
		q[i] = strconv.Quote(v)
	}
	return strings.Join(q, ", ")
}

// refuseRepeats wraps every single-valued flag of cmd and its subcommands in an onceFlag, for
// repeatedFlag to check. Repeatable flags (string arrays and slices, such as --set and
// --objective) and booleans (a repeated switch says the same thing twice) are left alone.
func refuseRepeats(cmd *cobra.Command) {
	wrap := func(f *pflag.Flag) {
		t := f.Value.Type()
		if t == "bool" || strings.HasSuffix(t, "Slice") || strings.HasSuffix(t, "Array") {
			return
		}
		if _, done := f.Value.(*onceFlag); !done {
			f.Value = &onceFlag{Value: f.Value}
		}
	}
	cmd.Flags().VisitAll(wrap)
	cmd.PersistentFlags().VisitAll(wrap)
	for _, c := range cmd.Commands() {
		refuseRepeats(c)
	}
}

// flagValueRE matches pflag's message for a flag value its type cannot parse: strconv's, e.g.
// `invalid argument "maybe" for "--capture-per-request" flag: strconv.ParseBool: parsing "maybe":
// invalid syntax`, or decimalInt's and decimalFloat's (`... flag: "0x10" is not a whole number in
// decimal`).
var flagValueRE = regexp.MustCompile(`^invalid argument "(.*)" for "(.*)" flag: (?:strconv\.Parse(Bool|Int|Uint|Float): .*|".*" is (?:not a (whole number|number) in decimal|out of range for a (whole number|number)))$`)

// unknownFlagError adds to pflag's "unknown flag: --name" error the flags of command c whose names
// are within two edits of name, or start with it (from three characters on), as "did you mean"
// suggestions, and where c's flags are listed (its --help); any other error is returned as is.
func unknownFlagError(c *cobra.Command, err error) error {
	name, ok := strings.CutPrefix(err.Error(), "unknown flag: --")
	if !ok || name == "" {
		return err
	}
	var near []string
	c.Flags().VisitAll(func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		if levenshtein.ComputeDistance(name, f.Name) <= 2 || (len(name) >= 3 && strings.HasPrefix(f.Name, name)) {
			near = append(near, "--"+f.Name)
		}
	})
	hint := ""
	if len(near) > 0 {
		hint = "; did you mean " + strings.Join(near, " or ") + "?"
	}
	return fmt.Errorf("%w%s (%s --help lists its flags)", err, hint, c.CommandPath())
}

// flagValueError says what a flag of a parsed type takes instead of the parser's message; other
// errors pass unchanged.
func flagValueError(err error) error {
	m := flagValueRE.FindStringSubmatch(err.Error())
	if m == nil {
		return err
	}
	if kind := m[5]; kind != "" { // decimalInt's or decimalFloat's value beyond its type
		return fmt.Errorf("%s takes a %s, got %q, which is out of range", m[2], kind, m[1])
	}
	want := map[string]string{"Bool": "true or false (or no value, which means true)", "Int": "a whole number",
		"Uint": "a whole number >= 0", "Float": "a number", "whole number": "a whole number in decimal",
		"number": "a number in decimal notation"}[m[3]+m[4]]
	if strings.HasSuffix(err.Error(), "value out of range") {
		return fmt.Errorf("%s takes %s, got %q, which is out of range", m[2], want, m[1])
	}
	return fmt.Errorf("%s takes %s, got %q", m[2], want, m[1])
}
