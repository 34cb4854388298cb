package alerts

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/herald-dev/herald/internal/httpapi"
)

// postAs posts body to h as the token p.
func postAs(h http.Handler, p httpapi.Principal, body string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, "/v1/alerts", strings.NewReader(body))
	req = req.WithContext(httpapi.WithPrincipal(context.Background(), p))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// TestAlertBelongsToItsToken: token a's alert is resolved by a, and by
// an operate-scope token naming it, but token b's resolution with the
// same key reaches neither a's thread nor a's escalation: b's resolution
// is about an alert of b's own, which never fired.
func TestAlertBelongsToItsToken(t *testing.T) {
	t.Parallel()
	b := newRedisBundle(t)
	r := threadRouter(t, escalationTable, b.enq, b.rdb)
	esc := &escalator{}
	r.cfg.Escalations = esc
	h := NewAPIHandler(r, 1<<16, quietLogger())
	a := httpapi.Principal{Name: "a", Scopes: []httpapi.Scope{httpapi.ScopeSend}}
	other := httpapi.Principal{Name: "b", Scopes: []httpapi.Scope{httpapi.ScopeSend}}
	ops := httpapi.Principal{Name: "ops", Scopes: []httpapi.Scope{httpapi.ScopeSend, httpapi.ScopeOperate}}
	const alert = `{"title":"disk full","severity":"critical","key":"k1","labels":{"team":"db"}`

	fired := b.threads(t, accepted(t, postAs(h, a, alert+`}`)))
	if len(esc.begun) != 1 || esc.begun[0].Identity != "by/a/k1" || fired[0].Key != "alert/by/a/k1/db" {
		t.Fatalf("a's alert: escalations %+v, threads %+v", esc.begun, fired)
	}
	// b resolves "k1": its message is about its own alert's thread, and
	// the escalation it stops is its own (none), not a's.
	resolved := b.threads(t, accepted(t, postAs(h, other, alert+`,"status":"resolved"}`)))
	if len(esc.ended) != 1 || esc.ended[0].Identity == esc.begun[0].Identity {
		t.Errorf("b's resolution stopped %+v; a's escalation is %q", esc.ended, esc.begun[0].Identity)
	}
	for _, th := range resolved {
		if strings.HasPrefix(th.Key, "alert/by/a/") {
			t.Errorf("b's resolution reached a's thread %q", th.Key)
		}
	}
	// b firing "k1" repeats nothing of a's: it opens a thread of its own.
	for _, th := range b.threads(t, accepted(t, postAs(h, other, alert+`}`))) {
		if !strings.HasPrefix(th.Key, "alert/by/b/") {
			t.Errorf("b's firing alert went to the thread %q", th.Key)
		}
	}
	// a's own resolution, and an operator's naming a's alert, end it.
	accepted(t, postAs(h, a, alert+`,"status":"resolved"}`))
	opsAlert := strings.Replace(alert, `"key":"k1"`, `"key":"by/a/k1"`, 1)
	accepted(t, postAs(h, ops, opsAlert+`,"status":"resolved"}`))
	if n := len(esc.ended); n != 3 || esc.ended[1].Identity != "by/a/k1" || esc.ended[2].Identity != "by/a/k1" {
		t.Errorf("ended %+v; want a's and the operator's stops of by/a/k1 last", esc.ended)
	}
}
