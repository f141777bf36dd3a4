package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --cpuprofile and --memprofile write pprof files; a path that cannot be created, or one file
// for both, is exit 2 before any work.
func TestProfileFlags(t *testing.T) {
	dir := t.TempDir()
	cpu, mem := filepath.Join(dir, "cpu.prof"), filepath.Join(dir, "mem.prof")
	code, _, errs := runCLI(t, "predict", "--stack", "dynamo", "-c", seedConfig, "--output-dir", filepath.Join(dir, "ok"),
		"--cpuprofile", cpu, "--memprofile", mem)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, p := range []string{cpu, mem} {
		if st, err := os.Stat(p); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", p, err)
		}
	}
	// Profiles are overwritten by profiles, and no temporary file is left behind.
	code, _, errs = runCLI(t, "predict", "--stack", "dynamo", "-c", seedConfig, "--output-dir", filepath.Join(dir, "ok2"),
		"--cpuprofile", cpu, "--memprofile", mem)
	if code != 0 {
		t.Fatalf("second run: exit %d: %s", code, errs)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*.tmp*")); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--memprofile", dir}, "--memprofile: " + dir + " is not a regular file"},
		{[]string{"--cpuprofile", filepath.Join(dir, "missing", "c.prof")}, "--cpuprofile: cannot write " + filepath.Join(dir, "missing", "c.prof") + ": no such file or directory\n"},
		{[]string{"--cpuprofile", mem, "--memprofile", filepath.Join(dir, ".", "mem.prof")}, "name the same file"},
		{[]string{"--cpuprofile", seedConfig}, "exists and is not a pprof profile; refusing to overwrite it"},
		{[]string{"--memprofile", seedConfig}, "exists and is not a pprof profile; refusing to overwrite it"},
	} {
		out := filepath.Join(dir, "bad")
		code, _, errs := runCLI(t, append([]string{"predict", "--stack", "dynamo", "-c", seedConfig, "--output-dir", out}, c.args...)...)
		if code != 2 || !strings.Contains(errs, c.msg) {
			t.Errorf("%v: exit %d, %q; want 2 and %q", c.args, code, errs, c.msg)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%v: the run went ahead (%s exists)", c.args, out)
		}
	}
}
