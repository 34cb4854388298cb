package alertmanagertest

import (
	"bytes"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// Alertmanager is a real Alertmanager running for one test.
type Alertmanager struct {
	// URL is its base URL, http://127.0.0.1:<port>.
	URL string
}

// readyWithin bounds how long Start waits for /-/ready.
const readyWithin = 20 * time.Second

// Start runs Binary with config (alertmanager.yml's text) on the loopback
// port (0: a free one) until the test ends, and returns once it answers
// /-/ready. Its log is shown when the test fails.
func Start(tb testing.TB, config string, port int) *Alertmanager {
	tb.Helper()
	bin := Binary(tb)
	dir := tb.TempDir()
	file := filepath.Join(dir, "alertmanager.yml")
	if err := os.WriteFile(file, []byte(config), 0o600); err != nil {
		tb.Fatal(err)
	}
	if port == 0 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			tb.Fatal(err)
		}
		port = l.Addr().(*net.TCPAddr).Port
		_ = l.Close()
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	logPath := filepath.Join(dir, "alertmanager.log")
	logf, err := os.Create(logPath)
	if err != nil {
		tb.Fatal(err)
	}
	cmd := exec.Command(bin, "--config.file="+file, "--storage.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--cluster.listen-address=", "--log.level=debug")
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	logs := func() string {
		b, _ := os.ReadFile(logPath)
		if len(b) > 6000 {
			b = b[len(b)-6000:]
		}
		return string(b)
	}
	tb.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		_ = logf.Close()
		if tb.Failed() {
			tb.Logf("alertmanager's log (its end):\n%s", logs())
		}
	})
	am := &Alertmanager{URL: "http://" + addr}
	for deadline := time.Now().Add(readyWithin); ; {
		if resp, err := http.Get(am.URL + "/-/ready"); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return am
			}
		}
		if time.Now().After(deadline) {
			tb.Fatalf("alertmanager did not become ready within %v", readyWithin)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// PostAlerts posts alerts (JSON text, or a value to encode) to the API
// v2's /api/v2/alerts, as Prometheus does; anything but 200 fails the
// test.
func (am *Alertmanager) PostAlerts(tb testing.TB, alerts any) {
	tb.Helper()
	var body []byte
	switch v := alerts.(type) {
	case string:
		body = []byte(v)
	case []byte:
		body = v
	default:
		var err error
		if body, err = json.Marshal(v); err != nil {
			tb.Fatal(err)
		}
	}
	resp, err := http.Post(am.URL+"/api/v2/alerts", "application/json", bytes.NewReader(body))
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		var b bytes.Buffer
		_, _ = b.ReadFrom(resp.Body)
		tb.Fatalf("POST /api/v2/alerts: %s %s", resp.Status, b.String())
	}
}
