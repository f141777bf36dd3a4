package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/servesweep/servesweep/sim"
	"github.com/servesweep/servesweep/sim/config"
)

// TestReportError checks that an interruption prints "interrupted" however it is wrapped, that
// an interrupted sweep's own message (what was saved, how to resume) is printed in full, and
// that both exit 130 while other errors print after "error:" and exit 1.
func TestReportError(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		out  string
		code int
	}{
		{"bare cancellation", context.Canceled, "interrupted (Ctrl-C or SIGTERM) before the command finished\n", exitInterrupted},
		{"wrapped cancellation", fmt.Errorf("simulating: %w", context.Canceled), "interrupted (Ctrl-C or SIGTERM) before the command finished\n", exitInterrupted},
		{"interrupted sweep", &interruptedError{msg: "interrupted: 3 of 9 points finished and saved"},
			"error: interrupted: 3 of 9 points finished and saved\n", exitInterrupted},
		{"other error", errors.New("disk full"), "error: disk full\n", exitRunFailure},
	} {
		var b strings.Builder
		reportError(&b, tc.err)
		if b.String() != tc.out || exitCode(tc.err) != tc.code {
			t.Errorf("%s: printed %q, exit %d; want %q, exit %d", tc.name, b.String(), exitCode(tc.err), tc.out, tc.code)
		}
	}
}

// TestPredictInterrupted runs predict with a cancelled context, as after Ctrl-C: exit 130 and
// "interrupted" on stderr. The run is long enough (2,000 requests) for the simulator to look at
// the context, which it does every 1,024 events.
func TestPredictInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, errb strings.Builder
	dir := filepath.Join(t.TempDir(), "out")
	code := run(ctx, []string{"predict", "--stack", "dynamo", "-c", seedConfig, "--output-dir", dir,
		"--set", "traffic.stop={requests: 2000}"}, ioStreams{Out: &out, Err: &errb})
	if code != exitInterrupted || errb.String() != "interrupted (Ctrl-C or SIGTERM) before the command finished\n" {
		t.Errorf("exit %d, stderr %q; want 130 and \"interrupted\\n\"", code, errb.String())
	}
	// The run wrote nothing: the output directory it would have created is not left behind, also
	// when the interruption comes once the workload is built and the directory made (a context
	// whose Err reports the cancellation that its Done does not signal).
	code = run(errOnlyContext{ctx}, []string{"predict", "--stack", "dynamo", "-c", seedConfig, "--output-dir", dir,
		"--set", "traffic.stop={requests: 2000}"}, ioStreams{Out: &out, Err: &errb})
	if code != exitInterrupted {
		t.Errorf("interrupted during the run: exit %d, want 130", code)
	}
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("--output-dir %s after an interrupted predict: %v; want it absent", dir, err)
	}
}

// errOnlyContext is canceled for Err but never signals Done: code that waits on Done (a workload
// build) runs to its end, and the simulator, which polls Err, stops.
type errOnlyContext struct{ context.Context }

func (errOnlyContext) Done() <-chan struct{} { return nil }

// TestRootCommand checks that servesweep alone prints the help (exit 0) and that an unknown
// command is a usage error (exit 2) with a suggestion.
// fullWriter fails every write, as a full disk does.
type fullWriter struct{}

func (fullWriter) Write([]byte) (int, error) { return 0, syscall.ENOSPC }

// A command whose stdout cannot be written exits 1 saying so, table output as JSON; one whose
// output fits exits 0.
func TestStdoutWriteFailureExits1(t *testing.T) {
	for _, args := range [][]string{{"list", "models"}, {"list", "models", "--format", "json"}, {"sweep", "--print-spec"}, {"version"}} {
		var errb bytes.Buffer
		if code := run(context.Background(), args, ioStreams{Out: fullWriter{}, Err: &errb}); code != exitRunFailure ||
			!strings.Contains(errb.String(), "no space left on device") {
			t.Errorf("%v to a full disk: exit %d, stderr %q", args, code, errb.String())
		}
	}
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"list", "models"}, ioStreams{Out: &out, Err: &errb}); code != exitOK || out.Len() == 0 {
		t.Errorf("list models: exit %d, %d bytes, stderr %q", code, out.Len(), errb.String())
	}
}

func TestRootCommand(t *testing.T) {
	code, out, errs := runCLI(t)
	if code != exitOK || !strings.Contains(out, "Available Commands:") || errs != "" {
		t.Errorf("no arguments: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	code, _, errs = runCLI(t, "predcit")
	if code != exitConfigError || errs != "error: unknown command \"predcit\" for \"servesweep\"; did you mean predict?\n" {
		t.Errorf("unknown command: exit %d, stderr %q", code, errs)
	}
	// With the command's flags after it, the command is still what is named.
	code, _, errs = runCLI(t, "predikt", "-c", "x.yaml")
	if code != exitConfigError || errs != "error: unknown command \"predikt\" for \"servesweep\"; did you mean predict?\n" {
		t.Errorf("unknown command with flags: exit %d, stderr %q", code, errs)
	}
	code, _, errs = runCLI(t, "--nosuch")
	if code != exitConfigError || !strings.Contains(errs, "unknown flag: --nosuch") {
		t.Errorf("unknown root flag: exit %d, stderr %q", code, errs)
	}
}

// TestRepeatedFlagRefused checks that a single-valued flag given twice is exit 2 naming the flag
// and its first value (the last would otherwise win silently), while repeatable flags (--set)
// and repeated switches keep working.
func TestRepeatedFlagRefused(t *testing.T) {
	for _, args := range [][]string{
		{"predict", "--stack", "dynamo", "-c", "a.yaml", "-c", "b.yaml", "--output-dir", t.TempDir()},
		{"predict", "--stack", "dynamo", "--config", "a.yaml", "-c", "b.yaml", "--output-dir", t.TempDir()},
		{"sweep", "--dry-run", "--parallelism", "2", "--parallelism", "3"},
		{"report", "--results", "x", "--results", "y"},
		{"predict", "--cpuprofile", filepath.Join(t.TempDir(), "a"), "--cpuprofile", filepath.Join(t.TempDir(), "b"), "-c", "x.yaml"},
		{"validate", "--measured", "x.csv", "--parallel", "2", "--parallelism", "3"}, // a deprecated alias and its flag
	} {
		code, out, errs := runCLI(t, args...)
		if code != exitConfigError || !strings.Contains(errs, " given 2 times (") || out != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 saying the flag was given twice", args, code, out, errs)
		}
	}
	code, _, errs := runCLI(t, "sweep", "--dry-run", "--set", "traffic.load.concurrency=4", "--set", "traffic.load.concurrency=8", "-q", "-q")
	if code != 0 {
		t.Errorf("repeated --set and -q: exit %d %q; want 0", code, errs)
	}
}

// openSystems reads --systems-dir when given, else the environment's folder, and nothing else;
// a setting that needs a database without one gets the flags as a hint.
func TestOpenSystems(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "h200_sxm.yaml"), []byte("data_dir: data\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := func(v string) func(string) string {
		return func(name string) string {
			if name == envSystemsDir {
				return v
			}
			return ""
		}
	}
	for _, c := range []struct {
		name, flag string
		set        bool
		env        string
		want       string // the database's folder, "" for none
		errPart    string
	}{
		{"neither", "", false, "", "", ""},
		{"blank environment", "", false, "  ", "", ""},
		{"environment", "", false, " " + dir + " ", dir, ""},
		{"flag over environment", dir, true, "/no/such/db", dir, ""},
		{"bad environment", "", false, "/no/such/db", "", envSystemsDir + ": performance database /no/such/db"},
		{"bad flag", "/no/such/db", true, dir, "", "--systems-dir: performance database /no/such/db"},
		{"empty flag", " ", true, dir, "", "--systems-dir is empty"},
	} {
		db, err := openSystems(c.flag, c.set, env(c.env))
		var ue *usageError
		switch {
		case c.errPart != "":
			if !errors.As(err, &ue) || !strings.Contains(err.Error(), c.errPart) || db != nil {
				t.Errorf("%s: %v, want a usage error containing %q", c.name, err, c.errPart)
			}
		case err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want == "" && db != nil:
			t.Errorf("%s: database %s, want none", c.name, db.Dir())
		case c.want != "" && (db == nil || db.Identity() != c.want):
			t.Errorf("%s: database %v, want %s", c.name, db, c.want)
		}
	}
	var b strings.Builder
	reportError(&b, &config.Error{File: "c.yaml", Path: "router.prefill_load_model.type", Msg: "needs a database", Err: sim.ErrNoSystems})
	if want := "error: c.yaml: router.prefill_load_model.type: needs a database\nhint: " + systemsAdvice + "\n"; b.String() != want {
		t.Errorf("reportError printed %q, want %q", b.String(), want)
	}
}

// A positional argument that looks like the file a flag takes gets the flag in the error: a
// config for predict, sweep and export (-c), a CSV for validate (--measured); anything else, two
// arguments, or a flag given already, the plain error.
func TestPositionalFileHint(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"predict", "ds.yaml"}, `predict takes no positional arguments, got ["ds.yaml"]; did you mean -c ds.yaml?`},
		{[]string{"sweep", "spec.YML"}, `sweep takes no positional arguments, got ["spec.YML"]; did you mean -c spec.YML?`},
		{[]string{"export", "c.json"}, `export takes no positional arguments, got ["c.json"]; did you mean -c c.json?`},
		{[]string{"validate", "rows.csv"}, `validate takes no positional arguments, got ["rows.csv"]; did you mean --measured rows.csv?`},
		{[]string{"validate", "rows.yaml"}, `validate takes no positional arguments, got ["rows.yaml"]` + "\n"},
		{[]string{"predict", "a.yaml", "b.yaml"}, `predict takes no positional arguments, got ["a.yaml" "b.yaml"]` + "\n"},
		// The flag given already: the argument is a stray, not a missing flag.
		{[]string{"predict", "-c", "a.yaml", "a.yaml"}, `predict takes no positional arguments, got ["a.yaml"]` + "\n"},
	} {
		code, _, errs := runCLI(t, c.args...)
		if code != exitConfigError || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d with %q", c.args, code, errs, exitConfigError, c.want)
		}
	}
}
