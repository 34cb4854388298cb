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

// isSettingName reports whether s looks like the name of an environment
// variable Herald reads.
func isSettingName(s string) bool {
	for _, p := range []string{"HERALD_", "TELEGRAM_", "REDIS_", "LOG_"} {
		if strings.HasPrefix(s, p) && strings.ToUpper(s) == s && !strings.ContainsAny(s, " <>") {
			return true
		}
	}
	return false
}

// TestOneSpecPerSetting fails unless every setting is declared once: its
// name is the value of exactly one constant in production code, and that
// constant is passed to exactly one config.NewSpec or config.SecretSpec
// call, which holds the setting's default and help text. The binaries
// share the specs of settings both read (such as HERALD_QUEUES' owner,
// HERALD_BOTS) by calling the declaring function, never by restating them.
func TestOneSpecPerSetting(t *testing.T) {
	_, pkgs := load(t)
	consts := map[string][]string{} // env name -> "pkg.Const" declaring it
	specCalls := map[string]int{}   // "pkg.Const" -> NewSpec/SecretSpec calls naming it
	for _, k := range pkgs {
		short := strings.TrimPrefix(k.path, module+"/")
		for _, f := range k.prod {
			local := map[string]string{} // import name -> path
			for _, im := range f.Imports {
				p, _ := strconv.Unquote(im.Path.Value)
				name := p[strings.LastIndex(p, "/")+1:]
				if im.Name != nil {
					name = im.Name.Name
				}
				local[name] = strings.TrimPrefix(p, module+"/")
			}
			ast.Inspect(f, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.GenDecl:
					if n.Tok != token.CONST {
						return true
					}
					for _, s := range n.Specs {
						vs := s.(*ast.ValueSpec)
						for i, v := range vs.Values {
							lit, ok := v.(*ast.BasicLit)
							if !ok || lit.Kind != token.STRING || i >= len(vs.Names) {
								continue
							}
							if s, _ := strconv.Unquote(lit.Value); isSettingName(s) {
								consts[s] = append(consts[s], short+"."+vs.Names[i].Name)
							}
						}
					}
				case *ast.CallExpr:
					var fn string
					switch f := n.Fun.(type) {
					case *ast.SelectorExpr:
						if id, ok := f.X.(*ast.Ident); ok && local[id.Name] == "internal/config" {
							fn = f.Sel.Name
						}
					case *ast.Ident:
						if short == "internal/config" {
							fn = f.Name
						}
					}
					if (fn != "NewSpec" && fn != "SecretSpec") || len(n.Args) == 0 {
						return true
					}
					switch a := n.Args[0].(type) {
					case *ast.Ident:
						specCalls[short+"."+a.Name]++
					case *ast.SelectorExpr:
						if id, ok := a.X.(*ast.Ident); ok && local[id.Name] != "" {
							specCalls[local[id.Name]+"."+a.Sel.Name]++
						}
					}
				}
				return true
			})
		}
	}
	names := make([]string, 0, len(consts))
	for n := range consts {
		names = append(names, n)
	}
	sort.Strings(names)
	specs := 0
	for _, env := range names {
		decl := consts[env]
		if len(decl) > 1 {
			t.Errorf("%s is declared %d times: %s", env, len(decl), strings.Join(decl, ", "))
			continue
		}
		switch n := specCalls[decl[0]]; {
		case n == 1:
			specs++
		case n > 1:
			t.Errorf("%s (%s) has %d specs; declare it once and share the spec", env, decl[0], n)
		}
	}
	for _, s := range settingsOfBinaries(t) {
		if c := consts[s]; len(c) != 1 || specCalls[c[0]] != 1 {
			t.Errorf("the setting %s has no single constant with a single spec (constants %v)", s, c)
		}
	}
	t.Logf("%d settings, each a constant with one spec", specs)
}

// settingsOfBinaries lists the settings the producer and the worker
// document, from docs/CONFIGURATION.md's generated tables.
func settingsOfBinaries(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root(t), "docs", "CONFIGURATION.md"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	seen := map[string]bool{}
	for _, line := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		env := strings.Trim(strings.SplitN(line, "|", 3)[1], " `")
		if isSettingName(env) && !seen[env] {
			seen[env] = true
			out = append(out, env)
		}
	}
	return out
}
