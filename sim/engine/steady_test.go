package engine

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
)

// Property: steady decode runs change nothing. Two engines over the same random requests, one
// forming every pass on the general path (GeneralPasses), are driven alike, the steady one
// brought up to date (Sync) only now and then so that its runs last many passes: every pass
// has the same batch, duration, continued count, first tokens, completions and prefix-cache
// events, and at every Sync the requests and the KV pools are equal field by field. Some Syncs
// come with a pass in flight, as when a run stops at its virtual-time limit. The requests
// share prefixes, arrive at random passes and press on the pool (preemptions); a pass's time
// grows with the KV its decode steps attend to, so a wrong batch shows in the clock. A third of
// the seeds run a disaggregated decode side: requests arrive with their prompt KV (Reserve, then
// Activate when it is their turn), under TensorRT-LLM's guaranteed_no_evict half of the time,
// whose leases hold the whole sequence, so runs cross the boundaries of the blocks only their
// request holds. Some TensorRT-LLM seeds hold admissions back (BatchWait); some seeds run
// SGLang's scheduler. Half the others decode speculatively (speculative steady runs): their
// passes' round tallies and speculation counts must be equal too.
func TestSteadyRunsMatchGeneralPath(t *testing.T) {
	steadyTotal, steadySGLang, steadySpec := int64(0), int64(0), int64(0)
	for seed := uint64(1); seed <= 40; seed++ {
		rng := rand.New(rand.NewPCG(seed, 99))
		const bs = 8
		specs := make([]spec, 10+rng.IntN(30))
		decodeSide := rng.IntN(3) == 0
		for i := range specs {
			prompt := int32(1 + rng.IntN(60))
			output := int32(1 + rng.IntN(90))
			if decodeSide {
				output++ // a hand-off brings the first token: the decode side emits the rest
			}
			// Chained block hashes over prompt and output: a random prefix group shares its
			// first blocks, the rest are the request's own.
			group, sharedN := uint64(rng.IntN(3)), rng.IntN(4)
			n := int((prompt + output) / bs)
			hashes := make([]uint64, n)
			for j := range hashes {
				if j < sharedN {
					hashes[j] = group*16 + uint64(j) + 1
				} else {
					hashes[j] = 1<<20 + uint64(i)<<8 + uint64(j)
				}
			}
			specs[i] = spec{prompt: prompt, output: output, hashes: hashes}
		}
		cfg := Config{MaxBatchedTokens: []int{4, 8, 16 + rng.IntN(64)}[rng.IntN(3)], MaxSequences: 2 + rng.IntN(12), BlockSize: bs,
			CapacityBlocks: 12 + rng.IntN(60), PrefixCaching: rng.IntN(4) != 0}
		if rng.IntN(3) == 0 || decodeSide && rng.IntN(2) == 0 {
			cfg.Style = StyleTRTLLM
			cfg.NoEvict = decodeSide
			if rng.IntN(2) == 0 {
				cfg.BatchWait = BatchWait{TimeoutIters: rng.IntN(6), MaxTokensRatio: []float64{0, 0.5}[rng.IntN(2)]}
			}
		} else if rng.IntN(3) == 0 {
			// SGLang's prefill-first passes, prompts chunked at a small budget, its decode
			// passes owed between prefills (prefill_decode_interval) on some seeds.
			cfg.Style = StyleSGLang
			cfg.SGLang = DefaultSGLang([]int{1, 4, bs}[rng.IntN(3)], 1+rng.IntN(2), 0, rng.IntN(3))
			cfg.SGLang.ChunkedPrefillSize = 16 + rng.IntN(48)
			// A receive interval (0 to 3 decode passes) on some seeds, drawn from a stream
			// of its own.
			cfg.SGLang.RecvInterval = rand.New(rand.NewPCG(seed, 11)).IntN(4)
		}
		// Half the vLLM and TensorRT-LLM seeds decode speculatively (speculative steady runs),
		// drawn from a stream of their own so that the other seeds' cases stay as they were.
		specRng := rand.New(rand.NewPCG(seed, 7))
		if cfg.Style != StyleSGLang && specRng.IntN(2) == 0 {
			acc := make([]float64, 1+specRng.IntN(3))
			for j := range acc {
				acc[j] = specRng.Float64()
			}
			cfg.Speculation = &Speculation{Drafts: int32(len(acc)), Acceptance: acc, Seed: seed}
		}
		ref := cfg
		ref.GeneralPasses = true
		a, b := newHarness(t, cfg, specs...), newHarness(t, ref, specs...)
		a.noSync = true
		a.midSync = func() bool { return rng.IntN(30) == 0 }
		a.m.perKVToken, b.m.perKVToken = 0.01, 0.01
		var evA, evB []string
		a.e.Pool().OnStored = func(k uint64) { evA = append(evA, fmt.Sprint("+", k)) }
		a.e.Pool().OnRemoved = func(k uint64) { evA = append(evA, fmt.Sprint("-", k)) }
		b.e.Pool().OnStored = func(k uint64) { evB = append(evB, fmt.Sprint("+", k)) }
		b.e.Pool().OnRemoved = func(k uint64) { evB = append(evB, fmt.Sprint("-", k)) }
		next := 0
		compare := func(when string) {
			t.Helper()
			a.e.Sync()
			for i := range a.reqs {
				if !reflect.DeepEqual(a.reqs[i], b.reqs[i]) {
					t.Fatalf("seed %d %s: request %d differs\nsteady  %+v\ngeneral %+v", seed, when, i, a.reqs[i], b.reqs[i])
				}
			}
			if a.e.spec != b.e.spec {
				t.Fatalf("seed %d %s: speculation counts %+v, general path %+v", seed, when, a.e.spec, b.e.spec)
			}
			if !reflect.DeepEqual(a.e.sg, b.e.sg) {
				t.Fatalf("seed %d %s: SGLang state %+v, general path %+v", seed, when, a.e.sg, b.e.sg)
			}
			pa, pb := *a.e.Pool(), *b.e.Pool()
			pa.OnStored, pa.OnRemoved, pb.OnStored, pb.OnRemoved = nil, nil, nil, nil
			if !reflect.DeepEqual(pa, pb) {
				t.Fatalf("seed %d %s: KV pools differ", seed, when)
			}
		}
		for pass := 0; pass < 3000 && (next < len(specs) || a.e.HasWork()); pass++ {
			for next < len(specs) && rng.IntN(6) == 0 {
				if decodeSide {
					// The prompt's KV is claimed, then arrives: the request queues with its
					// first token. A claim refused now is retried at a later pass.
					ca, okA := a.e.Reserve(int32(next))
					cb, okB := b.e.Reserve(int32(next))
					if ca != cb || okA != okB {
						t.Fatalf("seed %d pass %d: Reserve(%d) = %d, %v; general path %d, %v", seed, pass, next, ca, okA, cb, okB)
					}
					if !okA {
						break
					}
					a.reqs[next].ReceiveFirstToken()
					b.reqs[next].ReceiveFirstToken()
					a.e.Activate(int32(next))
					b.e.Activate(int32(next))
				} else {
					a.e.Submit(int32(next))
					b.e.Submit(int32(next))
				}
				next++
			}
			if !b.e.HasWork() {
				if a.e.HasWork() {
					t.Fatalf("seed %d pass %d: the steady engine has work, the general one none", seed, pass)
				}
				continue
			}
			ba, sa, fa, da := a.step()
			bb, sb, fb, db := b.step()
			when := fmt.Sprintf("pass %d", pass)
			if sa != sb || ba != bb || a.now != b.now || !reflect.DeepEqual(fa, fb) || !reflect.DeepEqual(da, db) {
				t.Fatalf("seed %d %s: steady %v %+v at %v first %v done %v; general %v %+v at %v first %v done %v",
					seed, when, sa, ba, a.now, fa, da, sb, bb, b.now, fb, db)
			}
			if !reflect.DeepEqual(evA, evB) {
				t.Fatalf("seed %d %s: prefix-cache events %v, general path %v", seed, when, evA, evB)
			}
			if a.lastContinued != b.lastContinued {
				t.Fatalf("seed %d %s: continued %d, general path %d", seed, when, a.lastContinued, b.lastContinued)
			}
			var ra, rb [MaxRoundTokens]int32
			a.e.TakeRounds(&ra)
			b.e.TakeRounds(&rb)
			if ra != rb {
				t.Fatalf("seed %d %s: rounds by size %v, general path %v", seed, when, ra, rb)
			}
			evA, evB = evA[:0], evB[:0]
			if rng.IntN(25) == 0 {
				compare(when)
			}
		}
		compare("end")
		if n := b.e.SteadyPasses(); n != 0 {
			t.Fatalf("seed %d: the engine with GeneralPasses formed %d steady passes", seed, n)
		}
		steadyTotal += a.e.SteadyPasses()
		if cfg.Style == StyleSGLang {
			steadySGLang += a.e.SteadyPasses()
		}
		if cfg.Speculation != nil {
			steadySpec += a.e.SteadyPasses()
		}
	}
	t.Logf("steady passes: %d, %d under SGLang, %d speculative", steadyTotal, steadySGLang, steadySpec)
	if steadyTotal < 1000 || steadySGLang < 100 || steadySpec < 100 {
		t.Fatalf("only %d steady passes over all seeds, %d under SGLang, %d speculative: the test does not exercise steady runs",
			steadyTotal, steadySGLang, steadySpec)
	}
}
