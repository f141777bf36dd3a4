package main

import (
	"bufio"
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The tests of this file keep the module's shape: which top-level folders exist, which package
// may import which, and what no non-test file holds (exported package-level variables, functions
// longer than maxFuncLines, commands' run functions longer than maxRunLines). They read the
// module from ../.. (the repository root).

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
// .ci, and the module files: the entries git tracks (what is ignored, such as a built binary,
// is no part of the tree). It skips the test outside a git checkout.
func TestTopLevel(t *testing.T) {
	gitCmd, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not on PATH: cannot list the tracked files")
	}
	cmd := exec.Command(gitCmd, "ls-files", "--cached", "--others", "--exclude-standard")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Skipf("git ls-files: %v (not a git checkout?)", err)
	}
	allowed := []string{".ci", "docs", "cmd", "examples", "grid", "results", "sim", "sweep",
		"go.mod", "go.sum", "Makefile", "README.md", ".gitignore"}
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		top, _, _ := strings.Cut(line, "/")
		if !seen[top] && !slices.Contains(allowed, top) {
			t.Errorf("top level holds %s; only %v belong there", top, allowed)
		}
		seen[top] = true
	}
	if !seen["sim"] || !seen["go.mod"] {
		t.Errorf("git ls-files lists no sim or go.mod: %v", seen)
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

// moduleFiles parses every non-test Go file of the module (testdata folders left out) and
// returns them by path relative to the repository root.
func moduleFiles(t *testing.T) (*token.FileSet, map[string]*ast.File) {
	t.Helper()
	fset := token.NewFileSet()
	files := map[string]*ast.File{}
	err := filepath.WalkDir("../..", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != "../.." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel("../..", p)
		files[filepath.ToSlash(rel)] = f
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 50 {
		t.Fatalf("found %d Go files under ../..", len(files))
	}
	return fset, files
}

// exportedVars lists the exported package-level variables of f as "name (line N)".
func exportedVars(fset *token.FileSet, f *ast.File) []string {
	var out []string
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.VAR {
			continue
		}
		for _, spec := range g.Specs {
			for _, n := range spec.(*ast.ValueSpec).Names {
				if n.IsExported() {
					out = append(out, fmt.Sprintf("%s (line %d)", n.Name, fset.Position(n.Pos()).Line))
				}
			}
		}
	}
	return out
}

// TestExportedVarsFound holds exportedVars to a file that has one among unexported ones.
func TestExportedVarsFound(t *testing.T) {
	const src = "package p\n\nvar hidden = 1\n\nvar (\n\tLimit = 2\n\tother int\n)\n\nconst Exported = 3\n\nfunc F() { var Local = 4; _ = Local }\n"
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := exportedVars(fset, f); !slices.Equal(got, []string{"Limit (line 6)"}) {
		t.Errorf("exportedVars = %q, want [Limit (line 6)]", got)
	}
}

// TestNoExportedVars: no non-test file declares an exported package-level variable. Another
// package could change it for every run of the process (a setting travels as a value, an option
// or a function's result instead); a sentinel error is a constant of an error type
// (sim.ErrNoSystems) or a field of the error (results.ManifestError.IsDir).
func TestNoExportedVars(t *testing.T) {
	fset, files := moduleFiles(t)
	for _, p := range slices.Sorted(maps.Keys(files)) {
		for _, v := range exportedVars(fset, files[p]) {
			t.Errorf("%s: exported package-level variable %s", p, v)
		}
	}
}

// maxFuncLines bounds a function of a non-test file, in lines from its func keyword to its
// closing brace (its doc comment aside): a longer one hides its seams. maxRunLines bounds a
// command's run function in this package (runSweep, runReport, ...): a command parses, calls a
// library function and renders.
const (
	maxFuncLines = 120
	maxRunLines  = 60
)

// funcLengths returns the functions of f (declarations, methods included, named by receiver
// type and name) with their lengths in lines, from the func keyword to the closing brace.
func funcLengths(fset *token.FileSet, f *ast.File) map[string]int {
	out := map[string]int{}
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body == nil {
			continue
		}
		name := fd.Name.Name
		if fd.Recv != nil && len(fd.Recv.List) == 1 {
			t := fd.Recv.List[0].Type
			if st, ok := t.(*ast.StarExpr); ok {
				t = st.X
			}
			if id, ok := t.(*ast.Ident); ok {
				name = id.Name + "." + name
			}
		}
		out[name] = fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1
	}
	return out
}

// TestFuncLengthsMeasured holds funcLengths to a file of hand-counted functions.
func TestFuncLengthsMeasured(t *testing.T) {
	const src = "package p\n\n// F is one line.\nfunc F() {}\n\ntype T struct{}\n\nfunc (t *T) M() int {\n\tx := 1\n\treturn x\n}\n"
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := funcLengths(fset, f), map[string]int{"F": 1, "T.M": 4}; !maps.Equal(got, want) {
		t.Errorf("funcLengths = %v, want %v", got, want)
	}
}

// TestFunctionLengths: no function of a non-test file is longer than maxFuncLines, and no run
// function of the commands longer than maxRunLines.
func TestFunctionLengths(t *testing.T) {
	fset, files := moduleFiles(t)
	for _, p := range slices.Sorted(maps.Keys(files)) {
		lengths := funcLengths(fset, files[p])
		for _, name := range slices.Sorted(maps.Keys(lengths)) {
			n := lengths[name]
			if n > maxFuncLines {
				t.Errorf("%s: %s is %d lines, more than %d; split it along its seams", p, name, n, maxFuncLines)
			}
			if path.Dir(p) == "cmd/servesweep" && strings.HasPrefix(name, "run") && n > maxRunLines {
				t.Errorf("%s: %s is %d lines, more than %d: a command's run function parses, calls a library and renders", p, name, n, maxRunLines)
			}
		}
	}
}
