package webhooks

import (
	"net/http"
	"testing"

	"github.com/herald-dev/herald/internal/alerts"
	"github.com/herald-dev/herald/internal/jobs"
)

// A Grafana alert with an image goes out as a photo and opens a thread;
// its resolution (same Grafana fingerprint, no image) replies to it and
// closes the thread.
func TestGrafanaPhotoAndThread(t *testing.T) {
	t.Parallel()
	s := newStack(t, "e2e_routes.yaml")
	resp := serve(s.h, req{sender: "grafana", body: fixture(t, "grafana", "firing.json")})
	if resp.Code != http.StatusAccepted {
		t.Fatalf("status %d: %s", resp.Code, resp.Body)
	}
	stored := s.tasks(t)
	if len(stored) != 1 {
		t.Fatalf("%d tasks, want 1", len(stored))
	}
	m := stored[0]
	if m.Photo == nil || m.Photo.URL != "https://grafana.example.com/public/render/checkout-latency.png" {
		t.Errorf("photo %+v, want the alert's imageURL", m.Photo)
	}
	const key = "alert/grafana/a1d3c5e7f9b2d4c6/everything"
	if m.Thread == nil || *m.Thread != (jobs.Thread{Key: key, Mode: jobs.ThreadOpen}) {
		t.Errorf("thread %+v, want %s opened", m.Thread, key)
	}

	resp = serve(s.h, req{sender: "grafana", body: fixture(t, "grafana", "resolved.json")})
	if resp.Code != http.StatusAccepted {
		t.Fatalf("status %d: %s", resp.Code, resp.Body)
	}
	var resolved *jobs.SendMessage
	for _, m := range s.tasks(t) {
		if m.Thread != nil && m.Thread.Close {
			resolved = &m
		}
	}
	if resolved == nil || *resolved.Thread != (jobs.Thread{Key: key, Mode: jobs.ThreadReply, Close: true}) || resolved.Photo != nil {
		t.Fatalf("resolution %+v, want a reply closing %s without a photo", resolved, key)
	}
}

// The payload-level image of Grafana's legacy webhook (imageUrl) is used
// when the alert has none; an image URL that is not http(s) is dropped.
func TestGrafanaImageFallbacks(t *testing.T) {
	t.Parallel()
	body := []byte(`{"status":"firing","imageUrl":"https://grafana.test/legacy.png","alerts":[
		{"status":"firing","labels":{"alertname":"A"},"fingerprint":"1"},
		{"status":"firing","labels":{"alertname":"B"},"fingerprint":"2","imageURL":"javascript:alert(1)"},
		{"status":"firing","labels":{"alertname":"C"},"fingerprint":"3","imageURL":"https://grafana.test/own.png"}]}`)
	d, e := decodeGrafana(body)
	if e != nil {
		t.Fatal(e)
	}
	want := []string{"https://grafana.test/legacy.png", "https://grafana.test/legacy.png", "https://grafana.test/own.png"}
	for i, a := range d.alerts {
		if a.ImageURL != want[i] {
			t.Errorf("alert %d image %q, want %q", i, a.ImageURL, want[i])
		}
	}
	// Alertmanager sends no images: a stray field is ignored.
	am, e := decodeAlertmanager([]byte(`{"status":"firing","alerts":[{"status":"firing","labels":{"alertname":"A"},"imageURL":"https://x.test/i.png"}]}`))
	if e != nil {
		t.Fatal(e)
	}
	if am.alerts[0].ImageURL != "" || am.alerts[0].Key == "" {
		t.Errorf("alertmanager alert %+v: want a key and no image", am.alerts[0])
	}
}

// A generic mapping's key is prefixed like its fingerprint; its image_url
// is kept when it is an http(s) URL and dropped otherwise.
func TestGenericKeyAndImage(t *testing.T) {
	t.Parallel()
	table, err := alerts.ParseRoutes("r.yaml", []byte(`
routes:
  - name: all
    default: true
    destinations: [1]
webhooks:
  - name: uptime
    title: "{{ .name }} is {{ .state }}"
    key: "{{ .id }}"
    image_url: '{{ get . "graph" }}'
`))
	if err != nil {
		t.Fatal(err)
	}
	g, _ := table.GenericWebhook("uptime")
	for _, tc := range []struct{ graph, want string }{
		{"https://img.test/g.png", "https://img.test/g.png"},
		{"ftp://img.test/g.png", ""},
		{"", ""},
	} {
		d, e := decodeGeneric("uptime", g, []byte(`{"name":"shop","state":"down","id":7,"graph":"`+tc.graph+`"}`))
		if e != nil {
			t.Fatal(e)
		}
		a := d.alerts[0]
		if a.Key != "generic/uptime/7" || a.ImageURL != tc.want {
			t.Errorf("graph %q: key %q, image %q; want generic/uptime/7 and %q", tc.graph, a.Key, a.ImageURL, tc.want)
		}
	}
}
