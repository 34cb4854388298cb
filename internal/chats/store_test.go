package chats_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/chats"
	"github.com/herald-dev/herald/internal/keys"
	"github.com/herald-dev/herald/test/redistest"
)

func newStore(t *testing.T) (*chats.Store, *redis.Client, *prometheus.Registry) {
	t.Helper()
	rdb := redistest.Start(t).Client(t)
	reg := prometheus.NewRegistry()
	return chats.NewStore(rdb, chats.WithMetrics(chats.NewMetrics(reg))), rdb, reg
}

func count(t *testing.T, reg *prometheus.Registry, name, bot, source string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["bot"] == bot && labels["source"] == source {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

// TestBlockOnce: the first Block of a chat sets its mark, with the value
// the worker's scripts and the API read, and reports first; later ones
// keep the mark as it was and report not first. Unblock clears it once.
func TestBlockOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, rdb, reg := newStore(t)
	since := time.Date(2025, 3, 1, 12, 0, 0, 0, time.FixedZone("X", 3600))
	first, err := s.Block(ctx, "pages", "+42", chats.Block{Since: since, Reason: chats.ReasonBlocked,
		Source: chats.SourceTelegram403, Error: "Forbidden: bot was blocked by the user"})
	if err != nil || !first {
		t.Fatalf("first Block = %v, %v; want true", first, err)
	}
	raw, err := rdb.Get(ctx, keys.Bot("pages").Blocked("42")).Result()
	if err != nil {
		t.Fatalf("no mark at keys.Bot(pages).Blocked(42): %v", err)
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(raw), &v); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"since": "2025-03-01T11:00:00Z", "reason": "blocked", "source": "telegram_403", "error": "Forbidden: bot was blocked by the user"}
	for k, w := range want {
		if v[k] != w {
			t.Errorf("mark %s = %v, want %v (mark %s)", k, v[k], w, raw)
		}
	}
	if ttl := rdb.TTL(ctx, keys.Bot("pages").Blocked("42")).Val(); ttl != -1 {
		t.Errorf("mark TTL %v, want none", ttl)
	}

	first, err = s.Block(ctx, "pages", "42", chats.Block{Reason: chats.ReasonKicked, Source: chats.SourceMyChatMember})
	if err != nil || first {
		t.Fatalf("second Block = %v, %v; want false", first, err)
	}
	st, err := s.Get(ctx, "pages", "42")
	if err != nil {
		t.Fatal(err)
	}
	if !st.Blocked || st.Reason != chats.ReasonBlocked || st.Source != chats.SourceTelegram403 || st.Since == nil || !st.Since.Equal(since) {
		t.Errorf("Get after a second Block = %+v; want the first block kept", st)
	}
	// Another bot's view of the same chat is its own.
	if st, _ := s.Get(ctx, "status", "42"); st.Blocked {
		t.Errorf("bot status sees the chat blocked: %+v", st)
	}
	if got := count(t, reg, "herald_chat_blocks_total", "pages", chats.SourceTelegram403); got != 1 {
		t.Errorf("blocks counted %v, want 1", got)
	}

	was, err := s.Unblock(ctx, "pages", "42", chats.SourceAPI)
	if err != nil || !was {
		t.Fatalf("Unblock = %v, %v; want true", was, err)
	}
	if was, _ := s.Unblock(ctx, "pages", "42", chats.SourceAPI); was {
		t.Error("a second Unblock found a mark")
	}
	if st, _ := s.Get(ctx, "pages", "42"); st.Blocked || st.Since != nil || st.Chat != "42" || st.Bot != "pages" {
		t.Errorf("Get after Unblock = %+v", st)
	}
	if got := count(t, reg, "herald_chat_unblocks_total", "pages", chats.SourceAPI); got != 1 {
		t.Errorf("unblocks counted %v, want 1", got)
	}
}

// TestUsernamesIgnoreCase: a channel's mark is found however its
// @username is written, and the default bot is "" or "default".
func TestUsernamesIgnoreCase(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _, _ := newStore(t)
	if _, err := s.Block(ctx, "", "@Alerts_Chan", chats.Block{Reason: chats.ReasonKicked, Source: chats.SourceTelegram403}); err != nil {
		t.Fatal(err)
	}
	st, err := s.Get(ctx, keys.DefaultBot, "@alerts_chan")
	if err != nil || !st.Blocked || st.Bot != keys.DefaultBot {
		t.Fatalf("Get(@alerts_chan) = %+v, %v", st, err)
	}
	if st.Since == nil || time.Since(*st.Since) > time.Minute {
		t.Errorf("a Block without Since is not dated now: %+v", st)
	}
}

// TestInvalidInput: bad bots, chats, reasons and sources are refused with
// an error naming the field, and store nothing.
func TestInvalidInput(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, rdb, _ := newStore(t)
	ok := chats.Block{Reason: chats.ReasonBlocked, Source: chats.SourceTelegram403}
	for _, c := range []struct {
		bot, chat string
		b         chats.Block
		field     string
	}{
		{"Pages", "42", ok, "bot"},
		{"pages", "abc", ok, "chat"},
		{"pages", "0", ok, "chat"},
		{"pages", "@ab", ok, "chat"},
		{"pages", "42", chats.Block{Source: chats.SourceAPI}, "reason"},
		{"pages", "42", chats.Block{Reason: "blocked", Source: "user"}, "source"},
	} {
		_, err := s.Block(ctx, c.bot, c.chat, c.b)
		var ie *chats.InvalidError
		if !errors.As(err, &ie) || ie.Field != c.field || !errors.Is(err, chats.ErrInvalid) {
			t.Errorf("Block(%q, %q, %+v) = %v; want an InvalidError naming %s", c.bot, c.chat, c.b, err, c.field)
		}
	}
	if _, err := s.Unblock(ctx, "pages", "42", "nobody"); err == nil || !strings.Contains(err.Error(), "source") {
		t.Errorf("Unblock with an unknown source: %v", err)
	}
	if n := rdb.DBSize(ctx).Val(); n != 0 {
		t.Errorf("refused input stored %d keys", n)
	}
}

// TestLongErrorIsCut: Telegram's text is kept to a bounded size, cut
// between characters.
func TestLongErrorIsCut(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _, _ := newStore(t)
	long := strings.Repeat("é", 1000)
	if _, err := s.Block(ctx, "pages", "7", chats.Block{Reason: "blocked", Source: chats.SourceTelegram403, Error: long}); err != nil {
		t.Fatal(err)
	}
	st, _ := s.Get(ctx, "pages", "7")
	if len(st.Error) > 512 || len(st.Error) < 500 || !strings.HasPrefix(long, st.Error) {
		t.Errorf("stored error of %d bytes, want a prefix of at most 512 bytes ending on a character", len(st.Error))
	}
}

// TestUnreadableMarkIsBlocked: a mark whose value is not a Block still
// blocks (the send path tests that the key exists), shown with reason
// unknown.
func TestUnreadableMarkIsBlocked(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, rdb, _ := newStore(t)
	rdb.Set(ctx, keys.Bot("pages").Blocked("9"), "1", 0)
	if st, err := s.Get(ctx, "pages", "9"); err != nil || !st.Blocked || st.Reason != "unknown" {
		t.Errorf("Get = %+v, %v", st, err)
	}
}

// TestFollowOrder: membership updates apply in update_id order whatever
// order their tasks run in; a repeat of the last one reports its change
// again (its task was retried) without counting it twice; both names of a
// channel are marked and cleared together.
func TestFollowOrder(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, rdb, reg := newStore(t)
	kicked := &chats.Block{Reason: chats.ReasonKicked, Source: chats.SourceMyChatMember}
	names := []string{"-1001234567890", "@Alerts_chan"}

	// The unblock (update 11) runs before the block (update 10).
	if changed, err := s.Follow(ctx, "pages", names, 11, nil); err != nil || changed {
		t.Fatalf("Follow(11, unblock) = %v, %v; want nothing to change", changed, err)
	}
	if changed, err := s.Follow(ctx, "pages", names, 10, kicked); err != nil || changed {
		t.Fatalf("Follow(10, block) after 11 = %v, %v; want it ignored", changed, err)
	}
	if st, _ := s.Get(ctx, "pages", names[0]); st.Blocked {
		t.Fatalf("an older block undid a newer unblock: %+v", st)
	}

	changed, err := s.Follow(ctx, "pages", names, 12, kicked)
	if err != nil || !changed {
		t.Fatalf("Follow(12, block) = %v, %v; want changed", changed, err)
	}
	for _, n := range []string{names[0], "@alerts_chan"} {
		if st, _ := s.Get(ctx, "pages", n); !st.Blocked || st.Source != chats.SourceMyChatMember || st.Reason != chats.ReasonKicked {
			t.Errorf("Get(%s) after the block = %+v", n, st)
		}
	}
	if changed, err := s.Follow(ctx, "pages", names, 12, kicked); err != nil || !changed {
		t.Errorf("the same update again = %v, %v; want it to report its change again", changed, err)
	}
	if got := count(t, reg, "herald_chat_blocks_total", "pages", chats.SourceMyChatMember); got != 1 {
		t.Errorf("blocks counted %v, want 1", got)
	}
	if ttl := rdb.PTTL(ctx, keys.Bot("pages").MemberUpdate(names[0])).Val(); ttl < 24*time.Hour || ttl > 25*time.Hour {
		t.Errorf("the last update id is kept %v, want about 25h", ttl)
	}

	if changed, err := s.Follow(ctx, "pages", names, 13, nil); err != nil || !changed {
		t.Fatalf("Follow(13, unblock) = %v, %v; want changed", changed, err)
	}
	for _, n := range names {
		if st, _ := s.Get(ctx, "pages", n); st.Blocked {
			t.Errorf("Get(%s) after the unblock = %+v", n, st)
		}
	}
	if got := count(t, reg, "herald_chat_unblocks_total", "pages", chats.SourceMyChatMember); got != 1 {
		t.Errorf("unblocks counted %v, want 1", got)
	}
	// A block that a 403 set first is not a change for the update.
	if _, err := s.Block(ctx, "pages", "55", chats.Block{Reason: "blocked", Source: chats.SourceTelegram403}); err != nil {
		t.Fatal(err)
	}
	if changed, _ := s.Follow(ctx, "pages", []string{"55"}, 14, &chats.Block{Reason: "blocked", Source: chats.SourceMyChatMember}); changed {
		t.Error("an update found the chat blocked by a 403 and reported a change")
	}
}

// TestMetricsShareARegistry: two parts of one process asking for the
// metrics on one registry count into the same series.
func TestMetricsShareARegistry(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	a, b := chats.NewMetrics(reg), chats.NewMetrics(reg)
	a.Blocked("pages", chats.SourceTelegram403)
	b.Blocked("pages", chats.SourceTelegram403)
	if got := count(t, reg, "herald_chat_blocks_total", "pages", chats.SourceTelegram403); got != 2 {
		t.Errorf("counted %v, want 2", got)
	}
	var none *chats.Metrics
	none.Unblocked("pages", chats.SourceAPI) // counts nothing, does not panic
	if got := count(t, reg, "herald_chat_unblocks_total", "pages", chats.SourceAPI); got != 0 {
		t.Errorf("unblocks counted %v, want 0", got)
	}
}
