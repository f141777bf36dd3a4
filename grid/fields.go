package grid

import "github.com/servesweep/servesweep/sim/config"

// SearchField is one field a sweep spec may give a search domain, as `servesweep list fields`
// shows it.
type SearchField struct {
	// Path is the dotted YAML path, with each worker role spelled out
	// (engine.workers.decode.parallelism.tensor) and a list element as [] (write an index:
	// traffic.source.components[0].weight).
	Path string `json:"path"`
	// Want describes a valid value: "an int > 0", "one of vllm, sglang, trtllm", "a string";
	// "..., or null (not set)" for a field whose null means not set.
	Want string `json:"values"`
	// Domains lists the domain kinds the field takes: "choices" always; "range" (linear with a
	// step, or log) for a numeric field that is not an enumeration.
	Domains []string `json:"domains"`
}

// SearchFields lists the fields that may hold a domain, in schema order: the fields of
// config.Fields whose `sweep` tag is set, the ones the parser accepts a domain on (fieldFor).
func SearchFields() []SearchField {
	var out []SearchField
	for _, f := range config.Fields() {
		if !f.Sweep {
			continue
		}
		d := []string{"choices"}
		if rangeAllowed(f) {
			d = append(d, "range")
		}
		out = append(out, SearchField{Path: f.Path, Want: choiceWant(f), Domains: d})
	}
	return out
}

// rangeAllowed reports whether a range domain suits f: a number that is not an enumeration
// (a range of names or booleans means nothing; rangeValues refuses it).
func rangeAllowed(f config.Field) bool {
	return len(f.Enum) == 0 && (f.Kind == config.KindInt || f.Kind == config.KindFloat)
}
