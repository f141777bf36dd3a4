package config

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
)

// NotRegular says what path is when it exists but is not a regular file, following symbolic
// links: "a directory", "a named pipe (FIFO)", "a socket", "a device" or "a special file"; "" for
// a regular file, and for a path that is missing or cannot be examined (reading it reports why).
// A command checks a file it reads or replaces with it before opening it: reading a directory
// fails, and opening a named pipe with no writer blocks.
func NotRegular(path string) string {
	st, err := os.Stat(path)
	if err != nil || st.Mode().IsRegular() {
		return ""
	}
	return FileKind(st.Mode())
}

// FileKind names the kind of a file that is not a regular one, for messages: "a directory", "a
// symbolic link" (a mode from os.Lstat), "a named pipe (FIFO)", "a socket", "a device" or "a
// special file".
func FileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "a special file"
}

// NotRegularError is the cause ReadFile gives, inside an *fs.PathError naming the path, for a
// path that is not a regular file.
type NotRegularError struct {
	// Kind is what the path is instead (NotRegular), e.g. "a named pipe (FIFO)".
	Kind string
}

func (e *NotRegularError) Error() string { return "it is " + e.Kind + ", not a regular file" }

// ReadFile is os.ReadFile for a file a command was given to read (a -c config or sweep spec, a
// results directory's files). It refuses a path that is not a regular file before opening it,
// with an *fs.PathError whose Err is a *NotRegularError: reading a directory fails, and opening
// a named pipe nobody writes to blocks for good, deaf to SIGINT. The exception is an anonymous
// pipe given as an open descriptor, such as process substitution's /dev/fd/63 (-c <(...)): it is
// read, opened with O_NONBLOCK so that the open itself cannot block whatever the descriptor is.
// Linux tells such a pipe from a named pipe by its /proc link (pipe:[inode]); where there is no
// link to read (macOS), a named pipe under /dev/fd/ or /dev/stdin counts as one.
func ReadFile(path string) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil || st.Mode().IsRegular() {
		return os.ReadFile(path)
	}
	if st.Mode()&fs.ModeNamedPipe != 0 && pipeDescriptor(path) {
		f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		return io.ReadAll(f)
	}
	return nil, &fs.PathError{Op: "read", Path: path, Err: &NotRegularError{Kind: FileKind(st.Mode())}}
}

// pipeDescriptor reports whether path, a named pipe to os.Stat, is an anonymous pipe given as an
// open descriptor (ReadFile).
func pipeDescriptor(path string) bool {
	p := path
	for range 4 { // /dev/stdin -> /proc/self/fd/0 -> pipe:[inode]
		link, err := os.Readlink(p)
		if err != nil {
			break
		}
		if strings.HasPrefix(link, "pipe:") {
			return true
		}
		if !filepath.IsAbs(link) {
			link = filepath.Join(filepath.Dir(p), link)
		}
		p = link
	}
	if runtime.GOOS == "linux" {
		return false
	}
	return strings.HasPrefix(path, "/dev/fd/") || path == "/dev/stdin"
}
