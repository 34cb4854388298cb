package httpapi

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// whoami answers the name of the request's principal.
var whoami = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	p, _ := PrincipalFrom(r.Context())
	_, _ = w.Write([]byte(p.Name))
})

func TestKeyringScopes(t *testing.T) {
	t.Parallel()
	k, err := NewKeyring(
		NewToken("api", "sender-secret", ScopeSend),
		NewToken("oncall", "operator-secret", ScopeSend, ScopeOperate),
		newHashedToken("cron", sha256.Sum256([]byte("cron-secret")), ScopeSend),
	)
	if err != nil {
		t.Fatal(err)
	}
	h := k.Require(ScopeOperate, whoami)
	send := k.Require(ScopeSend, whoami)
	for _, tc := range []struct {
		name, auth string
		h          http.Handler
		code       int
		body       string
	}{
		{"no token", "", h, 401, ""},
		{"wrong token", "Bearer nope", h, 401, ""},
		{"send lacks operate", "Bearer sender-secret", h, 403, `token \"api\" lacks the \"operate\" scope`},
		{"operate", "Bearer operator-secret", h, 200, "oncall"},
		{"hashed token", "Bearer cron-secret", send, 200, "cron"},
		{"basic auth password", basic("operator-secret"), h, 200, "oncall"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, "/", nil)
			if tc.auth != "" {
				r.Header.Set("Authorization", tc.auth)
			}
			w := httptest.NewRecorder()
			tc.h.ServeHTTP(w, r)
			if w.Code != tc.code || !strings.Contains(w.Body.String(), tc.body) {
				t.Errorf("%d %s, want %d with %q", w.Code, w.Body, tc.code, tc.body)
			}
		})
	}
}

func basic(pw string) string {
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.SetBasicAuth("herald", pw)
	return r.Header.Get("Authorization")
}

// TestRequireScopeFailsClosed: a handler behind requireScope that nobody
// authenticated refuses every request.
func TestRequireScopeFailsClosed(t *testing.T) {
	t.Parallel()
	w := httptest.NewRecorder()
	requireScope(ScopeSend, whoami).ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/", nil))
	if w.Code != http.StatusForbidden {
		t.Fatalf("%d %s, want 403", w.Code, w.Body)
	}
}

func TestOpenKeyringIsLocal(t *testing.T) {
	t.Parallel()
	k := OpenKeyring()
	w := httptest.NewRecorder()
	k.Require(ScopeAdmin, whoami).ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/", nil))
	if w.Code != 200 || w.Body.String() != "local" || !k.Grants(ScopeAdmin) {
		t.Fatalf("%d %s, want 200 local", w.Code, w.Body)
	}
}

func TestNewKeyringRefuses(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		tokens []Token
		want   string
	}{
		{"none", nil, "no API token"},
		{"bad name", []Token{NewToken("Grafana Prod", "s", ScopeSend)}, "token name"},
		{"no scope", []Token{NewToken("a", "s")}, "no scope"},
		{"same name", []Token{NewToken("a", "s1", ScopeSend), NewToken("a", "s2", ScopeSend)}, "used twice"},
		{"same secret", []Token{NewToken("a", "s", ScopeSend), NewToken("b", "s", ScopeAdmin)}, "same secret"},
	} {
		if _, err := NewKeyring(tc.tokens...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error with %q", tc.name, err, tc.want)
		}
	}
}

func TestLoadTokensFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("grafana.token", "grafana-secret-0123456789\n")
	sum := sha256.Sum256([]byte("cron-secret-0123456789"))
	path := write("tokens.yaml", "tokens:\n"+
		"  - name: grafana\n    scopes: [send]\n    file: grafana.token\n"+
		"  - name: cron\n    scopes: send\n    sha256: "+hex.EncodeToString(sum[:])+"\n")
	tokens, err := LoadTokensFile(path)
	if err != nil {
		t.Fatal(err)
	}
	k, err := NewKeyring(tokens...)
	if err != nil {
		t.Fatal(err)
	}
	for secret, want := range map[string]string{"grafana-secret-0123456789": "grafana", "cron-secret-0123456789": "cron"} {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.Header.Set("Authorization", "Bearer "+secret)
		if p, ok := k.Identify(r); !ok || p.Name != want || !p.Has(ScopeSend) || p.Has(ScopeOperate) {
			t.Errorf("%s: identified as %v (%v), want %s with send only", want, p, ok, want)
		}
	}
}

// TestTokensFileMistakes: every mistake is reported with its line and
// column, and no error holds a secret.
func TestTokensFileMistakes(t *testing.T) {
	t.Parallel()
	secrets := map[string]string{"short": "tiny", "ok": "a-long-enough-secret-9876"}
	read := func(p string) (string, error) {
		if s, ok := secrets[p]; ok {
			return s, nil
		}
		return "", os.ErrNotExist
	}
	data := []byte(`tokens:
  - name: Bad Name
    scopes: [send]
    file: ok
  - name: b
    scopes: [sned]
    file: ok
  - name: c
    file: ok
  - name: d
    scopes: send
    file: short
  - name: e
    scopes: send
    sha256: xyz
  - name: f
    scopes: send
  - name: g
    scopes: send
    file: missing
    sha256: 00
  - name: h
    scope: send
`)
	_, err := parseTokens(data, "tokens.yaml", read)
	if err == nil {
		t.Fatal("no error")
	}
	msg := err.Error()
	for _, want := range []string{
		`tokens.yaml:2:11: tokens[0].name: "Bad Name" is not a token name`,
		`tokens.yaml:6:14: tokens[1].scopes[0]: "sned" is not a scope`,
		`tokens[2].scopes: no scope is given`,
		`tokens.yaml:12:11: tokens[3].file: the token in "short" is shorter than 16 characters`,
		`tokens[4].sha256: is not a SHA-256 digest`,
		`tokens[5]: the token has neither file nor sha256`,
		`tokens[6].sha256: file and sha256 are both given`,
		`tokens[7].scope: unknown key; did you mean "scopes"?`,
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("missing %q in\n%s", want, msg)
		}
	}
	for _, s := range secrets {
		if strings.Contains(msg, s) {
			t.Errorf("the error shows the secret %q", s)
		}
	}
}
