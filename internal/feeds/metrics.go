package feeds

import "github.com/prometheus/client_golang/prometheus"

// result is how one poll of a feed ended; it is the "result" label of
// herald_feed_polls_total.
type result string

// The poll results.
const (
	// resultFirst: the feed's first successful poll recorded its items and
	// sent nothing.
	resultFirst result = "first"
	// resultNew: new items were dispatched.
	resultNew result = "new"
	// resultUnchanged: a 200 answer without new items.
	resultUnchanged result = "unchanged"
	// resultNotModified: a 304 answer to a conditional GET.
	resultNotModified result = "not_modified"
	// resultLeased: another poller process held the feed's lease.
	resultLeased result = "leased"
	// resultFetchError: no answer (connection, timeout, body too large).
	resultFetchError result = "fetch_error"
	// resultHTTPError: an answer other than 2xx or 304.
	resultHTTPError result = "http_error"
	// resultParseError: the body is not an RSS, Atom or JSON feed.
	resultParseError result = "parse_error"
	// resultRedisError: the poller's state could not be read or written.
	resultRedisError result = "redis_error"
	// resultDispatchError: an item could not be dispatched; it is retried
	// at the next poll.
	resultDispatchError result = "dispatch_error"
)

// results lists every result, to create the series at zero.
var results = []result{resultFirst, resultNew, resultUnchanged, resultNotModified, resultLeased,
	resultFetchError, resultHTTPError, resultParseError, resultRedisError, resultDispatchError}

// failed reports whether the result counts as a failure for backoff.
func (r result) failed() bool {
	switch r {
	case resultFetchError, resultHTTPError, resultParseError, resultRedisError, resultDispatchError:
		return true
	}
	return false
}

// Reasons items are recorded as seen without being sent (the "reason" label
// of herald_feed_items_skipped_total).
const (
	skipFirstPoll = "first_poll"
	skipOverflow  = "overflow"
	skipInvalid   = "invalid"
)

// metrics are the poller's Prometheus series. The feed label takes the
// names from feeds.yaml, a set fixed by configuration.
type metrics struct {
	polls       *prometheus.CounterVec
	itemsNew    *prometheus.CounterVec
	skipped     *prometheus.CounterVec
	failures    *prometheus.GaugeVec
	lastSuccess *prometheus.GaugeVec
}

// newMetrics creates the series of feeds and registers them on reg (nil:
// not registered).
func newMetrics(reg prometheus.Registerer, feeds []feed) (*metrics, error) {
	m := &metrics{
		polls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "herald_feed_polls_total",
			Help: "Feed polls by feed and result (first, new, unchanged, not_modified, leased, fetch_error, http_error, parse_error, redis_error, dispatch_error).",
		}, []string{"feed", "result"}),
		itemsNew: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "herald_feed_items_new_total",
			Help: "New feed items dispatched as alerts, by feed.",
		}, []string{"feed"}),
		skipped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "herald_feed_items_skipped_total",
			Help: "Feed items recorded as seen without an alert, by feed and reason (first_poll, overflow, invalid).",
		}, []string{"feed", "reason"}),
		failures: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "herald_feed_consecutive_failures",
			Help: "Failed polls in a row, by feed (0 after a success).",
		}, []string{"feed"}),
		lastSuccess: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "herald_feed_last_success_timestamp_seconds",
			Help: "Unix time of the last successful poll (200 or 304), by feed.",
		}, []string{"feed"}),
	}
	for _, fd := range feeds {
		for _, r := range results {
			m.polls.WithLabelValues(fd.Name, string(r))
		}
		m.itemsNew.WithLabelValues(fd.Name)
		for _, r := range []string{skipFirstPoll, skipOverflow, skipInvalid} {
			m.skipped.WithLabelValues(fd.Name, r)
		}
		m.failures.WithLabelValues(fd.Name)
	}
	if reg != nil {
		for _, c := range []prometheus.Collector{m.polls, m.itemsNew, m.skipped, m.failures, m.lastSuccess} {
			if err := reg.Register(c); err != nil {
				return nil, err
			}
		}
	}
	return m, nil
}
