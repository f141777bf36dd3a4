package grid

import (
	"slices"
	"strings"

	"github.com/servesweep/servesweep/sim/config"
	"gopkg.in/yaml.v3"
)

// Messages of ConcreteMarker (dynosim-spec.md §3: predict rejects every search domain, preset and
// `auto`; §3.7: optimization and optimizer are recommend-only).
const (
	msgDomain = "search domains ({choices: ...}, {range: ...}) belong to servesweep sweep; " +
		"predict, export and validate --aiperf need a concrete value"
	msgPreset = "presets belong to servesweep sweep; predict, export and validate --aiperf need concrete values"
	msgAuto   = "auto is only valid in servesweep sweep; predict, export and validate --aiperf need a concrete value"
	msgOptSec = " belongs to servesweep sweep; predict, export and validate --aiperf take one concrete config"
	// msgAutoHardware is the one message for hardware: auto, which neither predict nor sweep
	// resolves (the reference's recommend picks hardware; servesweep searches named GPUs).
	msgAutoHardware = "hardware: auto is not supported; name the GPU, e.g. h200_sxm (a sweep searches GPUs with {choices: [h100_sxm, h200_sxm]})"
)

// kvCapacityFraction is the recommend-only load type of dynosim-spec.md §3.1.2.
const kvCapacityFraction = "kv_capacity_fraction"

// ConcreteMarker is the config.Marker of a concrete prediction config: `servesweep predict`
// decodes with it (config.WithMarker(grid.ConcreteMarker)), and so does Expand for every point,
// so that a point decodes exactly as predict decodes it. It names the constructs of a sweep spec
// that a concrete config may not hold:
//
//   - a search domain ({choices: ...} or {range: ...}) where a value is expected;
//   - the string auto where a value is expected (where auto is a field's own word, such as
//     kv_cache.bytes_per_token, config never asks; where it is one of the field's values, such as
//     timing.forward_model, it is that value);
//   - the load type kv_capacity_fraction;
//   - a preset key, and the optimization and optimizer sections at the top level.
func ConcreteMarker(path string, n *yaml.Node, unknown bool) string {
	if unknown {
		switch {
		case path == "optimization" || path == "optimizer":
			return path + msgOptSec
		case path == "preset" || strings.HasSuffix(path, ".preset"):
			return msgPreset
		}
		return ""
	}
	switch {
	case n == nil:
	case isDomain(n):
		return msgDomain
	case isStr(n, "auto") && (path == "engine.hardware" || strings.HasSuffix(path, ".hardware")):
		return msgAutoHardware
	case isStr(n, "auto") && !ownsAuto(path):
		return msgAuto
	case path == "traffic.load.type" && isStr(n, kvCapacityFraction):
		f, _ := config.Lookup(path)
		return kvCapacityFraction + " is only valid in servesweep sweep; predict needs one of " + strings.Join(f.Enum, ", ")
	}
	return ""
}

// ownsAuto reports whether auto is one of the field's own values (timing.forward_model), as
// opposed to the sweep's marker.
func ownsAuto(path string) bool {
	f, ok := config.Lookup(path)
	return ok && slices.Contains(f.Enum, "auto")
}

// isStr reports whether n is the YAML string s.
func isStr(n *yaml.Node, s string) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!str" && n.Value == s
}
