package interact

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hibiken/asynq"

	"github.com/herald-dev/herald/internal/buttons"
	"github.com/herald-dev/herald/internal/telegramfake"
	"github.com/herald-dev/herald/internal/worker"
)

const testSecret = "s3cret_Token-1"

// TestWebhook: the workers set each bot's webhook to the producer's route
// with the secret; a press posted there is queued and acted on. A post
// with a wrong or no secret is refused 401 and queues nothing; one for an
// unknown bot is 404; the right one queues its task.
func TestWebhook(t *testing.T) {
	t.Parallel()
	var base string
	h := setup(t, options{receiver: func(h *harness) worker.Component {
		recv, err := newReceiver(receiverConfig{Tasks: h.tasks(t), Secret: testSecret, Bots: testBots, Logger: h.log})
		if err != nil {
			t.Fatal(err)
		}
		mux := http.NewServeMux()
		mux.Handle(WebhookPattern, recv)
		ts := httptest.NewServer(mux)
		t.Cleanup(ts.Close)
		base = ts.URL
		r, err := newRegistrar(registrarConfig{Bots: h.bots, BaseURL: base + "/", Secret: testSecret, Logger: h.log})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}})
	for _, bot := range testBots {
		h.waitFor(t, bot+"'s webhook", func() bool {
			st, err := h.fake.Updates(bot)
			return err == nil && st.Webhook == base+"/telegram/"+bot+"/updates" && st.SecretToken == testSecret
		})
	}

	msg := h.sendAlert(t, subject("status", "fp-hook"))
	q := h.press(t, msg, alice, buttons.Ack)
	if got := h.answered(t, "status", q.ID).Answer.Text; got != "Acknowledged" {
		t.Errorf("answer %q", got)
	}
	h.current(t, msg, "the acknowledgement", func(e telegramfake.Edit) bool { return hasLine(e.Text, "Acknowledged by @alice") })

	post := func(path, secret, body string) int {
		req, _ := http.NewRequest(http.MethodPost, base+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if secret != "" {
			req.Header.Set(SecretHeader, secret)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	update := `{"update_id": 99001, "callback_query": {"id": "q-x", "from": {"id": 5, "first_name": "Eve"}, "data": "h1:ack:0011"}}`
	for _, c := range []struct {
		path, secret string
		want         int
	}{
		{webhookPath("pages"), "", http.StatusUnauthorized},
		{webhookPath("pages"), testSecret + "x", http.StatusUnauthorized},
		{webhookPath("pages"), strings.ToUpper(testSecret), http.StatusUnauthorized},
		{webhookPath("nobot"), testSecret, http.StatusNotFound},
	} {
		if got := post(c.path, c.secret, update); got != c.want {
			t.Errorf("POST %s with secret %q: %d, want %d", c.path, c.secret, got, c.want)
		}
	}
	if _, err := h.insp.GetTaskInfo("critical", taskID("pages", 99001)); err == nil {
		t.Fatalf("a refused post queued a task")
	}
	if got := post(webhookPath("pages"), testSecret, "{not json"); got != http.StatusBadRequest {
		t.Errorf("unreadable body: %d, want 400", got)
	}
	if got := post(webhookPath("pages"), testSecret, update); got != http.StatusOK {
		t.Fatalf("right secret: %d, want 200", got)
	}
	info, err := h.insp.GetTaskInfo("critical", taskID("pages", 99001))
	if err != nil || info.Type != TypeUpdate {
		t.Fatalf("no update task after the post: %+v, %v", info, err)
	}
	// Telegram posting the same update again queues nothing new.
	if got := post(webhookPath("pages"), testSecret, update); got != http.StatusOK {
		t.Errorf("repeated post: %d, want 200", got)
	}
	if n, err := h.insp.GetQueueInfo("critical"); err == nil && n.Size > 0 {
		h.waitFor(t, "the queue to drain", func() bool {
			qi, err := h.insp.GetQueueInfo("critical")
			return err == nil && qi.Pending+qi.Active+qi.Retry == 0
		})
	}
	ls, err := h.insp.ListCompletedTasks("critical", asynq.PageSize(100))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, ti := range ls {
		if ti.ID == taskID("pages", 99001) {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d completed tasks of the posted update, want 1", n)
	}
}
