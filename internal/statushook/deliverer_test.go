package statushook_test

import (
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/herald-dev/herald/internal/keys"
	"github.com/herald-dev/herald/internal/statushook"
)

// TestDeliveredSignedOnce: an event reaches its receiver once, signed
// with its endpoint's secret (Verify accepts it), with its webhook-id, as
// the Standard Webhooks payload; a repeated Emit while the first is queued
// stores nothing.
func TestDeliveredSignedOnce(t *testing.T) {
	r := newRig(t, nil)
	rc := newReceiver(t, nil)
	url := rc.URL + "/hook?token=receivers-own"
	ev := r.emit(url, "task-1")
	r.emit(url, "task-1") // a redelivered send task settling again
	r.startDeliverer()
	r.eventually("the event is delivered", func() bool { return r.deliveries("delivered") == 1 })

	state, err := r.emitter.Endpoint(r.ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	reqs := rc.requests()
	if len(reqs) != 1 {
		t.Fatalf("the receiver got %d requests, want 1", len(reqs))
	}
	got := reqs[0]
	if err := statushook.Verify(state.Secret, got.header, got.body, time.Now(), 0); err != nil {
		t.Fatalf("Verify with the endpoint's secret: %v", err)
	}
	if id := got.header.Get(statushook.HeaderID); id != ev.ID || id != "msg_task-1_message_sent" {
		t.Errorf("webhook-id %q, want %q", id, ev.ID)
	}
	var body struct {
		Type, Timestamp string
		Data            map[string]any
	}
	if err := json.Unmarshal(got.body, &body); err != nil || body.Type != statushook.TypeMessageSent ||
		body.Data["task_id"] != "task-1" || body.Timestamp != ev.Timestamp.UTC().Format(time.RFC3339Nano) {
		t.Errorf("body %s (%v)", got.body, err)
	}
	if ct := got.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}
	// Another endpoint has another secret, and the query shares its own.
	other, _ := r.emitter.Endpoint(r.ctx, rc.URL+"/other")
	same, _ := r.emitter.Endpoint(r.ctx, rc.URL+"/hook")
	if other.Secret == state.Secret || same.Secret != state.Secret || state.State != statushook.StateHealthy {
		t.Errorf("secrets: /hook %s, /hook?query %s, /other %s; state %s", same.Secret, state.Secret, other.Secret, state.State)
	}
}

// TestReceiverDownThenBack: while nothing listens on the receiver's port
// the event is retried; once the receiver is back it is delivered, and
// every attempt carried the same webhook-id.
func TestReceiverDownThenBack(t *testing.T) {
	r := newRig(t, func(c *statushook.Config) {
		c.Schedule = statushook.Schedule{20 * time.Millisecond, 50 * time.Millisecond, 100 * time.Millisecond, 200 * time.Millisecond,
			time.Second, time.Second, time.Second, time.Second}
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // the receiver is down: connections are refused
	url := "http://" + addr + "/hook"
	ev := r.emit(url, "task-down")
	r.startDeliverer()
	r.eventually("two attempts failed", func() bool { return r.deliveries("retry") >= 2 })
	state, err := r.emitter.Endpoint(r.ctx, url)
	if err != nil || state.State != statushook.StateFailing || !strings.Contains(state.LastError, "refused") || state.Failures < 2 {
		t.Fatalf("endpoint while down: %+v, %v", state, err)
	}

	rc := newReceiverOn(t, addr, nil) // back
	r.eventually("the event is delivered", func() bool { return r.deliveries("delivered") == 1 })
	reqs := rc.requests()
	if len(reqs) != 1 || reqs[0].header.Get(statushook.HeaderID) != ev.ID {
		t.Fatalf("after the receiver came back: %d requests, first id %q", len(reqs), reqs[0].header.Get(statushook.HeaderID))
	}
	if err := statushook.Verify(state.Secret, reqs[0].header, reqs[0].body, time.Now(), 0); err != nil {
		t.Fatal(err)
	}
	if after, _ := r.emitter.Endpoint(r.ctx, url); after.State != statushook.StateHealthy || after.Failures != 0 {
		t.Errorf("a delivery did not end the run of failures: %+v", after)
	}
}

// TestSameIDAcrossAttempts: a receiver that fails twice sees the event
// three times under one webhook-id, each attempt signed anew.
func TestSameIDAcrossAttempts(t *testing.T) {
	r := newRig(t, nil)
	rc := newReceiver(t, func(n int, w http.ResponseWriter) {
		if n < 2 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusOK)
	})
	ev := r.emit(rc.URL+"/hook", "task-3")
	r.startDeliverer()
	r.eventually("the event is delivered", func() bool { return r.deliveries("delivered") == 1 })
	state, _ := r.emitter.Endpoint(r.ctx, rc.URL+"/hook")
	reqs := rc.requests()
	if len(reqs) != 3 || r.deliveries("retry") != 2 {
		t.Fatalf("%d requests, %d retries; want 3 and 2", len(reqs), r.deliveries("retry"))
	}
	for i, q := range reqs {
		if q.header.Get(statushook.HeaderID) != ev.ID || string(q.body) != string(reqs[0].body) {
			t.Errorf("attempt %d: id %q, body %s", i+1, q.header.Get(statushook.HeaderID), q.body)
		}
		if err := statushook.Verify(state.Secret, q.header, q.body, time.Now(), 0); err != nil {
			t.Errorf("attempt %d: %v", i+1, err)
		}
	}
}

// TestScheduleUsedUp: a receiver that always fails gets one attempt per
// entry of the schedule and one more; the event is then archived with a
// reason that says what the receiver answered, without the URL's query.
func TestScheduleUsedUp(t *testing.T) {
	r := newRig(t, nil)
	rc := newReceiver(t, func(_ int, w http.ResponseWriter) {
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte("down for maintenance"))
	})
	r.emit(rc.URL+"/hook?token=very-secret-token", "task-x")
	r.startDeliverer()
	tasks := r.waitArchived(1)
	if rc.count() != 3 || r.deliveries("exhausted") != 1 {
		t.Fatalf("%d attempts, exhausted %d; want 3 (the schedule has 2 waits) and 1", rc.count(), r.deliveries("exhausted"))
	}
	msg := tasks[0].LastErr
	for _, want := range []string{"retries_exhausted", "receiver answered 503 Service Unavailable", "down for maintenance",
		rc.URL + "/hook", "attempt 3 of 3"} {
		if !strings.Contains(msg, want) {
			t.Errorf("archived reason %q lacks %q", msg, want)
		}
	}
	if strings.Contains(msg+r.logs.String(), "very-secret-token") {
		t.Errorf("the URL's query reached the archive or the logs: %q", msg)
	}
	if show := statushookShow(tasks[0]); strings.Contains(show, "very-secret-token") || !strings.Contains(show, "/hook?…") {
		t.Errorf("the web UI shows %s", show)
	}
}

// statushookShow is the web UI's rendering of a task's payload.
func statushookShow(task *asynq.TaskInfo) string { return statushook.ShowPayload(task.Payload) }

// TestGoneDisablesTheEndpoint: a 410 disables the endpoint at once (one
// log line, the metric); its later events are archived without a request
// until it is enabled again.
func TestGoneDisablesTheEndpoint(t *testing.T) {
	r := newRig(t, nil)
	var gone atomic.Bool
	gone.Store(true)
	rc := newReceiver(t, func(_ int, w http.ResponseWriter) {
		if gone.Load() {
			w.WriteHeader(http.StatusGone)
			return
		}
		w.WriteHeader(http.StatusOK)
	})
	url := rc.URL + "/hook"
	r.emit(url, "task-a")
	r.startDeliverer()
	tasks := r.waitArchived(1)
	if !strings.Contains(tasks[0].LastErr, "410 Gone") || !strings.Contains(tasks[0].LastErr, "endpoint_disabled") {
		t.Errorf("archived reason %q", tasks[0].LastErr)
	}
	state, _ := r.emitter.Endpoint(r.ctx, url)
	if state.State != statushook.StateDisabled || state.DisabledReason != "gone" || state.DisabledAt == nil || r.disabledTotal("gone") != 1 {
		t.Fatalf("endpoint %+v, disabled total %d", state, r.disabledTotal("gone"))
	}

	r.emit(url, "task-b")
	tasks = r.waitArchived(2)
	if rc.count() != 1 || r.deliveries("endpoint_disabled") != 1 {
		t.Fatalf("a disabled endpoint was called: %d requests", rc.count())
	}
	for _, task := range tasks {
		if task.ID == statushook.EventID("task-b", statushook.TypeMessageSent) && !strings.Contains(task.LastErr, "disabled since") {
			t.Errorf("the later event's reason %q", task.LastErr)
		}
	}
	if n := strings.Count(r.logs.String(), "callback endpoint disabled"); n != 1 {
		t.Errorf("%d log lines about disabling, want 1:\n%s", n, r.logs)
	}

	gone.Store(false)
	if was, err := r.emitter.Enable(r.ctx, url); err != nil || !was {
		t.Fatalf("Enable = %v, %v", was, err)
	}
	r.emit(url, "task-c")
	r.eventually("the event after enabling is delivered", func() bool { return r.deliveries("delivered") == 1 })
}

// TestDisableAfterFailingTooLong: an endpoint that keeps failing for
// longer than DisableAfter is disabled, once, with one log line that shows
// the endpoint without its query.
func TestDisableAfterFailingTooLong(t *testing.T) {
	r := newRig(t, func(c *statushook.Config) {
		c.DisableAfter = 200 * time.Millisecond
		c.Schedule = make(statushook.Schedule, 20)
		for i := range c.Schedule {
			c.Schedule[i] = 30 * time.Millisecond
		}
	})
	rc := newReceiver(t, func(_ int, w http.ResponseWriter) { w.WriteHeader(http.StatusInternalServerError) })
	url := rc.URL + "/hook?key=hidden-key"
	r.emit(url, "task-1")
	r.startDeliverer()
	tasks := r.waitArchived(1)
	if !strings.Contains(tasks[0].LastErr, "failing for longer than 200ms") || r.disabledTotal("failing") != 1 {
		t.Fatalf("archived reason %q, disabled total %d", tasks[0].LastErr, r.disabledTotal("failing"))
	}
	state, _ := r.emitter.Endpoint(r.ctx, url)
	if state.State != statushook.StateDisabled || state.DisabledReason != "failing" ||
		state.LastFailure.Sub(*state.FirstFailure) <= 200*time.Millisecond {
		t.Fatalf("endpoint %+v", state)
	}
	calls := rc.count()
	r.emit(url, "task-2")
	r.waitArchived(2)
	if rc.count() != calls {
		t.Errorf("a disabled endpoint was called again")
	}
	logs := r.logs.String()
	if strings.Count(logs, "callback endpoint disabled") != 1 || strings.Contains(logs, "hidden-key") ||
		!strings.Contains(logs, "endpoint="+rc.URL+"/hook") {
		t.Errorf("logs:\n%s", logs)
	}
}

// TestRestartLosesNothing: a deliverer stopped while an event waits for
// its next attempt hands it over; another deliverer delivers it.
func TestRestartLosesNothing(t *testing.T) {
	r := newRig(t, func(c *statushook.Config) { c.Schedule = statushook.Schedule{30 * time.Second} })
	rc := newReceiver(t, func(n int, w http.ResponseWriter) {
		if n == 0 {
			w.WriteHeader(http.StatusBadGateway)
			return
		}
		w.WriteHeader(http.StatusOK)
	})
	ev := r.emit(rc.URL+"/hook", "task-r")
	stop := r.startDeliverer()
	r.eventually("the first attempt failed", func() bool { return r.deliveries("retry") == 1 })
	stop() // 30 s before the next attempt
	r.startDeliverer()
	r.eventually("the event is delivered", func() bool { return rc.count() == 2 })
	if id := rc.requests()[1].header.Get(statushook.HeaderID); id != ev.ID {
		t.Errorf("the second deliverer posted %q", id)
	}
}

// TestLongWaitsStayWhenStopped: a wait of a minute or more is left in
// asynq's retry set at its time: a deliverer stopping does not hand it
// over early.
func TestLongWaitsStayWhenStopped(t *testing.T) {
	r := newRig(t, func(c *statushook.Config) { c.Schedule = statushook.Schedule{2 * time.Minute} })
	rc := newReceiver(t, func(_ int, w http.ResponseWriter) { w.WriteHeader(http.StatusServiceUnavailable) })
	r.emit(rc.URL+"/hook", "task-l")
	stop := r.startDeliverer()
	insp := asynq.NewInspectorFromRedisClient(r.rdb)
	var retry []*asynq.TaskInfo
	r.eventually("the event waits for its retry", func() bool {
		retry, _ = insp.ListRetryTasks(statushook.Queue)
		return len(retry) == 1
	})
	stop()
	after, err := insp.ListRetryTasks(statushook.Queue)
	if err != nil || len(after) != 1 || !after[0].NextProcessAt.Equal(retry[0].NextProcessAt) {
		t.Fatalf("after the stop: %v, %v", after, err)
	}
	if wait := time.Until(after[0].NextProcessAt); wait < time.Minute+50*time.Second || wait > 2*time.Minute+15*time.Second {
		t.Errorf("next attempt in %s, want about 2m (plus at most a tenth)", wait)
	}
	if rc.count() != 1 {
		t.Errorf("%d attempts", rc.count())
	}
}

// TestRetryAfterRespected: a receiver's Retry-After longer than the
// schedule's wait is the wait.
func TestRetryAfterRespected(t *testing.T) {
	r := newRig(t, nil)
	rc := newReceiver(t, func(n int, w http.ResponseWriter) {
		if n == 0 {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		w.WriteHeader(http.StatusOK)
	})
	r.emit(rc.URL+"/hook", "task-ra")
	r.startDeliverer()
	r.eventually("the event is delivered", func() bool { return r.deliveries("delivered") == 1 })
	reqs := rc.requests()
	if gap := reqs[1].at.Sub(reqs[0].at); gap < time.Second {
		t.Errorf("the second attempt came %s after the first, before the receiver's Retry-After of 1s", gap)
	}
}

// TestAllowListCheckedAtDial: a host name that passes the URL check but
// resolves to a loopback address (this machine's name, in /etc/hosts) is
// refused when the deliverer dials: no connection, a failure naming the
// address.
func TestAllowListCheckedAtDial(t *testing.T) {
	host, err := os.Hostname()
	if err != nil {
		t.Skip("no host name")
	}
	if ips, err := net.LookupIP(host); err != nil || len(ips) == 0 || !ips[0].IsLoopback() && !ips[0].IsPrivate() {
		t.Skipf("%s does not resolve to a loopback or private address here", host)
	}
	r := newRig(t, func(c *statushook.Config) { c.Allow = []string{"192.0.2.1"} })
	url := "https://" + host + ":65000/hook"
	r.emit(url, "task-dial")
	r.startDeliverer()
	r.eventually("the attempt failed", func() bool { return r.deliveries("retry") >= 1 })
	state, _ := r.emitter.Endpoint(r.ctx, url)
	if !strings.Contains(state.LastError, host+" resolves to") || !strings.Contains(state.LastError, "allow-list") {
		t.Fatalf("last error %q", state.LastError)
	}
}

// TestEmitRefuses: callbacks off, a URL the policy refuses, an event
// without a webhook-id.
func TestEmitRefuses(t *testing.T) {
	r := newRig(t, nil)
	ev := statushook.Event{ID: "msg_1", Type: statushook.TypeMessageSent, Timestamp: time.Now()}
	off, err := statushook.NewEmitter(r.rdb, statushook.Config{})
	if err != nil {
		t.Fatal(err)
	}
	var uerr *statushook.URLError
	if err := off.Emit(r.ctx, "https://example.com/hook", ev); !errors.Is(err, statushook.ErrOff) || off.Enabled() {
		t.Errorf("Emit while off = %v", err)
	}
	if err := off.CheckURL("https://example.com/hook"); !errors.As(err, &uerr) || !errors.Is(err, statushook.ErrOff) ||
		!strings.Contains(err.Error(), "callback_url: status callbacks are off") {
		t.Errorf("CheckURL while off = %v", err)
	}
	for _, url := range []string{"http://169.254.169.254/latest", "https://127.0.0.2/hook", "http://example.com/plain"} {
		if err := r.emitter.Emit(r.ctx, url, ev); !errors.As(err, &uerr) || uerr.Field != "callback_url" {
			t.Errorf("Emit(%s) = %v, want a *URLError", url, err)
		}
	}
	if err := r.emitter.CheckURL("http://127.0.0.1:8080/hook"); err != nil {
		t.Errorf("an allow-listed receiver over http: %v", err)
	}
	for _, id := range []string{"", "a.b"} {
		ev.ID = id
		if err := r.emitter.Emit(r.ctx, "https://example.com/hook", ev); !errors.Is(err, statushook.ErrMessageID) {
			t.Errorf("Emit with id %q = %v", id, err)
		}
	}
	var nilEmitter *statushook.Emitter
	if nilEmitter.Enabled() || !errors.Is(nilEmitter.Emit(r.ctx, "https://example.com/hook", ev), statushook.ErrOff) {
		t.Error("a nil Emitter is not off")
	}
}

// TestEmitWakesAnIdleDeliverer: a deliverer idle in its blocking pop is
// woken by the emit's token on the callbacks' own wake list, not by
// looking again after MaxIdle (ten minutes here, past the test's time);
// the token never lands on the Telegram workers' list.
func TestEmitWakesAnIdleDeliverer(t *testing.T) {
	r := newRig(t, nil)
	r.maxIdle = 10 * time.Minute
	rc := newReceiver(t, nil)
	r.startDeliverer()
	r.eventually("the deliverer waits on its wake list", func() bool {
		list, err := r.rdb.ClientList(r.ctx).Result()
		return err == nil && strings.Contains(list, "cmd=blpop")
	})
	r.emit(rc.URL+"/hook", "task-w")
	r.eventually("the event is delivered", func() bool { return rc.count() == 1 })
	if n := r.rdb.LLen(r.ctx, keys.WakeList()).Val(); n != 0 {
		t.Errorf("the Telegram workers' wake list holds %d tokens", n)
	}
}
