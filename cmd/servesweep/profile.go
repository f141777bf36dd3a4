package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"

	"github.com/spf13/cobra"
)

// profiler writes the pprof profiles asked for with --cpuprofile and --memprofile: the CPU
// profile covers the whole command, the heap profile (allocations since start and what is live)
// is taken when it ends. Read them with `go tool pprof bin/servesweep FILE`.
type profiler struct {
	cpuPath, memPath string
	cpu              *os.File
	started          bool
}

// addFlags registers the flags on root, for every command.
func (p *profiler) addFlags(root *cobra.Command) {
	root.PersistentFlags().StringVar(&p.cpuPath, "cpuprofile", "", "write a pprof CPU profile of the command to this file")
	root.PersistentFlags().StringVar(&p.memPath, "memprofile", "", "write a pprof heap profile to this file when the command ends")
}

// start checks both profile paths before any work and begins CPU profiling when asked. Errors
// (exit 2): one path for both profiles, or a file that cannot be created (the heap profile's
// file is created empty now and written at the end).
func (p *profiler) start() error {
	if p.cpuPath != "" && p.memPath != "" && filepath.Clean(p.cpuPath) == filepath.Clean(p.memPath) {
		return &usageError{fmt.Errorf("--cpuprofile and --memprofile name the same file %s; give two files", p.cpuPath)}
	}
	if p.memPath != "" {
		f, err := os.Create(p.memPath)
		if err != nil {
			return &usageError{fmt.Errorf("--memprofile: %w", err)}
		}
		f.Close()
	}
	p.started = true
	if p.cpuPath == "" {
		return nil
	}
	f, err := os.Create(p.cpuPath)
	if err != nil {
		return &usageError{fmt.Errorf("--cpuprofile: %w", err)}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return &usageError{fmt.Errorf("--cpuprofile: %w", err)}
	}
	p.cpu = f
	return nil
}

// stop ends CPU profiling and writes the heap profile, whatever the command's outcome (not when
// start refused the flags).
func (p *profiler) stop() error {
	if !p.started {
		return nil
	}
	if p.cpu != nil {
		pprof.StopCPUProfile()
		if err := p.cpu.Close(); err != nil {
			return fmt.Errorf("--cpuprofile: %w", err)
		}
		p.cpu = nil
	}
	if p.memPath == "" {
		return nil
	}
	f, err := os.Create(p.memPath)
	if err != nil {
		return fmt.Errorf("--memprofile: %w", err)
	}
	runtime.GC()
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		f.Close()
		return fmt.Errorf("--memprofile: %w", err)
	}
	return f.Close()
}
