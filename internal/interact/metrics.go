package interact

import (
	"github.com/prometheus/client_golang/prometheus"
)

// Outcomes of a press (the outcome label of herald_telegram_presses_total).
const (
	// outcomeAccepted: a permitted press, recorded and acted on.
	outcomeAccepted = "accepted"
	// outcomeDuplicate: the same press delivered again; nothing changed.
	outcomeDuplicate = "duplicate"
	// outcomeRefused: the user may not press this message's buttons, or
	// not where they pressed (or where cannot be told).
	outcomeRefused = "refused"
	// outcomeUnknown: a button of no alert Herald still tracks, or data
	// that is not Herald's.
	outcomeUnknown = "unknown"
	// outcomeFailed: a permitted press whose action could not be done for
	// good (a silence the store refused).
	outcomeFailed = "failed"
)

// metrics are the package's Prometheus metrics, all labelled by bot.
type metrics struct {
	// Presses counts presses by bot, action and outcome.
	Presses *prometheus.CounterVec
	// Updates counts updates handed to the queue, by bot and how they
	// came (poll or webhook); duplicates the queue refused included.
	Updates *prometheus.CounterVec
	// PollErrors counts failed getUpdates calls and enqueues of the
	// poller, by bot and reason (conflict, webhook_set, telegram, redis).
	PollErrors *prometheus.CounterVec
	// Polling is 1 for each bot this process long-polls (it holds the
	// bot's lease), 0 otherwise.
	Polling *prometheus.GaugeVec
}

// newMetrics builds the metrics and registers them on reg (nil: not
// registered). A process registers them once and hands them to each
// component's config.
func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		Presses: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "herald_telegram_presses_total",
			Help: "Button presses (callback queries) by bot, action and outcome (accepted, duplicate, refused, unknown, failed).",
		}, []string{"bot", "action", "outcome"}),
		Updates: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "herald_telegram_updates_total",
			Help: "Telegram updates handed to the queue, by bot and source (poll or webhook).",
		}, []string{"bot", "via"}),
		PollErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "herald_telegram_poll_errors_total",
			Help: "Failed rounds of the getUpdates poller by bot and reason (conflict, webhook_set, telegram, redis).",
		}, []string{"bot", "reason"}),
		Polling: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "herald_telegram_polling",
			Help: "1 for each bot whose updates this process long-polls (it holds the bot's lease).",
		}, []string{"bot"}),
	}
	if reg != nil {
		reg.MustRegister(m.Presses, m.Updates, m.PollErrors, m.Polling)
	}
	return m
}

// orNew returns m, or unregistered metrics when m is nil.
func (m *metrics) orNew() *metrics {
	if m == nil {
		return newMetrics(nil)
	}
	return m
}
