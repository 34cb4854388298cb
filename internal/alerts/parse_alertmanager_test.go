package alerts

import (
	"strings"
	"testing"
	"time"
)

func TestParseAlertmanagerAck(t *testing.T) {
	t.Parallel()
	tb := mustParse(t, `
routes:
  - name: am
    buttons: [ack]
    alertmanager: {url: "http://alertmanager:9093"}
    destinations: [1]
  - name: long
    buttons: [ack, silence_1h]
    alertmanager: {url: "https://am.example/", silence: 12h}
    destinations: [2]
  - name: none
    default: true
    buttons: [ack]
    destinations: [3]
`)
	want := map[string]*alertmanagerAck{
		"am":   {url: "http://alertmanager:9093", silence: 4 * time.Hour},
		"long": {url: "https://am.example/", silence: 12 * time.Hour},
	}
	for _, rt := range tb.routes {
		if w := want[rt.name]; rt.alertmanager == nil || *rt.alertmanager != *w {
			t.Errorf("route %s: %+v, want %+v", rt.name, rt.alertmanager, w)
		}
	}
	if tb.fallback.alertmanager != nil {
		t.Errorf("route none: %+v, want none", tb.fallback.alertmanager)
	}
}

func TestParseAlertmanagerAckErrors(t *testing.T) {
	t.Parallel()
	route := func(settings string) string {
		return "routes:\n  - name: db\n    destinations: [1]\n" + settings
	}
	tests := map[string]string{
		route("    buttons: [ack]\n    alertmanager: {silence: 1h}\n"):                  `routes[0].alertmanager.url: is missing`,
		route("    buttons: [ack]\n    alertmanager: {url: 'alertmanager:9093'}\n"):     `routes[0].alertmanager.url: "alertmanager:9093" is not an http(s) URL`,
		route("    buttons: [ack]\n    alertmanager: {url: 'http://a', silence: 0s}\n"): `routes[0].alertmanager.silence: 0s is not a silence's length`,
		route("    buttons: [silence_1h]\n    alertmanager: {url: 'http://a'}\n"):       `route "db" silences in Alertmanager on an Acknowledge but shows no ack button`,
		route("    buttons: [ack]\n    alertmanager: {url: 'http://a', for: 1h}\n"):     `routes[0].alertmanager.for: unknown key`,
	}
	for src, want := range tests {
		_, err := ParseRoutes("routes.yaml", []byte(src))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", src, err, want)
		}
	}
}
