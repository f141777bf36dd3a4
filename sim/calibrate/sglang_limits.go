package calibrate

import (
	"fmt"
	"strings"
)

// SGLangRoleLimits are one role's batching settings in an SGLang srt-slurm recipe.
type SGLangRoleLimits struct {
	// MaxRunning is --max-running-requests, requests over all the role's attention-DP ranks of a
	// worker (0: not set).
	MaxRunning int
	// ChunkedPrefill is --chunked-prefill-size, prompt tokens per pass over those ranks (0: not
	// set, SGLang's 8192).
	ChunkedPrefill int
	// RecvInterval is --scheduler-recv-interval, decode passes between polls for new requests
	// (0: not set, SGLang's 1).
	RecvInterval int
	// MaxTotalTokens is --max-total-tokens, the KV pool of each attention-DP rank in tokens, a
	// cap on the memory-derived one (0: not set). A prefill rank holds a request's KV from its
	// prefill until the decode side has taken it, so a small cap bounds the requests it has in
	// flight.
	MaxTotalTokens int
	// MemFractionStatic is --mem-fraction-static, the share of GPU memory for weights and KV
	// cache (0: not set, SGLang's default).
	MemFractionStatic float64
}

// SGLangLimits are a recipe's prefill and decode roles' settings.
type SGLangLimits struct {
	// Recipe is the recipe's path as InferenceX's configuration names it (recipes/...).
	Recipe string
	// Prefill and Decode are the two roles' settings.
	Prefill, Decode SGLangRoleLimits
}

// sglangRecipeLimits is SGLangLimits of the SGLang srt-slurm recipes InferenceX's
// disaggregated DeepSeek-R1 deployments on GB200 and GB300 name, read from the recipe files as
// InferenceX tracks them (github.com/SemiAnalysisAI/InferenceX at 80d98084f,
// benchmarks/multi_node/srt-slurm-recipes/, backend.sglang_config.prefill and .decode:
// max-running-requests, chunked-prefill-size, scheduler-recv-interval, max-total-tokens,
// mem-fraction-static). A decode role's
// chunked-prefill-size is left out: its requests arrive with their KV; its
// scheduler-recv-interval holds hand-offs until a poll (config.Scheduler.RecvInterval).
var sglangRecipeLimits = map[string][2]SGLangRoleLimits{
	"recipes/gb200-fp4/1k1k/low-latency.yaml":     {{512, 8192, 10, 8192, 0.95}, {0, 0, 10, 0, 0.95}},
	"recipes/gb200-fp4/1k1k/max-tpt.yaml":         {{30000, 65536, 0, 131072, 0.84}, {67584, 0, 0, 3122380, 0.83}},
	"recipes/gb200-fp4/1k1k/mid-curve.yaml":       {{30000, 65536, 0, 131072, 0.84}, {67584, 0, 0, 3122380, 0.83}},
	"recipes/gb200-fp4/8k1k/low-latency.yaml":     {{512, 24576, 10, 32768, 0.95}, {0, 0, 10, 0, 0.95}},
	"recipes/gb200-fp4/8k1k/max-tpt.yaml":         {{30000, 131072, 0, 131072, 0.95}, {16384, 0, 0, 524288, 0.83}},
	"recipes/gb200-fp4/8k1k/mid-curve.yaml":       {{30000, 131072, 0, 131072, 0.95}, {16384, 0, 0, 524288, 0.83}},
	"recipes/gb200-fp8/1k1k/low-latency.yaml":     {{512, 8192, 10, 8192, 0.95}, {128, 0, 10, 0, 0.95}},
	"recipes/gb200-fp8/1k1k/max-tpt.yaml":         {{30000, 131072, 0, 524288, 0.75}, {45000, 0, 0, 0, 0.82}},
	"recipes/gb200-fp8/1k1k/mid-curve.yaml":       {{30000, 131072, 0, 524288, 0.75}, {45000, 0, 0, 0, 0.82}},
	"recipes/gb200-fp8/1k1k/ultra-tpt.yaml":       {{8192, 131072, 0, 524288, 0.75}, {5120, 0, 0, 0, 0.82}},
	"recipes/gb200-fp8/8k1k/low-latency.yaml":     {{512, 24576, 10, 32768, 0.8}, {512, 0, 10, 0, 0.8}},
	"recipes/gb200-fp8/8k1k/max_tpt.yaml":         {{30000, 131072, 0, 524288, 0.8}, {8192, 0, 0, 0, 0.82}},
	"recipes/gb200-fp8/8k1k/mid-curve.yaml":       {{30000, 131072, 0, 524288, 0.8}, {8192, 0, 0, 0, 0.82}},
	"recipes/gb300-fp4/1k1k/low_latency.yaml":     {{512, 8192, 10, 8192, 0.95}, {0, 0, 10, 0, 0.95}},
	"recipes/gb300-fp4/1k1k/max_tpt.yaml":         {{30000, 65536, 0, 131072, 0.84}, {67584, 0, 0, 3122380, 0.83}},
	"recipes/gb300-fp4/1k1k/mid_curve.yaml":       {{30000, 65536, 0, 131072, 0.84}, {67584, 0, 0, 3122380, 0.83}},
	"recipes/gb300-fp4/8k1k/low_latency.yaml":     {{512, 24576, 10, 32768, 0.95}, {0, 0, 10, 0, 0.95}},
	"recipes/gb300-fp4/8k1k/max_tpt.yaml":         {{30000, 131072, 0, 131072, 0.95}, {16384, 0, 0, 524288, 0.83}},
	"recipes/gb300-fp4/8k1k/mid_curve.yaml":       {{30000, 131072, 0, 131072, 0.95}, {16384, 0, 0, 524288, 0.83}},
	"recipes/gb300-fp8/1k1k/stp/low-latency.yaml": {{128, 8192, 10, 8192, 0.95}, {128, 0, 0, 0, 0.85}},
	"recipes/gb300-fp8/1k1k/stp/max.yaml":         {{30000, 131072, 0, 524288, 0.75}, {45000, 0, 0, 0, 0.82}},
	"recipes/gb300-fp8/1k1k/stp/mid.yaml":         {{30000, 131072, 0, 524288, 0.75}, {45000, 0, 0, 0, 0.82}},
	"recipes/gb300-fp8/8k1k/stp/low-latency.yaml": {{128, 32768, 10, 32768, 0.95}, {128, 0, 0, 0, 0.85}},
	"recipes/gb300-fp8/8k1k/stp/max.yaml":         {{30000, 131072, 0, 524288, 0.75}, {45000, 0, 0, 0, 0.82}},
	"recipes/gb300-fp8/8k1k/stp/mid.yaml":         {{30000, 131072, 0, 524288, 0.75}, {45000, 0, 0, 0, 0.82}},
}

// RecipeSGLangLimits returns the SGLang batching settings of InferenceX serving recipe recipe
// (sglangRecipeLimits), and false for a recipe the table does not cover.
func RecipeSGLangLimits(recipe string) (SGLangLimits, bool) {
	recipe = strings.Replace(recipe, "recipies/", "recipes/", 1)
	l, ok := sglangRecipeLimits[recipe]
	return SGLangLimits{Recipe: recipe, Prefill: l[0], Decode: l[1]}, ok
}

// apply gives r's roles the recipe's settings: the prefill role its running requests per
// attention-DP rank (replacing an empty or different prefill_batch_size), chunked-prefill size
// and receive interval; the decode role its running requests per rank where they are fewer
// than its share of the row's concurrency (pb and db are the row's batch columns). It returns
// the note that says so.
func (l SGLangLimits) apply(r *Row, pb, db int) string {
	p, d := &r.Prefill, &r.Decode
	note := fmt.Sprintf("the recipe's SGLang settings (%s): prefill", l.Recipe)
	if l.Prefill.MaxRunning > 0 {
		p.BatchSize = max(1, l.Prefill.MaxRunning/max(p.AttentionData, 1))
		note += fmt.Sprintf(" max-running-requests %d (%d per rank)", l.Prefill.MaxRunning, p.BatchSize)
		if pb > 0 && pb != p.BatchSize {
			note += fmt.Sprintf(" in place of the row's prefill_batch_size %d", pb)
		}
	}
	p.ChunkedPrefillSize, p.RecvInterval = l.Prefill.ChunkedPrefill, l.Prefill.RecvInterval
	if l.Prefill.ChunkedPrefill > 0 {
		note += fmt.Sprintf(", chunked-prefill-size %d", l.Prefill.ChunkedPrefill)
	}
	if l.Prefill.RecvInterval > 1 {
		note += fmt.Sprintf(", scheduler-recv-interval %d", l.Prefill.RecvInterval)
	}
	if per := l.Decode.MaxRunning / max(d.AttentionData, 1); l.Decode.MaxRunning > 0 && db == 0 && r.Concurrency > 0 {
		slots := max(d.AttentionData, 1) * max(d.Workers, 1)
		if share := (r.Concurrency + slots - 1) / slots; per < share {
			d.BatchSize = max(per, 1)
			note += fmt.Sprintf("; decode max-running-requests %d (%d per rank, below the row's %d per rank)", l.Decode.MaxRunning, d.BatchSize, share)
		}
	}
	d.RecvInterval = l.Decode.RecvInterval
	if l.Decode.RecvInterval > 1 {
		note += fmt.Sprintf("; decode scheduler-recv-interval %d", l.Decode.RecvInterval)
	}
	for _, x := range []struct {
		name  string
		shape *WorkerShape
		l     SGLangRoleLimits
	}{{"prefill", p, l.Prefill}, {"decode", d, l.Decode}} {
		x.shape.MaxTotalTokens, x.shape.MemoryFraction = x.l.MaxTotalTokens, x.l.MemFractionStatic
		if x.l.MaxTotalTokens > 0 {
			note += fmt.Sprintf("; %s max-total-tokens %d per rank (kv_cache.capacity.max_tokens)", x.name, x.l.MaxTotalTokens)
		}
		if x.l.MemFractionStatic > 0 {
			note += fmt.Sprintf("; %s mem-fraction-static %g", x.name, x.l.MemFractionStatic)
		}
	}
	return note
}
