package producer

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/herald-dev/herald/internal/httpapi"
	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/quota"
)

// take counts wants against the quotas of the request's token at time at
// (internal/quota), answering a refusal itself: 429 naming the quota, or
// 503 when Redis failed. It returns 0 when the request may go on (with
// the first quota's X-RateLimit headers set), the status it answered
// otherwise. A nil store counts nothing.
func take(w http.ResponseWriter, r *http.Request, store *quota.Store, log *slog.Logger, at time.Time, wants ...quota.Want) int {
	p, _ := httpapi.PrincipalFrom(r.Context())
	if store == nil || p.Name == "" {
		return 0
	}
	usage, err := store.Take(r.Context(), p.Name, p.Limits(), at, wants...)
	var ex *quota.Exceeded
	switch {
	case errors.As(err, &ex):
		httpapi.TooManyRequests(w, p.Name, ex)
		return http.StatusTooManyRequests
	case err != nil:
		log.Error("quota check failed; answering 503", "token", p.Name, "error", err)
		httpapi.WriteError(w, httpapi.Errorf(http.StatusServiceUnavailable, httpapi.CodeUnavailable,
			"Redis is unavailable; nothing was stored, retry later"))
		return http.StatusServiceUnavailable
	}
	httpapi.RateLimitHeaders(w, usage[0])
	return 0
}

// give takes back n of the quota name that take counted at time at, for
// a request that stored less than it counted. Best effort: what is not
// given back leaves the count with its bucket (internal/quota).
func give(ctx context.Context, store *quota.Store, log *slog.Logger, token, name string, at time.Time, n int) {
	if store == nil || n <= 0 {
		return
	}
	if err := store.Give(context.WithoutCancel(ctx), token, name, at, n); err != nil {
		log.Warn("could not give back a quota's count; it expires with its bucket", "token", token, "quota", name, "error", err)
	}
}

// quotaed wraps next so that every POST takes one of the rate quota name
// (alerts per minute) from the request's token.
func (a *api) quotaed(name string, next http.Handler) http.Handler {
	if name == "" || a.cfg.Quotas == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && take(w, r, a.cfg.Quotas, a.cfg.Logger, time.Now(), quota.Want{Name: name, N: 1}) != 0 {
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
		give(ctx, a.cfg.Quotas, a.cfg.Logger, token, quota.NameQueued, at, 1)
	}
}

// bulk is the reserve's verdict (quota.Store.Bulk) on a message for
// queue: the low and broadcast queues are bulk work; the others, and a
// message naming none, are not.
func (a *api) bulk(queue string) error {
	if queue != jobs.QueueLow && queue != jobs.QueueBroadcast {
		return nil
	}
	return a.cfg.Quotas.Bulk()
}
