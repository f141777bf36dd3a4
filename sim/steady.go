package sim

import (
	"cmp"
	"math"
	"slices"

	"github.com/servesweep/servesweep/sim/config"
	"github.com/servesweep/servesweep/sim/engine"
	"github.com/servesweep/servesweep/sim/traffic"
)

// FirstWave returns a copy of cfg that runs only the first wave of its concurrency load: the
// `concurrency` sessions (synthetic-session sources) or requests (other sources) that start
// together, all at once (ramp_seconds and warmup_seconds omitted), the stop being exactly that
// count. It is the burst a benchmark's first wave is; its mean request lifetime
// (MeanE2EMs) is the ramp that spreads a steady-state run's first wave over one lifetime, after
// which requests of equal length no longer complete in lock-step (sim/calibrate's Validate,
// sweep's capacity probes). cfg must have a concurrency load and a synthetic, synthetic-session
// or mixture source (a trace's stop cannot count requests). The copy shares cfg's engine.
func FirstWave(cfg *config.Config) *config.Config {
	c := *cfg
	l := &c.Traffic.Load
	l.RampSeconds, l.WarmupSeconds = nil, nil
	if sessionSource(&c.Traffic.Source) {
		c.Traffic.Stop = config.Stop{Sessions: l.Concurrency}
	} else {
		c.Traffic.Stop = config.Stop{Requests: l.Concurrency}
	}
	return &c
}

// sessionSource reports whether src makes sessions: synthetic-session, or a mixture of them.
func sessionSource(src *config.Source) bool {
	if src.Type == config.SourceMixture && len(src.Components) > 0 && src.Components[0].Source != nil {
		return src.Components[0].Source.Type == config.SourceSyntheticSession
	}
	return src.Type == config.SourceSyntheticSession
}

// MeanE2EMs returns the mean end-to-end latency in ms, terminal time minus arrival, over the
// requests that completed with at least one output token, and their count (0, 0 when none did).
func MeanE2EMs(reqs []engine.Request) (float64, int) {
	sum, n := 0.0, 0
	for i := range reqs {
		r := &reqs[i]
		if r.Status != engine.Completed || r.FirstTokenMs < 0 {
			continue
		}
		sum += r.TerminalMs - r.ArrivalMs
		n++
	}
	if n == 0 {
		return 0, 0
	}
	return sum / float64(n), n
}

// MeanSlotCycleMs returns the mean time, in ms, a session of wl holds its slot of a concurrency
// load in the run whose requests are reqs (indexed as wl.Requests): from its first turn's arrival
// to its last turn's terminal time, over the sessions whose every turn completed, and their
// count (0, 0 when none did). For single-turn sessions it is MeanE2EMs over the completed
// requests with an output token. Under a concurrency load a slot starts its next session when
// one ends, so this is the period of the slot: a first wave spread over less than one period
// keeps the sessions' turns in step (every session at turn 1, then every one at turn 2, ...)
// for the whole run, and a warm-up shorter than two periods measures the prefix caches still
// cold. Requests of reqs beyond wl.Requests are ignored.
func MeanSlotCycleMs(wl *traffic.Workload, reqs []engine.Request) (float64, int) {
	sum, n := 0.0, 0
	for _, s := range wl.Sessions {
		first, end := int(s.First), int(s.First)+int(s.Turns)
		if s.Turns <= 0 || end > len(reqs) {
			continue
		}
		last, done := 0.0, true
		for i := first; i < end && done; i++ {
			r := &reqs[i]
			done = r.Status == engine.Completed && r.FirstTokenMs >= 0
			last = max(last, r.TerminalMs)
		}
		if !done {
			continue
		}
		sum += last - reqs[first].ArrivalMs
		n++
	}
	if n == 0 {
		return 0, 0
	}
	return sum / float64(n), n
}

// Backlog is how the requests in a run's system (arrived, not yet completed, rejected or
// stopped) changed over a window of it: Arrived requests arrived within [from, to], AtStart were
// in the system at from and AtEnd at to, QueuedAtStart and QueuedAtEnd of them not yet admitted
// by a worker (waiting in the front end, the router or a scheduler's queue; the prefill
// worker's, in disaggregated mode) (each a count). Under an open loop (constant_rate, poisson) a
// deployment that keeps up holds about as many at the end as at the start, and no lasting queue;
// one the arrivals outpace gains the difference between their rate and its own over the window,
// in its queue once its batches are full (Overloaded). QueueOnly says that the window is too
// short to judge the system's gain (RunBacklogAfterFill), only its queue's (a Backlog journaled
// before the queue was measured has QueueOnly false and no queue).
type Backlog struct {
	Arrived       int  `json:"arrived"`
	AtStart       int  `json:"at_start"`
	AtEnd         int  `json:"at_end"`
	QueuedAtStart int  `json:"queued_at_start"`
	QueuedAtEnd   int  `json:"queued_at_end"`
	QueueOnly     bool `json:"queue_only,omitempty"`
}

// QueueBacklog measures reqs' Backlog over [fromMs, toMs] (virtual ms), QueueOnly false.
// Requests that never arrived (ArrivalMs < 0) are not counted.
func QueueBacklog(reqs []engine.Request, fromMs, toMs float64) Backlog {
	var b Backlog
	in := func(r *engine.Request, t float64) bool {
		return r.ArrivalMs <= t && (r.TerminalMs < 0 || r.TerminalMs > t)
	}
	queued := func(r *engine.Request, t float64) bool {
		return in(r, t) && (r.FirstAdmitMs < 0 || r.FirstAdmitMs > t)
	}
	count := func(ok bool, n *int) {
		if ok {
			*n++
		}
	}
	for i := range reqs {
		r := &reqs[i]
		if r.ArrivalMs < 0 {
			continue
		}
		count(r.ArrivalMs >= fromMs && r.ArrivalMs <= toMs, &b.Arrived)
		count(in(r, fromMs), &b.AtStart)
		count(in(r, toMs), &b.AtEnd)
		count(queued(r, fromMs), &b.QueuedAtStart)
		count(queued(r, toMs), &b.QueuedAtEnd)
	}
	return b
}

// OverloadShare and OverloadMinRequests define an overloaded open-loop run (Backlog.Overloaded):
// its system gained more than OverloadShare of the requests that arrived over the window, and
// more than OverloadMinRequests. A deployment that keeps up ends a window with about the
// requests it began it with (Little's law: its rate times its latency, both steady); one the
// arrivals outpace by a tenth gains a tenth of them, its queue and every latency after it
// growing with the run's length (a user trial, 2026-12-06: one H200 serving about 18.2
// requests/s under poisson arrivals at 20/s measured a p99 TTFT of 2.1 s over 20 requests per
// load unit and 9.1 s over 80).
const (
	OverloadShare       = 0.1
	OverloadMinRequests = 10
)

// QueueOverloadDeviations defines an overloaded window by its queue (the requests not yet
// admitted, Backlog.QueueGrowth): it grew by more than OverloadMinRequests and more than
// QueueOverloadDeviations × √arrivals. A deployment that keeps up admits each request within a
// pass or a few, so its queue does not grow however long the run, while its running batch may
// still be filling (which the system's gain counts, hence that rule's longer window); a queue
// that wanders without a trend (a deployment near its capacity) moves over a window by about
// √(2 × arrivals), as a random walk of its arrivals and admissions would at capacity, and 3 ×
// √arrivals is over two such deviations; below capacity the queue is stationary and the bound
// conservative. An overload of ε (a share of the arrivals) passes it over a window of more than
// 9 / ε² arrivals: over the 1,000–3,000 arrivals of common windows it catches overloads of 6–9 %
// and more, and a longer window (Backlog.Ambiguous) smaller ones; no share of the arrivals
// bounds it, which would let any overload under that share pass however long the run (a user
// trial: 2 replicas serving about 36.5 requests/s, offered 37, gained a queue of 1,366 over
// 87,459 arrivals, under 2 % of them, 4.6 × √arrivals). Measured (2026-12-07, one H200 serving
// Llama-3.1-8B, prompts of 1,639–2,048 tokens and answers of 103–128, about 18.2 requests/s at
// most; 3,000 poisson arrivals, traffic.source.seed and traffic.load.seed both 1, 2 and 3): the
// queue grew by at most 4 and 28 at 17 and 18 requests/s, and by 73–143 at 19 and 195–273 at 20
// (3 × √arrivals: about 150; a review's seeds gave up to 34 at 18 and 150 at 19, just past it);
// over 2,000 arrivals the 20 requests/s run's queue grew by 134 of 1,421 arrivals in a window
// too short to judge the system's gain (135, 9.5 %).
const QueueOverloadDeviations = 3

// DrainDeviations defines a window that drained its system (Backlog.Drained): it lost more than
// OverloadMinRequests and more than DrainDeviations × √(2 × inFlight), inFlight being what the
// deployment keeps in flight (its completion rate times its mean latency, Little's law: InFlight).
// Only an autoscaled deployment can drain, after a warm-up, work queued before its window (a
// queue it built while it had too few workers, served once the planner added some); a static one
// measured after its fill holds a stationary count, and a loss is its swing. That swing is about
// √inFlight for a Poisson count, and grows toward capacity (about 1/(1 − utilization) times the
// mean for a single queue), so the rule is for autoscaled deployments only (callers check the
// planner), where a drain is the planner's and tens of times the bound: a user trial (2026-12-07)
// had one H200 worker under the planner at 40 poisson requests/s serve 44.6 requests/s over its
// window as it shed 584 requests, 639 in flight (bound 107). Measured on static deployments by a
// review (2026-12-07, one H200, 150 seeds per rate from 11 to 13 requests/s, capacity about 13.1),
// 0–3 % of the judged runs lost more than the bound.
const DrainDeviations = 3

// Drained reports whether the window's system lost more requests than DrainDeviations allow given
// the requests it keeps in flight: for an autoscaled deployment, a drain of work queued before
// the window. Unlike Overloaded it does not depend on QueueOnly.
func (b Backlog) Drained(inFlight float64) bool {
	loss := float64(-b.Growth())
	return loss > OverloadMinRequests && loss > DrainDeviations*math.Sqrt(2*max(inFlight, 0))
}

// InFlight is the requests a run keeps in flight by Little's law: its completion rate (requests/s)
// times its mean end-to-end latency (ms) / 1000; the level Backlog.Drained compares a window's
// loss with, as sweep and results' rows judge it.
func InFlight(requestRPS, meanE2EMs float64) float64 { return requestRPS * meanE2EMs / 1000 }

// LastArrivalMs is the latest arrival time of reqs in virtual ms (-1 when none arrived).
func LastArrivalMs(reqs []engine.Request) float64 {
	last := -1.0
	for i := range reqs {
		last = max(last, reqs[i].ArrivalMs)
	}
	return last
}

// LastStartMs is the latest arrival in virtual ms (-1 when none arrived) of a request of reqs
// that starts a session of workload w (its turn 0; reqs indexed like w.Requests, as
// Result.Requests are): the last arrival an open loop's load sets. A session's later turns
// arrive after the turn before them completes, so a deployment the load outpaces delays them
// past its last start while its queue drains (a user trial, 2026-12-07: one H100 offered 60
// four-turn sessions/s, serving about 18, held 178 fewer requests at its last turn's arrival
// than when its window began, p99 TTFT 14.6 s). With w nil, or every request a session of one
// turn, it is LastArrivalMs.
func LastStartMs(reqs []engine.Request, w *traffic.Workload) float64 {
	if w == nil || len(w.Requests) != len(reqs) {
		return LastArrivalMs(reqs)
	}
	last := -1.0
	for i := range reqs {
		if w.Requests[i].Turn == 0 {
			last = max(last, reqs[i].ArrivalMs)
		}
	}
	return last
}

// Starts counts the requests of reqs that arrived (ArrivalMs >= 0) and start a session of
// workload w (turn 0; every arrived request when w is nil or does not index reqs).
func Starts(reqs []engine.Request, w *traffic.Workload) int {
	whole := w == nil || len(w.Requests) != len(reqs)
	n := 0
	for i := range reqs {
		if reqs[i].ArrivalMs >= 0 && (whole || w.Requests[i].Turn == 0) {
			n++
		}
	}
	return n
}

// DrainEndMs is the first time in [fromMs, toMs] (virtual ms) at which reqs' system (arrived, not
// yet terminal) holds at most n requests, and toMs when it never does.
func DrainEndMs(reqs []engine.Request, fromMs, toMs float64, n int) float64 {
	type event struct {
		ms    float64
		delta int
	}
	var events []event
	held := 0
	for i := range reqs {
		r := &reqs[i]
		if r.ArrivalMs < 0 || r.ArrivalMs > toMs {
			continue
		}
		switch {
		case r.TerminalMs >= 0 && r.TerminalMs <= fromMs:
			// gone before the window
		case r.ArrivalMs <= fromMs:
			held++
			if r.TerminalMs >= 0 && r.TerminalMs <= toMs {
				events = append(events, event{r.TerminalMs, -1})
			}
		default:
			events = append(events, event{r.ArrivalMs, 1})
			if r.TerminalMs >= 0 && r.TerminalMs <= toMs {
				events = append(events, event{r.TerminalMs, -1})
			}
		}
	}
	if held <= n {
		return fromMs
	}
	// Every event at one time applies before the count is read, as a window end reads it
	// (QueueBacklog: a request arriving and ending at t is not in the system at t).
	slices.SortFunc(events, func(a, b event) int { return cmp.Compare(a.ms, b.ms) })
	for i := 0; i < len(events); {
		t := events[i].ms
		for ; i < len(events) && events[i].ms == t; i++ {
			held += events[i].delta
		}
		if held <= n {
			return t
		}
	}
	return toMs
}

// Growth is AtEnd − AtStart: what the window added to the system.
func (b Backlog) Growth() int { return b.AtEnd - b.AtStart }

// QueueGrowth is QueuedAtEnd − QueuedAtStart: what the window added to the queue.
func (b Backlog) QueueGrowth() int { return b.QueuedAtEnd - b.QueuedAtStart }

// Overloaded reports whether the window's arrivals outpaced the deployment: its system gained
// more than OverloadShare of them and more than OverloadMinRequests, over a window not QueueOnly;
// or its queue grew past QueueOverloadDeviations and OverloadMinRequests.
func (b Backlog) Overloaded() bool {
	return b.SystemOverloaded() || b.QueueOverloaded()
}

// Ambiguous reports whether a window that is not Overloaded still gained more than a deployment
// that keeps up usually does: its queue more than half of √arrivals (half a deviation of a random
// walk at capacity; a queue below capacity stays near empty) and OverloadMinRequests, or its
// system, over a window not QueueOnly, more than half of OverloadShare of the arrivals and
// OverloadMinRequests. An overload of
// a few percent looks so over a window of a few thousand arrivals (an overload ε passes
// QueueOverloaded over more than 9 / ε² arrivals): a longer window resolves it, one way or the
// other (a user trial, 2026-12-07: a disaggregated P1 + D1 serving about 23.3 requests/s,
// offered 24, was the best point by throughput at 100 requests per load unit, its queue up by 97
// of 2,188 arrivals against a bound of 140, and overloaded at 400, where 22 requests/s was best;
// a later one's 2 replicas offered 38 requests/s, about 4 % over, gained 16 of 943 arrivals).
func (b Backlog) Ambiguous() bool {
	if b.Overloaded() {
		return false
	}
	q, g, n := float64(b.QueueGrowth()), float64(b.Growth()), float64(b.Arrived)
	return q > OverloadMinRequests && q > math.Sqrt(n)/2 || !b.QueueOnly && g > OverloadMinRequests && g > OverloadShare/2*n
}

// SystemOverloaded is Overloaded's rule on the system's gain (false when QueueOnly).
func (b Backlog) SystemOverloaded() bool {
	g := b.Growth()
	return !b.QueueOnly && g > OverloadMinRequests && float64(g) > OverloadShare*float64(b.Arrived)
}

// QueueOverloaded is Overloaded's rule on the queue's growth.
func (b Backlog) QueueOverloaded() bool {
	q, n := float64(b.QueueGrowth()), float64(b.Arrived)
	return q > OverloadMinRequests && q > QueueOverloadDeviations*math.Sqrt(n)
}

// RunBacklogAfterFill is the Backlog of a run of cfg on workload w (reqs indexed like
// w.Requests; nil: every request a session's start) under an open loop (constant_rate or
// poisson) over a window that starts after the fill whatever the config's warm-up (predict's
// runs usually have none, and an explicit one may be short): at the warm-up or at two mean
// service lifetimes of the run's completed requests (serviceLifetimeMs), whichever is later, to
// the last session start (LastStartMs: a session's later turns follow the deployment, not the
// load); fromMs is where it starts (virtual ms). ok is false for other loads, runs
// without arrivals in the window, and a window judgedBacklog cannot judge: too few service
// lifetimes, or a start that holds fewer requests than the deployment keeps in flight (a
// deployment that keeps up would look as if it gained its in-flight load). Sweep and predict
// both judge by it.
func RunBacklogAfterFill(cfg *config.Config, reqs []engine.Request, w *traffic.Workload) (b Backlog, fromMs float64, ok bool) {
	from, last, ok := openLoopWindow(cfg, reqs, w)
	if !ok {
		return b, 0, false
	}
	if l, ok := serviceLifetimeMs(reqs, 0, last); ok {
		from = max(from, 2*l)
	}
	if last <= from {
		return b, from, false
	}
	b, ok = judgedBacklog(reqs, from, last)
	return b, from, ok
}

// openLoopWindow is the measured window of a run of cfg on workload w under an open loop
// (constant_rate or poisson): from its warm-up to its last session start (LastStartMs), in
// virtual ms; ok is false for other loads and runs whose last start is not after the warm-up.
func openLoopWindow(cfg *config.Config, reqs []engine.Request, w *traffic.Workload) (fromMs, lastMs float64, ok bool) {
	l := &cfg.Traffic.Load
	if l.Type != config.LoadConstantRate && l.Type != config.LoadPoisson {
		return 0, 0, false
	}
	last := LastStartMs(reqs, w)
	from := l.Warmup() * 1000
	return from, last, last > from
}

// judgedBacklog is the Backlog of reqs over [fromMs, toMs] and whether it can be judged: the
// window has arrivals and spans grossServiceLifetimes. Its system's gain is judged when the
// window starts after the fill (filled) and spans judgedServiceLifetimes, or grossServiceLifetimes
// with a gross gain (else QueueOnly: a filling system gains what a deployment that keeps up
// holds in flight); its queue's over any such window, which the fill does not grow (a user
// trial, 2026-12-07: one H200 at 16 requests/s, 88 % of its capacity, measured after a warm-up of
// two lifetimes held 36 requests where it keeps 74 in flight, its batch still growing, and went
// unjudged over a window of 19 lifetimes).
func judgedBacklog(reqs []engine.Request, fromMs, toMs float64) (Backlog, bool) {
	b := QueueBacklog(reqs, fromMs, toMs)
	if b.Arrived == 0 {
		return b, false
	}
	// A window of judgedServiceLifetimes is judged at any gain; one of grossServiceLifetimes only
	// when the gain is more than grossShare of the arrivals, more than a deployment that keeps
	// up holds in flight over such a window (its rate times one lifetime is at most half of what
	// arrives over two).
	span, ok := serviceSpan(reqs, fromMs, toMs)
	if !ok || span < grossServiceLifetimes {
		return b, false
	}
	b.QueueOnly = !filled(reqs, fromMs, toMs, b.AtStart) ||
		span < judgedServiceLifetimes && float64(b.Growth()) <= grossShare*float64(b.Arrived)
	return b, true
}

// grossServiceLifetimes and grossShare judge a window shorter than judgedServiceLifetimes: of at
// least 2 service lifetimes, where a gain of more than half the arrivals is no deployment's that
// keeps up (JudgedBacklog).
const (
	grossServiceLifetimes = 2
	grossShare            = 0.5
)

// serviceSpan is how many mean service lifetimes (serviceLifetimeMs) the window [fromMs, toMs]
// spans; ok is false when no request that arrived in it completed.
func serviceSpan(reqs []engine.Request, fromMs, toMs float64) (float64, bool) {
	l, ok := serviceLifetimeMs(reqs, fromMs, toMs)
	if !ok || l <= 0 {
		return 0, false
	}
	return (toMs - fromMs) / l, true
}

// judgedServiceLifetimes is the fewest service lifetimes (serviceLifetimeMs) a window must span
// for RunBacklogAfterFill to judge any gain (grossServiceLifetimes for a gross one): a deployment that keeps up holds about its rate times its
// latency at both ends, and over a window of few lifetimes its filling, and the swings of a
// random arrival process, move that by more than OverloadShare of the window's arrivals (a user
// trial, 2026-12-06: one H200 serving Llama-3.1-8B answers of about 2k tokens, 25 s each, at 4
// requests/s, which it keeps up with for 1,000 s, gained 38 of 265 arrivals over a window of
// about two lifetimes).
const judgedServiceLifetimes = 6

// serviceLifetimeMs is the mean time the completed requests that arrived in [fromMs, toMs] spent
// admitted, from their first admission to their end: a lifetime without the wait for admission,
// which a queue the arrivals outpace lengthens without bound; ok is false when none completed.
func serviceLifetimeMs(reqs []engine.Request, fromMs, toMs float64) (float64, bool) {
	sum, n := 0.0, 0
	for i := range reqs {
		r := &reqs[i]
		if r.Status != engine.Completed || r.FirstAdmitMs < 0 || r.ArrivalMs < fromMs || r.ArrivalMs > toMs {
			continue
		}
		sum += r.TerminalMs - r.FirstAdmitMs
		n++
	}
	if n == 0 {
		return 0, false
	}
	return sum / float64(n), true
}

// filled reports whether a window [fromMs, toMs] of a run starts after the deployment filled:
// its start holds at least half the requests the deployment keeps admitted (Little's law L = λW,
// with λ the window's completion rate and W the service lifetime, serviceLifetimeMs, which a
// queue the arrivals outpace does not lengthen). A deployment the arrivals outpace holds that and
// its queue at the start and passes; one that keeps up, measured from an empty start (no
// warm-up), does not.
func filled(reqs []engine.Request, fromMs, toMs float64, atStart int) bool {
	w, ok := serviceLifetimeMs(reqs, fromMs, toMs)
	if !ok {
		return false
	}
	completed := 0
	for i := range reqs {
		if r := &reqs[i]; r.Status == engine.Completed && r.TerminalMs >= fromMs && r.TerminalMs <= toMs {
			completed++
		}
	}
	return float64(atStart) >= float64(completed)/(toMs-fromMs)*w/2
}
