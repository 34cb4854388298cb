package silences

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/alerts"
	"github.com/herald-dev/herald/internal/httpapi"
)

// testPrincipal is who the tests' requests come from, unless they say.
var testPrincipal = httpapi.Principal{Name: "a", Scopes: []httpapi.Scope{httpapi.ScopeSend, httpapi.ScopeOperate}}

// call runs one request of testPrincipal against the API and returns the
// status and body.
func call(t *testing.T, h http.Handler, method, path, body string) (int, []byte) {
	t.Helper()
	return callAs(t, h, &testPrincipal, method, path, body)
}

// callAs is call as p; nil: with no principal on the request's context.
func callAs(t *testing.T, h http.Handler, p *httpapi.Principal, method, path, body string) (int, []byte) {
	t.Helper()
	var r *http.Request
	if body == "" {
		r = httptest.NewRequest(method, path, nil)
	} else {
		r = httptest.NewRequest(method, path, strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
	}
	if p != nil {
		r = r.WithContext(httpapi.WithPrincipal(r.Context(), *p))
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w.Code, w.Body.Bytes()
}

func decodeAs[T any](t *testing.T, b []byte) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	return v
}

// TestAPI walks the silences API: create, read, list, the caught alerts,
// expire, and 404s.
func TestAPI(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	h := f.st.Handler()
	ana := &httpapi.Principal{Name: "ana", Scopes: []httpapi.Scope{httpapi.ScopeOperate}}
	code, body := callAs(t, h, ana, "POST", "/v1/silences", `{
		"matchers": [{"name": "severity", "value": "warning", "is_regex": false}, {"name": "service", "value": "api-.*", "is_regex": true}],
		"ends_at": "2026-06-10T14:00:00Z", "comment": "deploy", "created_by": "ana"}`)
	if code != http.StatusCreated {
		t.Fatalf("create: %d %s", code, body)
	}
	v := decodeAs[view](t, body)
	if v.ID == "" || v.State != stateActive || !v.StartsAt.Equal(t0) || !v.EndsAt.Equal(t0.Add(2*time.Hour)) ||
		len(v.Matchers) != 2 || !v.Matchers[1].IsRegex || v.Comment != "deploy" || v.CreatedBy != "ana" || v.All || v.ProgramSize != 10 {
		t.Fatalf("created %s", body)
	}
	code, body = call(t, h, "GET", "/v1/silences/"+v.ID, "")
	if code != http.StatusOK || decodeAs[view](t, body).ID != v.ID {
		t.Fatalf("get: %d %s", code, body)
	}
	bo := &httpapi.Principal{Name: "bo", Scopes: []httpapi.Scope{httpapi.ScopeOperate}}
	code, body = callAs(t, h, bo, "POST", "/v1/silences", `{"matchers": [{"name": "team", "value": "db"}], "starts_at": "2026-06-10T13:00:00Z", "duration": "1h"}`)
	if code != http.StatusCreated || decodeAs[view](t, body).State != statePending {
		t.Fatalf("create pending: %d %s", code, body)
	}
	code, body = call(t, h, "GET", "/v1/silences", "")
	if l := decodeAs[list](t, body); code != http.StatusOK || len(l.Silences) != 2 {
		t.Fatalf("list: %d %s", code, body)
	}
	code, body = call(t, h, "GET", "/v1/silences?state=pending", "")
	if l := decodeAs[list](t, body); code != http.StatusOK || len(l.Silences) != 1 || l.Silences[0].CreatedBy != "bo" {
		t.Fatalf("list pending: %d %s", code, body)
	}

	// An alert it caught is listed under it.
	a := alerts.Alert{Title: "5xx on api-gw", Severity: alerts.SeverityWarning, Labels: map[string]string{"service": "api-gw"}}
	id, err := f.st.Silenced(context.Background(), &a, t0)
	if err != nil || id != v.ID {
		t.Fatalf("Silenced = %q, %v", id, err)
	}
	if err := f.st.Record(context.Background(), []alerts.SilencedAlert{{SilencedBy: id, Alert: a}}, t0); err != nil {
		t.Fatal(err)
	}
	code, body = call(t, h, "GET", "/v1/silences/"+v.ID+"/alerts", "")
	if cl := decodeAs[caughtList](t, body); code != http.StatusOK || cl.SilenceID != v.ID || len(cl.Alerts) != 1 || cl.Alerts[0].Title != a.Title {
		t.Fatalf("caught: %d %s", code, body)
	}

	code, body = call(t, h, "DELETE", "/v1/silences/"+v.ID, "")
	if code != http.StatusOK || decodeAs[view](t, body).State != stateExpired {
		t.Fatalf("delete: %d %s", code, body)
	}
	code, body = call(t, h, "GET", "/v1/silences?state=expired", "")
	if l := decodeAs[list](t, body); code != http.StatusOK || len(l.Silences) != 1 || l.Silences[0].ID != v.ID {
		t.Fatalf("list expired: %d %s", code, body)
	}
	for _, c := range []struct{ method, path string }{
		{"GET", "/v1/silences/unknown"}, {"DELETE", "/v1/silences/unknown"}, {"GET", "/v1/silences/unknown/alerts"},
	} {
		code, body = call(t, h, c.method, c.path, "")
		if code != http.StatusNotFound || decodeAs[httpapi.ErrorBody](t, body).Error.Code != httpapi.CodeNotFound {
			t.Errorf("%s %s: %d %s", c.method, c.path, code, body)
		}
	}
	code, _ = call(t, h, "PUT", "/v1/silences/"+v.ID, "{}")
	if code != http.StatusMethodNotAllowed {
		t.Errorf("PUT: %d", code)
	}
}

// TestAPIBadInput: every 400 names the field at fault.
func TestAPIBadInput(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	h := f.st.Handler()
	const m = `"matchers": [{"name": "team", "value": "db"}]`
	cases := []struct{ body, fields string }{
		{`{` + m + `, "duration": "1h", "created_by": "b"}`, "created_by"},
		{`{"duration": "1h", "created_by": "a"}`, "matchers"},
		{`{"matchers": [{"name": "svc", "value": "(", "is_regex": true}], "duration": "1h", "created_by": "a"}`, "matchers[0].value"},
		{`{"matchers": [{"name": "", "value": "x"}], "duration": "1h", "created_by": "a"}`, "matchers[0].name"},
		{`{"matchers": [{"name": "severity", "value": "loud"}], "duration": "1h", "created_by": "a"}`, "matchers[0].value"},
		{`{"matchers": [{"name": "team", "value": ""}], "duration": "1h", "created_by": "a"}`, "matchers[0].value"},
		{`{"matchers": [{"name": "source", "value": ".+", "is_regex": true}], "duration": "8784h"}`, "matchers[0].value"},
		{`{` + m + `, "created_by": "a"}`, "ends_at"},
		{`{` + m + `, "ends_at": "tomorrow", "created_by": "a"}`, "ends_at"},
		{`{` + m + `, "starts_at": "2026-13-01T00:00:00Z", "duration": "1h", "created_by": "a"}`, "starts_at"},
		{`{` + m + `, "ends_at": "2026-06-10T11:00:00Z", "created_by": "a"}`, "ends_at"},
		{`{` + m + `, "duration": "soon", "created_by": "a"}`, "duration"},
		{`{` + m + `, "duration": "1h", "ends_at": "2026-06-10T14:00:00Z", "created_by": "a"}`, "duration"},
		{`{` + m + `, "duration": "1h", "created_by": "a", "creator": "b"}`, "creator"},
		{`{"matchers": [{"name": "team", "value": "db", "regex": true}], "duration": "1h", "created_by": "a"}`, "regex"},
		{`{"matchers": [{"name": "team", "value": 5}], "duration": "1h", "created_by": "a"}`, "matchers.value"},
		{`{` + m + `, "duration": "1h", "created_by": "a", "CREATED_BY": "b"}`, "CREATED_BY"},
	}
	for _, c := range cases {
		code, body := call(t, h, "POST", "/v1/silences", c.body)
		if code != http.StatusBadRequest {
			t.Errorf("%s: %d %s", c.body, code, body)
			continue
		}
		e := decodeAs[httpapi.ErrorBody](t, body).Error
		var got []string
		for _, fe := range e.Fields {
			got = append(got, fe.Field)
		}
		if strings.Join(got, ",") != c.fields {
			t.Errorf("%s: fields %v, want %s (%s)", c.body, got, c.fields, body)
		}
	}
	for _, c := range []struct{ path, field string }{
		{"/v1/silences?state=gone", "state"},
		{"/v1/silences?limit=0", "limit"},
		{"/v1/silences?limit=1001", "limit"},
		{"/v1/silences?cursor=not-a-cursor", "cursor"},
		{"/v1/silences/x/alerts?limit=0", "limit"},
		{"/v1/silences/x/alerts?limit=many", "limit"},
	} {
		code, body := call(t, h, "GET", c.path, "")
		e := decodeAs[httpapi.ErrorBody](t, body).Error
		if code != http.StatusBadRequest || len(e.Fields) != 1 || e.Fields[0].Field != c.field {
			t.Errorf("%s: %d %s", c.path, code, body)
		}
	}
	if code, body := call(t, h, "POST", "/v1/silences", `{"matchers": [`); code != http.StatusBadRequest ||
		decodeAs[httpapi.ErrorBody](t, body).Error.Code != httpapi.CodeInvalidJSON {
		t.Errorf("malformed JSON: %d %s", code, body)
	}
}

// TestAPITooMany: the cap answers 409.
func TestAPITooMany(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(c *Config) { c.MaxSilences = 1 })
	h := f.st.Handler()
	body := `{"matchers": [{"name": "team", "value": "db"}], "duration": "1h", "created_by": "a"}`
	if code, b := call(t, h, "POST", "/v1/silences", body); code != http.StatusCreated {
		t.Fatalf("%d %s", code, b)
	}
	code, b := call(t, h, "POST", "/v1/silences", body)
	if code != http.StatusConflict || decodeAs[httpapi.ErrorBody](t, b).Error.Code != codeTooManySilences {
		t.Fatalf("%d %s", code, b)
	}
}

// TestAPIUnavailable: Redis trouble answers 503.
func TestAPIUnavailable(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.mr.SetError("LOADING fake outage")
	code, b := call(t, f.st.Handler(), "POST", "/v1/silences", `{"matchers": [{"name": "team", "value": "db"}], "duration": "1h", "created_by": "a"}`)
	if code != http.StatusServiceUnavailable {
		t.Fatalf("%d %s", code, b)
	}
	if code, b := call(t, f.st.Handler(), "GET", "/v1/silences", ""); code != http.StatusServiceUnavailable {
		t.Fatalf("list: %d %s", code, b)
	}
}
