// Package amsilence creates silences in a Prometheus Alertmanager through
// its API v2 (POST /api/v2/silences), and finds one again by its comment
// (GET /api/v2/silences), so that an acknowledgement pressed in Telegram on
// an alert that came from Alertmanager can mute it at its source too.
//
// Only loopback or operator-configured URLs reach it: the URL comes from
// the routing file (a route's alertmanager_url), never from an alert.
package amsilence
