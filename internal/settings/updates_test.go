package settings

import (
	"strings"
	"testing"
)

// TestUpdatesSettings: presses are received by default; the webhook needs
// its secret and a plain base URL; turning presses off refuses a URL; the
// producer checks the secret's characters.
func TestUpdatesSettings(t *testing.T) {
	t.Parallel()
	w, err := LoadWorker(nil, envOf(map[string]string{}))
	if err != nil {
		t.Fatal(err)
	}
	if w.Updates.Off || w.Updates.WebhookURL != "" {
		t.Fatalf("default updates %+v, want presses received by polling", w.Updates)
	}
	w, err = LoadWorker([]string{"-telegram-updates=false"}, nil)
	if err != nil || !w.Updates.Off {
		t.Fatalf("-telegram-updates=false: %+v, %v", w.Updates, err)
	}
	for _, c := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{EnvTelegramWebhookURL: "https://h.example.com"}, "is required with " + EnvTelegramWebhookURL},
		{map[string]string{EnvTelegramWebhookURL: "ftp://h.example.com", EnvTelegramWebhookSecret: "ok"}, EnvTelegramWebhookURL},
		{map[string]string{EnvTelegramWebhookURL: "https://h.example.com?x=1", EnvTelegramWebhookSecret: "ok"}, "without user, query or fragment"},
		{map[string]string{EnvTelegramWebhookURL: "https://h.example.com", EnvTelegramWebhookSecret: "not ok!"}, "A-Z, a-z, 0-9"},
		{map[string]string{EnvTelegramWebhookURL: "https://h.example.com", EnvTelegramWebhookSecret: "ok", EnvTelegramUpdates: "false"}, "is off"},
	} {
		_, err := LoadWorker(nil, envOf(c.env))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want one saying %q", c.env, err, c.want)
		}
	}
	w, err = LoadWorker(nil, envOf(map[string]string{EnvTelegramWebhookURL: "https://h.example.com/", EnvTelegramWebhookSecret: "s_1"}))
	if err != nil {
		t.Fatal(err)
	}
	if s, err := w.Updates.WebhookSecretValue(); err != nil || s != "s_1" || w.Updates.WebhookURL != "https://h.example.com" {
		t.Fatalf("webhook %q secret %q (%v)", w.Updates.WebhookURL, s, err)
	}
	if _, err := LoadProducer(nil, envOf(map[string]string{EnvTelegramWebhookSecret: "bad secret"})); err == nil || !strings.Contains(err.Error(), EnvTelegramWebhookSecret) {
		t.Errorf("producer with a bad secret: %v", err)
	}
	p, err := LoadProducer(nil, envOf(map[string]string{EnvTelegramWebhookSecret: "tg-1"}))
	if err != nil {
		t.Fatal(err)
	}
	if s, err := p.TelegramWebhookSecret(); err != nil || s != "tg-1" {
		t.Fatalf("producer secret %q, %v", s, err)
	}
}
