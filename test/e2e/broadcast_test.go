package e2e_test

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/broadcast"
	"github.com/herald-dev/herald/internal/telegramfake"
	"github.com/herald-dev/herald/test/fleet"
	"github.com/herald-dev/herald/test/fleet/fleettest"
)

// TestBroadcastLaneBelowAlerts: a broadcast of a few thousand chats runs
// at the bot's limit through two workers; a critical message posted in its
// middle reaches Telegram within a second of its 202, ahead of the
// broadcast's backlog. Every chat of the broadcast gets its message once,
// with no 429, and the broadcast's status ends done with every message
// sent.
func TestBroadcastLaneBelowAlerts(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test skipped in -short mode")
	}
	const chats, first = 3000, 7_000_000
	lim := fleet.DefaultLimits(fleettest.TimeScale)
	s := fleettest.Start(t, fleettest.Options{Workers: 2, Timeout: 3 * time.Minute,
		// The producer's ETA follows the workers' (scaled) bot limit.
		ProducerEnv: []string{"HERALD_LIMIT_BOT=" + lim.Setting(lim.Bot)}})

	list := make([]int, chats)
	for i := range list {
		list[i] = first + i
	}
	body, _ := json.Marshal(map[string]any{"chats": list, "text": "Launch day for {{name}}", "defaults": map[string]string{"name": "you"}})
	start := time.Now()
	code, out := call(t, s.Fleet, http.MethodPost, s.Fleet.APIBase+"/v1/broadcasts", body, map[string]string{"Idempotency-Key": "launch"})
	if code != http.StatusAccepted {
		t.Fatalf("POST /v1/broadcasts: %d %s", code, out)
	}
	t.Logf("%d-chat broadcast answered in %s", chats, time.Since(start).Round(time.Millisecond))
	var res broadcast.Result
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.Queued != chats {
		t.Fatalf("POST answered %s (%v)", out, err)
	}

	// Mid-broadcast: a sixth of it sent, most still queued.
	if err := s.Fake.Wait(s.Ctx, chats/6); err != nil {
		t.Fatal(err)
	}
	const alertText = "CRITICAL: db-1 is down"
	alert, latency := postAndWait(t, s, `{"chat":"-1001000000777","text":"`+alertText+`","queue":"critical"}`, alertText)
	before := 0
	for _, m := range s.Fake.Messages() {
		if m.At.Before(alert.At) && m.Text != alertText {
			before++
		}
	}
	t.Logf("critical message reached the fake %s after its 202, with %d of %d broadcast messages sent before it", latency.Round(time.Millisecond), before, chats)
	if latency > time.Second {
		t.Errorf("the critical message took %s to reach Telegram during the broadcast, want at most 1s", latency)
	}
	if before >= chats-chats/10 {
		t.Errorf("the critical message went out after %d of %d broadcast messages: it waited for the broadcast", before, chats)
	}

	// A message of the default queue does not wait for the broadcast
	// either: the broadcast is a lane (HERALD_LANE_QUEUES) and leaves part
	// of every bot-wide window to the other queues.
	const noticeText = "deploy finished"
	notice, noticeLatency := postAndWait(t, s, `{"chat":"-1001000000778","text":"`+noticeText+`"}`, noticeText)
	left := chats
	for _, m := range s.Fake.Messages() {
		if m.At.Before(notice.At) && m.Text == "Launch day for you" {
			left--
		}
	}
	t.Logf("default-queue message reached the fake %s after its 202, with %d broadcast messages still to go", noticeLatency.Round(time.Millisecond), left)
	if left < chats/10 {
		t.Errorf("the default-queue message went out with %d of %d broadcast messages left: it waited for the broadcast", left, chats)
	}

	if err := s.Fake.Wait(s.Ctx, chats+2); err != nil {
		t.Fatal(err)
	}
	got := map[int64]int{}
	for _, m := range s.Fake.Messages() {
		if m.Text == "Launch day for you" {
			got[m.ChatID]++
		}
	}
	for _, c := range list {
		if n := got[int64(c)]; n != 1 {
			t.Errorf("chat %d got the broadcast %d times, want once", c, n)
			break
		}
	}
	if st := s.Fake.Stats(); st.TooMany != 0 {
		t.Errorf("the fake answered %d 429s, want none (bot-wide %d, per chat %v, flood %d)", st.TooMany, st.TooManyBot, st.TooManyByChat, st.TooManyFlood)
	}
	var st broadcast.Status
	waitFor(t, s.Ctx, "the broadcast's status to read done", func() bool {
		code, out := call(t, s.Fleet, http.MethodGet, s.Fleet.APIBase+"/v1/broadcasts/"+res.ID, nil, nil)
		if code != http.StatusOK || json.Unmarshal([]byte(out), &st) != nil {
			t.Fatalf("GET /v1/broadcasts/%s: %d %s", res.ID, code, out)
		}
		return st.State == "done"
	})
	if st.Sent != chats || st.Queued != 0 || st.Failed != 0 {
		t.Errorf("final status %+v, want all %d sent", st, chats)
	}
	// A repeat of the request stores nothing: no chat hears twice.
	code, out = call(t, s.Fleet, http.MethodPost, s.Fleet.APIBase+"/v1/broadcasts", body, map[string]string{"Idempotency-Key": "launch"})
	if code != http.StatusAccepted || !json.Valid([]byte(out)) || !strings.Contains(out, `"duplicate":true`) {
		t.Errorf("repeated POST: %d %s", code, out)
	}
}

// postAndWait posts body to /v1/messages and waits until the fake holds
// the message whose text is text; it returns that message and the time
// from the 202 to its arrival at the fake.
func postAndWait(t *testing.T, s *fleettest.Stack, body, text string) (telegramfake.Message, time.Duration) {
	t.Helper()
	code, out := call(t, s.Fleet, http.MethodPost, s.Fleet.APIBase+"/v1/messages", []byte(body), nil)
	posted := time.Now()
	if code != http.StatusAccepted {
		t.Fatalf("POST /v1/messages: %d %s", code, out)
	}
	var got telegramfake.Message
	waitFor(t, s.Ctx, "the message "+strconv.Quote(text), func() bool {
		for _, m := range s.Fake.Messages() {
			if m.Text == text {
				got = m
				return true
			}
		}
		time.Sleep(5 * time.Millisecond)
		return false
	})
	return got, got.At.Sub(posted)
}
