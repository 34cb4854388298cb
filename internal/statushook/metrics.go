package statushook

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// The outcomes of herald_callback_deliveries_total, one per attempt (or
// per event given up on without an attempt).
const (
	// outcomeDelivered: the receiver answered 2xx.
	outcomeDelivered = "delivered"
	// outcomeRetry: the attempt failed; the event waits for its next one.
	outcomeRetry = "retry"
	// outcomeExhausted: the last attempt of the schedule failed; the event
	// is archived.
	outcomeExhausted = "exhausted"
	// outcomeDisabled: the attempt disabled the endpoint (a 410, or the
	// run of failures passed the limit); the event is archived.
	outcomeDisabled = "disabled"
	// outcomeEndpointDisabled: the endpoint was disabled already; the
	// event is archived without an attempt.
	outcomeEndpointDisabled = "endpoint_disabled"
	// outcomeRefused: the URL no longer passes the policy (the allow-list
	// changed) or the payload is unreadable; archived without an attempt.
	outcomeRefused = "refused"
	// outcomeBusy: the endpoint's share of the posts was taken, or its
	// circuit open (share.go); handed back without an attempt.
	outcomeBusy = "endpoint_busy"
)

// deliveryOutcomes are every outcome, whose series start at zero.
var deliveryOutcomes = []string{outcomeDelivered, outcomeRetry, outcomeExhausted, outcomeDisabled, outcomeEndpointDisabled, outcomeRefused, outcomeBusy}

// metrics are the deliverer's series. No label carries an endpoint: their
// number grows with the senders'.
type metrics struct {
	deliveries *prometheus.CounterVec
	latency    prometheus.Histogram
	disabled   *prometheus.CounterVec
}

// newMetrics creates the series and registers them on reg (nil: not
// registered); series a registry holds already (a second deliverer in one
// process, as tests run) are shared.
func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "herald_callback_deliveries_total",
			Help: "Status callback attempts by outcome: delivered (2xx), retry, exhausted (the last attempt failed; archived), " +
				"disabled (the attempt disabled the endpoint), endpoint_disabled and refused (archived without an attempt).",
		}, []string{"outcome"}),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "herald_callback_delivery_latency_seconds",
			Help:    "Time from an event (a Telegram send, an archive) to its receiver's 2xx, retries included.",
			Buckets: []float64{0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300, 1800, 7200, 36000, 100000},
		}),
		disabled: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "herald_callback_endpoints_disabled_total",
			Help: "Callback endpoints disabled, by reason: gone (the receiver answered 410) or failing (it failed for longer than HERALD_CALLBACK_DISABLE_AFTER).",
		}, []string{"reason"}),
	}
	for _, o := range deliveryOutcomes {
		m.deliveries.WithLabelValues(o)
	}
	for _, r := range []string{disabledGone, disabledFailing} {
		m.disabled.WithLabelValues(r)
	}
	if reg != nil {
		m.deliveries = register(reg, m.deliveries)
		m.latency = register(reg, m.latency)
		m.disabled = register(reg, m.disabled)
	}
	return m
}

// register registers c on reg, or returns the collector reg holds already
// under its name.
func register[C prometheus.Collector](reg prometheus.Registerer, c C) C {
	err := reg.Register(c)
	var are prometheus.AlreadyRegisteredError
	if errors.As(err, &are) {
		if existing, ok := are.ExistingCollector.(C); ok {
			return existing
		}
	}
	return c
}
