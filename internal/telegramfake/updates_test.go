package telegramfake

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// pressN sends a keyboard message and presses it n times; it returns the
// update ids.
func pressN(t *testing.T, s *Server, n int) []int {
	t.Helper()
	id := sendKeyboard(t, s, testToken, "42", "alert", "ack")
	var ids []int
	for range n {
		q, err := s.Press("", 42, id, alice, "ack")
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, q.UpdateID)
	}
	return ids
}

func TestGetUpdatesOffsetAndLimit(t *testing.T) {
	t.Parallel()
	s, _ := newFake(t, open())
	ids := pressN(t, s, 5)
	first := ids[0]
	off := func(n int) string { return strconv.Itoa(n) }
	steps := []struct {
		name string
		form url.Values
		want []int
	}{
		{"unconfirmed stay", nil, ids},
		{"again", nil, ids},
		{"limit", url.Values{"limit": {"2"}}, ids[:2]},
		{"limit below 1 is 1", url.Values{"limit": {"0"}}, ids[:1]},
		{"offset confirms lower ids", url.Values{"offset": {off(first + 2)}}, ids[2:]},
		{"confirmed are gone", nil, ids[2:]},
		{"offset in the future is ignored", url.Values{"offset": {off(first + 100)}}, ids[2:]},
		{"negative offset keeps the last", url.Values{"offset": {"-1"}}, ids[4:]},
		{"and forgets the others", nil, ids[4:]},
		{"offset past the last confirms all", url.Values{"offset": {off(ids[4] + 1)}}, []int{}},
	}
	for _, st := range steps {
		if got := getUpdates(t, s, testToken, st.form).ids(); !slices.Equal(got, st.want) {
			t.Errorf("%s: update ids %v, want %v", st.name, got, st.want)
		}
	}
	if qs := s.CallbackQueries(""); qs[0].Deliveries != 4 || qs[4].Deliveries != 7 {
		t.Errorf("deliveries %d and %d", qs[0].Deliveries, qs[4].Deliveries)
	}
}

func TestUpdateIDsArePerBot(t *testing.T) {
	t.Parallel()
	s, _ := newFake(t, twoBots())
	a := sendKeyboard(t, s, tokenAlerts, "42", "a", "x")
	qa, _ := s.Press("alerts", 42, a, alice, "x")
	p := sendKeyboard(t, s, tokenPages, "43", "p", "y")
	qp, _ := s.Press("pages", 43, p, alice, "y")
	if qa.UpdateID == qp.UpdateID {
		t.Errorf("both bots start at update id %d", qa.UpdateID)
	}
	if got := getUpdates(t, s, tokenAlerts, nil).ids(); !slices.Equal(got, []int{qa.UpdateID}) {
		t.Errorf("alerts gets %v", got)
	}
	if got := getUpdates(t, s, tokenPages, nil).ids(); !slices.Equal(got, []int{qp.UpdateID}) {
		t.Errorf("pages gets %v", got)
	}
}

// A long poll returns as soon as an update arrives.
func TestLongPollReturnsOnPress(t *testing.T) {
	t.Parallel()
	s, _ := newFake(t, open())
	id := sendKeyboard(t, s, testToken, "42", "alert", "ack")
	got := make(chan reply, 1)
	go func() { got <- call(s, testToken, "getUpdates", url.Values{"timeout": {"50"}}) }()
	waitFor(t, s, "the long poll", func() bool { st, _ := s.Updates(""); return st.LongPolling })
	q, err := s.Press("", 42, id, alice, "ack")
	if err != nil {
		t.Fatal(err)
	}
	r := <-got
	mustAccept(t, r)
	if !strings.Contains(r.body, `"update_id":`+strconv.Itoa(q.UpdateID)) {
		t.Errorf("long poll answered %s", r.body)
	}
	if st, _ := s.Updates(""); st.LongPolling {
		t.Error("still long polling")
	}
}

func TestLongPollTimesOut(t *testing.T) {
	t.Parallel()
	s, _ := newFake(t, Config{TimeScale: 1000})
	r := call(s, testToken, "getUpdates", url.Values{"timeout": {"2"}})
	mustAccept(t, r)
	if d := decode(t, r); string(d.Result) != "[]" {
		t.Errorf("answer %s", r.body)
	}
}

// A second getUpdates that waits ends the first with a 409; the newer one
// gets the updates.
func TestConcurrentGetUpdatesConflict(t *testing.T) {
	t.Parallel()
	s, _ := newFake(t, open())
	id := sendKeyboard(t, s, testToken, "42", "alert", "ack")
	first := make(chan reply, 1)
	go func() { first <- call(s, testToken, "getUpdates", url.Values{"timeout": {"50"}}) }()
	waitFor(t, s, "the first long poll", func() bool { st, _ := s.Updates(""); return st.LongPolling })
	second := make(chan reply, 1)
	go func() { second <- call(s, testToken, "getUpdates", url.Values{"timeout": {"50"}}) }()
	refused(t, <-first, http.StatusConflict,
		"Conflict: terminated by other getUpdates request; make sure that only one bot instance is running")
	waitFor(t, s, "the second long poll", func() bool { st, _ := s.Updates(""); return st.LongPolling })
	if _, err := s.Press("", 42, id, alice, "ack"); err != nil {
		t.Fatal(err)
	}
	r := <-second
	mustAccept(t, r)
	if !strings.Contains(r.body, "callback_query") {
		t.Errorf("second poll %s", r.body)
	}
}

// setWebhook ends a long poll, and getUpdates is refused while a webhook
// is set.
func TestGetUpdatesWhileWebhookSet(t *testing.T) {
	t.Parallel()
	s, _ := newFake(t, open())
	poll := make(chan reply, 1)
	go func() { poll <- call(s, testToken, "getUpdates", url.Values{"timeout": {"50"}}) }()
	waitFor(t, s, "the long poll", func() bool { st, _ := s.Updates(""); return st.LongPolling })
	hook := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer hook.Close()
	mustAccept(t, call(s, testToken, "setWebhook", url.Values{"url": {hook.URL}}))
	refused(t, <-poll, http.StatusConflict, "Conflict: terminated by setWebhook request")
	refused(t, call(s, testToken, "getUpdates", nil), http.StatusConflict,
		"Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first")
	mustAccept(t, call(s, testToken, "deleteWebhook", nil))
	getUpdates(t, s, testToken, nil)
}

func TestAllowedUpdates(t *testing.T) {
	t.Parallel()
	s, _ := newFake(t, open())
	id := sendKeyboard(t, s, testToken, "42", "alert", "ack")
	getUpdates(t, s, testToken, url.Values{"allowed_updates": {`["message"]`}})
	if _, err := s.Press("", 42, id, alice, "ack"); err == nil || !strings.Contains(err.Error(), "allowed_updates") {
		t.Errorf("press not allowed: %v", err)
	}
	// Unreadable: unchanged. Only unknown names: the default again.
	getUpdates(t, s, testToken, url.Values{"allowed_updates": {`not json`}})
	if st, _ := s.Updates(""); !slices.Equal(st.AllowedUpdates, []string{"message"}) {
		t.Errorf("allowed %v", st.AllowedUpdates)
	}
	getUpdates(t, s, testToken, url.Values{"allowed_updates": {`["nonsense"]`}})
	if _, err := s.Press("", 42, id, alice, "ack"); err != nil {
		t.Errorf("press with the default: %v", err)
	}
	getUpdates(t, s, testToken, url.Values{"allowed_updates": {`["Callback_Query"]`}})
	if _, err := s.Press("", 42, id, alice, "ack"); err != nil {
		t.Errorf("press allowed by name: %v", err)
	}
}

// A callback_query update not received within 150 seconds is dropped.
func TestUpdatesExpire(t *testing.T) {
	t.Parallel()
	s, clock := newFake(t, open())
	pressN(t, s, 1)
	clock.Advance(callbackQueryLifetime - time.Millisecond)
	if n := len(getUpdates(t, s, testToken, nil)); n != 1 {
		t.Fatalf("%d updates before expiry", n)
	}
	clock.Advance(time.Millisecond)
	if n := len(getUpdates(t, s, testToken, nil)); n != 0 {
		t.Errorf("%d updates after expiry", n)
	}
	if st, _ := s.Updates(""); st.Pending != 0 {
		t.Errorf("pending %d", st.Pending)
	}
}

// Without a webhook, each Redeliver copy is returned once, whatever the
// offset.
func TestRedeliverToGetUpdates(t *testing.T) {
	t.Parallel()
	s, clock := newFake(t, open())
	ids := pressN(t, s, 2)
	next := url.Values{"offset": {strconv.Itoa(ids[1] + 1)}}
	if got := getUpdates(t, s, testToken, nil).ids(); !slices.Equal(got, ids) {
		t.Fatalf("first delivery %v", got)
	}
	if got := getUpdates(t, s, testToken, next).ids(); len(got) != 0 {
		t.Fatalf("after confirming %v", got)
	}
	if err := s.Redeliver("", ids[0], 3); err != nil {
		t.Fatal(err)
	}
	if got := getUpdates(t, s, testToken, with(next, "limit", "2")).ids(); !slices.Equal(got, []int{ids[0], ids[0]}) {
		t.Errorf("redelivered %v", got)
	}
	if got := getUpdates(t, s, testToken, next).ids(); !slices.Equal(got, []int{ids[0]}) {
		t.Errorf("the last copy %v", got)
	}
	if got := getUpdates(t, s, testToken, next).ids(); len(got) != 0 {
		t.Errorf("copies are handed over once: %v", got)
	}
	qs := s.CallbackQueries("")
	if qs[0].Deliveries != 4 || qs[1].Deliveries != 1 {
		t.Errorf("deliveries %+v", qs)
	}
	// Same update id, same body, same callback query id.
	_ = s.Redeliver("", ids[0], 1)
	r := call(s, testToken, "getUpdates", next)
	var got []struct {
		UpdateID      int `json:"update_id"`
		CallbackQuery struct {
			ID string `json:"id"`
		} `json:"callback_query"`
	}
	if err := json.Unmarshal(decode(t, r).Result, &got); err != nil || len(got) != 1 || got[0].UpdateID != ids[0] || got[0].CallbackQuery.ID != qs[0].ID {
		t.Errorf("copy %s", r.body)
	}

	for _, tc := range []struct {
		name  string
		id, n int
	}{{"unknown update", 1, 1}, {"no times", ids[0], 0}} {
		if err := s.Redeliver("", tc.id, tc.n); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
	clock.Advance(callbackQueryLifetime)
	if err := s.Redeliver("", ids[0], 1); !errors.Is(err, errNoUpdate) {
		t.Errorf("expired: %v", err)
	}
}

// Reset forgets updates and queries; a long poll under way keeps waiting.
func TestResetForgetsUpdates(t *testing.T) {
	t.Parallel()
	s, _ := newFake(t, open())
	pressN(t, s, 2)
	s.Reset()
	if st, _ := s.Updates(""); st.Pending != 0 || len(s.CallbackQueries("")) != 0 {
		t.Errorf("after Reset: %+v", st)
	}
	ids := pressN(t, s, 1)
	if ids[0] != firstUpdateID(123456) {
		t.Errorf("update ids restart: %d", ids[0])
	}
}
