package inbound

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/httpapi"
)

// syncBuffer is a log sink safe for the handler's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestSecretsStayOutOfLogs posts every accepted and refused case with a
// logger at debug level: no line holds a credential, right or wrong.
func TestSecretsStayOutOfLogs(t *testing.T) {
	t.Parallel()
	var out syncBuffer
	k, err := httpapi.NewKeyring(httpapi.NewToken("tools", sendSecret, httpapi.ScopeSend), httpapi.NewToken("ops", operateSecret, httpapi.ScopeOperate))
	if err != nil {
		t.Fatal(err)
	}
	h := newHandler(Config{Dispatcher: &recorder{}, Keyring: k, Clock: func() time.Time { return testNow },
		Logger: slog.New(slog.NewJSONHandler(&out, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	for _, tc := range acceptedCases {
		p := tc.post
		if strings.HasSuffix(p.body, ".json") {
			p.body = fixture(t, p.body)
		}
		p.do(h)
	}
	for _, tc := range refusedCases {
		tc.post.do(h)
	}
	logs := out.String()
	if !strings.Contains(logs, "inbound post refused") || !strings.Contains(logs, "inbound post accepted") {
		t.Fatalf("the handler logged neither outcome:\n%s", logs)
	}
	for _, secret := range []string{sendSecret, operateSecret, "nope\"", "/wrong"} {
		if strings.Contains(logs, secret) {
			t.Fatalf("a log line holds the credential %q:\n%s", secret, logs)
		}
	}
}
