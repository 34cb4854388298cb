// Package docs checks that every example in docs/*.md and README.md loads:
// each fenced ```yaml and ```json block is taken out of its page and handed
// to the code that loads that kind of file. A routing file (routes, schedules,
// escalation policies, generic webhooks), a tokens file and a feed list go
// through app.CheckProducer, which loads them with the loaders `producer
// serve` and `producer feeds` use, so an example is refused here exactly
// when Herald would refuse it. An Alertmanager configuration goes through
// Debian's amtool check-config when it is installed.
//
// A JSON block is an answer Herald gives or a value it stores: marked with
// <!-- example: json PKG.Type --> right before its fence, it is decoded
// into that Go type with unknown fields refused, so every field it shows
// is one Herald writes; unmarked, it must be valid JSON.
//
// A block that is only part of a file (one route, one key) is marked with
// the line <!-- example: fragment --> right before its fence; it is then
// only required to be valid YAML or JSON. Use it sparingly.
package docs

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v4"

	"github.com/herald-dev/herald/internal/alerts"
	"github.com/herald-dev/herald/internal/app"
	"github.com/herald-dev/herald/internal/chats"
	"github.com/herald-dev/herald/internal/feeds"
	"github.com/herald-dev/herald/internal/heartbeat"
	"github.com/herald-dev/herald/internal/httpapi"
	"github.com/herald-dev/herald/internal/settings"
)

// fragmentMarker, on the line before a fence, exempts its block from
// loading; jsonMarker names the Go type of a JSON block.
const (
	fragmentMarker = "<!-- example: fragment -->"
	jsonMarker     = "<!-- example: json "
)

// jsonTypes are the types a JSON block may name, by package.Name.
var jsonTypes = map[string]func() any{
	"chats.Block":         func() any { return new(chats.Block) },
	"heartbeat.Heartbeat": func() any { return new(heartbeat.Heartbeat) },
	"alerts.Dispatched":   func() any { return new(alerts.Dispatched) },
}

// example is one fenced block of a page.
type example struct {
	page     string // docs/NAME.md
	line     int    // of the opening fence
	lang     string // yaml or json
	text     string
	fragment bool
	goType   string // named by a json marker
}

func (e example) String() string { return fmt.Sprintf("%s:%d (```%s)", e.page, e.line, e.lang) }

// examples extracts the yaml and json blocks of every page under docs/
// and of README.md.
func examples(t *testing.T) []example {
	t.Helper()
	pages, err := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	if err != nil || len(pages) == 0 {
		t.Fatalf("no docs/*.md found (%v)", err)
	}
	pages = append(pages, filepath.Join("..", "..", "README.md"))
	var out []example
	for _, p := range pages {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(filepath.Join("..", ".."), p)
		out = append(out, blocks(filepath.ToSlash(rel), string(b))...)
	}
	return out
}

// blocks finds the yaml and json blocks of one page.
func blocks(page, text string) []example {
	var out []example
	var cur *example
	prev := ""
	for i, line := range strings.Split(text, "\n") {
		switch {
		case cur != nil && strings.HasPrefix(line, "```"):
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			cur.text += line + "\n"
		case line == "```yaml" || line == "```json":
			marker := strings.TrimSpace(prev)
			cur = &example{page: page, line: i + 1, lang: strings.TrimPrefix(line, "```"), fragment: marker == fragmentMarker}
			if t, ok := strings.CutPrefix(marker, jsonMarker); ok {
				cur.goType = strings.TrimSpace(strings.TrimSuffix(t, "-->"))
			}
		}
		if strings.TrimSpace(line) != "" {
			prev = line
		}
	}
	return out
}

// Top-level keys that tell what kind of file a YAML example is.
var (
	routingKeys      = []string{"routes", "schedules", "escalation_policies", "webhooks", "defaults"}
	alertmanagerKeys = []string{"route", "receivers"}
	// composeKeys: a docker compose file, which Herald does not load;
	// test/deploy checks the repository's own compose files.
	composeKeys = []string{"services", "secrets", "volumes", "networks"}
)

// kindOf names the kind of file a YAML example is, from its top-level keys.
func kindOf(top map[string]any) string {
	has := func(keys []string) bool {
		for k := range top {
			if slices.Contains(keys, k) {
				return true
			}
		}
		return false
	}
	switch {
	case top["tokens"] != nil:
		return "tokens file"
	case top["feeds"] != nil:
		return "feed list"
	case has(alertmanagerKeys):
		return "alertmanager"
	case has(composeKeys):
		return "compose"
	case has(routingKeys):
		return "routing file"
	}
	return ""
}

func TestDocsExamplesLoad(t *testing.T) {
	t.Parallel()
	all := examples(t)
	kinds := map[string]int{}
	for _, ex := range all {
		kind := check(t, ex)
		kinds[kind]++
	}
	t.Logf("%d examples: %v", len(all), kinds)
	for _, want := range []string{"routing file", "tokens file", "feed list"} {
		if kinds[want] == 0 {
			t.Errorf("no %s example was found in docs/: the extraction is broken", want)
		}
	}
}

// check loads one example and returns its kind.
func check(t *testing.T, ex example) string {
	t.Helper()
	if ex.lang == "json" {
		return checkJSON(t, ex)
	}
	var top map[string]any
	if err := yaml.Unmarshal([]byte(ex.text), &top); err != nil && !ex.fragment {
		t.Errorf("%s: not a YAML mapping: %v", ex, err)
		return "bad"
	}
	if ex.fragment {
		var any any
		if err := yaml.Unmarshal([]byte(ex.text), &any); err != nil {
			t.Errorf("%s: not valid YAML: %v", ex, err)
		}
		return "fragment"
	}
	kind := kindOf(top)
	dir := t.TempDir() // the example's files
	var err error
	switch kind {
	case "routing file":
		err = loadProducerFile(t, dir, alerts.EnvRoutesFile, "routes.yaml", routingFile(ex.text, top))
	case "tokens file":
		err = loadProducerFile(t, dir, httpapi.EnvTokensFile, "tokens.yaml", tokensFile(t, dir, ex.text, top))
	case "feed list":
		err = loadProducerFile(t, dir, feeds.EnvFile, "feeds.yaml", ex.text)
	case "alertmanager":
		err = amtoolCheck(t, ex.text)
	case "compose":
		// Valid YAML, as read above.
	default:
		t.Errorf("%s: no kind of Herald file has the top-level keys %v: mark the block %s, or teach this test the kind", ex, keysOf(top), fragmentMarker)
	}
	if err != nil {
		t.Errorf("%s, a %s, does not load:\n%v", ex, kind, err)
	}
	return kind
}

func keysOf(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// routingFile is a routing-file example as a file: one that shows only
// other top-level keys (webhooks:, say) gets a default route, as routes:
// is required.
func routingFile(text string, top map[string]any) string {
	if _, ok := top["routes"]; ok {
		return text
	}
	return text + "\nroutes:\n  - name: rest\n    default: true\n    destinations: [\"42\"]\n"
}

// placeholder is a value the reader fills in, such as <the digest
// sha256sum printed>.
var placeholder = regexp.MustCompile(`(sha256:\s*)<[^>\n]*>`)

// tokensFile is a tokens-file example as a file: a digest written as a
// placeholder becomes a digest, and each relative file: it names is
// written, holding a token, beside the tokens file (where Herald reads
// it). An absolute file: cannot be made here: write it relative.
func tokensFile(t *testing.T, dir, text string, top map[string]any) string {
	text = placeholder.ReplaceAllString(text, "${1}"+strings.Repeat("ab", 32))
	entries, _ := top["tokens"].([]any)
	for i, e := range entries {
		m, _ := e.(map[string]any)
		f, _ := m["file"].(string)
		if f == "" {
			continue
		}
		if filepath.IsAbs(f) {
			t.Errorf("tokens[%d].file %s: an absolute path cannot be made by the test; write it relative to the tokens file", i, f)
			continue
		}
		if err := os.WriteFile(filepath.Join(dir, f), []byte(fmt.Sprintf("%032x\n", i+1)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return text
}

// loadProducerFile writes text as the file env names and runs `producer
// check` on it: the loaders of serve and of `producer feeds`.
func loadProducerFile(t *testing.T, dir, env, name, text string) error {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{env: path, httpapi.EnvAPIToken: strings.Repeat("0123456789abcdef", 2)}
	getenv := func(k string) string { return vars[k] }
	cfg, err := settings.LoadProducer(nil, getenv)
	if err != nil {
		return err
	}
	return app.CheckProducer(cfg, getenv)
}

// amtoolCheck runs Alertmanager's own check on a configuration, when
// Debian's prometheus-alertmanager is installed.
func amtoolCheck(t *testing.T, text string) error {
	t.Helper()
	amtool, err := exec.LookPath("amtool")
	if err != nil {
		t.Logf("amtool not installed: the Alertmanager example is only checked as YAML")
		return nil
	}
	path := filepath.Join(t.TempDir(), "alertmanager.yml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	cmd := exec.Command(amtool, "check-config", path)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("amtool check-config: %v\n%s", err, out.String())
	}
	return nil
}

// checkJSON decodes a JSON block into the type its marker names, refusing
// fields the type does not have; an unmarked block must be valid JSON.
func checkJSON(t *testing.T, ex example) string {
	t.Helper()
	if ex.goType == "" {
		if !json.Valid([]byte(ex.text)) {
			t.Errorf("%s: not valid JSON", ex)
		}
		return "json"
	}
	mk, ok := jsonTypes[ex.goType]
	if !ok {
		t.Errorf("%s names the type %s, which this test does not know: add it to jsonTypes", ex, ex.goType)
		return "json"
	}
	dec := json.NewDecoder(strings.NewReader(ex.text))
	dec.DisallowUnknownFields()
	if err := dec.Decode(mk()); err != nil {
		t.Errorf("%s is not a %s: %v", ex, ex.goType, err)
	}
	return "json " + ex.goType
}
