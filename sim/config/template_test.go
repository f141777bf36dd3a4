package config

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// templateBases are configs in which every sweepable numeric field can be given: both worker
// roles' variants, the load types' unions, kv_router knobs and an enabled planner.
var templateBases = []struct {
	name string
	yaml string
	sets []string
}{
	{"aggregated", seedSynthetic, nil},
	{"disaggregated", seedDisaggregated, []string{"planner={policy: enabled, target: load, load_min_observations: 3, max_num_gpus: 16, min_workers: 1, " +
		"load_adjustment_interval_seconds: 5, throughput_adjustment_interval_seconds: 10, load_scaling_down_sensitivity: 50}",
		"router={policy: kv_router, overlap_score_credit: 1.0, prefill_load_scale: 0.5, temperature: 0.0}"}},
	{"poisson", seedSynthetic, []string{"traffic.load={type: poisson, requests_per_second: 4}",
		"engine.workers.aggregated.kv_cache.capacity={type: default, memory_fraction: 0.8}", "engine.backend=sglang"}},
	{"broken", seedSynthetic, []string{"engine.workers.aggregated.scheduler.prefill_decode_interval=-5"}},
	{"sessions", seedSynthetic, append(append([]string(nil), setSession...), "traffic.load={type: constant_rate, sessions_per_second: 2}")},
}

// nodeAt returns the node at the dotted path of a parsed tree, or nil.
func nodeAt(root *yaml.Node, path string) *yaml.Node {
	n := root
	for _, k := range strings.Split(path, ".") {
		if n = MappingValue(n, k); n == nil {
			return nil
		}
	}
	return n
}

func parseWithSets(t *testing.T, text string, sets []string) *yaml.Node {
	t.Helper()
	root, errs := parseDocument([]byte(text), "t.yaml")
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if errs := applySets(root, sets, "t.yaml"); len(errs) > 0 {
		return nil // a path through a scalar (a distribution's member of an int)
	}
	return root
}

// TestTemplateMatchesDecodeNode: for every sweepable int or float field of the schema (alone, and
// with the parallelism and scheduler fields varied together), in configs where each can be given
// (and one whose constant fields break a tag, so that every instance is validated whole),
// Template.Instance gives the Config and error DecodeNode gives for the tree with those values,
// valid and invalid ones (0, negative, over a size bound, over int32, fractional for an int); a
// value the walk would refuse is left to the caller (ok false) and DecodeNode fails on it too. The
// template itself is not changed by its instances, built in a Scratch shared by every template.
func TestTemplateMatchesDecodeNode(t *testing.T) {
	values := []string{"1", "2", "7", "0", "-3", "0.5", "3.25", "1e-7", "100000", "3000000000", "1099511627776"}
	var numeric []string
	for _, f := range Fields() {
		if f.Sweep && (f.Kind == KindInt || f.Kind == KindFloat) && !strings.Contains(f.Path, "[]") {
			numeric = append(numeric, f.Path)
		}
	}
	checked, refused := 0, 0
	var sc Scratch // shared by every template, as a sweep's worker shares it between branches
	check := func(base string, sets []string, paths []string, vals []string) {
		t.Helper()
		tmplSets := slices0(sets)
		for _, p := range paths {
			tmplSets = append(tmplSets, p+"=1")
		}
		root := parseWithSets(t, base, tmplSets)
		if root == nil {
			return
		}
		want0, _ := DecodeNode(root, "t.yaml")
		tmpl, ok := NewTemplate(root, "t.yaml", paths)
		if !ok {
			return
		}
		for _, v := range vals {
			memberSets := slices0(sets)
			for _, p := range paths {
				memberSets = append(memberSets, p+"="+v)
			}
			member := parseWithSets(t, base, memberSets)
			nodes := make([]*yaml.Node, len(paths))
			for i, p := range paths {
				nodes[i] = nodeAt(member, p)
			}
			want, wantErr := DecodeNode(member, "t.yaml")
			got, gotErr, ok := tmpl.InstanceIn(&sc, valuesOf(tmpl, nodes))
			if !ok {
				refused++
				if wantErr == nil {
					t.Errorf("%v=%s: the template refused a value DecodeNode accepts", paths, v)
				}
				continue
			}
			checked++
			if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) || !reflect.DeepEqual(got, want) {
				t.Errorf("%v=%s: template gives %v, %v; DecodeNode %v, %v", paths, v, got != nil, gotErr, want != nil, wantErr)
			}
		}
		if again, _, _ := tmpl.Instance(valuesOf(tmpl, nodesAt(root, paths))); !reflect.DeepEqual(again, want0) {
			t.Errorf("%v: the template changed under its instances", paths)
		}
	}
	for _, b := range templateBases {
		for _, p := range numeric {
			check(b.yaml, b.sets, []string{p}, values)
		}
		for _, role := range []string{"aggregated", "prefill", "decode"} {
			pre := "engine.workers." + role + "."
			check(b.yaml, b.sets, []string{pre + "parallelism.replicas", pre + "parallelism.tensor", pre + "scheduler.max_sequences",
				pre + "scheduler.max_batched_tokens", pre + "kv_cache.block_size"}, values)
		}
	}
	t.Logf("%d instances checked, %d refused", checked, refused)
	if checked < 500 || refused == 0 {
		t.Errorf("%d instances checked, %d refused", checked, refused)
	}
}

func valuesOf(t *Template, nodes []*yaml.Node) []Value {
	out := make([]Value, len(nodes))
	for i, n := range nodes {
		out[i] = t.Value(i, n)
	}
	return out
}

func slices0(s []string) []string { return append([]string(nil), s...) }

func nodesAt(root *yaml.Node, paths []string) []*yaml.Node {
	out := make([]*yaml.Node, len(paths))
	for i, p := range paths {
		out[i] = nodeAt(root, p)
	}
	return out
}

// TestTemplateRefuses: NewTemplate refuses what Instance could not give exactly: a field inside a
// distribution (the defaults step reads it), a path the tree does not give, a string field, and a
// tree the walk rejects.
func TestTemplateRefuses(t *testing.T) {
	root := parseWithSets(t, seedSynthetic, []string{"traffic.source.input_tokens={distribution: normal, mean: 100, stddev: 10}"})
	for _, paths := range [][]string{{"traffic.source.input_tokens.mean"}, {"engine.workers.prefill.parallelism.tensor"},
		{"engine.model"}, {"engine.workers.aggregated.parallelism"}} {
		if _, ok := NewTemplate(root, "t.yaml", paths); ok {
			t.Errorf("%v: template accepted", paths)
		}
	}
	if _, ok := NewTemplate(root, "t.yaml", []string{"engine.workers.aggregated.parallelism.replicas"}); !ok {
		t.Error("replicas refused")
	}
	bad := parseWithSets(t, seedSynthetic, []string{"engine.workers.aggregated.parallelism.tensor=two"})
	if _, ok := NewTemplate(bad, "t.yaml", []string{"engine.workers.aggregated.parallelism.replicas"}); ok {
		t.Error("a tree the walk rejects makes a template")
	}
}
