package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestRaceFreePackagesStartNoGoroutine holds the Makefile's NORACE list to what it says: make
// test runs those packages without the race detector because neither their code nor their tests
// start a goroutine (no go statement, no t.Parallel, no errgroup), so the detector would have
// nothing to watch. cmd/servesweep is listed for another reason (its tests drive the sweep pool,
// whose own package runs under -race) and is not checked. A package that starts goroutines must
// leave the list.
func TestRaceFreePackagesStartNoGoroutine(t *testing.T) {
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	mk, err := os.ReadFile(filepath.Join(repo, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^NORACE := ((?:.*\\\n)*.*)$`).FindSubmatch(mk)
	if m == nil {
		t.Fatal("the Makefile has no NORACE := line")
	}
	pkgs := strings.Fields(strings.ReplaceAll(string(m[1]), "\\\n", " "))
	if len(pkgs) < 2 {
		t.Fatalf("NORACE lists %q", pkgs)
	}
	for _, pkg := range pkgs {
		if pkg == "cmd/servesweep" {
			continue
		}
		files, err := filepath.Glob(filepath.Join(repo, pkg, "*.go"))
		if err != nil || len(files) == 0 {
			t.Errorf("NORACE names %s, which has no Go file (%v)", pkg, err)
			continue
		}
		for _, f := range files {
			if where := startsGoroutine(t, f); where != "" {
				t.Errorf("%s: %s, but the Makefile's NORACE runs %s without the race detector: take it off the list", f, where, pkg)
			}
		}
	}
}

// startsGoroutine returns where Go file path starts a goroutine (a go statement, a t.Parallel
// call, an errgroup import), or "".
func startsGoroutine(t *testing.T, path string) string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range f.Imports {
		if strings.Contains(imp.Path.Value, "errgroup") {
			return "imports errgroup"
		}
	}
	where := ""
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.GoStmt:
			where = "go statement at " + fset.Position(n.Pos()).String()
		case *ast.SelectorExpr:
			if n.Sel.Name == "Parallel" {
				where = "Parallel call at " + fset.Position(n.Pos()).String()
			}
		}
		return where == ""
	})
	return where
}
