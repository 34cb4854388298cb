package deploy

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v4"
)

// The minimum Compose version of docs/COMPOSE.md ("Requirements") holds
// only while the compose files use no key newer than the ones its table
// lists. The tests below walk every compose file as YAML, name each key
// (and the few values and syntaxes that came with a Compose release) by its
// path, and require a row for it in the table; the minimum the doc states
// must be the newest release in the rows the files use.

// composeFileGlobs finds the compose files and their overlays, relative to
// the repository root.
var composeFileGlobs = []string{
	"docker-compose*.yml", "docker-compose*.yaml", "compose*.yml", "compose*.yaml",
	"deploy/docker-compose*.yml", "deploy/docker-compose*.yaml", "deploy/compose*.yml", "deploy/compose*.yaml",
}

// composeFiles lists the compose files of the repository.
func composeFiles(t *testing.T) []string {
	t.Helper()
	root := repoRoot(t)
	var out []string
	for _, g := range composeFileGlobs {
		m, err := filepath.Glob(filepath.Join(root, g))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range m {
			rel, err := filepath.Rel(root, p)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, filepath.ToSlash(rel))
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// namedChildren are the mappings whose keys are names the project chooses
// (services, networks, ...), not keys of the Compose format; the walker
// writes them as "*". The key is the path of the mapping.
var namedChildren = map[string]bool{
	"services": true, "networks": true, "volumes": true, "secrets": true, "configs": true, "models": true,
	"services.*.depends_on": true, "services.*.networks": true, "services.*.ulimits": true,
	"services.*.models": true,
}

// opaqueValues are keys whose mapping holds free-form names and values
// (variables, labels, options): the walker names the key and stops there.
var opaqueValues = map[string]bool{
	"environment": true, "labels": true, "args": true, "sysctls": true, "extra_hosts": true,
	"driver_opts": true, "annotations": true, "options": true, "attachments": true,
}

// featureValues are keys whose value is itself versioned: the walker names
// "key: value" besides the key.
var featureValues = map[string]bool{"services.*.depends_on.*.condition": true, "services.*.volumes[].type": true}

// engineGated are the keys Compose refuses on an older Docker Engine
// (docker/compose v2.40.3, pkg/compose/convert.go and create.go). A row
// for one of them must name its engine.
var engineGated = map[string]string{
	"services.*.healthcheck.start_interval": "Engine 25",
	"services.*.networks.*.mac_address":     "Engine 25",
	"services.*.networks.*.interface_name":  "Engine 28.1",
	"services.*.volumes[].type: image":      "Engine 28",
	"services.*.volumes[].image":            "Engine 28",
	"services.*.volumes[].image.subpath":    "Engine 28",
}

// Syntaxes the walker names besides keys.
const (
	featMergeKey    = "<<"
	featAlias       = "*alias"
	featExtension   = "x-*"
	featDollarEsc   = "$$"
	featInterpPlain = "${VAR}"
)

// interpolation matches the ${...} forms of Compose's interpolation.
var interpolation = regexp.MustCompile(`\$\{[A-Za-z_][A-Za-z0-9_]*(:?[-?+])?`)

// composeKeys names every key, versioned value and syntax a compose file
// uses, as the table of docs/COMPOSE.md writes them.
func composeKeys(src []byte) (map[string]bool, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		return nil, err
	}
	keys := map[string]bool{}
	// resolve follows an alias to its anchor's node.
	resolve := func(n *yaml.Node) *yaml.Node {
		for n.Kind == yaml.AliasNode {
			keys[featAlias] = true
			n = n.Alias
		}
		return n
	}
	// scalars names the interpolation forms under n, which holds no keys.
	var scalars func(n *yaml.Node)
	scalars = func(n *yaml.Node) {
		n = resolve(n)
		if n.Kind == yaml.ScalarNode {
			scalarFeatures(keys, n.Value)
		}
		for _, c := range n.Content {
			scalars(c)
		}
	}
	var walk func(n *yaml.Node, path string)
	walk = func(n *yaml.Node, path string) {
		n = resolve(n)
		switch n.Kind {
		case yaml.DocumentNode:
			for _, c := range n.Content {
				walk(c, path)
			}
		case yaml.SequenceNode:
			for _, c := range n.Content {
				walk(c, path+"[]")
			}
		case yaml.ScalarNode:
			scalarFeatures(keys, n.Value)
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				if k.Value == featMergeKey {
					keys[featMergeKey] = true
					walk(v, path)
					continue
				}
				if strings.HasPrefix(k.Value, "x-") {
					// An extension is checked where it is merged or aliased.
					keys[join(path, featExtension)] = true
					continue
				}
				name := k.Value
				if namedChildren[path] {
					name = "*"
				}
				p := join(path, name)
				if name != "*" {
					// A name the project chose is no key; its keys are.
					keys[p] = true
				}
				v = resolve(v)
				if featureValues[p] && v.Kind == yaml.ScalarNode {
					keys[p+": "+v.Value] = true
				}
				if opaqueValues[name] && v.Kind == yaml.MappingNode {
					scalars(v)
					continue
				}
				walk(v, p)
			}
		}
	}
	walk(&doc, "")
	return keys, nil
}

// scalarFeatures names the interpolation syntaxes a scalar uses.
func scalarFeatures(keys map[string]bool, s string) {
	if strings.Contains(s, "$$") {
		keys[featDollarEsc] = true
		s = strings.ReplaceAll(s, "$$", "")
	}
	for _, m := range interpolation.FindAllStringSubmatch(s, -1) {
		if m[1] == "" {
			keys[featInterpPlain] = true
			continue
		}
		keys["${VAR"+m[1]+"…}"] = true
	}
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// requirementsSection returns the "## Requirements" section of the doc.
func requirementsSection(t *testing.T, doc string) string {
	t.Helper()
	_, after, ok := strings.Cut(doc, "\n## Requirements\n")
	if !ok {
		t.Fatalf("%s has no \"## Requirements\" section", composeDoc)
	}
	if i := strings.Index(after, "\n## "); i >= 0 {
		after = after[:i]
	}
	return after
}

// version is a Compose release, major.minor.patch.
type version [3]int

var versionRE = regexp.MustCompile(`\bv(\d+)\.(\d+)\.(\d+)\b`)

func parseVersion(s string) (version, bool) {
	m := versionRE.FindStringSubmatch(s)
	if m == nil {
		return version{}, false
	}
	var v version
	for i := range v {
		v[i], _ = strconv.Atoi(m[i+1])
	}
	return v, true
}

func (v version) String() string { return fmt.Sprintf("v%d.%d.%d", v[0], v[1], v[2]) }

func (v version) less(w version) bool { return slices.Compare(v[:], w[:]) < 0 }

// keyRow is a row of the table: the first release and the source.
type keyRow struct {
	first  version
	source string
}

// keyTable reads the rows "| `key` | vX.Y.Z … | source |" of the
// Requirements section: the key and the first Compose release it names.
func keyTable(t *testing.T, section string) map[string]keyRow {
	t.Helper()
	rows := map[string]keyRow{}
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), " | ")
		if len(cells) < 3 {
			t.Errorf("%s: row %q has fewer than three cells", composeDoc, line)
			continue
		}
		key := strings.TrimSpace(cells[0])
		key = strings.TrimSuffix(strings.TrimPrefix(key, "`"), "`")
		v, ok := parseVersion(cells[1])
		if !ok {
			t.Errorf("%s: row of `%s` names no release vX.Y.Z in its second cell", composeDoc, key)
			continue
		}
		if strings.TrimSpace(cells[2]) == "" {
			t.Errorf("%s: row of `%s` has no source", composeDoc, key)
		}
		if _, dup := rows[key]; dup {
			t.Errorf("%s: two rows for `%s`", composeDoc, key)
		}
		rows[key] = keyRow{first: v, source: cells[2]}
	}
	if len(rows) == 0 {
		t.Fatalf("%s: the Requirements section has no table of keys", composeDoc)
	}
	return rows
}

// minimumRE finds the minimum the doc states, e.g. "**Docker Compose v2.24.0**".
var minimumRE = regexp.MustCompile(`\*\*Docker Compose (v\d+\.\d+\.\d+)\*\* or later`)

// TestComposeFilesUseOnlyDocumentedKeys: every key of every compose file
// has a row in the table of docs/COMPOSE.md, every row is a key some file
// uses, and the minimum the doc (and the README) states is the newest
// release of those rows.
func TestComposeFilesUseOnlyDocumentedKeys(t *testing.T) {
	t.Parallel()
	files := composeFiles(t)
	for _, want := range []string{composeFile, replicatedFile} {
		if !slices.Contains(files, want) {
			t.Fatalf("the compose files found (%v) lack %s: fix composeFileGlobs", files, want)
		}
	}
	used := map[string][]string{}
	for _, f := range files {
		keys, err := composeKeys([]byte(readRepoFile(t, f)))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for k := range keys {
			used[k] = append(used[k], f)
		}
	}
	section := requirementsSection(t, readRepoFile(t, composeDoc))
	rows := keyTable(t, section)
	var newest version
	var newestKey string
	for _, k := range sortedKeys(used) {
		row, ok := rows[k]
		if !ok {
			t.Errorf("`%s` (in %v) has no row in %s's Requirements table: find the first Compose release that accepts it "+
				"(compose-go's schema/compose-spec.json, the compose-go version docker/compose pins per tag), "+
				"add a row with the source, and raise the minimum if it is newer", k, used[k], composeDoc)
			continue
		}
		if e, gated := engineGated[k]; gated && !strings.Contains(row.source, e) {
			t.Errorf("`%s` (in %v) is refused by Compose before Docker %s: its row in %s must say %q, "+
				"and the doc's engine requirement must follow", k, used[k], e, composeDoc, e)
		}
		if newest.less(row.first) {
			newest, newestKey = row.first, k
		}
	}
	for _, k := range sortedKeys(rows) {
		if _, ok := used[k]; !ok {
			t.Errorf("%s's Requirements table has a row for `%s`, which no compose file (%v) uses any more: remove the row, "+
				"and lower the minimum if it set it", composeDoc, k, files)
		}
	}
	if t.Failed() {
		return
	}
	m := minimumRE.FindStringSubmatch(section)
	if m == nil {
		t.Fatalf("%s's Requirements section states no minimum as \"**Docker Compose vX.Y.Z** or later\"", composeDoc)
	}
	if m[1] != newest.String() {
		t.Errorf("%s states the minimum %s, but the newest key the files use is `%s`, first in %s",
			composeDoc, m[1], newestKey, newest)
	}
	readme := readRepoFile(t, "README.md")
	if !strings.Contains(readme, "Docker Compose "+newest.String()+" or later") {
		t.Errorf("README.md's compose paragraph does not say \"Docker Compose %s or later\"", newest)
	}
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// TestComposeKeysWalker: the walker names keys through anchors, aliases and
// merge keys, writes project-chosen names as "*", and names the versioned
// values and interpolation forms, so a new key cannot slip past the table.
func TestComposeKeysWalker(t *testing.T) {
	t.Parallel()
	src := `
name: demo
x-base: &base
  env_file:
    - path: .env
      required: false
  develop:
    watch:
      - path: ./src
        action: sync
x-env: &env
  A: ${A:?A is needed}
  B: $$literal
services:
  app:
    <<: *base
    image: ${IMAGE:-app}
    environment: *env
    depends_on:
      db:
        condition: service_completed_successfully
        required: false
    networks:
      back:
        aliases: [db-client]
  db:
    image: $IMAGE
    healthcheck:
      start_interval: 1s
networks:
  back: {}
`
	got, err := composeKeys([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"name", "x-*", "<<", "*alias", "services", "services.*.image", "services.*.environment",
		"services.*.env_file", "services.*.env_file[].path", "services.*.env_file[].required",
		"services.*.develop", "services.*.develop.watch", "services.*.develop.watch[].path", "services.*.develop.watch[].action",
		"services.*.depends_on", "services.*.depends_on.*.condition",
		"services.*.depends_on.*.condition: service_completed_successfully", "services.*.depends_on.*.required",
		"services.*.networks", "services.*.networks.*.aliases",
		"services.*.healthcheck", "services.*.healthcheck.start_interval",
		"networks",
		"${VAR:?…}", "${VAR:-…}", "$$",
	}
	for _, k := range want {
		if !got[k] {
			t.Errorf("walker misses %q", k)
		}
	}
	for k := range got {
		if !slices.Contains(want, k) {
			t.Errorf("walker names %q, which the sample does not use", k)
		}
	}
}
