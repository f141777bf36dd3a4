package engine

import (
	"fmt"
	"slices"
	"testing"

	"github.com/servesweep/servesweep/sim/timing"
)

// recorder is a timing.Model that charges passMs for every pass, plus perKVToken for every KV
// token a decode step attends to, and keeps a copy of the last batch it priced, so a test can
// assert exactly what the scheduler put in a pass.
type recorder struct {
	passMs, perKVToken float64
	last               timing.Batch
	calls              int
}

// PassMs implements timing.Model.
func (m *recorder) PassMs(b *timing.Batch) float64 {
	m.last = *b
	m.calls++
	return m.passMs + m.perKVToken*float64(b.DecodeStepKVTokens)
}

// spec is one request of a scenario: prompt and output lengths and the chained block hashes of
// its whole sequence (nil without prefix caching), below 2^32: the shared ones are the keys.
type spec struct {
	prompt, output int32
	hashes         []uint64
}

// harness drives one engine pass by pass with a 10 ms recorder and checks the KV pool after
// every call that touches it.
type harness struct {
	t    *testing.T
	e    *Engine
	m    *recorder
	reqs []Request
	now  float64
	// engineHash maps a scenario's hash of a block unique to its request to the name the engine
	// gives it (UniqueBlockKey); shared hashes keep their value.
	engineHash map[uint64]uint64
	pass       int32
	// noSync leaves steady decode runs running across passes (step does not Sync), and
	// lastContinued is the continued count of the last pass.
	noSync        bool
	lastContinued int32
	// midSync, when set, is asked before each Complete whether to Sync with the pass in flight.
	midSync func() bool
}

const testPassMs = 10

func newHarness(t *testing.T, cfg Config, specs ...spec) *harness {
	t.Helper()
	h := &harness{t: t, m: &recorder{passMs: testPassMs}, reqs: make([]Request, len(specs))}
	// Shared hashes as traffic.Workload.Blocks computes them: the leading hashes that another
	// request of the scenario holds too; the request's later blocks are named by UniqueBlockKey.
	holders := map[uint64]int{}
	for _, s := range specs {
		for _, x := range s.hashes {
			holders[x]++
		}
	}
	for i, s := range specs {
		shared := int32(0)
		for _, x := range s.hashes {
			if holders[x] < 2 {
				break
			}
			shared++
		}
		keys := make([]uint32, shared)
		for j := range keys {
			keys[j] = uint32(s.hashes[j])
		}
		h.reqs[i].Reset(int32(i), s.prompt, s.output, s.output, keys, int32(len(s.hashes)), shared, nil)
		for j := shared; j < int32(len(s.hashes)); j++ {
			if h.engineHash == nil {
				h.engineHash = map[uint64]uint64{}
			}
			h.engineHash[s.hashes[j]] = UniqueBlockKey(int32(i), j)
		}
	}
	cfg.Timing = h.m
	if cfg.DenseKeys == 0 {
		// Scenario names below 16 take the prefix cache's dense index, the others its hashed one.
		cfg.DenseKeys = 16
	}
	e, err := New(cfg, h.reqs)
	if err != nil {
		t.Fatal(err)
	}
	h.e = e
	return h
}

// cached reports whether the pool holds the block the scenario names x.
func (h *harness) cached(x uint64) bool {
	if y, ok := h.engineHash[x]; ok {
		x = y
	}
	return h.e.Pool().Contains(x)
}

// checkPool fails the test when the pool's bookkeeping disagrees with the leases the requests
// hold (a leaked, double-counted or dangling block).
func (h *harness) checkPool(when string) {
	h.t.Helper()
	if msg := h.e.CheckInvariants(); msg != "" {
		h.t.Fatalf("%s: KV pool invariant broken: %s", when, msg)
	}
}

// step runs one pass (Schedule at now, Complete at now + duration) and returns the priced batch,
// whether anything was scheduled, and the requests that emitted their first token and completed.
func (h *harness) step() (b timing.Batch, scheduled bool, first, done []int32) {
	h.t.Helper()
	calls := h.m.calls
	dur, scheduled := h.e.Schedule(h.now)
	h.checkPool(fmt.Sprintf("pass %d after Schedule", h.pass+1))
	if !scheduled {
		if h.m.calls != calls {
			h.t.Fatalf("pass %d: an empty pass was priced", h.pass+1)
		}
		return timing.Batch{}, false, nil, nil
	}
	if h.m.calls != calls+1 {
		h.t.Fatalf("pass %d: priced %d times, want once", h.pass+1, h.m.calls-calls)
	}
	if h.m.perKVToken == 0 && dur != testPassMs {
		h.t.Fatalf("pass %d: duration %v, want the model's %v", h.pass+1, dur, testPassMs)
	}
	b = h.m.last
	if h.midSync != nil && h.midSync() {
		h.e.Sync()
	}
	h.lastContinued = h.e.Complete(h.now+dur, h.pass, func(ri int32) { first = append(first, ri) }, func(ri int32) { done = append(done, ri) })
	h.checkPool(fmt.Sprintf("pass %d after Complete", h.pass+1))
	if !h.noSync {
		// The tests read the requests after every pass: bring them up to date as the simulation
		// does before reading them. Sync ends any steady run, so these engines form none (the
		// harness with noSync, TestSteadyRunsMatchGeneralPath, exercises them).
		h.e.Sync()
	}
	h.now += dur
	h.pass++
	return b, true, first, done
}

func waitingOf(e *Engine) []int32 { return e.waiting[e.wHead:] }

// pass is what one pass must do: requests submitted before it, the batch priced (its
// KVCapacityTokens is filled in from the config), then after Complete the NumComputed of every
// request, the running and waiting queues, the requests completed, the pool's active blocks, the
// engine's preemptions so far and, for the requests listed in leases, their block ids.
type pass struct {
	submit           []int32
	batch            timing.Batch
	computed         []int32
	running, waiting []int32
	done             []int32
	active           int
	preemptions      int64
	leases           map[int32][]int32
}

// scenario is a scheduler run checked pass by pass; check, if set, asserts the final state.
type scenario struct {
	name   string
	cfg    Config
	reqs   []spec
	passes []pass
	check  func(t *testing.T, h *harness)
}

func runScenario(t *testing.T, sc scenario) {
	h := newHarness(t, sc.cfg, sc.reqs...)
	for k, p := range sc.passes {
		for _, ri := range p.submit {
			h.e.Submit(ri)
		}
		b, scheduled, _, done := h.step()
		if !scheduled {
			t.Fatalf("pass %d scheduled nothing", k+1)
		}
		want := p.batch
		want.KVCapacityTokens = sc.cfg.CapacityBlocks * sc.cfg.BlockSize
		if b != want {
			t.Errorf("pass %d batch\n got %+v\nwant %+v", k+1, b, want)
		}
		computed := make([]int32, len(h.reqs))
		for i := range h.reqs {
			computed[i] = h.reqs[i].NumComputed
		}
		if !slices.Equal(computed, p.computed) {
			t.Errorf("pass %d computed tokens %v, want %v", k+1, computed, p.computed)
		}
		if !slices.Equal(h.e.running, p.running) || !slices.Equal(waitingOf(h.e), p.waiting) {
			t.Errorf("pass %d running %v waiting %v, want %v and %v", k+1, h.e.running, waitingOf(h.e), p.running, p.waiting)
		}
		if !slices.Equal(done, p.done) {
			t.Errorf("pass %d completed %v, want %v", k+1, done, p.done)
		}
		if got := h.e.Pool().Active(); got != p.active {
			t.Errorf("pass %d active blocks %d, want %d", k+1, got, p.active)
		}
		if got := h.e.Preemptions(); got != p.preemptions {
			t.Errorf("pass %d preemptions %d, want %d", k+1, got, p.preemptions)
		}
		for ri, want := range p.leases {
			if got := h.reqs[ri].Blocks; !slices.Equal(got, want) {
				t.Errorf("pass %d request %d holds blocks %v, want %v", k+1, ri, got, want)
			}
		}
		if t.Failed() {
			t.FailNow()
		}
	}
	if h.e.HasWork() {
		t.Fatalf("work left after the last pass: running %v waiting %v", h.e.running, waitingOf(h.e))
	}
	for i := range h.reqs {
		r := &h.reqs[i]
		if r.Status != Completed || r.Generated != r.MaxOutput || len(r.Blocks) != 0 {
			t.Errorf("request %d: status %v, %d of %d tokens, %d blocks held", i, r.Status, r.Generated, r.MaxOutput, len(r.Blocks))
		}
	}
	if sc.check != nil {
		sc.check(t, h)
	}
}

func admissions(a ...Admission) []Admission { return a }

func checkHistory(t *testing.T, h *harness, ri int32, want []Admission, preemptions, reused, recovered int32) {
	t.Helper()
	r := &h.reqs[ri]
	if !slices.Equal(r.History, want) {
		t.Errorf("request %d admissions %+v, want %+v", ri, r.History, want)
	}
	if r.Preemptions != preemptions || r.ReusedTokens != reused || r.RecoveredTokens != recovered {
		t.Errorf("request %d: preemptions %d reused %d recovered %d, want %d, %d, %d",
			ri, r.Preemptions, r.ReusedTokens, r.RecoveredTokens, preemptions, reused, recovered)
	}
}

// Each scenario's pass comments give the arithmetic behind every expected value. Causal
// attention pairs of a prefill chunk of n new tokens after c tokens in KV: n×c + n(n+1)/2.
// Every pass lasts 10 ms, so pass k runs from 10(k−1) to 10k ms.
func TestSchedulerScenarios(t *testing.T) {
	for _, sc := range []scenario{
		{
			// Budget 100, block size 16. Request 0 (prompt 250) is chunked 100/100/50; request 1
			// (prompt 30) gets its first chunk in pass 3 from the 50 tokens request 0 leaves.
			name: "chunked prefill under the token budget",
			cfg:  Config{MaxBatchedTokens: 100, MaxSequences: 8, BlockSize: 16, CapacityBlocks: 100},
			reqs: []spec{{prompt: 250, output: 3}, {prompt: 30, output: 2}, {prompt: 120, output: 1}},
			passes: []pass{
				// Request 0 takes the whole budget: 100 tokens, ceil(100/16) = 7 blocks; pairs
				// 100·101/2 = 5050. Request 1 waits (budget 0).
				{submit: []int32{0, 1}, batch: timing.Batch{PrefillRequests: 1, PrefillTokens: 100, PrefillAttentionPairs: 5050},
					computed: []int32{100, 0, 0}, running: []int32{0}, waiting: []int32{1}, active: 7},
				// Second chunk, 100 after 100: pairs 100·100 + 5050 = 15050; ceil(200/16) = 13 blocks.
				{batch: timing.Batch{PrefillRequests: 1, PrefillTokens: 100, PrefillContextTokens: 100, PrefillAttentionPairs: 15050},
					computed: []int32{200, 0, 0}, running: []int32{0}, waiting: []int32{1}, active: 13},
				// Last chunk 250 − 200 = 50 (ceil(250/16) = 16 blocks), budget 50 left: request 1
				// is admitted with all 30 tokens (2 blocks), 18 blocks. Prefill tokens 50 + 30 = 80,
				// context 200 + 0; pairs 50·200 + 50·51/2 + 30·31/2 = 10000 + 1275 + 465 = 11740.
				// Both finish their prompt and sample: decode KV 250 + 30 = 280.
				{batch: timing.Batch{PrefillRequests: 2, PrefillTokens: 80, PrefillContextTokens: 200, PrefillAttentionPairs: 11740,
					DecodeRequests: 2, DecodeKVTokens: 280, SampledTokens: 2},
					computed: []int32{250, 30, 0}, running: []int32{0, 1}, active: 18},
				// Running requests first: two decode steps of 1 token each (KV 251 and 31, no new
				// block), so request 2 is admitted with 100 − 2 = 98 tokens, ceil(98/16) = 7 blocks;
				// pairs 98·99/2 = 4851. Request 1 emits its 2nd token and completes, freeing 2
				// blocks: 16 + 2 + 7 − 2 = 23.
				{submit: []int32{2}, batch: timing.Batch{PrefillRequests: 1, PrefillTokens: 98, PrefillAttentionPairs: 4851,
					DecodeRequests: 2, DecodeKVTokens: 282, DecodeSteps: 2, DecodeStepKVTokens: 282, SampledTokens: 2},
					computed: []int32{251, 31, 98}, running: []int32{0, 2}, done: []int32{1}, active: 23},
				// Request 0 decodes (KV 252); request 2's last chunk is 120 − 98 = 22 after 98:
				// pairs 22·98 + 22·23/2 = 2156 + 253 = 2409. Decode KV 252 + 120 = 372. Both complete.
				{batch: timing.Batch{PrefillRequests: 1, PrefillTokens: 22, PrefillContextTokens: 98, PrefillAttentionPairs: 2409,
					DecodeRequests: 2, DecodeKVTokens: 372, DecodeSteps: 1, DecodeStepKVTokens: 252, SampledTokens: 2},
					computed: []int32{252, 31, 120}, done: []int32{0, 2}},
			},
			check: func(t *testing.T, h *harness) {
				// Request 1 was admitted at the start of pass 3 (20 ms), got its first token at its
				// end (30 ms) and completed at the end of pass 4 (40 ms).
				r := &h.reqs[1]
				if r.FirstAdmitMs != 20 || r.FirstTokenMs != 30 || r.TerminalMs != 40 {
					t.Errorf("request 1: admitted %v, first token %v, done %v; want 20, 30, 40", r.FirstAdmitMs, r.FirstTokenMs, r.TerminalMs)
				}
				if r := &h.reqs[2]; r.FirstAdmitMs != 30 || r.FirstTokenMs != 50 {
					t.Errorf("request 2: admitted %v, first token %v; want 30, 50", r.FirstAdmitMs, r.FirstTokenMs)
				}
			},
		},
		{
			// max_sequences 2: the third request waits although budget and KV have room.
			name: "max sequences caps the running set",
			cfg:  Config{MaxBatchedTokens: 100, MaxSequences: 2, BlockSize: 16, CapacityBlocks: 10},
			reqs: []spec{{prompt: 10, output: 2}, {prompt: 10, output: 2}, {prompt: 10, output: 2}},
			passes: []pass{
				// Two prompts of 10 (1 block each): 20 tokens, pairs 2·(10·11/2) = 110.
				{submit: []int32{0, 1, 2}, batch: timing.Batch{PrefillRequests: 2, PrefillTokens: 20, PrefillAttentionPairs: 110,
					DecodeRequests: 2, DecodeKVTokens: 20, SampledTokens: 2},
					computed: []int32{10, 10, 0}, running: []int32{0, 1}, waiting: []int32{2}, active: 2},
				// Two decode steps (KV 11 each); the running set is still full, request 2 waits.
				{batch: timing.Batch{DecodeRequests: 2, DecodeKVTokens: 22, DecodeSteps: 2, DecodeStepKVTokens: 22, SampledTokens: 2},
					computed: []int32{11, 11, 0}, waiting: []int32{2}, done: []int32{0, 1}},
				// Now admitted: 10 tokens, pairs 55.
				{batch: timing.Batch{PrefillRequests: 1, PrefillTokens: 10, PrefillAttentionPairs: 55,
					DecodeRequests: 1, DecodeKVTokens: 10, SampledTokens: 1},
					computed: []int32{11, 11, 10}, running: []int32{2}, active: 1},
				{batch: timing.Batch{DecodeRequests: 1, DecodeKVTokens: 11, DecodeSteps: 1, DecodeStepKVTokens: 11, SampledTokens: 1},
					computed: []int32{11, 11, 11}, done: []int32{2}},
			},
		},
		{
			// A 4-block pool (block size 16). Request 1 (40 tokens, 3 blocks) cannot fit while
			// request 0 holds 3 blocks; request 2 (10 tokens, 1 block) would fit but waits behind it.
			name: "head-of-line blocking",
			cfg:  Config{MaxBatchedTokens: 100, MaxSequences: 8, BlockSize: 16, CapacityBlocks: 4},
			reqs: []spec{{prompt: 40, output: 3}, {prompt: 40, output: 1}, {prompt: 10, output: 1}},
			passes: []pass{
				// Request 0: 40 tokens, ceil(40/16) = 3 blocks, pairs 40·41/2 = 820; 1 block left.
				{submit: []int32{0, 1, 2}, batch: timing.Batch{PrefillRequests: 1, PrefillTokens: 40, PrefillAttentionPairs: 820,
					DecodeRequests: 1, DecodeKVTokens: 40, SampledTokens: 1},
					computed: []int32{40, 0, 0}, running: []int32{0}, waiting: []int32{1, 2}, active: 3},
				{batch: timing.Batch{DecodeRequests: 1, DecodeKVTokens: 41, DecodeSteps: 1, DecodeStepKVTokens: 41, SampledTokens: 1},
					computed: []int32{41, 0, 0}, running: []int32{0}, waiting: []int32{1, 2}, active: 3},
				// Request 0 completes at the end of this pass; admission ran before that.
				{batch: timing.Batch{DecodeRequests: 1, DecodeKVTokens: 42, DecodeSteps: 1, DecodeStepKVTokens: 42, SampledTokens: 1},
					computed: []int32{42, 0, 0}, waiting: []int32{1, 2}, done: []int32{0}},
				// Both fit now: 3 + 1 blocks; 50 tokens, pairs 820 + 55 = 875.
				{batch: timing.Batch{PrefillRequests: 2, PrefillTokens: 50, PrefillAttentionPairs: 875,
					DecodeRequests: 2, DecodeKVTokens: 50, SampledTokens: 2},
					computed: []int32{42, 40, 10}, done: []int32{1, 2}},
			},
		},
		{
			// Block size 4, 6 blocks, max_sequences 3. Three 8-token prompts fill the pool
			// (2 blocks each); request 3 waits for a running slot.
			name: "LIFO preemption picks the last admitted and requeues it at the front",
			cfg:  Config{MaxBatchedTokens: 100, MaxSequences: 3, BlockSize: 4, CapacityBlocks: 6},
			reqs: []spec{{prompt: 8, output: 3}, {prompt: 8, output: 3}, {prompt: 8, output: 2}, {prompt: 4, output: 1}},
			passes: []pass{
				// 3 × 8 tokens, pairs 3·36 = 108; 6 blocks, none left.
				{submit: []int32{0, 1, 2, 3}, batch: timing.Batch{PrefillRequests: 3, PrefillTokens: 24, PrefillAttentionPairs: 108,
					DecodeRequests: 3, DecodeKVTokens: 24, SampledTokens: 3},
					computed: []int32{8, 8, 8, 0}, running: []int32{0, 1, 2}, waiting: []int32{3}, active: 6},
				// Request 0's 9th token needs a 3rd block: the victim is request 2 (last admitted),
				// whose 2 blocks go to requests 0 and 1. Request 2 goes to the front of the
				// queue, before request 3; nothing is admitted in a pass that preempted.
				{batch: timing.Batch{DecodeRequests: 2, DecodeKVTokens: 18, DecodeSteps: 2, DecodeStepKVTokens: 18, SampledTokens: 2},
					computed: []int32{9, 9, 0, 0}, running: []int32{0, 1}, waiting: []int32{2, 3}, active: 6, preemptions: 1},
				// Request 2 must recompute prompt 8 + 1 emitted token = 9 tokens, ceil(9/4) = 3
				// blocks, none free: it blocks, and request 3 behind it. Requests 0 and 1 finish.
				{batch: timing.Batch{DecodeRequests: 2, DecodeKVTokens: 20, DecodeSteps: 2, DecodeStepKVTokens: 20, SampledTokens: 2},
					computed: []int32{10, 10, 0, 0}, waiting: []int32{2, 3}, done: []int32{0, 1}, preemptions: 1},
				// Recompute of 9 tokens is a prefill (nothing in KV): pairs 45; request 3 adds 4,
				// pairs 10. Prefill tokens 13, pairs 55.
				{batch: timing.Batch{PrefillRequests: 2, PrefillTokens: 13, PrefillAttentionPairs: 55,
					DecodeRequests: 2, DecodeKVTokens: 13, SampledTokens: 2},
					computed: []int32{10, 10, 9, 4}, done: []int32{2, 3}, preemptions: 1},
			},
			check: func(t *testing.T, h *harness) {
				checkHistory(t, h, 0, admissions(Admission{AtMs: 0}), 0, 0, 0)
				checkHistory(t, h, 1, admissions(Admission{AtMs: 0}), 0, 0, 0)
				// Admitted at 0 ms and again at the start of pass 4 (30 ms).
				checkHistory(t, h, 2, admissions(Admission{AtMs: 0}, Admission{AtMs: 30}), 1, 0, 0)
				checkHistory(t, h, 3, admissions(Admission{AtMs: 30}), 0, 0, 0)
				// Its first token (end of pass 1) stands; the second comes after the recompute.
				if r := &h.reqs[2]; r.FirstTokenMs != 10 || r.SecondTokenMs != 40 || r.FirstAdmitMs != 0 {
					t.Errorf("request 2: first admit %v, tokens at %v and %v; want 0, 10, 40", r.FirstAdmitMs, r.FirstTokenMs, r.SecondTokenMs)
				}
			},
		},
		{
			// Block size 4, 5 blocks: two 8-token prompts hold 4, one block is left.
			name: "the request needing the block is the last and preempts itself",
			cfg:  Config{MaxBatchedTokens: 100, MaxSequences: 8, BlockSize: 4, CapacityBlocks: 5},
			reqs: []spec{{prompt: 8, output: 5}, {prompt: 8, output: 2}},
			passes: []pass{
				{submit: []int32{0, 1}, batch: timing.Batch{PrefillRequests: 2, PrefillTokens: 16, PrefillAttentionPairs: 72,
					DecodeRequests: 2, DecodeKVTokens: 16, SampledTokens: 2},
					computed: []int32{8, 8}, running: []int32{0, 1}, active: 4},
				// Request 0 takes the last block for its 9th token; request 1 then needs one too,
				// and the last running request is itself: it is preempted (its 2 blocks freed)
				// and nothing else is scheduled for it.
				{batch: timing.Batch{DecodeRequests: 1, DecodeKVTokens: 9, DecodeSteps: 1, DecodeStepKVTokens: 9, SampledTokens: 1},
					computed: []int32{9, 0}, running: []int32{0}, waiting: []int32{1}, active: 3, preemptions: 1},
				// Request 1 needs ceil(9/4) = 3 blocks, 2 are free: it waits until request 0
				// (3 blocks) completes at its 5th token.
				{batch: timing.Batch{DecodeRequests: 1, DecodeKVTokens: 10, DecodeSteps: 1, DecodeStepKVTokens: 10, SampledTokens: 1},
					computed: []int32{10, 0}, running: []int32{0}, waiting: []int32{1}, active: 3, preemptions: 1},
				{batch: timing.Batch{DecodeRequests: 1, DecodeKVTokens: 11, DecodeSteps: 1, DecodeStepKVTokens: 11, SampledTokens: 1},
					computed: []int32{11, 0}, running: []int32{0}, waiting: []int32{1}, active: 3, preemptions: 1},
				{batch: timing.Batch{DecodeRequests: 1, DecodeKVTokens: 12, DecodeSteps: 1, DecodeStepKVTokens: 12, SampledTokens: 1},
					computed: []int32{12, 0}, waiting: []int32{1}, done: []int32{0}, preemptions: 1},
				// Recompute 9 tokens: pairs 45.
				{batch: timing.Batch{PrefillRequests: 1, PrefillTokens: 9, PrefillAttentionPairs: 45,
					DecodeRequests: 1, DecodeKVTokens: 9, SampledTokens: 1},
					computed: []int32{12, 9}, done: []int32{1}, preemptions: 1},
			},
			check: func(t *testing.T, h *harness) {
				checkHistory(t, h, 0, admissions(Admission{AtMs: 0}), 0, 0, 0)
				// Re-admitted at the start of pass 6 (50 ms).
				checkHistory(t, h, 1, admissions(Admission{AtMs: 0}, Admission{AtMs: 50}), 1, 0, 0)
			},
		},
		{
			// Block size 4, 5 blocks, budget 12. Request 1 (prompt 20) is still prefilling in
			// chunks when its next chunk needs 3 blocks: preempting itself frees only its 1 block,
			// and request 0, already scheduled in this pass, must not be preempted for the rest.
			name: "a chunk preempts its own request without touching earlier requests",
			cfg:  Config{MaxBatchedTokens: 12, MaxSequences: 8, BlockSize: 4, CapacityBlocks: 5},
			reqs: []spec{{prompt: 8, output: 2}, {prompt: 20, output: 1}},
			passes: []pass{
				// Request 0: 8 tokens, 2 blocks; request 1 gets the 12 − 8 = 4 left, 1 block.
				// Pairs 36 + 10 = 46; only request 0 samples.
				{submit: []int32{0, 1}, batch: timing.Batch{PrefillRequests: 2, PrefillTokens: 12, PrefillAttentionPairs: 46,
					DecodeRequests: 1, DecodeKVTokens: 8, SampledTokens: 1},
					computed: []int32{8, 4}, running: []int32{0, 1}, active: 3},
				// Request 0's decode step takes a 3rd block (1 left). Request 1's chunk of
				// min(16, 11) = 11 needs ceil(15/4) − 1 = 3 blocks: it preempts itself (2 free).
				// Request 0 completes.
				{batch: timing.Batch{DecodeRequests: 1, DecodeKVTokens: 9, DecodeSteps: 1, DecodeStepKVTokens: 9, SampledTokens: 1},
					computed: []int32{9, 0}, waiting: []int32{1}, done: []int32{0}, preemptions: 1},
				// Re-admitted: 12 tokens (3 blocks), pairs 78; then the last 8 after 12, pairs
				// 8·12 + 36 = 132, 5 blocks, and its only token.
				{batch: timing.Batch{PrefillRequests: 1, PrefillTokens: 12, PrefillAttentionPairs: 78},
					computed: []int32{9, 12}, running: []int32{1}, active: 3, preemptions: 1},
				{batch: timing.Batch{PrefillRequests: 1, PrefillTokens: 8, PrefillContextTokens: 12, PrefillAttentionPairs: 132,
					DecodeRequests: 1, DecodeKVTokens: 20, SampledTokens: 1},
					computed: []int32{9, 20}, done: []int32{1}, preemptions: 1},
			},
			check: func(t *testing.T, h *harness) {
				checkHistory(t, h, 0, admissions(Admission{AtMs: 0}), 0, 0, 0)
				checkHistory(t, h, 1, admissions(Admission{AtMs: 0}, Admission{AtMs: 20}), 1, 0, 0)
			},
		},
		{
			// Block size 4, prefix caching. Requests 0 and 1 share their first two blocks
			// (hashes 1, 2); request 2's 8-token prompt is exactly those two blocks; request 3's
			// 5-token prompt starts with the first.
			name: "prefix cache hits at admission",
			cfg:  Config{MaxBatchedTokens: 100, MaxSequences: 8, BlockSize: 4, CapacityBlocks: 20, PrefixCaching: true},
			reqs: []spec{{prompt: 10, output: 2, hashes: []uint64{1, 2, 3}}, {prompt: 10, output: 2, hashes: []uint64{1, 2, 4}},
				{prompt: 8, output: 1, hashes: []uint64{1, 2}}, {prompt: 5, output: 1, hashes: []uint64{1}}},
			passes: []pass{
				// Request 0: 10 tokens, 3 blocks; its 2 full blocks are registered as 1 and 2.
				{submit: []int32{0}, batch: timing.Batch{PrefillRequests: 1, PrefillTokens: 10, PrefillAttentionPairs: 55,
					DecodeRequests: 1, DecodeKVTokens: 10, SampledTokens: 1},
					computed: []int32{10, 0, 0, 0}, running: []int32{0}, active: 3},
				// Request 1 may reuse floor((10−1)/4) = 2 blocks: both hit, 8 tokens reused, it
				// computes 2 (tokens 8, 9) into 1 new block: pairs 2·8 + 2·3/2 = 19. Request 0
				// decodes (KV 11). Decode KV 11 + 10 = 21. Distinct blocks 3 + 1 = 4; request 0
				// completes and frees only its unshared 3rd block: 3.
				{submit: []int32{1}, batch: timing.Batch{PrefillRequests: 1, PrefillTokens: 2, PrefillContextTokens: 8, PrefillAttentionPairs: 19,
					DecodeRequests: 2, DecodeKVTokens: 21, DecodeSteps: 1, DecodeStepKVTokens: 11, SampledTokens: 2},
					computed: []int32{11, 10, 0, 0}, running: []int32{1}, done: []int32{0}, active: 3},
				// Request 2's prompt is block-aligned and fully cached, but it may reuse only
				// floor((8−1)/4) = 1 block: it recomputes tokens 4..7 into 1 new block, pairs
				// 4·4 + 4·5/2 = 26. Request 3 reuses floor(4/4) = 1 block and computes its 5th
				// token alone: a 1-token prefill, not a decode step (nothing emitted yet), pairs
				// 1·4 + 1 = 5. Prefill 4 + 1 tokens after 4 + 4, pairs 31; decode KV 11 + 8 + 5 = 24.
				{submit: []int32{2, 3}, batch: timing.Batch{PrefillRequests: 2, PrefillTokens: 5, PrefillContextTokens: 8, PrefillAttentionPairs: 31,
					DecodeRequests: 3, DecodeKVTokens: 24, DecodeSteps: 1, DecodeStepKVTokens: 11, SampledTokens: 3},
					computed: []int32{11, 11, 8, 5}, done: []int32{1, 2, 3}},
			},
			check: func(t *testing.T, h *harness) {
				checkHistory(t, h, 0, admissions(Admission{AtMs: 0}), 0, 0, 0)
				checkHistory(t, h, 1, admissions(Admission{AtMs: 10, ReusedTokens: 8}), 0, 8, 0)
				checkHistory(t, h, 2, admissions(Admission{AtMs: 20, ReusedTokens: 4}), 0, 4, 0)
				checkHistory(t, h, 3, admissions(Admission{AtMs: 20, ReusedTokens: 4}), 0, 4, 0)
				if h.reqs[1].FirstReusedTokens != 8 || h.reqs[2].FirstReusedTokens != 4 {
					t.Errorf("first reused %d and %d, want 8 and 4", h.reqs[1].FirstReusedTokens, h.reqs[2].FirstReusedTokens)
				}
				// Cached afterwards: the blocks of hashes 1 and 2. Request 2's copy of block 2 was a
				// duplicate (freed), request 3's second block and every third block stayed partial.
				p := h.e.Pool()
				if p.Inactive() != 2 || !h.cached(1) || !h.cached(2) || h.cached(3) || h.cached(4) {
					t.Errorf("inactive %d; cached 1 %v 2 %v 3 %v 4 %v", p.Inactive(), h.cached(1), h.cached(2), h.cached(3), h.cached(4))
				}
			},
		},
		{
			// Block size 4, 5 blocks, prefix caching. Requests 0 and 1 (8-token prompts, 8 outputs)
			// share the block of hash 10. Block ids are handed out fresh in order 0, 1, 2, ...
			name: "preemption with prefix caching splits reused and recovered tokens",
			cfg:  Config{MaxBatchedTokens: 100, MaxSequences: 8, BlockSize: 4, CapacityBlocks: 5, PrefixCaching: true},
			reqs: []spec{{prompt: 8, output: 8, hashes: []uint64{10, 11, 12, 13}}, {prompt: 8, output: 8, hashes: []uint64{10, 21, 22, 23}}},
			passes: []pass{
				// Request 0: blocks 0 (hash 10), 1 (11). Request 1 reuses floor(7/4) = 1 block (4
				// tokens), computes 4 into block 2 (21): pairs 36 + (4·4 + 10) = 62. 3 blocks.
				{submit: []int32{0, 1}, batch: timing.Batch{PrefillRequests: 2, PrefillTokens: 12, PrefillContextTokens: 4, PrefillAttentionPairs: 62,
					DecodeRequests: 2, DecodeKVTokens: 16, SampledTokens: 2},
					computed: []int32{8, 8}, running: []int32{0, 1}, active: 3},
				// 9th tokens: request 0 gets block 3, request 1 block 4; the pool is full.
				{batch: timing.Batch{DecodeRequests: 2, DecodeKVTokens: 18, DecodeSteps: 2, DecodeStepKVTokens: 18, SampledTokens: 2},
					computed: []int32{9, 9}, running: []int32{0, 1}, active: 5},
				{batch: timing.Batch{DecodeRequests: 2, DecodeKVTokens: 20, DecodeSteps: 2, DecodeStepKVTokens: 20, SampledTokens: 2},
					computed: []int32{10, 10}, running: []int32{0, 1}, active: 5},
				{batch: timing.Batch{DecodeRequests: 2, DecodeKVTokens: 22, DecodeSteps: 2, DecodeStepKVTokens: 22, SampledTokens: 2},
					computed: []int32{11, 11}, running: []int32{0, 1}, active: 5},
				// 12 tokens fill the third blocks: block 3 registers hash 12, block 4 hash 22.
				{batch: timing.Batch{DecodeRequests: 2, DecodeKVTokens: 24, DecodeSteps: 2, DecodeStepKVTokens: 24, SampledTokens: 2},
					computed: []int32{12, 12}, running: []int32{0, 1}, active: 5},
				// Pass 6 (50 ms): request 0's 13th token needs a 4th block: request 1 is preempted,
				// releasing block 4 (22) then 2 (21) to the LRU list (block 0 stays held by
				// request 0). Request 0 evicts the LRU head, block 4 (hash 22).
				{batch: timing.Batch{DecodeRequests: 1, DecodeKVTokens: 13, DecodeSteps: 1, DecodeStepKVTokens: 13, SampledTokens: 1},
					computed: []int32{13, 0}, running: []int32{0}, waiting: []int32{1}, active: 4, preemptions: 1,
					leases: map[int32][]int32{0: {0, 1, 3, 4}, 1: {}}},
				// Request 1 (13 known) may reuse floor(12/4) = 3 blocks: 10 (active) and 21
				// (inactive) hit, 22 is gone. It needs ceil(13/4) − 2 = 2 new blocks plus the
				// inactive hit, 3 > 1 available: it waits.
				{batch: timing.Batch{DecodeRequests: 1, DecodeKVTokens: 14, DecodeSteps: 1, DecodeStepKVTokens: 14, SampledTokens: 1},
					computed: []int32{14, 0}, running: []int32{0}, waiting: []int32{1}, active: 4, preemptions: 1},
				// Request 0 emits its 8th token and completes: block 4 (partial, hash 22 was
				// evicted) is freed; 3 (12), 1 (11), 0 (10) join the LRU list after 2 (21), 12 and
				// 11 as unmatchable entries (only request 0 held them), their blocks idle.
				{batch: timing.Batch{DecodeRequests: 1, DecodeKVTokens: 15, DecodeSteps: 1, DecodeStepKVTokens: 15, SampledTokens: 1},
					computed: []int32{15, 0}, waiting: []int32{1}, done: []int32{0}, preemptions: 1},
				// Pass 9 (80 ms): request 1 pins blocks 0 (10) and 2 (21), 8 tokens, and recomputes
				// 13 − 8 = 5 into a free block and the evicted LRU head, the entry of hash 12:
				// pairs 5·8 + 5·6/2 = 55. Idle blocks are reused last released first (1, then 3).
				// It computed [4, 12) itself before the preemption (it reused 4 at its first
				// admission): 4 of the 8 hit tokens are reuse, 4 recovered.
				{batch: timing.Batch{PrefillRequests: 1, PrefillTokens: 5, PrefillContextTokens: 8, PrefillAttentionPairs: 55,
					DecodeRequests: 1, DecodeKVTokens: 13, SampledTokens: 1},
					computed: []int32{15, 13}, running: []int32{1}, active: 4, preemptions: 1,
					leases: map[int32][]int32{1: {0, 2, 1, 3}}},
				{batch: timing.Batch{DecodeRequests: 1, DecodeKVTokens: 14, DecodeSteps: 1, DecodeStepKVTokens: 14, SampledTokens: 1},
					computed: []int32{15, 14}, running: []int32{1}, active: 4, preemptions: 1},
				{batch: timing.Batch{DecodeRequests: 1, DecodeKVTokens: 15, DecodeSteps: 1, DecodeStepKVTokens: 15, SampledTokens: 1},
					computed: []int32{15, 15}, done: []int32{1}, preemptions: 1},
			},
			check: func(t *testing.T, h *harness) {
				checkHistory(t, h, 0, admissions(Admission{AtMs: 0}), 0, 0, 0)
				checkHistory(t, h, 1, admissions(Admission{AtMs: 0, ReusedTokens: 4}, Admission{AtMs: 80, ReusedTokens: 4, RecoveredTokens: 4}), 1, 4, 4)
				if h.reqs[1].FirstReusedTokens != 4 {
					t.Errorf("request 1 first reused %d, want 4", h.reqs[1].FirstReusedTokens)
				}
				// Request 1 released block 3 (partial) to the free list and 1 (22), 2 (21), 0 (10)
				// to the LRU list after the entry of 11: hashes 10, 21, 22 cached and matchable,
				// 11 cached unmatchable (request 0 completed), 12 evicted.
				p := h.e.Pool()
				if p.Inactive() != 4 || p.unlisted != 1 || h.cached(12) || !h.cached(22) || !h.cached(21) || h.cached(11) || !h.cached(10) {
					t.Errorf("inactive %d (%d unmatchable); cached 10 %v 11 %v 12 %v 21 %v 22 %v", p.Inactive(), p.unlisted,
						h.cached(10), h.cached(11), h.cached(12), h.cached(21), h.cached(22))
				}
			},
		},
		{
			// Block size 4, 6 blocks, prefix caching; requests submitted in the order 0, 2, 1.
			// Request 1 shares the block of hash 10 with request 0, is preempted (by itself)
			// twice and finds the same 8 cached tokens at both re-admissions.
			name: "a request preempted twice keeps its first reuse and recovers its own KV",
			cfg:  Config{MaxBatchedTokens: 100, MaxSequences: 8, BlockSize: 4, CapacityBlocks: 6, PrefixCaching: true},
			reqs: []spec{{prompt: 8, output: 4, hashes: []uint64{10, 11, 12}}, {prompt: 8, output: 6, hashes: []uint64{10, 21, 22}},
				{prompt: 4, output: 10, hashes: []uint64{30, 31, 32}}},
			passes: []pass{
				// Request 0: 8 tokens, blocks 0 (10), 1 (11), pairs 36. Request 2: 4 tokens, block 2
				// (30), pairs 10. Request 1 reuses floor(7/4) = 1 block (hash 10) and computes 4
				// into block 3 (21), pairs 4·4 + 10 = 26. Pairs 72; decode KV 8 + 4 + 8 = 20.
				{submit: []int32{0, 2, 1}, batch: timing.Batch{PrefillRequests: 3, PrefillTokens: 16, PrefillContextTokens: 4, PrefillAttentionPairs: 72,
					DecodeRequests: 3, DecodeKVTokens: 20, SampledTokens: 3},
					computed: []int32{8, 8, 4}, running: []int32{0, 2, 1}, active: 4},
				// All three cross a block boundary (9, 9, 5 tokens): request 0 takes block 4,
				// request 2 block 5, and request 1, the last, preempts itself: block 3 (21) goes to
				// the LRU list. KV 9 + 5.
				{batch: timing.Batch{DecodeRequests: 2, DecodeKVTokens: 14, DecodeSteps: 2, DecodeStepKVTokens: 14, SampledTokens: 2},
					computed: []int32{9, 0, 5}, running: []int32{0, 2}, waiting: []int32{1}, active: 5, preemptions: 1},
				// Request 1 (9 known) would reuse 10 and 21 (2 blocks, 1 inactive) and need
				// ceil(9/4) − 2 = 1 new block: 2 > 1 available, it waits. KV 10 + 6.
				{batch: timing.Batch{DecodeRequests: 2, DecodeKVTokens: 16, DecodeSteps: 2, DecodeStepKVTokens: 16, SampledTokens: 2},
					computed: []int32{10, 0, 6}, running: []int32{0, 2}, waiting: []int32{1}, active: 5, preemptions: 1},
				// Request 0 completes (KV 11): block 4 (partial) freed, 1 (11, unmatchable: only
				// request 0 held it; its block idle) and 0 (10) to the LRU list after 3 (21).
				// KV 11 + 7.
				{batch: timing.Batch{DecodeRequests: 2, DecodeKVTokens: 18, DecodeSteps: 2, DecodeStepKVTokens: 18, SampledTokens: 2},
					computed: []int32{11, 0, 7}, running: []int32{2}, waiting: []int32{1}, done: []int32{0}, active: 2, preemptions: 1},
				// Pass 5 (40 ms): request 1 pins blocks 0 (10) and 3 (21), 8 tokens, and takes a
				// free block, the last idle one, 1. Its own KV was [4, 8): 4 tokens reused, 4
				// recovered. It computes only token 8 with all 8 before it in KV: a decode step.
				// KV 8 (request 2) + 9.
				{batch: timing.Batch{DecodeRequests: 2, DecodeKVTokens: 17, DecodeSteps: 2, DecodeStepKVTokens: 17, SampledTokens: 2},
					computed: []int32{11, 9, 8}, running: []int32{2, 1}, active: 5, preemptions: 1,
					leases: map[int32][]int32{1: {0, 3, 1}}},
				// Request 2's 9th token evicts the last inactive entry, 11's. KV 9 + 10.
				{batch: timing.Batch{DecodeRequests: 2, DecodeKVTokens: 19, DecodeSteps: 2, DecodeStepKVTokens: 19, SampledTokens: 2},
					computed: []int32{11, 10, 9}, running: []int32{2, 1}, active: 6, preemptions: 1},
				{batch: timing.Batch{DecodeRequests: 2, DecodeKVTokens: 21, DecodeSteps: 2, DecodeStepKVTokens: 21, SampledTokens: 2},
					computed: []int32{11, 11, 10}, running: []int32{2, 1}, active: 6, preemptions: 1},
				// Request 1's 12 tokens fill block 4 (22). KV 11 + 12.
				{batch: timing.Batch{DecodeRequests: 2, DecodeKVTokens: 23, DecodeSteps: 2, DecodeStepKVTokens: 23, SampledTokens: 2},
					computed: []int32{11, 12, 11}, running: []int32{2, 1}, active: 6, preemptions: 1},
				// Request 2 fills its block 1 (32); request 1's 13th token needs a 4th block, none is
				// free: it preempts itself again, releasing 4 (22), 3 (21), 0 (10) to the LRU list.
				{batch: timing.Batch{DecodeRequests: 1, DecodeKVTokens: 12, DecodeSteps: 1, DecodeStepKVTokens: 12, SampledTokens: 1},
					computed: []int32{11, 0, 12}, running: []int32{2}, waiting: []int32{1}, active: 3, preemptions: 2},
				// Request 2's 13th token evicts the LRU head, block 4 (22), and request 2 completes
				// at its 10th output. Request 1 (13 known) finds 10 and 21 but not 22 and needs
				// ceil(13/4) − 2 = 2 new blocks plus 2 inactive hits, 4 > 2: it waits.
				{batch: timing.Batch{DecodeRequests: 1, DecodeKVTokens: 13, DecodeSteps: 1, DecodeStepKVTokens: 13, SampledTokens: 1},
					computed: []int32{11, 0, 13}, waiting: []int32{1}, done: []int32{2}, preemptions: 2},
				// Pass 11 (100 ms): request 1 pins 0 (10) and 3 (21) and recomputes 13 − 8 = 5 tokens
				// into the free block 4 and the LRU head, block 1 (32): pairs 5·8 + 15 = 55. Its
				// own KV is still [4, 12): 4 reused, 4 recovered. It completes at its 6th output.
				{batch: timing.Batch{PrefillRequests: 1, PrefillTokens: 5, PrefillContextTokens: 8, PrefillAttentionPairs: 55,
					DecodeRequests: 1, DecodeKVTokens: 13, SampledTokens: 1},
					computed: []int32{11, 13, 13}, done: []int32{1}, preemptions: 2},
			},
			check: func(t *testing.T, h *harness) {
				checkHistory(t, h, 1, admissions(Admission{AtMs: 0, ReusedTokens: 4}, Admission{AtMs: 40, ReusedTokens: 4, RecoveredTokens: 4},
					Admission{AtMs: 100, ReusedTokens: 4, RecoveredTokens: 4}), 2, 4, 8)
				checkHistory(t, h, 2, admissions(Admission{AtMs: 0}), 0, 0, 0)
				// Cached at the end: 31, 30 (request 2, unmatchable), then 22, 21, 10 (request 1);
				// 11, 12 and 32 were evicted or never filled.
				p := h.e.Pool()
				if p.Inactive() != 5 || p.unlisted != 2 || h.cached(11) || h.cached(32) || !h.cached(22) || !h.cached(21) || !h.cached(10) {
					t.Errorf("inactive %d (%d unmatchable); cached 11 %v 32 %v 22 %v", p.Inactive(), p.unlisted, h.cached(11), h.cached(32), h.cached(22))
				}
			},
		},
	} {
		t.Run(sc.name, func(t *testing.T) { runScenario(t, sc) })
	}
}

// expectBatch fails unless one pass runs and prices want (KVCapacityTokens filled in) and the
// requests in wantDone complete.
func (h *harness) expectBatch(want timing.Batch, wantDone ...int32) {
	h.t.Helper()
	b, scheduled, _, done := h.step()
	if !scheduled {
		h.t.Fatalf("pass %d scheduled nothing", h.pass+1)
	}
	want.KVCapacityTokens = h.e.CapacityTokens()
	if b != want {
		h.t.Errorf("pass %d batch\n got %+v\nwant %+v", h.pass, b, want)
	}
	if !slices.Equal(done, wantDone) {
		h.t.Errorf("pass %d completed %v, want %v", h.pass, done, wantDone)
	}
}

func (h *harness) expectPool(when string, active, inactive int) {
	h.t.Helper()
	h.checkPool(when)
	if p := h.e.Pool(); p.Active() != active || p.Inactive() != inactive {
		h.t.Fatalf("%s: %d active and %d inactive blocks, want %d and %d", when, p.Active(), p.Inactive(), active, inactive)
	}
}

func (h *harness) reserve(ri int32, wantCached int, wantOK bool) {
	h.t.Helper()
	cached, ok := h.e.Reserve(ri)
	if cached != wantCached || ok != wantOK {
		h.t.Fatalf("Reserve(%d) = %d, %v; want %d, %v", ri, cached, ok, wantCached, wantOK)
	}
}

// The decode side of a disaggregated hand-off: Reserve pins the prompt blocks the pool caches and
// allocates the rest, or claims nothing when it lacks room; Activate makes the request decodable.
// Block size 4, 6 blocks, prefix caching.
func TestReserveActivate(t *testing.T) {
	h := newHarness(t, Config{MaxBatchedTokens: 100, MaxSequences: 8, BlockSize: 4, CapacityBlocks: 6, PrefixCaching: true},
		spec{prompt: 10, output: 3, hashes: []uint64{1, 2, 3}},
		spec{prompt: 14, output: 2, hashes: []uint64{1, 2, 5, 6}},
		spec{prompt: 24, output: 1, hashes: []uint64{1, 2, 3, 7, 8, 9}},
		spec{prompt: 4, output: 2, hashes: []uint64{99}})
	e := h.e

	// Request 0: nothing cached, ceil(10/4) = 3 blocks (0, 1, 2). It stays outside the queues.
	h.reserve(0, 0, true)
	h.expectPool("reserve 0", 3, 0)
	if e.HasWork() || len(h.reqs[0].Blocks) != 3 {
		t.Fatalf("after Reserve: has work %v, %d blocks", e.HasWork(), len(h.reqs[0].Blocks))
	}
	// Request 1 needs ceil(14/4) = 4 blocks; request 0's KV has not arrived, so nothing is cached
	// yet, and 3 blocks are free: refused, nothing claimed.
	h.reserve(1, 0, false)
	h.expectPool("refused reserve 1", 3, 0)
	if len(h.reqs[1].Blocks) != 0 {
		t.Fatalf("a refused Reserve left %d blocks", len(h.reqs[1].Blocks))
	}
	// Request 0's transfer ends: its first token came from the prefill side, its 10 prompt
	// tokens count as computed and its 2 full blocks are cached as hashes 1 and 2.
	h.reqs[0].EmitFirstToken(0)
	e.Activate(0)
	if r := &h.reqs[0]; r.NumComputed != 10 || r.Status != Waiting || !e.HasWork() || !h.cached(1) || !h.cached(2) || h.cached(3) {
		t.Fatalf("after Activate: computed %d status %v has work %v", r.NumComputed, r.Status, e.HasWork())
	}
	// Now request 1 finds hashes 1 and 2 (of its floor(14/4) = 3 full prompt blocks): 8 cached
	// tokens pinned, 4 − 2 = 2 new blocks (3, 4); 5 active blocks.
	h.reserve(1, 8, true)
	h.expectPool("reserve 1", 5, 0)
	if got := h.reqs[1].Blocks; !slices.Equal(got, []int32{0, 1, 3, 4}) {
		t.Fatalf("request 1 lease %v, want [0 1 3 4]", got)
	}

	// Pass 1: request 0 is admitted with its KV in place and computes 1 token (its first
	// output) with 10 in KV: a decode step of KV 11, ceil(11/4) = 3 blocks, none new.
	h.expectBatch(timing.Batch{DecodeRequests: 1, DecodeKVTokens: 11, DecodeSteps: 1, DecodeStepKVTokens: 11, SampledTokens: 1})
	h.expectPool("pass 1", 5, 0)
	h.reqs[1].EmitFirstToken(5)
	e.Activate(1)
	// Pass 2 (10 ms): request 0 decodes (KV 12, filling its block 2 as hash 3) and completes
	// at its 3rd token; request 1 is admitted and decodes (KV 15, 4 blocks held). KV 12 + 15.
	h.expectBatch(timing.Batch{DecodeRequests: 2, DecodeKVTokens: 27, DecodeSteps: 2, DecodeStepKVTokens: 27, SampledTokens: 2}, 0, 1)
	// Released: request 0's block 2 (hash 3) to the LRU list; request 1's block 4 (partial) to the
	// free list, then 3 (hash 5, unmatchable: only request 1 held it; its block idle), 1 (2), 0 (1)
	// to the LRU list: 4 inactive.
	h.expectPool("pass 2", 0, 4)
	// Decode-side hits are logged in History only, not counted as the request's reuse.
	checkHistory(t, h, 0, admissions(Admission{AtMs: 0}), 0, 0, 0)
	checkHistory(t, h, 1, admissions(Admission{AtMs: 10, ReusedTokens: 8}), 0, 0, 0)

	// Request 3 takes a free block, the idle block released last (3): 5 available (the free
	// fresh block 5 + 4 inactive).
	h.reserve(3, 0, true)
	h.expectPool("reserve 3", 1, 4)
	// Request 2 (24 tokens) finds hashes 1, 2, 3 cached, all inactive: 6 − 3 = 3 new blocks, and
	// pinning the 3 hits takes them out of the available 5 too: 6 > 5, refused, nothing pinned.
	h.reserve(2, 0, false)
	h.expectPool("refused reserve 2", 1, 4)
	// With request 3's reservation dropped, 6 are available: 12 cached tokens. The new blocks
	// are the two free ones (the idle 3 and 4), then the LRU head's, hash 5's entry, evicted
	// (the fresh block 5).
	e.Release(3)
	h.reserve(2, 12, true)
	h.expectPool("reserve 2", 6, 0)
	if got := h.reqs[2].Blocks; !slices.Equal(got, []int32{0, 1, 2, 3, 4, 5}) || h.cached(5) || h.e.Pool().unlisted != 0 {
		t.Fatalf("request 2 lease %v (want [0 1 2 3 4 5]); hash 5 cached %v, %d unmatchable entries", got, h.cached(5), h.e.Pool().unlisted)
	}
	e.Release(2)
	h.expectPool("release 2", 0, 3)
}

// The prefill side of a disaggregated hand-off (HoldOnComplete, PrefillOnly) against the same
// passes on an aggregated engine. Block size 4, budget 8, prefix caching.
func TestHoldOnCompleteAndPrefillOnly(t *testing.T) {
	for _, prefillOnly := range []bool{true, false} {
		t.Run(fmt.Sprintf("prefill only %v", prefillOnly), func(t *testing.T) {
			h := newHarness(t, Config{MaxBatchedTokens: 8, MaxSequences: 8, BlockSize: 4, CapacityBlocks: 8, PrefixCaching: true,
				HoldOnComplete: true, PrefillOnly: prefillOnly},
				spec{prompt: 10, output: 1, hashes: []uint64{1, 2}}, spec{prompt: 6, output: 1, hashes: []uint64{3}})
			h.e.Submit(0)
			h.e.Submit(1)
			// Pass 1: request 0's first chunk takes the budget: 8 tokens (2 blocks), pairs 36.
			h.expectBatch(timing.Batch{PrefillRequests: 1, PrefillTokens: 8, PrefillAttentionPairs: 36})
			// Pass 2: request 0's last 2 tokens after 8 (pairs 2·8 + 3 = 19, a 3rd block), then
			// request 1's 6 (pairs 21, 2 blocks). Both sample their first token; only an
			// aggregated engine has a decode part (KV 10 + 6).
			want := timing.Batch{PrefillRequests: 2, PrefillTokens: 8, PrefillContextTokens: 8, PrefillAttentionPairs: 40, SampledTokens: 2}
			if !prefillOnly {
				want.DecodeRequests, want.DecodeKVTokens = 2, 16
			}
			calls := h.m.calls
			want.KVCapacityTokens = h.e.CapacityTokens()
			_, _, first, done := h.step()
			if h.m.calls != calls+1 || h.m.last != want {
				t.Fatalf("pass 2 batch\n got %+v\nwant %+v", h.m.last, want)
			}
			if !slices.Equal(first, []int32{0, 1}) || !slices.Equal(done, []int32{0, 1}) {
				t.Fatalf("first tokens %v, completed %v; want [0 1] both", first, done)
			}
			// Completed, but their 3 + 2 blocks are held until Release.
			if r := &h.reqs[0]; r.Status != Completed || len(r.Blocks) != 3 || len(h.reqs[1].Blocks) != 2 || h.e.HasWork() {
				t.Fatalf("after completion: status %v, blocks %d and %d, has work %v", r.Status, len(r.Blocks), len(h.reqs[1].Blocks), h.e.HasWork())
			}
			h.expectPool("completed", 5, 0)
			// Request 0 frees its partial block and caches hashes 1, 2; request 1 caches hash 3.
			h.e.Release(0)
			h.expectPool("release 0", 2, 2)
			h.e.Release(1)
			h.expectPool("release 1", 0, 3)
		})
	}
}

// Nothing runs and the waiting head, whose transferred KV is in place, needs one more block
// that the queued transferred KV behind it holds: the newest holder is released (a preemption)
// rather than waiting forever. Block size 4, 4 blocks, no prefix caching.
func TestBlockedHeadEvictsNewestWaitingHolder(t *testing.T) {
	h := newHarness(t, Config{MaxBatchedTokens: 100, MaxSequences: 8, BlockSize: 4, CapacityBlocks: 4},
		spec{prompt: 8, output: 2}, spec{prompt: 8, output: 2})
	for ri := range int32(2) {
		h.reserve(ri, 0, true) // 2 blocks each: the pool is full
		h.reqs[ri].EmitFirstToken(0)
		h.e.Activate(ri)
	}
	// Request 0's 9th token needs ceil(9/4) = 3 blocks, it holds 2, none is free: request 1's 2
	// blocks are released and request 0 decodes (KV 9) and completes. Request 1 would now
	// recompute 9 tokens, 3 blocks, with 1 left: it waits.
	h.expectBatch(timing.Batch{DecodeRequests: 1, DecodeKVTokens: 9, DecodeSteps: 1, DecodeStepKVTokens: 9, SampledTokens: 1}, 0)
	if r := &h.reqs[1]; r.Preemptions != 1 || h.e.Preemptions() != 1 || r.NumComputed != 0 || len(r.Blocks) != 0 || r.Status != Waiting {
		t.Fatalf("request 1: preemptions %d (engine %d), computed %d, %d blocks, %v", r.Preemptions, h.e.Preemptions(), r.NumComputed, len(r.Blocks), r.Status)
	}
	// Pass 2: request 1 recomputes its 8 prompt tokens and first output, 9 tokens, pairs 45.
	h.expectBatch(timing.Batch{PrefillRequests: 1, PrefillTokens: 9, PrefillAttentionPairs: 45, DecodeRequests: 1, DecodeKVTokens: 9, SampledTokens: 1}, 1)
	h.expectPool("done", 0, 0)
	checkHistory(t, h, 1, admissions(Admission{AtMs: 10}), 1, 0, 0)
}

// CheckInvariants, which counts holders over the blocks handed out only (a memory-sized pool's
// capacity is far larger), still catches a lease on a block beyond them, and a lease the pool
// does not count.
func TestCheckInvariantsCatchesStrayLeases(t *testing.T) {
	h := newHarness(t, Config{MaxBatchedTokens: 100, MaxSequences: 8, BlockSize: 4, CapacityBlocks: 1000},
		spec{prompt: 8, output: 2})
	h.reserve(0, 0, true) // blocks 0 and 1 of 1,000
	if n := h.e.Pool().HandedOut(); n != 2 {
		t.Fatalf("%d blocks handed out, want 2", n)
	}
	r := &h.reqs[0]
	kept := r.Blocks
	r.Blocks = append(slices.Clone(kept), 2)
	if msg := h.e.CheckInvariants(); msg != "a lease holds a block never handed out" {
		t.Errorf("a lease on block 2 of 2 handed out: %q", msg)
	}
	r.Blocks = append(slices.Clone(kept), 0)
	if msg := h.e.CheckInvariants(); msg != "block refcount differs from the number of leases holding it" {
		t.Errorf("a second lease on block 0: %q", msg)
	}
	r.Blocks = kept
	h.checkPool("leases restored")
}

// New refuses a config with a non-positive size or no timing model.
func TestNewRejectsInvalidConfig(t *testing.T) {
	valid := Config{MaxBatchedTokens: 1, MaxSequences: 1, BlockSize: 1, CapacityBlocks: 1, Timing: &recorder{}}
	if _, err := New(valid, nil); err != nil {
		t.Fatalf("valid config refused: %v", err)
	}
	for name, mutate := range map[string]func(*Config){
		"max batched tokens": func(c *Config) { c.MaxBatchedTokens = 0 },
		"max sequences":      func(c *Config) { c.MaxSequences = -1 },
		"block size":         func(c *Config) { c.BlockSize = 0 },
		"capacity":           func(c *Config) { c.CapacityBlocks = 0 },
		"timing":             func(c *Config) { c.Timing = nil },
	} {
		c := valid
		mutate(&c)
		if _, err := New(c, nil); err == nil {
			t.Errorf("%s: invalid config accepted", name)
		}
	}
}

// The one running request needs a block that only queued transferred KV holds: the newest
// holder is released rather than the request preempting itself. (Preempting itself, it would
// recompute its prompt in chunks of MaxBatchedTokens into the blocks it freed and need the same
// block again, pass after pass, for ever.) Block size 4, 4 blocks, 4 tokens a pass.
func TestLoneRunnerEvictsWaitingHolderNotItself(t *testing.T) {
	h := newHarness(t, Config{MaxBatchedTokens: 4, MaxSequences: 8, BlockSize: 4, CapacityBlocks: 4},
		spec{prompt: 4, output: 6}, spec{prompt: 8, output: 2})
	h.reserve(0, 0, true) // 1 block
	h.reqs[0].EmitFirstToken(0)
	h.e.Activate(0)
	// Pass 1: request 0 is admitted and decodes its 5th token, taking a 2nd block.
	h.expectBatch(timing.Batch{DecodeRequests: 1, DecodeKVTokens: 5, DecodeSteps: 1, DecodeStepKVTokens: 5, SampledTokens: 1})
	h.reserve(1, 0, true) // 2 blocks: the pool is full
	h.reqs[1].EmitFirstToken(h.now)
	h.e.Activate(1)
	// Passes 2-4: tokens 6-8 fit request 0's 2 blocks; request 1 is not admitted (no room for its
	// 9th token's block).
	for kv := 6; kv <= 8; kv++ {
		h.expectBatch(timing.Batch{DecodeRequests: 1, DecodeKVTokens: kv, DecodeSteps: 1, DecodeStepKVTokens: kv, SampledTokens: 1})
	}
	// Pass 5: token 9 needs a 3rd block: request 1's 2 blocks are released, request 0 decodes
	// (its last token: output 6 after the first) and completes, and request 1, waiting again
	// with no KV, is admitted to recompute 3 tokens into the block left (pairs 1+2+3).
	h.expectBatch(timing.Batch{PrefillRequests: 1, PrefillTokens: 3, PrefillAttentionPairs: 6, DecodeRequests: 1, DecodeKVTokens: 9, DecodeSteps: 1, DecodeStepKVTokens: 9, SampledTokens: 1}, 0)
	if r := &h.reqs[1]; r.Preemptions != 1 || len(r.Blocks) != 1 || r.NumComputed != 3 {
		t.Fatalf("request 1: preemptions %d, %d blocks, %d computed; want released once, then 3 tokens in 1 block", r.Preemptions, len(r.Blocks), r.NumComputed)
	}
	checkHistory(t, h, 0, admissions(Admission{AtMs: 0}), 0, 0, 0)
	// Request 1 recomputes the rest of its 8 prompt tokens and first output: 4 (pairs 4+5+6+7),
	// then 2 (8+9) with its second token.
	h.expectBatch(timing.Batch{PrefillRequests: 1, PrefillTokens: 4, PrefillContextTokens: 3, PrefillAttentionPairs: 22})
	h.expectBatch(timing.Batch{PrefillRequests: 1, PrefillTokens: 2, PrefillContextTokens: 7, PrefillAttentionPairs: 17, DecodeRequests: 1, DecodeKVTokens: 9, SampledTokens: 1}, 1)
	h.expectPool("done", 0, 0)
}

// A request that loses its KV MaxPreemptionsPerRequest times marks the engine livelocked, and
// one time fewer does not.
func TestLivelockAfterMaxPreemptions(t *testing.T) {
	h := newHarness(t, Config{MaxBatchedTokens: 4, MaxSequences: 8, BlockSize: 4, CapacityBlocks: 4}, spec{prompt: 4, output: 1})
	r := &h.reqs[0]
	for range MaxPreemptionsPerRequest - 1 {
		h.e.dropKV(r)
	}
	if h.e.Livelocked() {
		t.Fatalf("livelocked after %d preemptions", r.Preemptions)
	}
	h.e.dropKV(r)
	if !h.e.Livelocked() || r.Preemptions != MaxPreemptionsPerRequest {
		t.Fatalf("after %d preemptions: livelocked %v", r.Preemptions, h.e.Livelocked())
	}
}
