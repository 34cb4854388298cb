package quota

import "github.com/prometheus/client_golang/prometheus"

// Metrics are the quotas' figures per token and quota. Token names come
// from the tokens file, never from a request, so the labels are bounded.
type Metrics struct {
	used     *prometheus.GaugeVec
	limit    *prometheus.GaugeVec
	taken    *prometheus.CounterVec
	refusals *prometheus.CounterVec
}

// NewMetrics registers the quotas' metrics on reg (nil: kept unregistered).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	labels := []string{"token", "quota"}
	m := &Metrics{
		used: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "herald_token_quota_used",
			Help: "What the token's quota counted at its last check (queued messages, broadcasts in the last hour, ...)."}, labels),
		limit: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "herald_token_quota_limit",
			Help: "The token's quota, as its last check applied it (-1: no limit)."}, labels),
		taken: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "herald_token_quota_taken_total",
			Help: "Counts the token's accepted requests took from its quota (messages, recipients, broadcasts, alerts, audiences)."}, labels),
		refusals: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "herald_token_quota_refusals_total",
			Help: "The token's requests refused with a 429 because they would exceed the quota."}, labels),
	}
	if reg != nil {
		reg.MustRegister(m.used, m.limit, m.taken, m.refusals)
	}
	return m
}

// observe records a check: its figures, and what it took (refused < 0) or
// the quota it refused.
func (m *Metrics) observe(token string, usage []Usage, refused int, wants []Want) {
	if m == nil {
		return
	}
	for i, u := range usage {
		m.used.WithLabelValues(token, u.Name).Set(float64(u.Used))
		m.limit.WithLabelValues(token, u.Name).Set(float64(u.Limit))
		if refused < 0 {
			m.taken.WithLabelValues(token, u.Name).Add(float64(wants[i].N))
		}
	}
	if refused >= 0 {
		m.refusals.WithLabelValues(token, usage[refused].Name).Inc()
	}
}
