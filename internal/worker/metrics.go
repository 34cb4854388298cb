package worker

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/herald-dev/herald/internal/telegram"
)

// Label values the handler uses besides telegram.Reason strings. They are
// listed here so that their series can be created at zero up front.
var (
	// sendOutcomes are the values of herald_messages_sent_total's outcome.
	sendOutcomes = []string{"sent", "downgraded"}
	// ownRetryReasons are retry reasons that are not Telegram answers.
	ownRetryReasons = []string{"redis", "unknown", "unknown_bot"}
	// ownArchiveReasons are archive reasons that are not Telegram answers.
	ownArchiveReasons = []string{"invalid_payload"}
)

// metrics are the worker's own Prometheus series. No label carries a chat id
// or anything else that grows with traffic: the labels are bot and queue
// names (from configuration, never a token), outcomes and reasons (fixed
// sets). A failure met before the task's bot is known (an unreadable
// payload) has an empty bot label.
type metrics struct {
	// Sent counts Telegram messages accepted, by bot, queue and outcome. A
	// text split into several parts counts once per part.
	Sent *prometheus.CounterVec
	// TooMany counts 429 answers from Telegram, by bot.
	TooMany *prometheus.CounterVec
	// Pauses counts the pauses that 429 answers caused, by bot and scope
	// ("bot": the whole bot and the chat; "chat": the chat alone).
	Pauses *prometheus.CounterVec
	// PauseSeconds observes how long each such pause lasts, by bot and
	// scope.
	PauseSeconds *prometheus.HistogramVec
	// Retries counts attempts handed back for a retry with backoff, by bot
	// and reason.
	Retries *prometheus.CounterVec
	// Archived counts tasks the handler archived as permanent failures, by
	// bot and reason.
	Archived *prometheus.CounterVec
	// Deferrals counts tasks put back until their rate-limit slot, by
	// queue.
	Deferrals *prometheus.CounterVec
	// RateWait observes the wait of every limiter decision, zero included.
	RateWait prometheus.Histogram
	// LateSlots counts send slots left unused because the handler would
	// have sent later than half the guard after them.
	LateSlots prometheus.Counter
	// Latency observes enqueue-to-acceptance time of each task's first part.
	Latency prometheus.Histogram
	// PossibleDuplicates counts sends retried although Telegram may have
	// delivered them, and accepted sends whose record Redis could not take.
	PossibleDuplicates prometheus.Counter
	// SkippedAlreadySent counts redelivered tasks found already sent.
	SkippedAlreadySent prometheus.Counter
	// Cancelled counts messages settled as cancelled (through the API)
	// while a worker held them, by bot.
	Cancelled *prometheus.CounterVec
	// LeaseRecovered counts tasks requeued because the worker holding them
	// stopped extending their lease, by queue.
	LeaseRecovered *prometheus.CounterVec
	// DigestItems counts the items of digest tasks by outcome: delivered (in
	// a digest message, or alone), carried to the next digest, skipped (an
	// other digest had claimed them) or invalid (unreadable, archived).
	DigestItems *prometheus.CounterVec
	// DigestMessages counts messages digests handed to the send path.
	DigestMessages prometheus.Counter
	// DigestReclaimed counts items put back into their group from an
	// aggregation set a dead aggregator left behind.
	DigestReclaimed prometheus.Counter

	// PaidSends counts parts Telegram accepted as paid broadcasts, by bot;
	// PaidCharged those of them beyond the free 30 a second, which
	// Telegram bills, and PaidStars what they cost (0.1 Stars each).
	PaidSends, PaidCharged, PaidStars *prometheus.CounterVec
	// TokenStars is PaidStars by the token that sent the messages (its
	// name from the tokens file, jobs.SendMessage.From; "" for Herald's
	// own messages).
	TokenStars *prometheus.CounterVec
	// PaidFallbacks counts the times a bot's paid broadcasts went off, by
	// bot and reason: Telegram refused one ("balance", "not_enabled",
	// "refused"; counted by the process that met it) or the day's budget
	// was spent ("budget"; counted by every process that saw it).
	PaidFallbacks *prometheus.CounterVec
	// PaidOn is 1 while a bot's paid broadcasts are on, 0 while it sends at
	// its free limit, as this process's last decision for it said.
	PaidOn *prometheus.GaugeVec

	bots []string // the worker's bots, for InitQueues
}

// digestOutcomes are the values of herald_digest_items_total's outcome.
var digestOutcomes = []string{"delivered", "carried", "skipped", "invalid"}

// newMetrics creates the worker's metrics and registers them on reg (nil:
// not registered). Series whose label values are known in advance (every
// outcome, every reason) start at zero, so that rate() and absent() work
// before the first event.
func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{}
	m.createDeliveryMetrics()
	m.createRateLimitMetrics()
	m.createFailureMetrics()
	m.createDigestMetrics()
	m.createPaidMetrics()
	if reg != nil {
		reg.MustRegister(m.collectors()...)
	}
	return m
}

// createDeliveryMetrics creates the series about messages reaching
// Telegram: acceptances, latency, possible duplicates and recovered leases.
func (m *metrics) createDeliveryMetrics() {
	m.Sent = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "herald_messages_sent_total",
		Help: "Telegram messages accepted (one per part of a split text), by bot, queue and outcome: sent as requested, or downgraded to plain text after a markup error.",
	}, []string{"bot", "queue", "outcome"})
	m.Latency = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "herald_delivery_latency_seconds",
		Help:    "Time from the producer accepting a message to Telegram accepting its first part.",
		Buckets: prometheus.ExponentialBuckets(0.001, 3, 14),
	})
	m.PossibleDuplicates = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "herald_possible_duplicates_total",
		Help: "Sends retried after Telegram gave no answer to a request it had received, and sends Telegram accepted whose record Redis could not take within the lease-recovery window; the message may arrive twice.",
	})
	m.SkippedAlreadySent = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "herald_redelivered_already_sent_total",
		Help: "Redelivered tasks not sent again because their send was already recorded.",
	})
	m.Cancelled = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "herald_messages_cancelled_total",
		Help: "Messages a worker held (waiting for their slot) and settled as cancelled because the API cancelled them, by bot.",
	}, []string{"bot"})
	m.LeaseRecovered = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "herald_lease_recovered_total",
		Help: "Tasks handed to another worker because the worker holding them stopped extending their lease (crashed, frozen or cut off), by queue.",
	}, []string{"queue"})
}

// createRateLimitMetrics creates the series about Telegram's limits: 429
// answers, the pauses they cause, and the waits the fleet-wide limiter
// imposes.
func (m *metrics) createRateLimitMetrics() {
	m.TooMany = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "herald_telegram_429_total",
		Help: "Answers 429 Too Many Requests received from Telegram, by bot.",
	}, []string{"bot"})
	m.Pauses = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "herald_ratelimit_pauses_total",
		Help: "Pauses caused by 429 answers, by bot and scope (bot: the whole bot; chat: one chat).",
	}, []string{"bot", "scope"})
	m.PauseSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "herald_ratelimit_pause_seconds",
		Help:    "Length of each pause caused by a 429 answer, by bot and scope.",
		Buckets: []float64{0.5, 1, 2, 5, 10, 20, 40, 60, 120, 300},
	}, []string{"bot", "scope"})
	m.Deferrals = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "herald_ratelimit_deferrals_total",
		Help: "Tasks handed back to Redis until their rate-limit slot (not failures), by queue.",
	}, []string{"queue"})
	m.RateWait = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "herald_ratelimit_wait_seconds",
		Help:    "Wait imposed by the fleet-wide rate limiter on each decision (0 when a slot was free).",
		Buckets: prometheus.ExponentialBuckets(0.001, 4, 10),
	})
	m.LateSlots = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "herald_ratelimit_late_slots_total",
		Help: "Send slots given up because the send would have left later than half the guard after them; the message took a new slot.",
	})
}

// createFailureMetrics creates the series about failed attempts: those
// retried with backoff and those archived.
func (m *metrics) createFailureMetrics() {
	m.Retries = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "herald_retries_total",
		Help: "Attempts that failed temporarily and were scheduled for a retry with backoff, by bot and reason.",
	}, []string{"bot", "reason"})
	m.Archived = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "herald_archived_total",
		Help: "Tasks archived (dead-lettered) by Herald because of a permanent error, by bot and reason (no bot: the payload was unreadable).",
	}, []string{"bot", "reason"})
}

// createDigestMetrics creates the series about digest tasks.
func (m *metrics) createDigestMetrics() {
	m.DigestItems = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "herald_digest_items_total",
		Help: "Items of digest tasks by outcome: delivered (in a digest message or alone), carried to the next digest, skipped (claimed by another digest) or invalid (unreadable, archived).",
	}, []string{"outcome"})
	m.DigestMessages = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "herald_digest_messages_total",
		Help: "Messages digests handed to the send path (a digest message, or an item sent alone).",
	})
	m.DigestReclaimed = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "herald_digest_reclaimed_items_total",
		Help: "Coalesced items put back into their group after the worker aggregating them died.",
	})
}

// createPaidMetrics creates the series about paid broadcasts.
func (m *metrics) createPaidMetrics() {
	m.PaidSends = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "herald_paid_sends_total",
		Help: "Messages (parts) Telegram accepted as paid broadcasts (allow_paid_broadcast), by bot.",
	}, []string{"bot"})
	m.PaidCharged = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "herald_paid_charged_sends_total",
		Help: "Paid broadcasts beyond the free 30 a second, which Telegram bills at 0.1 Stars each, by bot.",
	}, []string{"bot"})
	m.PaidStars = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "herald_paid_stars_spent_total",
		Help: "Telegram Stars the charged paid broadcasts cost (0.1 each), by bot.",
	}, []string{"bot"})
	m.TokenStars = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "herald_token_stars_spent_total",
		Help: "Telegram Stars the charged paid broadcasts cost (0.1 each), by the name of the token that sent them (empty for Herald's own alerts, heartbeats and feeds).",
	}, []string{"token"})
	m.PaidFallbacks = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "herald_paid_fallbacks_total",
		Help: "Times a bot's paid broadcasts went off and it fell back to its free limit, by bot and reason: Telegram refused a paid send (balance, not_enabled, refused) or the day's Stars budget was spent (budget).",
	}, []string{"bot", "reason"})
	m.PaidOn = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "herald_paid_on",
		Help: "1 while a bot's paid broadcasts are on, 0 while it sends at its free limit, as this worker's last send decision for it said.",
	}, []string{"bot"})
}

// initPaid creates the paid-broadcast series of the bots whose paid
// broadcasts are configured, herald_paid_on at 1 until a decision says
// otherwise.
func (m *metrics) initPaid(bots []string) {
	for _, b := range bots {
		m.PaidSends.WithLabelValues(b)
		m.PaidCharged.WithLabelValues(b)
		m.PaidStars.WithLabelValues(b)
		for _, r := range paidReasons {
			m.PaidFallbacks.WithLabelValues(b, r)
		}
		m.PaidOn.WithLabelValues(b).Set(1)
	}
}

// initBots creates the series whose label values are known once the bots
// are: every digest outcome, and every retry and archive reason of each bot.
func (m *metrics) initBots(bots []string) {
	for _, o := range digestOutcomes {
		m.DigestItems.WithLabelValues(o)
	}
	for _, b := range bots {
		for _, r := range telegram.Reasons() {
			m.Retries.WithLabelValues(b, string(r))
			m.Archived.WithLabelValues(b, string(r))
		}
		for _, r := range ownRetryReasons {
			m.Retries.WithLabelValues(b, r)
		}
		m.TooMany.WithLabelValues(b)
	}
	for _, r := range ownArchiveReasons {
		m.Archived.WithLabelValues("", r)
	}
	m.bots = bots
}

// collectors lists every metric, in the order they are registered.
func (m *metrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{m.Sent, m.TooMany, m.Pauses, m.PauseSeconds, m.Retries, m.Archived, m.Deferrals, m.RateWait, m.LateSlots, m.Latency, m.PossibleDuplicates, m.SkippedAlreadySent, m.Cancelled, m.LeaseRecovered,
		m.DigestItems, m.DigestMessages, m.DigestReclaimed, m.PaidSends, m.PaidCharged, m.PaidStars, m.TokenStars, m.PaidFallbacks, m.PaidOn}
}

// InitQueues creates the per-queue series at zero for every queue the worker
// serves: each outcome of herald_messages_sent_total and
// herald_ratelimit_deferrals_total.
func (m *metrics) InitQueues(queues []string) {
	for _, q := range queues {
		for _, b := range m.bots {
			for _, o := range sendOutcomes {
				m.Sent.WithLabelValues(b, q, o)
			}
		}
		m.Deferrals.WithLabelValues(q)
		m.LeaseRecovered.WithLabelValues(q)
	}
}

func (m *metrics) leaseRecovered(queue string, n int) {
	m.LeaseRecovered.WithLabelValues(queue).Add(float64(n))
}
