package escalation

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// A producer and a worker in one process (local mode) share the metrics.
func TestMetricsTwiceOnOneRegistry(t *testing.T) {
	reg := prometheus.NewRegistry()
	a, b := NewMetrics(reg), NewMetrics(reg)
	a.Steps.WithLabelValues("p", "1").Inc()
	if got := counter(t, b.Steps.WithLabelValues("p", "1")); got != 1 {
		t.Errorf("the second set counts %v, want the first's 1", got)
	}
}
