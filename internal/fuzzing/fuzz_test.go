package fuzzing

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"
)

// target is one fuzz function and the package directory that holds it.
type target struct {
	dir  string // relative to the module root, "./internal/jobs"
	name string
}

var fuzzFuncRE = regexp.MustCompile(`^func (Fuzz[A-Za-z0-9_]*)\(\w+ \*testing\.F\)`)

// moduleRoot is two levels up from this package.
func moduleRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root not found from %s: %v", root, err)
	}
	return root
}

// discover lists the fuzz targets declared in the module's test files.
func discover(t *testing.T, root string) []target {
	t.Helper()
	var out []target
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); n == "testdata" || strings.HasPrefix(n, ".") && path != root {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			if m := fuzzFuncRE.FindStringSubmatch(sc.Text()); m != nil {
				rel, _ := filepath.Rel(root, filepath.Dir(path))
				out = append(out, target{dir: "./" + filepath.ToSlash(rel), name: m[1]})
			}
		}
		return sc.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].dir != out[j].dir {
			return out[i].dir < out[j].dir
		}
		return out[i].name < out[j].name
	})
	return out
}

func TestDiscoverFindsKnownTargets(t *testing.T) {
	got := map[string]bool{}
	for _, tg := range discover(t, moduleRoot(t)) {
		got[tg.dir+"."+tg.name] = true
	}
	for _, want := range []string{
		"./internal/jobs.FuzzDecodePayload",
		"./internal/markup.FuzzSplit",
		"./internal/producer.FuzzMessagesAPI",
		"./internal/config.FuzzParseRate",
	} {
		if !got[want] {
			t.Errorf("fuzz target %s not discovered; found %v", want, got)
		}
	}
}

// TestFuzzTargets runs each fuzz target for HERALD_FUZZ_TIME (for example
// "3s"). Without the variable it only lists what it would run.
func TestFuzzTargets(t *testing.T) {
	spec := os.Getenv("HERALD_FUZZ_TIME")
	root := moduleRoot(t)
	targets := discover(t, root)
	if spec == "" {
		t.Skipf("HERALD_FUZZ_TIME not set; %d fuzz targets would run (CI sets it)", len(targets))
	}
	d, err := time.ParseDuration(spec)
	if err != nil || d <= 0 {
		t.Fatalf("HERALD_FUZZ_TIME=%q is not a positive Go duration such as 3s", spec)
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to fuzz: %v", err)
	}
	for _, tg := range targets {
		t.Run(strings.TrimPrefix(tg.dir, "./internal/")+"/"+tg.name, func(t *testing.T) {
			// Generous bound: building the instrumented test binary takes
			// longer than the fuzzing itself.
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute+d)
			defer cancel()
			cmd := exec.CommandContext(ctx, goBin, "test", tg.dir, "-run", "^$",
				"-fuzz", "^"+tg.name+"$", "-fuzztime", d.String(), "-parallel", "2")
			cmd.Dir = root
			// A nested fuzz run must not recurse into this test, nor fail a
			// redis-backed fuzz target for the lack of Redis.
			cmd.Env = append(os.Environ(), "HERALD_FUZZ_TIME=")
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("go test -fuzz %s %s failed: %v\n%s", tg.name, tg.dir, err, out)
			}
		})
	}
}
