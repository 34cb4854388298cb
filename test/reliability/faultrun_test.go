package reliability

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/keys"
	"github.com/herald-dev/herald/internal/telegramfake"
	"github.com/herald-dev/herald/test/fleet"
	"github.com/herald-dev/herald/test/redistest"
)

// Shape of the combined fault run (issue 17). The thresholds are fractions
// of the messages the fake has accepted; the Redis outage is real time, as
// the fault is in Redis, not in Telegram's clock.
const (
	cfMessages    = 620
	cfChats       = 30
	cfServerError = 0.05                    // share of sendMessage answered 5xx
	cfPace        = 5 * time.Millisecond    // one new POST this often
	cfRedisDown   = 1600 * time.Millisecond // SIGKILL to restart of redis-server
	cfPostTimeout = 10 * time.Second        // one POST's own deadline
	cfRetryAfter  = 5 * time.Second         // the longest Retry-After the client honours
	// cfWireSlack is how late past cfLatency a busy machine may still land
	// a request that was on the wire at the SIGKILL.
	cfWireSlack = 500 * time.Millisecond
)

// cfLatency is how long the fake takes to answer a send, in real time
// (HERALD_FAULTRUN_LATENCY, 80ms by default; 0s is issue 17's run as it was
// reported). At about 300 sends a second 80 ms keeps a couple of dozen sends
// on the wire at any moment, so some are answered after Redis has died and
// their records must wait for it to come back.
var cfLatency = func() time.Duration {
	if d, err := time.ParseDuration(os.Getenv("HERALD_FAULTRUN_LATENCY")); err == nil {
		return d
	}
	return 80 * time.Millisecond
}()

// Log lines the worker writes about a send whose record did not reach Redis
// at first, at last, and about a redelivered task it did not send again.
const (
	cfLogRecordRetry = "could not record a sent message yet"
	cfLogPossibleDup = "could not record a sent message;"
	cfLogAlreadySent = "task was already sent; not sending again"
	cfLogTimeoutDup  = "telegram did not answer after the request was sent"
)

// cfPoster posts messages through the producer API the way a careful client
// does: each with an Idempotency-Key, and a 503 or a transport error retried
// with the same key after the answer's Retry-After, until a 202.
type cfPoster struct {
	f      *fleet.Fleet
	client *http.Client

	unavailable atomic.Int64 // 503 answers
	transport   atomic.Int64 // requests that got no answer
	replayed    atomic.Int64 // 202s that said the key was already stored
	other       atomic.Int64 // any other status
}

// post returns once m is acknowledged (nil) or ctx ends.
func (p *cfPoster) post(ctx context.Context, m fleet.Message, key string) error {
	body, _ := json.Marshal(map[string]string{"chat": m.Chat, "text": m.Text})
	for {
		wait, err := p.once(ctx, body, key)
		switch {
		case err == nil:
			return nil
		case wait < 0:
			return fmt.Errorf("posting %q: %w", m.Text, err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("posting %q: %w (last: %v)", m.Text, ctx.Err(), err)
		case <-time.After(wait):
		}
	}
}

// once makes one attempt; on failure it says how long to wait before the
// next, or a negative wait when another attempt cannot succeed.
func (p *cfPoster) once(ctx context.Context, body []byte, key string) (time.Duration, error) {
	rctx, cancel := context.WithTimeout(ctx, cfPostTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodPost, p.f.APIBase+"/v1/messages", bytes.NewReader(body))
	if err != nil {
		return -1, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+p.f.APIToken)
	req.Header.Set("Idempotency-Key", key)
	resp, err := p.client.Do(req)
	if err != nil {
		p.transport.Add(1)
		return time.Second, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusAccepted:
		if resp.Header.Get("Idempotent-Replayed") == "true" {
			p.replayed.Add(1)
		}
		return 0, nil
	case http.StatusServiceUnavailable:
		p.unavailable.Add(1)
		wait := time.Second
		if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s > 0 {
			wait = min(time.Duration(s)*time.Second, cfRetryAfter)
		}
		return wait, fmt.Errorf("503")
	default:
		p.other.Add(1)
		if resp.StatusCode < 500 {
			return -1, fmt.Errorf("status %d", resp.StatusCode)
		}
		return time.Second, fmt.Errorf("status %d", resp.StatusCode)
	}
}

// cfRun is what one combined fault run measured.
type cfRun struct {
	Messages  int
	Delivered int // distinct messages the fake accepted
	Lost      int // acknowledged but never delivered
	// Duplicates are deliveries beyond the first of a message; KillDups
	// the part of them that were tasks of the SIGKILLed worker (see
	// cfRunCombined), OtherDups the rest.
	Duplicates, KillDups, OtherDups int
	// Orphans are the tasks the SIGKILLed worker held when it died.
	Orphans int
	// WireFirst and WireLast bound when, after the SIGKILL, the fake first
	// accepted the messages counted in KillDups.
	WireFirst, WireLast time.Duration
	// PossibleDups is what the worker's possible-duplicates metric counted
	// over the run: the log lines of sends left unrecorded and of sends
	// Telegram did not answer.
	PossibleDups int
	// RecordsDelayed counts the sent parts whose record had to wait for
	// Redis (distinct tasks with a record retry logged); AlreadySent the
	// redelivered tasks that found their record and sent nothing.
	RecordsDelayed, AlreadySent int
	Unavailable                 int64 // 503 answers to the posting client
	PostErrors                  int64 // other failed posts (retried too)
	Replayed                    int64 // 202s for a key already stored
	ServerErrors, TooMany       int64 // the fake's 5xx and 429 answers
	Requests                    int64 // Bot API requests the fake served
	AtRedisKill                 int   // fake's accepted count when Redis was killed
	// When each fault struck, from the first post.
	WorkerKill, RedisKill, RedisBack, WorkerTerm time.Duration
	Elapsed                                      time.Duration
}

// String is the fixed line quoted in docs/RELIABILITY.md.
func (r cfRun) String() string {
	ms := func(d time.Duration) time.Duration { return d.Round(10 * time.Millisecond) }
	return fmt.Sprintf("combined-faults: messages=%d delivered=%d lost=%d duplicates=%d (killed_worker=%d other=%d) "+
		"orphans=%d killed_worker_first_sends=+%s..+%s possible_duplicates=%d records_delayed=%d already_sent=%d api_503=%d api_errors=%d replayed=%d "+
		"tg_5xx=%d tg_429=%d requests_per_delivered=%.3f accepted_at_redis_kill=%d faults_at=%s/%s-%s/%s time=%s",
		r.Messages, r.Delivered, r.Lost, r.Duplicates, r.KillDups, r.OtherDups, r.Orphans,
		r.WireFirst.Round(time.Millisecond), r.WireLast.Round(time.Millisecond), r.PossibleDups,
		r.RecordsDelayed, r.AlreadySent, r.Unavailable, r.PostErrors, r.Replayed, r.ServerErrors, r.TooMany,
		float64(r.Requests)/float64(max(r.Delivered, 1)), r.AtRedisKill, ms(r.WorkerKill), ms(r.RedisKill), ms(r.RedisBack), ms(r.WorkerTerm), r.Elapsed.Round(100*time.Millisecond))
}

// cfLogTasks returns the distinct task ids of the JSON log lines that
// contain msg, and how many such lines there are.
func cfLogTasks(logs, msg string) (ids map[string]bool, lines int) {
	ids = map[string]bool{}
	for _, l := range strings.Split(logs, "\n") {
		if !strings.Contains(l, msg) {
			continue
		}
		lines++
		var rec struct {
			TaskID string `json:"task_id"`
		}
		if json.Unmarshal([]byte(l), &rec) == nil && rec.TaskID != "" {
			ids[rec.TaskID] = true
		}
	}
	return ids, lines
}

// cfEverySec switches redis-server to appendfsync everysec, as
// docker-compose.yml runs it (redistest starts it with always).
func cfEverySec(ctx context.Context, tb testing.TB, srv *redistest.Server) {
	tb.Helper()
	c := srv.Client(tb)
	if err := c.ConfigSet(ctx, "appendfsync", "everysec").Err(); err != nil {
		tb.Fatalf("CONFIG SET appendfsync everysec: %v", err)
	}
	got, err := c.ConfigGet(ctx, "appendfsync").Result()
	if err != nil || got["appendfsync"] != "everysec" {
		tb.Fatalf("appendfsync is %q (err %v), want everysec", got["appendfsync"], err)
	}
}

// cfRunCombined is the combined fault run of issue 17: three workers, a
// producer and redis-server with an AOF fsynced every second; 620 messages
// over 30 chats posted at a steady pace with idempotency keys; the fake
// answers 5% of sends with a 5xx throughout. Once a quarter of the messages
// are accepted a worker is SIGKILLed; at half, redis-server is SIGKILLed and
// restarted on its AOF 1.6 s later; at three quarters another worker is
// SIGTERMed. The last worker and the lease sweeper finish the work.
//
// Duplicates are asserted to be 0 except for one case no client of the Bot
// API can close: a send of the SIGKILLed worker that was on the wire when
// it died (or answered but not yet recorded) reaches the chat, and the task,
// recovered from the dead worker's lease, is sent again. Such duplicates
// can only belong to the dead worker's tasks, so they are counted apart.
func cfRunCombined(tb testing.TB) cfRun {
	s := newStack(tb, stackOptions{Workers: 3, Redis: redistest.Options{AppendOnly: true}, Timeout: 3 * time.Minute,
		// The fake's latency is in Telegram time.
		Fake: telegramfake.Config{Latency: cfLatency * timeScale}})
	cfEverySec(s.ctx, tb, s.redis)
	seed := uint64(time.Now().UnixNano())
	s.fake.SetFaultRates(telegramfake.FaultRates{ServerError: cfServerError, Seed: seed})
	tb.Logf("fault seed %d", seed)
	rdb := s.redis.Client(tb)
	workers := append([]*fleet.Proc(nil), s.fleet.Workers...)
	ms := burst("combined", cfMessages, cfChats)
	run := cfRun{Messages: len(ms)}
	p := &cfPoster{f: s.fleet, client: &http.Client{}}
	start := time.Now()

	// Post every message in its own goroutine at a steady pace, so that
	// posts keep arriving through every fault.
	var (
		wg      sync.WaitGroup
		errMu   sync.Mutex
		postErr error
	)
	posted := make(chan struct{})
	go func() {
		defer close(posted)
		tick := time.NewTicker(cfPace)
		defer tick.Stop()
		for i, m := range ms {
			select {
			case <-tick.C:
			case <-s.ctx.Done():
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := p.post(s.ctx, m, fmt.Sprintf("combined-%d", i)); err != nil {
					errMu.Lock()
					postErr = err
					errMu.Unlock()
				}
			}()
		}
		wg.Wait()
	}()

	at := func(frac float64) {
		tb.Helper()
		if err := s.fake.Wait(s.ctx, int(float64(len(ms))*frac)); err != nil {
			tb.Fatalf("waiting for %.0f%% of the messages: %v", frac*100, err)
		}
	}

	// 25%: a worker dies without warning. Its tasks are the ones whose
	// lease nobody extends afterwards (wkDeadLeases, read 8 s later).
	at(0.25)
	killed := time.Now()
	workers[0].Kill()
	run.WorkerKill = killed.Sub(start)
	var (
		orphans   map[string]string
		orphanErr error
	)
	orphansRead := make(chan struct{})
	go func() {
		defer close(orphansRead)
		orphans, orphanErr = wkDeadLeases(s.ctx, rdb, s, killed)
	}()

	// 50%: Redis dies without warning and comes back on its AOF.
	at(0.50)
	run.AtRedisKill = len(s.fake.Messages())
	s.redis.Kill()
	run.RedisKill = time.Since(start)
	select {
	case <-time.After(cfRedisDown): // the outage lasts a set time by design
	case <-s.ctx.Done():
		tb.Fatal(s.ctx.Err())
	}
	s.redis.Restart(tb)
	run.RedisBack = time.Since(start)
	cfEverySec(s.ctx, tb, s.redis)

	// 75%: a worker is asked to stop and must exit cleanly.
	at(0.75)
	run.WorkerTerm = time.Since(start)
	if err := s.fleet.StopWorker(s.ctx, workers[1]); err != nil {
		tb.Errorf("%s after SIGTERM: %v, want exit status 0", workers[1].Name, err)
	}

	<-posted
	if postErr != nil {
		tb.Fatalf("not every message was acknowledged: %v", postErr)
	}
	s.waitDelivered(tb, ms)
	s.waitDrained(tb)
	run.Elapsed = time.Since(start)
	<-orphansRead
	if orphanErr != nil {
		tb.Fatalf("reading the killed worker's tasks: %v", orphanErr)
	}

	select {
	case <-workers[2].Done():
		tb.Errorf("%s exited during the run; it must ride out the Redis restart", workers[2].Name)
	default:
	}
	if n, err := rdb.XLen(s.ctx, keys.Failures()).Result(); err != nil || n != 0 {
		tb.Errorf("failure stream %s: %d entries (err %v), want 0", keys.Failures(), n, err)
	}

	got := s.fake.Messages()
	st := s.fake.Stats()
	o := fleet.Tally(ms, got, st, start)
	run.Delivered, run.Lost, run.Duplicates = o.Delivered, o.Lost, o.Duplicates
	orphanText := map[string]bool{}
	for _, text := range orphans {
		orphanText[text] = true
	}
	run.Orphans = len(orphans)
	seen, first := map[string]int{}, map[string]time.Time{}
	for _, d := range got {
		if seen[d.Text]++; seen[d.Text] == 1 {
			first[d.Text] = d.At
		}
	}
	// A dead process sends nothing: a duplicated task of the killed worker
	// must have reached the fake first by the time its last request on the
	// wire could land.
	onWire := killed.Add(cfLatency + cfWireSlack)
	for text, n := range seen {
		switch {
		case n < 2:
		case orphanText[text]:
			after := first[text].Sub(killed)
			if run.KillDups == 0 || after < run.WireFirst {
				run.WireFirst = after
			}
			run.WireLast = max(run.WireLast, after)
			run.KillDups += n - 1
			if first[text].After(onWire) {
				tb.Errorf("%q, a task of the killed worker, first reached the fake %v after the kill, later than a request on the wire could",
					text, first[text].Sub(killed))
			}
		default:
			run.OtherDups += n - 1
		}
	}
	run.ServerErrors, run.TooMany, run.Requests = st.ServerErrors, st.TooMany, st.Requests
	run.Unavailable, run.PostErrors, run.Replayed = p.unavailable.Load(), p.transport.Load()+p.other.Load(), p.replayed.Load()
	logs := s.fleet.Logs()
	_, unrecorded := cfLogTasks(logs, cfLogPossibleDup)
	_, unanswered := cfLogTasks(logs, cfLogTimeoutDup)
	run.PossibleDups = unrecorded + unanswered
	delayed, _ := cfLogTasks(logs, cfLogRecordRetry)
	run.RecordsDelayed = len(delayed)
	_, run.AlreadySent = cfLogTasks(logs, cfLogAlreadySent)
	if strings.Contains(logs, telegramfake.DefaultToken) {
		tb.Errorf("the bot token appears in a process log")
	}

	if run.Lost != 0 {
		tb.Errorf("lost %d acknowledged messages, want 0 (e.g. %q)", run.Lost, firstMissing(ms, got))
	}
	if run.OtherDups != 0 {
		tb.Errorf("%d duplicate deliveries of tasks the SIGKILLed worker did not hold, want 0", run.OtherDups)
	}
	if run.OtherDups != 0 {
		cfExplainDuplicates(tb, ms, got, logs, start, orphanText)
	}
	if run.ServerErrors == 0 {
		tb.Errorf("the fake answered no 5xx; the scenario did not inject Telegram faults")
	}
	if run.AtRedisKill >= len(ms) || run.Unavailable == 0 {
		tb.Errorf("Redis was killed at %d accepted messages with %d API 503s; the scenario did not test the outage",
			run.AtRedisKill, run.Unavailable)
	}
	return run
}

// cfExplainDuplicates logs, for each message delivered more than once that
// was not a task of the SIGKILLed worker, when the fake accepted it and
// every process log line about its task.
func cfExplainDuplicates(tb testing.TB, ms []fleet.Message, got []telegramfake.Message, logs string, start time.Time, orphan map[string]bool) {
	tb.Helper()
	at := map[string][]string{}
	for _, d := range got {
		at[d.Text] = append(at[d.Text], d.At.Sub(start).Round(time.Millisecond).String())
	}
	lines := strings.Split(logs, "\n")
	for i, m := range ms {
		if len(at[m.Text]) < 2 || orphan[m.Text] {
			continue
		}
		id := jobs.IdempotencyID("", fmt.Sprintf("combined-%d", i))
		var story []string
		for _, l := range lines {
			if strings.Contains(l, id) {
				story = append(story, l)
			}
		}
		tb.Logf("%q (task %s) accepted at %v after the start; its log lines:\n%s", m.Text, id, at[m.Text], strings.Join(story, "\n"))
	}
}

// firstMissing names one undelivered text, for the failure message.
func firstMissing(ms []fleet.Message, got []telegramfake.Message) string {
	if m := missingTexts(ms, got); len(m) > 0 {
		return m[0]
	}
	return ""
}

// TestCombinedFaults is the combined fault run of issue 17 (row 7 of
// docs/RELIABILITY.md): nothing acknowledged is lost and nothing is sent
// twice through a worker SIGKILL, a Redis SIGKILL and AOF restart, a worker
// SIGTERM and 5% Telegram 5xx.
func TestCombinedFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("combined fault run skipped in -short mode")
	}
	t.Parallel()
	t.Log(cfRunCombined(t))
}
