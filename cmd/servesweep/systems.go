package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/servesweep/servesweep/sim/timing/opdb"
	"github.com/spf13/cobra"
)

// addSystemsDirFlag registers --systems-dir DIR on a command that simulates: the performance
// database (an AIConfigurator systems folder) that `default` timing composes passes from. The
// flag sets SERVESWEEP_SYSTEMS_DIR for the process, so every simulation of the command (a
// sweep's points, validate's rows) shares one lazily loaded database.
func addSystemsDirFlag(cmd *cobra.Command, p *string) {
	cmd.Flags().StringVar(p, "systems-dir", "", "performance database of default timing's forward_model op_level: an AIConfigurator "+
		"systems folder (default: $"+opdb.EnvSystemsDir+"); forward_model auto is the roofline")
	mustDirname(cmd, "systems-dir")
}

// applySystemsDir makes dir the process's performance database (SERVESWEEP_SYSTEMS_DIR) when
// --systems-dir was given (set), else checks the environment's: a path that is not a systems
// folder, or an empty --systems-dir, is a usage error (exit 2) naming the flag or the variable.
func applySystemsDir(dir string, set bool) error {
	if !set {
		if env := strings.TrimSpace(os.Getenv(opdb.EnvSystemsDir)); env != "" {
			if _, err := opdb.Open(env); err != nil {
				return &usageError{fmt.Errorf("%s: %v", opdb.EnvSystemsDir, err)}
			}
		}
		return nil
	}
	if strings.TrimSpace(dir) == "" {
		return &usageError{fmt.Errorf("--systems-dir is empty; give an AIConfigurator systems folder, or omit the flag for the roofline")}
	}
	if _, err := opdb.Open(dir); err != nil {
		return &usageError{fmt.Errorf("--systems-dir: %v", err)}
	}
	return os.Setenv(opdb.EnvSystemsDir, dir)
}
