package main

import (
	"strings"

	"github.com/servesweep/servesweep/results"
	"github.com/spf13/cobra"
)

// Shell completion (`servesweep completion bash|zsh|fish|powershell` writes the script) offers
// the values of enumerated flags and, for file and directory flags, only files of the right kind
// or directories. The flag names are those the commands define; mustComplete fails loudly if a
// name is wrong, so a renamed flag cannot silently lose its completion.

// mustComplete registers fn to complete flag of cmd.
func mustComplete(cmd *cobra.Command, flag string, fn cobra.CompletionFunc) {
	if err := cmd.RegisterFlagCompletionFunc(flag, fn); err != nil {
		panic("servesweep: completion for " + cmd.Name() + " --" + flag + ": " + err.Error())
	}
}

// mustFilename restricts the completion of a file flag to the given extensions (none: any file).
func mustFilename(cmd *cobra.Command, flag string, exts ...string) {
	if err := cmd.MarkFlagFilename(flag, exts...); err != nil {
		panic("servesweep: completion for " + cmd.Name() + " --" + flag + ": " + err.Error())
	}
}

// mustDirname restricts the completion of a directory flag to directories.
func mustDirname(cmd *cobra.Command, flag string) {
	if err := cmd.MarkFlagDirname(flag); err != nil {
		panic("servesweep: completion for " + cmd.Name() + " --" + flag + ": " + err.Error())
	}
}

// fixed completes one of choices ("value\tdescription" entries) and never a file name.
func fixed(choices ...string) cobra.CompletionFunc {
	return cobra.FixedCompletions(choices, cobra.ShellCompDirectiveNoFileComp)
}

// noFiles completes nothing: a flag that takes a value which is no file name.
func noFiles(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
	return nil, cobra.ShellCompDirectiveNoFileComp
}

// completeObjective completes report --objective: first the direction ("max:" or "min:", with
// no space after it), then the metric, a numeric column of results.parquet.
func completeObjective(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	dir, _, ok := strings.Cut(toComplete, ":")
	if !ok {
		return []cobra.Completion{"max:", "min:"}, cobra.ShellCompDirectiveNoSpace | cobra.ShellCompDirectiveNoFileComp
	}
	var out []cobra.Completion
	for _, m := range results.NumericColumns() {
		if c := dir + ":" + m; strings.HasPrefix(c, toComplete) {
			out = append(out, c)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}
