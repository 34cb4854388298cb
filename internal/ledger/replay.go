package ledger

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hibiken/asynq"
)

// Filter picks failed messages to retry. Empty fields match everything.
type Filter struct {
	// Reason is the stable reason the message failed with (chat_blocked,
	// retries_exhausted, server_error, ...).
	Reason string `json:"reason,omitempty"`
	Bot    string `json:"bot,omitempty"`
	Queue  string `json:"queue,omitempty"`
	// Since keeps the messages that failed at or after it.
	Since time.Time `json:"since,omitzero"`
	// Limit bounds how many are retried in one call; default
	// DefaultRetryLimit, at most MaxRetryLimit. Call again for more.
	Limit int `json:"limit,omitempty"`
}

// Bounds of Filter.Limit.
const (
	DefaultRetryLimit = 1000
	MaxRetryLimit     = 10000
)

// Replayed is what RetryFailed did.
type Replayed struct {
	// Retried lists the ids of the messages run again.
	Retried []string `json:"retried"`
	// More is set when more failed messages match than Limit let through.
	More bool `json:"more"`
}

// pageSize is how many archived tasks one look at a queue reads.
const pageSize = 200

// RetryFailed runs again the failed messages that f matches, each from its
// first part not yet sent, as Retry does for one.
func (m *Messages) RetryFailed(ctx context.Context, f Filter) (Replayed, error) {
	limit := f.Limit
	if limit <= 0 {
		limit = DefaultRetryLimit
	}
	limit = min(limit, MaxRetryLimit)
	queues := m.queues
	if f.Queue != "" {
		queues = []string{f.Queue}
	}
	var ids []string
	more := false
	for _, q := range queues {
		found, over, err := m.matching(q, f, limit-len(ids))
		if err != nil {
			return Replayed{}, err
		}
		ids = append(ids, found...)
		if over {
			more = true
			break
		}
	}
	out := Replayed{Retried: []string{}, More: more}
	for _, id := range ids {
		if _, err := m.Retry(ctx, id); err != nil {
			var late *TooLateError
			if errors.As(err, &late) || errors.Is(err, ErrNotFound) {
				continue // retried or deleted meanwhile
			}
			return out, err
		}
		out.Retried = append(out.Retried, id)
	}
	return out, nil
}

// matching lists up to n archived tasks of queue that f matches; over
// reports that there were more.
func (m *Messages) matching(queue string, f Filter, n int) (ids []string, over bool, err error) {
	for page := 1; ; page++ {
		tasks, err := m.insp.ListArchivedTasks(queue, asynq.PageSize(pageSize), asynq.Page(page))
		if errors.Is(err, asynq.ErrQueueNotFound) {
			return ids, false, nil
		}
		if err != nil {
			return nil, false, fmt.Errorf("ledger: list failed messages of %s: %w", queue, err)
		}
		for _, t := range tasks {
			if !f.matches(t) {
				continue
			}
			if len(ids) == n {
				return ids, true, nil
			}
			ids = append(ids, t.ID)
		}
		if len(tasks) < pageSize {
			return ids, false, nil
		}
	}
}

// matches reports whether the archived task t is one f picks.
func (f Filter) matches(t *asynq.TaskInfo) bool {
	msg, err := messageOf(t)
	if err != nil {
		return false
	}
	if f.Bot != "" && botName(msg.Bot) != botName(f.Bot) {
		return false
	}
	if reason, _ := splitErr(t.LastErr); f.Reason != "" && reason != f.Reason {
		return false
	}
	return f.Since.IsZero() || !t.LastFailedAt.Before(f.Since)
}
