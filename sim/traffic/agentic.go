package traffic

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
)

// LoadAgenticMooncake opens the agentic_mooncake JSONL trace at path and parses it with
// ParseAgenticMooncake. An open failure is an *fs.PathError wrapped with context.
func LoadAgenticMooncake(path string, blockSize int) ([]TraceRow, error) {
	f, err := openTrace("agentic_mooncake", path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ParseAgenticMooncake(f, path, blockSize)
}

// ParseAgenticMooncake parses an agentic_mooncake JSONL trace (dynosim-spec.md §3.1.4): the rows
// of ParseMooncake, each a node of a dependency graph, with these keys besides:
//
//   - wait_for: optional list of request ids (strings, or integers kept as their decimal text)
//     that must complete before the row is released; absent, null or [] for a root.
//   - tool_wait_ms: optional number in [0, MaxTraceSpanMs] (ms): more wait after the dependencies.
//   - request_kind, branches, prefix_reset, tool_events: producer metadata, accepted and ignored
//     (scheduling follows wait_for, cache identity hash_ids).
//
// Graph rules (ids, cycles) are checked by FromAgenticTrace, not here.
func ParseAgenticMooncake(r io.Reader, file string, blockSize int) ([]TraceRow, error) {
	return parseMooncake(r, file, blockSize, maxMooncakeLineBytes, true)
}

// agenticFields reads the agentic keys of a row.
func (p *mooncakeParser) agenticFields(row *TraceRow, raw *[numKeys][]byte, lineNo int) error {
	if v := raw[kWaitFor]; v != nil {
		elems, ok := listElems(v)
		if !ok {
			return p.errf(lineNo, "wait_for", "must be a list of request ids, got %s", describeJSON(v))
		}
		row.WaitFor = make([]string, 0, len(elems))
		for i, e := range elems {
			id, err := readString(e, p.file, lineNo, "wait_for["+strconv.Itoa(i)+"]")
			if err != nil {
				return err
			}
			row.WaitFor = append(row.WaitFor, id)
		}
	}
	if v := raw[kToolWaitMs]; v != nil {
		t, err := p.timeField(v, lineNo, "tool_wait_ms", "delay")
		if err != nil {
			return err
		}
		if t.Cmp(TraceTime{Whole: MaxTraceSpanMs}) > 0 {
			return p.errf(lineNo, "tool_wait_ms", "is %s ms, more than the %d ms (30 days) a trace may span; the unit is likely wrong (it is milliseconds)",
				t, uint64(MaxTraceSpanMs))
		}
		row.ToolWaitMs = t.Ms()
	}
	return nil
}

// Graph is the dependency graph of an agentic workload (Workload.Graph): request i is released
// once every request it waits for is terminal, at the latest of their terminal times plus its
// Request.DelayMs; a request that waits for none (a root) arrives at its Session's StartMs.
type Graph struct {
	// Waits[i] is the number of requests request i waits for (0 for a root).
	Waits []int32
	// The requests that wait for request i are Next[NextStart[i]:NextStart[i+1]], in file order.
	NextStart, Next []int32
	// Trajectory[i] numbers request i's trajectory: its connected component of the graph (edge
	// directions ignored), numbered in order of each component's first row.
	Trajectory []int32
	// Trajectories is the number of trajectories.
	Trajectories int
}

// FromAgenticTrace builds the workload of agentic_mooncake rows (ParseAgenticMooncake) whose hash
// ids stand for blockSize tokens each. Request i is row i, its prompt built from its hash blocks
// as FromTrace builds it (each row carries its full prompt); each request is its own one-turn
// session named by the row's session_id. A root (empty wait_for) arrives at its timestamp minus
// the earliest root timestamp, divided by speedup; a root without a timestamp counts as written at
// 0 ms. A dependent request arrives when the latest of its dependencies is terminal plus
// (delay + tool_wait_ms) / speedup (dynosim-spec.md §3.1.4); its timestamp is not used.
//
// Errors, each a *TraceError naming file, the line and the field: a missing, empty or repeated
// request_id; a wait_for entry that names no row, the row itself, or an id listed before; a
// non-zero delay or tool_wait_ms on a root (they count from dependencies, which a root has none
// of); a dependency cycle (named at the cycle's first row, with the ids around it); and a request
// whose earliest possible arrival (root start plus the delays along its longest chain, service
// time aside) lies beyond maxMs virtual ms.
func FromAgenticTrace(rows []TraceRow, blockSize int, speedup, maxMs float64, file string) (*Workload, error) {
	n := len(rows)
	bad := func(i int, field, format string, args ...any) error {
		return &TraceError{File: file, Line: rows[i].Line, Field: field, Msg: fmt.Sprintf(format, args...)}
	}
	index := make(map[string]int32, n)
	for i := range rows {
		id := rows[i].RequestID
		if strings.TrimSpace(id) == "" {
			return nil, bad(i, "request_id", "is required and must be non-empty in an agentic_mooncake trace")
		}
		if j, dup := index[id]; dup {
			return nil, bad(i, "request_id", "%q is already the id of line %d; request ids must be unique", id, rows[j].Line)
		}
		index[id] = int32(i)
	}
	if speedup <= 0 {
		speedup = 1
	}
	g := &Graph{Waits: make([]int32, n), NextStart: make([]int32, n+1), Trajectory: make([]int32, n)}
	parents := make([][]int32, n)
	for i := range rows {
		r := &rows[i]
		for k, id := range r.WaitFor {
			field := "wait_for[" + strconv.Itoa(k) + "]"
			j, ok := index[id]
			switch {
			case !ok:
				return nil, bad(i, field, "%q is the request_id of no row of the trace", id)
			case int(j) == i:
				return nil, bad(i, field, "%q is this row's own request_id; a request cannot wait for itself", id)
			case contains(r.WaitFor[:k], id):
				return nil, bad(i, field, "%q is listed twice; list each dependency once", id)
			}
			parents[i] = append(parents[i], j)
			g.NextStart[j+1]++
		}
		g.Waits[i] = int32(len(r.WaitFor))
		if len(r.WaitFor) == 0 {
			switch {
			case r.DelayMs != 0:
				return nil, bad(i, "delay", "is %g ms on a root (empty wait_for); a delay counts from dependencies, a root starts at its timestamp", r.DelayMs)
			case r.ToolWaitMs != 0:
				return nil, bad(i, "tool_wait_ms", "is %g ms on a root (empty wait_for); a tool wait counts from dependencies, a root starts at its timestamp", r.ToolWaitMs)
			}
		}
	}
	for i := 0; i < n; i++ {
		g.NextStart[i+1] += g.NextStart[i]
	}
	g.Next = make([]int32, g.NextStart[n])
	fill := append([]int32(nil), g.NextStart[:n]...)
	for i := range rows {
		for _, j := range parents[i] {
			g.Next[fill[j]] = int32(i)
			fill[j]++
		}
	}

	order, left := g.order()
	if len(order) < n {
		return nil, cycleError(rows, parents, left, file)
	}

	g.setTrajectories(parents)

	// Prompt content as FromTrace builds it, one session per row.
	single := make([]TraceRow, n)
	copy(single, rows)
	for i := range single {
		single[i].SessionID = ""
	}
	w := FromTrace(single, blockSize, 1)
	w.Graph = g
	var t0 TraceTime
	first := true
	for i := range rows {
		if r := &rows[i]; len(r.WaitFor) == 0 {
			ts := r.Timestamp // zero when absent
			if first || ts.Cmp(t0) < 0 {
				t0, first = ts, false
			}
		}
	}
	earliest := make([]float64, n) // the earliest possible arrival, in virtual ms
	for _, i := range order {
		r := &rows[i]
		w.Sessions[i].Name = r.SessionID
		w.Sessions[i].StartMs = 0
		w.Requests[i].DelayMs = 0
		if len(r.WaitFor) == 0 {
			w.Sessions[i].StartMs = r.Timestamp.Minus(t0).Ms() / speedup
			earliest[i] = w.Sessions[i].StartMs
		} else {
			w.Requests[i].DelayMs = (r.DelayMs + r.ToolWaitMs) / speedup
			for _, j := range parents[i] {
				earliest[i] = max(earliest[i], earliest[j])
			}
			earliest[i] += w.Requests[i].DelayMs
		}
		if earliest[i] > maxMs {
			return nil, bad(int(i), "", "this request arrives at %g virtual ms at the earliest (its first root's start plus the delays along its longest chain of dependencies), beyond the %g ms simulated time may reach",
				earliest[i], maxMs)
		}
	}
	return w, nil
}

// order returns g's requests in a topological order (Kahn's algorithm) and, per request, how
// many of its dependencies the order did not reach: a request left with some lies on or behind
// a cycle, and the order is then shorter than the requests.
func (g *Graph) order() (order, left []int32) {
	n := len(g.Waits)
	order = make([]int32, 0, n)
	left = append([]int32(nil), g.Waits...)
	for i := range n {
		if left[i] == 0 {
			order = append(order, int32(i))
		}
	}
	for k := 0; k < len(order); k++ {
		i := order[k]
		for _, c := range g.Next[g.NextStart[i]:g.NextStart[i+1]] {
			if left[c]--; left[c] == 0 {
				order = append(order, c)
			}
		}
	}
	return order, left
}

// setTrajectories numbers g's connected components (its trajectories), by their first request,
// from the requests' dependencies parents (union-find): g.Trajectory and g.Trajectories.
func (g *Graph) setTrajectories(parents [][]int32) {
	n := len(parents)
	root := make([]int32, n)
	for i := range root {
		root[i] = int32(i)
	}
	find := func(x int32) int32 {
		for root[x] != x {
			root[x] = root[root[x]]
			x = root[x]
		}
		return x
	}
	for i := range n {
		for _, j := range parents[i] {
			a, b := find(int32(i)), find(j)
			if a != b {
				root[max(a, b)] = min(a, b)
			}
		}
	}
	number := make(map[int32]int32)
	for i := range n {
		r := find(int32(i))
		t, ok := number[r]
		if !ok {
			t = int32(len(number))
			number[r] = t
		}
		g.Trajectory[i] = t
	}
	g.Trajectories = len(number)

}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// cycleError names a dependency cycle among the rows Kahn's algorithm left (left[i] > 0): from
// the first such row it follows unresolved dependencies until a row repeats, and reports the
// cycle at its first row in the file.
func cycleError(rows []TraceRow, parents [][]int32, left []int32, file string) error {
	start := -1
	for i := range rows {
		if left[i] > 0 {
			start = i
			break
		}
	}
	pos := map[int32]int{}
	var path []int32
	x := int32(start)
	for {
		if _, seen := pos[x]; seen {
			break
		}
		pos[x] = len(path)
		path = append(path, x)
		for _, p := range parents[x] {
			if left[p] > 0 {
				x = p
				break
			}
		}
	}
	cycle := path[pos[x]:]
	// cycle[k+1] is a dependency of cycle[k]; write it in dependency order from its first row.
	sorted := append([]int32(nil), cycle...)
	sort.Slice(sorted, func(a, b int) bool { return sorted[a] < sorted[b] })
	first := sorted[0]
	k0 := 0
	for k, c := range cycle {
		if c == first {
			k0 = k
		}
	}
	ids := make([]string, 0, len(cycle)+1)
	for k := 0; k <= len(cycle); k++ {
		ids = append(ids, strconv.Quote(rows[cycle[(k0+k)%len(cycle)]].RequestID))
	}
	return &TraceError{File: file, Line: rows[first].Line, Field: "wait_for", Msg: fmt.Sprintf(
		"the dependencies form a cycle (%s, each waiting for the next); an agentic trace must be acyclic", strings.Join(ids, " → "))}
}
