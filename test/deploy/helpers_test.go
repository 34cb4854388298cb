package deploy

import (
	"bufio"
	"context"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/cli"
	"github.com/compose-spec/compose-go/v2/types"

	"github.com/herald-dev/herald/internal/config"
	"github.com/herald-dev/herald/internal/settings"
)

// Files under test, relative to the repository root.
const (
	composeFile    = "docker-compose.yml"
	envExampleFile = ".env.example"
	dockerfile     = "Dockerfile"
	dockerignore   = ".dockerignore"
	prometheusFile = "deploy/prometheus.yml"
)

// Service names the other files refer to.
const (
	svcRedis      = "redis"
	svcProducer   = "producer"
	svcWorker     = "worker"
	svcPrometheus = "prometheus"
	svcFeeds      = "feeds"
	// The init checks: one-shot services the producer and the workers wait
	// for (condition service_completed_successfully).
	svcProducerCheck = "producer-check"
	svcWorkerCheck   = "worker-check"
)

// guardedBy maps each Herald service to its init check.
var guardedBy = map[string]string{svcProducer: svcProducerCheck, svcWorker: svcWorkerCheck}

// oneShot reports whether a service runs to completion instead of serving.
func oneShot(name string) bool { return name == svcProducerCheck || name == svcWorkerCheck }

// repoRoot finds the directory holding go.mod above the test's directory.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test directory")
		}
		dir = parent
	}
}

// readRepoFile returns the content of a file given relative to the root.
func readRepoFile(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(t), rel))
	if err != nil {
		t.Fatalf("read %s: %v", rel, err)
	}
	return string(b)
}

// loadOpts selects how loadProject reads the compose file.
type loadOpts struct {
	// dotEnv is written as .env next to the compose file; it feeds both
	// env_file and ${VAR} interpolation, as with docker compose.
	dotEnv string
	// profiles to activate.
	profiles []string
	// declaredOnly skips env_file resolution, so a service's Environment
	// holds only what the compose file itself declares.
	declaredOnly bool
	// compose replaces the content of docker-compose.yml when set.
	compose string
}

// loadProject loads the repository's compose file with compose-go from a
// scratch copy of the project directory, so a developer's real .env (or
// shell environment) can neither leak into nor change the result.
func loadProject(t *testing.T, o loadOpts) *types.Project {
	t.Helper()
	dir := t.TempDir()
	if o.compose == "" {
		o.compose = readRepoFile(t, composeFile)
	}
	files := map[string]string{
		composeFile:    o.compose,
		".env":         o.dotEnv,
		prometheusFile: readRepoFile(t, prometheusFile),
	}
	for rel, content := range files {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	fns := []cli.ProjectOptionsFn{
		cli.WithWorkingDirectory(dir),
		cli.WithEnvFiles(filepath.Join(dir, ".env")),
		cli.WithDotEnv,
		cli.WithProfiles(o.profiles),
	}
	if o.declaredOnly {
		fns = append(fns, cli.WithoutEnvironmentResolution)
	}
	opts, err := cli.NewProjectOptions([]string{filepath.Join(dir, composeFile)}, fns...)
	if err != nil {
		t.Fatal(err)
	}
	p, err := opts.LoadProject(context.Background())
	if err != nil {
		t.Fatalf("compose-go cannot load %s: %v", composeFile, err)
	}
	return p
}

// service returns an enabled service or fails the test.
func service(t *testing.T, p *types.Project, name string) types.ServiceConfig {
	t.Helper()
	s, err := p.GetService(name)
	if err != nil {
		t.Fatalf("service %q: %v", name, err)
	}
	return s
}

// rawEnv returns a getenv function over a service's resolved environment,
// exactly as the container sees it.
func rawEnv(s types.ServiceConfig) func(string) string {
	return func(k string) string {
		if v, ok := s.Environment[k]; ok && v != nil {
			return *v
		}
		return ""
	}
}

// envOf is rawEnv with /run/secrets/NAME pointing at placeholder secret
// files (see TestMain), so the config can load a service's settings here.
func envOf(s types.ServiceConfig) func(string) string {
	return inSecretsDir(rawEnv(s), placeholderSecrets)
}

// envLine matches an assignment in an env file, commented out or not.
var envLine = regexp.MustCompile(`^(#\s*)?([A-Z][A-Z0-9_]*)=(.*)$`)

// envEntry is one assignment found in .env.example.
type envEntry struct {
	name, value string
	commented   bool
}

// parseEnvExample lists the assignments of .env.example in file order.
// Commented-out assignments ("# NAME=value") are the optional settings.
func parseEnvExample(t *testing.T) []envEntry {
	t.Helper()
	var out []envEntry
	sc := bufio.NewScanner(strings.NewReader(readRepoFile(t, envExampleFile)))
	for sc.Scan() {
		m := envLine.FindStringSubmatch(strings.TrimSpace(sc.Text()))
		if m == nil {
			continue
		}
		out = append(out, envEntry{name: m[2], value: m[3], commented: m[1] != ""})
	}
	if len(out) == 0 {
		t.Fatalf("%s has no NAME=value lines", envExampleFile)
	}
	return out
}

// uncommentAll renders the entries as a .env with every optional setting
// switched on, with overrides replacing values by name.
func uncommentAll(entries []envEntry, overrides map[string]string) string {
	var b strings.Builder
	for _, e := range entries {
		v := e.value
		if o, ok := overrides[e.name]; ok {
			v = o
		}
		b.WriteString(e.name + "=" + v + "\n")
	}
	return b.String()
}

// settingNames returns the environment variables a binary reads.
func settingNames(settings []config.Setting) []string {
	names := make([]string, len(settings))
	for i, s := range settings {
		names[i] = s.Env
	}
	return names
}

// readBy maps each service running a Herald binary to the variables it reads.
func readBy() map[string][]string {
	return map[string][]string{
		svcProducer:      settingNames(settings.ProducerSettings()),
		svcWorker:        settingNames(settings.WorkerSettings()),
		svcProducerCheck: settingNames(settings.ProducerSettings()),
		svcWorkerCheck:   settingNames(settings.WorkerSettings()),
	}
}

// readByAny reports whether either binary reads name. The token variables
// of the bots other than "default" (HERALD_BOT_PAGES_TOKEN_FILE) have no
// row in the settings: the worker reads them for the bots HERALD_BOTS names.
func readByAny(name string) bool {
	for _, names := range readBy() {
		if slices.Contains(names, name) {
			return true
		}
	}
	return botTokenEnv.MatchString(name) && !strings.HasPrefix(name, "HERALD_BOT_DEFAULT_")
}

// botTokenEnv matches the token variables of a bot other than "default".
var botTokenEnv = regexp.MustCompile(`^HERALD_BOT_[A-Z][A-Z0-9_]*_TOKEN(?:_FILE)?$`)

// listenPort returns the port of a host:port listen address.
func listenPort(t *testing.T, addr string) string {
	t.Helper()
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatalf("listen address %q: %v", addr, err)
	}
	return port
}

// exampleEnv is .env.example as a user would first fill it in: every
// optional setting on. The tokens are not in it: they are secret files.
func exampleEnv(t *testing.T) string {
	t.Helper()
	return uncommentAll(parseEnvExample(t), nil)
}
