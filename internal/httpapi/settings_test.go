package httpapi

import (
	"net/http/httptest"
	"os"
	"strings"
	"testing"
)

// TestNewKeyringFromSettings: HERALD_API_TOKEN is "api" with send only,
// HERALD_ADMIN_TOKEN "admin" with every scope, the tokens file adds its
// own; a name or a secret used twice across them stops the start.
func TestKeyringConfigBuild(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, dir+"/ops.token", "ops-token-0123456789")
	writeFile(t, dir+"/tokens.yaml", "tokens:\n  - {name: ops, scopes: [send, operate], file: ops.token}\n")
	k, err := (KeyringConfig{APIToken: "sender", AdminToken: "administrator", TokensFile: dir + "/tokens.yaml"}).Build()
	if err != nil {
		t.Fatal(err)
	}
	for secret, want := range map[string][]Scope{
		"sender":               {ScopeSend},
		"administrator":        AllScopes,
		"ops-token-0123456789": {ScopeSend, ScopeOperate},
	} {
		r := httptest.NewRequest("GET", "/", nil)
		r.Header.Set("Authorization", "Bearer "+secret)
		p, ok := k.Identify(r)
		if !ok || strings.Join(scopeStrings(p.Scopes), ",") != strings.Join(scopeStrings(want), ",") {
			t.Errorf("%s: %v %v, want scopes %v", secret, p, ok, want)
		}
	}
	writeFile(t, dir+"/clash.yaml", "tokens:\n  - {name: api, scopes: [send, operate], file: ops.token}\n")
	if _, err := (KeyringConfig{APIToken: "sender", TokensFile: dir + "/clash.yaml"}).Build(); err == nil || !strings.Contains(err.Error(), `"api" is used twice`) {
		t.Errorf("a tokens file naming api beside HERALD_API_TOKEN: %v", err)
	}
	if _, err := (KeyringConfig{APIToken: "ops-token-0123456789", TokensFile: dir + "/tokens.yaml"}).Build(); err == nil || !strings.Contains(err.Error(), "same secret") {
		t.Errorf("one secret for two tokens: %v", err)
	}
	if k, err := (KeyringConfig{AuthDisabled: true}).Build(); err != nil || !k.Open() {
		t.Errorf("HERALD_AUTH_DISABLED: %v, open=%v", err, k != nil && k.Open())
	}
}

func scopeStrings(ss []Scope) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = string(s)
	}
	return out
}

// writeFile writes content to path or fails the test.
func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}
