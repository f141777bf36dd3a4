package engine

import (
	"math"
	"slices"
	"testing"

	"github.com/servesweep/servesweep/sim/timing"
)

// specRun drives one request (prompt 16, output out, block size 16) through a vLLM engine with
// speculation sp, 10 ms per pass, and returns the batches priced, the request and the engine.
func specRun(t *testing.T, sp *Speculation, out int32) ([]timing.Batch, *Request, *Engine) {
	t.Helper()
	h := newHarness(t, Config{MaxBatchedTokens: 100, MaxSequences: 4, BlockSize: 16, CapacityBlocks: 400, Speculation: sp},
		spec{prompt: 16, output: out})
	h.e.Submit(0)
	var batches []timing.Batch
	for h.e.HasWork() {
		b, ok, _, _ := h.step()
		if !ok {
			t.Fatal("a pass scheduled nothing")
		}
		b.KVCapacityTokens = 0
		batches = append(batches, b)
	}
	return batches, &h.reqs[0], h.e
}

// TestSpeculationAcceptAll: 3 drafts always accepted. After the prefill's first token each round
// emits 4 tokens, until fewer than 4 remain (drafts are cut so output never passes 10):
//
//	pass 1 (ends 10 ms): prefill 16 (16·17/2 = 136 pairs), token 1
//	pass 2 (20 ms): decode step at KV 17 + drafts at 18, 19, 20 (DraftKVTokens 57), tokens 2–5
//	pass 3 (30 ms): decode step at KV 21 + drafts at 22, 23, 24 (69), tokens 6–9
//	pass 4 (40 ms): 1 token left, so no draft: decode step at KV 25, token 10
//
// Passes 1–3 end with the request proposing its next round's drafts (DraftProposals 1 at its KV
// 16, 17, 21); pass 4 leaves nothing to draft for.
func TestSpeculationAcceptAll(t *testing.T) {
	batches, r, e := specRun(t, &Speculation{Drafts: 3, Acceptance: []float64{1, 1, 1}, Seed: 42}, 10)
	step := func(kv, drafts, draftKV, proposals int) timing.Batch {
		return timing.Batch{DecodeRequests: 1, DecodeKVTokens: kv, DecodeSteps: 1, DecodeStepKVTokens: kv, SampledTokens: 1,
			DraftTokens: drafts, DraftKVTokens: draftKV, DraftProposals: proposals, DraftProposalKVTokens: proposals * kv}
	}
	want := []timing.Batch{
		{PrefillRequests: 1, PrefillTokens: 16, PrefillAttentionPairs: 136, DecodeRequests: 1, DecodeKVTokens: 16, SampledTokens: 1,
			DraftProposals: 1, DraftProposalKVTokens: 16},
		step(17, 3, 57, 1), step(21, 3, 69, 1), step(25, 0, 0, 0),
	}
	if !slices.Equal(batches, want) {
		t.Fatalf("batches\n got %+v\nwant %+v", batches, want)
	}
	if r.Generated != 10 || r.FirstTokenMs != 10 || r.SecondTokenMs != 20 || r.LastTokenMs != 40 || r.TerminalMs != 40 {
		t.Errorf("tokens %d, first %v second %v last %v terminal %v; want 10, 10, 20, 40, 40",
			r.Generated, r.FirstTokenMs, r.SecondTokenMs, r.LastTokenMs, r.TerminalMs)
	}
	// ITL: tokens 2, 6 and 10 continue the pass run of passes 1–3 (0-based), each with the
	// pass's 10 ms gap; tokens 3–5 and 7–9 arrive with the token before them (gap 0).
	if r.WithPrevious != 6 || len(r.Gaps()) != 0 || !slices.Equal(r.ClosedRuns(), []PassRun{{First: 1, Last: 3}}) {
		t.Errorf("with previous %d, gaps %v, runs %+v; want 6, none, [{0 1 3}]", r.WithPrevious, r.Gaps(), r.ClosedRuns())
	}
	if s := e.SpeculationStats(); s != (SpeculationStats{Rounds: 2, Drafts: 6, Accepted: 6}) || s.MeanAcceptedLength() != 4 {
		t.Errorf("stats %+v, mean accepted length %v; want 2 rounds, 6 drafts, 6 accepted, 4", s, s.MeanAcceptedLength())
	}
}

// TestSpeculationAcceptNone: drafts never accepted emit one token per round, at the same times as
// without speculation; the drafts are still verified (3 per round while at least 4 tokens remain,
// then 2, 1, 0: 6·3 + 2 + 1 = 21 in 8 rounds).
func TestSpeculationAcceptNone(t *testing.T) {
	batches, r, e := specRun(t, &Speculation{Drafts: 3, Acceptance: []float64{0, 0, 0}, Seed: 42}, 10)
	plain, p, _ := specRun(t, nil, 10)
	if len(batches) != 10 || len(plain) != 10 {
		t.Fatalf("passes %d and %d without speculation, want 10", len(batches), len(plain))
	}
	for k := range batches {
		b := batches[k]
		if want := min(k, 8); b.DraftProposals != 1 && k < 9 || k == 9 && b.DraftProposals != 0 || b.DraftProposalKVTokens != b.DraftProposals*(16+want) {
			t.Errorf("pass %d: %d proposals at KV %d; want one at KV %d before the last pass, none in it", k+1, b.DraftProposals, b.DraftProposalKVTokens, 16+want)
		}
		b.DraftTokens, b.DraftKVTokens, b.DraftProposals, b.DraftProposalKVTokens = 0, 0, 0, 0
		if b != plain[k] {
			t.Errorf("pass %d: %+v, without speculation %+v", k+1, batches[k], plain[k])
		}
	}
	if r.FirstTokenMs != p.FirstTokenMs || r.SecondTokenMs != p.SecondTokenMs || r.LastTokenMs != p.LastTokenMs ||
		r.WithPrevious != 0 || !slices.Equal(r.ClosedRuns(), p.ClosedRuns()) {
		t.Errorf("times %v %v %v runs %+v, without speculation %v %v %v runs %+v",
			r.FirstTokenMs, r.SecondTokenMs, r.LastTokenMs, r.ClosedRuns(), p.FirstTokenMs, p.SecondTokenMs, p.LastTokenMs, p.ClosedRuns())
	}
	if s := e.SpeculationStats(); s != (SpeculationStats{Rounds: 8, Drafts: 21}) || s.MeanAcceptedLength() != 1 {
		t.Errorf("stats %+v, mean accepted length %v; want 8 rounds, 21 drafts, none accepted, 1", s, s.MeanAcceptedLength())
	}
}

// TestSpeculationSeeded: with rates (0.8, 0.5) the expected tokens per round are
// 1 + 0.8 + 0.8·0.5 = 2.2. Over one long request the draws give close to that, conserved tokens (1 + Σ (1 + accepted) over rounds), and the same
// result again with the same seed and a different one with another seed.
func TestSpeculationSeeded(t *testing.T) {
	sp := &Speculation{Drafts: 2, Acceptance: []float64{0.8, 0.5}, Seed: 42}
	if got := sp.ExpectedAcceptedLength(); math.Abs(got-2.2) > 1e-12 {
		t.Fatalf("expected accepted length %v, want 2.2", got)
	}
	const out = 5000
	_, r, e := specRun(t, sp, out)
	s := e.SpeculationStats()
	if r.Generated != out || int64(r.WithPrevious) != s.Accepted {
		t.Fatalf("generated %d, with previous %d, accepted %d", r.Generated, r.WithPrevious, s.Accepted)
	}
	// Every round but the last two verified 2 drafts; the first token came with the prefill.
	if 1+s.Rounds+s.Accepted > out || 1+s.Rounds+s.Accepted+2 < out {
		t.Errorf("rounds %d + accepted %d + first token do not make %d tokens", s.Rounds, s.Accepted, out)
	}
	if m := s.MeanAcceptedLength(); math.Abs(m-2.2) > 0.05 {
		t.Errorf("mean accepted length %v, want 2.2 ± 0.05 (3 standard errors of about 2300 rounds)", m)
	}
	_, r2, e2 := specRun(t, sp, out)
	if e2.SpeculationStats() != s || r2.LastTokenMs != r.LastTokenMs {
		t.Errorf("same seed: %+v at %v, first run %+v at %v", e2.SpeculationStats(), r2.LastTokenMs, s, r.LastTokenMs)
	}
	other := *sp
	other.Seed = 7
	if _, _, e3 := specRun(t, &other, out); e3.SpeculationStats() == s {
		t.Errorf("seed 7 drew the same as seed 42: %+v", s)
	}
}

// TestTakeRounds: the round tally of TestSpeculationAcceptAll's request. Its rounds that continue
// a pass run are those of passes 2–4 (tokens 2–5, 6–9 and 10), of 4, 4 and 1 tokens; the first
// token is no round. Tallied per pass, each pass's TakeRounds gives that pass's round and clears
// it. A request that arrived before RoundTallyFromMs (the warm-up) is not tallied. Under
// KeepRoundTokens the rounds are the request's bytes instead, warm-up or not (the statistics
// leave it out), and nothing is tallied.
func TestTakeRounds(t *testing.T) {
	sp := &Speculation{Drafts: 3, Acceptance: []float64{1, 1, 1}, Seed: 42}
	run := func(keep bool, tallyFromMs, arrivalMs float64) ([][MaxRoundTokens]int32, *Request) {
		h := newHarness(t, Config{MaxBatchedTokens: 100, MaxSequences: 4, BlockSize: 16, CapacityBlocks: 400, Speculation: sp,
			KeepRoundTokens: keep, RoundTallyFromMs: tallyFromMs}, spec{prompt: 16, output: 10})
		h.reqs[0].ArrivalMs = arrivalMs
		h.e.Submit(0)
		var perPass [][MaxRoundTokens]int32
		for h.e.HasWork() {
			if _, ok, _, _ := h.step(); !ok {
				t.Fatal("a pass scheduled nothing")
			}
			var c [MaxRoundTokens]int32
			if any := h.e.TakeRounds(&c); any != (c != [MaxRoundTokens]int32{}) {
				t.Errorf("pass %d: TakeRounds reports %v with counts %v", len(perPass)+1, any, c)
			}
			perPass = append(perPass, c)
		}
		var c [MaxRoundTokens]int32
		if h.e.TakeRounds(&c) {
			t.Errorf("TakeRounds after the last pass's: %v; want none left", c)
		}
		return perPass, &h.reqs[0]
	}
	four, one := [MaxRoundTokens]int32{3: 1}, [MaxRoundTokens]int32{0: 1}
	none := [MaxRoundTokens]int32{}
	if got, r := run(false, 0, 0); !slices.Equal(got, [][MaxRoundTokens]int32{none, four, four, one}) || r.RoundTokens() != nil {
		t.Errorf("tallied: per pass %v, request's bytes %v; want [none, 1×4, 1×4, 1×1] and none", got, r.RoundTokens())
	}
	if got, _ := run(false, 5, 5); !slices.Equal(got, [][MaxRoundTokens]int32{none, four, four, one}) {
		t.Errorf("arrived at the end of the warm-up: per pass %v; want tallied", got)
	}
	if got, r := run(false, 5, 4.5); !slices.Equal(got, [][MaxRoundTokens]int32{none, none, none, none}) || r.RoundTokens() != nil {
		t.Errorf("warm-up request: per pass %v, request's bytes %v; want nothing", got, r.RoundTokens())
	}
	if got, r := run(true, 5, 4.5); !slices.Equal(got, [][MaxRoundTokens]int32{none, none, none, none}) || !slices.Equal(r.RoundTokens(), []uint8{4, 4, 1}) {
		t.Errorf("kept: per pass %v, request's bytes %v; want nothing tallied and [4 4 1]", got, r.RoundTokens())
	}
}

// TestAcceptBelowMatchesFloatDraw: the integer threshold accepts a draw's top 53 bits k exactly
// when the float draw k·2^-53 is below the rate (the comparison accept was written with), at
// and around every threshold, for rates at the edges (0, 1, the smallest subnormal, one ulp from
// 0.5 and 1, out of range, NaN) and the MTP rates validate uses.
func TestAcceptBelowMatchesFloatDraw(t *testing.T) {
	rates := []float64{0, 1, 0.5, math.Nextafter(0.5, 0), math.Nextafter(0.5, 1), math.Nextafter(1, 0), 0.85, 0.728, 0.623,
		0.1, 1.0 / 3, 5e-324, 1e-300, -0.5, 1.5, math.Inf(1), math.Inf(-1), math.NaN()}
	for _, p := range rates {
		tb := acceptBelow(p)
		for _, k := range []uint64{0, 1, tb - 2, tb - 1, tb, tb + 1, tb + 2, 1<<52 - 1, 1 << 52, 1<<53 - 1} {
			if k >= 1<<53 {
				continue // not a draw (tb - 1 wrapped, or tb + 1 past the range)
			}
			floatAccepts := !(float64(k)*0x1p-53 >= p)
			if got := k < tb; got != floatAccepts {
				t.Errorf("rate %v, k %d: threshold %d accepts %v, the float draw %v", p, k, tb, got, floatAccepts)
			}
		}
	}
}
