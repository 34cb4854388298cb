package deploy

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/types"

	"github.com/herald-dev/herald/internal/app"
	"github.com/herald-dev/herald/internal/httpapi"
	"github.com/herald-dev/herald/internal/settings"
)

// secretTokens is the optional tokens file's compose secret (commented out
// in docker-compose.yml; docs/COMPOSE.md says how to switch it on).
const secretTokens = "herald_tokens"

// producerTokenEnv are the settings that hand a container an API
// credential; only the producer and its check may have them.
var producerTokenEnv = []string{
	httpapi.EnvAPIToken, httpapi.EnvAPITokenFile,
	httpapi.EnvAdminToken, httpapi.EnvAdminTokenFile,
	httpapi.EnvTokensFile,
}

// mountedBy lists the services that mount the secret name, sorted.
func mountedBy(p *types.Project, name string) []string {
	var out []string
	for _, s := range p.Services {
		if slices.Contains(secretSources(s), name) {
			out = append(out, s.Name)
		}
	}
	slices.Sort(out)
	return out
}

// TestAdminTokenOnlyInTheProducer: the admin token (every scope: silences,
// the web UI's changes) reaches the producer and its check and nothing
// else: no worker, no feed poller, no Prometheus, in the base file with
// every profile and with the replicated layer on top. No other service
// sees any API credential setting either.
func TestAdminTokenOnlyInTheProducer(t *testing.T) {
	t.Parallel()
	projects := map[string]*types.Project{
		composeFile:                          loadProject(t, loadOpts{dotEnv: exampleEnv(t), profiles: []string{"monitoring", "feeds"}}),
		composeFile + " + " + replicatedFile: loadReplicated(t),
	}
	want := []string{svcProducer, svcProducerCheck}
	for name, p := range projects {
		if _, ok := p.Secrets[secretAdmin]; !ok {
			t.Errorf("%s: no secret %s at the top level", name, secretAdmin)
		}
		for _, sec := range []string{secretAdmin, secretAPI} {
			if got := mountedBy(p, sec); !slices.Equal(got, want) {
				t.Errorf("%s: %s is mounted by %v, want only %v", name, sec, got, want)
			}
		}
		for _, s := range p.Services {
			env := rawEnv(s)
			if slices.Contains(want, s.Name) {
				if got := env(httpapi.EnvAdminTokenFile); got != runSecrets+secretAdmin {
					t.Errorf("%s: %s %s=%q, want %s", name, s.Name, httpapi.EnvAdminTokenFile, got, runSecrets+secretAdmin)
				}
				continue
			}
			for _, k := range producerTokenEnv {
				if env(k) != "" {
					t.Errorf("%s: %s has %s set; only the producer holds API tokens", name, s.Name, k)
				}
			}
		}
	}
}

// TestComposeTokensAreScoped: with the files init-secrets.sh writes and the
// producer's compose settings, the API token is "api" and may only send,
// and the admin token is "admin" and may manage silences and the web UI.
func TestComposeTokensAreScoped(t *testing.T) {
	t.Parallel()
	secrets, _ := writeSecrets(t, t.TempDir())
	p := loadProject(t, loadOpts{dotEnv: readRepoFile(t, envExampleFile)})
	getenv := inSecretsDir(rawEnv(service(t, p, svcProducer)), secrets)
	cfg, err := settings.LoadProducer(nil, getenv)
	if err != nil {
		t.Fatal(err)
	}
	k, err := cfg.Keyring.Build()
	if err != nil {
		t.Fatal(err)
	}
	for file, want := range map[string]struct {
		name   string
		scopes []httpapi.Scope
	}{
		secretAPI:   {"api", []httpapi.Scope{httpapi.ScopeSend}},
		secretAdmin: {"admin", httpapi.AllScopes},
	} {
		b, err := os.ReadFile(filepath.Join(secrets, file))
		if err != nil {
			t.Fatal(err)
		}
		r := httptest.NewRequest("POST", "/v1/silences", nil)
		r.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(b)))
		got, ok := k.Identify(r)
		if !ok || got.Name != want.name || !slices.Equal(got.Scopes, want.scopes) {
			t.Errorf("%s identifies as %+v (known %v), want %s with %v", file, got, ok, want.name, want.scopes)
		}
	}
}

// TestInitSecretsUpgradesAnOldInstall: a secrets directory written before
// the admin token existed (bot and API token only) gets the admin token
// from a second run of init-secrets.sh, which leaves the other two alone;
// without that run, the producer's check names the missing file.
func TestInitSecretsUpgradesAnOldInstall(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	secrets := filepath.Join(dir, "secrets")
	if err := os.Mkdir(secrets, 0o700); err != nil {
		t.Fatal(err)
	}
	old := map[string]string{secretBot: exampleBotTok, secretAPI: strings.Repeat("ab", 32)}
	for name, v := range old {
		if err := os.WriteFile(filepath.Join(secrets, name), []byte(v+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	p := loadProject(t, loadOpts{dotEnv: readRepoFile(t, envExampleFile)})
	getenv := inSecretsDir(rawEnv(service(t, p, svcProducerCheck)), secrets)
	cfg, err := settings.LoadProducer(nil, getenv)
	if err == nil {
		err = app.CheckProducer(cfg, getenv)
	}
	if err == nil || !strings.Contains(err.Error(), httpapi.EnvAdminTokenFile) || !strings.Contains(err.Error(), secretAdmin) {
		t.Errorf("producer check of an old install without %s: %v; want an error naming %s and the file", secretAdmin, err, httpapi.EnvAdminTokenFile)
	}

	_, out := writeSecrets(t, dir, "TELEGRAM_BOT_TOKEN=9999999:other")
	for name, v := range old {
		if b, _ := os.ReadFile(filepath.Join(secrets, name)); strings.TrimSpace(string(b)) != v {
			t.Errorf("the upgrade run replaced %s", name)
		}
		if strings.Contains(string(out), "wrote "+filepath.Join(secrets, name)) {
			t.Errorf("the upgrade run says it wrote %s:\n%s", name, out)
		}
	}
	admin := filepath.Join(secrets, secretAdmin)
	st, err := os.Stat(admin)
	if err != nil {
		t.Fatalf("the upgrade run wrote no %s: %v\n%s", secretAdmin, err, out)
	}
	if st.Mode().Perm() != secretFileMode {
		t.Errorf("%s mode %v, want %o", admin, st.Mode().Perm(), secretFileMode)
	}
	if !strings.Contains(string(out), "wrote "+admin) {
		t.Errorf("the upgrade run does not say it wrote %s:\n%s", admin, out)
	}
	cfg, err = settings.LoadProducer(nil, getenv)
	if err != nil {
		t.Fatal(err)
	}
	if err := app.CheckProducer(cfg, getenv); err != nil {
		t.Errorf("producer check after the upgrade run: %v", err)
	}
}

// tokensLines are the commented lines of docker-compose.yml that switch the
// tokens file on.
var tokensLines = regexp.MustCompile(`(?m)^(\s*)# (` + httpapi.EnvTokensFile + `: .*|- ` + secretTokens + `|` + secretTokens + `:|  file: \./secrets/` + secretTokens + `\.yaml)$`)

// docTokensFile finds the example tokens file in docs/COMPOSE.md: the yaml
// block after the line that names secrets/herald_tokens.yaml.
var docTokensFile = regexp.MustCompile("secrets/" + secretTokens + "\\.yaml[^\n]*\n+```yaml\n((?s:.*?))```")

// TestTokensFileRecipe follows docs/COMPOSE.md's optional tokens file:
// uncommenting the lines docker-compose.yml marks mounts the file into the
// producer and its check only, and the guide's example file, with its
// placeholders filled in, passes the producer's check and names its tokens.
func TestTokensFileRecipe(t *testing.T) {
	t.Parallel()
	compose := readRepoFile(t, composeFile)
	if n := len(tokensLines.FindAllString(compose, -1)); n != 5 {
		t.Fatalf("%s has %d of the 5 commented tokens-file lines (the setting, two service entries, the secret and its file)", composeFile, n)
	}
	compose = tokensLines.ReplaceAllString(compose, "$1$2")
	p := loadProject(t, loadOpts{dotEnv: exampleEnv(t), profiles: []string{"monitoring", "feeds"}, compose: compose})
	if got, want := mountedBy(p, secretTokens), []string{svcProducer, svcProducerCheck}; !slices.Equal(got, want) {
		t.Errorf("%s is mounted by %v, want only %v", secretTokens, got, want)
	}
	for _, name := range []string{svcProducer, svcProducerCheck} {
		if got := rawEnv(service(t, p, name))(httpapi.EnvTokensFile); got != runSecrets+secretTokens {
			t.Errorf("%s %s=%q, want %s", name, httpapi.EnvTokensFile, got, runSecrets+secretTokens)
		}
	}

	m := docTokensFile.FindStringSubmatch(readRepoFile(t, composeDoc))
	if m == nil {
		t.Fatalf("%s has no ```yaml block after secrets/%s.yaml", composeDoc, secretTokens)
	}
	secrets, _ := writeSecrets(t, t.TempDir())
	grafana := strings.Repeat("9f", 32)
	sum := sha256.Sum256([]byte(grafana))
	example := regexp.MustCompile(`sha256: <[^>\n]*>`).ReplaceAllString(m[1], "sha256: "+hex.EncodeToString(sum[:]))
	if err := os.WriteFile(filepath.Join(secrets, secretTokens), []byte(example), 0o644); err != nil {
		t.Fatal(err)
	}
	// The example's file: entries, beside the tokens file in /run/secrets.
	for _, f := range regexp.MustCompile(`(?m)^\s*file: (\S+)`).FindAllStringSubmatch(example, -1) {
		if filepath.IsAbs(f[1]) {
			t.Errorf("the example's file: %s is absolute; a relative name is read beside the tokens file in /run/secrets", f[1])
			continue
		}
		if err := os.WriteFile(filepath.Join(secrets, f[1]), []byte(strings.Repeat("5a", 32)+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// producer check also loads the routing file the example .env names
	// (/etc/herald/routes.yaml, a copy of deploy/routes.example.yaml).
	getenv := inConfigDir(t, inSecretsDir(rawEnv(service(t, p, svcProducerCheck)), secrets))
	cfg, err := settings.LoadProducer(nil, getenv)
	if err != nil {
		t.Fatal(err)
	}
	if err := app.CheckProducer(cfg, getenv); err != nil {
		t.Fatalf("producer check with the guide's tokens file:\n%s\n%v", example, err)
	}
	k, err := cfg.Keyring.Build()
	if err != nil {
		t.Fatal(err)
	}
	names := k.Names()
	if len(names) < 3 || !slices.Contains(names, "api") || !slices.Contains(names, "admin") {
		t.Errorf("tokens = %v; want api, admin and the tokens file's", names)
	}
	r := httptest.NewRequest("POST", "/v1/messages", nil)
	r.Header.Set("Authorization", "Bearer "+grafana)
	if got, ok := k.Identify(r); !ok || got.Name == "api" || got.Name == "admin" {
		t.Errorf("the token of the example's sha256 entry identifies as %+v (known %v)", got, ok)
	}
}

// heraldConfigDir is where compose mounts ./deploy in the producer.
const heraldConfigDir = "/etc/herald/"

// inConfigDir reads the files under /etc/herald from a folder holding
// what the guide puts in ./deploy: routes.yaml and feeds.yaml, copies of
// the examples.
func inConfigDir(t *testing.T, getenv func(string) string) func(string) string {
	t.Helper()
	dir := t.TempDir()
	for name, example := range map[string]string{"routes.yaml": "deploy/routes.example.yaml", "feeds.yaml": "deploy/feeds.example.yaml"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(readRepoFile(t, example)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return func(k string) string {
		v := getenv(k)
		if rest, ok := strings.CutPrefix(v, heraldConfigDir); ok {
			return filepath.Join(dir, rest)
		}
		return v
	}
}
