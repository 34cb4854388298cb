package webhooks

import (
	"bytes"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/herald-dev/herald/internal/httpapi"
)

// unreadable is a body that fails the test when read.
type unreadable struct{ t *testing.T }

func (u unreadable) Read([]byte) (int, error) {
	u.t.Error("the body of a request refused on its headers was read")
	return 0, errors.New("must not be read")
}

// TestRefusedBeforeTheBodyIsRead sends signed-webhook requests whose
// headers already disqualify them, with a body that must not be read: a
// malformed signature, a stale Sentry timestamp, a declared length over
// the webhook limit.
func TestRefusedBeforeTheBodyIsRead(t *testing.T) {
	t.Parallel()
	h := newHandler(t, &recorder{}, nil)
	sig := "sha256=" + strings.Repeat("ab", 32)
	tests := []struct {
		name, path string
		header     map[string]string
		length     int64
		status     int
	}{
		{"github malformed signature", pathGitHub, map[string]string{headerGitHubSignature: "sha256=00"}, 100, 401},
		{"github oversized", pathGitHub, map[string]string{headerGitHubSignature: sig}, 1 << 20, 413},
		{"sentry malformed signature", pathSentry, merge(sentryHeaders("issue"), map[string]string{headerSentrySignature: "00"}), 100, 401},
		{"sentry stale", pathSentry, merge(sentryHeaders("issue"), map[string]string{headerSentrySignature: strings.Repeat("ab", 32), headerSentryTimestamp: "1000000000"}), 100, 401},
		{"sentry oversized", pathSentry, merge(sentryHeaders("issue"), map[string]string{headerSentrySignature: strings.Repeat("ab", 32)}), 1 << 20, 413},
		{"alertmanager oversized", pathAlertmanager, map[string]string{"Authorization": "Bearer " + testToken}, DefaultMaxBodyBytes + 1, 413},
	}
	for _, tc := range tests {
		r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1"+tc.path, unreadable{t})
		r.ContentLength = tc.length
		for k, v := range merge(ghEvent("issues"), tc.header) {
			r.Header.Set(k, v)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != tc.status {
			t.Errorf("%s: status %d, want %d: %s", tc.name, w.Code, tc.status, w.Body)
		}
	}
}

// TestWebhookBodyLimit checks the webhook limit on bodies whose length is
// not declared: 256 KiB by default, below the API's 1 MiB.
func TestWebhookBodyLimit(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	h := newHandler(t, rec, nil)
	big := append([]byte(`{"x":"`), bytes.Repeat([]byte("a"), DefaultMaxBodyBytes)...)
	big = append(big, `"}`...)
	for _, sender := range []string{"github", "sentry", "alertmanager"} {
		resp := serve(h, req{sender: sender, body: big, header: validFixture[sender].header})
		requireError(t, resp, http.StatusRequestEntityTooLarge, httpapi.CodeBodyTooLarge)
	}
	rec.requireNothing(t)
}
