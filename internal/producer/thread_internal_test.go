package producer

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/httpapi"
	"github.com/herald-dev/herald/internal/jobs"
)

// TestMessageWithoutPrincipalIsRefused: a request that reaches the message
// handler with no principal on its context (a route served without
// authentication by mistake) is refused, not sent under some namespace.
func TestMessageWithoutPrincipalIsRefused(t *testing.T) {
	t.Parallel()
	mr := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { _ = rdb.Close() })
	a, err := NewAPI(Config{Enqueuer: jobs.NewEnqueuer(rdb, jobs.EnqueueConfig{}), Redis: rdb,
		Keyring: httpapi.OpenKeyring(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	body := `{"chat":"42","text":"x","thread":{"key":"alert/disk/default","mode":"edit"}}`
	r := httptest.NewRequest(http.MethodPost, "/v1/messages", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	a.postMessage(w, r)
	if w.Code != http.StatusForbidden {
		t.Fatalf("status %d (%s), want 403", w.Code, w.Body)
	}
	if ks := mr.Keys(); len(ks) != 0 {
		t.Fatalf("stored %v", ks)
	}
}
