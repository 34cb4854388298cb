package statushook

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
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
	{netip.MustParsePrefix("64:ff9b:1::/48"), "local-use NAT64 (64:ff9b:1::/48)"},
}

// forbiddenReason returns why ip may not be called, or "" when it may.
// An address with a zone id is refused (a zone names an interface of this
// machine, and no range matches a zoned address). An IPv6 address that
// carries an IPv4 address is judged by that address too: IPv4-mapped
// (::ffff:a.b.c.d, judged as IPv4), IPv4-compatible (::a.b.c.d), NAT64
// (64:ff9b::/96, refused whole, and the local-use 64:ff9b:1::/48), 6to4
// (2002::/16) and Teredo (2001::/32: its server and its client), so that
// a network that routes these forms cannot be made to reach what the
// IPv4 checks refuse.
func forbiddenReason(ip netip.Addr) string {
	if ip.Zone() != "" {
		return "scoped (an IPv6 zone id)"
	}
	ip = ip.Unmap()
	if r := plainReason(ip); r != "" {
		return r
	}
	for _, e := range embeddedIPv4(ip) {
		if r := plainReason(e.addr); r != "" {
			return r + " embedded in " + e.form
		}
	}
	return ""
}

// plainReason judges ip by the ranges it falls in itself.
func plainReason(ip netip.Addr) string {
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

// embedded is an IPv4 address an IPv6 address carries, and the form.
type embedded struct {
	addr netip.Addr
	form string
}

var (
	compatPrefix = netip.MustParsePrefix("::/96")
	sixToFour    = netip.MustParsePrefix("2002::/16")
	teredo       = netip.MustParsePrefix("2001::/32")
)

// embeddedIPv4 lists the IPv4 addresses that ip, an IPv6 address, carries
// in the forms that translate or tunnel to IPv4.
func embeddedIPv4(ip netip.Addr) []embedded {
	if !ip.Is6() {
		return nil
	}
	b := ip.As16()
	v4 := func(i int) netip.Addr { return netip.AddrFrom4([4]byte{b[i], b[i+1], b[i+2], b[i+3]}) }
	switch {
	case compatPrefix.Contains(ip):
		return []embedded{{v4(12), "an IPv4-compatible address (::a.b.c.d)"}}
	case sixToFour.Contains(ip):
		return []embedded{{v4(2), "a 6to4 address (2002::/16)"}}
	case teredo.Contains(ip):
		client := netip.AddrFrom4([4]byte{^b[12], ^b[13], ^b[14], ^b[15]})
		return []embedded{{v4(4), "a Teredo address's server (2001::/32)"}, {client, "a Teredo address's client (2001::/32)"}}
	}
	return nil
}

// isLocalName reports whether a host name always means this machine:
// "localhost" and the names under it (RFC 6761).
func isLocalName(host string) bool {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	return host == "localhost" || strings.HasSuffix(host, ".localhost")
}

// AllowList names the addresses and host names that callbacks may reach
// although they are loopback, link-local or private: a test receiver, a
// receiver inside the same network. An address or a host name permits the
// port it names, every port when it names "*", and the URL scheme's
// default port (443 for https, 80 for http) when it names none; a CIDR
// permits every port of its range. The zero value allows nothing.
type AllowList struct {
	prefixes []allowedPrefix
	hosts    map[string][]int // host name → its ports (anyPort, defaultPort or a port)
}

// allowedPrefix is a range of the list and its port (anyPort, defaultPort
// or a port).
type allowedPrefix struct {
	prefix netip.Prefix
	port   int
}

// The port of an entry that names "*" (or a CIDR), and of an address or
// host name that names none.
const (
	anyPort     = -1
	defaultPort = 0
)

// portAllowed reports whether an entry's port permits port for a URL of
// scheme; "" (a dial, which has no scheme) takes either default port.
func portAllowed(entry int, port uint16, scheme string) bool {
	switch {
	case entry == anyPort:
		return true
	case entry != defaultPort:
		return entry == int(port)
	case scheme == "https":
		return port == 443
	case scheme == "http":
		return port == 80
	}
	return port == 443 || port == 80
}

// ParseAllowList reads entries that are each a CIDR ("10.1.0.0/16"), an
// address ("127.0.0.1", "::1") or a host name ("receiver.internal"), with
// a port after an address or a name ("127.0.0.1:8080", "[::1]:8080",
// "receiver.internal:9000") to permit that port alone, "*" to permit every
// port ("127.0.0.1:*"); without one, the scheme's default port alone. A
// host name is matched exactly, case-insensitively, against the URL's
// host, and permits whatever it resolves to.
func ParseAllowList(entries []string) (AllowList, error) {
	var a AllowList
	for _, raw := range entries {
		e := strings.TrimSpace(raw)
		if e == "" {
			continue
		}
		if p, err := netip.ParsePrefix(e); err == nil {
			a.prefixes = append(a.prefixes, allowedPrefix{prefix: p.Masked(), port: anyPort})
			continue
		}
		port := defaultPort
		if ap, err := netip.ParseAddrPort(e); err == nil && ap.Port() != 0 {
			e, port = ap.Addr().String(), int(ap.Port())
		} else if h, ps, err := net.SplitHostPort(e); err == nil && ps == "*" {
			e, port = h, anyPort
		} else if err == nil {
			n, err := strconv.ParseUint(ps, 10, 16)
			if err != nil || n == 0 {
				return AllowList{}, fmt.Errorf("allow-list entry %q has a port that is neither from 1 to 65535 nor *", raw)
			}
			e, port = h, int(n)
		}
		if ip, err := netip.ParseAddr(e); err == nil && ip.Zone() == "" {
			a.prefixes = append(a.prefixes, allowedPrefix{prefix: netip.PrefixFrom(ip.Unmap(), ip.Unmap().BitLen()), port: port})
			continue
		}
		if e == "" || strings.ContainsAny(e, "/:[]% ") {
			return AllowList{}, fmt.Errorf("allow-list entry %q is neither a CIDR, an address nor a host name (with a port or not)", raw)
		}
		if a.hosts == nil {
			a.hosts = map[string][]int{}
		}
		name := strings.ToLower(strings.TrimSuffix(e, "."))
		a.hosts[name] = append(a.hosts[name], port)
	}
	return a, nil
}

// allowsHost reports whether the host name is on the list for port of a
// URL of scheme ("": a dial).
func (a AllowList) allowsHost(host string, port uint16, scheme string) bool {
	for _, p := range a.hosts[strings.ToLower(strings.TrimSuffix(host, "."))] {
		if portAllowed(p, port, scheme) {
			return true
		}
	}
	return false
}

// allowsIP reports whether ip, on port of a URL of scheme ("": a dial),
// falls in one of the listed ranges.
func (a AllowList) allowsIP(ip netip.Addr, port uint16, scheme string) bool {
	ip = ip.Unmap()
	for _, p := range a.prefixes {
		if p.prefix.Contains(ip) && portAllowed(p.port, port, scheme) {
			return true
		}
	}
	return false
}

// checkIP returns an *AddressError when host's address ip may not be
// called on port.
func (a AllowList) checkIP(host string, ip netip.Addr, port uint16, scheme string) error {
	if a.allowsIP(ip, port, scheme) {
		return nil
	}
	if reason := forbiddenReason(ip); reason != "" {
		return &AddressError{Host: host, IP: ip.Unmap(), Reason: reason}
	}
	return nil
}
