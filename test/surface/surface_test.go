// Package surface checks the shape of the code base itself: no production
// function over 80 lines, few exported names that nothing outside their
// package uses, and internal/config a leaf that imports no domain package.
// The counts are logged, so `go test ./test/surface -v` is how issue 26's
// figures were taken.
package surface

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/herald-dev/herald"

// maxFuncLines is the longest production function allowed.
const maxFuncLines = 80

// maxUnusedShare is the largest share of exported names that no other
// package uses.
const maxUnusedShare = 0.15

// pkg is one directory of Go files, parsed.
type pkg struct {
	path  string // import path
	prod  []*ast.File
	tests []*ast.File // _test.go files of the package and of its _test package
}

func root(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// load parses every package under cmd/, internal/, bench/ and test/.
func load(t *testing.T) (*token.FileSet, map[string]*pkg) {
	t.Helper()
	base := root(t)
	fset := token.NewFileSet()
	pkgs := map[string]*pkg{}
	for _, top := range []string{"cmd", "internal", "bench", "test"} {
		err := filepath.WalkDir(filepath.Join(base, top), func(p string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			if d.IsDir() || !strings.HasSuffix(p, ".go") {
				return nil
			}
			f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(base, filepath.Dir(p))
			ip := module + "/" + filepath.ToSlash(rel)
			k := pkgs[ip]
			if k == nil {
				k = &pkg{path: ip}
				pkgs[ip] = k
			}
			if strings.HasSuffix(p, "_test.go") {
				k.tests = append(k.tests, f)
			} else {
				k.prod = append(k.prod, f)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return fset, pkgs
}

// TestNoLongProductionFunctions fails for any function or method outside
// _test.go files that is longer than maxFuncLines lines.
func TestNoLongProductionFunctions(t *testing.T) {
	fset, pkgs := load(t)
	var long []string
	for _, k := range pkgs {
		for _, f := range k.prod {
			for _, d := range f.Decls {
				fd, ok := d.(*ast.FuncDecl)
				if !ok || fd.Body == nil {
					continue
				}
				n := fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1
				if n > maxFuncLines {
					long = append(long, fset.Position(fd.Pos()).String()+" "+fd.Name.Name+" "+strconv.Itoa(n)+" lines")
				}
			}
		}
	}
	sort.Strings(long)
	for _, l := range long {
		t.Errorf("over %d lines: %s", maxFuncLines, l)
	}
}

// exported lists the exported top-level names a package's production files
// declare (functions, types, constants, variables; methods are counted
// with their types), keyed by name.
func exported(k *pkg) map[string]bool {
	names := map[string]bool{}
	for _, f := range k.prod {
		if f.Name.Name == "main" {
			return nil
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil && d.Name.IsExported() {
					names[d.Name.Name] = true
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						if s.Name.IsExported() {
							names[s.Name.Name] = true
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if n.IsExported() {
								names[n.Name] = true
							}
						}
					}
				}
			}
		}
	}
	return names
}

// uses records, for every package imported by files, the names selected
// from it (pkgname.Name).
func uses(files []*ast.File, into map[string]map[string]bool) {
	for _, f := range files {
		local := map[string]string{} // local name -> import path
		for _, im := range f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			if !strings.HasPrefix(p, module+"/") {
				continue
			}
			name := p[strings.LastIndex(p, "/")+1:]
			if im.Name != nil {
				name = im.Name.Name
			}
			local[name] = p
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			id, ok := sel.X.(*ast.Ident)
			if !ok {
				return true
			}
			if p, ok := local[id.Name]; ok {
				if into[p] == nil {
					into[p] = map[string]bool{}
				}
				into[p][sel.Sel.Name] = true
			}
			return true
		})
	}
}

// TestExportedNamesAreUsed counts the exported top-level names of every
// package under internal/ that no other package (production or test code,
// including the package's own external _test package) selects, and fails
// when they are more than maxUnusedShare of all of them. Examples
// (Example* functions) count as uses: they are the documented API.
func TestExportedNamesAreUsed(t *testing.T) {
	_, pkgs := load(t)
	used := map[string]map[string]bool{}
	for _, k := range pkgs {
		uses(k.prod, used)
		uses(k.tests, used) // an external _test package imports its own package
	}
	total, unused := 0, 0
	var report []string
	paths := make([]string, 0, len(pkgs))
	for p := range pkgs {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		if !strings.HasPrefix(p, module+"/internal/") {
			continue
		}
		names := exported(pkgs[p])
		var idle []string
		for n := range names {
			if !used[p][n] {
				idle = append(idle, n)
			}
		}
		slices.Sort(idle)
		total += len(names)
		unused += len(idle)
		if len(idle) > 0 {
			report = append(report, strings.TrimPrefix(p, module+"/")+": "+strings.Join(idle, " "))
		}
	}
	share := float64(unused) / float64(max(total, 1))
	t.Logf("exported top-level names under internal/: %d; used by no other package: %d (%.1f%%)", total, unused, 100*share)
	for _, r := range report {
		t.Log(r)
	}
	if share > maxUnusedShare {
		t.Errorf("%.1f%% of exported names are used by no other package, want at most %.0f%%: unexport them or delete them", 100*share, 100*maxUnusedShare)
	}
}

// TestConfigIsALeaf fails when internal/config imports another Herald
// package: the settings machinery must not know the components whose
// settings it parses.
func TestConfigIsALeaf(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", module+"/internal/config").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, module+"/") && dep != module+"/internal/config" {
			t.Errorf("internal/config depends on %s", dep)
		}
	}
}
