package interact

import (
	"strings"
	"testing"

	"github.com/herald-dev/herald/internal/config"
)

// loadUpdates loads the worker's settings of presses from env and args.
func loadUpdates(args []string, env map[string]string) (UpdatesConfig, error) {
	var c UpdatesConfig
	if _, err := config.Load("worker", c.Specs(), args, func(k string) string { return env[k] }); err != nil {
		return UpdatesConfig{}, err
	}
	var p config.Problems
	c.Check(&p)
	return c, p.Err()
}

// TestUpdatesSettings: presses are received by default; the webhook needs
// its secret and a plain base URL; turning presses off refuses a URL; the
// producer checks the secret's characters.
func TestUpdatesSettings(t *testing.T) {
	t.Parallel()
	c, err := loadUpdates(nil, nil)
	if err != nil || c.Off || c.WebhookURL != "" {
		t.Fatalf("default updates %+v (%v), want presses received by polling", c, err)
	}
	if c, err = loadUpdates([]string{"-telegram-updates=false"}, nil); err != nil || !c.Off {
		t.Fatalf("-telegram-updates=false: %+v, %v", c, err)
	}
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{EnvWebhookURL: "https://h.example.com"}, "is required with " + EnvWebhookURL},
		{map[string]string{EnvWebhookURL: "ftp://h.example.com", EnvWebhookSecret: "ok"}, EnvWebhookURL},
		{map[string]string{EnvWebhookURL: "https://h.example.com?x=1", EnvWebhookSecret: "ok"}, "without user, query or fragment"},
		{map[string]string{EnvWebhookURL: "https://h.example.com", EnvWebhookSecret: "not ok!"}, "A-Z, a-z, 0-9"},
		{map[string]string{EnvWebhookURL: "https://h.example.com", EnvWebhookSecret: "ok", EnvUpdates: "false"}, "is off"},
		{map[string]string{EnvWebhookSecret: "ok", EnvWebhookSecretFile: "/x"}, "are both set"},
	} {
		if _, err := loadUpdates(nil, tc.env); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want one saying %q", tc.env, err, tc.want)
		}
	}
	c, err = loadUpdates(nil, map[string]string{EnvWebhookURL: "https://h.example.com/", EnvWebhookSecret: "s_1"})
	if err != nil {
		t.Fatal(err)
	}
	if s, err := c.Value(); err != nil || s != "s_1" || c.WebhookURL != "https://h.example.com" {
		t.Fatalf("webhook %q secret %q (%v)", c.WebhookURL, s, err)
	}
	var p config.Problems
	ReceiverSettings{WebhookSecret{Secret: "bad secret"}}.Check(&p)
	if err := p.Err(); err == nil || !strings.Contains(err.Error(), EnvWebhookSecret) {
		t.Errorf("producer with a bad secret: %v", err)
	}
	p = nil
	ReceiverSettings{}.Check(&p)
	if err := p.Err(); err != nil {
		t.Errorf("producer without a secret: %v", err)
	}
}
