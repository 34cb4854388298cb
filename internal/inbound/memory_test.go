package inbound

import (
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/alerts"
	"github.com/herald-dev/herald/internal/httpapi"
)

// TestBareClosesTakeTheFiringAlert checks that Opsgenie's close and a
// PagerDuty resolve without payload read and route as the alert they end
// (its title, severity and labels), and fall back to the key without it.
func TestBareClosesTakeTheFiringAlert(t *testing.T) {
	t.Parallel()
	mr := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { _ = rdb.Close() })
	k, err := httpapi.NewKeyring(httpapi.NewToken("tools", sendSecret, httpapi.ScopeSend))
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	h := newHandler(Config{Dispatcher: rec, Keyring: k, Redis: rdb, Logger: slog.New(slog.DiscardHandler), Clock: func() time.Time { return testNow }})
	auth := map[string]string{"Authorization": "GenieKey " + sendSecret}
	for _, p := range []post{
		{path: "/v1/inbound/opsgenie/v2/alerts", body: `{"message":"Disk full on db-1","alias":"g1","priority":"P1","details":{"team":"db"}}`, header: auth},
		{path: "/v1/inbound/opsgenie/v2/alerts/g1/close?identifierType=alias", header: auth},
		{path: "/v1/inbound/opsgenie/v2/alerts/unknown/close?identifierType=alias", header: auth},
		{path: "/v1/inbound/pagerduty/v2/enqueue", body: `{"routing_key":"` + sendSecret + `","event_action":"trigger","dedup_key":"p1","payload":{"summary":"API down","source":"api","severity":"warning","group":"web"}}`},
		{path: "/v1/inbound/pagerduty/v2/enqueue", body: `{"routing_key":"` + sendSecret + `","event_action":"resolve","dedup_key":"p1"}`},
	} {
		if w := p.do(h); w.Code != http.StatusAccepted {
			t.Fatalf("%s: %d %s", p.path, w.Code, w.Body)
		}
	}
	as := rec.alerts()
	og, unknown, pd := as[1], as[2], as[4]
	if og.Title != "Disk full on db-1" || og.Severity != alerts.SeverityCritical || og.Labels["team"] != "db" || og.Status != alerts.StatusResolved {
		t.Fatalf("opsgenie close: %+v", og)
	}
	if unknown.Title != "Closed: unknown" {
		t.Fatalf("close of an alert never seen: %+v", unknown)
	}
	if pd.Title != "API down" || pd.Severity != alerts.SeverityWarning || pd.Labels["group"] != "web" {
		t.Fatalf("pagerduty resolve: %+v", pd)
	}
}
