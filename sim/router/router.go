// Package router places arriving requests on workers. A Router sees only the request index and
// returns a (worker, attention-DP rank) pair; the composition in package sim gives each policy
// whatever engine state it needs.
package router

// Router picks the worker and attention-DP rank for a request.
type Router interface {
	// Route returns the logical worker index and the rank within it for request req.
	Route(req int32) (worker, rank int)
}

// RoundRobin cycles over workers in index order, and over each worker's ranks in turn
// (dynosim-spec.md §3.3: round_robin, immediate dispatch).
type RoundRobin struct {
	workers, ranks int
	nextWorker     int
	nextRank       []int
}

// NewRoundRobin returns a round-robin router over workers workers of ranks ranks each (both > 0).
func NewRoundRobin(workers, ranks int) *RoundRobin {
	return &RoundRobin{workers: workers, ranks: ranks, nextRank: make([]int, workers)}
}

// Route implements Router.
func (r *RoundRobin) Route(int32) (worker, rank int) {
	worker = r.nextWorker
	r.nextWorker = (r.nextWorker + 1) % r.workers
	rank = r.nextRank[worker]
	r.nextRank[worker] = (rank + 1) % r.ranks
	return worker, rank
}
