package producer_test

import (
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/httpapi"
	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/producer"
)

// newBotsBundle is newBundle whose Enqueuer knows the bots named, as the
// producer's does (jobs.Limits.Bots from HERALD_BOTS).
func newBotsBundle(tb testing.TB, bots ...string) *testBundle {
	tb.Helper()
	mr := miniredis.RunT(tb)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	tb.Cleanup(func() { _ = rdb.Close() })
	enq := jobs.NewEnqueuer(rdb, jobs.EnqueueConfig{MaxRetry: testMaxRetry, Timeout: testTimeout, Limits: jobs.Limits{Bots: bots}})
	tb.Cleanup(func() { _ = enq.Close() })
	insp := asynq.NewInspector(asynq.RedisClientOpt{Addr: mr.Addr()})
	tb.Cleanup(func() { _ = insp.Close() })
	return &testBundle{mr: mr, rdb: rdb, enq: enq, inspector: insp}
}

// newBotsAPI is the API over newBotsBundle.
func newBotsAPI(tb testing.TB, bots ...string) (http.Handler, *testBundle) {
	tb.Helper()
	b := newBotsBundle(tb, bots...)
	api, err := producer.NewAPI(producer.Config{Enqueuer: b.enq, Redis: b.rdb, Keyring: testKeyring(tb, testToken, ""), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		tb.Fatalf("NewAPI: %v", err)
	}
	return api.Handler(), b
}

func TestPostMessageBot(t *testing.T) {
	t.Parallel()

	t.Run("a known bot lands in the payload", func(t *testing.T) {
		t.Parallel()
		h, b := newBotsAPI(t, "default", "pages")
		res := accepted(t, post(h, `{"chat":"42","text":"db down","bot":"pages"}`))
		if m, _ := b.task(t, res.Queue, res.TaskID); m.Bot != "pages" || m.BotName() != "pages" {
			t.Fatalf("stored bot %q, want pages", m.Bot)
		}
	})

	t.Run("no bot and the bot default are the default bot", func(t *testing.T) {
		t.Parallel()
		h, b := newBotsAPI(t, "default", "pages")
		for _, body := range []string{`{"chat":"42","text":"x"}`, `{"chat":"42","text":"x","bot":"default"}`} {
			res := accepted(t, post(h, body))
			if m, _ := b.task(t, res.Queue, res.TaskID); m.Bot != "" || m.BotName() != "default" {
				t.Errorf("%s stored bot %q, want the default bot (empty in the payload)", body, m.Bot)
			}
		}
	})

	t.Run("an unknown bot is a 400 naming the known ones", func(t *testing.T) {
		t.Parallel()
		h, b := newBotsAPI(t, "default", "pages", "status")
		eb := errorBody(t, post(h, `{"chat":"42","text":"x","bot":"pagse"}`), http.StatusBadRequest, httpapi.CodeInvalidField)
		msg, ok := fieldMessages(eb)["bot"]
		if !ok {
			t.Fatalf("no error on the field bot: %+v", eb)
		}
		for _, want := range []string{`"pagse"`, "default, pages, status"} {
			if !strings.Contains(msg, want) {
				t.Errorf("bot error %q lacks %q", msg, want)
			}
		}
		b.requireNoTasks(t)
	})

	t.Run("no bot without a default bot is a 400", func(t *testing.T) {
		t.Parallel()
		h, b := newBotsAPI(t, "pages", "status")
		eb := errorBody(t, post(h, `{"chat":"42","text":"x"}`), http.StatusBadRequest, httpapi.CodeInvalidField)
		msg := fieldMessages(eb)["bot"]
		if !strings.Contains(msg, "is required") || !strings.Contains(msg, "pages, status") {
			t.Errorf("bot error %q, want it to require a bot and name pages, status", msg)
		}
		b.requireNoTasks(t)
		res := accepted(t, post(h, `{"chat":"42","text":"x","bot":"status"}`))
		if m, _ := b.task(t, res.Queue, res.TaskID); m.Bot != "status" {
			t.Errorf("stored bot %q, want status", m.Bot)
		}
	})

	t.Run("a malformed bot name is a 400 with the other fields", func(t *testing.T) {
		t.Parallel()
		h, b := newBotsAPI(t, "default")
		eb := errorBody(t, post(h, `{"chat":"x","text":"x","bot":"Pages"}`), http.StatusBadRequest, httpapi.CodeInvalidField)
		fields := fieldMessages(eb)
		if !strings.Contains(fields["bot"], "not a bot name") || fields["chat"] == "" {
			t.Errorf("fields %v, want errors on bot and chat", fields)
		}
		b.requireNoTasks(t)
	})

	t.Run("the bot must be a string", func(t *testing.T) {
		t.Parallel()
		h, b := newBotsAPI(t, "default")
		rec := post(h, `{"chat":"42","text":"x","bot":7}`)
		if rec.Code != http.StatusBadRequest {
			t.Fatalf("status %d, want 400; body %s", rec.Code, rec.Body)
		}
		b.requireNoTasks(t)
	})
}

func TestSendBot(t *testing.T) {
	t.Parallel()

	t.Run("--bot lands in the payload", func(t *testing.T) {
		t.Parallel()
		b := newBotsBundle(t, "default", "pages")
		res := sentResult(t, runSend(b, nil, "--chat", "42", "--bot", "pages", "db", "down"))
		if m, _ := b.task(t, res.Queue, res.TaskID); m.Bot != "pages" || m.Text != "db down" {
			t.Fatalf("stored %+v, want bot pages", m)
		}
	})

	t.Run("an unknown --bot exits 2 naming the known bots", func(t *testing.T) {
		t.Parallel()
		b := newBotsBundle(t, "default", "pages")
		r := runSend(b, nil, "--bot", "nope", "--chat", "42", "x")
		if r.code != producer.ExitUsage {
			t.Fatalf("exit %d, want %d; stderr %q", r.code, producer.ExitUsage, r.stderr)
		}
		if !strings.HasPrefix(r.stderr, `producer send: --bot: "nope" is not a bot of this Herald; its bots are default, pages`) {
			t.Errorf("stderr %q", r.stderr)
		}
		b.requireNoTasks(t)
	})

	t.Run("no --bot without a default bot exits 2", func(t *testing.T) {
		t.Parallel()
		b := newBotsBundle(t, "pages")
		r := runSend(b, nil, "--chat", "42", "x")
		if r.code != producer.ExitUsage || !strings.Contains(r.stderr, "--bot: is required") {
			t.Fatalf("exit %d, stderr %q; want 2 and a required --bot", r.code, r.stderr)
		}
		b.requireNoTasks(t)
	})
}
