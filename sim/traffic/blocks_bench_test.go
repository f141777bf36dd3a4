package traffic

import "testing"

// builtInSessions is the built-in sweep's session shape (examples/default-sweep.yaml): 4 turns of
// 410-614 new input and 51-77 output tokens, 75 % of the first prompt shared by 8 groups.
func builtInSessions(n int) *Workload {
	return SyntheticSessions(n, SessionShape{Turns: 4,
		NewInput: Length{Kind: LengthUniform, Min: 410, Max: 614}, Output: Length{Kind: LengthUniform, Min: 51, Max: 77},
		SharedPrefixRatio: 0.75, PrefixGroups: 8, InterTurnDelayMs: 100})
}

// BenchmarkBlocksSessions measures the shared-block computation of one capacity probe's
// workload in the built-in sweep (1,024 sessions, 64-token KV blocks): the sweep builds one per
// probe. "structure" is what Blocks does for it (sessionPrefixes.sharedBlocks), "hashed" the
// block hashing every other workload (a trace) takes.
func BenchmarkBlocksSessions(b *testing.B) {
	w := builtInSessions(1024)
	blocks := 0
	for i := range w.Requests {
		blocks += hashedTokens(&w.Requests[i], 8192) / 64
	}
	for _, bc := range []struct {
		name  string
		build func() *BlockSet
	}{
		{"structure", func() *BlockSet { return w.computeBlocks(64, 8192) }},
		{"hashed", func() *BlockSet { return hashedBlocks(w, 64, 8192) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				bc.build()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(blocks), "ns/block")
		})
	}
}
