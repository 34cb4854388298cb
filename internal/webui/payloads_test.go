package webui

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/herald-dev/herald/internal/jobs"
)

// TestSenderSeesNoPayloads: the API token is another tenant's (B's)
// credential; the seeded messages are tenant A's. Through every path of
// the web UI's API, B reads none of A's text: the task lists, a task, the
// workers and the scheduler answer 403, while the queues' counts and the
// UI's pages answer 200. The admin token reads the same paths, payloads
// included, which shows the paths are the UI's own.
func TestSenderSeesNoPayloads(t *testing.T) {
	t.Parallel()
	s := seed(t)
	base := s.serveProducer(t, false) + "/monitoring"
	q, id := s.archived.Queue, s.archived.ID
	texts := []string{blockedText}
	for _, m := range pendingMessages {
		texts = append(texts, m.Message.Text)
	}
	refused := []string{
		"/api/queues/" + q + "/archived_tasks", "/api/queues/" + q + "/pending_tasks",
		"/api/queues/" + q + "/active_tasks", "/api/queues/" + q + "/scheduled_tasks",
		"/api/queues/" + q + "/retry_tasks", "/api/queues/" + q + "/completed_tasks",
		"/api/queues/" + q + "/groups", "/api/queues/" + q + "/groups/g/aggregating_tasks",
		"/api/queues/" + q + "/tasks/" + id, "/api/queues/" + q + "/archived_tasks/" + id,
		"/api/queues/" + jobs.QueueCritical + "/pending_tasks", "/api/queues/" + jobs.QueueLow + "/pending_tasks",
		"/api/servers", "/api/scheduler_entries", "/api/redis_info", "/api/",
		"/api/queues/" + q + "/../" + q + "/pending_tasks",
	}
	counts := []string{"/", "/api/queues", "/api/queues/" + q, "/api/queue_stats", "/queues/" + q + "?status=archived"}
	for _, auth := range []string{"Bearer " + apiToken, basic("tenant-b", apiToken)} {
		for _, path := range refused {
			status, _, body := get(t, base+path, auth)
			if status != http.StatusForbidden || !strings.Contains(body, "operate") {
				t.Errorf("GET %s by a sender: %d %.200s, want 403 naming the operate scope", path, status, body)
			}
			for _, text := range texts {
				mustNotContain(t, "GET "+path, body, text)
			}
		}
		for _, path := range counts {
			status, _, body := get(t, base+path, auth)
			if status != http.StatusOK {
				t.Errorf("GET %s by a sender: %d %.200s, want 200", path, status, body)
			}
			for _, text := range texts {
				mustNotContain(t, "GET "+path, body, text)
			}
		}
	}
	status, _, body := get(t, base+"/api/queues/"+q, "Bearer "+apiToken)
	var info struct {
		Current struct {
			Archived int `json:"archived"`
		} `json:"current"`
	}
	if err := json.Unmarshal([]byte(body), &info); status != http.StatusOK || err != nil || info.Current.Archived != 1 {
		t.Errorf("a sender's queue counts: %d %v %.300s; want 1 archived", status, err, body)
	}
	if status, _, body := get(t, base+"/api/queues/"+q+"/archived_tasks", "Bearer "+adminToken); status != http.StatusOK || !strings.Contains(body, "97% full") {
		t.Errorf("the admin's archived tasks: %d %.300s, want the payload", status, body)
	}
}
