package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/servesweep/servesweep/results"
	"github.com/servesweep/servesweep/sim"
	"github.com/servesweep/servesweep/sim/timing/opdb"
	"github.com/spf13/cobra"
)

// envSystemsDir names the environment variable that gives the performance database when
// --systems-dir is not: the commands read it once, in openSystems, and pass the database on as
// a value (sim.Options.Systems, grid.Spec.Systems, calibrate.Options.Systems).
const envSystemsDir = "SERVESWEEP_SYSTEMS_DIR"

// systemsAdvice is how a user configures the performance database, added to the errors of a
// setting that needs one when none is configured (sim.ErrNoSystems).
const systemsAdvice = "give --systems-dir DIR (an AIConfigurator systems folder) or set " + envSystemsDir

// addSystemsDirFlag registers --systems-dir DIR on a command that simulates: the performance
// database (an AIConfigurator systems folder) that `default` timing composes passes from. The
// command opens it once (openSystems) and every simulation it runs (a sweep's points,
// validate's rows) shares the one lazily loaded database.
func addSystemsDirFlag(cmd *cobra.Command, p *string) {
	cmd.Flags().StringVar(p, "systems-dir", "", "performance database of default timing's forward_model op_level: an AIConfigurator "+
		"systems folder (default: $"+envSystemsDir+"); forward_model auto is the roofline")
	mustDirname(cmd, "systems-dir")
}

// openSystems opens the command's performance database: dir when --systems-dir was given (set),
// else the folder getenv(SERVESWEEP_SYSTEMS_DIR) names (surrounding space trimmed), nil when
// neither names one. A path that is not a systems folder, or an empty --systems-dir, is a usage
// error (exit 2) naming the flag or the variable.
func openSystems(dir string, set bool, getenv func(string) string) (*opdb.DB, error) {
	if !set {
		env := strings.TrimSpace(getenv(envSystemsDir))
		if env == "" {
			return nil, nil
		}
		db, err := opdb.Open(env)
		if err != nil {
			return nil, &usageError{fmt.Errorf("%s: %v", envSystemsDir, err)}
		}
		return db, nil
	}
	if strings.TrimSpace(dir) == "" {
		return nil, &usageError{fmt.Errorf("--systems-dir is empty; give an AIConfigurator systems folder, or omit the flag for the roofline")}
	}
	db, err := opdb.Open(strings.TrimSpace(dir))
	if err != nil {
		return nil, &usageError{fmt.Errorf("--systems-dir: %v", err)}
	}
	return db, nil
}

// advisedError is an error with how to act on it with the commands' flags (flagAdvice).
type advisedError struct {
	err    error
	advice string
}

func (e *advisedError) Error() string { return e.err.Error() }
func (e *advisedError) Unwrap() error { return e.err }

// flagAdvice returns how to act on err with the commands' flags, for the library errors that
// say what is wrong but know no flags (and errors a command gave advice with, advisedError),
// "" for the others.
func flagAdvice(err error) string {
	var ae *advisedError
	var nj *results.NotJournalError
	var sm *results.SpecMismatchError
	switch {
	case errors.As(err, &ae):
		return ae.advice
	case errors.Is(err, sim.ErrNoSystems):
		return systemsAdvice
	case errors.As(err, &nj):
		return "remove " + nj.Path + ", or pass --overwrite to start over"
	case errors.As(err, &sm):
		return "give each spec's shards their own --output-dir"
	}
	return ""
}
