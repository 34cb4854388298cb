package worker_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/hibiken/asynq"

	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/test/redistest"
)

// The Bot API library puts the token in every request URL, so transport
// errors carry it. It must appear nowhere: not in task errors stored in Redis
// (and shown in the web UI), not in logs, not in metrics.
func TestBotTokenNeverLeaks(t *testing.T) {
	t.Parallel()
	port, err := redistest.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	const token = "123456789:AAH-very-secret-token_value"
	b := setup(t, options{token: token, apiURL: "http://127.0.0.1:" + strconv.Itoa(port), maxRetry: 2})
	res := b.send(t, jobs.SendMessage{Chat: "42", Text: "to a closed port"}, "")
	info := b.waitTask(t, res.Queue, res.TaskID, func(i *asynq.TaskInfo) bool { return i.State == asynq.TaskStateArchived })
	if info.LastErr == "" {
		t.Fatal("archived without an error message")
	}
	for where, text := range map[string]string{
		"task error": info.LastErr,
		"redis":      dumpRedis(t, b.rdb),
		"logs":       b.logs.String(),
	} {
		if strings.Contains(text, token) || strings.Contains(text, "AAH-very-secret") {
			t.Errorf("the bot token appears in the %s", where)
		}
	}
	if !strings.Contains(b.logs.String(), "transport") {
		t.Error("the transport failure was not logged")
	}
}

// TestEveryBotTokenNeverLeaks: with several bots, no bot's token shows in
// task errors, Redis, logs or metrics.
func TestEveryBotTokenNeverLeaks(t *testing.T) {
	t.Parallel()
	port, err := redistest.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	tokens := map[string]string{"pages": "222222222:AAH-pages-secret-token", "status": "333333333:AAH-status-secret-token"}
	b := setup(t, options{bots: []string{"pages", "status"}, workerTokens: tokens,
		apiURL: "http://127.0.0.1:" + strconv.Itoa(port), maxRetry: 1})
	var errs []string
	for _, bot := range []string{"pages", "status"} {
		res := b.send(t, jobs.SendMessage{Bot: bot, Chat: "42", Text: "to a closed port"}, "")
		info := b.waitTask(t, res.Queue, res.TaskID, func(i *asynq.TaskInfo) bool { return i.State == asynq.TaskStateArchived })
		errs = append(errs, info.LastErr)
	}
	mfs, err := b.metrics.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var metrics strings.Builder
	for _, mf := range mfs {
		metrics.WriteString(mf.String())
	}
	for where, text := range map[string]string{
		"task errors": strings.Join(errs, "\n"),
		"redis":       dumpRedis(t, b.rdb),
		"logs":        b.logs.String(),
		"metrics":     metrics.String(),
	} {
		for bot, tok := range tokens {
			if strings.Contains(text, tok) || strings.Contains(text, strings.SplitN(tok, ":", 2)[1]) {
				t.Errorf("%s's token appears in the %s", bot, where)
			}
		}
	}
	if !strings.Contains(metrics.String(), "status") {
		t.Error("the metrics do not name the bots")
	}
}
