package app

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// cachedCollector replays the metrics of an expensive collector (asynq's
// queue statistics cost Redis about 40 commands per collection) for ttl
// after each collection, so that the Redis cost of /metrics is bounded
// whatever the scrape rate and however many scrapers there are. Concurrent
// scrapes during a refresh wait for it instead of querying Redis again.
type cachedCollector struct {
	inner prometheus.Collector
	ttl   time.Duration
	now   func() time.Time

	mu      sync.Mutex
	at      time.Time
	metrics []prometheus.Metric
}

func newCachedCollector(inner prometheus.Collector, ttl time.Duration) *cachedCollector {
	return &cachedCollector{inner: inner, ttl: ttl, now: time.Now}
}

// Describe implements prometheus.Collector, as the inner collector does.
func (c *cachedCollector) Describe(ch chan<- *prometheus.Desc) { c.inner.Describe(ch) }

// Collect implements prometheus.Collector.
func (c *cachedCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	if c.metrics == nil || c.now().Sub(c.at) >= c.ttl {
		c.metrics = collectAll(c.inner)
		c.at = c.now()
	}
	ms := c.metrics
	c.mu.Unlock()
	for _, m := range ms {
		ch <- m
	}
}

// collectAll runs one collection of col and returns its metrics.
func collectAll(col prometheus.Collector) []prometheus.Metric {
	ch := make(chan prometheus.Metric)
	done := make(chan []prometheus.Metric)
	go func() {
		out := []prometheus.Metric{}
		for m := range ch {
			out = append(out, m)
		}
		done <- out
	}()
	col.Collect(ch)
	close(ch)
	return <-done
}
