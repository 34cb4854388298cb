package local_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/local"
	"github.com/herald-dev/herald/internal/statushook"
)

// endpointState asks a local Herald for an endpoint's state and secret.
func endpointState(t *testing.T, m *localMode, hook string) statushook.EndpointState {
	t.Helper()
	resp, err := http.Get(m.ep.API + "/v1/callbacks/endpoint?url=" + url.QueryEscape(hook))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var s statushook.EndpointState
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /v1/callbacks/endpoint: %s, %v", resp.Status, err)
	}
	return s
}

// TestLocalModeCallbacksOutOfTheBox: without any callback setting, local
// mode has callbacks on, with a master key of its run (printed nowhere)
// and receivers on this machine allowed; the banner says how to get a
// receiver's secret.
func TestLocalModeCallbacksOutOfTheBox(t *testing.T) {
	m := startLocal(t)
	s := endpointState(t, m, "http://127.0.0.1:9000/hook?token=x")
	if s.State != statushook.StateHealthy || !strings.HasPrefix(s.Secret, statushook.SecretPrefix) || s.Endpoint != "http://127.0.0.1:9000/hook" {
		t.Fatalf("endpoint state %+v", s)
	}
	if !strings.Contains(m.banner.String(), "/v1/callbacks/endpoint?url=") || strings.Contains(m.banner.String(), s.Secret) {
		t.Errorf("banner:\n%s", m.banner.String())
	}
	if err := m.stop(); err != nil {
		t.Fatal(err)
	}
	// A second run makes another key.
	if again := endpointState(t, startLocal(t), "http://127.0.0.1:9000/hook"); again.Secret == s.Secret {
		t.Error("two runs signed with the same secret")
	}
}

// TestLocalModeDeliversCallbacks: an event emitted into local mode's Redis
// reaches a receiver on this machine, signed with the secret the endpoint
// API shows for it.
func TestLocalModeDeliversCallbacks(t *testing.T) {
	const key = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	got := make(chan error, 1)
	var secret atomic.Pointer[string]
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got <- statushook.Verify(*secret.Load(), r.Header, body, time.Now(), 0)
	}))
	defer recv.Close()
	m := startLocalWith(t, func(o *local.Options) {
		o.Getenv = func(k string) string {
			if k == statushook.EnvSecret {
				return key
			}
			return ""
		}
	})
	s := endpointState(t, m, recv.URL+"/hook").Secret
	secret.Store(&s)
	opts, err := redis.ParseURL(m.ep.Redis)
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(opts)
	defer rdb.Close()
	em, err := statushook.NewEmitter(rdb, statushook.Config{Secret: key, Allow: []string{"127.0.0.1:*"}})
	if err != nil {
		t.Fatal(err)
	}
	ev := statushook.Event{ID: statushook.EventID("t1", statushook.TypeMessageSent), Type: statushook.TypeMessageSent, Timestamp: time.Now()}
	if err := em.Emit(m.ctx, recv.URL+"/hook", ev); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-got:
		if err != nil {
			t.Fatalf("the callback's signature: %v", err)
		}
	case <-m.ctx.Done():
		t.Fatal("no callback arrived")
	}
}
