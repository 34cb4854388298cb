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
