package buttons_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/buttons"
)

func TestDataRoundTrip(t *testing.T) {
	for _, a := range buttons.Actions {
		d := buttons.Data(a, "0123456789abcdef")
		if len(d) > 64 {
			t.Errorf("%q is %d bytes; Telegram allows 64", d, len(d))
		}
		action, ref, ok := buttons.ParseData(d)
		if !ok || action != a || ref != "0123456789abcdef" {
			t.Errorf("ParseData(%q) = %q, %q, %v", d, action, ref, ok)
		}
	}
	for _, bad := range []string{"", "h1:", "h1:ack", "h1:ack:", "h1:nuke:abc", "h2:ack:abc", "ack:abc"} {
		if _, _, ok := buttons.ParseData(bad); ok {
			t.Errorf("ParseData(%q) accepted", bad)
		}
	}
}

func TestAllows(t *testing.T) {
	anyone := buttons.Subject{}
	if !anyone.Allows(1, "") {
		t.Error("a subject without a list refuses a user")
	}
	s := buttons.Subject{Allowed: []string{"@Alice", "4242"}}
	for _, tc := range []struct {
		id   int64
		name string
		want bool
	}{{1, "alice", true}, {1, "ALICE", true}, {4242, "", true}, {7, "bob", false}, {7, "", false}} {
		if got := s.Allows(tc.id, tc.name); got != tc.want {
			t.Errorf("Allows(%d, %q) = %v, want %v", tc.id, tc.name, got, tc.want)
		}
	}
}

func TestKeyboardStoresTheSubject(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: miniredis.RunT(t).Addr()})
	ctx := context.Background()
	s := buttons.Subject{Bot: "pages", Chat: "-100", ThreadKey: "fp", Text: "FIRING", Actions: []string{buttons.Ack, buttons.Silence1h},
		Matchers: []buttons.Matcher{{Name: "alertname", Value: "Disk"}}}
	kb, err := buttons.Keyboard(ctx, rdb, s, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	rows := kb.Rows()
	if len(rows) != 1 || len(rows[0]) != 2 {
		t.Fatalf("keyboard %+v, want one row of two buttons", rows)
	}
	action, ref, ok := buttons.ParseData(rows[0][1].Data)
	if !ok || action != buttons.Silence1h {
		t.Fatalf("second button carries %q", rows[0][1].Data)
	}
	got, err := buttons.Load(ctx, rdb, "pages", ref)
	if err != nil || got.ThreadKey != "fp" || got.Matchers[0].Value != "Disk" {
		t.Fatalf("Load = %+v, %v", got, err)
	}
	if _, err := buttons.Load(ctx, rdb, "status", ref); !errors.Is(err, buttons.ErrUnknown) {
		t.Fatalf("another bot's subject: %v, want ErrUnknown", err)
	}
	if kb, err := buttons.Keyboard(ctx, rdb, buttons.Subject{Chat: "1"}, time.Hour); kb != nil || err != nil {
		t.Fatalf("no actions: %v, %v; want no keyboard", kb, err)
	}
}
