// Package alerts is Herald's alert model and routing: an Alert from any
// source (the alerts API, webhooks, heartbeats, feeds) is matched against
// the routes of a YAML routing file and rendered into one SendMessage per
// matching destination.
//
// The pieces, one file each:
//
//   - alert.go: Alert, its validation, and the Dispatcher contract;
//   - parse.go and parse_*.go (options, route, destination, template,
//     webhook): ParseRoutes and LoadRoutes read a routing file into a Table
//     through internal/yamlstrict, reporting every mistake as
//     file:line:column with its fix (errors.go);
//   - table.go, route.go: the Table and how routes match (fan-out, with a
//     default route for what nothing else took);
//   - template.go: message templates, whose data and helpers are escaped for
//     the route's parse mode, with a plain text fallback;
//   - router.go: Router, the Dispatcher that enqueues the messages and swaps
//     tables on reload;
//   - thread.go: threads and buttons. Each message of an alert that is not
//     coalesced carries a jobs.Thread named after the alert's identity
//     (Alert.Identity), the route and the forum topic: a firing alert
//     opens it or, when its record in Redis says it is open, replies to
//     it; a resolution replies, edits or comes on its own (on_resolve) and
//     closes it. A route's buttons become a keyboard whose subject
//     (package callbacks) holds the alert's silence matchers;
//     parse_interact.go reads on_resolve, buttons and allowed_users;
//   - silence.go: the hooks the Router calls before enqueueing, Silencer
//     (silenced alerts are recorded, not sent) and Holder (messages of a
//     route in its quiet hours wait for the window's end), both
//     implemented by package silences;
//   - quiet.go: a route's quiet_hours, read from the file, and the window
//     math across midnight and daylight saving changes;
//   - webhook.go: GenericWebhook, JSON bodies mapped to alerts by templates;
//   - api.go: the POST /v1/alerts handler.
//
// docs/ROUTING.md describes the routing file for its users.
package alerts
