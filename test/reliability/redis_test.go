package reliability

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/herald-dev/herald/test/fleet"
	"github.com/herald-dev/herald/test/redistest"
)

// rfAttempt is one POST /v1/messages of the Redis-crash scenario and what
// the API answered.
type rfAttempt struct {
	Msg    fleet.Message
	Sent   time.Time // when the request left
	Done   time.Time // when the answer (or transport error) came back
	Status int       // HTTP status; 0 when the request itself failed
	Err    error     // transport error, if any
}

// rfPost sends m through the producer API and records the answer without
// judging it: the scenario wants 503s as much as 202s.
func rfPost(ctx context.Context, client *http.Client, f *fleet.Fleet, m fleet.Message) rfAttempt {
	a := rfAttempt{Msg: m, Sent: time.Now()}
	body, _ := json.Marshal(map[string]string{"chat": m.Chat, "text": m.Text})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, f.APIBase+"/v1/messages", bytes.NewReader(body))
	if err != nil {
		a.Err, a.Done = err, time.Now()
		return a
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+f.APIToken)
	resp, err := client.Do(req)
	a.Done = time.Now()
	if err != nil {
		a.Err = err
		return a
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	a.Status = resp.StatusCode
	return a
}

// rfRedisCrashRun is what the Redis-crash scenario measured.
type rfRedisCrashRun struct {
	Attempts    int           // POSTs made
	Acked       int           // answered 202
	Unavailable int           // answered 503
	DownAnswers int           // sent and answered while redis-server was dead
	LateRefusal int           // answered 503 though sent after Redis answered again
	InFlight    int           // answered 503 after being sent before the kill
	Ambiguous   int           // of those, delivered all the same
	Delivered   int           // distinct acknowledged messages delivered
	Lost        int           // acknowledged but never delivered
	Duplicates  int           // deliveries beyond the first of a message
	Recovery    time.Duration // Redis restart to the first delivery after it
}

// TestRedisCrashLosesNoAcknowledgedMessage is scenario 2 of issue 7:
// redis-server with an always-fsynced AOF is SIGKILLed in the middle of a
// steady stream of API posts and restarted on the same AOF two seconds
// later. Every 202 must be delivered, every answer given while Redis was
// dead must be 503, nothing the API refused may be delivered, and the worker
// processes must carry on by themselves.
func TestRedisCrashLosesNoAcknowledgedMessage(t *testing.T) {
	if testing.Short() {
		t.Skip("Redis-crash scenario skipped in -short mode")
	}
	t.Parallel()
	const (
		total   = 400                   // POST attempts
		killAt  = 100                   // attempts before the SIGKILL
		every   = 10 * time.Millisecond // pace of the posting client
		down    = 2 * time.Second       // how long redis-server stays dead
		chats   = 20                    // private chats the posts cycle over
		timeout = 10 * time.Second      // one POST's own deadline
	)
	s := newStack(t, stackOptions{Workers: 2, Redis: redistest.Options{AppendOnly: true}, Timeout: 2 * time.Minute})
	workers := append([]*fleet.Proc(nil), s.fleet.Workers...)
	pids := make([]int, len(workers))
	for i, w := range workers {
		pids[i] = w.Pid()
	}
	ms := burst("redis-crash", total, chats)
	client := &http.Client{Timeout: timeout}

	var (
		mu       sync.Mutex
		attempts []rfAttempt
		wg       sync.WaitGroup
	)
	post := func(m fleet.Message) {
		defer wg.Done()
		a := rfPost(s.ctx, client, s.fleet, m)
		mu.Lock()
		attempts = append(attempts, a)
		mu.Unlock()
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	var killedAt, restartedAt time.Time // restartedAt: redis-server answers again
	var restartBegan time.Time
	for i, m := range ms {
		select {
		case <-tick.C:
		case <-s.ctx.Done():
			t.Fatalf("scenario deadline while posting: %v", s.ctx.Err())
		}
		if i == killAt {
			s.redis.Kill()
			killedAt = time.Now()
		}
		if !killedAt.IsZero() && restartedAt.IsZero() && time.Since(killedAt) >= down {
			restartBegan = time.Now()
			s.redis.Restart(t)
			restartedAt = time.Now()
		}
		wg.Add(1)
		go post(m)
	}
	wg.Wait()
	if restartedAt.IsZero() {
		t.Fatalf("posting ended before redis-server was restarted: raise total or lower down")
	}

	run := rfRedisCrashRun{Attempts: len(attempts)}
	var acked []fleet.Message
	refused, inFlight := map[string]bool{}, map[string]bool{}
	for _, a := range attempts {
		switch a.Status {
		case http.StatusAccepted:
			run.Acked++
			acked = append(acked, a.Msg)
		case http.StatusServiceUnavailable:
			run.Unavailable++
			// A request on the wire at the SIGKILL may have reached the AOF
			// before its reply was lost; only those may have been stored.
			if a.Sent.Before(killedAt) {
				run.InFlight++
				inFlight[a.Msg.Text] = true
				break
			}
			refused[a.Msg.Text] = true
			if a.Sent.After(restartedAt) {
				run.LateRefusal++
			}
		default:
			t.Errorf("POST %q: status %d, error %v; want 202 or 503", a.Msg.Text, a.Status, a.Err)
		}
		// Sent after the kill and answered before the restart began: Redis
		// was dead for the whole request, so a 2xx would be a lie.
		if a.Sent.After(killedAt) && a.Done.Before(restartBegan) {
			run.DownAnswers++
			if a.Status != http.StatusServiceUnavailable {
				t.Errorf("POST %q while redis-server was dead: status %d (error %v), want 503", a.Msg.Text, a.Status, a.Err)
			}
		}
	}
	if run.DownAnswers == 0 {
		t.Fatalf("no POST was answered while redis-server was dead; the scenario did not test the outage")
	}

	s.waitDelivered(t, acked)
	s.waitDrained(t)

	// Every acknowledged message arrived; count duplicates and check that
	// nothing refused with 503 went out.
	seen := map[string]int{}
	for _, d := range s.fake.Messages() {
		seen[d.Text]++
		if inFlight[d.Text] && seen[d.Text] == 1 {
			run.Ambiguous++
		}
		if refused[d.Text] {
			t.Errorf("message %q was answered 503 but delivered: a refusal must store nothing", d.Text)
		}
		if run.Recovery == 0 && d.At.After(restartedAt) {
			run.Recovery = d.At.Sub(restartedAt)
		}
	}
	for _, m := range acked {
		switch n := seen[m.Text]; n {
		case 0:
			run.Lost++
		default:
			run.Delivered++
			run.Duplicates += n - 1
		}
	}
	if run.Lost != 0 {
		t.Errorf("%d acknowledged messages lost", run.Lost)
	}
	// The workers reconnected on their own: the same processes, still
	// running, delivered the messages acknowledged after the restart.
	for i, w := range workers {
		select {
		case <-w.Done():
			t.Errorf("worker %s (pid %d) exited during the Redis outage; it must reconnect instead", w.Name, pids[i])
		default:
		}
	}
	if len(s.fleet.Workers) != len(workers) {
		t.Errorf("fleet has %d workers, want the original %d", len(s.fleet.Workers), len(workers))
	}
	var afterRestart int
	for _, a := range attempts {
		if a.Status == http.StatusAccepted && a.Sent.After(restartedAt) {
			afterRestart++
		}
	}
	if afterRestart == 0 {
		t.Errorf("no message was acknowledged after the restart; cannot show the workers reconnected")
	}
	if c := s.counts(); c.Archived != 0 {
		t.Errorf("archived tasks after the Redis crash: %s", c)
	}
	t.Logf("redis-crash: attempts=%d acked=%d 503=%d down_answers=%d late_503=%d in_flight_503=%d ambiguous=%d delivered=%d lost=%d duplicates=%d recovery=%v",
		run.Attempts, run.Acked, run.Unavailable, run.DownAnswers, run.LateRefusal, run.InFlight, run.Ambiguous, run.Delivered, run.Lost, run.Duplicates,
		run.Recovery.Round(time.Millisecond))
}
