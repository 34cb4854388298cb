package statushook_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/statushook"
)

// The published test vector: svix/svix-webhooks, go/webhook_test.go,
// TestWebhookSign (the same values are used by the Standard Webhooks
// reference libraries in github.com/standard-webhooks/standard-webhooks).
const (
	vectorSecret    = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	vectorID        = "msg_p5jXN8AQM9LWM0D4loKWxJek"
	vectorTimestamp = 1614265330
	vectorBody      = `{"test": 2432232314}`
	vectorSignature = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
)

func TestSignMatchesPublishedVector(t *testing.T) {
	got, err := statushook.Sign(vectorID, time.Unix(vectorTimestamp, 0), []byte(vectorBody), vectorSecret)
	if err != nil {
		t.Fatal(err)
	}
	if got != vectorSignature {
		t.Fatalf("Sign = %q, want the published %q", got, vectorSignature)
	}
}

func TestVerifyPublishedVector(t *testing.T) {
	h := http.Header{}
	h.Set(statushook.HeaderID, vectorID)
	h.Set(statushook.HeaderTimestamp, "1614265330")
	h.Set(statushook.HeaderSignature, vectorSignature)
	now := time.Unix(vectorTimestamp, 0).Add(time.Minute)
	if err := statushook.Verify(vectorSecret, h, []byte(vectorBody), now, 0); err != nil {
		t.Fatalf("Verify of the published vector: %v", err)
	}
}

func TestSignSeveralSecretsForRotation(t *testing.T) {
	other := mustSecret(t)
	at := time.Unix(vectorTimestamp, 0)
	h, err := statushook.Headers(vectorID, at, []byte(vectorBody), other, vectorSecret)
	if err != nil {
		t.Fatal(err)
	}
	sig := h.Get(statushook.HeaderSignature)
	parts := strings.Split(sig, " ")
	if len(parts) != 2 || parts[1] != vectorSignature {
		t.Fatalf("webhook-signature = %q, want two entries, the second %q", sig, vectorSignature)
	}
	for _, s := range []string{other, vectorSecret} {
		if err := statushook.Verify(s, h, []byte(vectorBody), at, 0); err != nil {
			t.Errorf("Verify with one of the two secrets: %v", err)
		}
	}
	if err := statushook.Verify(mustSecret(t), h, []byte(vectorBody), at, 0); !errors.Is(err, statushook.ErrNoMatch) {
		t.Errorf("Verify with a third secret = %v, want ErrNoMatch", err)
	}
}

func TestHeadersCarryIDAndUnixSeconds(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 678e6, time.UTC)
	h, err := statushook.Headers("evt_1", at, []byte("{}"), vectorSecret)
	if err != nil {
		t.Fatal(err)
	}
	if h.Get(statushook.HeaderID) != "evt_1" || h.Get(statushook.HeaderTimestamp) != "1767323045" {
		t.Fatalf("headers = %v", h)
	}
}

func TestSignRefuses(t *testing.T) {
	at := time.Unix(vectorTimestamp, 0)
	cases := []struct {
		name, id string
		secrets  []string
		want     error
		reason   string
	}{
		{"empty id", "", []string{vectorSecret}, statushook.ErrMessageID, "empty"},
		{"id with a dot", "a.b", []string{vectorSecret}, statushook.ErrMessageID, "'.'"},
		{"id with a space", "a b", []string{vectorSecret}, statushook.ErrMessageID, "whitespace"},
		{"no secret", "evt", nil, statushook.ErrSecret, "no secret"},
		{"no prefix", "evt", []string{"MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}, statushook.ErrSecret, "whsec_"},
		{"not base64", "evt", []string{"whsec_!!!"}, statushook.ErrSecret, "base64"},
		{"too short", "evt", []string{"whsec_c2hvcnQ="}, statushook.ErrSecret, "5 bytes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := statushook.Sign(c.id, at, []byte("{}"), c.secrets...)
			if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.reason) {
				t.Fatalf("Sign = %v, want %v mentioning %q", err, c.want, c.reason)
			}
		})
	}
}

func TestNewSecretRoundTrips(t *testing.T) {
	s := mustSecret(t)
	key, err := statushook.DecodeSecret(s)
	if err != nil || len(key) != 32 {
		t.Fatalf("DecodeSecret(NewSecret()) = %d bytes, %v", len(key), err)
	}
	if s == mustSecret(t) {
		t.Fatal("two NewSecret calls returned the same secret")
	}
}

func mustSecret(t *testing.T) string {
	t.Helper()
	s, err := statushook.NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	return s
}
