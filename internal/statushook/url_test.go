package statushook_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/herald-dev/herald/internal/statushook"
)

func TestValidateURLRefuses(t *testing.T) {
	p := statushook.Policy{}
	cases := []struct{ url, reason string }{
		{"http://example.com/hook", "must use https"},
		{"ftp://example.com/hook", "must be an https URL"},
		{"https://user:pw@example.com/hook", "user name or password"},
		{"https:///hook", "no host"},
		{"https://example.com:0/hook", "not from 1 to 65535"},
		{"https://example.com:70000/hook", "not from 1 to 65535"},
		{"https://example.com:22/hook", "port 22 is refused"},
		{"https://127.0.0.1/hook", "loopback"},
		{"https://[::1]/hook", "loopback"},
		{"https://[::ffff:127.0.0.1]/hook", "loopback"},
		{"https://169.254.169.254/latest/meta-data", "link-local"},
		{"https://[fe80::1]/hook", "link-local"},
		{"https://10.0.0.1/hook", "private (RFC 1918)"},
		{"https://192.168.1.1/hook", "private (RFC 1918)"},
		{"https://[fd00::1]/hook", "unique local"},
		{"https://100.64.0.1/hook", "CGNAT"},
		{"https://0.0.0.0/hook", "unspecified"},
		{"https://224.0.0.1/hook", "multicast"},
		{"https://localhost/hook", "localhost name"},
		{"https://api.localhost/hook", "localhost name"},
		{"https://example.com/" + strings.Repeat("a", 2048), "at most 2048"},
	}
	for _, c := range cases {
		_, err := p.ValidateURL(c.url)
		var uerr *statushook.URLError
		if !errors.As(err, &uerr) || uerr.Field != "callback_url" {
			t.Errorf("ValidateURL(%.60q) = %v, want a *URLError naming callback_url", c.url, err)
			continue
		}
		if !strings.HasPrefix(err.Error(), "callback_url: ") || !strings.Contains(err.Error(), c.reason) {
			t.Errorf("ValidateURL(%.60q) = %q, want the reason %q", c.url, err, c.reason)
		}
	}
}

func TestValidateURLAccepts(t *testing.T) {
	allow, err := statushook.ParseAllowList([]string{"127.0.0.0/8", "[::1]:*", "receiver.internal:*"})
	if err != nil {
		t.Fatal(err)
	}
	p := statushook.Policy{AllowHTTP: true, Allow: allow}
	for _, u := range []string{
		"https://example.com/hook",
		"https://example.com:8443/hook?x=1",
		"https://93.184.215.14:443/hook",
		"http://example.com:80/hook",
		"http://127.0.0.1:22/hook",
		"http://[::1]:8080/hook",
		"https://RECEIVER.internal:25/hook",
	} {
		if _, err := p.ValidateURL(u); err != nil {
			t.Errorf("ValidateURL(%q) = %v", u, err)
		}
	}
	if _, err := (statushook.Policy{}).ValidateURL("https://example.com/hook"); err != nil {
		t.Errorf("the zero Policy refuses a public https URL: %v", err)
	}
}

func TestParseAllowListRefusesGarbage(t *testing.T) {
	if _, err := statushook.ParseAllowList([]string{"10.0.0.0/33"}); err == nil || !strings.Contains(err.Error(), "10.0.0.0/33") {
		t.Fatalf("ParseAllowList(10.0.0.0/33) = %v", err)
	}
}
