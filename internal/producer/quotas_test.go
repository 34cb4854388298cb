package producer_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/broadcast"
	"github.com/herald-dev/herald/internal/chats"
	"github.com/herald-dev/herald/internal/httpapi"
	"github.com/herald-dev/herald/internal/ledger"
	"github.com/herald-dev/herald/internal/producer"
	"github.com/herald-dev/herald/internal/quota"
	"github.com/herald-dev/herald/test/redistest"
)

// newQuotaAPI is the test API with quotas: the token "api" may queue two
// messages, make one broadcast an hour of at most three recipients, keep
// one audience of at most two chats and post one alert a minute; "other"
// has the defaults.
func newQuotaAPI(t *testing.T) (http.Handler, *quota.Store) {
	t.Helper()
	b := newBundle(t)
	api := httpapi.NewToken("api", testToken, httpapi.ScopeSend)
	api.Quotas = quota.Limits{QueuedMessages: 2, BroadcastsPerHour: 1, QueuedRecipients: 3, Audiences: 1, AudienceSize: 2, AlertsPerMinute: 1}
	k, err := httpapi.NewKeyring(api, httpapi.NewToken("other", otherToken, httpapi.ScopeSend))
	if err != nil {
		t.Fatal(err)
	}
	store := quota.NewStore(b.rdb, quota.NewMetrics(nil))
	svc := broadcast.New(b.rdb, b.enq, chats.NewStore(b.rdb), ledger.NewStore(b.rdb, ledger.Config{}), broadcast.Config{MaxChats: 1000})
	alerts := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusAccepted) })
	mounts := append(broadcast.Mounts(svc, nil, slog.New(slog.DiscardHandler), store),
		httpapi.Mount{Pattern: "/v1/alerts", Handler: alerts, Quota: quota.NameAlertsPerMinute})
	a, err := producer.NewAPI(producer.Config{Enqueuer: b.enq, Redis: b.rdb, Keyring: k, Logger: slog.New(slog.DiscardHandler),
		Quotas: store, Mounts: mounts})
	if err != nil {
		t.Fatal(err)
	}
	return a.Handler(), store
}

// quotaRefusal checks a 429: Retry-After, the X-RateLimit headers, and a
// body naming the quota and its figure.
func quotaRefusal(t *testing.T, code int, header http.Header, body []byte, name string, current int) {
	t.Helper()
	var got httpapi.QuotaBody
	if code != http.StatusTooManyRequests || json.Unmarshal(body, &got) != nil {
		t.Fatalf("status %d, body %s; want a 429 for %s", code, body, name)
	}
	if got.Error.Code != httpapi.CodeQuotaExceeded || got.Quota.Name != name || got.Quota.Current != current ||
		header.Get("Retry-After") == "" || header.Get("X-RateLimit-Remaining") != strconv.Itoa(got.Quota.Limit-current) ||
		header.Get("X-RateLimit-Reset") == "" {
		t.Fatalf("refusal %+v, headers %v", got, header)
	}
}

// TestMessagesQuota: a token queues up to its quota, the next message is
// a 429 naming it while another token's go through, and a settled message
// makes room again.
func TestMessagesQuota(t *testing.T) {
	t.Parallel()
	h, store := newQuotaAPI(t)
	for i, remaining := range []string{"1", "0"} {
		rec := post(h, `{"chat":"5","text":"disk full"}`)
		accepted(t, rec)
		if got := rec.Header().Get("X-RateLimit-Remaining"); got != remaining {
			t.Fatalf("message %d: X-RateLimit-Remaining %q, want %s", i, got, remaining)
		}
	}
	rec := post(h, `{"chat":"5","text":"one more"}`)
	quotaRefusal(t, rec.Code, rec.Header(), rec.Body.Bytes(), quota.NameQueued, 2)
	accepted(t, do(h, request{body: `{"chat":"5","text":"another team"}`, header: as(otherToken)}))
	// A message refused as invalid takes nothing.
	if rec := do(h, request{body: `{"chat":"5"}`, header: as(otherToken)}); rec.Code != http.StatusBadRequest {
		t.Fatalf("invalid message: %d", rec.Code)
	}
	// The worker settles one of them.
	rel := quota.NewReleases(store, time.Hour, slog.New(slog.DiscardHandler))
	rel.Settled("api", false, time.Now())
	if err := rel.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	accepted(t, post(h, `{"chat":"5","text":"room again"}`))
}

// TestBroadcastAndAudienceQuotas: recipients over the quota are refused
// with nothing stored; the hourly broadcast, the audiences' count and size
// and the alerts' rate are each refused by name.
func TestBroadcastAndAudienceQuotas(t *testing.T) {
	t.Parallel()
	h, _ := newQuotaAPI(t)
	rec := do(h, request{path: "/v1/broadcasts", body: `{"chats":[1,2,3,4],"text":"hi"}`})
	quotaRefusal(t, rec.Code, rec.Header(), rec.Body.Bytes(), quota.NameRecipients, 0)
	if rec := do(h, request{path: "/v1/broadcasts", body: `{"chats":[1,2,3],"text":"hi"}`}); rec.Code != http.StatusAccepted {
		t.Fatalf("a broadcast within the quotas: %d %s", rec.Code, rec.Body)
	}
	rec = do(h, request{path: "/v1/broadcasts", body: `{"chats":[1],"text":"again"}`})
	quotaRefusal(t, rec.Code, rec.Header(), rec.Body.Bytes(), quota.NameRecipients, 3)

	if rec := do(h, request{method: "PUT", path: "/v1/audiences/vips", body: `{"chats":[1,2,3]}`}); rec.Code != http.StatusBadRequest {
		t.Fatalf("an audience over its size: %d %s", rec.Code, rec.Body)
	}
	if rec := do(h, request{method: "PUT", path: "/v1/audiences/vips", body: `{"chats":[1,2]}`}); rec.Code != http.StatusOK {
		t.Fatalf("an audience: %d %s", rec.Code, rec.Body)
	}
	rec = do(h, request{method: "PUT", path: "/v1/audiences/more", body: `{"chats":[1]}`})
	quotaRefusal(t, rec.Code, rec.Header(), rec.Body.Bytes(), quota.NameAudiences, 1)
	if rec := do(h, request{method: "DELETE", path: "/v1/audiences/more"}); rec.Code != http.StatusNotFound {
		t.Fatalf("the refused audience was kept: %d", rec.Code)
	}
	if rec := do(h, request{method: "DELETE", path: "/v1/audiences/vips"}); rec.Code != http.StatusOK {
		t.Fatalf("delete: %d", rec.Code)
	}
	if rec := do(h, request{method: "PUT", path: "/v1/audiences/more", body: `{"chats":[1]}`}); rec.Code != http.StatusOK {
		t.Fatalf("after a delete: %d %s", rec.Code, rec.Body)
	}

	if rec := do(h, request{path: "/v1/alerts", body: `{}`}); rec.Code != http.StatusAccepted {
		t.Fatalf("first alert: %d", rec.Code)
	}
	rec = do(h, request{path: "/v1/alerts", body: `{}`})
	quotaRefusal(t, rec.Code, rec.Header(), rec.Body.Bytes(), quota.NameAlertsPerMinute, 1)
}

// TestReserveRefusesBulkOnly: with Redis' memory over its share, broadcasts,
// audiences and the low and broadcast queues get a 503 naming the reserve;
// the default and critical queues are still accepted.
func TestReserveRefusesBulkOnly(t *testing.T) {
	t.Parallel()
	b := newBundle(t)
	mem := redistest.Start(t).Client(t) // a real server: INFO memory
	res := quota.NewReserve(mem, quota.ReserveConfig{MemoryLimit: 1 << 10}.WithDefaults(), slog.New(slog.DiscardHandler))
	if err := res.Sample(context.Background()); err != nil {
		t.Fatal(err)
	}
	store := quota.NewStore(b.rdb, nil).WithReserve(res)
	svc := broadcast.New(b.rdb, b.enq, chats.NewStore(b.rdb), ledger.NewStore(b.rdb, ledger.Config{}), broadcast.Config{MaxChats: 1000})
	a, err := producer.NewAPI(producer.Config{Enqueuer: b.enq, Redis: b.rdb, Keyring: testKeyring(t, testToken, ""), Logger: slog.New(slog.DiscardHandler),
		Quotas: store, Mounts: broadcast.Mounts(svc, nil, slog.New(slog.DiscardHandler), store)})
	if err != nil {
		t.Fatal(err)
	}
	h := a.Handler()
	for _, req := range []request{
		{path: "/v1/broadcasts", body: `{"chats":[1],"text":"hi"}`},
		{method: "PUT", path: "/v1/audiences/vips", body: `{"chats":[1]}`},
		{body: `{"chat":"5","text":"x","queue":"low"}`},
		{body: `{"chat":"5","text":"x","queue":"broadcast"}`},
	} {
		rec := do(h, req)
		body := errorBody(t, rec, http.StatusServiceUnavailable, httpapi.CodeReserve)
		if rec.Header().Get("Retry-After") == "" || !strings.Contains(body.Error.Message, quota.EnvReservePercent) {
			t.Fatalf("%s %s: %v %s", req.method, req.path, rec.Header(), rec.Body)
		}
	}
	accepted(t, post(h, `{"chat":"5","text":"disk full","queue":"critical"}`))
	accepted(t, post(h, `{"chat":"5","text":"deploy done"}`))
}
