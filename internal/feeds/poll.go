package feeds

import (
	"bytes"
	"context"
	"errors"
	"fmt"
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
func leaseTTL(fd Feed) time.Duration { return 2*fd.Timeout + time.Minute }

// poll polls one feed once: lease, conditional GET, parse, compare with the
// seen items, dispatch the new ones, record them.
func (p *Poller) poll(ctx context.Context, fd Feed) outcome {
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

func (p *Poller) pollLeased(ctx context.Context, fd Feed) outcome {
	log := p.log.With("feed", fd.Name)
	st, err := p.store.load(ctx, fd.Name)
	if err != nil {
		return outcome{result: resultRedisError, err: fmt.Errorf("load state: %w", err)}
	}
	resp, err := fetch(ctx, p.client, fd, p.cfg.File.Defaults.UserAgent, st.validators, p.cfg.MaxBodyBytes, p.cfg.clock.Now())
	if err != nil {
		var se *statusError
		if errors.As(err, &se) {
			return outcome{result: resultHTTPError, err: err, retryAfter: se.retryAfter}
		}
		return outcome{result: resultFetchError, err: err}
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

	if !st.primed {
		// First successful poll: what the feed lists now is history.
		c := commit{add: members, listed: len(es), validators: &resp.next, prime: true}
		if err := p.store.save(ctx, fd.Name, now, c); err != nil {
			return outcome{result: resultRedisError, err: fmt.Errorf("record items: %w", err)}
		}
		log.Info("first poll of the feed: its current items are recorded as seen and not sent", "skipped", len(es))
		return outcome{result: resultFirst, skipped: map[string]int{skipFirstPoll: len(es)}}
	}

	var fresh []entry
	var present []string
	for i, e := range es {
		if seen[i] {
			present = append(present, e.member)
		} else {
			fresh = append(fresh, e)
		}
	}
	oldestFirst(fresh)
	out := outcome{skipped: map[string]int{}}
	if over := len(fresh) - p.cfg.MaxNewPerPoll; over > 0 {
		old := make([]string, over)
		for i, e := range fresh[:over] {
			old[i] = e.member
		}
		if err := p.store.markSeen(ctx, fd.Name, now, old...); err != nil {
			return outcome{result: resultRedisError, err: fmt.Errorf("record skipped items: %w", err)}
		}
		out.skipped[skipOverflow] = over
		log.Warn("more new items than one poll may send: the oldest are recorded as seen and not sent",
			"new", len(fresh), "skipped", over, "max_new_per_poll", p.cfg.MaxNewPerPoll)
		fresh = fresh[over:]
		present = append(present, old...)
	}

	fetched, _ := url.Parse(fd.URL)
	base := feedBase(fetched, parsed)
	var dispatchErr error
	for _, e := range fresh {
		a := toAlert(fd, parsed.Title, base, e)
		check := a
		if err := check.Normalize(now); err != nil {
			dispatchErr = p.skipInvalid(ctx, fd, e, err, &out)
			if dispatchErr != nil {
				break
			}
			continue
		}
		if _, err := p.cfg.Dispatcher.Dispatch(ctx, []alerts.Alert{a}); err != nil {
			var verr *jobs.ValidationError
			if errors.As(err, &verr) {
				if dispatchErr = p.skipInvalid(ctx, fd, e, err, &out); dispatchErr != nil {
					break
				}
				continue
			}
			// Redis down, no route, shutdown: leave the item unseen (and
			// the validators unchanged) so the next poll sends it.
			dispatchErr = err
			break
		}
		if err := p.store.markSeen(ctx, fd.Name, now, e.member); err != nil {
			// Dispatched but not recorded: the next poll dispatches it
			// again, and its fingerprint makes that a duplicate.
			dispatchErr = fmt.Errorf("record a sent item: %w", err)
			break
		}
		present = append(present, e.member)
		out.sent++
	}

	c := commit{refresh: present, listed: len(es)}
	if dispatchErr == nil {
		c.validators = &resp.next
	}
	if err := p.store.save(ctx, fd.Name, now, c); err != nil && dispatchErr == nil {
		dispatchErr = fmt.Errorf("record items: %w", err)
	}
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
func (p *Poller) skipInvalid(ctx context.Context, fd Feed, e entry, why error, out *outcome) error {
	p.log.Error("feed item cannot become a valid alert; recorded as seen and not sent",
		"feed", fd.Name, "item", hashHex(e.key), "error", why)
	if err := p.store.markSeen(ctx, fd.Name, p.cfg.clock.Now(), e.member); err != nil {
		return fmt.Errorf("record an invalid item: %w", err)
	}
	out.skipped[skipInvalid]++
	return nil
}
