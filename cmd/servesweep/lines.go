package main

import (
	"bytes"
	"io"
	"strconv"
	"strings"
)

// maxLineWidth is the widest line sweep, merge, report and validate print on stdout, in
// characters: a terminal of 120 columns shows every line whole.
const maxLineWidth = 120

// wrapText breaks s at spaces into lines of at most width characters, the lines after the
// first indented by indent, joined by newlines; the spacing within a line is kept (a table row
// stays aligned), and a word longer than a line keeps a line of its own.
func wrapText(s string, width int, indent string) string {
	var b strings.Builder
	r := []rune(s)
	for len(r) > width {
		lead := 0 // no break inside the leading indentation
		for lead < len(r) && r[lead] == ' ' {
			lead++
		}
		cut := -1
		// A space before a percent sign keeps the number and its unit together ("16.29 %").
		breaks := func(i int) bool { return r[i] == ' ' && (i+1 >= len(r) || r[i+1] != '%') }
		for i := width; i > lead; i-- {
			if breaks(i) {
				cut = i
				break
			}
		}
		for i := width + 1; cut < 0 && i < len(r); i++ { // a word longer than the line
			if breaks(i) {
				cut = i
			}
		}
		if cut < 0 {
			break
		}
		rest := strings.TrimLeft(string(r[cut:]), " ")
		b.WriteString(strings.TrimRight(string(r[:cut]), " "))
		if rest == "" {
			return b.String()
		}
		b.WriteString("\n")
		r = []rune(indent + rest)
	}
	b.WriteString(string(r))
	return b.String()
}

// runeLen is the length of s in characters.
func runeLen(s string) int { return len([]rune(s)) }

// frontEntry renders the n-th recommended point for stdout, each line within maxLineWidth when
// its parts allow: its objective values and ties, then its deployment and load, then its
// configuration file (on the deployment's line when it fits there).
func frontEntry(n int, values []string, tied, deployment, config string) string {
	head := "  " + strconv.Itoa(n) + ": "
	pad := strings.Repeat(" ", len(head))
	var b strings.Builder
	b.WriteString(wrapText(head+strings.Join(values, ", ")+tied, maxLineWidth, pad) + "\n")
	line := pad + deployment
	if runeLen(line)+len(", config: ")+runeLen(config) <= maxLineWidth {
		b.WriteString(line + ", config: " + config + "\n")
		return b.String()
	}
	b.WriteString(wrapText(line, maxLineWidth, pad) + "\n")
	b.WriteString(wrapText(pad+"config: "+config, maxLineWidth, pad) + "\n")
	return b.String()
}

// wrapWriter passes text to w with every line longer than maxLineWidth wrapped at spaces
// (wrapText), its continuation lines indented two spaces past the line's own indentation. A
// line is passed on when its newline arrives; Flush passes on an unfinished last line.
type wrapWriter struct {
	w   io.Writer
	buf []byte
}

// newWrapWriter returns a wrapWriter writing to w.
func newWrapWriter(w io.Writer) *wrapWriter { return &wrapWriter{w: w} }

// Write buffers p and writes each complete line, wrapped; it reports len(p) written unless w
// fails.
func (ww *wrapWriter) Write(p []byte) (int, error) {
	ww.buf = append(ww.buf, p...)
	for {
		i := bytes.IndexByte(ww.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		line := string(ww.buf[:i])
		ww.buf = ww.buf[i+1:]
		if _, err := io.WriteString(ww.w, wrapLine(line)+"\n"); err != nil {
			return 0, err
		}
	}
}

// Flush writes a last line that has no newline yet.
func (ww *wrapWriter) Flush() error {
	if len(ww.buf) == 0 {
		return nil
	}
	_, err := io.WriteString(ww.w, wrapLine(string(ww.buf)))
	ww.buf = nil
	return err
}

// wrapLine wraps one line for wrapWriter.
func wrapLine(line string) string {
	if runeLen(line) <= maxLineWidth {
		return line
	}
	lead := len(line) - len(strings.TrimLeft(line, " "))
	return wrapText(line, maxLineWidth, strings.Repeat(" ", lead+2))
}
