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

// TestBroadcastCancelIsFinal: a 3,000-chat broadcast cancelled at about
// 30% sends nothing more once the DELETE has answered (a request already
// on the wire may still land, within moments), Telegram refuses nothing,
// a critical message posted after the cancel goes at once, and the
// broadcast's counts settle within seconds to sent + cancelled = 3,000,
// sent being exactly what Telegram received.
func TestBroadcastCancelIsFinal(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test skipped in -short mode")
	}
	lim := fleet.DefaultLimits(fleettest.TimeScale)
	s := fleettest.Start(t, fleettest.Options{Workers: 2, Timeout: 3 * time.Minute,
		ProducerEnv: []string{"HERALD_LIMIT_BOT=" + lim.Setting(lim.Bot)}})
	cancelBroadcast(t, s)
}

// TestPaidBroadcastCancelIsFinal is TestBroadcastCancelIsFinal with paid
// broadcasts on (1,000 sends a second, in Telegram's own time): nothing
// reaches Telegram after the cancel, flagged or not, and no unflagged send
// breaks the free window.
func TestPaidBroadcastCancelIsFinal(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test skipped in -short mode")
	}
	lim := fleet.DefaultLimits(1)
	s := fleettest.Start(t, fleettest.Options{Workers: 2, Timeout: 3 * time.Minute, Paid: true,
		Fake:        telegramfake.Config{TimeScale: 1, PaidBroadcast: telegramfake.Paid{Enabled: true, Balance: 10000}},
		ProducerEnv: []string{"HERALD_LIMIT_BOT=" + lim.Setting(fleet.PaidWindows)}})
	cancelBroadcast(t, s)
	if st := s.Fake.Stats(); st.PaidSends == 0 {
		t.Errorf("no send went as a paid broadcast (%d accepted): the test did not test paid mode", st.Accepted)
	}
}

// cancelBroadcast posts a 3,000-chat broadcast to s, cancels it once 30%
// is sent, and checks what the cancel promises.
func cancelBroadcast(t *testing.T, s *fleettest.Stack) {
	const chats, first, text = 3000, 8_000_000, "Sale ends tonight"
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
	if err := s.Fake.Wait(s.Ctx, chats*3/10); err != nil {
		t.Fatal(err)
	}
	code, out = call(t, s.Fleet, http.MethodDelete, s.Fleet.APIBase+"/v1/broadcasts/"+res.ID, nil, nil)
	answered := time.Now()
	if code != http.StatusAccepted && code != http.StatusOK {
		t.Fatalf("DELETE /v1/broadcasts/%s: %d %s", res.ID, code, out)
	}
	t.Logf("DELETE answered %d: %s", code, out)

	time.Sleep(time.Second)
	const alertText = "CRITICAL: payments down"
	_, latency := postAndWait(t, s, `{"chat":"-1001000000999","text":"`+alertText+`","queue":"critical"}`, alertText)
	t.Logf("critical message posted 1s after the cancel reached the fake %s after its 202", latency.Round(time.Millisecond))
	if latency > time.Second {
		t.Errorf("the critical message took %s after the cancel, want at most 1s", latency)
	}

	var st broadcast.Status
	settleBy := answered.Add(5 * time.Second)
	waitFor(t, s.Ctx, "the cancelled broadcast's counts to settle", func() bool {
		code, out := call(t, s.Fleet, http.MethodGet, s.Fleet.APIBase+"/v1/broadcasts/"+res.ID, nil, nil)
		if code != http.StatusOK || json.Unmarshal([]byte(out), &st) != nil {
			t.Fatalf("GET /v1/broadcasts/%s: %d %s", res.ID, code, out)
		}
		return st.State == "done"
	})
	settled := time.Since(answered)
	t.Logf("counts settled %s after the DELETE: %+v", settled.Round(time.Millisecond), st.Counts)
	if time.Now().After(settleBy.Add(time.Second)) { // the last GET may start just before the bound
		t.Errorf("the counts took %s to settle, want at most 5s", settled)
	}
	late, got := 0, 0
	var last time.Time
	for _, m := range s.Fake.Messages() {
		if m.Text != text {
			continue
		}
		got++
		if m.At.After(answered.Add(500 * time.Millisecond)) {
			late++
		}
		if m.At.After(last) {
			last = m.At
		}
	}
	t.Logf("the fake got %d of %d; the last %s after the DELETE answered; %d later than 500ms", got, chats, last.Sub(answered).Round(time.Millisecond), late)
	if late != 0 {
		t.Errorf("%d broadcast messages reached Telegram more than 500ms after the cancel answered", late)
	}
	if st.Sent+st.Cancelled != chats || st.Sent != got {
		t.Errorf("final counts %+v: want sent + cancelled = %d and sent = the fake's %d", st.Counts, chats, got)
	}
	if fs := s.Fake.Stats(); fs.TooMany != 0 || fs.InsideWait != 0 {
		t.Errorf("fake: %d requests, %d accepted, %d 429s, %d inside a wait: want no 429", fs.Requests, fs.Accepted, fs.TooMany, fs.InsideWait)
	}
	t.Logf("fake: %d requests, %d accepted, %d paid, %d charged, %d 429s", s.Fake.Stats().Requests, s.Fake.Stats().Accepted,
		s.Fake.Stats().PaidSends, s.Fake.Stats().ChargedSends, s.Fake.Stats().TooMany)
	t.Logf("broadcast cancel: sent %d, cancelled %d, last send %s after the DELETE, settled in %s, critical after %s",
		st.Sent, st.Cancelled, last.Sub(answered).Round(time.Millisecond), settled.Round(time.Millisecond), latency.Round(time.Millisecond))
}
