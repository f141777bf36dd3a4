package config

import (
	"fmt"
	"strconv"
)

// Floors below which an evaluation.sla bound in ms reads as a number of seconds typed into a
// milliseconds field: no deployment's first token or whole request arrives within
// SecondsLikeTTFTMs (the front end and one prefill pass take longer), and no decode step takes
// under SecondsLikeITLMs.
const (
	SecondsLikeTTFTMs = 5.0
	SecondsLikeITLMs  = 1.0
)

// SecondsLikeBounds returns one warning per bound of s small enough to be seconds typed into an
// ms field (TTFT and E2E bounds under SecondsLikeTTFTMs, ITL and TPOT bounds under
// SecondsLikeITLMs, per-request or percentile), each naming the key under path (e.g.
// evaluation.sla), what it asks for and what the seconds would be in ms; nil when s is nil or
// every bound is plausible.
func (s *SLA) SecondsLikeBounds(path string) []string {
	if s == nil {
		return nil
	}
	type bound struct {
		key   string
		ms    float64
		floor float64
	}
	var bs []bound
	for _, b := range []struct {
		key string
		v   *float64
	}{{"ttft_ms", s.TTFTMs}, {"itl_ms", s.ITLMs}, {"e2e_ms", s.E2EMs}} {
		if b.v != nil {
			bs = append(bs, bound{b.key, *b.v, floorFor(b.key)})
		}
	}
	for _, b := range s.PercentileBounds() {
		bs = append(bs, bound{b.Key(), b.Ms, floorFor(b.Latency)})
	}
	var out []string
	for _, b := range bs {
		if b.ms >= b.floor {
			continue
		}
		v := strconv.FormatFloat(b.ms, 'f', -1, 64)
		out = append(out, fmt.Sprintf("%s.%s: %s ms looks like seconds: SLA bounds are in milliseconds, so this asks for %s ms; "+
			"if %s s was meant, write %s: %s", path, b.key, v, v, v, b.key, strconv.FormatFloat(b.ms*1000, 'f', -1, 64)))
	}
	return out
}

// floorFor is the seconds-like floor of a bound's key or latency name.
func floorFor(key string) float64 {
	switch key {
	case "itl_ms", "itl", "tpot":
		return SecondsLikeITLMs
	}
	return SecondsLikeTTFTMs
}
