package chats_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/herald-dev/herald/internal/chats"
)

// TestBlockedAmong: the marks of many chats are read in one call, in the
// order asked, past one MGET's worth of keys, for the bot asked only.
func TestBlockedAmong(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _, _ := newStore(t)
	list := make([]string, 2500)
	for i := range list {
		list[i] = strconv.Itoa(1000 + i)
	}
	list[2400] = "@Channel"
	for _, c := range []string{"1003", "2999", "@channel"} {
		if _, err := s.Block(ctx, "pages", c, chats.Block{Reason: chats.ReasonBlocked, Source: chats.SourceTelegram403}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.BlockedAmong(ctx, "pages", list)
	if err != nil || len(got) != len(list) {
		t.Fatalf("BlockedAmong = %d marks, %v; want %d", len(got), err, len(list))
	}
	for i, b := range got {
		want := i == 3 || i == 1999 || i == 2400
		if b != want {
			t.Errorf("chat %s: blocked = %v, want %v", list[i], b, want)
		}
	}
	other, err := s.BlockedAmong(ctx, "default", list[:5])
	if err != nil || other[3] {
		t.Errorf("another bot's marks = %v, %v; want none", other, err)
	}
}
