// Package feeds polls RSS and Atom feeds and turns each new item into an
// alerts.Alert handed to an alerts.Dispatcher, which routes it like any other
// alert.
//
// The poller remembers what it has seen in Redis: the HTTP validators of
// each feed's last answer (for conditional GET) and the hashed keys of the
// items already present. The first successful poll of a feed only records
// its items, so adding a feed never floods a chat with its history, and a
// restart never sends an item twice. A per-feed lease in Redis lets several
// poller replicas run side by side without polling one feed twice.
//
// Polls are spread over each feed's interval, bounded in number at any
// moment, and a failing feed is polled less and less often (exponential
// backoff, reset by a success; Retry-After is honoured on 429 and 503).
//
// The configuration file (feeds.yaml) is described in docs/FEEDS.md.
package feeds
