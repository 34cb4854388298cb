package statushook

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/url"
	"time"

	"github.com/herald-dev/herald/internal/broker"
	"github.com/herald-dev/herald/internal/config"
)

// promoteBelow is the longest wait the broker's promoter ends (on time,
// to the millisecond, but handed over to the fleet at a shutdown); longer
// waits go to asynq's retry set (RetryLong), where a restart leaves them
// alone and asynq's forwarder moves them within about 20 s of their time.
const promoteBelow = time.Minute

// redisWait is how long a callback waits when Redis did not answer the
// endpoint's health; not counted as an attempt.
const redisWait = time.Second

// attempts handles callback tasks: one attempt each, then the next step
// the Schedule, the answer and the endpoint's health call for.
type attempts struct {
	health       health
	client       *poster
	policy       Policy
	master       []byte
	schedule     Schedule
	disableAfter time.Duration
	// runTTL is how long a run of failures is kept without another failure:
	// the limit, plus the longest wait and an attempt, so that a run of an
	// endpoint whose events keep failing is never forgotten between two of
	// them.
	runTTL  time.Duration
	metrics *metrics
	log     *slog.Logger
	now     func() time.Time
	// shares bounds each endpoint's posts under way (share.go).
	shares *shares
}

// step is one attempt's context, for the outcomes below.
type step struct {
	task     broker.Task
	job      job
	endpoint string
	standing standing
}

// Handle makes one attempt at one event (a broker.Handler).
func (a *attempts) Handle(ctx context.Context, t broker.Task) error {
	j, err := decodeJob(t.Payload)
	if err != nil {
		a.metrics.deliveries.WithLabelValues(outcomeRefused).Inc()
		return broker.Archive("invalid_payload", err)
	}
	u, err := a.policy.ValidateURL(j.URL)
	if err != nil {
		a.metrics.deliveries.WithLabelValues(outcomeRefused).Inc()
		return broker.Archive("callback_url_refused", fmt.Errorf("%s (the URL passed when the event was emitted; %s changed?)",
			withoutURL(err), EnvAllow))
	}
	s := step{task: t, job: j, endpoint: endpointOf(u)}
	if s.standing, err = a.health.before(ctx, s.endpoint); err != nil {
		return broker.Snooze(redisWait, "redis: "+err.Error())
	}
	if s.standing.disabled {
		a.metrics.deliveries.WithLabelValues(outcomeEndpointDisabled).Inc()
		return broker.Archive("endpoint_disabled", fmt.Errorf("callbacks to %s are disabled since %s (%s); "+
			"POST /v1/callbacks/endpoint/enable enables it again, then retry this task",
			s.endpoint, s.standing.since.UTC().Format(time.RFC3339), s.standing.reason))
	}
	if !a.shares.enter(s.endpoint) {
		a.metrics.deliveries.WithLabelValues(outcomeBusy).Inc()
		return broker.Snooze(a.shares.wait(), "endpoint_busy")
	}
	resp, err := a.post(ctx, u, j, s.endpoint)
	verdict := classify(resp.Status, err)
	a.shares.leave(s.endpoint, verdict == verdictDelivered)
	switch verdict {
	case verdictDelivered:
		a.delivered(ctx, s)
		return nil
	case verdictDisable:
		return a.gone(ctx, s, describe(resp, err))
	}
	return a.failed(ctx, s, resp, describe(resp, err))
}

// post signs the event with its endpoint's secret and posts it.
func (a *attempts) post(ctx context.Context, u *url.URL, j job, endpoint string) (answer, error) {
	h, err := Headers(j.ID, a.now(), j.Body, endpointSecret(a.master, endpoint))
	if err != nil {
		return answer{}, err
	}
	return a.client.Post(ctx, u.String(), h, j.Body)
}

// describe is what went wrong with an attempt, for the task's error, the
// endpoint's last error and the logs: the error, and the start of the
// receiver's answer when it gave one.
func describe(resp answer, err error) string {
	msg := err.Error()
	if b := bytes.TrimSpace(resp.Body); len(b) > 0 {
		msg += fmt.Sprintf(": %.100q", b)
	}
	return msg
}

// delivered ends the endpoint's run of failures and then counts a 2xx, so
// that a delivery the metric shows has its endpoint's state written.
func (a *attempts) delivered(ctx context.Context, s step) {
	if s.standing.failing {
		if err := a.health.success(ctx, s.endpoint); err != nil {
			a.log.Warn("callback delivered; clearing the endpoint's failures failed", "endpoint", s.endpoint, "error", err)
		}
	}
	a.metrics.deliveries.WithLabelValues(outcomeDelivered).Inc()
	a.metrics.latency.Observe(max(a.now().Sub(s.job.At), 0).Seconds())
}

// gone disables the endpoint after a 410 and archives the event.
func (a *attempts) gone(ctx context.Context, s step, reason string) error {
	now := a.now()
	first, err := a.health.disable(ctx, s.endpoint, now, disabledGone, reason)
	if err != nil {
		return broker.Snooze(redisWait, "redis: "+err.Error())
	}
	a.metrics.deliveries.WithLabelValues(outcomeDisabled).Inc()
	if first {
		a.announceDisabled(s.endpoint, disabledGone, reason)
	}
	return broker.Archive("endpoint_disabled", fmt.Errorf("%s from %s: the receiver asked for no more callbacks, "+
		"the endpoint is disabled", reason, s.endpoint))
}

// failed records a failed attempt, and retries the event after the
// schedule's next wait (or the receiver's Retry-After, when longer), or
// archives it when the schedule is used up or the endpoint is disabled.
func (a *attempts) failed(ctx context.Context, s step, resp answer, reason string) error {
	res, err := a.health.failure(ctx, s.endpoint, a.now(), reason, a.disableAfter, a.runTTL)
	if err != nil {
		return broker.Snooze(redisWait, "redis: "+err.Error())
	}
	switch res {
	case failureDisabled:
		a.metrics.deliveries.WithLabelValues(outcomeDisabled).Inc()
		a.announceDisabled(s.endpoint, disabledFailing, reason)
		return broker.Archive("endpoint_disabled", fmt.Errorf("%s from %s, failing for longer than %s (%s): the endpoint is disabled",
			reason, s.endpoint, config.FmtDur(a.disableAfter), EnvDisableAfter))
	case failureAlreadyDisabled:
		a.metrics.deliveries.WithLabelValues(outcomeEndpointDisabled).Inc()
		return broker.Archive("endpoint_disabled", fmt.Errorf("%s from %s; the endpoint was disabled meanwhile", reason, s.endpoint))
	}
	tried := s.task.Attempt + 1
	wait, ok := a.schedule.Next(tried)
	if !ok {
		a.metrics.deliveries.WithLabelValues(outcomeExhausted).Inc()
		a.log.Info("callback given up on", "endpoint", s.endpoint, "webhook_id", s.job.ID, "attempts", tried, "error", reason)
		return broker.Archive("retries_exhausted", fmt.Errorf("%s from %s (attempt %d of %d, the event is %s old)",
			reason, s.endpoint, tried, a.schedule.Attempts(), a.now().Sub(s.job.At).Round(time.Second)))
	}
	wait = jitter(max(wait, resp.RetryAfter))
	a.metrics.deliveries.WithLabelValues(outcomeRetry).Inc()
	a.log.Debug("callback attempt failed", "endpoint", s.endpoint, "webhook_id", s.job.ID, "attempt", tried, "next_in", wait, "error", reason)
	cause := fmt.Errorf("attempt %d of %d to %s: %s", tried, a.schedule.Attempts(), s.endpoint, reason)
	if wait < promoteBelow {
		return broker.Retry(wait, "callback_failed", cause)
	}
	return broker.RetryLong(wait, "callback_failed", cause)
}

// announceDisabled is the one log line and the metric of an endpoint
// being disabled.
func (a *attempts) announceDisabled(endpoint, why, lastErr string) {
	a.metrics.disabled.WithLabelValues(why).Inc()
	a.log.Warn("callback endpoint disabled; its later events are archived until it is enabled again "+
		"(POST /v1/callbacks/endpoint/enable)", "endpoint", endpoint, "reason", why, "last_error", lastErr)
}

// jitter adds up to a tenth of d, so that the events of one endpoint that
// failed together do not all come back at the same moment.
func jitter(d time.Duration) time.Duration {
	if d <= 0 {
		return d
	}
	return d + rand.N(d/10+1)
}

// errNoMaster is NewDeliverer's error without a master key.
var errNoMaster = errors.New("statushook: the deliverer needs a master key; " + ErrOff.Error())
