package escalation

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the escalations' metrics. Producers count the steps taken
// and workers observe the acknowledgements; both register the same set.
type Metrics struct {
	// Steps is herald_escalations_total{policy,step}: the steps taken,
	// each once fleet-wide; step is its number from 1, or "repeat" for a
	// re-notification.
	Steps *prometheus.CounterVec
	// TimeToAck is herald_time_to_acknowledge_seconds{policy}: from an
	// escalated alert's firing to its first acknowledgement.
	TimeToAck *prometheus.HistogramVec
}

// NewMetrics builds the metrics and registers them on reg (nil: none).
// When reg holds them already (a producer and a worker in one process,
// local mode), the registered ones are used.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		Steps: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "herald_escalations_total",
			Help: "Escalation steps taken (each once fleet-wide), by policy and step number (repeat: a re-notification).",
		}, []string{"policy", "step"}),
		TimeToAck: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "herald_time_to_acknowledge_seconds",
			Help:    "Time from an escalated alert's firing to its first acknowledgement, by policy.",
			Buckets: []float64{15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 14400},
		}, []string{"policy"}),
	}
	if reg != nil {
		m.Steps = register(reg, m.Steps)
		m.TimeToAck = register(reg, m.TimeToAck)
	}
	return m
}

// register registers c on reg, or returns the collector of the same
// description registered before.
func register[C prometheus.Collector](reg prometheus.Registerer, c C) C {
	err := reg.Register(c)
	var are prometheus.AlreadyRegisteredError
	switch {
	case err == nil:
		return c
	case errors.As(err, &are):
		if prev, ok := are.ExistingCollector.(C); ok {
			return prev
		}
	}
	panic(err)
}

// orNew is m, or unregistered metrics when m is nil.
func (m *Metrics) orNew() *Metrics {
	if m == nil {
		return NewMetrics(nil)
	}
	return m
}
