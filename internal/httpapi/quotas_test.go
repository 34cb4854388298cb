package httpapi

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/quota"
)

func TestTokensFileQuotas(t *testing.T) {
	t.Parallel()
	read := func(string) (string, error) { return "a-long-enough-secret-9876", nil }
	data := []byte(`tokens:
  - name: news
    scopes: [send]
    file: x
    paid: true
    quotas:
      queued_recipients: 500000
      broadcasts_per_hour: -1
      audience_ttl: 720h
`)
	tokens, err := parseTokens(data, "tokens.yaml", read)
	if err != nil {
		t.Fatal(err)
	}
	l := tokens[0].Quotas.WithDefaults()
	if l.QueuedRecipients != 500000 || l.BroadcastsPerHour != -1 || l.AudienceTTL != 720*time.Hour ||
		l.QueuedMessages != quota.DefaultQueuedMessages || l.AlertsPerMinute != quota.DefaultAlertsPerMinute {
		t.Fatalf("limits %+v", l)
	}
	if !tokens[0].Paid {
		t.Fatal("paid: true was not read")
	}
	_, err = parseTokens([]byte(`tokens:
  - name: news
    scopes: [send]
    file: x
    quotas:
      queued_messages: 0
      alerts_per_minut: 5
      audience_ttl: 1s
`), "tokens.yaml", read)
	for _, want := range []string{
		`tokens.yaml:6:24: tokens[0].quotas.queued_messages: 0 is not a quota`,
		`tokens[0].quotas.alerts_per_minut: unknown key; did you mean "alerts_per_minute"?`,
		`tokens[0].quotas.audience_ttl: 1s is not an audience lifetime`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in %v", want, err)
		}
	}
}

func TestTooManyRequestsNamesTheQuota(t *testing.T) {
	t.Parallel()
	rec := httptest.NewRecorder()
	reset := time.Now().Add(90 * time.Second).Truncate(time.Second)
	TooManyRequests(rec, "news", &quota.Exceeded{Usage: quota.Usage{Name: quota.NameBroadcastsPerHour, Limit: 60, Used: 60, Reset: reset},
		Asked: 1, RetryAfter: 89500 * time.Millisecond})
	if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") != "90" ||
		rec.Header().Get("X-RateLimit-Limit") != "60" || rec.Header().Get("X-RateLimit-Remaining") != "0" {
		t.Fatalf("%d %v", rec.Code, rec.Header())
	}
	var body QuotaBody
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatal(err)
	}
	if body.Error.Code != CodeQuotaExceeded || body.Quota.Name != quota.NameBroadcastsPerHour || body.Quota.Current != 60 ||
		!strings.Contains(body.Error.Message, "broadcasts_per_hour") {
		t.Fatalf("%+v", body)
	}
}
