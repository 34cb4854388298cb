package chats

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics count the chats that blocked a bot and that came back, by bot
// and source. The worker's send path (a 403), the updates handler and the
// API each count into the same two series; a nil *Metrics counts nothing.
type Metrics struct {
	blocks, unblocks *prometheus.CounterVec
}

// NewMetrics returns the metrics registered on reg (nil: unregistered). A
// second call on the same registry returns the counters the first one
// registered, so the parts of one process may each ask for them.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		blocks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "herald_chat_blocks_total",
			Help: "Chats marked blocked for a bot (the user blocked it, or it was removed from the group or channel), by bot and source (telegram_403, my_chat_member, api).",
		}, []string{"bot", "source"}),
		unblocks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "herald_chat_unblocks_total",
			Help: "Blocked chats that came back (a my_chat_member update, or the API), by bot and source.",
		}, []string{"bot", "source"}),
	}
	if reg != nil {
		m.blocks = registered(reg, m.blocks)
		m.unblocks = registered(reg, m.unblocks)
	}
	return m
}

// registered registers c on reg, or returns the counter registered there
// already under its name.
func registered(reg prometheus.Registerer, c *prometheus.CounterVec) *prometheus.CounterVec {
	err := reg.Register(c)
	var are prometheus.AlreadyRegisteredError
	if errors.As(err, &are) {
		if existing, ok := are.ExistingCollector.(*prometheus.CounterVec); ok {
			return existing
		}
	}
	if err != nil {
		panic(err)
	}
	return c
}

// Blocked counts a chat of bot marked blocked because source said so.
func (m *Metrics) Blocked(bot, source string) {
	if m != nil {
		m.blocks.WithLabelValues(bot, source).Inc()
	}
}

// Unblocked counts a blocked chat of bot that source cleared.
func (m *Metrics) Unblocked(bot, source string) {
	if m != nil {
		m.unblocks.WithLabelValues(bot, source).Inc()
	}
}
