package deploy

import (
	"encoding/json"
	"path"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// instruction is one Dockerfile instruction with continuations joined.
type instruction struct {
	cmd  string // upper-case keyword, e.g. "RUN"
	args string // the rest of the line
}

// stage is one FROM section of a Dockerfile.
type stage struct {
	base  string // image or earlier stage name, ARGs substituted
	name  string // the AS name, or ""
	instr []instruction
}

// parseDockerfile splits a Dockerfile into stages. It understands what this
// repository's Dockerfile uses: comments, line continuations, global ARG
// defaults referenced in FROM lines, and FROM flags such as --platform.
func parseDockerfile(t *testing.T, text string) []stage {
	t.Helper()
	var lines []string
	var cur strings.Builder
	for _, raw := range strings.Split(text, "\n") {
		l := strings.TrimSpace(raw)
		if strings.HasPrefix(l, "#") || (l == "" && cur.Len() == 0) {
			continue
		}
		if strings.HasSuffix(l, `\`) {
			cur.WriteString(strings.TrimSuffix(l, `\`) + " ")
			continue
		}
		cur.WriteString(l)
		lines = append(lines, cur.String())
		cur.Reset()
	}
	args := map[string]string{}
	var stages []stage
	for _, l := range lines {
		kw, rest, _ := strings.Cut(l, " ")
		in := instruction{cmd: strings.ToUpper(kw), args: strings.TrimSpace(rest)}
		switch {
		case in.cmd == "ARG" && len(stages) == 0:
			k, v, _ := strings.Cut(in.args, "=")
			args[k] = v
		case in.cmd == "FROM":
			f := strings.Fields(in.args)
			for len(f) > 0 && strings.HasPrefix(f[0], "--") {
				f = f[1:]
			}
			if len(f) == 0 {
				t.Fatalf("FROM without an image: %q", l)
			}
			s := stage{base: expandArgs(f[0], args)}
			if len(f) == 3 && strings.EqualFold(f[1], "AS") {
				s.name = f[2]
			}
			stages = append(stages, s)
		case len(stages) == 0:
			t.Fatalf("instruction before the first FROM: %q", l)
		default:
			stages[len(stages)-1].instr = append(stages[len(stages)-1].instr, in)
		}
	}
	return stages
}

// argRef matches ${NAME} and $NAME.
var argRef = regexp.MustCompile(`\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?`)

// expandArgs substitutes ARG defaults into s.
func expandArgs(s string, args map[string]string) string {
	return argRef.ReplaceAllStringFunc(s, func(m string) string {
		return args[argRef.FindStringSubmatch(m)[1]]
	})
}

// find returns the stage named name.
func find(stages []stage, name string) (stage, bool) {
	for _, s := range stages {
		if s.name == name {
			return s, true
		}
	}
	return stage{}, false
}

// chain returns the stage named name followed by the stages it derives from,
// ending with the one built on an external image.
func chain(t *testing.T, stages []stage, name string) []stage {
	t.Helper()
	s, ok := find(stages, name)
	if !ok {
		t.Fatalf("%s has no stage %q", dockerfile, name)
	}
	out := []stage{s}
	for {
		parent, ok := find(stages, out[len(out)-1].base)
		if !ok {
			return out
		}
		out = append(out, parent)
	}
}

// last returns the last argument of the last instruction cmd in a chain,
// searching from the most derived stage.
func last(c []stage, cmd string) (string, bool) {
	for _, s := range c {
		for i := len(s.instr) - 1; i >= 0; i-- {
			if s.instr[i].cmd == cmd {
				return s.instr[i].args, true
			}
		}
	}
	return "", false
}

// execForm decodes a JSON-array (exec form) argument list.
func execForm(t *testing.T, what, s string) []string {
	t.Helper()
	var argv []string
	if err := json.Unmarshal([]byte(s), &argv); err != nil {
		t.Errorf("%s %s is not in exec form (a JSON array); the image has no shell", what, s)
		return nil
	}
	return argv
}

// roles maps each role target to its binary inside the image.
var roles = map[string]string{
	svcProducer: "/usr/local/bin/producer",
	svcWorker:   "/usr/local/bin/worker",
}

func TestDockerfileBuildStage(t *testing.T) {
	t.Parallel()
	stages := parseDockerfile(t, readRepoFile(t, dockerfile))
	if len(stages) < 2 {
		t.Fatalf("%s has %d stage(s); want a multi-stage build", dockerfile, len(stages))
	}
	goVersion := regexp.MustCompile(`(?m)^go (\d+\.\d+)`).FindStringSubmatch(readRepoFile(t, "go.mod"))
	if goVersion == nil {
		t.Fatal("go.mod has no go directive")
	}
	builder := stages[0]
	if want := "golang:" + goVersion[1]; !strings.HasPrefix(builder.base, want) {
		t.Errorf("builder image = %q, want %s* (go.mod says go %s)", builder.base, want, goVersion[1])
	}
	var build string
	for _, in := range builder.instr {
		if in.cmd == "RUN" && strings.Contains(in.args, "go build") {
			build = in.args
		}
	}
	if build == "" {
		t.Fatal("the builder stage runs no `go build`")
	}
	for _, want := range []string{
		"CGO_ENABLED=0", "-trimpath", "-s -w", "./cmd/producer", "./cmd/worker",
		"--mount=type=cache,target=/go/pkg/mod", "--mount=type=cache,target=/root/.cache/go-build",
	} {
		if !strings.Contains(build, want) {
			t.Errorf("go build step lacks %q: %s", want, build)
		}
	}
}

func TestDockerfileRuntimeImages(t *testing.T) {
	t.Parallel()
	stages := parseDockerfile(t, readRepoFile(t, dockerfile))
	builder := stages[0].name
	if final := stages[len(stages)-1].name; final != svcProducer {
		t.Errorf("the last stage (a plain `docker build`) is %q, want %q", final, svcProducer)
	}
	for role, bin := range roles {
		c := chain(t, stages, role)
		root := c[len(c)-1].base
		if !strings.HasPrefix(root, "gcr.io/distroless/static") && root != "scratch" {
			t.Errorf("%s image is based on %q; want distroless static or scratch", role, root)
		}
		if strings.HasPrefix(root, "gcr.io/distroless/static") && !strings.HasSuffix(strings.Split(root, "@")[0], ":nonroot") {
			t.Errorf("%s base %q should be the :nonroot variant", role, root)
		}
		user, ok := last(c, "USER")
		switch {
		case !ok:
			t.Errorf("%s image sets no USER; it would run as root", role)
		case !nonRoot(user):
			t.Errorf("%s image runs as USER %q; want nonroot or a non-zero uid", role, user)
		}
		// Both binaries are in every image.
		copied := map[string]bool{}
		for _, s := range c {
			for _, in := range s.instr {
				if in.cmd != "COPY" || !strings.Contains(in.args, "--from="+builder) {
					continue
				}
				f := strings.Fields(in.args)
				copied[f[len(f)-1]] = true
			}
		}
		for _, want := range roles {
			if !copied[want] && !copied[path.Dir(want)+"/"] {
				t.Errorf("%s image does not copy %s from the %s stage (copies %v)", role, want, builder, keys(copied))
			}
		}
		entry, ok := last(c, "ENTRYPOINT")
		if !ok {
			t.Errorf("%s image has no ENTRYPOINT", role)
		} else if argv := execForm(t, role+" ENTRYPOINT", entry); len(argv) > 0 && !slices.Equal(argv, []string{bin}) {
			t.Errorf("%s ENTRYPOINT = %q, want [%s]", role, argv, bin)
		}
		hc, ok := last(c, "HEALTHCHECK")
		if !ok {
			t.Errorf("%s image has no HEALTHCHECK", role)
			continue
		}
		_, cmd, found := strings.Cut(hc, " CMD ")
		if !found {
			t.Errorf("%s HEALTHCHECK %q has no CMD", role, hc)
			continue
		}
		if argv := execForm(t, role+" HEALTHCHECK", strings.TrimSpace(cmd)); len(argv) > 0 && !slices.Equal(argv, []string{bin, "healthcheck"}) {
			t.Errorf("%s HEALTHCHECK = %q, want [%s healthcheck]", role, argv, bin)
		}
	}
}

// nonRoot reports whether a USER value names an unprivileged user.
func nonRoot(user string) bool {
	u, _, _ := strings.Cut(user, ":")
	return u != "" && u != "root" && u != "0"
}

func TestComposeUsesTheDockerfileRoles(t *testing.T) {
	t.Parallel()
	stages := parseDockerfile(t, readRepoFile(t, dockerfile))
	p := loadProject(t, loadOpts{dotEnv: exampleEnv(t)})
	for role, bin := range roles {
		s := service(t, p, role)
		if s.Build == nil {
			t.Errorf("%s has no build section", role)
			continue
		}
		if _, ok := find(stages, s.Build.Target); !ok {
			t.Errorf("%s builds target %q, which %s does not define", role, s.Build.Target, dockerfile)
		}
		if hc := s.HealthCheck; hc == nil || len(hc.Test) < 2 || hc.Test[1] != bin {
			t.Errorf("%s health check does not run %s: %+v", role, bin, hc)
		}
	}
}
