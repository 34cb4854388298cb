package deploy

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/compose-spec/compose-go/v2/types"

	"github.com/herald-dev/herald/internal/app"
	"github.com/herald-dev/herald/internal/httpapi"
	"github.com/herald-dev/herald/internal/settings"
)

// Compose secrets and where the containers find them.
const (
	secretBot      = "telegram_bot_token"
	secretAPI      = "herald_api_token"
	secretAdmin    = "herald_admin_token"
	runSecrets     = "/run/secrets/"
	initSecrets    = "deploy/init-secrets.sh"
	containerUser  = 65532
	exampleBotTok  = "1234567890:AAEexampleexampleexampleexample_-01"
	secretFileMode = 0o644
)

// inSecretsDir rewrites /run/secrets/NAME in a service's environment to
// dir/NAME, standing in for compose's mounts.
func inSecretsDir(getenv func(string) string, dir string) func(string) string {
	return func(k string) string {
		v := getenv(k)
		if strings.HasPrefix(v, runSecrets) {
			return filepath.Join(dir, strings.TrimPrefix(v, runSecrets))
		}
		return v
	}
}

func secretSources(s types.ServiceConfig) []string {
	var out []string
	for _, sec := range s.Secrets {
		out = append(out, sec.Source)
	}
	slices.Sort(out)
	return out
}

// TestEachContainerHoldsOnlyItsSecrets: the producer faces the internet and
// never holds the bot token; the workers never hold the API or the admin
// token; each _FILE setting points at a secret its service mounts (issue 14).
func TestEachContainerHoldsOnlyItsSecrets(t *testing.T) {
	t.Parallel()
	p := loadProject(t, loadOpts{dotEnv: exampleEnv(t), profiles: []string{"monitoring", "feeds"}})
	want := map[string][]string{
		svcProducer: {secretAdmin, secretAPI}, svcProducerCheck: {secretAdmin, secretAPI},
		svcWorker: {secretBot}, svcWorkerCheck: {secretBot},
		svcFeeds: nil, svcPrometheus: nil, svcRedis: nil,
	}
	for name, secrets := range want {
		s := service(t, p, name)
		if got := secretSources(s); !slices.Equal(got, secrets) {
			t.Errorf("%s mounts secrets %v, want %v", name, got, secrets)
		}
		getenv := rawEnv(s)
		if name == svcProducer || name == svcProducerCheck || name == svcFeeds {
			for _, env := range []string{settings.EnvTelegramToken, settings.EnvTelegramTokenFile} {
				if getenv(env) != "" {
					t.Errorf("%s has %s set; the producer must never hold the bot token", name, env)
				}
			}
		}
	}
	for svc, files := range map[string][]string{
		svcProducer:      {httpapi.EnvAPITokenFile, httpapi.EnvAdminTokenFile},
		svcProducerCheck: {httpapi.EnvAPITokenFile, httpapi.EnvAdminTokenFile},
		svcWorker:        {settings.EnvTelegramTokenFile}, svcWorkerCheck: {settings.EnvTelegramTokenFile},
	} {
		s := service(t, p, svc)
		for _, file := range files {
			path := rawEnv(s)(file)
			if !slices.Contains(secretSources(s), strings.TrimPrefix(path, runSecrets)) || !strings.HasPrefix(path, runSecrets) {
				t.Errorf("%s: %s=%q is not one of its mounted secrets %v under %s", svc, file, path, secretSources(s), runSecrets)
			}
		}
	}
	for name, sec := range p.Secrets {
		if sec.File == "" || !strings.Contains(filepath.ToSlash(sec.File), "/secrets/") {
			t.Errorf("secret %s comes from %q; want a file under ./secrets (git-ignored)", name, sec.File)
		}
		if strings.Contains(filepath.ToSlash(sec.File), "/deploy/") {
			t.Errorf("secret %s lives under ./deploy, which the producer mounts whole", name)
		}
	}
	for _, f := range []string{".gitignore", dockerignore} {
		if !strings.Contains(readRepoFile(t, f), "secrets/") {
			t.Errorf("%s does not exclude secrets/", f)
		}
	}
}

// TestInitChecksGuardTheServices: the producer and the workers start only
// after their check exited 0, and each check sees exactly its service's
// settings and secrets, so `docker compose up` fails visibly instead of a
// restart loop when a secret is missing (issue 14).
func TestInitChecksGuardTheServices(t *testing.T) {
	t.Parallel()
	p := loadProject(t, loadOpts{dotEnv: exampleEnv(t)})
	for svc, check := range guardedBy {
		s, c := service(t, p, svc), service(t, p, check)
		dep, ok := s.DependsOn[check]
		if !ok || dep.Condition != types.ServiceConditionCompletedSuccessfully {
			t.Errorf("%s depends on %s with %+v; want condition %s", svc, check, dep, types.ServiceConditionCompletedSuccessfully)
		}
		if !slices.Equal(c.Command, types.ShellCommand{"check"}) {
			t.Errorf("%s command = %q, want [check]", check, c.Command)
		}
		if c.Build == nil || s.Build == nil || c.Build.Target != s.Build.Target {
			t.Errorf("%s builds %+v, want the same target as %s", check, c.Build, svc)
		}
		if c.NetworkMode != "none" {
			t.Errorf("%s network_mode = %q; a check needs no network", check, c.NetworkMode)
		}
		for k := range s.Environment {
			if envOf(s)(k) != envOf(c)(k) {
				t.Errorf("%s sees %s=%q, %s sees %q; the check must see its service's settings", check, k, envOf(c)(k), svc, envOf(s)(k))
			}
		}
		for k := range c.Environment {
			if _, ok := s.Environment[k]; !ok {
				t.Errorf("%s sets %s, which %s does not", check, k, svc)
			}
		}
		if !slices.Equal(secretSources(s), secretSources(c)) {
			t.Errorf("%s mounts %v, %s mounts %v", check, secretSources(c), svc, secretSources(s))
		}
		bin := filepath.Base(roles[svc])
		if !slices.Contains(subcommands(t, filepath.Join("cmd", bin)), "check") {
			t.Errorf("cmd/%s does not know the check subcommand", bin)
		}
	}
}

// writeSecrets runs deploy/init-secrets.sh into dir/secrets, as a user
// would, with a strict umask.
func writeSecrets(t *testing.T, dir string, extraEnv ...string) (string, []byte) {
	t.Helper()
	secrets := filepath.Join(dir, "secrets")
	cmd := exec.Command("sh", filepath.Join(repoRoot(t), initSecrets), secrets)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "TELEGRAM_BOT_TOKEN=" + exampleBotTok}, extraEnv...)
	cmd.Stdin = nil
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", initSecrets, err, out)
	}
	return secrets, out
}

// TestInitSecretsWritesWorkingSecrets: the script's files pass both checks
// with the compose settings, have the modes the docs promise, are kept on
// a second run, and never appear in its output.
func TestInitSecretsWritesWorkingSecrets(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	secrets, out := writeSecrets(t, t.TempDir())
	if strings.Contains(string(out), exampleBotTok) {
		t.Error("init-secrets printed the bot token")
	}
	st, err := os.Stat(secrets)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o700 {
		t.Errorf("%s mode %v, want 0700 (other host users stay out)", secrets, st.Mode().Perm())
	}
	api := map[string]string{}
	for _, name := range []string{secretBot, secretAPI, secretAdmin} {
		f := filepath.Join(secrets, name)
		st, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != secretFileMode {
			t.Errorf("%s mode %v, want %o: compose mounts the file as it is, and uid %d must read it", f, st.Mode().Perm(), secretFileMode, containerUser)
		}
		b, _ := os.ReadFile(f)
		api[name] = strings.TrimSpace(string(b))
	}
	if api[secretBot] != exampleBotTok {
		t.Errorf("bot token file does not hold the given token")
	}
	for _, name := range []string{secretAPI, secretAdmin} {
		if !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(api[name]) {
			t.Errorf("%s: %d characters, want 64 hex digits", name, len(api[name]))
		}
		if strings.Contains(string(out), api[name]) {
			t.Errorf("init-secrets printed %s", name)
		}
	}
	if api[secretAPI] == api[secretAdmin] {
		t.Error("the API token and the admin token are the same")
	}
	// It says what each generated token is for, on stderr.
	for _, want := range []string{secretAPI + " (for senders", secretAdmin + " (for operators", "silences"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("init-secrets output does not say %q:\n%s", want, out)
		}
	}
	// A second run keeps every file.
	writeSecrets(t, filepath.Dir(secrets), "TELEGRAM_BOT_TOKEN=9999999:other")
	for name, v := range api {
		if b, _ := os.ReadFile(filepath.Join(secrets, name)); strings.TrimSpace(string(b)) != v {
			t.Errorf("a second run replaced %s", name)
		}
	}

	// Both checks pass with the compose settings and these files.
	p := loadProject(t, loadOpts{dotEnv: readRepoFile(t, envExampleFile)})
	penv := inSecretsDir(rawEnv(service(t, p, svcProducerCheck)), secrets)
	pcfg, err := settings.LoadProducer(nil, penv)
	if err != nil {
		t.Fatal(err)
	}
	if err := app.CheckProducer(pcfg, penv); err != nil {
		t.Errorf("producer check: %v", err)
	}
	wcfg, err := settings.LoadWorker(nil, inSecretsDir(rawEnv(service(t, p, svcWorkerCheck)), secrets))
	if err != nil {
		t.Fatal(err)
	}
	if err := app.CheckWorker(wcfg); err != nil {
		t.Errorf("worker check: %v", err)
	}
}

// TestSecretFilesReadableByTheContainerUser reads the script's file as uid
// 65532 through a hard link in an open directory: the same inode, owner
// and mode a compose bind mount shows at /run/secrets. A 0600 file is the
// control: it must be refused, or the test proves nothing. Needs root.
func TestSecretFilesReadableByTheContainerUser(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("needs root to run a process as uid 65532")
	}
	cat, err := exec.LookPath("cat")
	if err != nil {
		t.Skip("no cat")
	}
	work, err := os.MkdirTemp("", "herald-secrets-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(work) })
	secrets, _ := writeSecrets(t, work)
	mount, err := os.MkdirTemp("", "herald-run-secrets-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(mount) })
	if err := os.Chmod(mount, 0o755); err != nil {
		t.Fatal(err)
	}
	control := filepath.Join(work, "control")
	if err := os.WriteFile(control, []byte("x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	readAs := func(name, src string) error {
		link := filepath.Join(mount, name)
		if err := os.Link(src, link); err != nil {
			t.Skipf("hard link: %v", err)
		}
		cmd := exec.Command(cat, link)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: containerUser, Gid: containerUser}}
		return cmd.Run()
	}
	if err := readAs("control", control); err == nil {
		t.Fatal("uid 65532 read a 0600 root file; the test cannot tell readable from unreadable")
	}
	for _, name := range []string{secretBot, secretAPI, secretAdmin} {
		if err := readAs(name, filepath.Join(secrets, name)); err != nil {
			t.Errorf("uid %d cannot read %s as compose mounts it: %v", containerUser, name, err)
		}
	}
}

// TestProducerCheckRefusesTheBotToken: a bot token put into .env reaches
// the producer too; its check refuses to start it.
func TestProducerCheckRefusesTheBotToken(t *testing.T) {
	t.Parallel()
	secrets, _ := writeSecrets(t, t.TempDir())
	for _, env := range []string{settings.EnvTelegramToken, settings.EnvTelegramTokenFile} {
		p := loadProject(t, loadOpts{dotEnv: readRepoFile(t, envExampleFile) + env + "=x\n"})
		getenv := inSecretsDir(rawEnv(service(t, p, svcProducerCheck)), secrets)
		cfg, err := settings.LoadProducer(nil, getenv)
		if err != nil {
			t.Fatal(err)
		}
		if err := app.CheckProducer(cfg, getenv); err == nil || !strings.Contains(err.Error(), env) {
			t.Errorf("producer check with %s in .env: %v; want a refusal naming it", env, err)
		}
	}
}

// exactVersion matches a tag that names one release (7.4.6-alpine, v3.5.0,
// 1.26.11), not a moving line (7-alpine, latest, 1.26).
var exactVersion = regexp.MustCompile(`:v?\d+\.\d+\.\d+([-.][A-Za-z0-9.]+)?(@|$)`)

// digest matches a pinned manifest digest.
var digest = regexp.MustCompile(`@sha256:[0-9a-f]{64}$`)

// TestImagesArePinned: every image is an exact version; those from
// registries we cannot rebuild are pinned by digest too (the Go builder's
// digest is to be added as docs/COMPOSE.md says, its version follows go.mod).
func TestImagesArePinned(t *testing.T) {
	t.Parallel()
	p := loadProject(t, loadOpts{dotEnv: exampleEnv(t), profiles: []string{"monitoring", "feeds"}})
	for _, s := range p.Services {
		if s.Image == "" {
			continue // built from the Dockerfile
		}
		if !exactVersion.MatchString(s.Image) || !digest.MatchString(s.Image) {
			t.Errorf("%s image %q is not pinned to an exact version and a digest", s.Name, s.Image)
		}
	}
	stages := parseDockerfile(t, readRepoFile(t, dockerfile))
	gomod := readRepoFile(t, "go.mod")
	want := regexp.MustCompile(`(?m)^toolchain go(\S+)`).FindStringSubmatch(gomod)
	if want == nil {
		want = regexp.MustCompile(`(?m)^go (\S+)`).FindStringSubmatch(gomod)
	}
	for _, st := range stages {
		if _, internal := find(stages, st.base); internal {
			continue
		}
		switch {
		case strings.HasPrefix(st.base, "golang:"):
			if tag := strings.TrimPrefix(strings.Split(st.base, "@")[0], "golang:"); want == nil || strings.Split(tag, "-")[0] != want[1] {
				t.Errorf("builder %q; want golang:%s (go.mod's toolchain), so images build with the Go that was tested", st.base, want[1])
			}
		case strings.HasPrefix(st.base, "gcr.io/distroless/"):
			if !digest.MatchString(st.base) {
				t.Errorf("runtime base %q has no digest; distroless tags move, only a digest pins them", st.base)
			}
		default:
			if !exactVersion.MatchString(st.base) {
				t.Errorf("base %q is not an exact version", st.base)
			}
		}
	}
}
