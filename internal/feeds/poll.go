package feeds

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"time"

	"github.com/mmcdole/gofeed"

	"github.com/herald-dev/herald/internal/alerts"
	"github.com/herald-dev/herald/internal/jobs"
)

// outcome is the result of one poll.
type outcome struct {
	result result
	// err explains a failed poll (or a dispatch failure).
	err error
	// sent counts items dispatched; skipped counts items recorded as seen
	// without an alert, by reason.
	sent    int
	skipped map[string]int
	// retryAfter is the server's Retry-After on 429 and 503.
	retryAfter time.Duration
	// token is the lease token when the lease was taken.
	token string
}

// leaseTTL bounds how long a crashed poller can keep a feed's lease: the
// fetch timeout plus time to dispatch the items.
func leaseTTL(fd feed) time.Duration { return 2*fd.Timeout + time.Minute }

// poll polls one feed once: lease, conditional GET, parse, compare with the
// seen items, dispatch the new ones, record them.
func (p *poller) poll(ctx context.Context, fd feed) outcome {
	token := p.token()
	ok, err := p.store.acquire(ctx, fd.Name, p.owner(), token, leaseTTL(fd))
	if err != nil {
		return outcome{result: resultRedisError, err: fmt.Errorf("take the lease: %w", err)}
	}
	if !ok {
		p.log.Debug("feed leased by another poller", "feed", fd.Name)
		return outcome{result: resultLeased}
	}
	out := p.pollLeased(ctx, fd)
	out.token = token
	return out
}

// pollLeased polls a feed whose lease this poller holds: load its state,
// fetch it and, when it changed, handle its items.
func (p *poller) pollLeased(ctx context.Context, fd feed) outcome {
	log := p.log.With("feed", fd.Name)
	st, err := p.store.load(ctx, fd.Name)
	if err != nil {
		return outcome{result: resultRedisError, err: fmt.Errorf("load state: %w", err)}
	}
	resp, err := fetch(ctx, p.client, fd, p.cfg.File.Defaults.UserAgent, st.validators, p.cfg.MaxBodyBytes, p.cfg.clock.Now())
	if err != nil {
		return fetchFailed(err)
	}
	if resp.notModified {
		if err := p.store.touch(ctx, fd.Name); err != nil {
			return outcome{result: resultRedisError, err: fmt.Errorf("renew state: %w", err)}
		}
		log.Debug("feed not modified")
		return outcome{result: resultNotModified}
	}
	parsed, err := gofeed.NewParser().Parse(bytes.NewReader(resp.body))
	if err != nil {
		return outcome{result: resultParseError, err: fmt.Errorf("not a readable RSS, Atom or JSON feed: %w", err)}
	}
	return p.pollItems(ctx, fd, log, st.primed, parsed, &resp.next)
}

// fetchFailed is the outcome of a failed fetch: an HTTP error status keeps
// the server's Retry-After, which the schedule honours.
func fetchFailed(err error) outcome {
	var se *statusError
	if errors.As(err, &se) {
		return outcome{result: resultHTTPError, err: err, retryAfter: se.retryAfter}
	}
	return outcome{result: resultFetchError, err: err}
}

// pollItems compares the items of a fetched feed with the seen ones,
// dispatches the new ones and records the poll. next are the validators of
// the fetch, stored once every new item is dispatched.
func (p *poller) pollItems(ctx context.Context, fd feed, log *slog.Logger, primed bool, parsed *gofeed.Feed, next *validators) outcome {
	es := entries(parsed.Items)
	members := make([]string, len(es))
	for i, e := range es {
		members[i] = e.member
	}
	seen, err := p.store.seen(ctx, fd.Name, members)
	if err != nil {
		return outcome{result: resultRedisError, err: fmt.Errorf("read seen items: %w", err)}
	}
	now := p.cfg.clock.Now()
	if !primed {
		return p.prime(ctx, fd, log, now, members, next)
	}

	fresh, present := splitSeen(es, seen)
	oldestFirst(fresh)
	out := outcome{skipped: map[string]int{}}
	fresh, old, err := p.dropOverflow(ctx, fd, log, now, fresh, &out)
	if err != nil {
		return outcome{result: resultRedisError, err: err}
	}
	present = append(present, old...)
	sent, dispatchErr := p.dispatchNew(ctx, fd, parsed, now, fresh, &out)
	present = append(present, sent...)
	dispatchErr = p.recordPoll(ctx, fd.Name, now, commit{refresh: present, listed: len(es)}, next, dispatchErr)
	return concludePoll(fd, log, out, dispatchErr)
}

// prime records every item of a feed's first successful poll as seen and
// sends none.
func (p *poller) prime(ctx context.Context, fd feed, log *slog.Logger, now time.Time, members []string, next *validators) outcome {
	// First successful poll: what the feed lists now is history.
	c := commit{add: members, listed: len(members), validators: next, prime: true}
	if err := p.store.save(ctx, fd.Name, now, c); err != nil {
		return outcome{result: resultRedisError, err: fmt.Errorf("record items: %w", err)}
	}
	log.Info("first poll of the feed: its current items are recorded as seen and not sent", "skipped", len(members))
	return outcome{result: resultFirst, skipped: map[string]int{skipFirstPoll: len(members)}}
}

// splitSeen separates the new entries from the members of the seen ones
// (seen[i] tells whether es[i] was).
func splitSeen(es []entry, seen []bool) (fresh []entry, present []string) {
	for i, e := range es {
		if seen[i] {
			present = append(present, e.member)
		} else {
			fresh = append(fresh, e)
		}
	}
	return fresh, present
}

// dropOverflow bounds what one poll sends: beyond MaxNewPerPoll, the oldest
// of fresh (sorted oldest first) are recorded as seen and not sent. It
// returns the entries left to send and the members it recorded.
func (p *poller) dropOverflow(ctx context.Context, fd feed, log *slog.Logger, now time.Time, fresh []entry, out *outcome) ([]entry, []string, error) {
	over := len(fresh) - p.cfg.MaxNewPerPoll
	if over <= 0 {
		return fresh, nil, nil
	}
	old := make([]string, over)
	for i, e := range fresh[:over] {
		old[i] = e.member
	}
	if err := p.store.markSeen(ctx, fd.Name, now, old...); err != nil {
		return nil, nil, fmt.Errorf("record skipped items: %w", err)
	}
	out.skipped[skipOverflow] = over
	log.Warn("more new items than one poll may send: the oldest are recorded as seen and not sent",
		"new", len(fresh), "skipped", over, "max_new_per_poll", p.cfg.MaxNewPerPoll)
	return fresh[over:], old, nil
}

// dispatchNew dispatches the new items in order, each recorded as seen once
// dispatched, and returns the members of those it sent. It stops at the
// first error, leaving the rest unseen for the next poll.
func (p *poller) dispatchNew(ctx context.Context, fd feed, parsed *gofeed.Feed, now time.Time, fresh []entry, out *outcome) ([]string, error) {
	fetched, _ := url.Parse(fd.URL)
	base := feedBase(fetched, parsed)
	var sent []string
	for _, e := range fresh {
		ok, err := p.dispatchItem(ctx, fd, toAlert(fd, parsed.Title, base, e), e, now, out)
		if err != nil {
			return sent, err
		}
		if ok {
			sent = append(sent, e.member)
			out.sent++
		}
	}
	return sent, nil
}

// dispatchItem dispatches the alert a of item e and records e as seen. An
// item that cannot become a valid alert is recorded as seen without being
// sent (sent is false): retrying cannot help it.
func (p *poller) dispatchItem(ctx context.Context, fd feed, a alerts.Alert, e entry, now time.Time, out *outcome) (sent bool, err error) {
	check := a
	if err := check.Normalize(now); err != nil {
		return false, p.skipInvalid(ctx, fd, e, err, out)
	}
	if _, err := p.cfg.Dispatcher.Dispatch(ctx, []alerts.Alert{a}); err != nil {
		var verr *jobs.ValidationError
		if errors.As(err, &verr) {
			return false, p.skipInvalid(ctx, fd, e, err, out)
		}
		// Redis down, no route, shutdown: leave the item unseen (and
		// the validators unchanged) so the next poll sends it.
		return false, err
	}
	if err := p.store.markSeen(ctx, fd.Name, now, e.member); err != nil {
		// Dispatched but not recorded: the next poll dispatches it
		// again, and its fingerprint makes that a duplicate.
		return false, fmt.Errorf("record a sent item: %w", err)
	}
	return true, nil
}

// recordPoll saves c, the feed's items after a poll. The validators move to
// next only when dispatching succeeded, so that after a failure the next
// poll fetches the same items again. It returns dispatchErr, or else the
// failure to save.
func (p *poller) recordPoll(ctx context.Context, feed string, now time.Time, c commit, next *validators, dispatchErr error) error {
	if dispatchErr == nil {
		c.validators = next
	}
	if err := p.store.save(ctx, feed, now, c); err != nil && dispatchErr == nil {
		return fmt.Errorf("record items: %w", err)
	}
	return dispatchErr
}

// concludePoll sets the result of a poll that got past the fetch, from the
// error that ended its dispatching (nil when none did) and what it sent.
func concludePoll(fd feed, log *slog.Logger, out outcome, dispatchErr error) outcome {
	switch {
	case dispatchErr != nil:
		out.result = resultDispatchError
		out.err = dispatchErr
		if errors.Is(dispatchErr, alerts.ErrNoRoute) {
			out.err = fmt.Errorf("%w: add a route for source %q or label feed=%s, or a default route", dispatchErr, fd.Source, fd.Name)
		}
	case out.sent > 0:
		out.result = resultNew
		log.Info("new feed items dispatched", "sent", out.sent)
	default:
		out.result = resultUnchanged
	}
	return out
}

// skipInvalid records an item whose alert cannot be valid (retrying cannot
// help) and logs why.
func (p *poller) skipInvalid(ctx context.Context, fd feed, e entry, why error, out *outcome) error {
	p.log.Error("feed item cannot become a valid alert; recorded as seen and not sent",
		"feed", fd.Name, "item", hashHex(e.key), "error", why)
	if err := p.store.markSeen(ctx, fd.Name, p.cfg.clock.Now(), e.member); err != nil {
		return fmt.Errorf("record an invalid item: %w", err)
	}
	out.skipped[skipInvalid]++
	return nil
}
