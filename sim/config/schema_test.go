package config

import (
	"math"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// TestSchemaTagsAreConsistent checks the facts the tags of config.go state about each other:
// defaults, union variants and discriminators agree with the enums; sweepable fields are scalars
// with a range or an enum; every struct of the schema is reached once per path.
func TestSchemaTagsAreConsistent(t *testing.T) {
	var walk func(s *structSchema, path string)
	seen := 0
	walk = func(s *structSchema, path string) {
		keys := map[string]bool{}
		for _, f := range append(slices.Clone(s.fields), s.refused...) {
			p := join(path, f.key)
			if keys[f.key] {
				t.Errorf("%s: key defined twice", p)
			}
			keys[f.key] = true
			seen++
			if f.hasDef && f.enum != nil && !slices.Contains(f.enum, f.def) {
				t.Errorf("%s: default %q is not in its enum %v", p, f.def, f.enum)
			}
			if f.variants != nil {
				if s.disc == nil {
					t.Errorf("%s: union tag outside a tagged union", p)
				}
				for _, v := range f.variants {
					if s.disc != nil && !slices.Contains(s.disc.enum, v) {
						t.Errorf("%s: variant %q is not a value of %s", p, v, s.disc.key)
					}
				}
			}
			if f.sweep && (f.kind == kindStruct || f.kind == kindList || f.kind == kindBool ||
				(f.kind != kindString && f.enum == nil && !f.hasRange())) {
				t.Errorf("%s: a sweepable field needs a string, an enum or a number with a range", p)
			}
			if f.kind == kindStruct {
				walk(f.sub, p)
			}
		}
	}
	walk(rootSchema, "")
	if seen < 100 {
		t.Errorf("the schema has %d keys; expected the whole of config.go", seen)
	}
	if len(Fields()) < 90 {
		t.Errorf("Fields lists %d fields", len(Fields()))
	}
}

func TestFieldsAndLookup(t *testing.T) {
	f, ok := Lookup("engine.workers.prefill.parallelism.tensor")
	if !ok || f.Kind != KindInt || !f.Sweep || f.Want() != "an int > 0" || f.InRange(0) || !f.InRange(1) {
		t.Errorf("tensor = %+v (want %q)", f, f.Want())
	}
	f, ok = Lookup("router.policy")
	if !ok || f.Kind != KindString || !slices.Equal(f.Enum, names(Policies())) || !f.Sweep ||
		f.Want() != "one of round_robin, kv_router, random, least_loaded" {
		t.Errorf("router.policy = %+v", f)
	}
	f, ok = Lookup("router.temperature")
	if !ok || f.Kind != KindFloat || f.Want() != "a number >= 0" || !f.InRange(0) || f.InRange(-0.5) ||
		!slices.Equal(f.Variants, []string{"kv_router"}) {
		t.Errorf("router.temperature = %+v", f)
	}
	f, ok = Lookup("traffic.source.session.shared_prefix_ratio")
	if !ok || f.Sweep || f.Want() != "a number in [0, 1]" || f.InRange(1.5) || f.InRange(math.NaN()) {
		t.Errorf("shared_prefix_ratio = %+v (want %q)", f, f.Want())
	}
	f, ok = Lookup("planner.max_num_gpus")
	if !ok || !f.InRange(-1) || f.InRange(0) || !f.InRange(8) {
		t.Errorf("max_num_gpus = %+v", f)
	}
	for _, p := range []string{"engine.workers", "engine", "nope", "engine.model.x", "engine.workers.encoder",
		"engine.workers.aggregated.model", "execution"} {
		if _, ok := Lookup(p); ok {
			t.Errorf("Lookup(%q) found a field", p)
		}
	}
	var paths []string
	for _, f := range Fields() {
		paths = append(paths, f.Path)
		if g, ok := Lookup(f.Path); !ok || g.Path != f.Path || g.Kind != f.Kind {
			t.Errorf("Lookup(%q) = %+v, %v", f.Path, g, ok)
		}
	}
	for _, want := range []string{"traffic.source.type", "engine.speculation.acceptance_rates",
		"engine.workers.decode.kv_cache.capacity.memory_fraction", "planner.kalman_r", "evaluation.sla.e2e_ms"} {
		if !slices.Contains(paths, want) {
			t.Errorf("Fields lacks %s", want)
		}
	}
}

// walkBase is minimalEngine with a traffic section whose stop a synthetic source accepts.
const walkBase = minimalEngine + "traffic:\n  stop: {requests: 5}\n"

// walkCase is one document (walkBase plus sets) and what decoding it gives: either a value
// read back by get, or exactly the errors listed.
type walkCase struct {
	name string
	sets []string
	get  func(c *Config) any
	want any
	errs []string // "path: message", in any order
}

func runWalkCases(t *testing.T, cases []walkCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Decode([]byte(walkBase), "w.yaml", tc.sets)
			if tc.errs == nil {
				if err != nil {
					t.Fatalf("unexpected error:\n%v", err)
				}
				if got := tc.get(c); !reflect.DeepEqual(got, tc.want) {
					t.Errorf("got %#v, want %#v", got, tc.want)
				}
				return
			}
			var got []string
			if es, ok := err.(Errors); ok {
				for _, e := range es {
					got = append(got, e.Path+": "+e.Msg)
					if e.File != "w.yaml" {
						t.Errorf("error %v does not name the file", e)
					}
				}
			}
			want := slices.Clone(tc.errs)
			sort.Strings(got)
			sort.Strings(want)
			if !slices.Equal(got, want) {
				t.Errorf("errors:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
			}
		})
	}
}

func ptr[T any](x T) *T { return &x }

// TestWalkerKinds: each Go kind of the schema takes exactly its YAML kind.
func TestWalkerKinds(t *testing.T) {
	const agg = "engine.workers.aggregated."
	conc := func(c *Config) any { return c.Traffic.Load.Concurrency }
	rate := func(c *Config) any { return c.Traffic.Load.RequestsPerSecond }
	poisson := func(rate string) string { return "traffic.load={type: poisson, requests_per_second: " + rate + "}" }
	runWalkCases(t, []walkCase{
		{name: "int", sets: []string{"traffic.load.concurrency=4"}, get: conc, want: 4},
		{name: "int from a string", sets: []string{`traffic.load.concurrency="4"`},
			errs: []string{`traffic.load.concurrency: must be an int, got "4" (string)`}},
		{name: "int from a float", sets: []string{"traffic.load.concurrency=4.0"},
			errs: []string{"traffic.load.concurrency: must be an int, got 4.0 (float)"}},
		{name: "int from a bool", sets: []string{"traffic.load.concurrency=true"},
			errs: []string{"traffic.load.concurrency: must be an int, got true (bool)"}},
		{name: "int from null", sets: []string{"traffic.load.concurrency="},
			errs: []string{"traffic.load.concurrency: must be an int, got null"}},
		{name: "int from a mapping", sets: []string{"traffic.load.concurrency={a: 1}"},
			errs: []string{"traffic.load.concurrency: must be an int, got a mapping"}},
		{name: "int tagged as a float", sets: []string{"traffic.load.concurrency=!!float 2"},
			errs: []string{"traffic.load.concurrency: must be an int, got 2 tagged !!float; write the number without the tag"}},
		{name: "int overflow", sets: []string{"traffic.load.concurrency=9223372036854775808"},
			errs: []string{"traffic.load.concurrency: must be an int > 0 and <= 2000000, got 9223372036854775808, which is out of range"}},
		{name: "int beyond 64 bits", sets: []string{"traffic.load.concurrency=99999999999999999999"},
			errs: []string{"traffic.load.concurrency: must be an int > 0 and <= 2000000, got 99999999999999999999, which is out of range"}},
		{name: "int range", sets: []string{"traffic.load.concurrency=-2"},
			errs: []string{"traffic.load.concurrency: must be an int > 0, got -2"}},
		{name: "int limit", sets: []string{"traffic.load.concurrency=10000001"},
			errs: []string{"traffic.load.concurrency: must be <= 2000000, got 10000001"}},
		{name: "uint", sets: []string{"traffic.load={type: poisson, requests_per_second: 1, seed: 18446744073709551615}"},
			get: func(c *Config) any { return c.Traffic.Load.Seed }, want: uint64(math.MaxUint64)},
		{name: "uint negative", sets: []string{"traffic.load={type: poisson, requests_per_second: 1, seed: -1}"},
			errs: []string{"traffic.load.seed: must be an int between 0 and 18446744073709551615, got -1"}},
		{name: "float from an int", sets: []string{poisson("2")}, get: rate, want: 2.0},
		{name: "float", sets: []string{poisson("2.5")}, get: rate, want: 2.5},
		{name: "float NaN", sets: []string{poisson(".nan")},
			errs: []string{"traffic.load.requests_per_second: must be a finite number, got .nan (float)"}},
		{name: "float Inf", sets: []string{poisson("-.inf")},
			errs: []string{"traffic.load.requests_per_second: must be a finite number, got -.inf (float)"}},
		{name: "float from a string", sets: []string{poisson(`"8"`)},
			errs: []string{`traffic.load.requests_per_second: must be a number, got "8" (string)`}},
		{name: "float range", sets: []string{poisson("0")},
			errs: []string{"traffic.load.requests_per_second: must be > 0, got 0"}},
		{name: "float limit", sets: []string{poisson("2e9")},
			errs: []string{"traffic.load.requests_per_second: must be between 1e-06 and 1e+09, got 2e+09"}},
		{name: "bool", sets: []string{agg + "kv_cache.prefix_caching=false"},
			get: func(c *Config) any { return c.Engine.Workers.Aggregated.KVCache.PrefixCaching }, want: false},
		{name: "bool yes", sets: []string{agg + "kv_cache.prefix_caching=yes"},
			errs: []string{agg + `kv_cache.prefix_caching: must be a bool (true or false), got "yes" (string)`}},
		{name: "bool on", sets: []string{agg + "kv_cache.prefix_caching=on"},
			errs: []string{agg + `kv_cache.prefix_caching: must be a bool (true or false), got "on" (string)`}},
		{name: "string", sets: []string{"engine.model='5'"}, get: func(c *Config) any { return c.Engine.Model }, want: "5"},
		{name: "string from an int", sets: []string{"engine.model=5"},
			errs: []string{"engine.model: must be a string, got 5 (int); quote it if it is meant as text"}},
		{name: "string from a list", sets: []string{"engine.model=[a]"},
			errs: []string{"engine.model: must be a string, got a list"}},
		{name: "enum", sets: []string{"engine.backend=tgi"},
			errs: []string{`engine.backend: must be one of vllm, sglang, trtllm, got "tgi"`}},
		{name: "typed enum", sets: []string{"engine.mode=agg"},
			errs: []string{`engine.mode: must be one of aggregated, disaggregated, got "agg"`}},
		{name: "word int", sets: []string{"engine.context_length=max"}, get: func(c *Config) any { return c.Engine.ContextLength }, want: 0},
		{name: "word int zero", sets: []string{"engine.context_length=0"},
			errs: []string{`engine.context_length: must be an int > 0 or "max", got 0`}},
		{name: "word int other word", sets: []string{"engine.context_length=auto"},
			errs: []string{`engine.context_length: must be an int > 0 or "max", got "auto" (string)`}},
		{name: "word string", sets: []string{"engine.precision.kv_cache=auto"},
			get: func(c *Config) any { return c.Engine.Precision }, want: Precision{}},
		{name: "word string given empty", sets: []string{`engine.precision.weights=""`},
			errs: []string{`engine.precision.weights: must be one of auto, bf16, fp8, fp4, got ""`}},
		{name: "word string null", sets: []string{"engine.precision.weights="},
			errs: []string{"engine.precision.weights: must be a string, got null; leave the key out for its default"}},
		{name: "required string null", sets: []string{"engine.model=~"},
			errs: []string{"engine.model: must be a string, got null"}},
		{name: "nullable scalar", sets: []string{"router={policy: kv_router, temperature: null}"},
			get: func(c *Config) any { return c.Router.Temperature }, want: (*float64)(nil)},
		{name: "pointer scalar", sets: []string{"router={policy: kv_router, temperature: 0.25}"},
			get: func(c *Config) any { return c.Router.Temperature }, want: ptr(0.25)},
		{name: "non-nullable pointer", sets: []string{"engine.enable_chunked_prefill="},
			errs: []string{"engine.enable_chunked_prefill: must be a bool (true or false), got null"}},
		{name: "list", sets: []string{"traffic={source: {type: trace, paths: [a.jsonl]}, stop: {}}"},
			get: func(c *Config) any { return c.Traffic.Source.Paths }, want: []string{"a.jsonl"}},
		{name: "list from a string", sets: []string{"traffic={source: {type: trace, paths: a.jsonl}, stop: {}}"},
			errs: []string{`traffic.source.paths: must be a list of strings, got "a.jsonl" (string)`}},
		{name: "list element", sets: []string{"traffic={source: {type: trace, paths: [5]}, stop: {}}"},
			errs: []string{"traffic.source.paths[0]: must be a string, got 5 (int); quote it if it is meant as text"}},
		{name: "list element range", sets: []string{"engine.speculation={kind: ngram, num_speculative_tokens: 2, acceptance_rates: [0.5, 1.5]}"},
			errs: []string{"engine.speculation.acceptance_rates[1]: must be in [0, 1], got 1.5"}},
		{name: "mapping from a scalar", sets: []string{agg + "scheduler=5"},
			errs: []string{agg + "scheduler: must be a mapping, got 5 (int)"}},
		{name: "null mapping is omitted", sets: []string{agg + "scheduler="},
			get: func(c *Config) any { return c.Engine.Workers.Aggregated.Scheduler }, want: Scheduler{MaxBatchedTokens: 8192, MaxSequences: 256, CapacityPolicy: CapacityGuaranteedNoEvict}},
		{name: "refused key", sets: []string{"engine.workers.encoder={}", agg + "backend=vllm", "execution={}"},
			errs: []string{"engine.workers.encoder: encoder workers (analytical EPD) are not supported by servesweep",
				agg + "backend: per-role overrides are not allowed; set engine.backend",
				"execution: host resource limits (execution) are not supported by servesweep predict; remove the section"}},
	})
}

// TestWalkerMappings: keys that are not strings, merge keys and duplicates, reported where they
// occur.
func TestWalkerMappings(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"engine:\n  model: a\n  model: b\n", "engine.model: duplicate key (first defined on line 2, again on line 3)"},
		{"engine:\n  <<: {model: a}\n", "engine.<<: YAML merge keys are not supported; write the fields out"},
		{"engine:\n  [a]: 1\n", "engine: mapping keys must be strings, got a list"},
	} {
		c, err := Decode([]byte(tc.src), "w.yaml", nil)
		if c != nil || err == nil || !strings.Contains(err.Error(), "w.yaml: "+tc.want) {
			t.Errorf("%q: got %v, want %q", tc.src, err, tc.want)
		}
	}
}

// TestWalkerUnions: a tagged union's type decides which keys it takes and how a key of another
// type is reported.
func TestWalkerUnions(t *testing.T) {
	const agg = "engine.workers.aggregated."
	runWalkCases(t, []walkCase{
		{name: "unknown key lists the variant's keys", sets: []string{"traffic.load={type: poisson, requests_per_second: 1, rate: 2}"},
			errs: []string{"traffic.load.rate: unknown field; valid fields: type, warmup_seconds, cooldown, requests_per_second, sessions_per_second, profile, seed"}},
		{name: "unknown type lists every key", sets: []string{"traffic.load={type: burst, rate: 2}"},
			errs: []string{"traffic.load.rate: unknown field; valid fields: type, concurrency, ramp_seconds, warmup_seconds, cooldown, requests_per_second, sessions_per_second, profile, seed, speedup",
				`traffic.load.type: must be one of concurrency, constant_rate, poisson, trace_timestamps, got "burst"`}},
		{name: "member of another type, at the union", sets: []string{"traffic.load={type: trace_timestamps, concurrency: 3}",
			"traffic.source={type: trace, paths: [t.jsonl]}", "traffic.stop={}"},
			errs: []string{"traffic.load: traffic.load.type='trace_timestamps' does not accept [concurrency]; accepted keys: type, warmup_seconds, speedup"}},
		{name: "member of another type, per field", sets: []string{agg + "kv_cache.capacity={type: fixed, blocks: 3, memory_fraction: 0.5}"},
			errs: []string{agg + "kv_cache.capacity.memory_fraction: fixed KV capacity rejects memory_fraction; blocks belongs to type fixed; memory_fraction, reserve_gib and max_tokens belong to type default"}},
		{name: "member of another type, once for the union", sets: []string{agg + "timing={type: polynomial, prefill_ms: 1, decode_ms: 1}"},
			errs: []string{agg + "timing: polynomial timing does not accept prefill_ms, decode_ms (prefill_ms and decode_ms belong to fixed timing, sequence_overhead_us to default and roofline)"}},
		{name: "router knobs", sets: []string{"router={policy: least_loaded, temperature: 0, overlap_score_credit: 1}"},
			errs: []string{"router.temperature: only valid with router.policy kv_router, got least_loaded; remove it or set router.policy to kv_router",
				"router.overlap_score_credit: only valid with router.policy kv_router, got least_loaded; remove it or set router.policy to kv_router"}},
		{name: "planner keys", sets: []string{"planner={policy: disabled, min_workers: 2}"},
			errs: []string{`planner.min_workers: only valid when planner.policy is enabled (got "disabled"); remove it`}},
		{name: "planner keys when enabled", sets: []string{"planner={policy: enabled, min_workers: -1, max_num_gpus: 0, load_predictor: ets}"},
			errs: []string{"planner.min_workers: must be >= 0, got -1", "planner.max_num_gpus: must be >= 1 or -1, got 0",
				`planner.load_predictor: must be one of constant, arima, prophet, kalman, got "ets"`}},
		{name: "roofline is its own type", sets: []string{agg + "timing.type=roofline"},
			get: func(c *Config) any { return c.Engine.Workers.Aggregated.Timing.Type }, want: TimingRoofline},
		{name: "a bad type is the only error", sets: []string{"traffic.source={type: 5, paths: [a], input_tokens: 0}"},
			errs: []string{"traffic.source.type: must be a string, got 5 (int); quote it if it is meant as text"}},
		{name: "explicit zero of an optional member", sets: []string{"traffic.load.seed=0"},
			errs: []string{"traffic.load: traffic.load.type='concurrency' does not accept [seed]; accepted keys: type, concurrency, ramp_seconds, warmup_seconds, cooldown"}},
	})
}

// TestDefaultsFollowTags decodes one document per union variant and checks that every field with
// a `default` tag that the variant accepts holds its default, and that a given value is kept.
func TestDefaultsFollowTags(t *testing.T) {
	docs := [][]string{
		{"engine.kv_transfer={}", "engine.mode=disaggregated", "engine.workers={prefill: {}, decode: {}}",
			"engine.speculation={kind: ngram, num_speculative_tokens: 1, acceptance_rates: [0.5]}"},
		{"traffic={source: {session: {}, type: synthetic-session}, load: {type: poisson, sessions_per_second: 1}, stop: {sessions: 2}}"},
		{"traffic={source: {type: trace, paths: [t.jsonl]}, load: {type: trace_timestamps}}", "planner.policy=enabled"},
	}
	checked := 0
	var given map[string]bool
	var check func(s *structSchema, v reflect.Value, path string)
	check = func(s *structSchema, v reflect.Value, path string) {
		variant := ""
		if s.disc != nil {
			variant = v.Field(s.disc.index).String()
		}
		for _, f := range s.fields {
			fv, fp := v.Field(f.index), join(path, f.key)
			switch {
			case f.kind == kindStruct && f.ptr:
				if !fv.IsNil() {
					check(f.sub, fv.Elem(), fp)
				}
			case f.kind == kindStruct:
				check(f.sub, fv, fp)
			case f.hasDef && f.accepts(variant) && !given[fp]:
				want, _ := parseScalar(f.kind, f.def)
				got := fv.Interface()
				if rv := reflect.ValueOf(want); rv.CanConvert(fv.Type()) {
					want = rv.Convert(fv.Type()).Interface()
				}
				if fp == "engine.workers.prefill.scheduler.max_sequences" {
					want = defaultPrefillMaxSequences // the role-dependent default
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%s = %v, want the default %v", fp, got, want)
				}
				checked++
			}
		}
	}
	for _, sets := range docs {
		// Steps 1 to 4 of decode, to know which paths the document gave.
		root, errs := parseDocument([]byte(minimalEngine), "d.yaml")
		if errs = append(errs, applySets(root, append([]string{"engine.workers.aggregated="}, sets...), "d.yaml")...); len(errs) > 0 {
			t.Fatal(errs)
		}
		w := &walker{file: "d.yaml", given: map[string]bool{}}
		c := &Config{}
		w.mapping(root, "", rootSchema, reflect.ValueOf(c).Elem())
		if len(w.errs) > 0 {
			t.Fatal(w.errs)
		}
		applyDefaults(c, w.given, w.isBad)
		given = w.given
		check(rootSchema, reflect.ValueOf(c).Elem(), "")
	}
	if checked < 40 {
		t.Errorf("checked %d defaults", checked)
	}
	// A given value is never replaced, not even an invalid one.
	errs := decodeErrs(t, minimalEngine, "engine.workers.aggregated.scheduler.max_batched_tokens=0", "engine.backend=5")
	if findErr(errs, "engine.workers.aggregated.scheduler.max_batched_tokens", "must be an int > 0, got 0") == nil || len(errs) != 2 {
		t.Errorf("errors = %v", errs)
	}
}

// TestValidateCollectsEveryError: one pass reports every problem of a document, walk and
// validation alike, each once.
func TestValidateCollectsEveryError(t *testing.T) {
	const agg = "engine.workers.aggregated."
	runWalkCases(t, []walkCase{{name: "all at once", sets: []string{
		"traffic.source.input_tokens=0", "traffic.load.concurrency=x", "traffic.stop={requests: 1, sessions: 2}",
		"engine.backend=tgi", "engine.context_length=0", agg + "parallelism={tensor: 0, pipeline: 70000}",
		agg + "kv_cache.capacity={type: fixed}", agg + "timing={type: fixed, prefill_ms: -1}", "engine.kv_transfer={}",
		"router.temperature=1", "evaluation.sla={ttft_ms: 0, e2e_ms: 1}", "planner.target=sla", "foo=1"},
		errs: []string{
			"foo: unknown field; valid fields: traffic, engine, router, planner, evaluation",
			`traffic.load.concurrency: must be an int, got "x" (string)`,
			"traffic.source.input_tokens: must be an int > 0, got 0",
			"traffic.stop.sessions: synthetic sources stop on requests or requests_per_load_unit, not sessions",
			`engine.backend: must be one of vllm, sglang, trtllm, got "tgi"`,
			`engine.context_length: must be an int > 0 or "max", got 0`,
			agg + "parallelism.tensor: must be an int > 0, got 0",
			agg + "parallelism.pipeline: must be <= 65536, got 70000",
			agg + "kv_cache.capacity.blocks: fixed KV capacity requires blocks",
			agg + "timing.prefill_ms: must be >= 0, got -1",
			agg + "timing: fixed timing requires prefill_ms and decode_ms",
			"engine.kv_transfer: aggregated mode rejects kv_transfer: remove it, or set engine.mode: disaggregated",
			"router.temperature: only valid with router.policy kv_router, got round_robin; remove it or set router.policy to kv_router",
			"evaluation.sla.ttft_ms: must be > 0, got 0",
			"evaluation.sla.e2e_ms: sla.e2e_ms is mutually exclusive with sla.ttft_ms/itl_ms",
			`planner.target: only valid when planner.policy is enabled (got "disabled"); remove it`,
		}}})
}

// TestMarker: Decode consults the caller's Marker for field values and unknown keys, and reports
// its message in place of its own.
func TestMarker(t *testing.T) {
	type call struct {
		path    string
		unknown bool
	}
	var calls []call
	m := func(path string, n *yaml.Node, unknown bool) string {
		calls = append(calls, call{path, unknown})
		switch {
		case unknown && strings.HasSuffix(path, ".wish"):
			return "wishes are for another reader"
		case !unknown && n.Kind == yaml.MappingNode && findKey(n, "pick") >= 0:
			return "a pick is for another reader"
		case !unknown && isString(n, "later"):
			return "later is for another reader"
		}
		return ""
	}
	const agg = "engine.workers.aggregated."
	_, err := Decode([]byte(walkBase), "m.yaml", []string{
		"traffic.load={pick: [1, 2]}", agg + "scheduler.wish=1", "engine.hardware=later",
		agg + "kv_cache.bytes_per_token=auto", "traffic.source.paths=x"}, WithMarker(m))
	want := "m.yaml (--set traffic.source.paths=x): traffic.source.paths: must be a list of strings, got \"x\" (string)\n" +
		"m.yaml (--set traffic.load={pick: [1, 2]}): traffic.load: a pick is for another reader\n" +
		"m.yaml (--set engine.hardware=later): engine.hardware: later is for another reader\n" +
		"m.yaml (--set " + agg + "scheduler.wish=1): " + agg + "scheduler.wish: wishes are for another reader"
	if err == nil || err.Error() != want {
		t.Errorf("errors:\n%v\nwant:\n%s", err, want)
	}
	has := func(c call) bool { return slices.Contains(calls, c) }
	if !has(call{agg + "scheduler.wish", true}) || !has(call{"engine.model", false}) || !has(call{"traffic.load", false}) ||
		!has(call{"traffic.source", false}) {
		t.Errorf("calls = %v", calls)
	}
	// Not consulted: a field's own word, a scalar where a list is expected, the inside of a
	// mapping it rejected.
	for _, c := range []call{{agg + "kv_cache.bytes_per_token", false}, {"traffic.source.paths", false},
		{"traffic.load.pick", true}} {
		if has(c) {
			t.Errorf("the Marker was asked about %v", c)
		}
	}
	// Without a Marker the same document has plain schema errors.
	_, err = Decode([]byte(walkBase), "m.yaml", []string{"traffic.load={pick: [1, 2]}", "engine.hardware=later"})
	if err == nil || err.Error() != "m.yaml (--set traffic.load={pick: [1, 2]}): traffic.load.pick: unknown field; valid fields: type, concurrency, ramp_seconds, warmup_seconds, cooldown" {
		t.Errorf("without a Marker: %v", err)
	}
}
