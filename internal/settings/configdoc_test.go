package settings

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/herald-dev/herald/internal/config"
)

var updateConfigDoc = flag.Bool("update", false, "rewrite the configuration tables in docs/CONFIGURATION.md")

// configDoc is the configuration reference, relative to this package.
const configDoc = "docs/CONFIGURATION.md"

// TestConfigDocTables keeps docs/CONFIGURATION.md's tables equal to the
// settings the binaries actually read. Run
// `go test ./internal/settings -run ConfigDoc -update` after changing a
// setting.
func TestConfigDocTables(t *testing.T) {
	path := filepath.Join("..", "..", filepath.FromSlash(configDoc))
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	for _, sec := range []struct {
		name     string
		settings []config.Setting
	}{{"producer", ProducerSettings()}, {"worker", WorkerSettings()}} {
		start := "<!-- config:" + sec.name + ":start -->\n"
		end := "<!-- config:" + sec.name + ":end -->"
		i, j := strings.Index(text, start), strings.Index(text, end)
		if i < 0 || j < i {
			t.Fatalf("%s lacks the %q and %q markers", configDoc, start, end)
		}
		want := config.MarkdownTable(sec.settings)
		got := text[i+len(start) : j]
		if got == want {
			continue
		}
		if !*updateConfigDoc {
			t.Errorf("%s's %s table is out of date: run go test ./internal/settings -run ConfigDoc -update", configDoc, sec.name)
			continue
		}
		text = text[:i+len(start)] + want + text[j:]
	}
	if *updateConfigDoc {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
