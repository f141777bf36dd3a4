package sweep

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/servesweep/servesweep/results"
)

// Progress is told how a sweep advances. Implementations must be safe for concurrent use.
type Progress interface {
	// Start is called once with the number of selected points and how many of them an earlier
	// run already finished.
	Start(total, resumed int)
	// Done is called when a point finishes, with its status (results.Status*).
	Done(status string)
	// Finish is called once at the end, also after an interruption.
	Finish()
}

// NewProgress returns a Progress writing to w: a progress bar (points done/total, failures,
// points/s, ETA) when terminal is true, else a plain line at most every interval and at the end.
// A nil w gives a silent Progress.
func NewProgress(w io.Writer, terminal bool, interval time.Duration) Progress {
	if w == nil {
		return silent{}
	}
	if terminal {
		return &barProgress{w: w}
	}
	return &lineProgress{w: w, every: interval, now: time.Now}
}

type silent struct{}

func (silent) Start(int, int) {}
func (silent) Done(string)    {}
func (silent) Finish()        {}

// counts tallies finished points.
type counts struct {
	total, resumed, done, failed, timedOut int
}

func (c *counts) add(status string) {
	c.done++
	switch status {
	case results.StatusFailed:
		c.failed++
	case results.StatusTimedOut:
		c.timedOut++
	}
}

func (c *counts) failures() string {
	return fmt.Sprintf("%d failed, %d timed out", c.failed, c.timedOut)
}

// barProgress drives a progressbar/v3 bar.
type barProgress struct {
	w   io.Writer
	mu  sync.Mutex
	c   counts
	bar *progressbar.ProgressBar
}

func (p *barProgress) Start(total, resumed int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.c = counts{total: total, resumed: resumed, done: resumed}
	p.bar = progressbar.NewOptions(total,
		progressbar.OptionSetWriter(p.w),
		progressbar.OptionSetDescription("sweep"),
		progressbar.OptionShowCount(),
		progressbar.OptionShowIts(),
		progressbar.OptionSetItsString("points"),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionShowDescriptionAtLineEnd(),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionSetWidth(30),
	)
	if resumed > 0 {
		_ = p.bar.Set(resumed)
	}
}

func (p *barProgress) Done(status string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.c.add(status)
	if p.c.failed+p.c.timedOut > 0 {
		p.bar.Describe(p.c.failures())
	}
	_ = p.bar.Add(1)
}

func (p *barProgress) Finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar != nil {
		_ = p.bar.Exit()
		fmt.Fprintln(p.w)
	}
}

// lineProgress prints plain progress lines, for logs and pipes.
type lineProgress struct {
	w     io.Writer
	every time.Duration
	now   func() time.Time
	mu    sync.Mutex
	c     counts
	start time.Time
	last  time.Time
}

func (p *lineProgress) Start(total, resumed int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.c = counts{total: total, resumed: resumed, done: resumed}
	p.start = p.now()
	p.last = p.start
	fmt.Fprintf(p.w, "sweep: %d points, %d already finished, simulating %d\n", total, resumed, total-resumed)
}

func (p *lineProgress) Done(status string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.c.add(status)
	if t := p.now(); t.Sub(p.last) >= p.every {
		p.last = t
		p.line()
	}
}

func (p *lineProgress) Finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.line()
}

// line prints done/total, failures, rate and ETA; when an earlier run finished every point, that
// instead of a rate of 0 and an unknown ETA.
func (p *lineProgress) line() {
	el := p.now().Sub(p.start).Seconds()
	sim := p.c.done - p.c.resumed
	if sim == 0 && p.c.done == p.c.total {
		fmt.Fprintf(p.w, "sweep: %d/%d points (%s), every one finished by an earlier run\n", p.c.done, p.c.total, p.c.failures())
		return
	}
	rate, eta := 0.0, "?"
	if el > 0 && sim > 0 {
		rate = float64(sim) / el
		eta = (time.Duration(float64(p.c.total-p.c.done)/rate*float64(time.Second)) / time.Second * time.Second).String()
	}
	fmt.Fprintf(p.w, "sweep: %d/%d points (%s), %.1f points/s, ETA %s\n", p.c.done, p.c.total, p.c.failures(), rate, eta)
}
