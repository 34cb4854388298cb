package e2e_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/herald-dev/herald/test/fleet"
	"github.com/herald-dev/herald/test/fleet/fleettest"
	"github.com/herald-dev/herald/test/redistest"
)

// Targets of the slow-client test (issue 13).
const (
	slowClients     = 400
	maxProducerRSS  = 100 << 20
	maxHoldTime     = 30 * time.Second
	maxAuthLatency  = time.Second
	slowClientToken = "slow-clients-api-token"
)

// TestSlowAndOversizedClients runs a producer process and opens 400
// unauthenticated connections at once against it: signed-webhook POSTs
// declaring 1 MiB bodies and sending them at full speed, bodies dripped a
// byte at a time, requests whose headers never end, and idle keep-alive
// connections. Meanwhile an authenticated client posts a message every
// 100 ms. The producer's peak RSS must stay within 100 MB, the server must
// close every attacking connection within 30 s, and every authenticated
// message must get its 202 within 1 s.
func TestSlowAndOversizedClients(t *testing.T) {
	if testing.Short() {
		t.Skip("takes about 30 s")
	}
	bins := fleettest.Binaries(t)
	srv := redistest.Start(t)
	port, err := redistest.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	dir := t.TempDir()
	p, err := fleet.Start("producer", bins.Producer, nil, []string{
		"REDIS_URL=" + srv.URL(), "HERALD_LISTEN=" + addr, "HERALD_API_TOKEN=" + slowClientToken,
		"HERALD_GITHUB_WEBHOOK_SECRET=slow-clients-github-secret", "LOG_LEVEL=error", "LOG_FORMAT=json",
	}, filepath.Join(dir, "producer.log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Kill)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	if err := p.WaitReady(ctx, "http://"+addr+"/readyz"); err != nil {
		t.Fatal(err)
	}
	before := vmRSS(t, p.Pid())

	// Sample the producer's RSS while the attack runs.
	var (
		mu       sync.Mutex
		peakSeen int64
	)
	sampleCtx, stopSampling := context.WithCancel(ctx)
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-sampleCtx.Done():
				return
			case <-tick.C:
				if rss := vmRSS(t, p.Pid()); rss > 0 {
					mu.Lock()
					peakSeen = max(peakSeen, rss)
					mu.Unlock()
				}
			}
		}
	}()

	kinds := []string{"oversized", "drip", "slow-headers", "idle"}
	holds := make([]time.Duration, slowClients)
	endings := make([]string, slowClients)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range slowClients {
		kind := kinds[i%len(kinds)]
		wg.Go(func() {
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				endings[i] = "dial: " + err.Error()
				return
			}
			defer conn.Close()
			<-start
			t0 := time.Now()
			endings[i] = kind + ": " + attack(ctx, conn, kind)
			holds[i] = time.Since(t0)
		})
	}
	close(start)

	// The authenticated client.
	var latencies []time.Duration
	var authErrs []string
	client := &http.Client{Timeout: 5 * time.Second}
	attackDone := make(chan struct{})
	go func() { wg.Wait(); close(attackDone) }()
	tick := time.NewTicker(100 * time.Millisecond)
	for n := 0; ; n++ {
		select {
		case <-attackDone:
		case <-tick.C:
			lat, err := postMessage(ctx, client, addr, n)
			if err != nil {
				authErrs = append(authErrs, err.Error())
			}
			latencies = append(latencies, lat)
			continue
		case <-ctx.Done():
			t.Fatal("the attack did not end within the test's deadline")
		}
		break
	}
	tick.Stop()
	stopSampling()
	<-sampled
	if err := p.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	_ = p.Wait(ctx)
	peak := p.PeakRSS()

	slices.Sort(latencies)
	byKind := map[string]time.Duration{}
	for i, h := range holds {
		k := kinds[i%len(kinds)]
		byKind[k] = max(byKind[k], h)
	}
	ends := map[string]int{}
	for _, e := range endings {
		ends[e]++
	}
	t.Logf("producer RSS: %.1f MiB before, %.1f MiB highest sampled, %.1f MiB peak (maxrss)",
		mib(before), mib(peakSeen), mib(peak))
	t.Logf("longest hold by kind (100 connections each): %v", byKind)
	t.Logf("how the attacking connections ended: %v", ends)
	t.Logf("authenticated POST /v1/messages during the attack: %d requests, p50 %v, p99 %v, max %v, %d errors",
		len(latencies), latencies[len(latencies)/2], latencies[len(latencies)*99/100], latencies[len(latencies)-1], len(authErrs))

	if peak > maxProducerRSS {
		t.Errorf("producer peak RSS %.1f MiB, want at most %.0f MiB", mib(peak), mib(maxProducerRSS))
	}
	for k, h := range byKind {
		if h > maxHoldTime {
			t.Errorf("a %s connection was held %v, want closed within %v", k, h, maxHoldTime)
		}
	}
	for _, e := range endings {
		if !strings.Contains(e, "closed") {
			t.Errorf("an attacking connection was not closed by the server: %s", e)
			break
		}
	}
	if len(authErrs) > 0 {
		t.Errorf("authenticated requests failed: %q", authErrs[:min(5, len(authErrs))])
	}
	if worst := latencies[len(latencies)-1]; worst > maxAuthLatency {
		t.Errorf("slowest authenticated 202 took %v, want within %v", worst, maxAuthLatency)
	}
}

// attack runs one attacking connection until the server closes it, and
// says how it ended.
func attack(ctx context.Context, conn net.Conn, kind string) string {
	sig := make([]byte, 32)
	_, _ = rand.Read(sig)
	head := func(length int) string {
		return fmt.Sprintf("POST /v1/webhooks/github HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"+
			"X-GitHub-Event: issues\r\nX-GitHub-Delivery: d\r\nX-Hub-Signature-256: sha256=%s\r\nContent-Length: %d\r\n\r\n",
			hex.EncodeToString(sig), length)
	}
	closed := make(chan string, 1)
	go func() {
		// Whatever the server answers, the connection ends when it closes.
		br := bufio.NewReader(conn)
		status := "no answer"
		for {
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				closed <- status + ", closed"
				return
			}
			status = strconv.Itoa(resp.StatusCode)
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}()
	switch kind {
	case "oversized":
		// 1 MiB declared and sent at full speed.
		_, _ = conn.Write([]byte(head(1 << 20)))
		_, _ = conn.Write(bytes.Repeat([]byte("a"), 1<<20))
	case "drip":
		// 100 KiB declared (under the limit), one byte every 500 ms.
		_, _ = conn.Write([]byte(head(100 << 10)))
		return drip(ctx, conn, closed, []byte("a"), 500*time.Millisecond)
	case "slow-headers":
		_, _ = conn.Write([]byte("POST /v1/webhooks/github HTTP/1.1\r\nHost: 127.0.0.1\r\n"))
		return drip(ctx, conn, closed, []byte("X-A: b\r\n"), 500*time.Millisecond)
	case "idle":
		_, _ = conn.Write([]byte("GET /livez HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"))
	}
	select {
	case s := <-closed:
		return s
	case <-ctx.Done():
		return "still open at the deadline"
	}
}

// drip writes chunk every interval until the server closes the connection.
func drip(ctx context.Context, conn net.Conn, closed <-chan string, chunk []byte, interval time.Duration) string {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case s := <-closed:
			return s
		case <-ctx.Done():
			return "still open at the deadline"
		case <-tick.C:
			_, _ = conn.Write(chunk)
		}
	}
}

// postMessage posts one authenticated message and returns how long the 202
// took.
func postMessage(ctx context.Context, client *http.Client, addr string, n int) (time.Duration, error) {
	body := fmt.Sprintf(`{"chat":"42","text":"during the attack %d"}`, n)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+"/v1/messages", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+slowClientToken)
	t0 := time.Now()
	resp, err := client.Do(req)
	lat := time.Since(t0)
	if err != nil {
		return lat, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		return lat, fmt.Errorf("status %d", resp.StatusCode)
	}
	return lat, nil
}

// vmRSS reads a process's current resident set size; 0 once it is gone.
func vmRSS(t *testing.T, pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Errorf("parse VmRSS %q: %v", line, err)
				return 0
			}
			return kb << 10
		}
	}
	return 0
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }
