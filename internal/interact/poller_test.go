package interact

import (
	"context"
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/buttons"
	"github.com/herald-dev/herald/internal/keys"
	"github.com/herald-dev/herald/internal/telegramfake"
)

// TestPollerLease: two pollers for the same bots; each bot is polled by
// one of them only (Telegram sees no conflicting getUpdates). When the
// holder stops, the other takes over and continues from the stored
// offset: presses made before are not fetched again, later ones are
// handled.
func TestPollerLease(t *testing.T) {
	t.Parallel()
	h := setup(t, options{})
	pollers := map[string]*poller{"a": h.newPoller(t, "a"), "b": h.newPoller(t, "b")}
	for _, p := range pollers {
		if err := p.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(p.Shutdown)
	}
	owner := func(bot string) string { return h.rdb.Get(h.ctx, keys.Bot(bot).UpdatesLease()).Val() }
	h.waitFor(t, "both leases taken", func() bool { return owner("pages") != "" && owner("status") != "" })
	first := map[string]string{"pages": owner("pages"), "status": owner("status")}

	msgs := map[string]telegramfake.Message{}
	var queries []telegramfake.CallbackQuery
	for _, bot := range testBots {
		msgs[bot] = h.sendAlert(t, subject(bot, "fp-lease"))
		q := h.press(t, msgs[bot], alice, buttons.Ack)
		h.answered(t, bot, q.ID)
		queries = append(queries, q)
	}
	// Outlive a lease or so: the holders renew, nobody else polls.
	time.Sleep(1500 * time.Millisecond)
	st := h.fake.Stats()
	for _, bot := range testBots {
		if got := owner(bot); got != first[bot] {
			t.Errorf("%s's lease moved from %s to %s while its holder ran", bot, first[bot], got)
		}
		if n := st.Bots[bot].Rejected; n != 0 {
			t.Errorf("%s: Telegram refused %d requests (409: two pollers?)", bot, n)
		}
	}

	// The holder of pages stops; the other poller takes over.
	holder := first["pages"]
	other := "a"
	if holder == "a" {
		other = "b"
	}
	offset := h.rdb.Get(h.ctx, keys.Bot("pages").UpdatesOffset()).Val()
	pollers[holder].Shutdown()
	h.waitFor(t, "the other poller to take pages over", func() bool { return owner("pages") == other })
	if got := h.rdb.Get(h.ctx, keys.Bot("pages").UpdatesOffset()).Val(); got != offset {
		t.Errorf("offset moved from %s to %s at the hand-over", offset, got)
	}
	q := h.press(t, msgs["pages"], bob, buttons.Silence1h)
	if got := h.answered(t, "pages", q.ID).Answer.Text; got != "Silenced for 1h" {
		t.Errorf("press after the hand-over answered %q", got)
	}
	h.current(t, msgs["pages"], "the silence", func(e telegramfake.Edit) bool { return hasLine(e.Text, "Silenced for 1h by @bobby") })
	for _, c := range h.fake.CallbackQueries("pages") {
		if c.ID == queries[0].ID && c.Deliveries != 1 {
			t.Errorf("the press before the hand-over was fetched %d times, want once", c.Deliveries)
		}
	}
	if n := h.presses(t, map[string]string{"bot": "pages", "outcome": outcomeAccepted}); n != 2 {
		t.Errorf("pages: %v presses accepted, want 2", n)
	}
	if n := h.presses(t, map[string]string{"outcome": outcomeDuplicate}); n != 0 {
		t.Errorf("%v duplicate presses: an update was handed over twice", n)
	}
}
