package deploy

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/httpapi"
	"github.com/herald-dev/herald/internal/settings"
)

// composeDoc is the user guide for the compose deployment.
const composeDoc = "docs/COMPOSE.md"

// seconds renders a duration as the guide writes it, e.g. "25 s".
func seconds(d time.Duration) string {
	return fmt.Sprintf("%d s", int(d.Seconds()))
}

func TestComposeDocMatchesTheComposeFile(t *testing.T) {
	t.Parallel()
	doc := readRepoFile(t, composeDoc)
	p := loadProject(t, loadOpts{dotEnv: exampleEnv(t)})
	w := service(t, p, svcWorker)
	cfg, err := settings.LoadWorker(nil, envOf(w))
	if err != nil {
		t.Fatal(err)
	}
	var grace time.Duration
	if w.StopGracePeriod != nil {
		grace = time.Duration(*w.StopGracePeriod)
	}
	want := []string{
		"`HERALD_SHUTDOWN_TIMEOUT` (" + seconds(cfg.Worker.ShutdownTimeout) + ")",
		"`stop_grace_period` (" + seconds(grace) + ")",
		"--scale " + svcWorker + "=",
		"--profile monitoring",
	}
	// The secrets, the checks and the pinned versions as the file has them.
	want = append(want, initSecrets, "docker compose ps", "`"+svcProducerCheck+"`", "`"+svcWorkerCheck+"`",
		"service_completed_successfully", "0644", "65532",
		// Which token does what, and the upgrade step for installs
		// written before the admin token existed.
		"`"+httpapi.EnvAdminTokenFile+"`", "`"+httpapi.EnvTokensFile+"`",
		"bind source path does not exist", "Upgrading from a version without the admin token")
	for name := range p.Secrets {
		want = append(want, "`"+name+"`")
	}
	for _, name := range []string{svcRedis} {
		tag := strings.Split(strings.Split(service(t, p, name).Image, "@")[0], ":")[1]
		want = append(want, "`"+tag+"`")
	}
	for _, r := range service(t, p, svcRedis).Volumes {
		if r.Target == "/data" {
			want = append(want, "`"+p.Name+"_"+r.Source+"`")
		}
	}
	for _, s := range want {
		if !strings.Contains(doc, s) {
			t.Errorf("%s does not say %q; update it to match %s", composeDoc, s, composeFile)
		}
	}
}
