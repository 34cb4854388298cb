package e2e_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/keys"
	"github.com/herald-dev/herald/internal/telegramfake"
	"github.com/herald-dev/herald/test/fleet/fleettest"
)

// oncallOnlyRoutes is a routing file with one schedule (Alice on call),
// announced in the group that asks (oncallGroup), and a route for the
// alerts nobody sends here.
const oncallOnlyRoutes = `
schedules:
  - name: primary
    time_zone: Europe/Berlin
    chat: "-1003000000002"
    layers:
      - {users: [{id: 1001, name: Alice, username: alice_oncall}], shift: weekly, handoff: "09:00", start: 2026-01-05}
routes:
  - name: all
    default: true
    destinations: ["-1003000000001"]
`

// oncallGroup is the supergroup that asks.
const oncallGroup = -1003000000002

// TestOnCallAnsweredThroughBothReaders asks /oncall in a group, once with
// the workers reading updates by getUpdates and once by the webhook the
// producer serves (the binaries, the fake in between): each answer comes
// within 2 s of the question, in real time (the fake's clock does not
// enter into it).
func TestOnCallAnsweredThroughBothReaders(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test skipped in -short mode")
	}
	for _, reader := range []string{"getUpdates", "webhook"} {
		t.Run(reader, func(t *testing.T) {
			s := fleettest.Start(t, fleettest.Options{NoProducer: true, Updates: true, Timeout: time.Minute,
				Fake: telegramfake.Config{TimeScale: scale}})
			routes := filepath.Join(t.TempDir(), "routes.yaml")
			if err := os.WriteFile(routes, []byte(oncallOnlyRoutes), 0o600); err != nil {
				t.Fatal(err)
			}
			const secret = "e2e_webhook_secret"
			p, base, err := s.Fleet.StartProducerProc(s.Ctx, "producer", "HERALD_ROUTES_FILE="+routes, "HERALD_TELEGRAM_WEBHOOK_SECRET="+secret)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { stopProc(p) })
			var env []string
			if reader == "webhook" {
				env = []string{"HERALD_TELEGRAM_WEBHOOK_URL=" + base, "HERALD_TELEGRAM_WEBHOOK_SECRET=" + secret}
			}
			if _, err := s.Fleet.StartWorker(s.Ctx, env...); err != nil {
				t.Fatal(err)
			}
			rdb := redis.NewClient(&redis.Options{Addr: s.Redis.Addr})
			t.Cleanup(func() { _ = rdb.Close() })
			waitFor(t, s.Ctx, "the schedules published and the reader ready", func() bool {
				st, err := s.Fake.Updates("")
				ready := err == nil && st.LongPolling // a worker polls
				if reader == "webhook" {
					ready = err == nil && st.Webhook == base+"/telegram/default/updates"
				}
				return ready && rdb.Exists(s.Ctx, keys.OnCallSchedules()).Val() == 1
			})
			askedAt := time.Now()
			if _, delivered, err := s.Fake.Say("", oncallGroup, 0, telegramfake.User{ID: 555, FirstName: "Erin"}, "/oncall"); err != nil || !delivered {
				t.Fatalf("Say: %v, %v", delivered, err)
			}
			var answer telegramfake.Message
			if err := s.Fake.WaitUntil(s.Ctx, func() bool {
				for _, m := range s.Fake.Messages() {
					if m.ChatID == oncallGroup && strings.HasPrefix(m.Text, "📟 primary: Alice (@alice_oncall)") {
						answer = m
						return true
					}
				}
				return false
			}); err != nil {
				t.Fatalf("waiting for the answer to /oncall: %v", err)
			}
			took := answer.At.Sub(askedAt)
			t.Logf("/oncall through %s: answered %v after the question", reader, took.Round(time.Millisecond))
			if took > 2*time.Second {
				t.Errorf("/oncall through %s answered after %v, want within 2s", reader, took)
			}
		})
	}
}
