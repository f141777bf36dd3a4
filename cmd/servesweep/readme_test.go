package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// readmeFiles are the pages whose sh code blocks a new user runs from a fresh clone, relative to
// the repository root.
var readmeFiles = []string{"README.md"}

// readmeSkipped are the prefixes of the commands TestReadmeCommandsRun leaves out: the whole test
// suite (which runs this test) and installing from the module proxy.
var readmeSkipped = []string{"make test", "go install"}

// shellCommands returns the commands of the ```sh blocks of a Markdown page, in order: a command
// is a line, joined with the lines that follow a trailing backslash; blank and comment lines are
// not commands.
func shellCommands(page []byte) []string {
	var cmds []string
	var cur strings.Builder
	in := false
	sc := bufio.NewScanner(bytes.NewReader(page))
	for sc.Scan() {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		switch {
		case !in && trimmed == "```sh":
			in = true
			continue
		case in && trimmed == "```":
			in = false
			continue
		case !in:
			continue
		}
		if cur.Len() == 0 && (trimmed == "" || strings.HasPrefix(trimmed, "#")) {
			continue
		}
		cur.WriteString(line)
		if strings.HasSuffix(line, `\`) {
			cur.WriteByte('\n')
			continue
		}
		cmds = append(cmds, cur.String())
		cur.Reset()
	}
	return cmds
}

func TestShellCommands(t *testing.T) {
	page := []byte("text\n```sh\nmake build   # note\n# 1. comment\n\nbin/x a \\\n  --b c\n```\n```\nnot sh\n```\n```sh\ngo install y\n```\n")
	got := shellCommands(page)
	want := []string{"make build   # note", "bin/x a \\\n  --b c", "go install y"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("commands %q, want %q", got, want)
	}
}

// TestReadmeCommandsRun runs every command of the README's sh blocks but readmeSkipped, verbatim
// and in order, with bash in a copy of the repository's files (tracked and untracked, ignored
// files left out: what a fresh clone holds), with the copy's bin on PATH; each must exit 0. It
// takes about as long as the built-in sweep (`make run`) and skips under the race detector and
// where git, make or bash is missing.
func TestReadmeCommandsRun(t *testing.T) {
	endToEnd(t)
	for _, tool := range []string{"git", "make", "bash"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed: %v", tool, err)
		}
	}
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	var cmds []string
	for _, f := range readmeFiles {
		page, err := os.ReadFile(filepath.Join(repo, f))
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range shellCommands(page) {
			skip := false
			for _, p := range readmeSkipped {
				skip = skip || strings.HasPrefix(c, p)
			}
			if !skip {
				cmds = append(cmds, c)
			}
		}
	}
	all := strings.Join(cmds, "\n")
	for _, want := range []string{"make run", "make build", "examples/chat-trace.jsonl", "examples/disaggregated.yaml"} {
		if !strings.Contains(all, want) {
			t.Fatalf("no README command has %q; commands:\n%s", want, all)
		}
	}

	clone := filepath.Join(t.TempDir(), "servesweep")
	copyRepoFiles(t, repo, clone)
	env := append(os.Environ(), "PATH="+filepath.Join(clone, "bin")+string(os.PathListSeparator)+os.Getenv("PATH"))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	// `make run` is `make build` and the built-in sweep into out/sweep: the build runs here, and
	// the sweep is the one the other end-to-end tests share (builtInSweep), copied into place,
	// as long as the Makefile's run target is that sweep.
	const runTarget = "run: build\n\t$(BIN) sweep --output-dir out/sweep $(SWEEP_FLAGS)\n"
	if mk, err := os.ReadFile(filepath.Join(repo, "Makefile")); err != nil || !strings.Contains(string(mk), runTarget) {
		t.Fatalf("the Makefile's run target is not %q (%v): update this test", runTarget, err)
	}
	shared, _, _, _ := builtInSweep(t)
	for _, c := range cmds {
		if f := strings.Fields(c); len(f) >= 2 && f[0] == "make" && f[1] == "run" && (len(f) == 2 || strings.HasPrefix(f[2], "#")) {
			c = "make build"
			copyDir(t, shared, filepath.Join(clone, "out", "sweep"))
		}
		cmd := exec.CommandContext(ctx, "bash", "-c", c)
		cmd.Dir, cmd.Env = clone, env
		start := time.Now()
		out, err := cmd.CombinedOutput()
		t.Logf("%.1f s: %s", time.Since(start).Seconds(), strings.SplitN(c, "\n", 2)[0])
		if err != nil {
			if len(out) > 4000 {
				out = out[len(out)-4000:]
			}
			t.Fatalf("README command failed (%v):\n%s\n--- output (end) ---\n%s", err, c, out)
		}
	}
}

// copyRepoFiles copies the files git lists in repo (tracked, and untracked but not ignored) to
// dst, keeping their modes' executable bits; a tracked file deleted from the working tree is
// left out.
func copyRepoFiles(t *testing.T, repo, dst string) {
	t.Helper()
	out, err := exec.Command("git", "-C", repo, "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		t.Skipf("git ls-files in %s: %v (not a git checkout?)", repo, err)
	}
	n := 0
	for _, name := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		src := filepath.Join(repo, filepath.FromSlash(name))
		st, err := os.Stat(src)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		target := filepath.Join(dst, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(target, data, st.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n == 0 {
		t.Fatalf("git lists no files in %s", repo)
	}
}
