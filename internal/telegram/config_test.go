package telegram

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"
)

func TestNewValidates(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		cfg     Config
		wantErr string // substring; "" means New must succeed
	}{
		{name: "defaults", cfg: Config{Token: testToken}},
		{name: "local bot API server with path", cfg: Config{Token: testToken, APIURL: "http://127.0.0.1:8081/tg/", Timeout: time.Second}},
		{name: "missing token", cfg: Config{}, wantErr: "Config.Token is empty"},
		{name: "token with a space", cfg: Config{Token: "12345:sekret value"}, wantErr: "Config.Token contains the character ' '"},
		{name: "token with a slash", cfg: Config{Token: "12345:sekret/value"}, wantErr: "Config.Token contains the character '/'"},
		{name: "negative timeout", cfg: Config{Token: testToken, Timeout: -time.Second}, wantErr: "TELEGRAM_TIMEOUT (-telegram-timeout) must be > 0"},
		{name: "ftp scheme", cfg: Config{Token: testToken, APIURL: "ftp://api.telegram.org"}, wantErr: `TELEGRAM_API_URL (-telegram-api-url) must be an http:// or https:// URL such as https://api.telegram.org, got "ftp://api.telegram.org"`},
		{name: "no scheme", cfg: Config{Token: testToken, APIURL: "api.telegram.org"}, wantErr: "must be an http:// or https:// URL"},
		{name: "unparsable", cfg: Config{Token: testToken, APIURL: "http://[::1"}, wantErr: `got "http://[::1"`},
		{name: "no host", cfg: Config{Token: testToken, APIURL: "https:///path"}, wantErr: "must be an http:// or https:// URL"},
		{name: "query", cfg: Config{Token: testToken, APIURL: "https://api.telegram.org/?x=1"}, wantErr: "query or fragment"},
		{name: "token in the path", cfg: Config{Token: testToken, APIURL: "https://api.telegram.org/bot123:secret"}, wantErr: "without /bot<token>"},
		{name: "user info", cfg: Config{Token: testToken, APIURL: "https://u:p@api.telegram.org"}, wantErr: `without user, query or fragment, got "https://u:xxxxx@api.telegram.org"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, err := New(tc.cfg)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("New: %v", err)
				}
				c.CloseIdleConnections()
				return
			}
			if err == nil {
				t.Fatalf("New succeeded, want an error containing %q", tc.wantErr)
			}
			if !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("error %q does not contain %q", err, tc.wantErr)
			}
			if strings.Contains(err.Error(), "sekret") {
				t.Errorf("error %q quotes the token", err)
			}
		})
	}
}

func TestNewDefaults(t *testing.T) {
	t.Parallel()
	c, err := New(Config{Token: testToken})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdleConnections()
	if c.apiURL != DefaultAPIURL || c.timeout != defaultTimeout {
		t.Errorf("apiURL %q timeout %s, want %q and %s", c.apiURL, c.timeout, DefaultAPIURL, defaultTimeout)
	}
	if c.http.Timeout != defaultTimeout || c.http.CheckRedirect == nil {
		t.Errorf("default http.Client: Timeout %s, CheckRedirect set %t", c.http.Timeout, c.http.CheckRedirect != nil)
	}
	if c.endpoint != DefaultAPIURL+"/bot%s/%s" {
		t.Errorf("endpoint %q", c.endpoint)
	}
}

func TestConfigAndClientPrintWithoutToken(t *testing.T) {
	t.Parallel()
	cfg := Config{Token: testToken, APIURL: "http://127.0.0.1:1"}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdleConnections()
	for _, f := range []string{"%v", "%+v", "%#v", "%s"} {
		assertNoToken(t, "Config "+f, fmt.Sprintf(f, cfg))
		assertNoToken(t, "*Config "+f, fmt.Sprintf(f, &cfg))
		assertNoToken(t, "Client "+f, fmt.Sprintf(f, c))
	}
	var buf bytes.Buffer
	slog.New(slog.NewTextHandler(&buf, nil)).Info("starting", "config", cfg, "client", c)
	if !strings.Contains(buf.String(), "127.0.0.1:1") {
		t.Errorf("log lacks the API URL, so the check is vacuous: %s", buf.String())
	}
	assertNoToken(t, "slog", buf.String())
}
