package alerts

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/herald-dev/herald/internal/buttons"
)

func TestParseInteraction(t *testing.T) {
	t.Parallel()
	tb := mustParse(t, `
defaults:
  on_resolve: edit
  buttons: [silence_24h, ack]
  allowed_users: ["@Alice_01", 12345]
routes:
  - name: inherits
    destinations: [1]
  - name: overrides
    on_resolve: NEW
    buttons: silence_1h
    allowed_users: []
    destinations: [2]
  - name: none
    buttons: []
    destinations: [3]
  - name: plain
    default: true
    on_resolve: reply
    buttons:
    destinations: [4]
`)
	type got struct {
		onResolve string
		buttons   []string
		allowed   []string
	}
	wants := map[string]got{
		"inherits":  {resolveEdit, []string{buttons.Ack, buttons.Silence24h}, []string{"@Alice_01", "12345"}},
		"overrides": {resolveNew, []string{buttons.Silence1h}, nil},
		"none":      {resolveEdit, nil, nil},
		"plain":     {resolveReply, nil, nil},
	}
	for _, rt := range append(slices.Clone(tb.routes), tb.fallback) {
		w, ok := wants[rt.name]
		if !ok {
			t.Fatalf("unexpected route %q", rt.name)
		}
		if rt.onResolve != w.onResolve || !slices.Equal(rt.buttons, w.buttons) || !slices.Equal(rt.allowed, w.allowed) {
			t.Errorf("route %s: on_resolve %q, buttons %v, allowed %v; want %+v", rt.name, rt.onResolve, rt.buttons, rt.allowed, w)
		}
	}
	// Without any of the settings: reply, no buttons.
	bare := mustParse(t, "routes:\n  - name: a\n    destinations: [1]\n").routes[0]
	if bare.onResolve != resolveReply || bare.buttons != nil || bare.allowed != nil {
		t.Errorf("bare route: %q %v %v", bare.onResolve, bare.buttons, bare.allowed)
	}
}

func TestParseInteractionErrors(t *testing.T) {
	t.Parallel()
	route := func(settings string) string {
		return "routes:\n  - name: db\n    destinations: [1]\n" + settings
	}
	tests := []struct {
		name string
		src  string
		want []string
	}{
		{"unknown on_resolve", route("    on_resolve: delete\n"), []string{
			`routes.yaml:4:17: routes[0].on_resolve: route "db": "delete" is not a way to show a resolved alert; use reply`}},
		{"on_resolve in defaults", "defaults: {on_resolve: 3}\n" + route(""), []string{
			`routes.yaml:1:24: defaults.on_resolve: defaults: "3" is not a way to show a resolved alert`}},
		{"unknown button", route("    buttons: [ack, silence_2h]\n"), []string{
			`routes.yaml:4:20: routes[0].buttons[1]: route "db": "silence_2h" is not a button; did you mean "silence_1h"? The buttons are ack, silence_1h and silence_24h`}},
		{"unknown single button", route("    buttons: snooze\n"), []string{
			`routes.yaml:4:14: routes[0].buttons: route "db": "snooze" is not a button; use ack`}},
		{"button twice", route("    buttons: [ack, ACK]\n"), []string{
			`routes.yaml:4:20: routes[0].buttons[1]: route "db": the button "ack" is listed twice; list each button once`}},
		{"buttons a mapping", route("    buttons: {ack: true}\n"), []string{
			`routes.yaml:4:14: routes[0].buttons: got a mapping, expected one value or a list`}},
		{"user without @", route("    buttons: [ack]\n    allowed_users: [alice_01]\n"), []string{
			`routes.yaml:5:21: routes[0].allowed_users[0]: route "db": "alice_01" is neither an @username nor a numeric user id; write "@alice_01" for the username, or the user's numeric id`}},
		{"short username", route("    buttons: [ack]\n    allowed_users: ['@bob']\n"), []string{
			`routes.yaml:5:21: routes[0].allowed_users[0]: route "db": "@bob" is not a Telegram username; write @ and the user's name`}},
		{"group id", route("    buttons: [ack]\n    allowed_users: [-1001234]\n"), []string{
			`routes.yaml:5:21: routes[0].allowed_users[0]: route "db": -1001234 is not a user id`}},
		{"user twice", route("    buttons: [ack]\n    allowed_users: ['@alice', 7, '@ALICE']\n"), []string{
			`routes.yaml:5:34: routes[0].allowed_users[2]: route "db": "@ALICE" is listed twice; list each user once`}},
		{"allowed without buttons", route("    allowed_users: [7]\n"), []string{
			`routes.yaml:4:5: routes[0].allowed_users: route "db" says who may press its buttons but has none; add buttons:`}},
		{"allowed with buttons removed", "defaults: {buttons: [ack]}\n" + route("    buttons: []\n    allowed_users: [7]\n"), []string{
			`routes[0].allowed_users: route "db" says who may press its buttons but has none`}},
		{"unknown key suggests", route("    on_resolved: edit\n"), []string{
			`routes.yaml:4:5: routes[0].on_resolved: unknown key; did you mean "on_resolve"?`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := ParseRoutes("routes.yaml", []byte(tt.src))
			var re *routesError
			if !errors.As(err, &re) {
				t.Fatalf("error %v, want a *RoutesError", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not contain %q:\n%v", w, err)
				}
			}
		})
	}
}

func TestParseWebhookKeyAndImage(t *testing.T) {
	t.Parallel()
	tb := mustParse(t, `
routes:
  - name: a
    destinations: [1]
webhooks:
  - name: up
    title: "{{ .name }}"
    key: "{{ .id }}"
    image_url: '{{ get . "graph" }}'
`)
	g, _ := tb.GenericWebhook("up")
	out, err := g.Alerts(map[string]any{"name": "shop", "id": 42.0, "graph": "https://img.test/g.png"})
	if err != nil {
		t.Fatal(err)
	}
	if out[0].Key != "42" || out[0].ImageURL != "https://img.test/g.png" {
		t.Errorf("alert %+v, want key 42 and the image", out[0])
	}
}
