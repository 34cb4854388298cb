package interact

import (
	"context"
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/buttons"
	"github.com/herald-dev/herald/internal/silences"
)

// slowStore is a silences store whose Create waits for release, then
// refuses: too many silences.
type slowStore struct {
	silenceStore
	entered, release chan struct{}
}

func (s *slowStore) Create(ctx context.Context, in silences.Input) (silences.Silence, error) {
	close(s.entered)
	<-s.release
	return silences.Silence{}, silences.ErrTooMany
}

// TestDuplicateDoesNotAnswerFirst: a press delivered again while its first
// task is still acting is not answered by the copy's task (which would
// come first, with a default text); the first task's answer, the real
// outcome, is the only one Telegram gets.
func TestDuplicateDoesNotAnswerFirst(t *testing.T) {
	t.Parallel()
	h := setup(t, options{})
	store := &slowStore{silenceStore: h.store, entered: make(chan struct{}), release: make(chan struct{})}
	handler, err := newHandler(handlerConfig{Redis: h.rdb, Bots: h.bots, Edits: h.edits, Silences: store,
		BackoffBase: 50 * time.Millisecond, BackoffCap: 500 * time.Millisecond, Logger: h.log, Metrics: h.metrics})
	if err != nil {
		t.Fatal(err)
	}
	msg := h.sendAlert(t, subject("pages", "fp-answer-once"))
	q := h.press(t, msg, alice, buttons.Silence1h)
	first := make(chan error, 1)
	task := pressTask(t, "first", q, messageJSON(q.MessageID, q.ChatID, ""))
	go func() { first <- handler.Handle(h.ctx, task) }()
	select {
	case <-store.entered:
	case <-h.ctx.Done():
		t.Fatal("the first task never created the silence")
	}
	if err := handler.Handle(h.ctx, pressTask(t, "copy", q, messageJSON(q.MessageID, q.ChatID, ""))); err != nil {
		t.Fatalf("the copy's task: %v", err)
	}
	close(store.release)
	if err := <-first; err != nil {
		t.Fatalf("the first task: %v", err)
	}
	got := h.answered(t, "pages", q.ID)
	if got.Answer.Text != answerTooMany || !got.Answer.ShowAlert {
		t.Errorf("answered %+v, want the outcome %q as an alert", got.Answer, answerTooMany)
	}
	if got.RefusedAnswers != 0 {
		t.Errorf("%d answers refused: the query was answered more than once", got.RefusedAnswers)
	}
	if n := h.presses(t, map[string]string{"outcome": outcomeDuplicate}); n != 1 {
		t.Errorf("duplicates counted %v, want 1", n)
	}

	// A refused press brought by two tasks is answered by the first only.
	qr := h.press(t, msg, bob, buttons.Ack)
	for _, id := range []string{"r1", "r2", "r1"} {
		if err := handler.Handle(h.ctx, pressTask(t, id, qr, messageJSON(qr.MessageID, 999, ""))); err != nil {
			t.Fatalf("task %s: %v", id, err)
		}
	}
	if got := h.answered(t, "pages", qr.ID); got.Answer.Text != answerRefused || got.RefusedAnswers != 1 {
		t.Errorf("refused press answered %q, %d answers refused; want %q and one refused (r1's retry)",
			got.Answer.Text, got.RefusedAnswers, answerRefused)
	}
}
