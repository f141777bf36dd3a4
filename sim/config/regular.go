package config

import (
	"io/fs"
	"os"
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
	return describeMode(st.Mode())
}

// describeMode names the kind of a file that is not a regular one.
func describeMode(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "a special file"
}
