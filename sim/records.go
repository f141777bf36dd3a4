package sim

import (
	"fmt"
	"sort"

	"github.com/servesweep/servesweep/sim/engine"
)

// RequestRecords returns one requests.jsonl record per request that reached a terminal status
// (dynosim-spec.md §4.3), ordered by request_id (requests without one first), then arrival time,
// then uuid. Times are virtual ms; fields servesweep does not model for aggregated serving
// (disaggregated hand-off times, router overlap) are null, and so is dispatched_at_ms without a
// front end (with one it is the arrival plus the front-end time). Incomplete requests are omitted.
// Keys are written sorted by encoding/json. It holds every record at once; EachRequestRecord
// builds them one at a time.
func RequestRecords(res *Result) []map[string]any {
	var recs []map[string]any
	_ = EachRequestRecord(res, func(rec map[string]any) error {
		recs = append(recs, rec)
		return nil
	})
	return recs
}

// EachRequestRecord calls fn with RequestRecords' records in their order, building each only
// when it is passed, so a writer streaming millions of them holds one at a time. It stops at
// fn's first error and returns it.
func EachRequestRecord(res *Result, fn func(map[string]any) error) error {
	for _, i := range recordOrder(res) {
		if err := fn(requestRecord(res, i)); err != nil {
			return err
		}
	}
	return nil
}

// recordOrder is the indices of res's terminal requests in RequestRecords' order: request_id
// (none first), arrival time, then the uuid's index.
func recordOrder(res *Result) []int {
	var order []int
	for i := range res.Requests {
		if res.Requests[i].Status.Terminal() {
			order = append(order, i)
		}
	}
	sort.SliceStable(order, func(a, b int) bool {
		x, y := order[a], order[b]
		if idX, idY := res.Workload.Requests[x].ID, res.Workload.Requests[y].ID; idX != idY {
			return idX < idY
		}
		if ax, ay := res.Requests[x].ArrivalMs, res.Requests[y].ArrivalMs; ax != ay {
			return ax < ay
		}
		return x < y // the uuid is the index in fixed-width hex
	})
	return order
}

// requestRecord is the record of res's request i (see RequestRecords).
func requestRecord(res *Result, i int) map[string]any {
	r := &res.Requests[i]
	q := &res.Workload.Requests[i]
	sess := &res.Workload.Sessions[q.Session]
	uuid := fmt.Sprintf("00000000-0000-4000-8000-%012x", i)
	rec := map[string]any{
		"session_id":                   nullStr(sess.Name),
		"turn_index":                   nil,
		"uuid":                         uuid,
		"arrival_time_ms":              r.ArrivalMs,
		"dispatched_at_ms":             nil,
		"first_admit_ms":               nullTime(r.FirstAdmitMs),
		"terminal_time_ms":             nullTime(r.TerminalMs),
		"first_token_ms":               nullTime(r.FirstTokenMs),
		"last_token_ms":                nullTime(r.LastTokenMs),
		"ttft_ms":                      nil,
		"ttst_ms":                      nil,
		"e2e_latency_ms":               nil,
		"itl_ms":                       nil,
		"input_length":                 r.PromptLen,
		"requested_output_length":      r.RequestedOutput,
		"output_length":                r.Generated,
		"reused_input_tokens":          r.ReusedTokens,
		"recovered_tokens":             r.RecoveredTokens,
		"prefill_worker_idx":           nil,
		"decode_worker_idx":            nil,
		"prefill_admit_ms":             nil,
		"source_held_ms":               nil,
		"destination_reserved_ms":      nil,
		"destination_activated_ms":     nil,
		"decode_admit_ms":              nil,
		"source_released_ms":           nil,
		"decode_reused_input_tokens":   nil,
		"prefill_route_overlap_tokens": nil,
		"decode_route_overlap_tokens":  nil,
		"admission_count":              r.Admissions(),
		"readmission_count":            max(r.Admissions()-1, 0),
		"preemption_count":             r.Preemptions,
		"pressure_record_ordinals":     []int{},
		"terminal_status":              r.Status.String(),
		"rejection_reason":             nullStr(r.Rejection.String()),
		"routing_history":              []any{},
		"admission_history":            []any{},
	}
	if sess.Name != "" {
		rec["turn_index"] = q.Turn
	}
	if res.FrontendOverheadMs > 0 {
		// When the request left the front end for the workers (engine.frontend).
		rec["dispatched_at_ms"] = r.ArrivalMs + res.FrontendOverheadMs
	}
	if q.ID != "" {
		rec["request_id"] = q.ID
	}
	if r.Status == engine.Completed || r.Admissions() > 0 {
		rec["decode_worker_idx"] = r.Worker
		rec["routing_history"] = []any{map[string]any{
			"pool": "agg", "outcome": "immediate", "queue_entered_at_ms": nil, "released_at_ms": nil,
			"queue_wait_ms": 0.0, "logical_worker_id": r.Worker, "scheduler_id": r.Rank, "dp_rank": r.Rank,
			"reported_overlap_tokens": res.RouteOverlapTokens[i], "selected_overlap_blocks": nil, "best_available_overlap_blocks": nil,
			"overlap_regret_blocks": nil, "placement_replica_id": nil,
		}}
	}
	if r.Admissions() > 0 {
		rec["admission_history"] = appendAdmissions(nil, "agg", r.History)
	}
	if res.Handoffs != nil && r.Status != engine.Rejected {
		setHandoff(rec, r, &res.Handoffs[i])
	}
	if r.Status == engine.Completed && r.Generated >= 1 {
		rec["ttft_ms"] = max(r.FirstTokenMs-r.ArrivalMs, 0)
		rec["e2e_latency_ms"] = max(r.LastTokenMs-r.ArrivalMs, 0)
	}
	if r.Status == engine.Completed && r.Generated >= 2 {
		rec["ttst_ms"] = max(r.SecondTokenMs-r.FirstTokenMs, 0)
		rec["itl_ms"] = max((r.LastTokenMs-r.FirstTokenMs)/float64(r.Generated-1), 0)
	}
	return rec
}

// setHandoff fills in the disaggregated record rec of request r from its prefill side h: the
// prefill worker, admission and hold, the decode side's reservation and activation, and the
// admissions of both pools (the client view, r, holds the decode side).
func setHandoff(rec map[string]any, r *engine.Request, h *Handoff) {
	// Disaggregated: the prefill side's record; the client view holds the decode side.
	rec["prefill_worker_idx"] = h.PrefillWorker
	rec["first_admit_ms"] = nullTime(h.PrefillAdmitMs)
	rec["prefill_admit_ms"] = nullTime(h.PrefillAdmitMs)
	rec["source_held_ms"] = nullTime(h.SourceHeldMs)
	rec["prefill_route_overlap_tokens"] = h.PrefillOverlapTokens
	rec["decode_worker_idx"] = nil
	if h.DecodeWorker >= 0 {
		rec["decode_worker_idx"] = h.DecodeWorker
		rec["destination_reserved_ms"] = nullTime(h.DestinationReservedMs)
		rec["destination_activated_ms"] = nullTime(h.DestinationActivatedMs)
		rec["source_released_ms"] = nullTime(h.DestinationActivatedMs)
		rec["decode_reused_input_tokens"] = h.DecodeCachedTokens
		rec["decode_route_overlap_tokens"] = 0
		if r.Admissions() > 0 {
			rec["decode_admit_ms"] = nullTime(r.FirstAdmitMs)
		}
	}
	rec["routing_history"] = []any{}
	rec["admission_history"] = appendAdmissions(appendAdmissions([]any{}, "prefill", h.PrefillHistory), "decode", r.History)
	prefillAdmissions := int32(len(h.PrefillHistory))
	rec["admission_count"] = prefillAdmissions + r.Admissions()
	rec["readmission_count"] = max(prefillAdmissions-1, 0) + max(r.Admissions()-1, 0)
}

// appendAdmissions appends one admission_history entry (dynosim-spec.md §4.3) per admission of
// adm on pool ("agg", "prefill" or "decode"): admission_ordinal counts over the whole list,
// pool_admission_ordinal within the pool; recovered_tokens is a servesweep addition.
func appendAdmissions(hist []any, pool string, adm []engine.Admission) []any {
	for k, a := range adm {
		hist = append(hist, map[string]any{
			"admission_ordinal": len(hist), "pool_admission_ordinal": k, "pool": pool, "at_ms": a.AtMs,
			"reused_input_tokens": a.ReusedTokens, "recovered_tokens": a.RecoveredTokens, "is_readmission": k > 0,
		})
	}
	return hist
}

func nullStr(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func nullTime(ms float64) any {
	if ms < 0 {
		return nil
	}
	return ms
}
