package e2e_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/broadcast"
	"github.com/herald-dev/herald/internal/telegramfake"
	"github.com/herald-dev/herald/test/fleet"
	"github.com/herald-dev/herald/test/fleet/fleettest"
)

// TestEditDuringPaidBroadcast: while a paid broadcast sends at 1,000 a
// second (Telegram's own time), an edit of another chat's message cannot
// carry allow_paid_broadcast and must fit the free 30 in any second counted
// over all sends. It still reaches Telegram within 2 s, and a critical
// message posted right after it is not held behind it (within 1 s), with no
// 429 from the fake, which counts every unflagged request against the free
// window.
func TestEditDuringPaidBroadcast(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test skipped in -short mode")
	}
	lim := fleet.DefaultLimits(1)
	paidLimits := lim
	paidLimits.Paid = fleet.PaidWindows
	s := fleettest.Start(t, fleettest.Options{Workers: 2, Timeout: 3 * time.Minute, Paid: true,
		Fake:        telegramfake.Config{TimeScale: 1, PaidBroadcast: telegramfake.Paid{Enabled: true, Balance: 100000}},
		ProducerEnv: []string{"HERALD_LIMIT_BOT=" + lim.Setting(fleet.PaidWindows)}})

	const chat, key = "-1001000000777", "deploy-42"
	opened, _ := postAndWait(t, s, `{"chat":"`+chat+`","text":"Deploy 42 started","thread":{"key":"`+key+`","mode":"open"}}`, "Deploy 42 started")

	const chats, first, text = 8000, 9_000_000, "Flash sale"
	list := make([]int, chats)
	for i := range list {
		list[i] = first + i
	}
	body, _ := json.Marshal(map[string]any{"chats": list, "text": text})
	code, out := call(t, s.Fleet, http.MethodPost, s.Fleet.APIBase+"/v1/broadcasts", body, nil)
	if code != http.StatusAccepted {
		t.Fatalf("POST /v1/broadcasts: %d %s", code, out)
	}
	var res broadcast.Result
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if err := s.Fake.Wait(s.Ctx, 1+chats/5); err != nil { // the broadcast is under way at full paid speed
		t.Fatal(err)
	}

	const edited = "Deploy 42 finished"
	code, out = call(t, s.Fleet, http.MethodPost, s.Fleet.APIBase+"/v1/messages",
		[]byte(`{"chat":"`+chat+`","text":"`+edited+`","thread":{"key":"`+key+`","mode":"edit"}}`), nil)
	editPosted := time.Now()
	if code != http.StatusAccepted {
		t.Fatalf("POST the edit: %d %s", code, out)
	}
	const alertText = "CRITICAL: checkout down"
	_, critical := postAndWait(t, s, `{"chat":"-1001000000778","text":"`+alertText+`","queue":"critical"}`, alertText)

	var edit telegramfake.Edit
	waitFor(t, s.Ctx, "the edit", func() bool {
		for _, e := range s.Fake.Edits(opened.ChatID, opened.MessageID) {
			if e.Text == edited {
				edit = e
				return true
			}
		}
		time.Sleep(5 * time.Millisecond)
		return false
	})
	editLatency := edit.At.Sub(editPosted)
	sentBefore := 0
	for _, m := range s.Fake.Messages() {
		if m.Text == text && m.At.Before(edit.At) {
			sentBefore++
		}
	}
	if err := s.Fake.Wait(s.Ctx, 2+chats); err != nil {
		t.Fatal(err)
	}
	fs := s.Fake.Stats()
	t.Logf("paid edit: edit reached the fake %s after its 202 (broadcast %d of %d sent by then); critical message %s after its 202; min slack %s; fake: %d requests, %d accepted, %d paid, %d charged, %d 429s, %d inside a wait",
		editLatency.Round(time.Millisecond), sentBefore, chats, critical.Round(time.Millisecond), fleet.MinSlack(s.Fake.Messages(), paidLimits).Round(100*time.Microsecond), fs.Requests, fs.Accepted, fs.PaidSends, fs.ChargedSends, fs.TooMany, fs.InsideWait)
	if sentBefore >= chats {
		t.Errorf("the broadcast was over before the edit went: the test did not edit during it")
	}
	if editLatency > 2*time.Second {
		t.Errorf("the edit took %s during the paid broadcast, want at most 2s", editLatency)
	}
	if critical > time.Second {
		t.Errorf("the critical message took %s, want at most 1s", critical)
	}
	if fs.TooMany != 0 || fs.InsideWait != 0 {
		t.Errorf("fake: %d 429s, %d requests inside a wait: want none", fs.TooMany, fs.InsideWait)
	}
	if fs.PaidSends == 0 {
		t.Errorf("no send went as a paid broadcast: the test did not test paid mode")
	}
}
