package producer

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/herald-dev/herald/internal/httpapi"
)

// The web UI (asynqmon) shows messages' payloads, text included, in its
// task lists (pending, active, scheduled, retry, archived, completed,
// aggregating), a task's page, the servers' active workers and the
// scheduler's entries. A token without the operate (or admin) scope sees
// the UI's pages and the queues' counts only: every other path of its
// API answers 403, so that one sender never reads another's messages.

// countsOnly reports whether rel, a path under the UI's root, is one a
// token without the operate scope may read: the UI's own files, the
// queues' list, one queue's counts and their daily history.
func countsOnly(rel string) bool {
	api, ok := strings.CutPrefix(rel, "/api/")
	if !ok {
		return rel != "/api" // the UI's HTML, scripts and images
	}
	parts := strings.Split(strings.Trim(api, "/"), "/")
	switch {
	case len(parts) == 1:
		return parts[0] == "queues" || parts[0] == "queue_stats"
	case len(parts) == 2:
		return parts[0] == "queues" // one queue's info: counts, no task
	}
	return false
}

// payloadsNeedOperate answers 403 for a path countsOnly refuses.
func payloadsNeedOperate(w http.ResponseWriter, name string) {
	httpapi.Forbidden(w, "token "+strconv.Quote(name)+" sees the web UI's counts only: the messages themselves (task lists, a task, the workers' tasks, scheduled entries) need a token with the operate or admin scope (a tokens file entry, or HERALD_ADMIN_TOKEN)")
}
