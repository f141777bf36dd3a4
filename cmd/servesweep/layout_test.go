package main

import (
	"bufio"
	"bytes"
	"maps"
	"os"
	"os/exec"
	"path"
	"slices"
	"strings"
	"testing"
)

// The tests of this file keep the module's shape: which top-level folders exist and which
// package may import which. They read the module from ../.. (the repository root).

const modulePath = "github.com/servesweep/servesweep"

// moduleImports returns each package of the module (its path inside the module, "" for none)
// with the module packages its non-test files import, from `go list`. It skips the test when
// the go command is not on PATH.
func moduleImports(t *testing.T) map[string][]string {
	t.Helper()
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not on PATH: cannot list the module's packages")
	}
	cmd := exec.Command(goCmd, "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "./...")
	cmd.Dir = "../.."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list ./...: %v\n%s", err, stderr.String())
	}
	pkgs := map[string][]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		rel, ok := inModule(fields[0])
		if !ok {
			t.Fatalf("go list ./... printed %q, outside module %s", fields[0], modulePath)
		}
		pkgs[rel] = []string{}
		for _, imp := range fields[1:] {
			if r, ok := inModule(imp); ok {
				pkgs[rel] = append(pkgs[rel], r)
			}
		}
	}
	return pkgs
}

// inModule returns p's path inside the module (ok false for a package of another module).
func inModule(p string) (rel string, ok bool) {
	if p == modulePath {
		return "", true
	}
	rel, ok = strings.CutPrefix(p, modulePath+"/")
	return rel, ok
}

// layer names the layer of the module package rel and ranks it: the direction is
// cmd → sweep → grid, results → sim → sim/*, with examples (embedded configs, no module imports)
// beside sim/*. ok is false for a package outside every layer.
func layer(rel string) (name string, rank int, ok bool) {
	top, _, _ := strings.Cut(rel, "/")
	switch {
	case top == "cmd":
		return "cmd", 4, true
	case top == "sweep":
		return "sweep", 3, true
	case top == "grid", top == "results":
		return top, 2, true
	case rel == "sim":
		return "sim", 1, true
	case top == "sim":
		return "sim/*", 0, true
	case top == "examples":
		return "examples", 0, true
	}
	return "", 0, false
}

// mayImport reports whether module package from may import module package to: within one
// layer, or downwards. The one exception: sim/calibrate and its subpackages (aiperf), clients of
// the simulator that validate it against measured deployments, may import sim.
func mayImport(from, to string) bool {
	fromLayer, fromRank, ok1 := layer(from)
	toLayer, toRank, ok2 := layer(to)
	switch {
	case !ok1 || !ok2:
		return false
	case fromLayer == toLayer:
		return true
	case to == "sim" && (from == "sim/calibrate" || strings.HasPrefix(from, "sim/calibrate/")):
		return true
	}
	return fromRank > toRank
}

// TestMayImport holds the rule itself to hand-picked edges, allowed and refused.
func TestMayImport(t *testing.T) {
	for _, tc := range []struct {
		from, to string
		want     bool
	}{
		{"cmd/servesweep", "sweep", true},
		{"cmd/servesweep", "cmd/servesweep/internal/hugepages", true},
		{"sweep", "grid", true},
		{"sweep", "results", true},
		{"sweep", "cmd/servesweep", false},
		{"grid", "results", false},
		{"results", "grid", false},
		{"grid", "sweep", false},
		{"results/export", "results", true},
		{"results", "sim", true},
		{"results", "sim/optimization", true},
		{"grid", "sim/optimization", true},
		{"sim", "sim/engine", true},
		{"sim", "grid", false},
		{"sim", "results", false},
		{"sim/engine", "sim/timing", true},
		{"sim/engine", "sim", false},
		{"sim/planner", "sim", false},
		{"sim/calibrate", "sim", true},
		{"sim/calibrate/aiperf", "sim", true},
		{"sim/calibrate", "results", false},
		{"sim/calibrated", "sim", false},
		{"examples", "sim", false},
		{"tools", "sim", false},
	} {
		if got := mayImport(tc.from, tc.to); got != tc.want {
			t.Errorf("mayImport(%s, %s) = %v, want %v", tc.from, tc.to, got, tc.want)
		}
	}
}

// TestImportDirection checks every import between the module's packages (non-test files)
// against mayImport, and that every package lies in a layer.
func TestImportDirection(t *testing.T) {
	pkgs := moduleImports(t)
	if len(pkgs) < 10 {
		t.Fatalf("go list found %d packages: %v", len(pkgs), pkgs)
	}
	for _, from := range slices.Sorted(maps.Keys(pkgs)) {
		if _, _, ok := layer(from); !ok {
			t.Errorf("package %q lies outside the layers cmd, sweep, grid, results, sim, sim/*, examples", from)
			continue
		}
		for _, to := range pkgs[from] {
			if !mayImport(from, to) {
				t.Errorf("%s imports %s against the direction cmd → sweep → grid, results → sim → sim/*", from, to)
			}
		}
	}
}

// TestTopLevel checks that the repository's top level holds only the card's folders, docs and
// .ci, and the module files.
func TestTopLevel(t *testing.T) {
	entries, err := os.ReadDir("../..")
	if err != nil {
		t.Fatal(err)
	}
	allowed := []string{".ci", "docs", "cmd", "examples", "grid", "results", "sim", "sweep",
		"go.mod", "go.sum", "Makefile", "README.md", ".gitignore"}
	for _, e := range entries {
		name := e.Name()
		if name == ".git" || name == "bin" || name == "out" { // the repository, and make's outputs (.gitignore)
			continue
		}
		if !slices.Contains(allowed, name) {
			t.Errorf("top level holds %s; only %v belong there", name, allowed)
		}
	}
}

// TestLayoutTable checks that docs/development.md's layout table has a row for every package
// of the module and for no package that is gone.
func TestLayoutTable(t *testing.T) {
	pkgs := moduleImports(t)
	doc, err := os.ReadFile("../../docs/development.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(doc), "\n## Layout\n")
	if !ok {
		t.Fatal("docs/development.md has no ## Layout section")
	}
	rows := map[string]bool{}
	for _, line := range strings.Split(table, "\n") {
		if strings.HasPrefix(line, "## ") {
			break
		}
		if cell, ok := strings.CutPrefix(line, "| `"); ok {
			name, _, _ := strings.Cut(cell, "`")
			rows[name] = true
		}
	}
	for p := range pkgs {
		if !rows[p] {
			t.Errorf("docs/development.md's layout table has no row for package %s", p)
		}
	}
	for r := range rows {
		if _, ok := pkgs[r]; !ok && r != "docs" && r != ".ci" {
			if _, err := os.Stat(path.Join("../..", r)); err != nil {
				t.Errorf("docs/development.md's layout table lists %s, which does not exist", r)
			}
		}
	}
}
