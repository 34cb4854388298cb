package inbound

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/alerts"
	"github.com/herald-dev/herald/internal/keys"
)

// memoryTTL is how long a firing alert is remembered for its close: as
// long as Herald keeps a thread open.
const memoryTTL = 7 * 24 * time.Hour

// memory remembers firing alerts by key (keys.InboundAlert) for the
// closes that carry only the key. Without Redis it remembers nothing and
// such a close is worded from its key alone. It is best effort: a failure
// to remember or recall is logged and costs the wording, never the alert.
type memory struct {
	rdb redis.UniversalClient
	log *slog.Logger
}

// remembered is what is kept of a firing alert.
type remembered struct {
	Title    string            `json:"title"`
	Severity alerts.Severity   `json:"severity"`
	Labels   map[string]string `json:"labels,omitempty"`
	URL      string            `json:"url,omitempty"`
}

// keep remembers the firing alert a (its Key set).
func (m memory) keep(ctx context.Context, a alerts.Alert) {
	if m.rdb == nil || a.Key == "" {
		return
	}
	b, _ := json.Marshal(remembered{Title: a.Title, Severity: a.Severity, Labels: a.Labels, URL: a.URL})
	if err := m.rdb.Set(ctx, keys.InboundAlert(a.Key), b, memoryTTL).Err(); err != nil {
		m.log.Warn("inbound: could not remember a firing alert for its close", "error", err)
	}
}

// recall fills a resolution from its firing alert, when remembered: the
// title, severity, labels and link it fired with, so it reads and routes
// as that alert. It reports whether it found it.
func (m memory) recall(ctx context.Context, a *alerts.Alert) bool {
	if m.rdb == nil || a.Key == "" {
		return false
	}
	b, err := m.rdb.Get(ctx, keys.InboundAlert(a.Key)).Bytes()
	if err != nil {
		if err != redis.Nil {
			m.log.Warn("inbound: could not recall a firing alert for its close", "error", err)
		}
		return false
	}
	var r remembered
	if json.Unmarshal(b, &r) != nil {
		return false
	}
	a.Title, a.Severity, a.URL = r.Title, r.Severity, firstOf(a.URL, r.URL)
	labels := r.Labels
	for k, v := range a.Labels {
		if labels == nil {
			labels = map[string]string{}
		}
		if _, fired := labels[k]; !fired {
			labels[k] = v
		}
	}
	a.Labels = labels
	return true
}
