package main

import (
	"fmt"
	"os"

	"github.com/servesweep/servesweep/sim/timing/opdb"
	"github.com/spf13/cobra"
)

// addSystemsDirFlag registers --systems-dir DIR on a command that simulates: the performance
// database (an AIConfigurator systems folder) that `default` timing composes passes from. The
// flag sets SERVESWEEP_SYSTEMS_DIR for the process, so every simulation of the command (a
// sweep's points, validate's rows) shares one lazily loaded database.
func addSystemsDirFlag(cmd *cobra.Command, p *string) {
	cmd.Flags().StringVar(p, "systems-dir", "", "performance database for default timing's op_level model: an AIConfigurator "+
		"systems folder (default: $"+opdb.EnvSystemsDir+"; none: the roofline)")
	mustDirname(cmd, "systems-dir")
}

// applySystemsDir makes dir the process's performance database (SERVESWEEP_SYSTEMS_DIR) when it
// is given; a path that is not a directory is a usage error (exit 2).
func applySystemsDir(dir string) error {
	if dir == "" {
		return nil
	}
	if _, err := opdb.Open(dir); err != nil {
		return &usageError{fmt.Errorf("--systems-dir: %v", err)}
	}
	return os.Setenv(opdb.EnvSystemsDir, dir)
}
