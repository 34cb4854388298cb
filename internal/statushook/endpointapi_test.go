package statushook_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/herald-dev/herald/internal/statushook"
)

// call serves one request with h and decodes the JSON answer.
func call(t *testing.T, h http.Handler, method, target, body string) (int, map[string]any) {
	t.Helper()
	req := httptest.NewRequest(method, target, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	var out map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		t.Fatalf("%s %s: %d %s", method, target, rec.Code, rec.Body)
	}
	return rec.Code, out
}

func TestEndpointRoutes(t *testing.T) {
	r := newRig(t, nil)
	h := r.emitter.Handler()
	hook := "https://hooks.example.com/h?token=t"
	code, got := call(t, h, http.MethodGet, "/v1/callbacks/endpoint?url="+url.QueryEscape(hook), "")
	if code != http.StatusOK || got["state"] != "healthy" || got["endpoint"] != "https://hooks.example.com/h" ||
		!strings.HasPrefix(got["secret"].(string), "whsec_") {
		t.Fatalf("GET: %d %v", code, got)
	}
	code, got = call(t, h, http.MethodGet, "/v1/callbacks/endpoint?url="+url.QueryEscape("http://169.254.169.254/"), "")
	if fields, _ := got["error"].(map[string]any)["fields"].([]any); code != http.StatusBadRequest || len(fields) != 1 ||
		fields[0].(map[string]any)["field"] != "url" {
		t.Fatalf("GET of a forbidden URL: %d %v", code, got)
	}

	// A disabled endpoint shows why, and is enabled again.
	rc := newReceiver(t, func(_ int, w http.ResponseWriter) { w.WriteHeader(http.StatusGone) })
	r.emit(rc.URL+"/gone", "task-g")
	r.startDeliverer()
	r.waitArchived(1)
	code, got = call(t, h, http.MethodGet, "/v1/callbacks/endpoint?url="+url.QueryEscape(rc.URL+"/gone"), "")
	if code != http.StatusOK || got["state"] != "disabled" || got["disabled_reason"] != "gone" ||
		!strings.Contains(got["last_error"].(string), "410") {
		t.Fatalf("GET of a disabled endpoint: %d %v", code, got)
	}
	code, got = call(t, h, http.MethodPost, "/v1/callbacks/endpoint/enable", `{"url": "`+rc.URL+`/gone"}`)
	if code != http.StatusOK || got["was_disabled"] != true || got["state"] != "healthy" {
		t.Fatalf("POST enable: %d %v", code, got)
	}
	if code, got = call(t, h, http.MethodPost, "/v1/callbacks/endpoint/enable", `{"link": "x"}`); code != http.StatusBadRequest {
		t.Fatalf("POST enable with another field: %d %v", code, got)
	}

	off, _ := statushook.NewEmitter(r.rdb, statushook.Config{})
	code, got = call(t, off.Handler(), http.MethodGet, "/v1/callbacks/endpoint?url="+url.QueryEscape(hook), "")
	if code != http.StatusBadRequest || !strings.Contains(got["error"].(map[string]any)["message"].(string), "callbacks are off") {
		t.Fatalf("GET while off: %d %v", code, got)
	}
}
