package webhooks

import (
	"github.com/herald-dev/herald/internal/alerts"
	"github.com/herald-dev/herald/internal/httpapi"
)

// The receivers of package inbound (Slack, Discord, Teams, PagerDuty,
// Opsgenie, ntfy, Gotify formats) decode their payloads themselves and
// answer in each service's own shape, but fit, map and dispatch alerts
// exactly as the receivers here do: these are the same steps, exported.

// Fit makes every alert of batch fit Herald's limits and validates it, as
// every receiver here does before dispatching (finish).
func Fit(batch []alerts.Alert, fallbackTitle string) *httpapi.Error {
	return finish(batch, fallbackTitle)
}

// MapSeverity returns the Herald severity of a sender's word (critical,
// error, high, p1, warning, …), or def when the word is empty or unknown.
func MapSeverity(word string, def alerts.Severity) alerts.Severity { return mapSeverity(word, def) }

// DispatchError maps an alerts.Dispatcher error to the answer: 400 for
// invalid alerts, 422 when no route takes them, 503 otherwise.
func DispatchError(err error) *httpapi.Error { return dispatchError(err) }
