package settings

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/herald-dev/herald/internal/config"
)

var updateReadme = flag.Bool("update-readme", false, "rewrite the configuration tables in README.md")

// TestReadmeConfigTables keeps README.md's configuration reference equal to
// the settings the binaries actually read. Run
// `go test ./internal/settings -run ReadmeConfig -update-readme` after changing
// a setting.
func TestReadmeConfigTables(t *testing.T) {
	path := filepath.Join("..", "..", "README.md")
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
			t.Fatalf("README.md lacks the %q and %q markers", start, end)
		}
		want := config.MarkdownTable(sec.settings)
		got := text[i+len(start) : j]
		if got == want {
			continue
		}
		if !*updateReadme {
			t.Errorf("README.md's %s configuration table is out of date: run go test ./internal/settings -run ReadmeConfig -update-readme", sec.name)
			continue
		}
		text = text[:i+len(start)] + want + text[j:]
	}
	if *updateReadme {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
