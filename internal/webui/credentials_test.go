package webui

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/herald-dev/herald/internal/app"
	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/test/redistest"
)

// TestSenderTokenCannotChange sends every kind of web UI action with the
// API token, which every sender (Alertmanager, Grafana, cron jobs) holds:
// each gets a 403 and Redis is left as it was. The same actions with the
// admin token succeed, which shows the requests themselves were valid.
func TestSenderTokenCannotChange(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	s := &stack{redis: srv, rdb: srv.Client(t), log: testLogger(t)}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	enq := app.NewEnqueuer(s.rdb, producerConfig(srv, false))
	var ids []string
	for i := range 3 {
		res, err := enq.Enqueue(ctx, jobs.Request{Queue: jobs.QueueDefault,
			Message: jobs.SendMessage{Chat: "1001", Text: "pending " + string(rune('a'+i))}})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, res.TaskID)
	}
	base := s.serveProducer(t, false)
	api := base + "/monitoring/api/queues/default"
	actions := []struct{ method, url string }{
		{http.MethodPost, api + ":pause"},
		{http.MethodDelete, api + "/pending_tasks/" + ids[0]},
		{http.MethodPost, api + "/pending_tasks/" + ids[1] + ":archive"},
		{http.MethodPost, api + "/pending_tasks:archive_all"},
		{http.MethodDelete, api + "/pending_tasks:delete_all"},
		{http.MethodDelete, api},
	}
	insp := asynq.NewInspectorFromRedisClient(s.rdb)
	for _, a := range actions {
		for _, auth := range []string{"Bearer " + apiToken, basic("grafana", apiToken)} {
			status, _, body := do(t, a.method, a.url, auth)
			if status != http.StatusForbidden || !strings.Contains(body, "HERALD_ADMIN_TOKEN") {
				t.Errorf("%s %s with the API token: %d %s, want 403 naming HERALD_ADMIN_TOKEN", a.method, a.url, status, body)
			}
		}
	}
	info, err := insp.GetQueueInfo(jobs.QueueDefault)
	if err != nil {
		t.Fatal(err)
	}
	if info.Paused || info.Pending != 3 || info.Archived != 0 {
		t.Fatalf("after the sender's attempts: paused %v, %d pending, %d archived; want unpaused, 3, 0", info.Paused, info.Pending, info.Archived)
	}

	for _, a := range actions[:3] {
		status, _, body := do(t, a.method, a.url, basic("admin", adminToken))
		if status >= 300 {
			t.Errorf("%s %s with the admin token: %d %s", a.method, a.url, status, body)
		}
	}
	info, err = insp.GetQueueInfo(jobs.QueueDefault)
	if err != nil {
		t.Fatal(err)
	}
	if !info.Paused || info.Pending != 1 || info.Archived != 1 {
		t.Fatalf("after the admin's actions: paused %v, %d pending, %d archived; want paused, 1, 1", info.Paused, info.Pending, info.Archived)
	}
}
