package roster

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/oncall"
)

// daily is a schedule announced in a chat: Alice, Bob and Carol take
// turns a day each, handing off at 09:00 UTC.
func daily() oncall.Schedule {
	return oncall.Schedule{Name: "primary", Chat: "-1005", Layers: []oncall.Rotation{{
		Users: []oncall.User{alice, bob, carol}, Length: oncall.Daily, Handoff: oncall.Clock{Hour: 9},
		Location: time.UTC, Start: time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC),
	}}}
}

// dailyCatalog is daily() as a Catalog, with its source for the workers.
func dailyCatalog() Catalog {
	return Catalog{Schedules: map[string]oncall.Schedule{"primary": daily()}, Source: []byte(`schedules:
  - name: primary
    chat: "-1005"
    time_zone: UTC
    layers:
      - users: [{id: 1001, name: Alice, username: alice}, {id: 1002, name: Bob, username: bob_ops}, {id: 1003, name: Carol}]
        shift: daily
        handoff: "09:00"
        start: 2026-01-05
`)}
}

// Each handoff is announced once however many producers look, and only
// handoffs after the first look.
func TestAnnouncerOncePerHandoff(t *testing.T) {
	rdb := redisClient(t)
	out := newOutbox()
	cat := dailyCatalog()
	clock := &fakeClock{now: time.Date(2026, 1, 7, 8, 0, 0, 0, time.UTC)}
	roster := &Roster{Catalog: func() Catalog { return cat }, Overrides: NewOverrides(rdb)}
	var as []*Announcer
	for range 3 {
		a, err := NewAnnouncer(AnnouncerConfig{Redis: rdb, Messages: out, Roster: roster, Logger: quiet, now: clock.time})
		if err != nil {
			t.Fatal(err)
		}
		as = append(as, a)
	}
	look := func() {
		var wg sync.WaitGroup
		for _, a := range as {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := a.Announce(context.Background()); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
	}
	look()
	if n := len(out.sent()); n != 0 {
		t.Fatalf("the first look announced %d handoffs, want none", n)
	}
	for range 3 * 24 * 4 { // three days in quarter hours
		clock.add(15 * time.Minute)
		look()
	}
	got := out.to("-1005")
	if len(got) != 3 {
		t.Fatalf("announced %d handoffs in three days, want 3: %q", len(got), got)
	}
	want := "🔄 primary: Carol is on call until Thu 8 Jan 09:00 UTC, taking over from Bob (@bob_ops).\nNext: Alice (@alice) from Thu 8 Jan 09:00 UTC"
	if got[0] != want {
		t.Errorf("first announcement\n got %q\nwant %q", got[0], want)
	}
}

// An override made through the API puts its user on call above the file.
func TestOverrides(t *testing.T) {
	rdb := redisClient(t)
	ctx := context.Background()
	ov := NewOverrides(rdb)
	now := time.Date(2026, 1, 7, 12, 0, 0, 0, time.UTC)
	dana := oncall.User{ID: 1004, Name: "Dana"}
	if err := ov.Add(ctx, "primary", oncall.Override{User: dana, Start: now, End: now.Add(2 * time.Hour)}, "lead", now); err != nil {
		t.Fatal(err)
	}
	s, err := ov.Live(ctx, daily())
	if err != nil {
		t.Fatal(err)
	}
	if u, sh, _ := s.OnCall(now.Add(time.Hour)); u != dana || !sh.End.Equal(now.Add(2*time.Hour)) {
		t.Errorf("on call with the override: %v until %v", u, sh.End)
	}
	if u, _, _ := s.OnCall(now.Add(3 * time.Hour)); u != carol {
		t.Errorf("after the override: %v, want Carol", u)
	}
	if err := ov.Add(ctx, "primary", oncall.Override{User: dana, Start: now, End: now}, "lead", now); err == nil {
		t.Error("an empty override was stored")
	}
	for i := 1; i < maxOverrides; i++ {
		if err := ov.Add(ctx, "primary", oncall.Override{User: dana, Start: now, End: now.Add(time.Hour)}, "lead", now); err != nil {
			t.Fatal(err)
		}
	}
	if err := ov.Add(ctx, "primary", oncall.Override{User: dana, Start: now, End: now.Add(time.Hour)}, "lead", now); !errors.Is(err, ErrTooManyOverrides) {
		t.Errorf("override %d: %v, want ErrTooManyOverrides", maxOverrides+1, err)
	}
	// Once they have ended, they make room.
	if err := ov.Add(ctx, "primary", oncall.Override{User: dana, Start: now, End: now.Add(5 * time.Hour)}, "lead", now.Add(4*time.Hour)); err != nil {
		t.Errorf("after the overrides ended: %v", err)
	}
}

// /oncall in a chat answers from the published schedules: the chat's own
// first, or the one named.
func TestCommandsOnCall(t *testing.T) {
	rdb := redisClient(t)
	ctx := context.Background()
	c := NewCommands(rdb)
	c.now = func() time.Time { return time.Date(2026, 1, 7, 12, 0, 0, 0, time.UTC) }
	if r, ok, err := c.Answer(ctx, "-1005", "/oncall"); !ok || err != nil || !strings.Contains(r, "No on-call schedules") {
		t.Fatalf("before anything is published: %q, %v, %v", r, ok, err)
	}
	if err := publish(ctx, rdb, dailyCatalog().Source); err != nil {
		t.Fatal(err)
	}
	want := "📟 primary: Carol until Thu 8 Jan 09:00 UTC\n   next: Alice (@alice) from Thu 8 Jan 09:00 UTC"
	for _, text := range []string{"/oncall", "/oncall@herald_bot", "/OnCall primary"} {
		if r, ok, err := c.Answer(ctx, "-1005", text); !ok || err != nil || r != want {
			t.Errorf("%q: %q, %v, %v; want %q", text, r, ok, err, want)
		}
	}
	if r, _, _ := c.Answer(ctx, "-1005", "/oncall nope"); r != "There is no schedule nope. Schedules: primary" {
		t.Errorf("unknown schedule: %q", r)
	}
	if r, _, _ := c.Answer(ctx, "1003", "/oncall"); r != want {
		t.Errorf("Carol in her private chat: %q", r)
	}
	if r, _, _ := c.Answer(ctx, "4242", "/oncall"); r != "Only the people of Herald's on-call schedules may ask here." {
		t.Errorf("a stranger in a private chat: %q", r)
	}
	// A group no schedule announces in, which anyone may add the bot
	// to, learns nothing of the schedules' people.
	for _, chat := range []string{"-1009", "-1001234567890", "@some_channel"} {
		if r, ok, _ := c.Answer(ctx, chat, "/oncall primary"); !ok || strings.Contains(r, "Carol") || !strings.Contains(r, "schedules announce in") {
			t.Errorf("/oncall in %s, a chat of no schedule: %q", chat, r)
		}
	}
	if _, ok, _ := c.Answer(ctx, "-1005", "/oncallers"); ok {
		t.Error("/oncallers taken for /oncall")
	}
	if _, ok, _ := c.Answer(ctx, "-1005", "who is on call?"); ok {
		t.Error("a plain message taken for a command")
	}
}
