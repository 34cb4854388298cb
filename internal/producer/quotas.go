package producer

import (
	"context"
	"net/http"
	"time"

	"github.com/herald-dev/herald/internal/httpapi"
	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/quota"
)

// quotaed wraps next so that every POST takes one of the rate quota name
// (alerts per minute) from the request's token.
func (a *api) quotaed(name string, next http.Handler) http.Handler {
	if name == "" || a.cfg.Quotas == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && httpapi.TakeQuota(w, r, a.cfg.Quotas, a.cfg.Logger, time.Now(), quota.Want{Name: name, N: 1}) != 0 {
			return
		}
		next.ServeHTTP(w, r)
	})
}

// settleQuota gives back the queued message that take counted for a
// message the Enqueuer did not queue: refused, a duplicate, or folded into
// a digest (coalesced messages count against no queued quota).
func (a *api) settleQuota(ctx context.Context, token string, at time.Time, res jobs.Result, err error) {
	if err != nil || res.Duplicate || res.Coalesced {
		httpapi.GiveQuota(ctx, a.cfg.Quotas, a.cfg.Logger, token, quota.NameQueued, at, 1)
	}
}

// bulk is the reserve's verdict (quota.Store.BulkFits) on a message of
// textBytes for queue: the low and broadcast queues are bulk work; the
// others, and a message naming none, are not.
func (a *api) bulk(queue string, textBytes int) error {
	if queue != jobs.QueueLow && queue != jobs.QueueBroadcast {
		return nil
	}
	return a.cfg.Quotas.BulkFits(1, textBytes)
}
