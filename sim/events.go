package sim

// Event kinds, in the order they are applied at one timestamp.
const (
	evPass int8 = iota
	evTransfer
	evArrival
	// evDispatch is a request reaching the workers after its front-end time (engine.frontend).
	evDispatch
	// evScale is a planner tick (worker: its planner.EventKind); evReady an added worker
	// becoming ready (role: its planner pool, worker; req: the start's generation). Only with
	// the planner.
	evScale
	evReady
)

// event is something due at timeMs; seq orders ties within a kind.
type event struct {
	timeMs float64
	seq    int64
	kind   int8
	role   int8 // evPass: 0 the decoding role, 1 the prefill role
	worker int32
	req    int32
}

// eventHeap is a min-heap by (timeMs, seq), typed to avoid interface calls in the hot loop.
type eventHeap []event

func (h *eventHeap) push(e event) {
	*h = append(*h, e)
	s := *h
	i := len(s) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !s[i].less(s[p]) {
			break
		}
		s[i], s[p] = s[p], s[i]
		i = p
	}
}

func (h *eventHeap) pop() event {
	s := *h
	top := s[0]
	n := len(s) - 1
	s[0] = s[n]
	s = s[:n]
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && s[r].less(s[l]) {
			m = r
		}
		if !s[m].less(s[i]) {
			break
		}
		s[i], s[m] = s[m], s[i]
		i = m
	}
	*h = s
	return top
}

func (a event) less(b event) bool {
	if a.timeMs != b.timeMs {
		return a.timeMs < b.timeMs
	}
	return a.seq < b.seq
}
