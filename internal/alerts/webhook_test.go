package alerts

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/jobs"
)

func decodeBody(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestGenericWebhook(t *testing.T) {
	t.Parallel()
	tb, err := LoadRoutes("testdata/routes.yaml")
	if err != nil {
		t.Fatal(err)
	}
	g, ok := tb.GenericWebhook("uptime")
	if !ok || g.Name() != "uptime" {
		t.Fatalf("GenericWebhook(uptime) = %v, %v", g, ok)
	}
	if _, ok := tb.GenericWebhook("nope"); ok {
		t.Fatal("an undefined webhook was found")
	}

	t.Run("every field", func(t *testing.T) {
		t.Parallel()
		got, err := g.Alerts(decodeBody(t, `{"monitor": {"name": "web <1>", "id": 123456789, "url": "https://up.test/m/1"},
			"status": "down", "message": "  timeout after 10s\n", "team": "web"}`))
		if err != nil {
			t.Fatal(err)
		}
		want := []Alert{{Title: "web <1> is down", Body: "timeout after 10s", URL: "https://up.test/m/1", Severity: "critical",
			Status: StatusFiring, Source: "uptime", Fingerprint: "123456789/down", Labels: map[string]string{"team": "web"}}}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("alerts\n%+v\nwant\n%+v", got, want)
		}
	})

	t.Run("optional fields missing or null", func(t *testing.T) {
		t.Parallel()
		got, err := g.Alerts(decodeBody(t, `{"monitor": {"name": "db", "id": 7, "url": null}, "status": "up", "team": null}`))
		if err != nil {
			t.Fatal(err)
		}
		want := []Alert{{Title: "db is up", Severity: "info", Status: StatusResolved, Source: "uptime", Fingerprint: "7/up", Labels: map[string]string{"team": "ops"}}}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("alerts\n%+v\nwant\n%+v", got, want)
		}
	})

	t.Run("a required key missing names the field", func(t *testing.T) {
		t.Parallel()
		_, err := g.Alerts(decodeBody(t, `{"status": "down"}`))
		var verr *jobs.ValidationError
		if !errors.As(err, &verr) {
			t.Fatalf("error %v, want a *jobs.ValidationError", err)
		}
		fields := map[string]string{}
		for _, f := range verr.Fields {
			fields[f.Field] = f.Message
		}
		if len(fields) != 2 || !strings.Contains(fields["title"], `.monitor.name`) || !strings.Contains(fields["title"], `no entry for key "monitor"`) {
			t.Fatalf("fields %v, want title and fingerprint naming .monitor", fields)
		}
		if _, ok := fields["fingerprint"]; !ok {
			t.Fatalf("fingerprint not reported: %v", fields)
		}
	})

	t.Run("a status other than firing or resolved is refused by name", func(t *testing.T) {
		t.Parallel()
		got, err := g.Alerts(decodeBody(t, `{"monitor": {"name": "db", "id": 7}, "status": "paused"}`))
		if err != nil {
			t.Fatal(err)
		}
		err = got[0].Normalize(time.Now())
		var verr *jobs.ValidationError
		if !errors.As(err, &verr) || len(verr.Fields) != 1 || verr.Fields[0].Field != "status" {
			t.Fatalf("Normalize = %v, want one error naming status", err)
		}
	})

	t.Run("not an object", func(t *testing.T) {
		t.Parallel()
		if _, err := g.Alerts(decodeBody(t, `[1, 2]`)); err == nil {
			t.Fatal("a JSON list rendered an alert")
		}
	})
}

func TestWebhookHelpers(t *testing.T) {
	t.Parallel()
	tb := mustParse(t, `
routes:
  - name: r
    destinations: [1]
webhooks:
  - name: h
    title: '{{ upper .name }} {{ get . "tags.1" }} {{ get . "tags.9" }}|{{ get . "a.b.c" }}'
    body: '{{ json .meta }} {{ join "," .tags }} {{ truncate 4 .long }} {{ lower "ABC" }}'
    source: '{{ get . "src" | default "fallback" }}'
    severity: "{{ .level }}"
    labels:
      count: "{{ .count }}"
      ratio: "{{ .ratio }}"
      empty: '{{ get . "none" }}'
`)
	g, _ := tb.GenericWebhook("h")
	got, err := g.Alerts(decodeBody(t, `{"name": "x<y", "tags": ["a", "b"], "a": {"b": {"c": true}}, "meta": {"k": "<v>"},
		"long": "abcdefgh", "level": "warning", "count": 12345678901, "ratio": 0.25}`))
	if err != nil {
		t.Fatal(err)
	}
	want := Alert{Title: "X<Y b |true", Body: `{"k":"<v>"} a,b abc… abc`, Source: "fallback", Severity: "warning",
		Labels: map[string]string{"count": "12345678901", "ratio": "0.25"}}
	if !reflect.DeepEqual(got[0], want) {
		t.Fatalf("alert\n%+v\nwant\n%+v", got[0], want)
	}
}
