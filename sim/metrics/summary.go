package metrics

import (
	"math"

	"github.com/servesweep/servesweep/sim/engine"
)

// Summary is the report of one prediction: the summary keys of prediction.json
// (dynosim-spec.md §4.2). Times are virtual ms unless the name says wall; throughputs are per
// virtual second. Map gives the exact JSON keys.
type Summary struct {
	// NumRequests counts every request that arrived, including rejected and incomplete ones:
	// the requests offered to the deployment before the run stopped (prediction.json also
	// writes it as offered_requests). NumRequests = CompletedRequests + RejectedRequests +
	// UnfinishedRequests.
	NumRequests int64
	// RejectedRequests counts requests rejected at arrival; RejectedByReason splits them by
	// engine.RejectReason name (context_length, kv_capacity, 0 when none; max_batched_tokens too
	// when engine.enable_chunked_prefill is false).
	RejectedRequests int64
	RejectedByReason map[string]int64
	// UnfinishedRequests counts requests still queued or running when the run stopped (a
	// max_virtual_time_seconds stop).
	UnfinishedRequests int64
	// StopMs is the virtual time (ms) at which a max_virtual_time_seconds stop ended the run
	// (Input.StopMs; 0 without one). CensoredRequests counts the UnfinishedRequests that had
	// broken no per-request bound of the SLA by then (Censored): whether they would have met it
	// is unknown, so servesweep's SLA attainment (a capacity search's, results' sla_attainment)
	// leaves them out of the offered requests instead of counting them as misses. 0 without an
	// SLA. Not prediction.json keys.
	StopMs           float64
	CensoredRequests int64
	// CompletedRequests counts admitted requests that reached terminal status completed.
	CompletedRequests int64
	// TruncatedRequests counts completed requests that emitted fewer output tokens than they
	// requested: generation stopped where prompt plus output reached engine.context_length or the
	// KV pool's size (dynosim-spec.md §3.2.6). TruncatedOutputTokens sums the requested output
	// tokens they did not emit. Their latencies and throughput count the shorter output, so a
	// run with truncated requests does less work than it was asked to.
	TruncatedRequests, TruncatedOutputTokens int64
	// TotalInputTokens and TotalOutputTokens sum prompt and emitted output tokens over completed requests.
	TotalInputTokens, TotalOutputTokens int64
	// DurationMs is the latest terminal time of a completed request (0 when none completed).
	DurationMs float64
	// WallTimeMs is host time spent simulating.
	WallTimeMs float64
	// Throughputs over duration_s = max(DurationMs/1000, MinDurationS); not meaningful when
	// ThroughputsFloored. With a warm-up (WarmupSeconds > 0) they are measured over the steady
	// window instead (SteadyWindowMs).
	RequestThroughputRPS, InputThroughputTokS, OutputThroughputTokS, TotalThroughputTokS float64
	// WarmupSeconds is traffic.load.warmup_seconds (Input.WarmupMs / 1000); 0 means no warm-up,
	// and then Map writes none of the three warm-up keys. WarmupRequests counts the requests that
	// arrived before it, left out of every request count, token total, latency distribution,
	// goodput count and prefix-reuse ratio (key warmup_requests).
	WarmupSeconds  float64
	WarmupRequests int64
	// Cooldown reports traffic.load.cooldown in force (Input.Cooldown); CooldownRequests counts
	// the requests that arrived after Input.CooldownFromMs, left out as warm-up requests are
	// (key cooldown_requests, written only with Cooldown).
	Cooldown         bool
	CooldownRequests int64
	// CooldownFromMs is Input.CooldownFromMs with Cooldown (not written by Map).
	CooldownFromMs float64
	// SteadyWindowMs is the length t1 − t0 of the steady window over which a run with a warm-up
	// measures its rates (key steady_window_ms): t0 = WarmupSeconds × 1000 and t1 the arrival
	// time of the last request that arrived. Every rate (request, input, output, total and
	// goodput throughput) counts the completed requests whose terminal time lies in (t0, t1],
	// warm-up requests included (their work is done there), divided by t1 − t0. A closed loop's
	// drain after its last arrival runs at falling concurrency for a length set by the run's
	// size, so leaving it out makes the rates independent of run length. When no request arrived
	// after t0 (t1 <= t0) SteadyWindowMs is 0, SteadyWindowMissing is set and the rates are the
	// whole run's (every completed request over duration_s).
	// With a cool-down (Cooldown) t1 is Input.CooldownFromMs, the run's last session start (a
	// closed loop's or an open loop's), and t0 is 0 without a warm-up.
	SteadyWindowMs      float64
	SteadyWindowMissing bool
	// Provisioned worker-seconds per role and GPUs per worker (aggregated mode reports as decode).
	PrefillWorkerSeconds, DecodeWorkerSeconds float64
	PrefillGPUsPerWorker, DecodeGPUsPerWorker int
	// GPUHours = Σ role worker-seconds × GPUs per worker / 3600.
	GPUHours float64
	// HasGoodput is set when an SLA is configured; then the three goodput fields are reported.
	HasGoodput               bool
	GoodputCompletedRequests int64
	// GoodputTruncatedRequests counts the requests of GoodputCompletedRequests that stopped short
	// of their requested output (Truncated): good by the goodput rule, which judges latencies
	// alone, but not what they were asked to do, so servesweep's SLA attainment (a capacity
	// search's, results' sla_attainment) takes them off. Not a prediction.json key.
	GoodputTruncatedRequests                                 int64
	GoodputRequestThroughputRPS, GoodputOutputThroughputTokS float64
	// GoodputTruncatedRequestThroughputRPS and GoodputTruncatedOutputThroughputTokS are the
	// part of GoodputRequestThroughputRPS and GoodputOutputThroughputTokS (same window, same
	// units) that GoodputTruncatedRequests make up, so that servesweep's goodput columns can
	// leave them out. Not prediction.json keys.
	GoodputTruncatedRequestThroughputRPS, GoodputTruncatedOutputThroughputTokS float64
	ProcessedTokens                                                            int64
	ProcessedTokensPerS, ProcessedOutputTokensPerS                             float64
	PrefixCacheReusedRatio, FirstAdmissionPrefixCacheReusedRatio               float64
	NumTTFTSamples, NumTPOTSamples, NumE2ESamples                              int64
	TTFT, TTST, TPOT, ITL, E2E                                                 Stats
	OutputTokenThroughputPerUser                                               Stats
	// Preemptions counts KV preemptions over all ranks (a servesweep addition).
	Preemptions int64
	// TotalRecoveredTokens sums, over completed requests, the tokens re-admissions after a
	// preemption found still cached from the request's own earlier computation
	// (engine.Admission.RecoveredTokens; a servesweep addition, key total_recovered_tokens).
	// They are not prefix reuse and do not count in PrefixCacheReusedRatio.
	TotalRecoveredTokens int64
	// HasSpeculation marks a run with engine.speculation; Speculation then holds its counts
	// over every rank and every request (finished or not). Map writes them as
	// num_speculative_rounds, num_draft_tokens, num_accepted_draft_tokens,
	// draft_acceptance_rate (accepted / draft tokens, 0 with none) and mean_accepted_length
	// (tokens per round that verified drafts, engine.SpeculationStats.MeanAcceptedLength).
	HasSpeculation bool
	Speculation    engine.SpeculationStats
	// Trajectories summarises the trajectories of an agentic trace; nil for other workloads.
	Trajectories *Trajectories
	// Planner is the autoscaling report of a run with planner.policy enabled (worker-seconds
	// and GPU-hours then integrate its pools' provisioned workers); nil otherwise.
	Planner *PlannerReport
	// SLATerms holds, in the SLA's order, how the run fared against each percentile term of
	// its SLA (SLA.Percentiles; nil without any). Map writes sla_percentile_terms_met (true when
	// every term is met) and sla_percentile_terms_failed (the failed terms' keys, e.g.
	// ["p99_itl_ms"], [] when none) when there is at least one term: servesweep additions.
	SLATerms []TermResult
}

// Trajectories summarises the trajectories of an agentic trace: the connected components of its
// dependency graph (dynosim-spec.md §4.2, optional agentic keys).
type Trajectories struct {
	// Total counts the trajectories; Completed those whose every request completed; Incomplete
	// = Total − Completed (a request rejected, or never released or finished before the run
	// stopped).
	Total, Completed, Incomplete int64
	// E2E is the latency distribution, in ms, over completed trajectories: from the arrival of
	// the trajectory's first request (a root) to the terminal time of its last.
	E2E Stats
}

// MinDurationS is the floor of duration_s in every rate of the summary: rates divide by
// max(duration_ms/1000, MinDurationS) seconds (dynosim-spec.md §4.2, total_throughput_tok_s).
const MinDurationS = 1e-9

// DurationFloored reports whether a run that completed requests took less than MinDurationS of
// virtual time (for example fixed timing with prefill_ms and decode_ms 0, where every pass takes
// 0 ms): its rates then divide by the floor rather than by the run (6,400 tokens give 6.4e12
// tokens/s) and are not meaningful. prediction.json keeps them, as the reference does; the
// console table shows them as N/A and results.parquet as null. A run with no completed request
// is not floored: its rates are 0.
func DurationFloored(completedRequests int64, durationMs float64) bool {
	return completedRequests > 0 && durationMs/1000 < MinDurationS
}

// ThroughputsFloored reports DurationFloored for s: its throughputs divide by MinDurationS.
func (s *Summary) ThroughputsFloored() bool {
	return DurationFloored(s.CompletedRequests, s.DurationMs)
}

// SLA is evaluation.sla as the metrics apply it. TTFTMs, ITLMs and E2EMs are the per-request
// bounds in ms of the goodput rule (isGood; a non-positive bound is unset); Percentiles are the
// percentile bounds over the run (PercentileTerm), which goodput does not count.
type SLA struct {
	TTFTMs, ITLMs, E2EMs float64
	Percentiles          []PercentileTerm
}

// hasRequestBounds reports whether sla sets a per-request bound.
func (sla *SLA) hasRequestBounds() bool { return sla.TTFTMs > 0 || sla.ITLMs > 0 || sla.E2EMs > 0 }

// Input is what a run hands to Build.
type Input struct {
	Requests []engine.Request
	// PassLogs[w] is the pass history of worker w of the role that emits output tokens (the
	// aggregated or decode workers): each pass's gap and count of continuing tokens, and under
	// speculation its rounds per size (PassLog.AppendRounds) of the requests the statistics
	// count (completed, not warm-up). Build removes from the counts the tokens of requests that
	// did not complete, adds to the rounds those requests kept (engine.Request.RoundTokens) of
	// the requests it counts (it modifies the logs), and reads back the chunks they spilled;
	// their PassStore must still be open.
	PassLogs []*PassLog
	// PrefillWorkers and DecodeWorkers are the provisioned workers per role (static pools: worker
	// seconds = workers × duration_s); GPUsPerWorker per role.
	PrefillWorkers, DecodeWorkers             int
	PrefillGPUsPerWorker, DecodeGPUsPerWorker int
	// SLA, when non-nil, enables goodput.
	SLA        *SLA
	WallTimeMs float64
	// WarmupMs (traffic.load.warmup_seconds × 1000) leaves the requests that arrive before it
	// (rejected ones aside) out of the statistics and measures the rates over the steady window (Summary.WarmupSeconds,
	// Summary.SteadyWindowMs); 0 means none.
	WarmupMs float64
	// Cooldown, with CooldownFromMs in virtual ms (traffic.load.cooldown: the arrival of the
	// run's last session's first turn, under a closed or an open loop), leaves the requests arriving after
	// CooldownFromMs out of the statistics as WarmupMs leaves the early ones, and ends the steady
	// window there.
	Cooldown       bool
	CooldownFromMs float64
	// StopMs is the virtual time (ms) of the run's max_virtual_time_seconds stop, 0 without one:
	// the requests unfinished then are judged against the SLA at that time (Censored).
	StopMs float64
	// Speculation is the run's speculative-decoding counts (engine.speculation); nil when off.
	Speculation *engine.SpeculationStats
	// UnchunkedPrefill (engine.enable_chunked_prefill: false) lists the max_batched_tokens
	// reason in RejectedByReason even when it rejected nothing.
	UnchunkedPrefill bool
	Preemptions      int64
	// Trajectory, for an agentic trace, numbers each request's trajectory (0 to Trajectories−1),
	// indexed like Requests; nil otherwise.
	Trajectory   []int32
	Trajectories int
	// Pools, set when the planner is enabled, are the provisioned worker counts over time of
	// every pool, which replace PrefillWorkers and DecodeWorkers; ScalingEvents its decisions.
	Pools         []PoolTimeline
	ScalingEvents []ScalingEvent
}

// Build computes the Summary from a finished run (dynosim-spec.md §4.2, engine-internals.md §7).
// Only completed requests count toward tokens and latency samples; latency samples are clamped
// at >= 0; requests that completed with no token add no latency samples. Requests that arrived
// before in.WarmupMs count in no statistic but warmup_requests and the steady-window rates
// (Summary.SteadyWindowMs); their tokens leave the ITL samples as an unfinished request's do. A
// rejected request is never warm-up: it counts in num_requests and rejected_requests whenever it
// arrived.
// Errors: a pass log's
// PassStore failed to spill (PassStore.Err) or a spilled chunk cannot be read back; each names
// the spill file and says what to do.
func Build(in *Input) (*Summary, error) {
	for _, l := range in.PassLogs {
		if st := l.store; st != nil && st.err != nil {
			return nil, st.err
		}
	}
	s := &Summary{
		WallTimeMs:           in.WallTimeMs,
		PrefillGPUsPerWorker: in.PrefillGPUsPerWorker, DecodeGPUsPerWorker: in.DecodeGPUsPerWorker,
		Preemptions: in.Preemptions, StopMs: in.StopMs,
		RejectedByReason: map[string]int64{
			engine.RejectedContextLength.String(): 0, engine.RejectedKVCapacity.String(): 0,
		},
	}
	if in.UnchunkedPrefill {
		s.RejectedByReason[engine.RejectedPrefillBudget.String()] = 0
	}
	pop := collect(in, s)
	s.setRates(in, pop)
	if err := s.setDistributions(in, pop); err != nil {
		return nil, err
	}
	return s, nil
}

// populations are what Build gathers in one pass over the requests: the per-request samples of
// the completed ones (TTFT, TTST, TPOT, E2E, ITL gaps, speculative rounds' gaps), their sums, and
// the steady window (t0, t1] when there is a warm-up.
type populations struct {
	ttft, ttst, tpot, e2e []float64
	gaps                  []float64
	withPrevious          int64     // tokens that arrived with the token before them: ITL samples of 0 ms
	roundGaps             []float64 // speculative rounds after an ITL gap: gap / tokens of the round (Request.RoundGaps)
	reused, firstReused   int64
	good                  int64
	warmup                bool
	t0, t1                float64
	all, window           rateCounts // every completed request over the run; those ending in the window
}

// collect goes once over in's requests: it counts them into s (offered, rejected, unfinished,
// completed, warm-up, truncated, tokens, the duration), uncounts the passes of the requests
// that leave the ITL samples, and returns the populations.
func collect(in *Input, s *Summary) *populations {
	completed := 0
	for i := range in.Requests {
		if in.Requests[i].Status == engine.Completed {
			completed++
		}
	}
	// One allocation for the four per-request populations.
	samples := make([]float64, 4*completed)
	ttft, ttst, tpot, e2e := samples[:0:completed], samples[completed:completed:2*completed],
		samples[2*completed:2*completed:3*completed], samples[3*completed:3*completed]
	var gaps []float64
	var withPrevious int64  // tokens that arrived with the token before them: ITL samples of 0 ms
	var roundGaps []float64 // speculative rounds after an ITL gap: gap / tokens of the round (Request.RoundGaps)
	var reused, firstReused int64
	good := int64(0)
	warmup := in.WarmupMs > 0 || in.Cooldown // a steady window applies
	t0, t1 := in.WarmupMs, math.Inf(-1)      // the steady window (t0, t1]
	var all, window rateCounts               // every completed request over the run; those ending in the window
	if in.Cooldown {
		t1 = in.CooldownFromMs
	} else if warmup {
		for i := range in.Requests {
			if r := &in.Requests[i]; r.Status != engine.Pending {
				t1 = max(t1, r.ArrivalMs)
			}
		}
	}
	for i := range in.Requests {
		r := &in.Requests[i]
		if r.Status == engine.Pending {
			continue
		}
		goodReq := false
		if r.Status == engine.Completed {
			s.DurationMs = max(s.DurationMs, r.TerminalMs)
			goodReq = all.add(r, in.SLA)
			if warmup && r.TerminalMs > t0 && r.TerminalMs <= t1 {
				window.add(r, in.SLA)
			}
		}
		if warmup && (r.ArrivalMs < t0 || in.Cooldown && r.ArrivalMs > t1) && r.Status != engine.Rejected {
			// A warm-up (or cool-down) request: its tokens leave the ITL samples as an
			// unfinished one's do. A rejected one is never left out: a rejection is the
			// deployment's, whenever it comes, and leaving it out would make a deployment that
			// rejects look better.
			if r.ArrivalMs < t0 {
				s.WarmupRequests++
			} else {
				s.CooldownRequests++
			}
			r.EachRun(func(run engine.PassRun) { in.PassLogs[run.Worker].uncount(run.First, run.Last) })
			continue
		}
		s.NumRequests++
		switch r.Status {
		case engine.Rejected:
			s.RejectedRequests++
			s.RejectedByReason[r.Rejection.String()]++
			continue
		case engine.Completed:
		default:
			s.UnfinishedRequests++
			if in.SLA != nil && Censored(r, in.SLA, in.StopMs) {
				s.CensoredRequests++
			}
			r.EachRun(func(run engine.PassRun) { in.PassLogs[run.Worker].uncount(run.First, run.Last) })
			continue
		}
		s.CompletedRequests++
		if r.Generated < r.RequestedOutput {
			s.TruncatedRequests++
			s.TruncatedOutputTokens += int64(r.RequestedOutput - r.Generated)
		}
		s.TotalInputTokens += int64(r.PromptLen)
		s.TotalOutputTokens += int64(r.Generated)
		reused += int64(r.ReusedTokens)
		firstReused += int64(r.FirstReusedTokens)
		s.TotalRecoveredTokens += int64(r.RecoveredTokens)
		n := r.Generated
		if n >= 1 {
			ttft = append(ttft, clamp(r.FirstTokenMs-r.ArrivalMs))
			e2e = append(e2e, clamp(r.LastTokenMs-r.ArrivalMs))
		}
		if n >= 2 {
			ttst = append(ttst, clamp(r.SecondTokenMs-r.FirstTokenMs))
			tpot = append(tpot, clamp((r.LastTokenMs-r.FirstTokenMs)/float64(n-1)))
			gaps = append(gaps, r.Gaps()...)
			withPrevious += int64(r.WithPrevious)
			roundGaps = append(roundGaps, r.RoundGaps()...)
			if rt := r.RoundTokens(); len(rt) > 0 {
				addRoundTokens(r, rt, in.PassLogs)
			}
		}
		if goodReq {
			good++
			if Truncated(r) {
				s.GoodputTruncatedRequests++
			}
		}
	}
	return &populations{ttft: ttft, ttst: ttst, tpot: tpot, e2e: e2e, gaps: gaps, withPrevious: withPrevious, roundGaps: roundGaps,
		reused: reused, firstReused: firstReused, good: good, warmup: warmup, t0: t0, t1: t1, all: all, window: window}
}

// setRates sets s's worker-seconds, the planner's timelines, the throughputs and goodputs (over
// the steady window when there is a warm-up), the GPU-hours and the prefix-cache reuse.
func (s *Summary) setRates(in *Input, pop *populations) {
	warmup, t0, t1, all, window, good := pop.warmup, pop.t0, pop.t1, pop.all, pop.window, pop.good
	reused, firstReused := pop.reused, pop.firstReused
	s.PrefillWorkerSeconds = float64(in.PrefillWorkers) * s.DurationMs / 1000
	s.DecodeWorkerSeconds = float64(in.DecodeWorkers) * s.DurationMs / 1000
	if in.Pools != nil {
		s.Planner = buildPlanner(s, in.Pools, in.ScalingEvents)
	}
	durS := math.Max(s.DurationMs/1000, MinDurationS)
	rates := all
	if warmup {
		s.WarmupSeconds = in.WarmupMs / 1000
		s.Cooldown, s.CooldownFromMs = in.Cooldown, in.CooldownFromMs
		if t1 > t0 {
			s.SteadyWindowMs = t1 - t0
			rates, durS = window, s.SteadyWindowMs/1000
			if s.Planner != nil {
				s.Planner.setWindow(in.Pools, t0, t1)
			}
		} else {
			s.SteadyWindowMissing = true
		}
	}
	s.RequestThroughputRPS = float64(rates.requests) / durS
	s.InputThroughputTokS = float64(rates.input) / durS
	s.OutputThroughputTokS = float64(rates.output) / durS
	s.TotalThroughputTokS = float64(rates.input+rates.output) / durS
	s.GPUHours = (s.PrefillWorkerSeconds*float64(s.PrefillGPUsPerWorker) + s.DecodeWorkerSeconds*float64(s.DecodeGPUsPerWorker)) / 3600
	if in.SLA != nil {
		s.HasGoodput = true
		s.GoodputCompletedRequests = good
		s.GoodputRequestThroughputRPS = float64(rates.good) / durS
		s.GoodputOutputThroughputTokS = float64(rates.goodTokens) / durS
		s.GoodputTruncatedRequestThroughputRPS = float64(rates.goodTruncated) / durS
		s.GoodputTruncatedOutputThroughputTokS = float64(rates.goodTruncatedTokens) / durS
	}
	s.ProcessedTokens = s.TotalInputTokens + s.TotalOutputTokens
	if s.WallTimeMs > 0 {
		s.ProcessedTokensPerS = float64(s.ProcessedTokens) / (s.WallTimeMs / 1000)
		s.ProcessedOutputTokensPerS = float64(s.TotalOutputTokens) / (s.WallTimeMs / 1000)
	}
	if s.TotalInputTokens > 0 {
		s.PrefixCacheReusedRatio = float64(reused) / float64(s.TotalInputTokens)
		s.FirstAdmissionPrefixCacheReusedRatio = float64(firstReused) / float64(s.TotalInputTokens)
	}
}

// setDistributions sets s's latency statistics (TTFT, TTST, TPOT, E2E, ITL with the pass logs'
// gaps, the per-user token rate), the speculation, the trajectories and the SLA's percentile
// terms. Errors: a pass log's spilled chunk that cannot be read back.
func (s *Summary) setDistributions(in *Input, pop *populations) error {
	ttft, ttst, tpot, e2e, gaps, withPrevious, roundGaps := pop.ttft, pop.ttst, pop.tpot, pop.e2e, pop.gaps, pop.withPrevious, pop.roundGaps
	s.NumTTFTSamples, s.NumTPOTSamples, s.NumE2ESamples = int64(len(ttft)), int64(len(tpot)), int64(len(e2e))
	s.TTFT = Summarize(ttft)
	s.TTST = Summarize(ttst)
	s.TPOT = Summarize(tpot)
	s.E2E = Summarize(e2e)
	segs := []segment{{v: gaps}}
	for _, l := range in.PassLogs {
		segs = l.appendSegments(segs)
	}
	for ; withPrevious > 0; withPrevious -= math.MaxInt32 {
		segs = append(segs, segment{v: []float64{0}, c: []int32{int32(min(withPrevious, math.MaxInt32))}})
	}
	if sp := in.Speculation; sp != nil {
		s.HasSpeculation = true
		s.Speculation = *sp
	}
	var err error
	if s.ITL, s.OutputTokenThroughputPerUser, err = gapStats(segs); err != nil {
		return err
	}
	if in.Speculation != nil {
		// A speculative round delivers its tokens together: the user's rate over a gap is the
		// round's tokens / gap, one sample per round (Request.RoundGaps), not 1000 / gap per
		// positive gap, which would leave the accepted drafts out.
		rounds, err := roundSegment(in.PassLogs)
		if err != nil {
			return err
		}
		if _, s.OutputTokenThroughputPerUser, err = gapStats([]segment{{v: roundGaps}, rounds}); err != nil {
			return err
		}
	}
	if in.Trajectory != nil {
		s.Trajectories = buildTrajectories(in)
	}
	if in.SLA != nil && len(in.SLA.Percentiles) > 0 {
		s.SLATerms = checkSummaryTerms(in.SLA.Percentiles, s)
	}
	return nil
}

// rateCounts are the sums over completed requests that a summary's rates divide by a duration.
type rateCounts struct {
	requests, input, output, good, goodTokens int64
	// goodTruncated and goodTruncatedTokens count the good requests cut short of their output
	// (Truncated) and their output tokens: part of good and goodTokens.
	goodTruncated, goodTruncatedTokens int64
}

// add counts the completed request r and reports whether it is good under sla (false when sla
// is nil).
func (c *rateCounts) add(r *engine.Request, sla *SLA) bool {
	c.requests++
	c.input += int64(r.PromptLen)
	c.output += int64(r.Generated)
	if sla == nil || !isGood(r, sla) {
		return false
	}
	c.good++
	c.goodTokens += int64(r.Generated)
	if Truncated(r) {
		c.goodTruncated++
		c.goodTruncatedTokens += int64(r.Generated)
	}
	return true
}

// isGood applies the goodput rule of dynosim-spec.md §4.2.2 to completed request r: every set
// per-request bound holds, inclusively (MeetsBound, with its float tolerance);
// the ITL bound uses (e2e − ttft)/(n − 1) and is skipped for n <= 1; a request with no token is
// good only under an e2e-only SLA. Under an SLA of percentile terms only (no per-request bound)
// every completed request is good: the terms judge the run, not its requests.
func isGood(r *engine.Request, sla *SLA) bool {
	if !sla.hasRequestBounds() && len(sla.Percentiles) > 0 {
		return true
	}
	n := r.Generated
	if n == 0 {
		return sla.E2EMs > 0 && sla.TTFTMs <= 0 && sla.ITLMs <= 0 && MeetsBound(r.TerminalMs-r.ArrivalMs, sla.E2EMs)
	}
	ttft := clamp(r.FirstTokenMs - r.ArrivalMs)
	e2e := clamp(r.LastTokenMs - r.ArrivalMs)
	if sla.E2EMs > 0 && !MeetsBound(e2e, sla.E2EMs) {
		return false
	}
	if sla.TTFTMs > 0 && !MeetsBound(ttft, sla.TTFTMs) {
		return false
	}
	if sla.ITLMs > 0 && n > 1 && !MeetsBound((e2e-ttft)/float64(n-1), sla.ITLMs) {
		return false
	}
	return true
}

func clamp(v float64) float64 { return math.Max(v, 0) }

// Map returns the summary under the exact prediction.json keys (dynosim-spec.md §4.2); goodput
// keys only when an SLA is configured; power_w and power_coverage are null (no power model).
// encoding/json writes map keys sorted, as the reference does.
func (s *Summary) Map() map[string]any {
	m := map[string]any{
		"num_requests":                              s.NumRequests,
		"completed_requests":                        s.CompletedRequests,
		"total_input_tokens":                        s.TotalInputTokens,
		"total_output_tokens":                       s.TotalOutputTokens,
		"duration_ms":                               s.DurationMs,
		"wall_time_ms":                              s.WallTimeMs,
		"request_throughput_rps":                    s.RequestThroughputRPS,
		"input_throughput_tok_s":                    s.InputThroughputTokS,
		"output_throughput_tok_s":                   s.OutputThroughputTokS,
		"total_throughput_tok_s":                    s.TotalThroughputTokS,
		"prefill_worker_seconds":                    s.PrefillWorkerSeconds,
		"decode_worker_seconds":                     s.DecodeWorkerSeconds,
		"prefill_gpus_per_worker":                   s.PrefillGPUsPerWorker,
		"decode_gpus_per_worker":                    s.DecodeGPUsPerWorker,
		"gpu_hours":                                 s.GPUHours,
		"processed_tokens":                          s.ProcessedTokens,
		"processed_tokens_per_s":                    s.ProcessedTokensPerS,
		"processed_output_tokens_per_s":             s.ProcessedOutputTokensPerS,
		"prefix_cache_reused_ratio":                 s.PrefixCacheReusedRatio,
		"first_admission_prefix_cache_reused_ratio": s.FirstAdmissionPrefixCacheReusedRatio,
		"num_ttft_samples":                          s.NumTTFTSamples,
		"num_tpot_samples":                          s.NumTPOTSamples,
		"num_e2e_latency_samples":                   s.NumE2ESamples,
		"num_itl_samples":                           s.ITL.Samples,
		"offered_requests":                          s.NumRequests,
		"rejected_requests":                         s.RejectedRequests,
		"rejected_requests_by_reason":               s.RejectedByReason,
		"unfinished_requests":                       s.UnfinishedRequests,
		"truncated_requests":                        s.TruncatedRequests,
		"truncated_output_tokens":                   s.TruncatedOutputTokens,
		"num_preemptions":                           s.Preemptions,
		"total_recovered_tokens":                    s.TotalRecoveredTokens,
		"power_w":                                   nil,
		"power_coverage":                            nil,
	}
	if s.HasSpeculation {
		sp := s.Speculation
		rate := 0.0
		if sp.Drafts > 0 {
			rate = float64(sp.Accepted) / float64(sp.Drafts)
		}
		m["num_speculative_rounds"] = sp.Rounds
		m["num_draft_tokens"] = sp.Drafts
		m["num_accepted_draft_tokens"] = sp.Accepted
		m["draft_acceptance_rate"] = rate
		m["mean_accepted_length"] = sp.MeanAcceptedLength()
	}
	if s.WarmupSeconds > 0 || s.Cooldown {
		m["warmup_seconds"] = s.WarmupSeconds
		m["warmup_requests"] = s.WarmupRequests
		m["steady_window_ms"] = s.SteadyWindowMs
	}
	if s.Cooldown {
		m["cooldown_requests"] = s.CooldownRequests
	}
	if len(s.SLATerms) > 0 {
		failed := FailedKeys(s.SLATerms)
		if failed == nil {
			failed = []string{}
		}
		m["sla_percentile_terms_met"] = len(failed) == 0
		m["sla_percentile_terms_failed"] = failed
	}
	if s.HasGoodput {
		m["goodput_completed_requests"] = s.GoodputCompletedRequests
		m["goodput_request_throughput_rps"] = s.GoodputRequestThroughputRPS
		m["goodput_output_throughput_tok_s"] = s.GoodputOutputThroughputTokS
	}
	for _, f := range s.Families() {
		f.Stats.put(m, f.Suffix)
	}
	if p := s.Planner; p != nil {
		m["scaling_events"] = scalingEventMaps(p.ScalingEvents)
		m["avg_workers"] = p.AvgWorkers
		m["peak_workers"] = p.PeakWorkers
	}
	if t := s.Trajectories; t != nil {
		m["total_trajectories"] = t.Total
		m["completed_trajectories"] = t.Completed
		m["incomplete_trajectories"] = t.Incomplete
		t.E2E.put(m, "trajectory_e2e_latency_ms")
		m["p50_trajectory_e2e_latency_ms"] = t.E2E.Median
	}
	return m
}

// buildTrajectories summarises the trajectories of in (in.Trajectory non-nil). A trajectory is
// complete when every one of its requests completed; its E2E latency runs from its earliest
// arrival to its latest terminal time, clamped at >= 0.
func buildTrajectories(in *Input) *Trajectories {
	n := in.Trajectories
	start, end := make([]float64, n), make([]float64, n)
	done := make([]bool, n)
	for k := range done {
		start[k], end[k], done[k] = math.Inf(1), math.Inf(-1), true
	}
	for i := range in.Requests {
		r, k := &in.Requests[i], in.Trajectory[i]
		if r.Status != engine.Completed {
			done[k] = false
			continue
		}
		start[k] = math.Min(start[k], r.ArrivalMs)
		end[k] = math.Max(end[k], r.TerminalMs)
	}
	t := &Trajectories{Total: int64(n)}
	var samples []float64
	for k := range done {
		if done[k] {
			t.Completed++
			samples = append(samples, max(end[k]-start[k], 0))
		}
	}
	t.Incomplete = t.Total - t.Completed
	t.E2E = Summarize(samples)
	return t
}

// Family is one latency distribution with its key suffix and console label.
type Family struct {
	// Suffix is the key suffix: keys are <stat>_<Suffix>, e.g. p99_ttft_ms.
	Suffix string
	// Label is the console table's row name.
	Label string
	Stats Stats
}

// Families lists the distributions in console-table order (dynosim-spec.md §4.4).
func (s *Summary) Families() []Family {
	return []Family{
		{"ttft_ms", "Time to First Token (ms)", s.TTFT},
		{"ttst_ms", "Time to Second Token (ms)", s.TTST},
		{"e2e_latency_ms", "Request Latency (ms)", s.E2E},
		{"itl_ms", "Inter Token Latency (ms)", s.ITL},
		{"tpot_ms", "Time per Output Token (ms)", s.TPOT},
		{"output_token_throughput_per_user", "Output Token Throughput Per User (tokens/sec/user)", s.OutputTokenThroughputPerUser},
	}
}

func (st Stats) put(m map[string]any, suffix string) {
	m["mean_"+suffix] = st.Mean
	m["min_"+suffix] = st.Min
	m["max_"+suffix] = st.Max
	m["median_"+suffix] = st.Median
	m["p75_"+suffix] = st.P75
	m["p90_"+suffix] = st.P90
	m["p95_"+suffix] = st.P95
	m["p99_"+suffix] = st.P99
	m["std_"+suffix] = st.Std
}
