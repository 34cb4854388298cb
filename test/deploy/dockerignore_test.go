package deploy

import (
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
)

// ignoreRule is one line of a .dockerignore.
type ignoreRule struct {
	pattern string
	keep    bool // a "!" exception
}

// parseDockerignore reads the rules as Docker's documentation describes
// them: comments and blank lines skipped, surrounding space trimmed, the
// pattern cleaned (filepath.Clean) with its leading "/" dropped, so every
// pattern is relative to the context's root.
func parseDockerignore(text string) []ignoreRule {
	var rules []ignoreRule
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		r := ignoreRule{}
		if strings.HasPrefix(line, "!") {
			r.keep, line = true, strings.TrimSpace(line[1:])
		}
		r.pattern = strings.TrimPrefix(path.Clean("/"+line), "/")
		rules = append(rules, r)
	}
	return rules
}

// matchSegments matches a path's segments against a pattern's: each
// segment by path.Match, and "**" for any number of segments, none
// included.
func matchSegments(pat, name []string) bool {
	if len(pat) == 0 {
		return len(name) == 0
	}
	if pat[0] == "**" {
		for i := 0; i <= len(name); i++ {
			if matchSegments(pat[1:], name[i:]) {
				return true
			}
		}
		return false
	}
	if len(name) == 0 {
		return false
	}
	ok, err := path.Match(pat[0], name[0])
	return err == nil && ok && matchSegments(pat[1:], name[1:])
}

// excluded reports whether rel (slash-separated, relative to the context)
// stays out of the context: the last rule matching it or one of its parent
// directories decides, as an excluded directory takes its content along.
func excluded(rules []ignoreRule, rel string) bool {
	segs := strings.Split(rel, "/")
	out := false
	for _, r := range rules {
		pat := strings.Split(r.pattern, "/")
		for n := 1; n <= len(segs); n++ {
			if matchSegments(pat, segs[:n]) {
				out = !r.keep
				break
			}
		}
	}
	return out
}

// TestDockerignoreKeepsBuildOutputsOut: every build output (the binaries
// `go build ./cmd/X` writes at the root or in cmd/X, bin/ and dist/, test
// binaries, profiles, coverage) and every secret stays out of the build
// context, and every file the build needs (go.mod, go.sum, each non-test Go
// file of the module) stays in. Issue 40: a 41 MB binary at the root made
// every build context 45.6 MB.
func TestDockerignoreKeepsBuildOutputsOut(t *testing.T) {
	t.Parallel()
	rules := parseDockerignore(readRepoFile(t, dockerignore))
	root := repoRoot(t)
	cmds, err := os.ReadDir(filepath.Join(root, "cmd"))
	if err != nil {
		t.Fatal(err)
	}
	out := []string{"bin/producer", "dist/herald_linux_amd64/worker", "internal/app/app.test", "deploy.test",
		"cover.out", "internal/worker/coverage.html", "cpu.prof", "internal/worker/mem.prof", "bench/bin/bench",
		".env", "secrets/herald_api_token", ".git/HEAD"}
	for _, c := range cmds {
		if c.IsDir() {
			out = append(out, c.Name(), "cmd/"+c.Name()+"/"+c.Name())
		}
	}
	for _, p := range out {
		if !excluded(rules, p) {
			t.Errorf("%s lets %s into the build context", dockerignore, p)
		}
	}
	in := []string{"go.mod", "go.sum"}
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() && d.Name() == ".git" {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".go") && !strings.HasSuffix(p, "_test.go") {
			rel, _ := filepath.Rel(root, p)
			if top := strings.Split(filepath.ToSlash(rel), "/")[0]; top == "cmd" || top == "internal" {
				in = append(in, filepath.ToSlash(rel))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range in {
		if excluded(rules, p) {
			t.Errorf("%s keeps %s, which the build needs, out of the context", dockerignore, p)
		}
	}
}

// TestDockerignoreMatcher: the matcher above follows Docker's rules for
// the cases the list relies on.
func TestDockerignoreMatcher(t *testing.T) {
	t.Parallel()
	rules := parseDockerignore("# c\n/producer\n**/*.test\nbin/\ndocs\n!docs/keep.md\n")
	for p, want := range map[string]bool{
		"producer": true, "cmd/producer/main.go": false, "cmd/producer": false,
		"x.test": true, "a/b/x.test": true, "bin/x": true, "a/bin/x": false,
		"docs/a.md": true, "docs/keep.md": false, "go.mod": false,
	} {
		if got := excluded(rules, p); got != want {
			t.Errorf("excluded(%q) = %v, want %v", p, got, want)
		}
	}
}
