package statushook

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
)

// ErrForbiddenAddress is wrapped by every *AddressError.
var ErrForbiddenAddress = errors.New("forbidden address")

// AddressError says why a callback's host or address is refused.
type AddressError struct {
	// Host is the host name or literal the URL named.
	Host string
	// IP is the address refused; invalid when the name itself is refused.
	IP netip.Addr
	// Reason names the range, such as "loopback" or "private (RFC 1918)".
	Reason string
}

// Error says what was refused and why.
func (e *AddressError) Error() string {
	if !e.IP.IsValid() || e.Host == e.IP.String() {
		return fmt.Sprintf("%s is a %s address; callbacks may not reach it unless the allow-list permits it", e.Host, e.Reason)
	}
	return fmt.Sprintf("%s resolves to %s, a %s address; callbacks may not reach it unless the allow-list permits it",
		e.Host, e.IP, e.Reason)
}

// Unwrap makes errors.Is(err, ErrForbiddenAddress) hold.
func (e *AddressError) Unwrap() error { return ErrForbiddenAddress }

// forbiddenRanges are the ranges refused on top of those netip classifies.
var forbiddenRanges = []struct {
	prefix netip.Prefix
	reason string
}{
	{netip.MustParsePrefix("100.64.0.0/10"), "CGNAT (100.64.0.0/10)"},
	{netip.MustParsePrefix("0.0.0.0/8"), "\"this network\" (0.0.0.0/8)"},
	{netip.MustParsePrefix("192.0.0.0/24"), "IETF protocol assignment (192.0.0.0/24)"},
	{netip.MustParsePrefix("198.18.0.0/15"), "benchmarking (198.18.0.0/15)"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved (240.0.0.0/4)"},
	{netip.MustParsePrefix("64:ff9b::/96"), "NAT64 (64:ff9b::/96)"},
}

// forbiddenReason returns why ip may not be called, or "" when it may.
// IPv4-mapped IPv6 addresses (::ffff:a.b.c.d) are judged as IPv4.
func forbiddenReason(ip netip.Addr) string {
	ip = ip.Unmap()
	switch {
	case !ip.IsValid():
		return "invalid"
	case ip.IsUnspecified():
		return "unspecified"
	case ip.IsLoopback():
		return "loopback"
	case ip.IsLinkLocalUnicast():
		return "link-local"
	case ip.IsPrivate() && ip.Is4():
		return "private (RFC 1918)"
	case ip.IsPrivate():
		return "unique local (fc00::/7)"
	case ip.IsMulticast(), ip.IsLinkLocalMulticast(), ip.IsInterfaceLocalMulticast():
		return "multicast"
	}
	for _, r := range forbiddenRanges {
		if r.prefix.Contains(ip) {
			return r.reason
		}
	}
	return ""
}

// isLocalName reports whether a host name always means this machine:
// "localhost" and the names under it (RFC 6761).
func isLocalName(host string) bool {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	return host == "localhost" || strings.HasSuffix(host, ".localhost")
}

// AllowList names the addresses and host names that callbacks may reach
// although they are loopback, link-local or private: a test receiver, a
// receiver inside the same network. The zero value allows nothing.
type AllowList struct {
	prefixes []netip.Prefix
	hosts    map[string]bool
}

// ParseAllowList reads entries that are each a CIDR ("10.1.0.0/16"), an
// address ("127.0.0.1", "::1") or a host name ("receiver.internal"). A host
// name is matched exactly, case-insensitively, against the URL's host, and
// permits whatever it resolves to.
func ParseAllowList(entries []string) (AllowList, error) {
	var a AllowList
	for _, raw := range entries {
		e := strings.TrimSpace(raw)
		if e == "" {
			continue
		}
		if p, err := netip.ParsePrefix(e); err == nil {
			a.prefixes = append(a.prefixes, p.Masked())
			continue
		}
		if ip, err := netip.ParseAddr(e); err == nil {
			a.prefixes = append(a.prefixes, netip.PrefixFrom(ip.Unmap(), ip.Unmap().BitLen()))
			continue
		}
		if strings.ContainsAny(e, "/:[] ") {
			return AllowList{}, fmt.Errorf("allow-list entry %q is neither a CIDR, an address nor a host name", raw)
		}
		if a.hosts == nil {
			a.hosts = map[string]bool{}
		}
		a.hosts[strings.ToLower(strings.TrimSuffix(e, "."))] = true
	}
	return a, nil
}

// allowsHost reports whether the host name is on the list.
func (a AllowList) allowsHost(host string) bool {
	return a.hosts[strings.ToLower(strings.TrimSuffix(host, "."))]
}

// allowsIP reports whether ip falls in one of the listed ranges.
func (a AllowList) allowsIP(ip netip.Addr) bool {
	ip = ip.Unmap()
	for _, p := range a.prefixes {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// checkIP returns an *AddressError when host's address ip may not be
// called.
func (a AllowList) checkIP(host string, ip netip.Addr) error {
	if a.allowsIP(ip) {
		return nil
	}
	if reason := forbiddenReason(ip); reason != "" {
		return &AddressError{Host: host, IP: ip.Unmap(), Reason: reason}
	}
	return nil
}
