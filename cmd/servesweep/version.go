package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

// versionText describes the build from its embedded build information: the module version
// ("(devel)" for a build from a checkout), the VCS revision and commit time, whether the work
// tree had uncommitted changes, and the Go version. Values the build did not record (a test
// binary, or a build with -buildvcs=false) read "unknown"; without build information at all
// (ok false) it says so.
func versionText(bi *debug.BuildInfo, ok bool) string {
	if !ok || bi == nil {
		return "servesweep: unknown version (the binary carries no build information)\n"
	}
	settings := map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	value := func(v string) string {
		if v == "" {
			return "unknown"
		}
		return v
	}
	var b strings.Builder
	fmt.Fprintf(&b, "servesweep %s\n", value(bi.Main.Version))
	fmt.Fprintf(&b, "revision: %s\n", value(settings["vcs.revision"]))
	fmt.Fprintf(&b, "time:     %s\n", value(settings["vcs.time"]))
	fmt.Fprintf(&b, "modified: %s\n", value(settings["vcs.modified"]))
	fmt.Fprintf(&b, "go:       %s\n", value(bi.GoVersion))
	return b.String()
}

// newVersionCmd is `servesweep version`, which prints what `servesweep --version` prints.
func newVersionCmd(io ioStreams, text string) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, VCS revision and time, and Go version of this build",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 0 {
				return &usageError{fmt.Errorf("version takes no positional arguments, got %q", args)}
			}
			return nil
		},
		RunE: func(*cobra.Command, []string) error {
			_, err := fmt.Fprint(io.Out, text)
			return err
		},
	}
}

// buildIdentity names the build for the spec hash (grid.Spec.Build): its module version when it
// is not "(devel)" (a release, or the VCS pseudo-version go build records, "+dirty" for a
// modified tree), else its VCS revision with "+modified" when the work tree had uncommitted
// changes. A build that records neither (-buildvcs=false, a build outside a checkout), and a
// modified tree's, is named (also) by the digest of its own executable (executableDigest), so
// that a resume or a merge by another such build is refused rather than mixing two timing
// models; "" for a test binary (its path ends in ".test"), or no build information, or an
// executable that cannot be read.
func buildIdentity(bi *debug.BuildInfo, ok bool) string {
	if !ok || bi == nil {
		return ""
	}
	id := vcsIdentity(bi)
	exact := id != "" && !strings.HasSuffix(id, "+modified") && !strings.HasSuffix(id, "+dirty")
	if exact || strings.HasSuffix(bi.Path, ".test") {
		return id
	}
	d := executableDigest()
	switch {
	case d == "":
		return id
	case id == "":
		return d
	}
	return id + " " + d
}

// executableDigest returns "sha256:" and the first 16 hex digits of the SHA-256 of the running
// executable's file, "" when it cannot be read. A variable so that tests can stand in for it.
var executableDigest = func() string {
	path, err := os.Executable()
	if err != nil {
		return ""
	}
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return ""
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))[:16]
}

// vcsIdentity is bi's module version when it is not "(devel)", else its VCS revision with
// "+modified" when the work tree had uncommitted changes; "" when it records neither.
func vcsIdentity(bi *debug.BuildInfo) string {
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev != "" && modified == "true" {
		rev += "+modified"
	}
	return rev
}
