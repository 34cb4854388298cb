package redisconn

import (
	"net/url"
	"strings"
)

// redactedMark replaces secrets in rendered URLs.
const redactedMark = "xxxxx"

// Redacted returns the URL with the user part and any password query
// parameter masked, so it is safe to log. Malformed URLs are masked too.
func (c Config) Redacted() string { return redactURL(c.URL) }

// redactURL masks the user part (everything before the last '@' of the
// authority) and password-like query values of a URL-ish string. It works on
// the raw text so that malformed URLs are masked too; when in doubt it masks
// more than needed. It serves any URL a setting holds, such as
// TELEGRAM_API_URL.
func redactURL(raw string) string {
	prefix, rest := "", raw
	if scheme, r, ok := strings.Cut(raw, "://"); ok {
		prefix, rest = scheme+"://", r
	}
	// Everything up to the last '@' may be credentials. A stray '@' later in
	// the string only causes over-masking, which is harmless.
	if at := strings.LastIndex(rest, "@"); at >= 0 {
		userinfo := rest[:at]
		user, _, hasPass := strings.Cut(userinfo, ":")
		if hasPass && user != "" && !strings.ContainsAny(user, "/?#") {
			userinfo = user + ":" + redactedMark
		} else if hasPass {
			userinfo = ":" + redactedMark
		} else {
			userinfo = redactedMark
		}
		rest = userinfo + rest[at:]
	}
	base, query, hasQuery := strings.Cut(rest, "?")
	if !hasQuery {
		return prefix + rest
	}
	query, frag, hasFrag := strings.Cut(query, "#")
	parts := strings.Split(query, "&")
	for i, kv := range parts {
		k, _, hasV := strings.Cut(kv, "=")
		name, err := url.QueryUnescape(k)
		if err != nil {
			name = k
		}
		if hasV && strings.Contains(strings.ToLower(name), "pass") {
			parts[i] = k + "=" + redactedMark
		}
	}
	out := prefix + base + "?" + strings.Join(parts, "&")
	if hasFrag {
		out += "#" + frag
	}
	return out
}
