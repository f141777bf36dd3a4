package grid

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/servesweep/servesweep/results"
	"github.com/servesweep/servesweep/sim/timing"
	"github.com/servesweep/servesweep/sim/timing/opdb"
)

// shardSets give base a grid of 3 × 4 × 5 = 60 points.
var shardSets = []string{
	"engine.workers.aggregated.parallelism.replicas={choices: [1, 2, 4]}",
	"engine.workers.aggregated.parallelism.tensor={choices: [1, 2, 4, 8]}",
	"traffic.load.concurrency={range: {min: 4, max: 20, step: 4}}",
}

func TestShardsCoverEveryPointOnce(t *testing.T) {
	x := expand(t, base, shardSets...)
	if len(x.Points) != 60 {
		t.Fatalf("%d points, want 60", len(x.Points))
	}
	for n := 1; n <= 7; n++ {
		seen := map[string]int{}
		sizes := x.ShardSizes(n)
		nonEmpty := 0
		for i := range n {
			pts := x.ShardPoints(Shard{Index: i, Count: n})
			if len(pts) != sizes[i] {
				t.Errorf("N=%d shard %d: %d points, ShardSizes says %d", n, i, len(pts), sizes[i])
			}
			if len(pts) > 0 {
				nonEmpty++
			}
			for k, p := range pts {
				seen[p.ID]++
				if k > 0 && p.Index <= pts[k-1].Index {
					t.Errorf("N=%d shard %d: points out of order", n, i)
				}
			}
		}
		for _, p := range x.Points {
			if seen[p.ID] != 1 {
				t.Errorf("N=%d: point %s is in %d shards, want exactly 1", n, p.ID, seen[p.ID])
			}
		}
		if len(seen) != len(x.Points) {
			t.Errorf("N=%d: the shards hold %d distinct points, the sweep %d", n, len(seen), len(x.Points))
		}
		// 60 points hashed into at most 7 shards: every shard gets some.
		if nonEmpty != n {
			t.Errorf("N=%d: only %d shards have points (sizes %v)", n, nonEmpty, sizes)
		}
	}
}

// TestShardAssignmentIgnoresSpecOrder reorders the domains' values (and so the point order):
// every point stays in its shard, while the spec hash, which covers the point order, changes.
func TestShardAssignmentIgnoresSpecOrder(t *testing.T) {
	a := expand(t, base, shardSets...)
	b := expand(t, base,
		"traffic.load.concurrency={choices: [20, 16, 12, 8, 4]}",
		"engine.workers.aggregated.parallelism.tensor={choices: [8, 4, 2, 1]}",
		"engine.workers.aggregated.parallelism.replicas={choices: [4, 2, 1]}")
	for n := 1; n <= 7; n++ {
		assign := func(x *Expansion) map[string]int {
			m := map[string]int{}
			for i := range n {
				for _, p := range x.ShardPoints(Shard{Index: i, Count: n}) {
					m[p.ID] = i
				}
			}
			return m
		}
		if !maps.Equal(assign(a), assign(b)) {
			t.Errorf("N=%d: reordering the spec moved points between shards", n)
		}
	}
	if slices.EqualFunc(a.Points, b.Points, func(p, q Point) bool { return p.ID == q.ID }) {
		t.Fatal("the reordered spec should enumerate the points in another order")
	}
	if a.SpecHash() == b.SpecHash() {
		t.Error("the spec hash should cover the point order")
	}
}

func TestSpecHash(t *testing.T) {
	h := expand(t, base, shardSets...).SpecHash()
	if len(h) != 16 || strings.Trim(h, "0123456789abcdef") != "" {
		t.Fatalf("spec hash %q is not 16 hex digits", h)
	}
	// Same spec, another file name and worker count: same hash.
	s, err := Parse([]byte(base), "/spec/sweep.yaml", append(slices.Clone(shardSets), "optimizer.parallelism=7"), nil, results.CheckMetric)
	if err != nil {
		t.Fatal(err)
	}
	x, err := s.Expand()
	if err != nil {
		t.Fatal(err)
	}
	if x.SpecHash() != h {
		t.Error("the file name or the worker count changed the spec hash")
	}
	// min_candidate_gpus 1 bounds nothing (every point has a GPU): the same hash as unset.
	if expand(t, base, append(slices.Clone(shardSets), "optimization.constraints.min_candidate_gpus=1")...).SpecHash() != h {
		t.Error("an explicit min_candidate_gpus 1 changed the spec hash")
	}
	for name, set := range map[string]string{
		"a point":      "traffic.stop.requests=11",
		"an objective": "optimization.objectives=[{metric: p99_ttft_ms, direction: minimize}]",
		"the target":   "optimization.target=throughput",
		"the budget":   "optimization.constraints.max_candidate_gpus=16",
	} {
		if expand(t, base, append(slices.Clone(shardSets), set)...).SpecHash() == h {
			t.Errorf("changing %s (%s) kept the spec hash", name, set)
		}
	}
	// The capacity search and the prices change the rows: each of their settings is in the hash.
	capSets := append(slices.Clone(shardSets[:2]), "evaluation.sla={ttft_ms: 500}", "optimization.capacity_search={}",
		"optimization.cost={gpu_hour_usd: {h200_sxm: 3}}")
	hc := expand(t, base, capSets...).SpecHash()
	for name, set := range map[string]string{
		"the attainment": "optimization.capacity_search.attainment=0.9",
		"the max load":   "optimization.capacity_search.max=100",
		"the tolerance":  "optimization.capacity_search.relative_tolerance=0.1",
		"the max probes": "optimization.capacity_search.max_probes=4",
		"a price":        "optimization.cost.gpu_hour_usd.h200_sxm=4",
	} {
		if expand(t, base, append(slices.Clone(capSets), set)...).SpecHash() == hc {
			t.Errorf("changing %s (%s) kept the spec hash", name, set)
		}
	}
	// A price for hardware no point runs on changes no row: a price list shared between specs
	// keeps the hash (and a resume), the identity's lines too.
	shared := append(slices.Clone(capSets), "optimization.cost.gpu_hour_usd.b200_sxm=6")
	xs := expand(t, base, shared...)
	if xs.SpecHash() != hc || !slices.Equal(xs.SpecIdentity(), expand(t, base, capSets...).SpecIdentity()) {
		t.Error("a price for hardware no point runs on changed the spec hash or identity")
	}
	if !slices.Contains(xs.SpecIdentity(), "gpu_hour_usd h200_sxm 3") {
		t.Errorf("the identity lacks the points' price: %q", xs.SpecIdentity())
	}
}

// The analysis settings a spec identity records read back (results.IdentitySettings) as
// settings that hash as the spec's own, so that a directory without sweep.json can be compared
// under its journal's settings.
func TestIdentitySettingsReadBack(t *testing.T) {
	for _, sets := range [][]string{
		nil,
		{"optimization.objectives=[{metric: p99_ttft_ms, direction: minimize}, {metric: output_throughput_tok_s, direction: maximize}]",
			"optimization.constraints={max_candidate_gpus: 16}", "optimization.strict_sla=true"},
		{"optimization.target=min_gpus", "optimization.constraints.min_goodput_rps=2.5"},
	} {
		x := expand(t, withSLA, sets...)
		s, ok := results.IdentitySettings(x.SpecIdentity())
		if !ok || x.SpecHashWith(s) != x.SpecHash() {
			t.Errorf("%q: read back %+v (ok %t), whose hash is not the spec's", sets, s, ok)
		}
	}
	if _, ok := results.IdentitySettings([]string{"points 3 aaaa"}); ok {
		t.Error("an identity without settings read back")
	}
}

func TestParseShard(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Shard
		err  string
	}{
		{in: "0/1", want: Shard{0, 1}},
		{in: "3/4", want: Shard{3, 4}},
		{in: " 2 / 5 ", want: Shard{2, 5}},
		{in: "99998/99999", want: Shard{99998, 99999}},
		{in: "4/4", err: "the shard index must be < the shard count 4 (shards are numbered 0 to 3), got 4"},
		{in: "0/0", err: "the shard count must be >= 1, got 0"},
		{in: "0/-3", err: "the shard count must be >= 1"},
		{in: "-1/3", err: "the shard index must be >= 0, got -1"},
		{in: "0/100000", err: "the shard count must be <= 99999"},
		{in: "1", err: "want I/N"},
		{in: "", err: "want I/N"},
		{in: "a/2", err: "I a whole number"},
		{in: "1/b", err: "N a whole number"},
		{in: "1/2/3", err: "N a whole number"},
	} {
		got, err := ParseShard(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseShard(%q) = %v, %v; want error %q", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want || got.String() != strings.ReplaceAll(strings.TrimSpace(tc.in), " ", "") {
			t.Errorf("ParseShard(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

func TestShardOfIsStable(t *testing.T) {
	// The assignment is part of the on-disk contract (a rerun of a shard must pick the same
	// points as the first run, whatever the servesweep build): pin values, computed
	// independently as int.from_bytes(sha256(b"servesweep shard v1\n" + id)[:8], "big") % N.
	for _, tc := range []struct {
		id        string
		n4, n7, k int
	}{{"0123456789ab", 1, 3, 173}, {"fedcba987654", 2, 3, 466}, {"a1b2c3d4e5f6", 3, 4, 195}} {
		if a, b, c := ShardOf(tc.id, 4), ShardOf(tc.id, 7), ShardOf(tc.id, 1000); a != tc.n4 || b != tc.n7 || c != tc.k {
			t.Errorf("ShardOf(%s, 4/7/1000) = %d/%d/%d, want %d/%d/%d", tc.id, a, b, c, tc.n4, tc.n7, tc.k)
		}
	}
	if ShardOf("anything", 1) != 0 || ShardOf("anything", 0) != 0 {
		t.Error("one shard (or a bad count) must give shard 0")
	}
}

// The performance database in effect is part of the spec hash (rows priced with and without it
// never mix on resume); without one the hash is what it always was. One folder opened twice, by
// a relative and an absolute path, is one database: the hash records its absolute path.
func TestSpecHashNamesTheDatabase(t *testing.T) {
	folder := func() string {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "h200_sxm.yaml"), []byte("data_dir: data/h200_sxm\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	one, other := folder(), folder()
	h := expand(t, base, shardSets...).SpecHash()
	h1 := expandWith(t, openSystems(t, one), base, shardSets...).SpecHash()
	h2 := expandWith(t, openSystems(t, other), base, shardSets...).SpecHash()
	if h1 == h || h2 == h || h1 == h2 {
		t.Errorf("spec hashes without a database, with one, with another: %s %s %s", h, h1, h2)
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(wd, one)
	if err != nil {
		t.Fatal(err)
	}
	if hr := expandWith(t, openSystems(t, rel), base, shardSets...).SpecHash(); hr != h1 {
		t.Errorf("the folder by its relative path %s hashes %s, by its absolute path %s", rel, hr, h1)
	}
	// The hash's text for a database is "systems_dir <absolute path>", as when the environment
	// named the folder: a sweep's parts and journals keep their hashes.
	if got := openSystems(t, rel).Identity(); got != one {
		t.Errorf("Identity of %s = %s, want %s", rel, got, one)
	}
}

// Expand says once why points with forward_model auto fall back to the roofline when auto is
// op_level: an A100 point when the database has no A100 tables; the H200 point needs no note. As
// shipped, auto is the roofline (timing.AutoForwardModel) and nothing falls back.
func TestExpandNamesTimingFallbacks(t *testing.T) {
	const systems = "../../shared/data/aic-systems"
	if _, err := os.Stat(filepath.Join(systems, "h200_sxm.yaml")); err != nil {
		t.Skipf("performance database not available at %s: %v", systems, err)
	}
	x := expandWith(t, openSystems(t, systems), base, "engine.workers.aggregated.timing={type: default}", "engine.hardware={choices: [a100_sxm, h200_sxm]}",
		"traffic.load.concurrency={choices: [2, 4]}")
	if timing.AutoForwardModel == "roofline" {
		if len(x.Points) != 4 || len(x.TimingNotes) != 0 {
			t.Errorf("%d points, notes %q; want 4 and none", len(x.Points), x.TimingNotes)
		}
		return
	}
	if len(x.Points) != 4 || len(x.TimingNotes) != 1 || !strings.Contains(x.TimingNotes[0], "no GPU for gpu a100_sxm") {
		t.Errorf("%d points, notes %q", len(x.Points), x.TimingNotes)
	}
}

// openSystems opens the performance database in dir, failing the test when it cannot.
func openSystems(t *testing.T, dir string) *opdb.DB {
	t.Helper()
	db, err := opdb.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return db
}
