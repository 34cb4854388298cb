package surface

import (
	"flag"
	"go/doc"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

var updateMap = flag.Bool("update", false, "rewrite the package map in docs/ARCHITECTURE.md")

// architectureDoc holds the package map, between packageMapStart and
// packageMapEnd.
const (
	architectureDoc = "docs/ARCHITECTURE.md"
	packageMapStart = "<!-- packages:start -->\n"
	packageMapEnd   = "<!-- packages:end -->"
)

// packageDocs returns, for every package under internal/ and cmd/ (by
// its directory, such as internal/alerts), the first sentence of its doc
// comment; "" for a package without one.
func packageDocs(t *testing.T) map[string]string {
	t.Helper()
	base := root(t)
	out := map[string]string{}
	fset := token.NewFileSet()
	var p doc.Package
	for _, top := range []string{"internal", "cmd"} {
		err := filepath.WalkDir(filepath.Join(base, top), func(path string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return nil
			}
			f, err := parser.ParseFile(fset, path, nil, parser.PackageClauseOnly|parser.ParseComments)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(base, filepath.Dir(path))
			rel = filepath.ToSlash(rel)
			if _, seen := out[rel]; !seen {
				out[rel] = ""
			}
			if f.Doc != nil && out[rel] == "" {
				out[rel] = p.Synopsis(f.Doc.Text())
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// packageMap renders the map: one row per package, in path order.
func packageMap(docs map[string]string) string {
	paths := make([]string, 0, len(docs))
	for p := range docs {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var b strings.Builder
	b.WriteString("| package | what it is (the first sentence of its doc comment) |\n|---|---|\n")
	for _, p := range paths {
		b.WriteString("| `" + p + "` | " + strings.ReplaceAll(docs[p], "|", `\|`) + " |\n")
	}
	return b.String()
}

// TestPackageMap keeps the package map of docs/ARCHITECTURE.md complete
// and true: every package under internal/ and cmd/ has a doc comment, and
// the map lists each with its first sentence. Run
// `go test ./test/surface -run PackageMap -update` after adding a package
// or changing a package's doc comment.
func TestPackageMap(t *testing.T) {
	docs := packageDocs(t)
	for p, d := range docs {
		if d == "" {
			t.Errorf("%s has no package doc comment: add a doc.go saying what the package is", p)
		}
	}
	path := filepath.Join(root(t), filepath.FromSlash(architectureDoc))
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	i, j := strings.Index(text, packageMapStart), strings.Index(text, packageMapEnd)
	if i < 0 || j < i {
		t.Fatalf("%s lacks the %q and %q markers", architectureDoc, packageMapStart, packageMapEnd)
	}
	want := packageMap(docs)
	if text[i+len(packageMapStart):j] == want {
		t.Logf("%d packages in the map", len(docs))
		return
	}
	if !*updateMap {
		t.Fatalf("%s's package map is out of date: run go test ./test/surface -run PackageMap -update", architectureDoc)
	}
	text = text[:i+len(packageMapStart)] + want + text[j:]
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}
