package worker_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/broker"
	"github.com/herald-dev/herald/internal/digest"
	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/keys"
	"github.com/herald-dev/herald/internal/markup"
	"github.com/herald-dev/herald/internal/telegram"
	"github.com/herald-dev/herald/internal/telegramfake"
	"github.com/herald-dev/herald/internal/worker"
	"github.com/herald-dev/herald/test/redistest"
)

// digestStack is Redis, the fake Bot API and an Enqueuer; workers start
// when a test has put into Redis what it needs.
type digestStack struct {
	redis *redistest.Server
	rdb   *redis.Client
	fake  *telegramfake.Server
	enq   *jobs.Enqueuer
	insp  *asynq.Inspector
	ctx   context.Context
}

// fastDigests flushes a destination one second after its last item, and
// reclaims an abandoned aggregation after two.
func fastDigests() digest.Config {
	return digest.Config{GracePeriod: time.Second, MaxDelay: 2 * time.Second, ReclaimAfter: 2 * time.Second}
}

func newDigestStack(t *testing.T) *digestStack {
	t.Helper()
	return newDigestStackFake(t, telegramfake.Config{TimeScale: scale})
}

// newDigestStackFake is newDigestStack with the fake Bot API configured by
// cfg.
func newDigestStackFake(t *testing.T, cfg telegramfake.Config) *digestStack {
	t.Helper()
	srv := redistest.Start(t)
	fake, err := telegramfake.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = fake.Close() })
	rdb := srv.Client(t)
	enq := jobs.NewEnqueuer(rdb, jobs.EnqueueConfig{MaxRetry: 5})
	insp := asynq.NewInspector(asynq.RedisClientOpt{Addr: srv.Addr})
	t.Cleanup(func() { _ = insp.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return &digestStack{redis: srv, rdb: rdb, fake: fake, enq: enq, insp: insp, ctx: ctx}
}

// startWorker runs a worker with digest settings dc until the test ends and
// returns its metrics.
func (s *digestStack) startWorker(t *testing.T, dc digest.Config) *prometheus.Registry {
	t.Helper()
	sender, err := telegram.New(telegram.Config{Token: telegramfake.DefaultToken, APIURL: s.fake.URL(), Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	w, err := worker.New(worker.Config{
		Redis:           &redis.UniversalOptions{Addrs: []string{s.redis.Addr}},
		Sender:          sender,
		Limits:          scaledLimits(),
		BackoffBase:     100 * time.Millisecond,
		BackoffCap:      time.Second,
		ShutdownTimeout: 5 * time.Second,
		Digest:          dc,
		Logger:          slog.New(slog.NewTextHandler(io.Discard, nil)),
		Registerer:      reg,
	})
	if err != nil {
		t.Fatal(err)
	}
	runWorker(t, w)
	return reg
}

// coalesce enqueues a coalescible message.
func (s *digestStack) coalesce(t *testing.T, m jobs.SendMessage, item *jobs.DigestItem) jobs.Result {
	t.Helper()
	res, err := s.enq.Enqueue(s.ctx, jobs.Request{Message: m, Coalesce: true, Item: item})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Coalesced {
		t.Fatalf("message %q was not coalesced", m.Text)
	}
	return res
}

// plainTexts returns the visible text of every message the fake accepted.
func (s *digestStack) plainTexts(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, m := range s.fake.Messages() {
		p, err := markup.Plain(m.Text, markup.Mode(m.ParseMode))
		if err != nil {
			t.Fatalf("the fake accepted a message that does not parse: %v", err)
		}
		out = append(out, p)
	}
	return out
}

// occurrences counts each title in every delivered message.
func (s *digestStack) occurrences(t *testing.T, titles []string) map[string]int {
	t.Helper()
	texts := s.plainTexts(t)
	n := map[string]int{}
	for _, title := range titles {
		n[title] = 0
		for _, p := range texts {
			n[title] += strings.Count(p, title)
		}
	}
	return n
}

// waitTitles waits until every title was delivered at least once.
func (s *digestStack) waitTitles(t *testing.T, titles []string) {
	t.Helper()
	for {
		have := len(s.fake.Messages())
		missing := 0
		for _, c := range s.occurrences(t, titles) {
			if c == 0 {
				missing++
			}
		}
		if missing == 0 {
			return
		}
		if err := s.fake.Wait(s.ctx, have+1); err != nil {
			t.Fatalf("%d of %d items never delivered: %v", missing, len(titles), err)
		}
	}
}

// waitQuiet waits until no task is waiting, running, grouped or being
// aggregated in the default and critical queues. asynq sends no
// notification, so this polls.
func (s *digestStack) waitQuiet(t *testing.T) {
	t.Helper()
	for {
		busy := ""
		for _, q := range []string{"default", "critical"} {
			info, err := s.insp.GetQueueInfo(q)
			if err != nil {
				continue
			}
			sets, _ := s.rdb.ZCard(s.ctx, broker.AggregationSetsKey(q)).Result()
			if n := info.Pending + info.Active + info.Scheduled + info.Retry + info.Aggregating + int(sets); n > 0 {
				busy = fmt.Sprintf("%s: %+v, %d aggregation sets", q, info, sets)
			}
		}
		if busy == "" {
			return
		}
		select {
		case <-s.ctx.Done():
			t.Fatalf("never quiet: %s", busy)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// waitCounter polls a counter until it reaches want.
func waitCounter(t *testing.T, ctx context.Context, reg *prometheus.Registry, name string, labels map[string]string, want float64) {
	t.Helper()
	for {
		if got := gathered(t, reg, name, labels); got >= want {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s%v = %v at the deadline, want %v", name, labels, gathered(t, reg, name, labels), want)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func gathered(t *testing.T, reg *prometheus.Registry, name string, labels map[string]string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	metric:
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				if v, ok := labels[lp.GetName()]; ok && v != lp.GetValue() {
					continue metric
				}
			}
			sum += m.GetCounter().GetValue()
		}
	}
	return sum
}

// assertOnce fails unless every title was delivered exactly once.
func (s *digestStack) assertOnce(t *testing.T, titles []string) {
	t.Helper()
	for title, n := range s.occurrences(t, titles) {
		if n != 1 {
			t.Errorf("item %q delivered %d times, want once", title, n)
		}
	}
}

// alertTitles returns n unique titles full of reserved characters.
func alertTitles(label string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s-%03d <disk> & \"db\" _*[]()~`>#+-=|{}.!", label, i)
	}
	return out
}

// abandonAggregation moves a group's items into an aggregation set the way
// asynq's aggregator does before it stores the digest, as if the worker
// died right there, and returns the grouped tasks.
func (s *digestStack) abandonAggregation(t *testing.T, queue, group string) []*asynq.Task {
	t.Helper()
	infos, err := s.insp.ListAggregatingTasks(queue, group, asynq.PageSize(1000))
	if err != nil {
		t.Fatal(err)
	}
	members, err := s.rdb.ZRangeWithScores(s.ctx, broker.GroupKey(queue, group), 0, -1).Result()
	if err != nil || len(members) != len(infos) {
		t.Fatalf("group %s holds %d members (%v), inspector saw %d", group, len(members), err, len(infos))
	}
	now, _ := s.rdb.Time(s.ctx).Result()
	set := broker.AggregationSetKey(queue, group, uuid.NewString())
	pipe := s.rdb.TxPipeline()
	pipe.ZAdd(s.ctx, set, members...)
	pipe.Del(s.ctx, broker.GroupKey(queue, group))
	pipe.SRem(s.ctx, broker.GroupsKey(queue), group)
	pipe.ZAdd(s.ctx, broker.AggregationSetsKey(queue), redis.Z{Score: float64(now.Add(broker.AggregationTimeout).Unix()), Member: set})
	if _, err := pipe.Exec(s.ctx); err != nil {
		t.Fatal(err)
	}
	tasks := make([]*asynq.Task, len(infos))
	for i, ti := range infos {
		tasks[i] = asynq.NewTask(ti.Type, ti.Payload)
	}
	return tasks
}

// TestDigestFiftyItemsInAtMostThreeMessages sends 50 coalescible alerts to
// one chat within a window: they arrive as at most three messages holding
// every item once, each message valid HTML within Telegram's limit.
func TestDigestFiftyItemsInAtMostThreeMessages(t *testing.T) {
	t.Parallel()
	s := newDigestStack(t)
	titles := alertTitles("fifty", 50)
	for i, title := range titles {
		s.coalesce(t, jobs.SendMessage{Chat: "5001", Text: "alert"}, &jobs.DigestItem{
			Title:   title,
			URL:     fmt.Sprintf("https://grafana.example.com/d/x?var-host=db-%d&q=\"<>\"", i),
			Summary: strings.Repeat("Volume /var/lib/postgresql fills up; 12 GB left 👩‍💻. ", 4),
		})
	}
	// The worker starts once every item waits in the group: one window.
	s.startWorker(t, fastDigests())
	s.waitTitles(t, titles)
	s.waitQuiet(t)
	msgs := s.fake.Messages()
	if len(msgs) > 3 {
		t.Fatalf("50 items arrived in %d messages, want at most 3", len(msgs))
	}
	for i, m := range msgs {
		if m.ParseMode != "HTML" || !m.LinkPreviewDisabled {
			t.Errorf("message %d: parse mode %q, link preview disabled %v", i, m.ParseMode, m.LinkPreviewDisabled)
		}
		if err := markup.Validate(m.Text, markup.HTML); err != nil {
			t.Errorf("message %d: %v", i, err)
		}
		if n, _ := markup.VisibleLen(m.Text, markup.HTML); n > markup.MaxMessageLen {
			t.Errorf("message %d: %d visible units", i, n)
		}
		if !strings.Contains(m.Text, `<a href="https://grafana.example.com/d/x?var-host=db-`) {
			t.Errorf("message %d has no item links", i)
		}
	}
	s.assertOnce(t, titles)
}

// TestDigestFiftyLongItemsAgainstMarkupCounting sends 50 coalescible
// alerts with long links and summaries to one chat, against a Bot API that
// counts the 4,096 limit over the raw text, markup included, where Herald
// counts what Telegram shows. The digest parts Herald cut to fit are refused
// as too long; every item must still be delivered once and nothing archived.
func TestDigestFiftyLongItemsAgainstMarkupCounting(t *testing.T) {
	t.Parallel()
	s := newDigestStackFake(t, telegramfake.Config{TimeScale: scale, CountMarkup: true})
	titles := alertTitles("counted", 50)
	for i, title := range titles {
		s.coalesce(t, jobs.SendMessage{Chat: "5009", Text: "alert"}, &jobs.DigestItem{
			Title:   title,
			URL:     fmt.Sprintf("https://grafana.example.com/d/abcdef/storage?orgId=1&var-host=db-%d&var-mount=%%2Fvar%%2Flib&from=now-6h&to=now&q=\"<>\"", i),
			Summary: strings.Repeat("Volume /var/lib/postgresql fills up & 12 GB <left> 👩‍💻. ", 4),
		})
	}
	s.startWorker(t, fastDigests())
	s.waitTitles(t, titles)
	s.waitQuiet(t)
	s.assertOnce(t, titles)
	for _, q := range []string{"default", "critical"} {
		archived, err := s.insp.ListArchivedTasks(q)
		if err != nil && !errors.Is(err, asynq.ErrQueueNotFound) {
			t.Fatal(err)
		}
		for _, a := range archived {
			t.Errorf("archived in %s: %s", q, a.LastErr)
		}
	}
	if n, err := s.rdb.XLen(s.ctx, keys.Failures()).Result(); err != nil || n != 0 {
		t.Errorf("failure log holds %d entries (err %v), want none", n, err)
	}
	// The scenario holds only if the fake refused something as too long.
	if st := s.fake.Stats(); st.Rejected == 0 {
		t.Errorf("the fake refused no part; the items were not long enough to test the resplit")
	}
	for i, m := range s.fake.Messages() {
		if raw := utf16Len(m.Text); raw > markup.MaxMessageLen {
			t.Errorf("message %d: the fake accepted %d raw units", i, raw)
		}
	}
	t.Logf("50 items in %d messages; %d parts refused as too long", len(s.fake.Messages()), s.fake.Stats().Rejected)
}

// utf16Len counts s in UTF-16 code units, as Telegram counts length.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += markup.RuneUTF16Len(r)
	}
	return n
}

// TestDigestOfOneArrivesUnwrapped: an item alone is sent as it was written.
func TestDigestOfOneArrivesUnwrapped(t *testing.T) {
	t.Parallel()
	s := newDigestStack(t)
	s.startWorker(t, fastDigests())
	text := `*Deploy* finished: v1\.2\.3 \(prod\) \- [log](https://ci.example.com/1)`
	s.coalesce(t, jobs.SendMessage{Chat: "5002", Text: text, ParseMode: "MarkdownV2"}, nil)
	if err := s.fake.Wait(s.ctx, 1); err != nil {
		t.Fatal(err)
	}
	s.waitQuiet(t)
	msgs := s.fake.Messages()
	if len(msgs) != 1 || msgs[0].Text != text || msgs[0].ParseMode != "MarkdownV2" {
		t.Fatalf("got %+v, want the message as written", msgs)
	}
}

// TestCriticalIsSentDuringTheDigestWindow: a critical message for a chat
// whose coalescible messages wait for their digest goes out at once, before
// the digest.
func TestCriticalIsSentDuringTheDigestWindow(t *testing.T) {
	t.Parallel()
	s := newDigestStack(t)
	dc := fastDigests()
	dc.GracePeriod, dc.MaxDelay = 3*time.Second, 5*time.Second
	s.startWorker(t, dc)
	titles := alertTitles("window", 5)
	for _, title := range titles {
		s.coalesce(t, jobs.SendMessage{Chat: "5003", Text: title}, nil)
	}
	// Coalescing is ignored on the critical queue.
	res, err := s.enq.Enqueue(s.ctx, jobs.Request{Queue: "critical", Coalesce: true,
		Message: jobs.SendMessage{Chat: "5003", Text: "CRITICAL: primary database down"}})
	if err != nil || res.Coalesced {
		t.Fatalf("critical: %+v %v", res, err)
	}
	s.waitTitles(t, titles)
	msgs := s.fake.Messages()
	if len(msgs) != 2 || msgs[0].Text != "CRITICAL: primary database down" {
		t.Fatalf("got %d messages, first %q; want the critical one first, then one digest", len(msgs), msgs[0].Text)
	}
	s.assertOnce(t, titles)
}

// TestCarriedItemsArriveInTheNextFlush: with room for two items per flush,
// six items take three flushes, each saying how many are left.
func TestCarriedItemsArriveInTheNextFlush(t *testing.T) {
	t.Parallel()
	s := newDigestStack(t)
	titles := make([]string, 6)
	for i := range titles {
		titles[i] = fmt.Sprintf("carry-%d %s", i, strings.TrimSpace(strings.Repeat("long title ", 14)))
		s.coalesce(t, jobs.SendMessage{Chat: "5004", Text: titles[i]}, nil)
	}
	dc := fastDigests()
	dc.MaxMessages, dc.MessageLimit = 1, 400
	reg := s.startWorker(t, dc)
	s.waitTitles(t, titles)
	s.waitQuiet(t)
	msgs := s.plainTexts(t)
	if len(msgs) != 3 {
		t.Fatalf("%d messages, want 3: %q", len(msgs), msgs)
	}
	for i, want := range []string{"+4 more in the next digest", "+2 more in the next digest", ""} {
		if want != "" && !strings.HasSuffix(msgs[i], want) || want == "" && strings.Contains(msgs[i], "more in the next") {
			t.Errorf("flush %d ends %q, want %q", i+1, msgs[i][max(0, len(msgs[i])-40):], want)
		}
		// Oldest first: flush i holds items 2i and 2i+1.
		if !strings.Contains(msgs[i], fmt.Sprintf("carry-%d ", 2*i)) || !strings.Contains(msgs[i], fmt.Sprintf("carry-%d ", 2*i+1)) {
			t.Errorf("flush %d does not hold items %d and %d: %q", i+1, 2*i, 2*i+1, msgs[i])
		}
	}
	s.assertOnce(t, titles)
	if got := gathered(t, reg, "herald_digest_items_total", map[string]string{"outcome": "carried"}); got != 6 {
		t.Errorf("carried items counted %v, want 4+2", got)
	}
}

// TestAbandonedAggregationIsReclaimedAndDelivered leaves an aggregation set
// behind as a worker killed during aggregation would: the reclaimer puts the
// items back and every item is delivered once.
func TestAbandonedAggregationIsReclaimedAndDelivered(t *testing.T) {
	t.Parallel()
	s := newDigestStack(t)
	titles := alertTitles("reclaim", 30)
	for _, title := range titles {
		s.coalesce(t, jobs.SendMessage{Chat: "5005", Text: title}, nil)
	}
	s.abandonAggregation(t, "default", "5005")
	reg := s.startWorker(t, fastDigests())
	s.waitTitles(t, titles)
	s.waitQuiet(t)
	s.assertOnce(t, titles)
	if got := gathered(t, reg, "herald_digest_reclaimed_items_total", nil); got != 30 {
		t.Fatalf("reclaimed %v items, want 30", got)
	}
}

// TestAbandonedAggregationAfterTheDigestWasStored: the worker died after
// storing the digest but before deleting the aggregation set, so the items
// reach a second digest; their claims keep every item to one delivery.
func TestAbandonedAggregationAfterTheDigestWasStored(t *testing.T) {
	t.Parallel()
	s := newDigestStack(t)
	titles := alertTitles("twice", 20)
	for _, title := range titles {
		s.coalesce(t, jobs.SendMessage{Chat: "5006", Text: title}, nil)
	}
	tasks := s.abandonAggregation(t, "default", "5006")
	client := asynq.NewClientFromRedisClient(s.rdb)
	if _, err := client.EnqueueContext(s.ctx, digest.Aggregate("5006", tasks), asynq.Queue("default")); err != nil {
		t.Fatal(err)
	}
	reg := s.startWorker(t, fastDigests())
	s.waitTitles(t, titles)
	// The reclaimed set becomes a second digest, whose items are skipped.
	waitCounter(t, s.ctx, reg, "herald_digest_items_total", map[string]string{"outcome": "skipped"}, 20)
	s.waitQuiet(t)
	s.assertOnce(t, titles)
}

// TestFailingDigestIsArchivedWithItsItems: a digest to a chat that blocked
// the bot is archived, and its payload shows every item.
func TestFailingDigestIsArchivedWithItsItems(t *testing.T) {
	t.Parallel()
	s := newDigestStack(t)
	s.fake.SetChat("5007", telegramfake.ChatBehavior{Blocked: true})
	titles := alertTitles("blocked", 4)
	for _, title := range titles {
		s.coalesce(t, jobs.SendMessage{Chat: "5007", Text: title}, nil)
	}
	s.startWorker(t, fastDigests())
	var archived []*asynq.TaskInfo
	for len(archived) == 0 {
		archived, _ = s.insp.ListArchivedTasks("default")
		select {
		case <-s.ctx.Done():
			t.Fatal("no digest archived")
		case <-time.After(50 * time.Millisecond):
		}
	}
	if len(archived) != 1 || archived[0].Type != jobs.TypeSendMessage || !strings.Contains(archived[0].LastErr, "blocked") {
		t.Fatalf("archived %+v, want one digest message archived as blocked", archived[0])
	}
	msg, err := jobs.Decode(archived[0].Payload)
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := markup.Plain(msg.Text, markup.HTML)
	for _, title := range titles {
		if !strings.Contains(plain, title) {
			t.Errorf("archived digest lacks %q", title)
		}
	}
}

// TestUnreadableItemIsArchivedOnItsOwn: a grouped task whose payload cannot
// be read does not sink its digest; it is archived alone with its reason.
func TestUnreadableItemIsArchivedOnItsOwn(t *testing.T) {
	t.Parallel()
	s := newDigestStack(t)
	titles := alertTitles("readable", 2)
	for _, title := range titles {
		s.coalesce(t, jobs.SendMessage{Chat: "5008", Text: title}, nil)
	}
	client := asynq.NewClientFromRedisClient(s.rdb)
	if _, err := client.EnqueueContext(s.ctx, asynq.NewTask(jobs.TypeDigestItem, []byte("not an item")),
		asynq.Queue("default"), asynq.Group("5008")); err != nil {
		t.Fatal(err)
	}
	s.startWorker(t, fastDigests())
	s.waitTitles(t, titles)
	for {
		archived, _ := s.insp.ListArchivedTasks("default")
		if len(archived) == 1 {
			if string(archived[0].Payload) != "not an item" || !strings.Contains(archived[0].LastErr, "invalid_payload") {
				t.Fatalf("archived %+v", archived[0])
			}
			break
		}
		select {
		case <-s.ctx.Done():
			t.Fatalf("%d archived tasks, want the unreadable item", len(archived))
		case <-time.After(50 * time.Millisecond):
		}
	}
	s.assertOnce(t, titles)
	if n := len(s.fake.Messages()); n != 1 {
		t.Fatalf("%d messages, want the two readable items in one digest", n)
	}
}
