package config

// Values of the kv_router knobs when the YAML leaves them unset (dynosim-spec.md §3.3):
// overlap_score_credit 1.0, prefill_load_scale 1.0, temperature 0.0 (deterministic choice).
const (
	DefaultOverlapScoreCredit = 1.0
	DefaultPrefillLoadScale   = 1.0
	DefaultTemperature        = 0.0
)

// KVRouterKnobs are the kv_router knobs a run uses: the configured values, defaults filled in.
type KVRouterKnobs struct {
	// OverlapScoreCredit weighs cached prefix blocks against load (>= 0).
	OverlapScoreCredit float64
	// PrefillLoadScale weighs queued prefill tokens (>= 0).
	PrefillLoadScale float64
	// Temperature of the softmin over worker costs (>= 0; 0 picks the cheapest).
	Temperature float64
}

// Knobs returns the kv_router knobs in effect: each configured value, or its default.
func (r *Router) Knobs() KVRouterKnobs {
	or := func(p *float64, def float64) float64 {
		if p == nil {
			return def
		}
		return *p
	}
	return KVRouterKnobs{
		OverlapScoreCredit: or(r.OverlapScoreCredit, DefaultOverlapScoreCredit),
		PrefillLoadScale:   or(r.PrefillLoadScale, DefaultPrefillLoadScale),
		Temperature:        or(r.Temperature, DefaultTemperature),
	}
}
