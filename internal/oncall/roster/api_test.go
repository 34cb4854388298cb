package roster_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/httpapi"
	"github.com/herald-dev/herald/internal/oncall"
	"github.com/herald-dev/herald/internal/oncall/roster"
	"github.com/herald-dev/herald/test/redistest"
)

// onCallServer serves the on-call API over a weekly schedule of Alice and
// Bob, as the token "lead".
func onCallServer(t *testing.T, now time.Time) http.Handler {
	t.Helper()
	rdb := redistest.Start(t).Client(t)
	alice := oncall.User{ID: 1001, Name: "Alice", Username: "alice"}
	bob := oncall.User{ID: 1002, Name: "Bob"}
	s := oncall.Schedule{Name: "primary", Chat: "-1005", Layers: []oncall.Rotation{{
		Users: []oncall.User{alice, bob}, Length: oncall.Weekly, Handoff: oncall.Clock{Hour: 9}, Weekday: time.Monday,
		Location: time.UTC, Start: time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC),
	}}}
	cat := roster.Catalog{Schedules: map[string]oncall.Schedule{"primary": s}}
	mounts, err := roster.Mounts(roster.APIConfig{Roster: &roster.Roster{Catalog: func() roster.Catalog { return cat }, Overrides: roster.NewOverrides(rdb)},
		MaxBodyBytes: 1 << 16, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	for _, m := range mounts {
		mux.Handle(m.Pattern, m.Handler)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mux.ServeHTTP(w, r.WithContext(httpapi.WithPrincipal(r.Context(), httpapi.Principal{Name: "lead"})))
	})
}

func do(t *testing.T, h http.Handler, method, path, body string) (int, map[string]any) {
	t.Helper()
	req := httptest.NewRequestWithContext(context.Background(), method, path, strings.NewReader(body))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	var out map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		t.Fatalf("%s %s: %d %s", method, path, rec.Code, rec.Body)
	}
	return rec.Code, out
}

// GET /v1/oncall says who is on call now and next; an override through
// POST puts its user on call from its start.
func TestOnCallAPI(t *testing.T) {
	now := time.Date(2026, 1, 7, 12, 0, 0, 0, time.UTC)
	h := onCallServer(t, now)
	code, out := do(t, h, "GET", "/v1/oncall", "")
	if code != 200 {
		t.Fatalf("GET: %d %v", code, out)
	}
	s := out["schedules"].([]any)[0].(map[string]any)
	on, next := s["on_call"].(map[string]any), s["next"].(map[string]any)
	if on["user"].(map[string]any)["name"] != "Alice" || on["end"] != "2026-01-12T09:00:00Z" || next["user"].(map[string]any)["name"] != "Bob" {
		t.Fatalf("GET /v1/oncall: %v", s)
	}
	code, out = do(t, h, "POST", "/v1/oncall/primary/overrides", `{"user": 1002, "duration": "6h"}`)
	if code != 201 || out["on_call"].(map[string]any)["user"].(map[string]any)["name"] != "Bob" || len(out["overrides"].([]any)) != 1 {
		t.Fatalf("POST: %d %v", code, out)
	}
	code, out = do(t, h, "GET", "/v1/oncall/primary?at=2026-01-07T17:59:00Z", "")
	if code != 200 || out["on_call"].(map[string]any)["user"].(map[string]any)["name"] != "Bob" || out["on_call"].(map[string]any)["end"] != "2026-01-07T18:00:00Z" {
		t.Fatalf("GET during the override: %d %v", code, out)
	}
	for _, c := range []struct{ body, field string }{
		{`{"user": "@nobody", "duration": "1h"}`, "user"},
		{`{"user": {"id": 5, "name": "Erin"}}`, "end"},
		{`{"user": 1001, "end": "2026-01-07T11:00:00Z"}`, "end"},
		{`{"user": 1001, "duration": "soon"}`, "duration"},
	} {
		code, out := do(t, h, "POST", "/v1/oncall/primary/overrides", c.body)
		if code != 400 || !strings.Contains(string(mustJSON(t, out)), `"field":"`+c.field+`"`) {
			t.Errorf("POST %s: %d %v, want 400 naming %s", c.body, code, out, c.field)
		}
	}
	if code, _ := do(t, h, "POST", "/v1/oncall/nope/overrides", `{"user": 1, "duration": "1h"}`); code != 404 {
		t.Errorf("an unknown schedule: %d, want 404", code)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
