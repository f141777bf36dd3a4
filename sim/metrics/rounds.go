package metrics

import "github.com/servesweep/servesweep/sim/engine"

// roundTally counts the speculative rounds that continued a pass run, per worker, pass and
// round size: [worker][pass·MaxRoundTokens + tokens − 1]. A round of t tokens in pass p has the
// sample gap(p) / t, so a count per (pass, t) holds every such round of every request in a few
// int32 per pass instead of a float per round (engine.Request.RoundTokens).
type roundTally [][]int32

// add counts request r's continuing rounds rt, aligned with the passes of its runs
// (engine.Request.EachRun); logs size each worker's tally.
func (t *roundTally) add(r *engine.Request, rt []uint8, logs []*PassLog) {
	k := 0
	r.EachRun(func(run engine.PassRun) {
		w := int(run.Worker)
		for len(*t) <= w {
			*t = append(*t, nil)
		}
		if (*t)[w] == nil {
			(*t)[w] = make([]int32, logs[w].Len()*engine.MaxRoundTokens)
		}
		tw := (*t)[w]
		for p := int(run.First); p <= int(run.Last) && k < len(rt); p++ {
			tw[p*engine.MaxRoundTokens+int(rt[k])-1]++
			k++
		}
	})
}

// segment returns the tallied rounds as one weighted segment of ms per token: per pass p and
// round size n with a count, gap(p) / n with that count, the gaps read from logs (spilled
// chunks read back). Errors: a spilled chunk that cannot be read back.
func (t roundTally) segment(logs []*PassLog) (segment, error) {
	var seg segment
	var c passChunk
	var raw []byte
	for w, tw := range t {
		if tw == nil {
			continue
		}
		l := logs[w]
		for i := range l.chunks {
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
				p := i*passChunkLen + j
				for size, count := range tw[p*engine.MaxRoundTokens : (p+1)*engine.MaxRoundTokens] {
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
