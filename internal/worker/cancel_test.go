package worker_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/ledger"
)

// Cancel is final: a message a worker holds while it waits for its slot
// is settled as cancelled and never reaches Telegram; only a request
// already on the wire goes, and its record then says sent. These tests
// cancel through the ledger, as DELETE /v1/messages/{id} does, in each
// state a message can be in when the cancel comes: held in memory waiting
// for its slot, on the wire, and at random moments across a stream.

// messages is the ledger's API over the bundle's Redis, as the producer
// builds it.
func (b *testBundle) messages() *ledger.Messages {
	return ledger.NewMessages(ledger.NewStore(b.rdb, ledger.Config{}), b.insp, jobs.DefaultQueues(), nil)
}

// settledState waits until message id is settled and returns its state.
func (b *testBundle) settledState(t *testing.T, msgs *ledger.Messages, id string) ledger.State {
	t.Helper()
	for {
		st, err := msgs.Status(b.ctx, id)
		if err == nil && st.State.Settled() {
			return st.State
		}
		if b.ctx.Err() != nil {
			t.Fatalf("message %s never settled: %+v, %v", id, st, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// delivered counts the fake's messages by text.
func (b *testBundle) delivered() map[string]int {
	got := map[string]int{}
	for _, m := range b.fake.Messages() {
		got[m.Text]++
	}
	return got
}

// checkNoExtraRequests asserts that every request to the fake delivered a
// message: none was refused (no 429) and none was made for a message that
// was not sent.
func (b *testBundle) checkNoExtraRequests(t *testing.T) {
	t.Helper()
	st := b.fake.Stats()
	t.Logf("fake: %d requests, %d accepted, %d cut off by the worker, %d 429s, %d inside a wait", st.Requests, st.Accepted, st.Incomplete, st.TooMany, st.InsideWait)
	if st.TooMany != 0 || st.InsideWait != 0 {
		t.Errorf("the fake answered %d 429s (%d inside an announced wait); want none", st.TooMany, st.InsideWait)
	}
	// A request the worker cut off at its send-by time or cut-off (its
	// body never followed its headers) is no send Telegram could act on.
	if st.Requests-st.Incomplete != st.Accepted {
		t.Errorf("the fake saw %d whole requests for %d messages accepted; every request must be a send that was due",
			st.Requests-st.Incomplete, st.Accepted)
	}
}

// 8 messages to one chat, the last 4 cancelled while the worker holds
// them waiting for the chat's turns: 4 sent, 4 cancelled, no 429.
func TestCancelWhileHeldSendsNothing(t *testing.T) {
	t.Parallel()
	b := setup(t, options{})
	msgs := b.messages()
	ids := make([]string, 8)
	for i := range ids {
		ids[i] = b.send(t, jobs.SendMessage{Chat: "4242", Text: fmt.Sprintf("held %d", i)}, "").TaskID
	}
	// Wait until a worker holds the last one (it waits 700ms of Telegram's
	// 1/100ms for this chat at scale 10).
	for {
		st, err := msgs.Status(b.ctx, ids[7])
		if err == nil && st.State == ledger.StateSending {
			break
		}
		if b.ctx.Err() != nil {
			t.Fatalf("the last message was never held by a worker: %+v %v", st, err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancelling := 0
	for _, id := range ids[4:] {
		st, err := msgs.Cancel(b.ctx, id, "test", nil)
		var late *ledger.TooLateError
		switch {
		case errors.As(err, &late):
			t.Logf("%s was sent before its cancel: %s", id, late.Why)
		case err != nil:
			t.Fatal(err)
		case st.Cancelling:
			cancelling++
		}
	}
	if cancelling == 0 {
		t.Fatal("no cancel found its message held by a worker; the test did not test the held case")
	}
	sent := 0
	for i, id := range ids {
		switch state := b.settledState(t, msgs, id); {
		case state == ledger.StateSent:
			sent++
		case state != ledger.StateCancelled || i < 4:
			t.Errorf("message %d settled %s", i, state)
		}
	}
	time.Sleep(300 * time.Millisecond) // a send that went on anyway would land here
	got := b.delivered()
	for i := range ids {
		st, _ := msgs.Status(b.ctx, ids[i])
		if n := got[fmt.Sprintf("held %d", i)]; (n == 1) != (st.State == ledger.StateSent) || n > 1 {
			t.Errorf("message %d: state %s but Telegram got it %d times", i, st.State, n)
		}
	}
	if sent != 8-cancelling {
		t.Errorf("%d sent, want %d (8 less the %d cancels that found the message held)", sent, 8-cancelling, cancelling)
	}
	b.checkNoExtraRequests(t)
	if c := strings.Count(b.logs.String(), "the message was cancelled; not sending it"); c != cancelling {
		t.Errorf("the worker settled %d cancels, want one each (%d): no loop around a cancel", c, cancelling)
	}
}

// wireProxy stands between the worker and the fake Bot API and holds the
// request whose text is hold once it has arrived (the client has sent it:
// it is on the wire), until release is closed.
type wireProxy struct {
	hold    string
	onWire  chan struct{}
	release chan struct{}
	once    sync.Once
	target  atomic.Pointer[url.URL]
}

func (p *wireProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	if strings.Contains(string(body), url.QueryEscape(p.hold)) || strings.Contains(string(body), p.hold) {
		p.once.Do(func() { close(p.onWire) })
		<-p.release
	}
	httputil.NewSingleHostReverseProxy(p.target.Load()).ServeHTTP(w, r)
}

// A cancel that comes while the request is on the wire cannot stop it: the
// answer says the message is being sent (cancelling), and its final state
// says sent, truthfully, with no later overwrite.
func TestCancelOnTheWireEndsSent(t *testing.T) {
	t.Parallel()
	wp := &wireProxy{hold: "on the wire", onWire: make(chan struct{}), release: make(chan struct{})}
	proxy := httptest.NewServer(wp)
	t.Cleanup(proxy.Close)
	t.Cleanup(func() { wp.once.Do(func() {}); closeOnce(wp.release) })
	b := setup(t, options{apiURL: proxy.URL, stopped: true})
	target, err := url.Parse(b.fake.URL())
	if err != nil {
		t.Fatal(err)
	}
	wp.target.Store(target)
	b.start(t)
	msgs := b.messages()
	id := b.send(t, jobs.SendMessage{Chat: "4343", Text: "on the wire"}, "").TaskID
	select {
	case <-wp.onWire:
	case <-b.ctx.Done():
		t.Fatal("the send never started")
	}
	st, err := msgs.Cancel(b.ctx, id, "test", nil)
	if err != nil || !st.Cancelling || st.State != ledger.StateSending {
		t.Fatalf("cancel of a message on the wire: %+v, %v; want sending with cancelling set", st, err)
	}
	closeOnce(wp.release)
	if state := b.settledState(t, msgs, id); state != ledger.StateSent {
		t.Fatalf("the message Telegram accepted settled %s, want sent", state)
	}
	time.Sleep(200 * time.Millisecond)
	if state := b.settledState(t, msgs, id); state != ledger.StateSent {
		t.Fatalf("the sent record was overwritten: %s", state)
	}
	if n := b.delivered()["on the wire"]; n != 1 {
		t.Fatalf("Telegram got the message %d times, want 1", n)
	}
	b.checkNoExtraRequests(t)
}

var closeMu sync.Mutex

// closeOnce closes c unless it is closed already.
func closeOnce(c chan struct{}) {
	closeMu.Lock()
	defer closeMu.Unlock()
	select {
	case <-c:
	default:
		close(c)
	}
}

// Cancels at random moments across a stream to a few chats: whatever the
// moment, a message is sent exactly when its final state says sent, a
// cancel answered "cancelled" (it was still in Redis) is never sent, and
// Telegram sees no request beyond the messages sent.
func TestCancelRacingSends(t *testing.T) {
	t.Parallel()
	b := setup(t, options{})
	msgs := b.messages()
	const n = 60
	ids := make([]string, n)
	for i := range ids {
		ids[i] = b.send(t, jobs.SendMessage{Chat: fmt.Sprint(5000 + i%6), Text: fmt.Sprintf("race %d", i)}, "").TaskID
	}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 36))
	var wg sync.WaitGroup
	answers := make([]string, n)
	for i := range ids {
		if i%3 == 0 {
			continue // a third goes uncancelled
		}
		wg.Add(1)
		delay := time.Duration(rng.IntN(1200)) * time.Millisecond
		go func() {
			defer wg.Done()
			time.Sleep(delay)
			st, err := msgs.Cancel(b.ctx, ids[i], "test", nil)
			var late *ledger.TooLateError
			switch {
			case errors.As(err, &late):
				answers[i] = "too late"
			case err != nil:
				answers[i] = "error: " + err.Error()
			case st.Cancelling:
				answers[i] = "cancelling"
			default:
				answers[i] = string(st.State)
			}
		}()
	}
	wg.Wait()
	counts := map[string]int{}
	got := func() map[string]int {
		for i := range ids {
			b.settledState(t, msgs, ids[i])
		}
		time.Sleep(300 * time.Millisecond)
		return b.delivered()
	}()
	for i, id := range ids {
		state := b.settledState(t, msgs, id)
		counts[answers[i]+"→"+string(state)]++
		sent := got[fmt.Sprintf("race %d", i)]
		switch {
		case strings.HasPrefix(answers[i], "error"):
			t.Errorf("message %d: %s", i, answers[i])
		case sent > 1:
			t.Errorf("message %d reached Telegram %d times", i, sent)
		case (sent == 1) != (state == ledger.StateSent):
			t.Errorf("message %d settled %s but Telegram got it %d times (cancel answered %q)", i, state, sent, answers[i])
		case answers[i] == string(ledger.StateCancelled) && sent != 0:
			t.Errorf("message %d: cancelled while in Redis, sent anyway", i)
		case i%3 == 0 && state != ledger.StateSent:
			t.Errorf("uncancelled message %d settled %s", i, state)
		}
	}
	t.Logf("cancel answer → final state: %v", counts)
	b.checkNoExtraRequests(t)
}
