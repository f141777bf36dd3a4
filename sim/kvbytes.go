package sim

import (
	"fmt"
	"strconv"

	"github.com/servesweep/servesweep/sim/config"
)

// KVBytesMismatch is the factor, either way, by which an explicit bytes_per_token may differ
// from the value its `auto` derives before KVBytesWarnings warns: 1.5 lets an override of a
// model variant or an engine's padding pass, while a BF16 size beside an FP8 KV cache (2×) or a
// value of 1 does not.
const KVBytesMismatch = 1.5

// KVBytesWarnings returns, for each explicit (not auto) KV size of cfg that differs from what
// the model, the KV precision and the parallel shape give by more than KVBytesMismatch either
// way, one message that starts with the field's path ("engine.kv_transfer.bytes_per_token: ..."),
// states both values and the precision, and says what the value changes: a worker role's
// kv_cache.bytes_per_token against timing.ModelSpec.KVBytesPerTokenAs (a token's KV over all
// layers, before sharding), and a disaggregated engine.kv_transfer.bytes_per_token against one
// prefill GPU's share of it (timing.ModelSpec.KVBytesPerTokenPerGPU at the prefill role's tensor
// and pipeline sizes: what auto transfers when the prefill role gives no KV size of its own). A
// model the catalog does not resolve, or a precision the run refuses, derives nothing and gets
// no warning. The run keeps the explicit value: a deliberate override stays possible.
func KVBytesWarnings(cfg *config.Config) []string {
	d := &deployment{cfg: cfg}
	m, err := d.modelFor("")
	if err != nil {
		return nil
	}
	prec, err := d.precisions(m)
	if err != nil {
		return nil
	}
	var out []string
	for _, name := range cfg.Engine.Mode.Roles() {
		role := cfg.Engine.Workers.Role(name)
		if role == nil || role.KVCache.BytesPerToken <= 0 {
			continue
		}
		derived := m.KVBytesPerTokenAs(prec.KVCache)
		if w := kvBytesWarning(role.KVCache.BytesPerToken, derived); w != "" {
			out = append(out, fmt.Sprintf("engine.workers.%s.kv_cache.bytes_per_token: %s the %d bytes a token that %s's KV cache in %s "+
				"takes over all layers (what auto derives); the run keeps %d, which sizes this role's default KV pool and an auto "+
				"kv_transfer: write auto, or keep the value if it is deliberate",
				name, w, derived, cfg.Engine.Model, prec.KVCache, role.KVCache.BytesPerToken))
		}
	}
	kt, prefill := cfg.Engine.KVTransfer, cfg.Engine.Workers.Prefill
	if cfg.Engine.Mode != config.ModeDisaggregated || kt == nil || kt.BytesPerToken <= 0 || prefill == nil {
		return out
	}
	s := shape(prefill)
	derived := m.KVBytesPerTokenPerGPU(prec.KVCache, s.Tensor, s.Pipeline)
	if w := kvBytesWarning(kt.BytesPerToken, derived); w != "" {
		out = append(out, fmt.Sprintf("engine.kv_transfer.bytes_per_token: %s the %d bytes a token that %s's KV cache in %s puts on one "+
			"prefill GPU of tensor %d, pipeline %d (what auto derives); the run keeps %d, which sets every transfer's time: write auto, "+
			"or keep the value if it is deliberate", w, derived, cfg.Engine.Model, prec.KVCache, max(s.Tensor, 1), max(s.Pipeline, 1),
			kt.BytesPerToken))
	}
	return out
}

// kvBytesWarning compares an explicit KV size given with the derived one: "" when they are
// within KVBytesMismatch of each other (or derived is not positive), else the start of the
// warning, e.g. "131072 bytes a token is 2 times" or "1 byte a token is 1/65536 of".
func kvBytesWarning(given, derived int64) string {
	if derived <= 0 {
		return ""
	}
	r := float64(given) / float64(derived)
	if r <= KVBytesMismatch && r >= 1/KVBytesMismatch {
		return ""
	}
	bytes := "bytes"
	if given == 1 {
		bytes = "byte"
	}
	if r > 1 {
		return fmt.Sprintf("%d %s a token is %s times", given, bytes, fmtRatio(r))
	}
	return fmt.Sprintf("%d %s a token is 1/%s of", given, bytes, fmtRatio(1/r))
}

// fmtRatio renders a ratio above 1 with three significant digits, a large one without an
// exponent (65536, not 6.55e+04).
func fmtRatio(r float64) string {
	if r >= 100 {
		return strconv.FormatFloat(r, 'f', 0, 64)
	}
	return strconv.FormatFloat(r, 'g', 3, 64)
}
