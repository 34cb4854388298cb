package botapi

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics counts the front's requests and how their message_id was
// filled.
type metrics struct {
	requests *prometheus.CounterVec
	answers  *prometheus.CounterVec
}

// Values of the answers' result label.
const (
	answerSent        = "sent"        // the real message_id
	answerFailed      = "failed"      // Telegram's refusal, within the wait
	answerPlaceholder = "placeholder" // message_id 0: not settled in time
)

// newMetrics registers the front's metrics on reg (nil: none). The method
// label is one of the methods served or "other"; token is the name of a
// Herald credential, or "none" when the path's was unknown: both are
// bounded by the configuration.
func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "herald_botapi_requests_total",
			Help: "Requests to the Telegram Bot API front by method, Herald token and HTTP status code.",
		}, []string{"method", "token", "code"}),
		answers: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "herald_botapi_answers_total",
			Help: "Stored sends of the Telegram Bot API front by how result.message_id was filled: sent, failed or placeholder.",
		}, []string{"result"}),
	}
	for _, r := range []string{answerSent, answerFailed, answerPlaceholder} {
		m.answers.WithLabelValues(r)
	}
	if reg != nil {
		reg.MustRegister(m.requests, m.answers)
	}
	return m
}

// methodLabel is the method label of a lower-cased method name.
func methodLabel(method string) string {
	switch method {
	case "getme":
		return "getMe"
	case "sendmessage":
		return "sendMessage"
	case "sendphoto":
		return "sendPhoto"
	}
	return "other"
}

// request counts one answered request.
func (m *metrics) request(method, token string, code int) {
	if token == "" {
		token = "none"
	}
	m.requests.WithLabelValues(methodLabel(method), token, strconv.Itoa(code)).Inc()
}
