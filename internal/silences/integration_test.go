package silences

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/alerts"
	"github.com/herald-dev/herald/internal/digest"
	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/test/redistest"
)

// producerSide is what one producer process holds: a silences Store, an
// Enqueuer and a Router, all on the shared Redis.
type producerSide struct {
	st     *Store
	enq    *jobs.Enqueuer
	router *alerts.Router
}

func newProducerSide(t *testing.T, rdb redis.UniversalClient, routes string, now func() time.Time, tweak func(*Config)) *producerSide {
	t.Helper()
	enq := jobs.NewEnqueuer(rdb, jobs.EnqueueConfig{})
	cfg := Config{Redis: rdb, Items: enq, Logger: quietLogger(), Now: now}
	if tweak != nil {
		tweak(&cfg)
	}
	st, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	table, err := alerts.ParseRoutes("routes.yaml", []byte(routes))
	if err != nil {
		t.Fatal(err)
	}
	r, err := alerts.NewRouter(table, enq, alerts.RouterConfig{Logger: quietLogger(), Silences: st, Holder: st, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	return &producerSide{st: st, enq: enq, router: r}
}

const everythingTo42 = "routes:\n  - name: all\n    default: true\n    destinations: [\"42\"]\n"

// TestSilenceAcrossProducers: a silence created through producer A's API
// silences a matching alert on A at once and on producer B within the
// cache bound (1 s); the silenced alerts are not enqueued and are listed
// with the silence that caught them.
func TestSilenceAcrossProducers(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t).Client(t)
	ctx := context.Background()
	a := newProducerSide(t, rdb, everythingTo42, nil, nil)
	b := newProducerSide(t, rdb, everythingTo42, nil, nil)
	insp := asynq.NewInspector(asynq.RedisClientOpt{Addr: rdb.Options().Addr})
	defer insp.Close()

	alert := func(n int) []alerts.Alert {
		return []alerts.Alert{{Title: fmt.Sprintf("db slow %d", n), Severity: alerts.SeverityWarning,
			Fingerprint: fmt.Sprintf("fp-%d", n), Labels: map[string]string{"team": "db"}}}
	}
	// B reads the silences (none) and sends.
	res, err := b.router.Dispatch(ctx, alert(0))
	if err != nil || len(res.Messages) != 1 || len(res.Silenced) != 0 {
		t.Fatalf("before the silence: %+v, %v", res, err)
	}
	sent := 1

	code, body := call(t, a.st.Handler(), http.MethodPost, "/v1/silences",
		`{"matchers": [{"name": "team", "value": "db"}, {"name": "severity", "value": "warning|info", "is_regex": true}], "duration": "1h"}`)
	if code != http.StatusCreated {
		t.Fatalf("create: %d %s", code, body)
	}
	created := time.Now()
	sil := decodeAs[view](t, body)

	// A: at once.
	res, err = a.router.Dispatch(ctx, alert(1))
	if err != nil || len(res.Messages) != 0 || len(res.Silenced) != 1 || res.Silenced[0].SilencedBy != sil.ID {
		t.Fatalf("on A: %+v, %v", res, err)
	}
	// B: within the cache bound.
	caughtOnB := 0
	for n := 2; caughtOnB == 0; n++ {
		res, err = b.router.Dispatch(ctx, alert(n))
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Silenced) == 1 {
			if res.Silenced[0].SilencedBy != sil.ID || len(res.Messages) != 0 {
				t.Fatalf("on B: %+v", res)
			}
			caughtOnB = n
			break
		}
		sent += len(res.Messages)
		if time.Since(created) > defaultCacheTTL+500*time.Millisecond {
			t.Fatalf("B still sends %v after the silence was created (bound %v)", time.Since(created), defaultCacheTTL)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("B applied the silence after %v", time.Since(created).Round(time.Millisecond))
	// A critical alert of the same team is not matched by this silence.
	res, err = b.router.Dispatch(ctx, []alerts.Alert{{Title: "db down", Severity: alerts.SeverityCritical, Labels: map[string]string{"team": "db"}}})
	if err != nil || len(res.Messages) != 1 || len(res.Silenced) != 0 {
		t.Fatalf("critical: %+v, %v", res, err)
	}

	// Nothing of the silenced alerts reached a queue.
	info, err := insp.GetQueueInfo(jobs.QueueDefault)
	if err != nil {
		t.Fatal(err)
	}
	if info.Pending != sent {
		t.Fatalf("default queue holds %d tasks, want %d", info.Pending, sent)
	}
	for _, n := range []int{1, caughtOnB} {
		if _, err := insp.GetTaskInfo(jobs.QueueDefault, jobs.IdempotencyID("", fmt.Sprintf("fp-%d/all/42", n))); err == nil {
			t.Errorf("the silenced alert fp-%d was enqueued", n)
		}
	}
	// Both are listed with the silence, through either producer.
	code, body = call(t, b.st.Handler(), http.MethodGet, "/v1/silences/"+sil.ID+"/alerts", "")
	cl := decodeAs[caughtList](t, body)
	if code != http.StatusOK || len(cl.Alerts) != 2 || cl.Alerts[0].Fingerprint != fmt.Sprintf("fp-%d", caughtOnB) || cl.Alerts[1].Fingerprint != "fp-1" ||
		cl.Alerts[0].SilenceID != sil.ID || cl.Alerts[0].Labels["team"] != "db" {
		t.Fatalf("caught list: %d %s", code, body)
	}

	// Expired through B, the silence stops on A within the bound too.
	if code, body := call(t, b.st.Handler(), http.MethodDelete, "/v1/silences/"+sil.ID, ""); code != http.StatusOK {
		t.Fatalf("delete: %d %s", code, body)
	}
	expired := time.Now()
	for {
		res, err = a.router.Dispatch(ctx, alert(1000))
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Messages) == 1 {
			break
		}
		if time.Since(expired) > defaultCacheTTL+500*time.Millisecond {
			t.Fatalf("A still silences %v after the silence expired", time.Since(expired))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestQuietHoursDeliveredAsDigest: during a route's quiet hours its
// warnings are held (nothing reaches a queue) while a critical alert goes
// at once; when the window ends the releaser puts them into the chat's
// digest group, and asynq's aggregator and the digest handler turn them
// into one digest message.
func TestQuietHoursDeliveredAsDigest(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t).Client(t)
	ctx := context.Background()
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	clk := newClock(time.Date(2026, 10, 24, 23, 0, 0, 0, berlin)) // the night clocks go back
	routes := `
routes:
  - name: db-night
    match: {labels: {team: db}}
    quiet_hours: {start: "22:00", end: "07:00", time_zone: Europe/Berlin}
    destinations: ["42"]
`
	p := newProducerSide(t, rdb, routes, clk.Now, func(c *Config) { c.ReleaseInterval = 20 * time.Millisecond; c.ReleaseLease = time.Second })
	insp := asynq.NewInspector(asynq.RedisClientOpt{Addr: rdb.Options().Addr})
	defer insp.Close()

	var batch []alerts.Alert
	for i := 0; i < 3; i++ {
		batch = append(batch, alerts.Alert{Title: fmt.Sprintf("replica lag %d", i), Severity: alerts.SeverityWarning,
			Fingerprint: fmt.Sprintf("lag-%d", i), Labels: map[string]string{"team": "db"}})
	}
	batch = append(batch, alerts.Alert{Title: "primary down", Severity: alerts.SeverityCritical, Labels: map[string]string{"team": "db"}})
	res, err := p.router.Dispatch(ctx, batch)
	if err != nil {
		t.Fatal(err)
	}
	end := time.Date(2026, 10, 25, 7, 0, 0, 0, berlin)
	if len(res.Held) != 3 || len(res.Messages) != 1 || res.Messages[0].Queue != jobs.QueueCritical || !res.Held[0].Until.Equal(end) {
		t.Fatalf("dispatch: %+v", res)
	}
	// A retry of the batch holds nothing twice.
	if res, err := p.router.Dispatch(ctx, batch[:3]); err != nil || len(res.Held) != 3 || !res.Held[0].Duplicate {
		t.Fatalf("retry: %+v, %v", res, err)
	}
	if n, _ := p.st.HeldCount(ctx); n != 3 {
		t.Fatalf("held %d", n)
	}
	if groups, _ := insp.Groups(jobs.QueueDefault); len(groups) != 0 {
		t.Fatalf("groups during quiet hours: %+v", groups)
	}

	// The digest side of a worker: asynq's aggregator and the digest handler;
	// the messages it enqueues are collected instead of sent.
	dg, err := digest.New(rdb, p.enq, digest.Config{}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	sends := make(chan jobs.SendMessage, 16)
	srv := asynq.NewServerFromRedisClient(rdb, asynq.Config{
		Queues: map[string]int{jobs.QueueDefault: 1}, LogLevel: asynq.FatalLevel,
		GroupAggregator:  asynq.GroupAggregatorFunc(digest.Aggregate),
		GroupGracePeriod: time.Second, GroupMaxDelay: 2 * time.Second,
	})
	mux := asynq.NewServeMux()
	mux.HandleFunc(digest.TypeDigest, func(ctx context.Context, task *asynq.Task) error {
		id, _ := asynq.GetTaskID(ctx)
		q, _ := asynq.GetQueueName(ctx)
		_, err := dg.ProcessDigest(ctx, id, q, task.Payload())
		return err
	})
	mux.HandleFunc(jobs.TypeSendMessage, func(_ context.Context, task *asynq.Task) error {
		m, err := jobs.Decode(task.Payload())
		if err != nil {
			return err
		}
		sends <- m
		return nil
	})
	if err := srv.Start(mux); err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	if err := p.st.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer p.st.Shutdown()

	// Still night (the autumn night lasts 10 hours): nothing moves.
	clk.Set(end.Add(-time.Second))
	select {
	case m := <-sends:
		t.Fatalf("sent during quiet hours: %q", m.Text)
	case <-time.After(1500 * time.Millisecond):
	}
	clk.Set(end)
	var m jobs.SendMessage
	select {
	case m = <-sends:
	case <-time.After(15 * time.Second):
		t.Fatal("no digest within 15s of the end of the quiet hours")
	}
	if m.Chat != "42" || !strings.Contains(m.Text, "3 items") {
		t.Fatalf("digest to %s: %q", m.Chat, m.Text)
	}
	for i := 0; i < 3; i++ {
		if !strings.Contains(m.Text, fmt.Sprintf("replica lag %d", i)) {
			t.Errorf("the digest lacks item %d: %q", i, m.Text)
		}
	}
	select {
	case extra := <-sends:
		t.Fatalf("a second message: %q", extra.Text)
	case <-time.After(500 * time.Millisecond):
	}
	if n, _ := p.st.HeldCount(ctx); n != 0 {
		t.Fatalf("still held: %d", n)
	}
}
