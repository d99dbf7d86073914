package surface_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/importer"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/actorlet/actorlet"

// allowedInternal lists the exported identifiers allowed to name an
// internal type, each with the reason. Keep it short: an embedder cannot
// name an internal type, so a signature with one is an API it cannot use
// fully (a parameter it cannot build, a result it cannot store in a
// field). An entry that no longer names an internal type fails the test,
// so the list only shrinks.
var allowedInternal = map[string]string{
	// Package actors is the actor tree behind package node, not an
	// embedding API: its Config is built by node.Options (which embedders,
	// and cmd/actorlet, use) and by the actors' own tests. Its place is
	// under internal/; the move waits for the rewrite of the pod and node
	// actors (issue 13) to land, so the two do not collide.
	module + "/actors.Config.Metrics": "actor tree's config, built by node.Options",
	module + "/actors.Config.Images":  "actor tree's config, built by node.Options",
	module + "/actors.Config.Spec":    "actor tree's config, built by node.Options",
	// The benchmark harness (make bench) measures the PLEG's own output,
	// the actor tree's internal protocol; it is a tool, not an API.
	module + "/bench/pipeline.Env.Batches":   "benchmark harness: counts the PLEG's batches",
	module + "/bench/relist.Baseline.Relist": "benchmark harness: the PLEG baseline's batches",
	module + "/bench/relist.Impl.New":        "benchmark harness: a PLEG implementation under test",
}

// listedPackage is what `go list -json` says of a package, in part.
type listedPackage struct {
	ImportPath string
	Name       string
	Export     string
	Standard   bool
	GoFiles    []string
	Imports    []string
	Deps       []string
	Error      *struct{ Err string }
}

// listModule returns every package of the module and its dependencies,
// compiled (export data), by import path, and the module's own import
// paths in order.
func listModule(t *testing.T) (map[string]listedPackage, []string) {
	t.Helper()
	if testing.Short() {
		t.Skip("compiles the whole module; not in -short")
	}
	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
	cmd := exec.Command(goBin, "list", "-e", "-export", "-deps", "-json=ImportPath,Name,Export,Standard,GoFiles,Imports,Deps,Error", "./...")
	cmd.Dir = "../.."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list ./...: %v\n%s", err, stderr.String())
	}
	all := map[string]listedPackage{}
	var own []string
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listedPackage
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("decode go list output: %v", err)
		}
		if p.Error != nil {
			t.Fatalf("package %s: %s", p.ImportPath, p.Error.Err)
		}
		all[p.ImportPath] = p
		if p.ImportPath == module || strings.HasPrefix(p.ImportPath, module+"/") {
			own = append(own, p.ImportPath)
		}
	}
	if len(own) == 0 {
		t.Fatal("go list found no package of " + module)
	}
	return all, own
}

// isInternal says whether a user's module cannot import path: it has an
// internal element (Go's rule, whoever's module it is in).
func isInternal(path string) bool {
	return slices.Contains(strings.Split(path, "/"), "internal")
}

// TestNoExportedInternalTypes fails when an exported function, method,
// variable, constant, field or type of a public (non-internal, non-main)
// package of the module names a type from an internal package.
func TestNoExportedInternalTypes(t *testing.T) {
	all, own := listModule(t)
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		p, ok := all[path]
		if !ok || p.Export == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(p.Export)
	})
	var found []string
	used := map[string]bool{}
	checked := 0
	for _, path := range own {
		p := all[path]
		if isInternal(path) || p.Name == "main" || len(p.GoFiles) == 0 {
			continue // not importable, or only tests
		}
		pkg, err := imp.Import(path)
		if err != nil {
			t.Fatalf("import %s: %v", path, err)
		}
		checked++
		for _, leak := range exportedLeaks(pkg) {
			if _, ok := allowedInternal[leak.where]; ok {
				used[leak.where] = true
				continue
			}
			found = append(found, fmt.Sprintf("%s names %s", leak.where, leak.typ))
		}
	}
	if checked == 0 {
		t.Fatal("no public package checked")
	}
	for _, f := range found {
		t.Error(f)
	}
	for where := range allowedInternal {
		if !used[where] {
			t.Errorf("%s is allowed to name an internal type but names none: remove it from allowedInternal", where)
		}
	}
}

// leak is one exported identifier (where) naming an internal type (typ).
type leak struct{ where, typ string }

// exportedLeaks walks pkg's exported identifiers.
func exportedLeaks(pkg *types.Package) []leak {
	var out []leak
	scope := pkg.Scope()
	for _, name := range scope.Names() {
		obj := scope.Lookup(name)
		if !obj.Exported() {
			continue
		}
		where := pkg.Path() + "." + name
		w := &walker{seen: map[types.Type]bool{}}
		switch o := obj.(type) {
		case *types.TypeName:
			if o.IsAlias() {
				w.visit(where, o.Type())
				break
			}
			named, ok := o.Type().(*types.Named)
			if !ok {
				w.visit(where, o.Type())
				break
			}
			w.typeParams(where, named.TypeParams())
			w.structure(where, named.Underlying())
			for m := range named.Methods() {
				if m.Exported() {
					w.visit(where+"."+m.Name(), m.Type())
				}
			}
		default:
			w.visit(where, obj.Type())
		}
		out = append(out, w.found...)
	}
	return out
}

// walker collects the internal named types reachable from a type through
// what a user sees of it: a named type stops the walk (its own package's
// exported names are checked on their own) unless it is internal.
type walker struct {
	seen  map[types.Type]bool
	found []leak
}

func (w *walker) visit(where string, t types.Type) {
	if t == nil || w.seen[t] {
		return
	}
	w.seen[t] = true
	switch t := t.(type) {
	case *types.Alias:
		w.visit(where, types.Unalias(t))
	case *types.Named:
		if obj := t.Obj(); obj.Pkg() != nil && isInternal(obj.Pkg().Path()) {
			w.found = append(w.found, leak{where, obj.Pkg().Path() + "." + obj.Name()})
		}
		for a := range t.TypeArgs().Types() {
			w.visit(where, a)
		}
	case *types.TypeParam:
		w.visit(where, t.Constraint())
	default:
		w.structure(where, t)
	}
}

// structure walks an unnamed type's parts a user sees.
func (w *walker) structure(where string, t types.Type) {
	switch t := t.(type) {
	case *types.Pointer:
		w.visit(where, t.Elem())
	case *types.Slice:
		w.visit(where, t.Elem())
	case *types.Array:
		w.visit(where, t.Elem())
	case *types.Chan:
		w.visit(where, t.Elem())
	case *types.Map:
		w.visit(where, t.Key())
		w.visit(where, t.Elem())
	case *types.Signature:
		w.typeParams(where, t.TypeParams())
		for v := range t.Params().Variables() {
			w.visit(where, v.Type())
		}
		for v := range t.Results().Variables() {
			w.visit(where, v.Type())
		}
	case *types.Struct:
		for f := range t.Fields() {
			if f.Exported() {
				w.visit(where+"."+f.Name(), f.Type())
			}
		}
	case *types.Interface:
		for m := range t.ExplicitMethods() {
			if m.Exported() {
				w.visit(where+"."+m.Name(), m.Type())
			}
		}
		for e := range t.EmbeddedTypes() {
			w.visit(where, e)
		}
	case *types.Union:
		for term := range t.Terms() {
			w.visit(where, term.Type())
		}
	case *types.Basic, *types.Tuple, nil:
	default:
		w.visit(where, t)
	}
}

func (w *walker) typeParams(where string, tps *types.TypeParamList) {
	for tp := range tps.TypeParams() {
		w.visit(where, tp.Constraint())
	}
}

// TestProductionNeedsNoTestSupport fails when a package outside test/
// that is not itself a test (the binary, the library, the benchmarks'
// and hack's tools) depends on test/support, which only tests use.
func TestProductionNeedsNoTestSupport(t *testing.T) {
	all, own := listModule(t)
	support := module + "/test/support/"
	allowed := []string{module + "/test/", module + "/bench/", module + "/hack/"}
	checked := 0
	for _, path := range own {
		if slices.ContainsFunc(allowed, func(prefix string) bool { return strings.HasPrefix(path, prefix) }) {
			continue
		}
		checked++
		for _, d := range all[path].Deps {
			if strings.HasPrefix(d, support) {
				t.Errorf("%s depends on %s (test only)", path, d)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no production package checked")
	}
}
