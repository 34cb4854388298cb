// Package alerts is Herald's alert model and routing: an Alert from any
// producer (the alerts API, webhooks, heartbeats, feeds) is matched against
// the routes of a YAML routing file and rendered into one SendMessage per
// matching destination.
package alerts
