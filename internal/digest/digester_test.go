package digest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/broker"
	"github.com/herald-dev/herald/internal/digest"
	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/keys"
	"github.com/herald-dev/herald/internal/ledger"
	"github.com/herald-dev/herald/internal/markup"
)

// bench is a Digester on miniredis with an inspector to look at what it
// enqueued.
type bench struct {
	rdb  *redis.Client
	enq  *jobs.Enqueuer
	d    *digest.Digester
	insp *asynq.Inspector
}

func newBench(t *testing.T, cfg digest.Config) *bench {
	t.Helper()
	mr := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { _ = rdb.Close() })
	enq := jobs.NewEnqueuer(rdb, jobs.EnqueueConfig{Limits: jobs.Limits{MaxTextLen: 1 << 20}})
	d, err := digest.New(rdb, enq, cfg, ledger.NewStore(rdb, ledger.Config{}), nil)
	if err != nil {
		t.Fatal(err)
	}
	insp := asynq.NewInspector(asynq.RedisClientOpt{Addr: mr.Addr()})
	t.Cleanup(func() { _ = insp.Close() })
	return &bench{rdb: rdb, enq: enq, d: d, insp: insp}
}

// items returns n digest item payloads for chat, created a second apart.
func items(chat string, n int) [][]byte {
	base := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	out := make([][]byte, n)
	for i := range out {
		retry := i % 4
		it := jobs.CoalescedItem{
			V: 1, ID: fmt.Sprintf("item-%03d", i),
			Item: jobs.DigestItem{Title: fmt.Sprintf("alert %03d <&>", i), URL: fmt.Sprintf("https://e.com/%d?a=1&b=2", i), Summary: "details"},
			Message: jobs.SendMessage{V: 1, Chat: chat, Text: fmt.Sprintf("alert %03d", i), CreatedAt: base.Add(time.Duration(i) * time.Second),
				MaxRetry: &retry, DisableNotification: i != 0},
		}
		out[i], _ = it.Encode()
	}
	return out
}

// digestPayload aggregates payloads the way asynq's aggregator calls
// digest.Aggregate.
func digestPayload(group string, payloads [][]byte, typ ...string) []byte {
	tasks := make([]*asynq.Task, len(payloads))
	for i, p := range payloads {
		ty := jobs.TypeDigestItem
		if i < len(typ) {
			ty = typ[i]
		}
		tasks[i] = asynq.NewTask(ty, p)
	}
	return digest.Aggregate(group, tasks).Payload()
}

// pending returns the SendMessage tasks waiting in queue, decoded, in
// task-id order.
func (b *bench) pending(t *testing.T, queue string) []jobs.SendMessage {
	t.Helper()
	tasks, err := b.insp.ListPendingTasks(queue, asynq.PageSize(1000))
	if err != nil {
		return nil
	}
	sort.Slice(tasks, func(i, j int) bool { return tasks[i].ID < tasks[j].ID })
	var out []jobs.SendMessage
	for _, ti := range tasks {
		if ti.Type != jobs.TypeSendMessage {
			continue
		}
		m, err := jobs.Decode(ti.Payload)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

func TestProcessDigestRendersClaimsAndIsIdempotent(t *testing.T) {
	t.Parallel()
	b := newBench(t, digest.Config{})
	ctx := context.Background()
	payload := digestPayload("42", items("42", 30))
	rep, err := b.d.ProcessDigest(ctx, "d1", "default", payload)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Items != 30 || rep.Delivered != 30 || rep.Carried != 0 || rep.Skipped != 0 || rep.Messages < 1 || rep.Messages > 3 {
		t.Fatalf("report %+v", rep)
	}
	msgs := b.pending(t, "default")
	if len(msgs) != rep.Messages {
		t.Fatalf("%d messages enqueued, report says %d", len(msgs), rep.Messages)
	}
	var all string
	for _, m := range msgs {
		if m.ParseMode != "HTML" || !m.DisableLinkPreview || m.Chat != "42" || !strings.HasPrefix(m.IdempotencyKey, "digest:d1:") {
			t.Fatalf("digest message %+v", m)
		}
		if m.MaxRetry == nil || *m.MaxRetry != 3 {
			t.Fatalf("max_retry %v, want the largest of the items' (3)", m.MaxRetry)
		}
		plain, err := markup.Plain(m.Text, markup.HTML)
		if err != nil {
			t.Fatal(err)
		}
		all += plain
	}
	for i := 0; i < 30; i++ {
		if n := strings.Count(all, fmt.Sprintf("alert %03d <&>", i)); n != 1 {
			t.Fatalf("item %d appears %d times", i, n)
		}
	}
	// The oldest item (the only one that rings) opens the first message.
	if msgs[0].DisableNotification || !strings.Contains(msgs[0].Text, "alert 000") {
		t.Fatalf("first message: notification off=%v, text %q", msgs[0].DisableNotification, msgs[0].Text[:60])
	}
	// A retry of the same digest (its first attempt crashed after
	// enqueueing) enqueues nothing more.
	again, err := b.d.ProcessDigest(ctx, "d1", "default", payload)
	if err != nil || again.Delivered != 30 {
		t.Fatalf("retry: %+v %v", again, err)
	}
	if n := len(b.pending(t, "default")); n != len(msgs) {
		t.Fatalf("retry left %d messages, want %d", n, len(msgs))
	}
	// The same items in a second digest (a reclaimed aggregation set) are
	// skipped.
	other, err := b.d.ProcessDigest(ctx, "d2", "default", payload)
	if err != nil || other.Skipped != 30 || other.Delivered != 0 || other.Messages != 0 {
		t.Fatalf("second digest: %+v %v, want every item skipped", other, err)
	}
	if owner := b.rdb.Get(ctx, keys.Bot("").DigestItemClaim("item-007")).Val(); owner != "d1" {
		t.Fatalf("item-007 is claimed by %q, want d1", owner)
	}
	if ttl := b.rdb.PTTL(ctx, keys.Bot("").DigestItemClaim("item-007")).Val(); ttl < 6*24*time.Hour {
		t.Fatalf("claim ttl %v, want the 7-day default", ttl)
	}
}

func TestProcessDigestOfOneSendsTheMessageUnwrapped(t *testing.T) {
	t.Parallel()
	b := newBench(t, digest.Config{})
	one := jobs.CoalescedItem{ID: "solo", Item: jobs.DigestItem{Title: "Deploy"},
		Message: jobs.SendMessage{Chat: "@Chan_nel", Text: `*Deploy* v1\.2`, ParseMode: "MarkdownV2", MessageThreadID: 3,
			IdempotencyKey: "producer-key", CreatedAt: time.Now().UTC()}}
	p, _ := one.Encode()
	rep, err := b.d.ProcessDigest(context.Background(), "d1", "low", digestPayload("@chan_nel:3", [][]byte{p}))
	if err != nil || rep.Delivered != 1 || rep.Messages != 1 {
		t.Fatalf("%+v %v", rep, err)
	}
	msgs := b.pending(t, "low")
	if len(msgs) != 1 {
		t.Fatalf("%d messages", len(msgs))
	}
	got := msgs[0]
	if got.Text != one.Message.Text || got.ParseMode != "MarkdownV2" || got.Chat != "@Chan_nel" || got.MessageThreadID != 3 ||
		got.IdempotencyKey != "digest:d1:1" {
		t.Fatalf("unwrapped message %+v", got)
	}
}

func TestProcessDigestCarriesUnderStableIDs(t *testing.T) {
	t.Parallel()
	b := newBench(t, digest.Config{MaxMessages: 1, MessageLimit: 400})
	ctx := context.Background()
	payloads := make([][]byte, 6)
	for i := range payloads {
		it := jobs.CoalescedItem{ID: fmt.Sprintf("i%d", i), Item: jobs.DigestItem{Title: fmt.Sprintf("%d %s", i, strings.Repeat("x", 150))},
			Message: jobs.SendMessage{Chat: "42", Text: "t", CreatedAt: time.Unix(int64(i), 0)}}
		payloads[i], _ = it.Encode()
	}
	payload := digestPayload("42", payloads)
	rep, err := b.d.ProcessDigest(ctx, "d1", "default", payload)
	if err != nil || rep.Delivered != 2 || rep.Carried != 4 || rep.Messages != 1 {
		t.Fatalf("%+v %v, want 2 delivered and 4 carried", rep, err)
	}
	msgs := b.pending(t, "default")
	if !strings.Contains(msgs[0].Text, "+4 more in the next digest") {
		t.Fatalf("no carry footer in %q", msgs[0].Text)
	}
	carried, err := b.insp.ListAggregatingTasks("default", "42")
	if err != nil || len(carried) != 4 {
		t.Fatalf("%d carried items in the group (%v), want 4", len(carried), err)
	}
	first := map[string]bool{}
	for _, c := range carried {
		first[c.ID] = true
		it, err := jobs.DecodeItem(c.Payload)
		if err != nil || it.ID != c.ID || !strings.HasPrefix(c.ID, "carry-") {
			t.Fatalf("carried item %s: %+v %v", c.ID, it, err)
		}
	}
	// A retried digest carries the same ids: nothing new in the group.
	if _, err := b.d.ProcessDigest(ctx, "d1", "default", payload); err != nil {
		t.Fatal(err)
	}
	again, _ := b.insp.ListAggregatingTasks("default", "42")
	if len(again) != 4 {
		t.Fatalf("retry: %d items in the group, want 4", len(again))
	}
	for _, c := range again {
		if !first[c.ID] {
			t.Fatalf("retry carried a new id %s", c.ID)
		}
	}
}

func TestProcessDigestRequeuesUnreadableItemsOnTheirOwn(t *testing.T) {
	t.Parallel()
	b := newBench(t, digest.Config{})
	good := items("42", 2)
	payload := digestPayload("42", [][]byte{good[0], []byte("garbage \xff"), []byte(`{"v":9,"id":"x"}`), good[1], []byte(`{"chat":"42","text":"a send"}`)},
		jobs.TypeDigestItem, jobs.TypeDigestItem, jobs.TypeDigestItem, jobs.TypeDigestItem, jobs.TypeSendMessage)
	if !json.Valid(payload) {
		t.Fatalf("digest payload is not JSON: %q", payload)
	}
	rep, err := b.d.ProcessDigest(context.Background(), "d1", "default", payload)
	if err != nil || rep.Invalid != 3 || rep.Delivered != 2 {
		t.Fatalf("%+v %v, want 3 invalid and 2 delivered", rep, err)
	}
	tasks, _ := b.insp.ListPendingTasks("default")
	var types []string
	for _, ti := range tasks {
		if ti.Type == jobs.TypeDigestItem {
			types = append(types, string(ti.Payload))
		}
		if ti.Type == jobs.TypeSendMessage && string(ti.Payload) == `{"chat":"42","text":"a send"}` {
			types = append(types, "send")
		}
	}
	sort.Strings(types)
	if strings.Join(types, "|") != "garbage \uFFFD|send|"+`{"v":9,"id":"x"}` {
		t.Fatalf("requeued %q", types)
	}
	if _, err := b.d.ProcessItem(context.Background(), "x", "default", []byte("garbage")); err == nil {
		t.Fatal("an unreadable item on its own is not an error")
	}
	if _, err := b.d.ProcessDigest(context.Background(), "d9", "default", []byte("not a digest")); err == nil {
		t.Fatal("an unreadable digest is not an error")
	}
}

func TestAggregateSetsRetryCeilingAndNoTaskID(t *testing.T) {
	t.Parallel()
	mr := miniredis.RunT(t)
	client := asynq.NewClient(asynq.RedisClientOpt{Addr: mr.Addr()})
	t.Cleanup(func() { _ = client.Close() })
	task := digest.Aggregate("42", []*asynq.Task{asynq.NewTask(jobs.TypeDigestItem, items("42", 1)[0])})
	var ids []string
	for i := 0; i < 2; i++ {
		info, err := client.Enqueue(task, asynq.Queue("default"))
		if err != nil {
			t.Fatal(err)
		}
		if info.MaxRetry != broker.RetryCeiling || info.Timeout != digest.TaskTimeout || info.Type != digest.TypeDigest {
			t.Fatalf("digest task %+v", info)
		}
		ids = append(ids, info.ID)
	}
	if ids[0] == ids[1] {
		t.Fatal("two aggregations got the same task id")
	}
}

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	if err := (digest.Config{}).WithDefaults().Validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	tests := []struct {
		mutate func(*digest.Config)
		want   string
	}{
		{func(c *digest.Config) { c.GracePeriod = 1500 * time.Millisecond }, "HERALD_DIGEST_GRACE_PERIOD (-digest-grace-period) must be a whole number of seconds"},
		{func(c *digest.Config) { c.MaxDelay = 5 * time.Second }, "HERALD_DIGEST_MAX_DELAY (-digest-max-delay) is 5s, below HERALD_DIGEST_GRACE_PERIOD"},
		{func(c *digest.Config) { c.MaxSize = 1001 }, "HERALD_DIGEST_MAX_SIZE (-digest-max-size) must be between 1 and 1000"},
		{func(c *digest.Config) { c.MaxMessages = 11 }, "HERALD_DIGEST_MAX_MESSAGES (-digest-max-messages) must be between 1 and 10"},
		{func(c *digest.Config) { c.ReclaimAfter = 2 * time.Minute }, "HERALD_DIGEST_RECLAIM_AFTER (-digest-reclaim-after) must be at least 1s and below 2m"},
		{func(c *digest.Config) { c.ClaimTTL = time.Minute }, "Config.ClaimTTL must be at least 1h"},
		{func(c *digest.Config) { c.MessageLimit = 5000 }, "Config.MessageLimit must be between 200 and 4096"},
	}
	for _, tc := range tests {
		c := digest.Config{}.WithDefaults()
		tc.mutate(&c)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("got %v, want %q", err, tc.want)
		}
	}
}
