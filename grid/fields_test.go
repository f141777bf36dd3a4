package grid

import (
	"strings"
	"testing"

	"github.com/servesweep/servesweep/results"
	"github.com/servesweep/servesweep/sim/config"
	"gopkg.in/yaml.v3"
)

// parseErr parses the spec both with the YAML value domain written at path (a [] segment is a
// list of one mapping; a scalar field on the way becomes a {distribution: normal} mapping, the form
// whose keys a length distribution has) and returns the error text ("" when it parses).
func parseErr(t *testing.T, path, domain string) string {
	t.Helper()
	var root map[string]any
	if err := yaml.Unmarshal([]byte(both), &root); err != nil {
		t.Fatal(err)
	}
	var d any
	if err := yaml.Unmarshal([]byte(domain), &d); err != nil {
		t.Fatal(err)
	}
	m := root
	segs := strings.Split(path, ".")
	for i, seg := range segs[:len(segs)-1] {
		key, list := strings.CutSuffix(seg, "[]")
		_, scalar := config.Lookup(strings.Join(segs[:i+1], "."))
		var next map[string]any
		switch v := m[key].(type) {
		case map[string]any:
			next = v
		case []any:
			next = v[0].(map[string]any)
		default:
			next = map[string]any{}
			if scalar {
				next["distribution"] = "normal"
			}
		}
		if list {
			m[key] = []any{next}
		} else {
			m[key] = next
		}
		m = next
	}
	m[segs[len(segs)-1]] = d
	spec, err := yaml.Marshal(root)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Parse(spec, "spec.yaml", nil, nil, results.CheckMetric); err != nil {
		return err.Error()
	}
	return ""
}

// SearchFields names exactly the fields the parser accepts a domain on, and a range exactly
// where it says so: an empty choices list on a listed field is refused as empty (the domain was
// accepted there), on any other schema field as a domain where none is allowed; a range is
// refused as non-numeric exactly where "range" is not among the field's domain kinds.
func TestSearchFieldsAreWhatTheParserAccepts(t *testing.T) {
	listed := map[string]SearchField{}
	for _, f := range SearchFields() {
		listed[f.Path] = f
	}
	if len(listed) < 50 {
		t.Fatalf("SearchFields lists %d fields; the schema has more than 50 searchable ones", len(listed))
	}
	const notAllowed = "search domains are not allowed on this field"
	for _, f := range config.Fields() {
		msg := parseErr(t, f.Path, "{choices: []}")
		sf, ok := listed[f.Path]
		switch {
		case ok && strings.Contains(msg, notAllowed):
			t.Errorf("%s is listed but the parser refuses a domain there: %s", f.Path, msg)
		case ok && !strings.Contains(msg, "must not be empty"):
			t.Errorf("%s: an empty choices list gave %q, want the empty-list error", f.Path, msg)
		case !ok && !strings.Contains(msg, notAllowed):
			t.Errorf("%s is not listed but the parser does not refuse a domain there: %q", f.Path, msg)
		}
		if !ok {
			continue
		}
		rangeMsg := parseErr(t, f.Path, "{range: {min: 1, max: 2, step: 1}}")
		refused := strings.Contains(rangeMsg, "a range needs a numeric field")
		hasRange := len(sf.Domains) == 2 && sf.Domains[1] == "range"
		if refused == hasRange {
			t.Errorf("%s: domains %v, but a range gave %q", f.Path, sf.Domains, rangeMsg)
		}
	}
}

// A few fields with hand-checked descriptions.
func TestSearchFieldsFacts(t *testing.T) {
	want := map[string]SearchField{
		"engine.workers.decode.parallelism.tensor": {Want: "an int > 0", Domains: []string{"choices", "range"}},
		"router.policy": {Want: "one of round_robin, kv_router, random, least_loaded", Domains: []string{"choices"}},
		"engine.model":  {Want: "a string", Domains: []string{"choices"}},
	}
	for _, f := range SearchFields() {
		if w, ok := want[f.Path]; ok {
			if f.Want != w.Want || strings.Join(f.Domains, ",") != strings.Join(w.Domains, ",") {
				t.Errorf("%s: got %q %v, want %q %v", f.Path, f.Want, f.Domains, w.Want, w.Domains)
			}
			delete(want, f.Path)
		}
	}
	for p := range want {
		t.Errorf("%s is not listed", p)
	}
}
