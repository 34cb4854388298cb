package httpapi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/herald-dev/herald/internal/quota"
	"github.com/herald-dev/herald/internal/yamlstrict"
)

// CodeQuotaExceeded is the code of a 429: the token's quota is spent.
const CodeQuotaExceeded = "quota_exceeded"

// CodeReserve is the code of a 503 refusing bulk work: Redis' memory is
// down to the reserve kept for what pages people (quota.Reserve).
const CodeReserve = "reserve"

// ReserveRetryAfter is the Retry-After of a refusal by the reserve: the
// queues drain at the bot's rate, in seconds to minutes.
const ReserveRetryAfter = "30"

// RefuseBulk answers a request for bulk work that the reserve refused
// (err, a *quota.ReserveError): 503 with Retry-After naming the reserve.
func RefuseBulk(w http.ResponseWriter, err error) {
	w.Header().Set("Retry-After", ReserveRetryAfter)
	WriteError(w, Errorf(http.StatusServiceUnavailable, CodeReserve, "%s", err.Error()))
}

// quotaKeys are the keys of a tokens file entry's quotas:.
var quotaKeys = []string{quota.NameQueued, quota.NameRecipients, quota.NameBroadcastsPerHour,
	quota.NameAlertsPerMinute, quota.NameAudiences, quota.NameAudienceSize, quota.NameAudienceTTL}

// parseQuotas reads an entry's quotas: (absent: the defaults). A count is
// a whole number of at least 1, or -1 for no limit.
func parseQuotas(w *yamlstrict.Walker, f yamlstrict.Field) quota.Limits {
	var l quota.Limits
	if f.Value == nil {
		return l
	}
	m := w.Mapping(f.Value, f.Path, quotaKeys)
	counts := map[string]*int{quota.NameQueued: &l.QueuedMessages, quota.NameRecipients: &l.QueuedRecipients,
		quota.NameBroadcastsPerHour: &l.BroadcastsPerHour, quota.NameAlertsPerMinute: &l.AlertsPerMinute,
		quota.NameAudiences: &l.Audiences, quota.NameAudienceSize: &l.AudienceSize}
	for name, dst := range counts {
		v := m[name]
		if v.Value == nil {
			continue
		}
		n, ok := w.Int(v.Value, v.Path)
		if ok && (n == 0 || n < -1) {
			w.Report(v.Value, v.Path, fmt.Sprintf("%d is not a quota", n), "use a number of at least 1, or -1 for no limit")
			continue
		}
		*dst = n
	}
	if v := m[quota.NameAudienceTTL]; v.Value != nil {
		if d, ok := w.Duration(v.Value, v.Path); ok {
			l.AudienceTTL = d
			if err := (quota.Limits{AudienceTTL: d}).Validate(); err != nil || d == 0 {
				w.Report(v.Value, v.Path, fmt.Sprintf("%s is not an audience lifetime", d), "use a duration of 1m or more, such as 720h")
			}
		}
	}
	return l
}

// RateLimitHeaders sets GitHub's X-RateLimit-Limit, -Remaining and -Reset
// (Unix seconds; now when nothing is counted) for u, a quota with a limit.
func RateLimitHeaders(w http.ResponseWriter, u quota.Usage) {
	if u.Limit < 0 {
		return
	}
	h := w.Header()
	h.Set("X-RateLimit-Limit", strconv.Itoa(u.Limit))
	h.Set("X-RateLimit-Remaining", strconv.Itoa(u.Remaining()))
	reset := u.Reset
	if reset.IsZero() {
		reset = time.Now()
	}
	h.Set("X-RateLimit-Reset", strconv.FormatInt(reset.Unix(), 10))
	h.Set("X-RateLimit-Resource", u.Name)
}

// QuotaBody is the JSON body of a 429: the error, and the quota with its
// figures.
type QuotaBody struct {
	ErrorBody
	Quota QuotaFigures `json:"quota"`
}

// QuotaFigures name the quota a request would exceed and where it stands.
type QuotaFigures struct {
	Name    string `json:"name"`
	Limit   int    `json:"limit"`
	Current int    `json:"current"`
	Asked   int    `json:"requested"`
	// RetryAfter is the Retry-After header's seconds.
	RetryAfter int `json:"retry_after"`
}

// TooManyRequests answers a request refused by its token's quota: 429,
// Retry-After, the X-RateLimit headers, and a body naming the quota and
// its figures.
func TooManyRequests(w http.ResponseWriter, token string, e *quota.Exceeded) {
	secs := int((e.RetryAfter + time.Second - 1) / time.Second)
	secs = max(secs, 1)
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	u := e.Usage
	if u.Reset.IsZero() {
		u.Reset = time.Now().Add(time.Duration(secs) * time.Second)
	}
	RateLimitHeaders(w, u)
	WriteJSON(w, http.StatusTooManyRequests, QuotaBody{
		ErrorBody: ErrorBody{Error: ErrorDetail{Code: CodeQuotaExceeded, Message: fmt.Sprintf(
			"token %q is over its %s quota: %d counted, %d more asked, the limit is %d; retry after %d s, or raise it in the tokens file (docs/QUOTAS.md)",
			token, e.Name, e.Used, e.Asked, e.Limit, secs)}},
		Quota: QuotaFigures{Name: e.Name, Limit: e.Limit, Current: e.Used, Asked: e.Asked, RetryAfter: secs},
	})
}

// TakeQuota counts wants against the quotas of the request's token at time at
// (internal/quota), answering a refusal itself: 429 naming the quota, or
// 503 when Redis failed. It returns 0 when the request may go on (with
// the first quota's X-RateLimit headers set), the status it answered
// otherwise. A nil store counts nothing.
func TakeQuota(w http.ResponseWriter, r *http.Request, store *quota.Store, log *slog.Logger, at time.Time, wants ...quota.Want) int {
	p, _ := PrincipalFrom(r.Context())
	if store == nil || p.Name == "" {
		return 0
	}
	usage, err := store.Take(r.Context(), p.Name, p.Limits(), at, wants...)
	var ex *quota.Exceeded
	switch {
	case errors.As(err, &ex):
		TooManyRequests(w, p.Name, ex)
		return http.StatusTooManyRequests
	case err != nil:
		log.Error("quota check failed; answering 503", "token", p.Name, "error", err)
		WriteError(w, Errorf(http.StatusServiceUnavailable, CodeUnavailable,
			"Redis is unavailable; nothing was stored, retry later"))
		return http.StatusServiceUnavailable
	}
	RateLimitHeaders(w, usage[0])
	return 0
}

// GiveQuota takes back n of the quota name that TakeQuota counted at time at, for
// a request that stored less than it counted. Best effort: what is not
// given back leaves the count with its bucket (internal/quota).
func GiveQuota(ctx context.Context, store *quota.Store, log *slog.Logger, token, name string, at time.Time, n int) {
	if store == nil || n <= 0 {
		return
	}
	if err := store.Give(context.WithoutCancel(ctx), token, name, at, n); err != nil {
		log.Warn("could not give back a quota's count; it expires with its bucket", "token", token, "quota", name, "error", err)
	}
}
