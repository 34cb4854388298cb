package e2e_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/quota"
	"github.com/herald-dev/herald/test/fleet/fleettest"
)

// reserveChats is how many chats each of sender A's broadcasts lists;
// HERALD_E2E_RESERVE_CHATS=100000 runs issue 37's full size.
func reserveChats(t *testing.T) int {
	if v := os.Getenv("HERALD_E2E_RESERVE_CHATS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("HERALD_E2E_RESERVE_CHATS=%q: want a positive count", v)
		}
		return n
	}
	return 10_000
}

// bytesPerBroadcastMessage is what docs/CAPACITY.md says to size Redis
// with for a broadcast message of a 200-byte text: the message, its text
// and its deferral.
const bytesPerBroadcastMessage = quota.MessageBytes + quota.DeferBytes + 200

// TestReserveKeepsRoomForAlerts: Redis runs with maxmemory sized, by
// docs/CAPACITY.md's formula, for three of sender A's broadcasts with the
// default 20% reserve, and a worker delivers. A posts broadcasts one after
// another: they are refused with a 503 naming the reserve (and a
// Retry-After) before Redis refuses a write. Sender B's messages and a
// critical alert posted afterwards are accepted and delivered, ahead of
// A's backlog, and Redis never refuses a write while the worker defers and
// sends that backlog (the deferrals take memory of their own).
func TestReserveKeepsRoomForAlerts(t *testing.T) {
	iso := startIsolationWith(t, fleettest.Options{Workers: 1, Timeout: 3 * time.Minute,
		ProducerEnv: []string{"HERALD_ALERTS_DEFAULT_CHAT=" + alertsChat}})
	ctx := iso.s.Ctx
	rdb := iso.s.Redis.Client(t)
	n := reserveChats(t)
	base := usedMemory(t, ctx, rdb)
	maxmemory := base + int64(3*n*bytesPerBroadcastMessage*10/8)
	if err := rdb.ConfigSet(ctx, "maxmemory", strconv.FormatInt(maxmemory, 10)).Err(); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d chats per broadcast; used_memory %d B at the start, maxmemory %d B", n, base, maxmemory)

	text := strings.Repeat("r", 200)
	accepted := 0
	var refusal answer
	for i := 0; refusal.code == 0; i++ {
		if i == 10 {
			t.Fatalf("%d broadcasts accepted and none refused; used_memory %d of %d", accepted, usedMemory(t, ctx, rdb), maxmemory)
		}
		var chats strings.Builder
		for c := range n {
			if c > 0 {
				chats.WriteByte(',')
			}
			fmt.Fprint(&chats, 20_000_000+i*n+c)
		}
		body := `{"text":"` + text + `","chats":[` + chats.String() + `]}`
		a := iso.post(ctx, "/v1/broadcasts", senderA, strings.NewReader(body), int64(len(body)))
		used := usedMemory(t, ctx, rdb)
		t.Logf("broadcast %d: %d in %s; used_memory %d B (%.0f%% of maxmemory): %.120s", i+1, a.code, a.took.Round(time.Millisecond),
			used, 100*float64(used)/float64(maxmemory), a.body)
		switch {
		case a.err != nil:
			t.Fatalf("broadcast %d: %v", i+1, a.err)
		case a.code == http.StatusAccepted:
			accepted++
		case a.code == http.StatusServiceUnavailable && strings.Contains(a.body, `"reserve"`) && a.retryAfter != "":
			refusal = a
		default:
			t.Fatalf("broadcast %d: %d %s (Retry-After %q); want 202, or 503 naming the reserve with Retry-After", i+1, a.code, a.body, a.retryAfter)
		}
		// The producer samples Redis' memory once a second.
		time.Sleep(1500 * time.Millisecond)
	}
	if accepted < 2 {
		t.Errorf("only %d broadcasts accepted before the reserve; maxmemory was sized for 3", accepted)
	}
	if oom := oomErrors(t, ctx, rdb); oom != "" {
		t.Fatalf("Redis refused writes for memory (%s): the reserve came too late", oom)
	}

	// B's messages and a critical alert, after the refusal.
	t0 := time.Now()
	want := map[string]bool{}
	for i := range 5 {
		text := fmt.Sprintf("B after the reserve %d", i)
		body := fmt.Sprintf(`{"chat":"%d","text":"%s"}`, 7100+i, text)
		if a := iso.post(ctx, "/v1/messages", senderB, strings.NewReader(body), int64(len(body))); a.err != nil || a.code != http.StatusAccepted {
			t.Fatalf("B's message %d after the reserve: %d %v %s", i, a.code, a.err, a.body)
		}
		want[text] = true
	}
	alert := `{"title":"Reserve check: db-1 down","severity":"critical","fingerprint":"reserve-db-1"}`
	if a := iso.post(ctx, "/v1/alerts", senderB, strings.NewReader(alert), int64(len(alert))); a.err != nil || a.code != http.StatusAccepted {
		t.Fatalf("B's critical alert after the reserve: %d %v %s", a.code, a.err, a.body)
	}
	want["Reserve check: db-1 down"] = true
	for len(want) > 0 {
		for _, m := range iso.s.Fake.Messages() {
			for w := range want {
				if strings.Contains(m.Text, w) {
					delete(want, w)
				}
			}
		}
		if len(want) == 0 {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("never delivered after the reserve: %v", want)
		case <-time.After(50 * time.Millisecond):
		}
	}
	t.Logf("%d broadcasts of %d chats accepted, then refused (%.100s, Retry-After %s); B's 5 messages and critical alert delivered %s after posting; used_memory %d of %d B",
		accepted, n, refusal.body, refusal.retryAfter, time.Since(t0).Round(time.Millisecond), usedMemory(t, ctx, rdb), maxmemory)
	if oom := oomErrors(t, ctx, rdb); oom != "" {
		t.Fatalf("Redis refused writes for memory (%s)", oom)
	}
	// The backlog goes on being deferred and sent: Redis never fills.
	for range 10 {
		time.Sleep(500 * time.Millisecond)
		if oom := oomErrors(t, ctx, rdb); oom != "" {
			t.Fatalf("Redis refused writes for memory while the backlog was worked (%s); used_memory %d of %d", oom, usedMemory(t, ctx, rdb), maxmemory)
		}
	}
	t.Logf("5 s later: used_memory %d of %d B, %d messages delivered", usedMemory(t, ctx, rdb), maxmemory, len(iso.s.Fake.Messages()))
}

// usedMemory reads Redis' used_memory.
func usedMemory(t *testing.T, ctx context.Context, rdb *redis.Client) int64 {
	t.Helper()
	n, err := strconv.ParseInt(infoField(t, ctx, rdb, "memory", "used_memory"), 10, 64)
	if err != nil {
		t.Fatalf("INFO memory: used_memory: %v", err)
	}
	return n
}

// oomErrors is Redis' count of commands refused for memory ("" for none).
func oomErrors(t *testing.T, ctx context.Context, rdb *redis.Client) string {
	t.Helper()
	return infoField(t, ctx, rdb, "errorstats", "errorstat_OOM")
}

// infoField is the value of field in INFO section ("" when absent).
func infoField(t *testing.T, ctx context.Context, rdb *redis.Client, section, field string) string {
	t.Helper()
	info, err := rdb.Info(ctx, section).Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			return v
		}
	}
	return ""
}
