package fleet

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// TestPostAllKeepsConnections: 32 clients posting 2,000 messages open no
// more connections than the client keeps idle; with Go's default two per
// host they opened one for most POSTs.
func TestPostAllKeepsConnections(t *testing.T) {
	t.Parallel()
	var opened atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusAccepted)
		w.Write([]byte(`{"task_id":"t"}`))
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			opened.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	ms := make([]Message, 2000)
	for i := range ms {
		ms[i] = Message{Chat: strconv.Itoa(i), Text: "x"}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	f := &Fleet{APIBase: srv.URL, APIToken: "token"}
	if _, err := f.PostAll(ctx, ms, 32); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d POSTs over %d connections", len(ms), opened.Load())
	if n := opened.Load(); n > maxPosters {
		t.Fatalf("%d connections opened for %d POSTs by 32 clients; want at most %d", n, len(ms), maxPosters)
	}
}
