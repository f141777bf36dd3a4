package main

import (
	"fmt"
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
// changes; "" when the binary records neither (a test binary, a build with -buildvcs=false), so
// that such builds hash as before. Two builds of one modified tree share an identity.
func buildIdentity(bi *debug.BuildInfo, ok bool) string {
	if !ok || bi == nil {
		return ""
	}
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
