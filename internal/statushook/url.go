package statushook

import (
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// CallbackURLField is the request field a URLError names.
const CallbackURLField = "callback_url"

// maxURLLength bounds a callback URL.
const maxURLLength = 2048

// URLError says why a callback URL is refused, naming the field it came
// from, for a 400 answer.
type URLError struct {
	// Field is the request field, CallbackURLField.
	Field string
	// Reason says what is wrong, for the sender.
	Reason string
	// Err is the underlying error, if any (such as an *AddressError).
	Err error
}

// Error is "callback_url: <reason>".
func (e *URLError) Error() string { return e.Field + ": " + e.Reason }

// Unwrap returns the underlying error.
func (e *URLError) Unwrap() error { return e.Err }

// FieldReason is the reason alone, for an answer that names the field
// apart (httpapi.CheckCallbackURL).
func (e *URLError) FieldReason() string { return e.Reason }

// Policy is what callback URLs may point at.
type Policy struct {
	// AllowHTTP permits plain http:// URLs to any host; otherwise only
	// https:// is accepted, but for hosts the allow-list names (a receiver
	// inside the network, a test's): the signature authenticates a
	// callback but does not hide it.
	AllowHTTP bool
	// Allow permits loopback, link-local and private destinations.
	Allow AllowList
}

// ValidateURL checks a callback URL when a sender names it, before any
// request: https (or http when AllowHTTP or the host is on the
// allow-list), a host, no userinfo, a port
// from 1 to 65535 and, below 1024, only 80 or 443 (unless the host is on
// the allow-list), at most maxURLLength bytes, and no host that is a
// forbidden address literal or a localhost name. A host name is not
// resolved here; the client checks the addresses it resolves to when it
// dials. Every error is a *URLError.
func (p Policy) ValidateURL(raw string) (*url.URL, error) {
	bad := func(format string, args ...any) (*url.URL, error) {
		return nil, &URLError{Field: CallbackURLField, Reason: fmt.Sprintf(format, args...)}
	}
	if len(raw) > maxURLLength {
		return bad("is %d bytes long, at most %d are accepted", len(raw), maxURLLength)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return bad("is not a URL: %v", err)
	}
	switch {
	case u.Scheme == "http" && !p.AllowHTTP && !p.allowedHost(u):
		return bad("must use https (plain http is accepted only for hosts on the allow-list, %s)", EnvAllow)
	case u.Scheme != "https" && u.Scheme != "http":
		return bad("must be an https URL, not %q", u.Scheme)
	case u.User != nil:
		return bad("must not carry a user name or password")
	case u.Hostname() == "":
		return bad("has no host")
	case u.Opaque != "":
		return bad("must be an absolute https://host/path URL")
	}
	if err := p.checkPort(u); err != nil {
		return nil, err
	}
	if err := p.checkHost(u.Hostname(), urlPort(u), u.Scheme); err != nil {
		return nil, &URLError{Field: CallbackURLField, Reason: err.Error(), Err: err}
	}
	return u, nil
}

// checkPort applies the port rules to an https or http URL.
func (p Policy) checkPort(u *url.URL) error {
	ps := u.Port()
	if ps == "" {
		if strings.HasSuffix(u.Host, ":") {
			return &URLError{Field: CallbackURLField, Reason: "has an empty port"}
		}
		return nil
	}
	port, err := strconv.Atoi(ps)
	if err != nil || port < 1 || port > 65535 {
		return &URLError{Field: CallbackURLField, Reason: fmt.Sprintf("port %q is not from 1 to 65535", ps)}
	}
	if port < 1024 && port != 80 && port != 443 && !p.allowedHost(u) {
		return &URLError{Field: CallbackURLField,
			Reason: fmt.Sprintf("port %d is refused: below 1024 only 80 and 443 are allowed", port)}
	}
	return nil
}

// checkHost refuses an address literal in a forbidden range and a
// localhost name, unless the allow-list permits it.
func (p Policy) checkHost(host string, port uint16, scheme string) error {
	if ip, err := netip.ParseAddr(host); err == nil {
		return p.Allow.checkIP(host, ip, port, scheme)
	}
	if isLocalName(host) && !p.Allow.allowsHost(host, port, scheme) {
		return &AddressError{Host: host, Reason: "loopback (localhost name)"}
	}
	return nil
}

// allowedHost reports whether u's host, a name or a literal, is on the
// allow-list for u's port.
func (p Policy) allowedHost(u *url.URL) bool {
	host, port := u.Hostname(), urlPort(u)
	if ip, err := netip.ParseAddr(host); err == nil {
		return p.Allow.allowsIP(ip, port, u.Scheme)
	}
	return p.Allow.allowsHost(host, port, u.Scheme)
}

// urlPort is u's port: the one it names, or its scheme's (443, 80); 0
// when it names none that is valid (checkPort reports it).
func urlPort(u *url.URL) uint16 {
	if ps := u.Port(); ps != "" {
		n, _ := strconv.ParseUint(ps, 10, 16)
		return uint16(n)
	}
	if u.Scheme == "http" {
		return 80
	}
	return 443
}
