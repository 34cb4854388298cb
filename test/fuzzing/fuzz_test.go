package fuzzing

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
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
		"./internal/ratelimit.FuzzParseLimit",
	} {
		if !got[want] {
			t.Errorf("fuzz target %s not discovered; found %v", want, got)
		}
	}
}

// fuzzBudget checks HERALD_FUZZ_TIME: a Go duration ("3s") or an execution
// count ("20000x"), as go test's -fuzztime takes them.
func fuzzBudget(spec string) (string, bool) {
	if n, ok := strings.CutSuffix(spec, "x"); ok {
		if c, err := strconv.Atoi(n); err == nil && c > 0 {
			return spec, true
		}
		return "", false
	}
	d, err := time.ParseDuration(spec)
	if err != nil || d <= 0 {
		return "", false
	}
	return d.String(), true
}

// deadlineFlake reports the fuzzing engine's own failure at the end of a
// duration budget (go.dev/issue/75804, fixed in Go 1.27): "context deadline
// exceeded" with no failing input written. A real finding always writes one.
func deadlineFlake(out []byte) bool {
	return bytes.Contains(out, []byte("context deadline exceeded")) && !bytes.Contains(out, []byte("Failing input written"))
}

// TestFuzzTargets runs each fuzz target for HERALD_FUZZ_TIME (a duration
// such as "3s", or an execution count such as "20000x", which cannot hit
// the engine's deadline race of Go 1.26). Without the variable it only
// lists what it would run.
func TestFuzzTargets(t *testing.T) {
	spec := os.Getenv("HERALD_FUZZ_TIME")
	root := moduleRoot(t)
	targets := discover(t, root)
	if spec == "" {
		t.Skipf("HERALD_FUZZ_TIME not set; %d fuzz targets would run (CI sets it)", len(targets))
	}
	budget, ok := fuzzBudget(spec)
	if !ok {
		t.Fatalf("HERALD_FUZZ_TIME=%q is neither a positive Go duration such as 3s nor a count such as 20000x", spec)
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to fuzz: %v", err)
	}
	for _, tg := range targets {
		t.Run(strings.TrimPrefix(tg.dir, "./internal/")+"/"+tg.name, func(t *testing.T) {
			run := func() ([]byte, error) {
				// Generous bound: building the instrumented test binary
				// takes longer than the fuzzing itself.
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
				defer cancel()
				cmd := exec.CommandContext(ctx, goBin, "test", tg.dir, "-run", "^$",
					"-fuzz", "^"+tg.name+"$", "-fuzztime", budget, "-parallel", "2")
				cmd.Dir = root
				// A nested fuzz run must not recurse into this test.
				cmd.Env = append(os.Environ(), "HERALD_FUZZ_TIME=")
				return cmd.CombinedOutput()
			}
			out, err := run()
			if err != nil && deadlineFlake(out) {
				t.Logf("the fuzzing engine stopped on its own deadline without a finding (go.dev/issue/75804); running %s again", tg.name)
				out, err = run()
			}
			if err != nil {
				t.Fatalf("go test -fuzz %s %s failed: %v\n%s", tg.name, tg.dir, err, out)
			}
		})
	}
}

func TestFuzzBudgetAndFlake(t *testing.T) {
	for spec, want := range map[string]string{"2s": "2s", "1m": "1m0s", "20000x": "20000x", "0x": "", "x": "", "-1s": "", "soon": ""} {
		got, ok := fuzzBudget(spec)
		if got != want || ok != (want != "") {
			t.Errorf("fuzzBudget(%q) = %q, %v; want %q", spec, got, ok, want)
		}
	}
	flake := []byte("--- FAIL: FuzzX (2.11s)\n    context deadline exceeded\nFAIL\n")
	found := []byte("--- FAIL: FuzzX (0.00s)\n    boom\n    Failing input written to testdata/fuzz/FuzzX/abc\n    context deadline exceeded\n")
	if !deadlineFlake(flake) || deadlineFlake(found) || deadlineFlake([]byte("panic: boom")) {
		t.Error("deadlineFlake misclassifies the engine's deadline failure and real findings")
	}
}
