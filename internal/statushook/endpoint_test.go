package statushook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/url"
	"strings"
	"testing"
	"time"
)

func TestEndpointOf(t *testing.T) {
	for raw, want := range map[string]string{
		"https://Hooks.Example.COM/Path?token=x#frag": "https://hooks.example.com/Path",
		"https://hooks.example.com:443/a":             "https://hooks.example.com/a",
		"http://hooks.example.com:80":                 "http://hooks.example.com/",
		"https://hooks.example.com:8443/a%2Fb":        "https://hooks.example.com:8443/a%2Fb",
		"HTTPS://[::1]:9000/h":                        "https://[::1]:9000/h",
		"https://[2001:db8::1]/h":                     "https://[2001:db8::1]/h",
		"https://example.com./h":                      "https://example.com/h",
	} {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		if got := endpointOf(u); got != want {
			t.Errorf("endpointOf(%s) = %s, want %s", raw, got, want)
		}
	}
}

// TestEndpointSecretDerivation pins the documented derivation: whsec_ and
// the base64 of HMAC-SHA256(master, label + endpoint).
func TestEndpointSecretDerivation(t *testing.T) {
	master := []byte("0123456789abcdef0123456789abcdef")
	m := hmac.New(sha256.New, master)
	m.Write([]byte("herald status callback endpoint secret v1\x00https://hooks.example.com/a"))
	want := "whsec_" + base64.StdEncoding.EncodeToString(m.Sum(nil))
	if got := endpointSecret(master, "https://hooks.example.com/a"); got != want {
		t.Fatalf("endpointSecret = %s, want %s", got, want)
	}
	if key, err := DecodeSecret(want); err != nil || len(key) != 32 {
		t.Fatalf("the derived secret is not a valid signing secret: %v", err)
	}
	if endpointSecret(master, "https://hooks.example.com/b") == want || endpointSecret([]byte(strings.Repeat("x", 32)), "https://hooks.example.com/a") == want {
		t.Fatal("another endpoint or master key gives the same secret")
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for v, want := range map[string]time.Duration{
		"":                              0,
		"120":                           2 * time.Minute,
		"0":                             0,
		"-5":                            0,
		"999999999":                     maxRetryAfter,
		"soon":                          0,
		"Fri, 02 Jan 2026 03:05:05 GMT": time.Minute,
		"Fri, 02 Jan 2026 03:00:00 GMT": 0,
	} {
		if got := retryAfter(v, now); got != want {
			t.Errorf("retryAfter(%q) = %s, want %s", v, got, want)
		}
	}
}

func TestShowPayloadHidesTheQuery(t *testing.T) {
	p := []byte(`{"v":1,"url":"https://hooks.example.com/h?token=s3cr3t","id":"msg_1","type":"message.sent","at":"2026-01-02T03:04:05Z","body":{"type":"message.sent"}}`)
	got := ShowPayload(p)
	if strings.Contains(got, "s3cr3t") || !strings.Contains(got, `"url": "https://hooks.example.com/h?…"`) || !strings.Contains(got, `"type": "message.sent"`) {
		t.Fatalf("ShowPayload = %s", got)
	}
	if got := ShowPayload([]byte("not json")); got != "not json" {
		t.Fatalf("ShowPayload of garbage = %q", got)
	}
}

func TestEventID(t *testing.T) {
	if got := EventID("0c61-ab", TypeMessageSent); got != "msg_0c61-ab_message_sent" {
		t.Errorf("EventID = %s", got)
	}
	if got := EventID("default.@chan 1", TypeChatBlocked); checkID(got) != nil || got != "msg_default_@chan_1_chat_blocked" {
		t.Errorf("EventID = %s (%v)", got, checkID(got))
	}
}
