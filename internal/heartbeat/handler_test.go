package heartbeat

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/alerts"
	"github.com/herald-dev/herald/internal/keys"
	"github.com/herald-dev/herald/test/redistest"
)

// TestPingRejections: every bad ping is a 400 (or 413/415) JSON error that
// names the field, and nothing is stored.
func TestPingRejections(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	api := newTestHandler(t, rdb, newRecorder(), func(c *Config) { c.MaxBodyBytes = 256 })
	long := strings.Repeat("a", 65)
	tests := []struct {
		name, method, target, ctype, body string
		status                            int
		code, field                       string
	}{
		{"name too long", "PUT", "/v1/heartbeats/" + long + "?interval=5m", "", "", 400, "invalid_field", "name"},
		{"name with a space", "PUT", "/v1/heartbeats/a%20b?interval=5m", "", "", 400, "invalid_field", "name"},
		{"name with a colon", "PUT", "/v1/heartbeats/a:b?interval=5m", "", "", 400, "invalid_field", "name"},
		{"empty name", "PUT", "/v1/heartbeats/?interval=5m", "", "", 400, "invalid_field", "name"},
		{"first ping without interval", "PUT", "/v1/heartbeats/new", "", "", 400, "invalid_field", "interval"},
		{"first ping with only grace", "POST", "/v1/heartbeats/new", "application/json", `{"grace":"1m"}`, 400, "invalid_field", "interval"},
		{"bad duration in query", "PUT", "/v1/heartbeats/x?interval=5%20minutes", "", "", 400, "invalid_field", "interval"},
		{"bad duration in body", "PUT", "/v1/heartbeats/x", "application/json", `{"interval":"soon"}`, 400, "invalid_field", "interval"},
		{"interval too short", "PUT", "/v1/heartbeats/x?interval=500ms", "", "", 400, "invalid_field", "interval"},
		{"interval too long", "PUT", "/v1/heartbeats/x?interval=401d", "", "", 400, "invalid_field", "interval"},
		{"negative grace", "PUT", "/v1/heartbeats/x?interval=5m&grace=-1s", "", "", 400, "invalid_field", "grace"},
		{"bad grace", "PUT", "/v1/heartbeats/x?interval=5m&grace=x", "", "", 400, "invalid_field", "grace"},
		{"bad severity", "PUT", "/v1/heartbeats/x?interval=5m&severity=panic", "", "", 400, "invalid_field", "severity"},
		{"unknown query parameter", "PUT", "/v1/heartbeats/x?intervall=5m", "", "", 400, "invalid_field", "intervall"},
		{"repeated query parameter", "PUT", "/v1/heartbeats/x?interval=5m&interval=6m", "", "", 400, "invalid_field", "interval"},
		{"query and body disagree", "PUT", "/v1/heartbeats/x?interval=5m", "application/json", `{"interval":"6m"}`, 400, "invalid_field", "interval"},
		{"interval as a number", "PUT", "/v1/heartbeats/x", "application/json", `{"interval":300}`, 400, "invalid_field", "interval"},
		{"unknown body field", "PUT", "/v1/heartbeats/x", "application/json", `{"interval":"5m","every":"5m"}`, 400, "invalid_field", "every"},
		{"reserved label", "PUT", "/v1/heartbeats/x", "application/json", `{"interval":"5m","labels":{"heartbeat":"y"}}`, 400, "invalid_field", "labels.heartbeat"},
		{"empty label name", "PUT", "/v1/heartbeats/x", "application/json", `{"interval":"5m","labels":{"":"y"}}`, 400, "invalid_field", "labels"},
		{"malformed JSON", "PUT", "/v1/heartbeats/x", "application/json", `{"interval":`, 400, "invalid_json", ""},
		{"two JSON objects", "PUT", "/v1/heartbeats/x", "application/json", `{"interval":"5m"} {}`, 400, "invalid_json", ""},
		{"form body", "PUT", "/v1/heartbeats/x", "application/x-www-form-urlencoded", `interval=5m`, 415, "unsupported_media_type", ""},
		{"body too large", "PUT", "/v1/heartbeats/x", "application/json", `{"interval":"5m","labels":{"a":"` + strings.Repeat("b", 300) + `"}}`, 413, "body_too_large", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := do(api, tc.method, tc.target, tc.ctype, tc.body)
			if w.Code != tc.status {
				t.Fatalf("status %d, want %d; body %s", w.Code, tc.status, w.Body)
			}
			eb := errorBody(t, w)
			if eb.Error.Code != tc.code {
				t.Errorf("code %q, want %q", eb.Error.Code, tc.code)
			}
			if tc.field == "" {
				return
			}
			var names []string
			for _, f := range eb.Error.Fields {
				names = append(names, f.Field)
				if f.Field == tc.field && f.Message == "" {
					t.Errorf("field %q has no message", f.Field)
				}
			}
			if !contains(names, tc.field) {
				t.Errorf("fields %v do not name %q; body %s", names, tc.field, w.Body)
			}
		})
	}
	if n, err := rdb.Exists(context.Background(), keys.HeartbeatRecords(), keys.HeartbeatDeadlines(), keys.HeartbeatOutbox()).Result(); err != nil || n != 0 {
		t.Errorf("rejected pings stored something: %d keys (%v)", n, err)
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// TestPingSettings: later pings keep what they do not restate; the default
// grace follows the interval; query and body may both be used.
func TestPingSettings(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	api := newTestHandler(t, srv.Client(t), newRecorder(), func(c *Config) {
		c.MinDefaultGrace = 30 * time.Second
		c.DefaultSeverity = alerts.SeverityWarning
	})
	hb := mustPing(t, api, "/v1/heartbeats/job-1.daily?interval=1d", "", http.StatusCreated)
	if hb.Interval != "24h0m0s" || hb.Grace != "2h24m0s" || !hb.GraceDefault || hb.Severity != alerts.SeverityWarning {
		t.Errorf("daily job: %+v, want 24h interval, 10%% default grace, the default severity", hb)
	}
	if !hb.Deadline.Equal(hb.LastPing.Add(24*time.Hour + 144*time.Minute)) {
		t.Errorf("deadline %v, want last ping %v + 26h24m", hb.Deadline, hb.LastPing)
	}
	hb = mustPing(t, api, "/v1/heartbeats/job-1.daily?interval=1m", "", http.StatusOK)
	if hb.Grace != "30s" {
		t.Errorf("1m job grace %s, want the 30s minimum", hb.Grace)
	}
	hb = mustPing(t, api, "/v1/heartbeats/job-1.daily?severity=info", `{"grace":"2m","labels":{"env":"prod"}}`, http.StatusOK)
	if hb.Interval != "1m0s" || hb.Grace != "2m0s" || hb.GraceDefault || hb.Severity != alerts.SeverityInfo || hb.Labels["env"] != "prod" {
		t.Errorf("after restating grace, severity and labels: %+v", hb)
	}
	hb = mustPing(t, api, "/v1/heartbeats/job-1.daily", "", http.StatusOK)
	if hb.Interval != "1m0s" || hb.Grace != "2m0s" || hb.Severity != alerts.SeverityInfo || hb.Labels["env"] != "prod" {
		t.Errorf("a bare ping changed the settings: %+v", hb)
	}
	hb = mustPing(t, api, "/v1/heartbeats/job-1.daily?interval=1m", `{"interval":"1m","labels":{}}`, http.StatusOK)
	if len(hb.Labels) != 0 {
		t.Errorf("empty labels did not clear them: %v", hb.Labels)
	}
}

// TestListAndGet covers GET, the late state and the JSON shape.
func TestListAndGet(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	api := newTestHandler(t, rdb, newRecorder(), nil)

	w := do(api, http.MethodGet, "/v1/heartbeats", "", "")
	if w.Code != http.StatusOK || strings.TrimSpace(w.Body.String()) != `{"heartbeats":[]}` {
		t.Fatalf("empty list: %d %s", w.Code, w.Body)
	}
	mustPing(t, api, "/v1/heartbeats/zeta?interval=1h", "", http.StatusCreated)
	mustPing(t, api, "/v1/heartbeats/alpha?interval=10m&grace=1m", "", http.StatusCreated)
	backdate(t, rdb, "zeta")

	w = do(api, http.MethodGet, "/v1/heartbeats", "", "")
	var list list
	if err := json.Unmarshal(w.Body.Bytes(), &list); err != nil || w.Code != http.StatusOK {
		t.Fatalf("list: %d %s (%v)", w.Code, w.Body, err)
	}
	if len(list.Heartbeats) != 2 || list.Heartbeats[0].Name != "alpha" || list.Heartbeats[1].Name != "zeta" {
		t.Fatalf("list not sorted by name: %+v", list)
	}
	if a := list.Heartbeats[0]; a.State != "up" || a.Interval != "10m0s" || a.Grace != "1m0s" || a.GraceDefault ||
		a.LastPing.IsZero() || !a.Deadline.Equal(a.LastPing.Add(11*time.Minute)) || a.Created.IsZero() {
		t.Errorf("alpha = %+v", a)
	}
	if z := list.Heartbeats[1]; z.State != "late" {
		t.Errorf("zeta past its deadline but not yet checked: state %q, want late", z.State)
	}

	// The checker turns it down; GET shows it.
	c, err := NewChecker(testConfig(rdb, newRecorder()))
	if err != nil {
		t.Fatal(err)
	}
	c.Check(context.Background())
	w = do(api, http.MethodGet, "/v1/heartbeats/zeta", "", "")
	var z Heartbeat
	if err := json.Unmarshal(w.Body.Bytes(), &z); err != nil || z.State != "down" || z.DownSince == nil {
		t.Errorf("zeta after the check: %s", w.Body)
	}
}

func TestRoutingErrors(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	api := newTestHandler(t, srv.Client(t), newRecorder(), nil)
	tests := []struct {
		method, target string
		status         int
		code, allow    string
	}{
		{"PATCH", "/v1/heartbeats/x", 405, "method_not_allowed", "GET, PUT, POST, DELETE"},
		{"POST", "/v1/heartbeats", 405, "method_not_allowed", "GET"},
		{"GET", "/v1/heartbeats/missing", 404, "not_found", ""},
		{"DELETE", "/v1/heartbeats/missing", 404, "not_found", ""},
		{"GET", "/v1/heartbeats/a/b", 400, "invalid_field", ""},
		{"GET", "/v1/other", 404, "not_found", ""},
	}
	for _, tc := range tests {
		w := do(api, tc.method, tc.target, "", "")
		if w.Code != tc.status {
			t.Errorf("%s %s: %d, want %d; %s", tc.method, tc.target, w.Code, tc.status, w.Body)
			continue
		}
		if eb := errorBody(t, w); eb.Error.Code != tc.code {
			t.Errorf("%s %s: code %q, want %q", tc.method, tc.target, eb.Error.Code, tc.code)
		}
		if got := w.Header().Get("Allow"); got != tc.allow {
			t.Errorf("%s %s: Allow %q, want %q", tc.method, tc.target, got, tc.allow)
		}
	}
}

func TestConfigValidation(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	tests := []struct {
		name string
		cfg  Config
		want []string
	}{
		{"nothing", Config{}, []string{"Config.Redis is required", "Config.Dispatcher is required"}},
		{"bad values", Config{Redis: rdb, Dispatcher: newRecorder(), CheckInterval: time.Millisecond, DispatchTimeout: -1,
			DefaultSeverity: "loud", DefaultGraceFraction: -1, MinDefaultGrace: -1, MaxBodyBytes: -1, BatchSize: -1},
			[]string{"HERALD_HEARTBEAT_CHECK_INTERVAL (-heartbeat-check-interval) must be at least 100ms", "DispatchTimeout", "DefaultSeverity", "DefaultGraceFraction", "MinDefaultGrace", "MaxBodyBytes", "BatchSize"}},
	}
	for _, tc := range tests {
		_, err := NewHandler(tc.cfg)
		_, err2 := NewChecker(tc.cfg)
		if err == nil || err2 == nil {
			t.Fatalf("%s: accepted", tc.name)
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not mention %s", tc.name, err, w)
			}
		}
	}
	d := Config{}.WithDefaults()
	if d.CheckInterval != 5*time.Second || d.DispatchTimeout != 10*time.Second || d.DefaultSeverity != alerts.SeverityCritical ||
		d.DefaultGraceFraction != 0.1 || d.MinDefaultGrace != 30*time.Second || d.MaxBodyBytes != 64<<10 || d.BatchSize != 100 || d.Logger == nil {
		t.Errorf("defaults = %+v", d)
	}
}

func TestKeysShareTheSlot(t *testing.T) {
	t.Parallel()
	want := keys.Slot(keys.Bot("").BotLog())
	for _, k := range hbKeys {
		if !strings.HasPrefix(k, keys.Tag+":") || keys.Slot(k) != want {
			t.Errorf("key %q is not under %s (slot %d, want %d)", k, keys.Tag, keys.Slot(k), want)
		}
	}
}
