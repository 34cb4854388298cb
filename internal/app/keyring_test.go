package app

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/herald-dev/herald/internal/httpapi"
	"github.com/herald-dev/herald/internal/settings"
)

// TestNewKeyringFromSettings: HERALD_API_TOKEN is "api" with send only,
// HERALD_ADMIN_TOKEN "admin" with every scope, the tokens file adds its
// own; a name or a secret used twice across them stops the start.
func TestNewKeyringFromSettings(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, dir+"/ops.token", "ops-token-0123456789")
	writeFile(t, dir+"/tokens.yaml", "tokens:\n  - {name: ops, scopes: [send, operate], file: ops.token}\n")
	k, err := NewKeyring(settings.Producer{APIToken: "sender", AdminToken: "administrator", TokensFile: dir + "/tokens.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	for secret, want := range map[string][]httpapi.Scope{
		"sender":               {httpapi.ScopeSend},
		"administrator":        httpapi.AllScopes,
		"ops-token-0123456789": {httpapi.ScopeSend, httpapi.ScopeOperate},
	} {
		r := httptest.NewRequest("GET", "/", nil)
		r.Header.Set("Authorization", "Bearer "+secret)
		p, ok := k.Identify(r)
		if !ok || strings.Join(scopeStrings(p.Scopes), ",") != strings.Join(scopeStrings(want), ",") {
			t.Errorf("%s: %v %v, want scopes %v", secret, p, ok, want)
		}
	}
	writeFile(t, dir+"/clash.yaml", "tokens:\n  - {name: api, scopes: [send, operate], file: ops.token}\n")
	if _, err := NewKeyring(settings.Producer{APIToken: "sender", TokensFile: dir + "/clash.yaml"}); err == nil || !strings.Contains(err.Error(), `"api" is used twice`) {
		t.Errorf("a tokens file naming api beside HERALD_API_TOKEN: %v", err)
	}
	if _, err := NewKeyring(settings.Producer{APIToken: "ops-token-0123456789", TokensFile: dir + "/tokens.yaml"}); err == nil || !strings.Contains(err.Error(), "same secret") {
		t.Errorf("one secret for two tokens: %v", err)
	}
	if k, err := NewKeyring(settings.Producer{AuthDisabled: true}); err != nil || !k.Open() {
		t.Errorf("HERALD_AUTH_DISABLED: %v, open=%v", err, k != nil && k.Open())
	}
}

func scopeStrings(ss []httpapi.Scope) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = string(s)
	}
	return out
}
