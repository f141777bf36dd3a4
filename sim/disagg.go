package sim

import (
	"github.com/servesweep/servesweep/sim/config"
	"github.com/servesweep/servesweep/sim/engine"
	"github.com/servesweep/servesweep/sim/timing"
)

// transfer describes the KV transfer of disaggregated serving.
type transfer struct {
	bytesPerToken float64
	gbps          float64 // 0: no delay
	fullPrompt    bool
	latencyMs     float64 // KVTransferLatencyMs of the config: every hand-off's fixed time
}

// KVTransferLatencyMs is the fixed time in ms every disaggregated hand-off takes on top of its
// bytes' transfer (see config.KVTransfer.LatencyMs): engine.kv_transfer.latency_ms when set,
// else timing.CalibratedKVTransferLatencyMs when the prefill and the decode role both use
// `default` or `roofline` timing, else 0 (`fixed` and `polynomial` timing keep the reference's
// exact times); 0 in aggregated mode.
func KVTransferLatencyMs(cfg *config.Config) float64 {
	if cfg.Engine.Mode != config.ModeDisaggregated {
		return 0
	}
	if kt := cfg.Engine.KVTransfer; kt != nil && kt.LatencyMs != nil {
		return *kt.LatencyMs
	}
	w := cfg.Engine.Workers
	if w.Prefill != nil && w.Decode != nil && w.Prefill.Timing.HardwareAware() && w.Decode.Timing.HardwareAware() {
		return timing.CalibratedKVTransferLatencyMs
	}
	return 0
}

func (s *runState) setupTransfer() error {
	s.xfer.latencyMs = KVTransferLatencyMs(s.cfg)
	kt := s.cfg.Engine.KVTransfer
	if kt == nil {
		return nil
	}
	s.xfer.fullPrompt = kt.TimingMode == "full_prompt"
	if kt.BandwidthGBps == nil {
		return nil
	}
	s.xfer.gbps = *kt.BandwidthGBps
	if kt.BytesPerToken > 0 {
		s.xfer.bytesPerToken = float64(kt.BytesPerToken)
		return nil
	}
	b, err := s.dep.transferBytesPerToken(s.cfg.Engine.Workers.Prefill)
	if err != nil {
		return err
	}
	s.xfer.bytesPerToken = b
	return nil
}

// transferMs is the KV transfer delay of tokens prompt tokens:
// tokens × bytes_per_token / (bandwidth_GB/s × 1e9) seconds (dynosim-spec.md §3.2.5).
func (s *runState) transferMs(tokens int) float64 {
	if s.xfer.gbps <= 0 || tokens <= 0 {
		return 0
	}
	return float64(tokens) * s.xfer.bytesPerToken / (s.xfer.gbps * 1e9) * 1000
}

// handoff runs when request ri's prefill finished (disaggregated mode, engine-internals.md §5):
// the prefill KV is held, the decode router picks a decode rank, the rank reserves the prompt's
// KV (reusing what it caches), and the transfer starts. A request with at most one output token
// completes on the prefill side with no transfer.
func (s *runState) handoff(ri int32) {
	pr, c, h := &s.reqsP[ri], &s.reqs[ri], &s.handoffs[ri]
	s.prefill.router.Free(ri)
	h.PrefillAdmitMs, h.SourceHeldMs = pr.FirstAdmitMs, s.nowMs
	c.FirstAdmitMs, c.ReusedTokens, c.FirstReusedTokens = pr.FirstAdmitMs, pr.ReusedTokens, pr.FirstReusedTokens
	c.RecoveredTokens, c.Preemptions = pr.RecoveredTokens, pr.Preemptions
	h.PrefillHistory = pr.History
	if c.MaxOutput <= 1 {
		s.prefill.engine(int(pr.Worker)*s.prefill.ranks + int(pr.Rank)).Release(ri)
		s.prefill.markDirty(pr.Worker)
		if c.MaxOutput == 1 {
			c.EmitFirstToken(s.nowMs)
		}
		c.Status, c.TerminalMs = engine.Completed, s.nowMs
		s.finished(ri)
		return
	}
	d := s.decoding
	slot, _ := d.router.Route(ri, int(c.PromptLen), nil)
	c.Worker, c.Rank = int32(slot/d.ranks), int32(slot%d.ranks)
	h.DecodeWorker = c.Worker
	if len(d.waitingReserve[slot]) > 0 || !s.reserve(ri, slot) {
		d.waitingReserve[slot] = append(d.waitingReserve[slot], ri)
	}
}

// reserve claims decode-side KV for ri on slot and starts its transfer; false when the rank
// lacks room.
func (s *runState) reserve(ri int32, slot int) bool {
	cached, ok := s.decoding.engine(slot).Reserve(ri)
	if !ok {
		return false
	}
	c, h := &s.reqs[ri], &s.handoffs[ri]
	tokens := int(c.PromptLen)
	if !s.xfer.fullPrompt {
		tokens -= cached
	}
	h.DestinationReservedMs = s.nowMs
	h.DecodeCachedTokens, h.TransferredTokens = int32(cached), int32(tokens)
	s.push(event{timeMs: s.nowMs + s.xfer.latencyMs + s.transferMs(tokens), kind: evTransfer, req: ri})
	return true
}

// retryReservations starts waiting hand-offs on a decode slot, in order, while KV room allows.
func (s *runState) retryReservations(p *role, slot int) {
	q := p.waitingReserve[slot]
	n := 0
	for n < len(q) && s.reserve(q[n], slot) {
		n++
	}
	if n > 0 {
		p.waitingReserve[slot] = append(q[:0], q[n:]...)
	}
}

// activate ends request ri's KV transfer: the prefill side releases its KV and the request
// queues for decode with its first token, which becomes visible to the client when the decode
// rank admits the request (engine.Request.ReceiveFirstToken): time spent waiting for a decode
// slot is part of TTFT (dynosim-spec.md's decode-side visibility).
func (s *runState) activate(ri int32) {
	pr, c := &s.reqsP[ri], &s.reqs[ri]
	s.prefill.engine(int(pr.Worker)*s.prefill.ranks + int(pr.Rank)).Release(ri)
	s.prefill.markDirty(pr.Worker)
	s.handoffs[ri].DestinationActivatedMs = s.nowMs
	c.ReceiveFirstToken()
	s.decoding.engine(int(c.Worker)*s.decoding.ranks + int(c.Rank)).Activate(ri)
	s.decoding.markDirty(c.Worker)
}
