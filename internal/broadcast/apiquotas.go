package broadcast

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/herald-dev/herald/internal/httpapi"
	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/quota"
)

// admission is one broadcast request's pass through its token's quotas:
// one broadcast of the hourly rate and one queued recipient per chat,
// taken once the request is valid (Request.Admit) and given
// back for what was not stored.
type admission struct {
	a        *broadcastsAPI
	w        http.ResponseWriter
	r        *http.Request
	text     int // the template's bytes: about each message's text
	taken    int
	at       time.Time
	answered bool // the quota's refusal (or Redis' failure) is answered
}

func (a *broadcastsAPI) admission(w http.ResponseWriter, r *http.Request, text int) *admission {
	return &admission{a: a, w: w, r: r, text: text}
}

// admit is Request.Admit: the Redis memory reserve first (the messages
// must fit under its line with the bulk work accepted before them), then
// the token's quotas.
func (d *admission) admit(_ context.Context, chats int, at time.Time) error {
	if d.a.quotas == nil {
		return nil
	}
	if err := d.a.quotas.BulkFits(chats, d.text); err != nil {
		httpapi.RefuseBulk(d.w, err)
		d.answered = true
		return errAnswered
	}
	if status := httpapi.TakeQuota(d.w, d.r, d.a.quotas, d.a.log, at, quota.Want{Name: quota.NameRecipients, N: chats},
		quota.Want{Name: quota.NameBroadcastsPerHour, N: 1}); status != 0 {
		d.answered = true
		return errAnswered
	}
	d.taken, d.at = chats, at
	return nil
}

// errAnswered stops a broadcast whose refusal admit answered.
var errAnswered = &httpapi.Error{Status: http.StatusTooManyRequests, Code: httpapi.CodeQuotaExceeded, Message: "refused by a quota"}

// settle gives back the recipients that Create did not queue: all of them
// when it failed or found a duplicate, the chats that blocked the bot
// otherwise. (The broadcast itself stays counted in the hourly rate: the
// request was made.)
func (d *admission) settle(ctx context.Context, res Result, err error) {
	if d.taken == 0 {
		return
	}
	back := res.Blocked
	if err != nil || res.Duplicate {
		back = d.taken
	}
	p, _ := httpapi.PrincipalFrom(d.r.Context())
	httpapi.GiveQuota(ctx, d.a.quotas, d.a.log, p.Name, quota.NameRecipients, d.at, back)
}

// audienceFits checks an audience upload's size against its token's
// audience_size quota: a 400 naming the chats (waiting would not help),
// answered here.
func (a *broadcastsAPI) audienceFits(w http.ResponseWriter, r *http.Request, chats int) bool {
	p, _ := httpapi.PrincipalFrom(r.Context())
	l := p.Limits()
	if a.quotas == nil || l.AudienceSize < 0 || chats <= l.AudienceSize {
		return true
	}
	httpapi.WriteError(w, httpapi.Invalid("invalid audience", jobs.FieldError{Field: "chats",
		Message: fmt.Sprintf("lists %d chats; the %s quota of token %q is %d", chats, quota.NameAudienceSize, p.Name, l.AudienceSize)}))
	return false
}

// keepAudience counts a stored audience in its token's audiences quota and
// makes it expire after the token's audience_ttl. A new audience over the
// quota is deleted again and refused with a 429, answered here, as is a
// Redis failure.
func (a *broadcastsAPI) keepAudience(w http.ResponseWriter, r *http.Request) bool {
	if a.quotas == nil {
		return true
	}
	p, _ := httpapi.PrincipalFrom(r.Context())
	l, name, now := p.Limits(), r.PathValue("name"), time.Now()
	_, err := a.quotas.KeepAudience(r.Context(), p.Name, name, l, now, now.Add(l.AudienceTTL))
	var ex *quota.Exceeded
	if errors.As(err, &ex) {
		// Only a new name is refused: it held nothing before this upload.
		if _, derr := a.svc.DeleteAudience(context.WithoutCancel(r.Context()), p.Name, name); derr != nil {
			a.log.Warn("could not delete an audience over its token's quota", "token", p.Name, "error", derr)
		}
		httpapi.TooManyRequests(w, p.Name, ex)
		return false
	}
	if err == nil {
		err = a.svc.ExpireAudience(r.Context(), p.Name, name, l.AudienceTTL)
	}
	if err != nil {
		a.fail(w, "", err)
		return false
	}
	return true
}

// dropAudience forgets a deleted audience in its token's count. Best
// effort: a name left behind stops counting when it expires.
func (a *broadcastsAPI) dropAudience(r *http.Request, name string) {
	if a.quotas == nil {
		return
	}
	p, _ := httpapi.PrincipalFrom(r.Context())
	if err := a.quotas.DropAudience(context.WithoutCancel(r.Context()), p.Name, name); err != nil {
		a.log.Warn("could not forget a deleted audience in its token's count", "token", p.Name, "error", err)
	}
}
