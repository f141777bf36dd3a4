package metrics

// passChunkLen is the number of passes per PassLog chunk (48 KiB of gaps and counts).
const passChunkLen = 4096

// PassLog is one worker's pass history for ITL: per pass, in order, its gap in ms (the pass's
// end minus its start) and how many tokens emitted in it continued a pass run, i.e. came from
// requests whose previous token was emitted by the pass before (engine.Request.EachRun): each
// such token's ITL sample is the pass's gap. Storage grows in fixed chunks, so a long run never
// copies or discards what it recorded. The zero value is empty and ready to use.
type PassLog struct {
	chunks []*passChunk
	n      int
}

type passChunk struct {
	gapMs     [passChunkLen]float64
	continued [passChunkLen]int32
}

// Len is the number of passes recorded; the next Append records pass Len().
func (l *PassLog) Len() int { return l.n }

// Append records the next pass: its gap in ms and its count of continuing tokens (>= 0).
func (l *PassLog) Append(gapMs float64, continued int32) {
	if l.n%passChunkLen == 0 {
		l.chunks = append(l.chunks, new(passChunk))
	}
	c := l.chunks[l.n/passChunkLen]
	c.gapMs[l.n%passChunkLen] = gapMs
	c.continued[l.n%passChunkLen] = continued
	l.n++
}

// uncount removes one continuing token from each pass in [first, last] (a run of a request that
// did not complete: its tokens give no ITL sample).
func (l *PassLog) uncount(first, last int32) {
	for k := int(first); k <= int(last); k++ {
		l.chunks[k/passChunkLen].continued[k%passChunkLen]--
	}
}

// appendSegments appends the log's chunks to segs as weighted segments.
func (l *PassLog) appendSegments(segs []segment) []segment {
	for i, c := range l.chunks {
		n := min(passChunkLen, l.n-i*passChunkLen)
		segs = append(segs, segment{v: c.gapMs[:n], c: c.continued[:n]})
	}
	return segs
}
