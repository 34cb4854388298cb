package statushook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net"
	"net/url"
	"strings"
)

// endpointOf is the receiver a callback URL names, in the form Herald
// signs for, keeps health by and logs: scheme://host[:port]/path, with the
// scheme and host in lower case, the port only when it is not the
// scheme's default, and an empty path written "/". The query and the
// fragment are left out: a query string often holds a receiver's own
// token, which must not reach logs, metrics or stored errors, and the URLs
// of one receiver that differ only there share its secret and its health.
func endpointOf(u *url.URL) string {
	scheme := strings.ToLower(u.Scheme)
	host := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	port := u.Port()
	if scheme == "https" && port == "443" || scheme == "http" && port == "80" {
		port = ""
	}
	hostport := host
	switch {
	case port != "":
		hostport = net.JoinHostPort(host, port)
	case strings.Contains(host, ":"):
		hostport = "[" + host + "]"
	}
	path := u.EscapedPath()
	if path == "" {
		path = "/"
	}
	return scheme + "://" + hostport + path
}

// secretLabel sets the derivation of endpoint secrets apart from any
// other use of the master key; "v1" leaves room for a new derivation
// (rotating every endpoint's secret) without a new master key.
const secretLabel = "herald status callback endpoint secret v1\x00"

// endpointSecret is the signing secret of one endpoint: "whsec_" and the
// base64 of HMAC-SHA256(master, secretLabel + endpoint).
//
// The secrets are derived rather than generated and stored so that any
// worker can sign for any endpoint, and any producer show its secret,
// with nothing to coordinate: no first-use race between two producers
// creating an endpoint's secret, no secret in Redis (a Redis dump or a
// replica reveals none), and nothing lost when Redis is. Changing the
// master key changes every endpoint's secret at once; the receivers then
// need theirs again (GET /v1/callbacks/endpoint).
func endpointSecret(master []byte, endpoint string) string {
	m := hmac.New(sha256.New, master)
	m.Write([]byte(secretLabel))
	m.Write([]byte(endpoint))
	return SecretPrefix + base64.StdEncoding.EncodeToString(m.Sum(nil))
}
