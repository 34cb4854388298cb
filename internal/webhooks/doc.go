// Package webhooks receives the notifications of other tools and turns them
// into Herald alerts: Prometheus Alertmanager, Grafana alerting contact
// points, GitHub, Sentry integrations, and generic JSON webhooks mapped by
// the routing file.
//
// Every receiver follows the same path: authenticate (token, or an HMAC
// signature checked in constant time over the raw body), decode the payload
// into []alerts.Alert, hand them to an alerts.Dispatcher, and answer 2xx only
// once the dispatcher has stored them. Rejections are JSON errors with the
// stable codes of package httpapi and leave nothing enqueued; a dispatcher
// that cannot reach Redis gives 503 so the sender retries. docs/WEBHOOKS.md
// describes each sender's setup.
package webhooks
