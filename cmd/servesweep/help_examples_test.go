package main

import (
	"context"
	"os"
	"strings"
	"testing"
)

// exampleCommands returns the command lines of an Examples section: each line that starts with
// "servesweep", joined with the lines a trailing backslash continues onto.
func exampleCommands(example string) []string {
	var out []string
	var cur string
	for _, l := range strings.Split(example, "\n") {
		l = strings.TrimSpace(l)
		if cur == "" && !strings.HasPrefix(l, "servesweep") {
			continue
		}
		if more, ok := strings.CutSuffix(l, `\`); ok {
			cur += more
			continue
		}
		out = append(out, cur+l)
		cur = ""
	}
	return out
}

// shellWords splits a command line as a POSIX shell would for the quoting the examples use:
// words separated by spaces, '...' and "..." quoting (no escapes inside single quotes).
func shellWords(t *testing.T, line string) []string {
	t.Helper()
	var words []string
	var w strings.Builder
	inWord := false
	var quote rune
	for _, r := range line {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			w.WriteRune(r)
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		default:
			w.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 {
		t.Fatalf("unterminated quote in %q", line)
	}
	if inWord {
		words = append(words, w.String())
	}
	return words
}

// Every command has an Examples section (cobra's completion too), and each of its command lines
// runs as shown from the repository root, in order, with exit 0: output directories under /tmp/
// go to a temporary directory instead, and a line that reads ../shared/data is skipped with a
// message when the project's data is not beside the repository.
func TestHelpExamplesRun(t *testing.T) {
	root := newRootCmd(ioStreams{Out: new(strings.Builder), Err: new(strings.Builder)})
	addExamples(root)
	t.Chdir("../..")
	for _, c := range root.Commands() {
		if c.Name() == "help" {
			continue
		}
		t.Run(c.Name(), func(t *testing.T) {
			lines := exampleCommands(c.Example)
			if len(lines) == 0 {
				t.Fatalf("servesweep %s --help has no example command", c.Name())
			}
			tmp := t.TempDir()
			ran := false
			for _, line := range lines {
				args := shellWords(t, line)[1:]
				for i, a := range args {
					args[i] = strings.ReplaceAll(a, "/tmp/", tmp+"/")
				}
				if strings.Contains(line, "../shared/") {
					if _, err := os.Stat("../shared/data"); err != nil {
						t.Logf("skipping %q: needs the project's ../shared/data, absent here", line)
						continue
					}
				}
				var out, errb strings.Builder
				if code := run(context.Background(), args, ioStreams{Out: &out, Err: &errb}); code != exitOK {
					t.Errorf("%s\nexit %d\nstderr: %s", line, code, errb.String())
				}
				// A command a user copies runs clean: only the seed's config (a fixed KV pool, one
				// request length) draws the notes that say so.
				if e := errb.String(); !strings.Contains(line, "examples/synthetic.yaml") &&
					(strings.Contains(e, "warning:") || strings.Contains(e, "servesweep: ")) {
					t.Errorf("%s\nprinted a warning or note:\n%s", line, e)
				}
				ran = ran || strings.Fields(line)[1] == c.Name() || strings.HasPrefix(strings.Fields(line)[1], "--")
			}
			if !ran {
				t.Errorf("no example runs servesweep %s itself", c.Name())
			}
		})
	}
}
