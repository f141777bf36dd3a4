package main

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/servesweep/servesweep/sim/config"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"

	"github.com/servesweep/servesweep/results"
	"github.com/spf13/cobra"
)

// profiler writes the pprof profiles asked for with --cpuprofile and --memprofile: the CPU
// profile covers the whole command, the heap profile (allocations since start and what is live)
// is taken when it ends. Read them with `go tool pprof bin/servesweep FILE`.
//
// Both are written when the command ends, atomically (results.WriteAtomic), and a target that
// exists and is not a profile (not gzip-compressed: a config, a CSV, results) is never
// overwritten, so a mistyped path cannot destroy the command's input or output.
type profiler struct {
	cpuPath, memPath string
	cpu              *bytes.Buffer // the CPU profile while profiling
	started          bool
}

// addFlags registers the flags on root, for every command.
func (p *profiler) addFlags(root *cobra.Command) {
	root.PersistentFlags().StringVar(&p.cpuPath, "cpuprofile", "", "write a pprof CPU profile of the command to this file")
	root.PersistentFlags().StringVar(&p.memPath, "memprofile", "", "write a pprof heap profile to this file when the command ends")
}

// gzipMagic starts every pprof profile file (gzip-compressed protocol buffers).
var gzipMagic = []byte{0x1f, 0x8b}

// checkTarget reports why path may not receive a profile: it is not a regular file, or it exists
// with content that is not a profile. A missing or empty file is fine.
func checkTarget(flag, path string) error {
	st, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s: %w", flag, err)
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%s: %s is not a regular file", flag, path)
	}
	if st.Size() == 0 {
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("%s: %w", flag, err)
	}
	defer f.Close()
	head := make([]byte, 2)
	if _, err := io.ReadFull(f, head); err != nil || !bytes.Equal(head, gzipMagic) {
		return fmt.Errorf("%s: %s exists and is not a pprof profile; refusing to overwrite it (give another file)", flag, path)
	}
	return nil
}

// checkWritable reports a target the command could not write at its end: not a profile, or in a
// directory where no file can be created.
func checkWritable(flag, path string) error {
	if err := checkTarget(flag, path); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		// The probe file's name is servesweep's: the message names the profile's.
		return fmt.Errorf("%s: cannot write %s: %v", flag, path, config.PathCause(err))
	}
	f.Close()
	return os.Remove(f.Name())
}

// sameFile reports whether a and b name one file (after symbolic links), or the same path.
func sameFile(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(sa, sb)
}

// start checks both profile paths before any work and begins CPU profiling when asked. Errors
// (exit 2): one file for both profiles, a target that is not a profile, a directory that cannot
// take the file.
func (p *profiler) start() error {
	if p.cpuPath != "" && p.memPath != "" && sameFile(p.cpuPath, p.memPath) {
		return &usageError{fmt.Errorf("--cpuprofile and --memprofile name the same file %s; give two files", p.cpuPath)}
	}
	for _, f := range []struct{ flag, path string }{{"--memprofile", p.memPath}, {"--cpuprofile", p.cpuPath}} {
		if f.path != "" {
			if err := checkWritable(f.flag, f.path); err != nil {
				return &usageError{err}
			}
		}
	}
	if p.cpuPath != "" {
		p.cpu = new(bytes.Buffer)
		if err := pprof.StartCPUProfile(p.cpu); err != nil {
			return &usageError{fmt.Errorf("--cpuprofile: %w", err)}
		}
	}
	p.started = true
	return nil
}

// stop ends CPU profiling and writes both profiles, whatever the command's outcome (not when
// start refused the flags). A target that the command itself wrote meanwhile (e.g. the same
// path as --output-json) is left alone and reported.
func (p *profiler) stop() error {
	if !p.started {
		return nil
	}
	var errs []error
	if p.cpu != nil {
		pprof.StopCPUProfile()
		buf := p.cpu
		errs = append(errs, writeProfile("--cpuprofile", p.cpuPath, func(w io.Writer) error {
			_, err := buf.WriteTo(w)
			return err
		}))
		p.cpu = nil
	}
	if p.memPath != "" {
		runtime.GC()
		errs = append(errs, writeProfile("--memprofile", p.memPath, func(w io.Writer) error {
			return pprof.Lookup("allocs").WriteTo(w, 0)
		}))
	}
	return errors.Join(errs...)
}

// writeProfile writes a profile to path atomically unless path now holds something else.
func writeProfile(flag, path string, write func(io.Writer) error) error {
	if err := checkTarget(flag, path); err != nil {
		return err
	}
	if err := results.WriteAtomic(path, write); err != nil {
		return fmt.Errorf("%s: %w", flag, err)
	}
	return nil
}
