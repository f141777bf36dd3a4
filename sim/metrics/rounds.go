package metrics

import (
	"sync"

	"github.com/servesweep/servesweep/sim/engine"
)

// roundChunk counts the speculative rounds of one PassLog chunk's passes that continued a pass
// run, per pass and round size: [pass·MaxRoundTokens + tokens − 1], pass within the chunk. A
// round of t tokens in pass p has the per-user-rate sample gap(p) / t, so a count per (pass, t)
// holds every such round of every request in a few int32 per pass (128 KiB per 4,096 passes).
type roundChunk [passChunkLen * engine.MaxRoundTokens]int32

// roundPool holds the zeroed round chunks of released logs (PassLog.Release) for later logs.
var roundPool = sync.Pool{New: func() any { return new(roundChunk) }}

// AppendRounds counts in the pass just appended (the last, Len() − 1) counts[t−1] speculative
// rounds of t tokens that continued a pass run (engine.Engine.TakeRounds): samples gap / t of
// the per-user output rate. Only rounds of requests the statistics count belong here: requests
// that complete and did not arrive in the warm-up (Build adds those whose requests kept them
// instead, engine.Request.RoundTokens). Call it after Append, at most once per pass.
func (l *PassLog) AppendRounds(counts *[engine.MaxRoundTokens]int32) {
	p := l.n - 1
	rc := l.roundChunk(p / passChunkLen)
	base := (p % passChunkLen) * engine.MaxRoundTokens
	for t, c := range counts {
		rc[base+t] += c
	}
}

// addRound counts one round of tokens tokens (1..MaxRoundTokens) in pass p.
func (l *PassLog) addRound(p int, tokens uint8) {
	l.roundChunk(p / passChunkLen)[(p%passChunkLen)*engine.MaxRoundTokens+int(tokens)-1]++
}

// roundChunk returns the round counts of chunk i, taking a zeroed chunk on first use.
func (l *PassLog) roundChunk(i int) *roundChunk {
	for len(l.rounds) <= i {
		l.rounds = append(l.rounds, nil)
	}
	if l.rounds[i] == nil {
		l.rounds[i] = roundPool.Get().(*roundChunk)
	}
	return l.rounds[i]
}

// releaseRounds zeroes the log's round chunks and hands them to later logs.
func (l *PassLog) releaseRounds() {
	for _, rc := range l.rounds {
		if rc != nil {
			*rc = roundChunk{}
			roundPool.Put(rc)
		}
	}
	l.rounds = nil
}

// addRoundTokens counts request r's continuing rounds rt (engine.Request.RoundTokens), aligned
// with the passes of its runs (engine.Request.EachRun), in the logs of their workers.
func addRoundTokens(r *engine.Request, rt []uint8, logs []*PassLog) {
	k := 0
	r.EachRun(func(run engine.PassRun) {
		l := logs[run.Worker]
		for p := int(run.First); p <= int(run.Last) && k < len(rt); p++ {
			l.addRound(p, rt[k])
			k++
		}
	})
}

// roundSegment returns the rounds counted in logs as one weighted segment of ms per token: per
// worker, pass p and round size t with a count, in that order, gap(p) / t with that count, the
// gaps read from the logs (spilled chunks read back). Errors: a spilled chunk that cannot be
// read back.
func roundSegment(logs []*PassLog) (segment, error) {
	var seg segment
	var c passChunk
	var raw []byte
	for _, l := range logs {
		for i, rc := range l.rounds {
			if rc == nil {
				continue
			}
			ch := l.chunks[i].mem
			if ch == nil {
				if raw == nil {
					raw = make([]byte, chunkBytes)
				}
				if err := l.load(i, &c, raw); err != nil {
					return segment{}, err
				}
				ch = &c
			}
			n := min(passChunkLen, l.n-i*passChunkLen)
			for j := 0; j < n; j++ {
				for size, count := range rc[j*engine.MaxRoundTokens : (j+1)*engine.MaxRoundTokens] {
					if count > 0 {
						seg.v = append(seg.v, ch.gapMs[j]/float64(size+1))
						seg.c = append(seg.c, count)
					}
				}
			}
		}
	}
	return seg, nil
}
