package heartbeat

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/alerts"
	"github.com/herald-dev/herald/internal/httpapi"
)

func TestParseDuration(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"5m", 5 * time.Minute, true},
		{"1h30m", 90 * time.Minute, true},
		{" 90s ", 90 * time.Second, true},
		{"7d", 7 * 24 * time.Hour, true},
		{"0d", 0, true},
		{"1.5d", 0, false},
		{"d", 0, false},
		{"-1d", 0, false},
		{"5", 0, false},
		{"", 0, false},
		{"soon", 0, false},
	}
	for _, tc := range tests {
		got, err := parseDuration(tc.in)
		if (err == nil) != tc.ok || (tc.ok && got != tc.want) {
			t.Errorf("parseDuration(%q) = %v, %v; want %v ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

func TestValidateName(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{"a", "nightly-backup", "db_1.dump", "A-Z.0-9_", strings.Repeat("x", 64)} {
		if fe := validateName(ok); fe != nil {
			t.Errorf("validateName(%q) = %v", ok, fe)
		}
	}
	for _, bad := range []string{"", strings.Repeat("x", 65), "a b", "a/b", "é", "a:b", "a\x00"} {
		fe := validateName(bad)
		if fe == nil || fe.Field != "name" {
			t.Errorf("validateName(%q) = %v, want an error on name", bad, fe)
		}
	}
}

func TestParsePingSettings(t *testing.T) {
	t.Parallel()
	q := url.Values{"interval": {"5m"}, "severity": {" Warning "}}
	p, herr := parsePing(q, "application/json", []byte(`{"interval":"5m","grace":"0s","labels":{"team":"ops"}}`))
	if herr != nil {
		t.Fatal(herr)
	}
	if p.Interval != 5*time.Minute || p.Grace == nil || *p.Grace != 0 || p.Severity != alerts.SeverityWarning || p.Labels["team"] != "ops" {
		t.Errorf("settings = %+v", p)
	}
	p, herr = parsePing(url.Values{}, "", nil)
	if herr != nil || p.Interval != 0 || p.Grace != nil || p.Severity != "" || p.Labels != nil {
		t.Errorf("empty ping = %+v, %v; want nothing restated", p, herr)
	}
	// Every bad field is reported at once.
	_, herr = parsePing(url.Values{"interval": {"x"}, "grace": {"y"}, "severity": {"z"}, "foo": {"1"}}, "", nil)
	if herr == nil || len(herr.Fields) != 4 {
		t.Errorf("four bad fields gave %+v", herr)
	}
}

// FuzzParsePing feeds arbitrary query strings and bodies to the ping
// parser: it never panics, a rejection is a 4xx with a stable code, and
// accepted settings stay within bounds.
func FuzzParsePing(f *testing.F) {
	f.Add("interval=5m", "", []byte(nil))
	f.Add("interval=1d&grace=1h&severity=critical", "application/json", []byte(`{"labels":{"team":"ops"}}`))
	f.Add("", "application/json", []byte(`{"interval":"90s","grace":"0s","severity":"info"}`))
	f.Add("interval=5m", "application/json", []byte(`{"interval":"6m"}`))
	f.Add("interval=%zz", "text/plain", []byte(`{"interval":300}`))
	f.Fuzz(func(t *testing.T, rawQuery, contentType string, body []byte) {
		q, err := url.ParseQuery(rawQuery)
		if err != nil {
			return
		}
		p, herr := parsePing(q, contentType, body)
		if herr != nil {
			if herr.Status < 400 || herr.Status > 499 {
				t.Fatalf("rejection status %d", herr.Status)
			}
			switch herr.Code {
			case httpapi.CodeInvalidField:
				if len(herr.Fields) == 0 {
					t.Fatalf("invalid_field without fields: %+v", herr)
				}
			case httpapi.CodeInvalidJSON, httpapi.CodeUnsupportedMedia:
			default:
				t.Fatalf("unexpected code %q", herr.Code)
			}
			return
		}
		if p.Interval != 0 && (p.Interval < minInterval || p.Interval > maxInterval) {
			t.Fatalf("accepted interval %v", p.Interval)
		}
		if p.Grace != nil && (*p.Grace < 0 || *p.Grace > maxInterval) {
			t.Fatalf("accepted grace %v", *p.Grace)
		}
		switch p.Severity {
		case "", alerts.SeverityCritical, alerts.SeverityWarning, alerts.SeverityInfo:
		default:
			t.Fatalf("accepted severity %q", p.Severity)
		}
		if p.Labels != nil {
			if _, ok := p.Labels[labelHeartbeat]; ok {
				t.Fatalf("accepted the reserved label")
			}
			a := alerts.Alert{Title: "x", Labels: p.Labels}
			if err := a.Validate(); err != nil {
				t.Fatalf("accepted labels an alert refuses: %v", err)
			}
		}
	})
}

// TestAlertRendering checks the alerts built from stored notifications.
func TestAlertRendering(t *testing.T) {
	t.Parallel()
	last := time.Date(2026, 11, 30, 3, 0, 0, 123456000, time.UTC)
	deadline := last.Add(25 * time.Hour)
	found := deadline.Add(2 * time.Second)
	back := last.Add(27 * time.Hour)
	us := func(t time.Time) string { return itoa(t.UnixMicro()) }
	down := notification{Name: "backup", Kind: kindDown, LastPing: us(last), At: us(found), Deadline: us(deadline),
		Interval: itoa((24 * time.Hour).Microseconds()), Grace: itoa(time.Hour.Microseconds()), Severity: "warning",
		Labels: labelMap{"team": "ops"}}
	a := down.alert()
	want := alerts.Alert{
		Title:       "Heartbeat backup is overdue",
		Body:        "No ping since 2026-11-30 03:00:00 UTC (expected every 24h0m0s, grace 1h0m0s).\nOverdue since 2026-12-01 04:00:00 UTC.",
		Severity:    alerts.SeverityWarning,
		Status:      alerts.StatusFiring,
		Source:      "heartbeat",
		Fingerprint: "heartbeat/backup/down/1796007600123456000",
		Time:        deadline,
	}
	if a.Title != want.Title || a.Body != want.Body || a.Severity != want.Severity || a.Status != want.Status ||
		a.Source != want.Source || a.Fingerprint != want.Fingerprint || !a.Time.Equal(want.Time) {
		t.Errorf("down alert:\n got %+v\nwant %+v", a, want)
	}
	if len(a.Labels) != 2 || a.Labels["heartbeat"] != "backup" || a.Labels["team"] != "ops" {
		t.Errorf("labels %v", a.Labels)
	}
	if err := a.Validate(); err != nil {
		t.Errorf("down alert invalid: %v", err)
	}
	if down.Labels["heartbeat"] != "" {
		t.Error("rendering changed the notification's labels")
	}

	up := down
	up.Kind, up.At, up.DownSince = kindUp, us(back), us(found)
	b := up.alert()
	if b.Title != "Heartbeat backup is back" || b.Status != alerts.StatusResolved || !b.Time.Equal(back) ||
		b.Fingerprint != "heartbeat/backup/up/1796007600123456000" ||
		b.Body != "Pinged again at 2026-12-01 06:00:00 UTC after 27h0m0s without a ping.\nLast ping before: 2026-11-30 03:00:00 UTC; overdue since 2026-12-01 04:00:00 UTC (expected every 24h0m0s, grace 1h0m0s)." {
		t.Errorf("up alert: %+v", b)
	}
	if fingerprint("x", "down", last) != "heartbeat/x/down/1796007600123456000" {
		t.Errorf("Fingerprint = %q", fingerprint("x", "down", last))
	}
}
