package amsilence

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/herald-dev/herald/test/redistest"
)

// startAlertmanager runs Debian's prometheus-alertmanager on a loopback
// port and returns its URL. Without the binary the test skips, unless
// HERALD_REQUIRE_ALERTMANAGER is set.
func startAlertmanager(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("prometheus-alertmanager")
	if err != nil {
		if bin, err = exec.LookPath("alertmanager"); err != nil {
			if os.Getenv("HERALD_REQUIRE_ALERTMANAGER") != "" {
				t.Fatal("alertmanager is not installed and HERALD_REQUIRE_ALERTMANAGER is set")
			}
			t.Skip("alertmanager is not installed (apt-get install prometheus-alertmanager)")
		}
	}
	dir := t.TempDir()
	cfg := filepath.Join(dir, "am.yml")
	if err := os.WriteFile(cfg, []byte("route: {receiver: none}\nreceivers: [{name: none}]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	port, err := redistest.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	cmd := exec.Command(bin, "--config.file="+cfg, "--storage.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--cluster.listen-address=", "--log.level=warn")
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	url := "http://" + addr
	for deadline := time.Now().Add(20 * time.Second); ; {
		if resp, err := http.Get(url + "/-/ready"); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return url
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("alertmanager did not become ready:\n%s", logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestCreateAndFindInRealAlertmanager: the silence Create makes is the
// one Alertmanager's API lists, with its matchers, and Find finds it by
// its comment.
func TestCreateAndFindInRealAlertmanager(t *testing.T) {
	t.Parallel()
	base := startAlertmanager(t)
	ctx := context.Background()
	var c Client
	now := time.Now()
	id, err := c.Create(ctx, base+"/", Silence{
		Matchers: []Matcher{{Name: "alertname", Value: "DiskFull"}, {Name: "instance", Value: "db-1"}},
		StartsAt: now, EndsAt: now.Add(4 * time.Hour), CreatedBy: "@alice (Telegram)", Comment: "acknowledged in Telegram, press 42",
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := c.Find(ctx, base, "acknowledged in Telegram, press 42"); err != nil || got != id {
		t.Fatalf("Find = %q, %v; want %q", got, err, id)
	}
	if got, err := c.Find(ctx, base, "another press"); err != nil || got != "" {
		t.Fatalf("Find of another comment = %q, %v", got, err)
	}
	resp, err := http.Get(base + "/api/v2/silence/" + id)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var s struct {
		Matchers  []apiMatcher `json:"matchers"`
		CreatedBy string       `json:"createdBy"`
		Status    struct{ State string }
	}
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil {
		t.Fatal(err)
	}
	if len(s.Matchers) != 2 || s.Matchers[1] != (apiMatcher{Name: "instance", Value: "db-1", IsEqual: true}) ||
		s.CreatedBy != "@alice (Telegram)" || s.Status.State != "active" {
		t.Fatalf("alertmanager holds %+v", s)
	}
	if _, err := c.Create(ctx, base, Silence{StartsAt: now, EndsAt: now.Add(time.Hour), CreatedBy: "x", Comment: "no matchers"}); err == nil {
		t.Fatal("a silence without matchers was accepted")
	}
}
