package nodestate

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestPure holds the package to what it promises: no I/O, no clock, no
// lock, no goroutine. It reads the package's own source.
func TestPure(t *testing.T) {
	banned := map[string]bool{"os": true, "io": true, "net": true, "net/http": true, "sync": true,
		"sync/atomic": true, "context": true, "math/rand": true, "math/rand/v2": true, "log": true}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		for _, imp := range f.Imports {
			if path, _ := strconv.Unquote(imp.Path.Value); banned[path] {
				t.Errorf("%s imports %s", name, path)
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.GoStmt:
				t.Errorf("%s: a goroutine at %s", name, fset.Position(n.Pos()))
			case *ast.SelectorExpr:
				if id, ok := n.X.(*ast.Ident); ok && id.Name == "time" && (n.Sel.Name == "Now" || n.Sel.Name == "Since" ||
					n.Sel.Name == "Sleep" || n.Sel.Name == "After" || n.Sel.Name == "NewTimer" || n.Sel.Name == "Until") {
					t.Errorf("%s: time.%s at %s: the time comes in with each step", name, n.Sel.Name, fset.Position(n.Pos()))
				}
			}
			return true
		})
	}
	if checked == 0 {
		t.Fatal("no source file checked")
	}
}
