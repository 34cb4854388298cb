package broadcast_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/broadcast"
	"github.com/herald-dev/herald/internal/jobs"
)

// usedMemory is the memory Redis' data takes, in bytes: used_memory less
// the clients' buffers (mem_clients_normal), which a pipeline of a
// thousand scripts leaves grown for a while and which are no message's.
func usedMemory(t *testing.T, rdb *redis.Client) int64 {
	t.Helper()
	info, err := rdb.Info(ctx, "memory").Result()
	if err != nil {
		t.Fatal(err)
	}
	fields := map[string]int64{}
	for _, line := range strings.Split(info, "\r\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			fields[k] = n
		}
	}
	if fields["used_memory"] == 0 {
		t.Fatal("INFO memory has no used_memory")
	}
	return fields["used_memory"] - fields["mem_clients_normal"]
}

// TestMemoryPerMessage measures what a queued message costs Redis: sent
// one by one (POST /v1/messages, with and without an idempotency key)
// and as part of a broadcast (its share of the record and the chat list
// included), and holds a broadcast's message to no more than a single
// one's. The figures are logged (docs/BROADCASTS.md quotes them).
func TestMemoryPerMessage(t *testing.T) {
	t.Parallel()
	const n = 20_000
	f := newFixture(t, broadcast.Config{})
	text := "Herald 2.0 is out: broadcasts, audiences and a lane of their own. Read more at https://example.com/blog/herald-2"
	perMessage := func(name string, store func(chats []string)) float64 {
		if err := f.rdb.FlushAll(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		list := chatList(100_000_000, n)
		before := usedMemory(t, f.rdb)
		store(list)
		per := float64(usedMemory(t, f.rdb)-before) / n
		t.Logf("%-34s %6.0f bytes per queued message", name, per)
		return per
	}
	single := perMessage("single sends", func(chats []string) {
		for _, c := range chats {
			if _, err := f.enq.Enqueue(ctx, jobs.Request{Message: jobs.SendMessage{Chat: c, Text: text, From: "app"}}); err != nil {
				t.Fatal(err)
			}
		}
	})
	perMessage("single sends with Idempotency-Key", func(chats []string) {
		for i, c := range chats {
			if _, err := f.enq.Enqueue(ctx, jobs.Request{Message: jobs.SendMessage{Chat: c, Text: text, From: "app",
				IdempotencyKey: "k" + strconv.Itoa(i)}}); err != nil {
				t.Fatal(err)
			}
		}
	})
	var took time.Duration
	bc := perMessage("broadcast", func(chats []string) {
		start := time.Now()
		if _, err := f.svc.Create(ctx, broadcast.Request{Chats: chats, Text: text, From: "app", IdempotencyKey: "launch"}); err != nil {
			t.Fatal(err)
		}
		took = time.Since(start)
	})
	t.Logf("broadcast of %d chats stored in %s", n, took.Round(time.Millisecond))
	if bc > single {
		t.Errorf("a broadcast's message costs %.0f bytes, a single send %.0f: want no more", bc, single)
	}
}
