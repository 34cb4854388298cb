package worker

import "github.com/prometheus/client_golang/prometheus"

// Metrics are the worker's own Prometheus series. No label carries a chat id:
// chats are unbounded.
type Metrics struct {
	Sent               *prometheus.CounterVec
	TooMany            prometheus.Counter
	Retries            *prometheus.CounterVec
	Archived           *prometheus.CounterVec
	Deferrals          *prometheus.CounterVec
	RateWait           prometheus.Histogram
	Latency            prometheus.Histogram
	PossibleDuplicates prometheus.Counter
	SkippedAlreadySent prometheus.Counter
}

// NewMetrics registers the worker's metrics on reg (nil: not registered).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		Sent: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "herald_messages_sent_total",
			Help: "Messages Telegram accepted, by queue and outcome (sent, or downgraded to plain text after a parse error).",
		}, []string{"queue", "outcome"}),
		TooMany: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "herald_telegram_429_total",
			Help: "Answers 429 Too Many Requests from Telegram.",
		}),
		Retries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "herald_retries_total",
			Help: "Attempts put back for a later retry, by reason.",
		}, []string{"reason"}),
		Archived: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "herald_archived_total",
			Help: "Tasks archived (dead-lettered) with a permanent error, by reason.",
		}, []string{"reason"}),
		Deferrals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "herald_ratelimit_deferrals_total",
			Help: "Tasks put back until their rate-limit slot, by queue.",
		}, []string{"queue"}),
		RateWait: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "herald_ratelimit_wait_seconds",
			Help:    "Waits the limiter imposed per decision.",
			Buckets: prometheus.ExponentialBuckets(0.001, 4, 10),
		}),
		Latency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "herald_delivery_latency_seconds",
			Help:    "Time from enqueue to Telegram's acceptance of the (first) message.",
			Buckets: prometheus.ExponentialBuckets(0.001, 3, 14),
		}),
		PossibleDuplicates: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "herald_possible_duplicates_total",
			Help: "Sends whose outcome was unknown (timeout after the request was written) and that were retried.",
		}),
		SkippedAlreadySent: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "herald_redelivered_already_sent_total",
			Help: "Redelivered tasks that were not sent again because their send was already recorded.",
		}),
	}
	if reg != nil {
		reg.MustRegister(m.Sent, m.TooMany, m.Retries, m.Archived, m.Deferrals, m.RateWait, m.Latency, m.PossibleDuplicates, m.SkippedAlreadySent)
	}
	return m
}
