package deploy

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/herald-dev/herald/internal/app"
	"github.com/herald-dev/herald/internal/httpapi"
	"github.com/herald-dev/herald/internal/redisconn"
	"github.com/herald-dev/herald/internal/settings"
)

// heraldEnvName matches the environment names that belong to Herald in any
// file: its own prefix, the Telegram and log settings, and Redis's.
var heraldEnvName = regexp.MustCompile(`\b(?:HERALD|TELEGRAM|LOG|REDIS)_[A-Z0-9_]+\b`)

func TestComposeEnvNamesAreReadByTheBinaries(t *testing.T) {
	t.Parallel()
	// Every Herald-looking name anywhere in the file, comments and ${VAR}
	// interpolations included: a misspelt or removed variable is ignored
	// silently by the binaries, so it must not survive here either.
	for _, name := range heraldEnvName.FindAllString(readRepoFile(t, composeFile), -1) {
		if !readByAny(name) {
			t.Errorf("%s names %s, which neither binary reads (see settings.ProducerSettings/WorkerSettings)", composeFile, name)
		}
	}
	// What each service declares must be read by that service's binary.
	p := loadProject(t, loadOpts{dotEnv: exampleEnv(t), declaredOnly: true})
	for svc, names := range readBy() {
		s := service(t, p, svc)
		if len(s.Environment) == 0 {
			t.Errorf("%s declares no environment", svc)
		}
		for name := range s.Environment {
			if !slices.Contains(names, name) {
				t.Errorf("service %s sets %s, which the %s binary does not read", svc, name, svc)
			}
		}
	}
}

func TestEnvExampleNamesAreReadByTheBinaries(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for _, e := range parseEnvExample(t) {
		if !readByAny(e.name) {
			t.Errorf("%s sets %s, which neither binary reads", envExampleFile, e.name)
		}
		if seen[e.name] {
			t.Errorf("%s sets %s twice", envExampleFile, e.name)
		}
		seen[e.name] = true
	}
	// Prose mentions count too: a comment must not point users at a name
	// that does not exist.
	for _, name := range heraldEnvName.FindAllString(readRepoFile(t, envExampleFile), -1) {
		if !readByAny(name) {
			t.Errorf("%s mentions %s, which neither binary reads", envExampleFile, name)
		}
	}
}

func TestEnvExampleReachesTheContainers(t *testing.T) {
	t.Parallel()
	entries := parseEnvExample(t)
	dotEnv := exampleEnv(t)
	p := loadProject(t, loadOpts{dotEnv: dotEnv})
	want := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(dotEnv), "\n") {
		k, v, _ := strings.Cut(line, "=")
		want[k] = v
	}
	for svc, names := range readBy() {
		s := service(t, p, svc)
		getenv := envOf(s)
		// A setting in .env that the compose file overrides would be
		// ignored without a word; every one must arrive as written.
		for _, e := range entries {
			if !slices.Contains(names, e.name) {
				continue
			}
			if got := getenv(e.name); got != want[e.name] {
				t.Errorf("%s in .env reaches %s as %q, want %q; docker-compose.yml overrides it, so drop it from %s",
					e.name, svc, got, want[e.name], envExampleFile)
			}
		}
	}
	// With every example value switched on, both binaries accept the
	// result: the examples are valid settings.
	if _, err := settings.LoadProducer(nil, envOf(service(t, p, svcProducer))); err != nil {
		t.Errorf("producer rejects the example settings: %v", err)
	}
	if _, err := settings.LoadWorker(nil, envOf(service(t, p, svcWorker))); err != nil {
		t.Errorf("worker rejects the example settings: %v", err)
	}
}

func TestEnvExampleAsShippedNeedsTheSecrets(t *testing.T) {
	t.Parallel()
	// Copied unchanged, with no secret files written yet, .env.example must
	// make both init checks fail with a message naming the setting and the
	// file, rather than let anything run without its token.
	p := loadProject(t, loadOpts{dotEnv: readRepoFile(t, envExampleFile)})
	missing := t.TempDir() // /run/secrets of a project whose secrets were never written
	pcfg, err := settings.LoadProducer(nil, inSecretsDir(rawEnv(service(t, p, svcProducerCheck)), missing))
	if err == nil {
		err = app.CheckProducer(pcfg, inSecretsDir(rawEnv(service(t, p, svcProducerCheck)), missing))
	}
	if err == nil || !strings.Contains(err.Error(), httpapi.EnvAPITokenFile) || !strings.Contains(err.Error(), "herald_api_token") {
		t.Errorf("producer check with the shipped .env.example and no secret file: %v; want an error naming %s and the file", err, httpapi.EnvAPITokenFile)
	}
	wcfg, err := settings.LoadWorker(nil, inSecretsDir(rawEnv(service(t, p, svcWorkerCheck)), missing))
	if err == nil {
		err = app.CheckWorker(wcfg)
	}
	if err == nil || !strings.Contains(err.Error(), settings.EnvTelegramTokenFile) || !strings.Contains(err.Error(), "telegram_bot_token") {
		t.Errorf("worker check with the shipped .env.example and no secret file: %v; want an error naming %s and the file", err, settings.EnvTelegramTokenFile)
	}
}

// botToken matches the shape of a Telegram bot token: a numeric bot id, a
// colon and a long secret.
var botToken = regexp.MustCompile(`\d{5,}:[A-Za-z0-9_-]{30,}`)

// secretNames are the variables that hold secrets.
var secretNames = []string{settings.EnvTelegramToken, httpapi.EnvAPIToken, httpapi.EnvAdminToken}

func TestNoSecretInCommittedFiles(t *testing.T) {
	t.Parallel()
	for _, f := range []string{composeFile, envExampleFile, dockerfile, dockerignore, prometheusFile} {
		for i, line := range strings.Split(readRepoFile(t, f), "\n") {
			if botToken.MatchString(line) { // the match itself is never printed
				t.Errorf("%s:%d holds something shaped like a bot token", f, i+1)
			}
		}
	}
	for _, e := range parseEnvExample(t) {
		if slices.Contains(secretNames, e.name) && e.value != "" {
			t.Errorf("%s ships a value for %s; leave it empty", envExampleFile, e.name)
		}
	}
	p := loadProject(t, loadOpts{dotEnv: exampleEnv(t), declaredOnly: true, profiles: []string{"monitoring"}})
	for _, s := range p.Services {
		for name := range s.Environment {
			if slices.Contains(secretNames, name) || strings.HasSuffix(name, "_TOKEN") || strings.Contains(name, "PASSWORD") {
				t.Errorf("service %s sets %s in %s; secrets belong in .env", s.Name, name, composeFile)
			}
		}
		if u := envOf(s)(redisconn.EnvURL); strings.Contains(u, "@") {
			t.Errorf("service %s puts credentials into %s", s.Name, redisconn.EnvURL)
		}
	}
	// Settings reach the Herald services from a required .env.
	for _, svc := range []string{svcProducer, svcWorker, svcProducerCheck, svcWorkerCheck} {
		s := service(t, p, svc)
		found := false
		for _, f := range s.EnvFiles {
			if strings.HasSuffix(f.Path, "/.env") && bool(f.Required) {
				found = true
			}
		}
		if !found {
			t.Errorf("%s does not read a required .env (env_file: %+v)", svc, s.EnvFiles)
		}
	}
}

// TestEnvExampleHoldsNoToken: .env is read by every container, the
// internet-facing producer too, so the tokens must not be in it at all,
// not even as a commented example to fill in (issue 14).
func TestEnvExampleHoldsNoToken(t *testing.T) {
	t.Parallel()
	for _, e := range parseEnvExample(t) {
		if slices.Contains(secretNames, e.name) || slices.Contains([]string{settings.EnvTelegramTokenFile, httpapi.EnvAPITokenFile, httpapi.EnvAdminTokenFile}, e.name) {
			t.Errorf("%s lists %s; the tokens are secret files (deploy/init-secrets.sh), each mounted only where it is used", envExampleFile, e.name)
		}
	}
}

func TestSecretsStayOutOfTheImage(t *testing.T) {
	t.Parallel()
	var lines []string
	for _, l := range strings.Split(readRepoFile(t, dockerignore), "\n") {
		lines = append(lines, strings.TrimSpace(l))
	}
	for _, want := range []string{".env", ".git"} {
		if !slices.Contains(lines, want) {
			t.Errorf("%s does not exclude %s from the build context", dockerignore, want)
		}
	}
}
