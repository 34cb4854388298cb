// Package httpapi holds what every Herald HTTP endpoint shares: the JSON
// error body with its stable codes, strict JSON decoding that names the bad
// field, size-limited raw bodies for signed webhooks, and token
// authentication compared in constant time.
package httpapi
