package main

import (
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersionText(t *testing.T) {
	bi := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/servesweep/servesweep", Version: "v1.4.0"},
		Settings: []debug.BuildSetting{{Key: "-compiler", Value: "gc"}, {Key: "vcs", Value: "git"},
			{Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"}, {Key: "vcs.time", Value: "2026-01-02T03:04:05Z"},
			{Key: "vcs.modified", Value: "true"}}}
	want := "servesweep v1.4.0\nrevision: 0123456789abcdef0123456789abcdef01234567\ntime:     2026-01-02T03:04:05Z\nmodified: true\ngo:       go1.26.8\n"
	if got := versionText(bi, true); got != want {
		t.Errorf("full build information:\n%s\nwant\n%s", got, want)
	}
	// A build without VCS stamping (-buildvcs=false, a test binary) says what it does not know.
	bare := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}}
	want = "servesweep (devel)\nrevision: unknown\ntime:     unknown\nmodified: unknown\ngo:       go1.26.8\n"
	if got := versionText(bare, true); got != want {
		t.Errorf("no VCS information:\n%s\nwant\n%s", got, want)
	}
	if got := versionText(nil, false); !strings.Contains(got, "unknown version") {
		t.Errorf("no build information: %q", got)
	}
}

// TestVersionCommand checks that `servesweep version` and `servesweep --version` print the same
// description of the running binary, with its Go version.
func TestVersionCommand(t *testing.T) {
	want := versionText(debug.ReadBuildInfo())
	if !strings.HasPrefix(want, "servesweep ") || !strings.Contains(want, "\ngo:       "+runtime.Version()+"\n") {
		t.Fatalf("the test binary's description lacks its Go version %s:\n%s", runtime.Version(), want)
	}
	for _, args := range [][]string{{"version"}, {"--version"}, {"-v"}} {
		code, out, errs := runCLI(t, args...)
		if code != exitOK || out != want || errs != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 0 and %q", args, code, out, errs, want)
		}
	}
	if code, _, errs := runCLI(t, "version", "extra"); code != exitConfigError || !strings.Contains(errs, "no positional arguments") {
		t.Errorf("version extra: exit %d %q", code, errs)
	}
}

// The build identity the spec hash carries: a release's version, else the VCS revision, marked
// when the tree was modified; nothing for a binary that records neither.
func TestBuildIdentity(t *testing.T) {
	bi := func(version string, settings ...string) *debug.BuildInfo {
		b := &debug.BuildInfo{Main: debug.Module{Version: version}}
		for i := 0; i+1 < len(settings); i += 2 {
			b.Settings = append(b.Settings, debug.BuildSetting{Key: settings[i], Value: settings[i+1]})
		}
		return b
	}
	for _, c := range []struct {
		bi   *debug.BuildInfo
		want string
	}{
		{bi("v1.2.0", "vcs.revision", "abc"), "v1.2.0"},
		{bi("(devel)", "vcs.revision", "abc", "vcs.modified", "false"), "abc"},
		{bi("(devel)", "vcs.revision", "abc", "vcs.modified", "true"), "abc+modified"},
		{bi("(devel)"), ""},
		{nil, ""},
	} {
		c.bi = withPath(c.bi, "github.com/servesweep/servesweep/cmd/servesweep.test")
		if got := buildIdentity(c.bi, c.bi != nil); got != c.want {
			t.Errorf("%+v: %q, want %q", c.bi, got, c.want)
		}
	}
	// A servesweep binary without a release or revision, or from a modified tree, is named by
	// its executable's digest too: two such builds are two builds.
	digest := executableDigest
	t.Cleanup(func() { executableDigest = digest })
	executableDigest = func() string { return "sha256:0123456789abcdef" }
	for _, c := range []struct {
		bi   *debug.BuildInfo
		want string
	}{
		{bi("v1.2.0", "vcs.revision", "abc"), "v1.2.0"},
		{bi("(devel)", "vcs.revision", "abc", "vcs.modified", "false"), "abc"},
		{bi("(devel)", "vcs.revision", "abc", "vcs.modified", "true"), "abc+modified sha256:0123456789abcdef"},
		{bi("v0.0.0-20261207-abc+dirty"), "v0.0.0-20261207-abc+dirty sha256:0123456789abcdef"},
		{bi("(devel)"), "sha256:0123456789abcdef"},
	} {
		c.bi = withPath(c.bi, "github.com/servesweep/servesweep/cmd/servesweep")
		if got := buildIdentity(c.bi, true); got != c.want {
			t.Errorf("%+v: %q, want %q", c.bi, got, c.want)
		}
	}
	executableDigest = func() string { return "" }
	if got := buildIdentity(withPath(bi("(devel)"), "github.com/servesweep/servesweep/cmd/servesweep"), true); got != "" {
		t.Errorf("unreadable executable: %q, want \"\"", got)
	}
	// The real digest reads this test binary.
	if d := digest(); len(d) != len("sha256:")+16 || !strings.HasPrefix(d, "sha256:") || d != digest() {
		t.Errorf("executableDigest() = %q, want sha256: and 16 hex digits, the same on every call", d)
	}
}

// withPath sets bi's main package path (nil stays nil).
func withPath(bi *debug.BuildInfo, path string) *debug.BuildInfo {
	if bi != nil {
		bi.Path = path
	}
	return bi
}
