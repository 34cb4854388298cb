package statushook

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"syscall"
	"time"
)

// dialTimeout bounds one TCP connect.
const dialTimeout = 5 * time.Second

// guardedDialer connects only to addresses the allow-list permits or that
// are in no forbidden range. It resolves the host itself, checks every
// address it got and connects to a checked address by number, so a name
// that resolves to a public address when the URL is validated and to a
// private one when it is dialed (DNS rebinding) is still refused. The
// connect itself is checked once more in the socket's Control hook.
type guardedDialer struct {
	allow AllowList
	// lookup resolves a host name; net.DefaultResolver.LookupNetIP unless a
	// test replaces it.
	lookup func(ctx context.Context, network, host string) ([]netip.Addr, error)
	// dial connects to a numeric address; checked says whether the Control
	// hook re-checks it (not for allow-listed host names). Tests replace it
	// to count connection attempts.
	dial func(ctx context.Context, network, addr string, checked bool) (net.Conn, error)
}

// newGuardedDialer returns a dialer with the real resolver and connect.
func newGuardedDialer(allow AllowList) *guardedDialer {
	d := &guardedDialer{allow: allow, lookup: net.DefaultResolver.LookupNetIP}
	guarded := &net.Dialer{Timeout: dialTimeout, Control: d.control}
	plain := &net.Dialer{Timeout: dialTimeout}
	d.dial = func(ctx context.Context, network, addr string, checked bool) (net.Conn, error) {
		if checked {
			return guarded.DialContext(ctx, network, addr)
		}
		return plain.DialContext(ctx, network, addr)
	}
	return d
}

// DialContext is http.Transport's DialContext.
func (d *guardedDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("callback address %q: %w", addr, err)
	}
	pn, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		return nil, fmt.Errorf("callback address %q: the port is not a number", addr)
	}
	hostAllowed := d.allow.allowsHost(host, uint16(pn), "")
	ips, err := d.resolve(ctx, network, host, hostAllowed)
	if err != nil {
		return nil, err
	}
	var errs []error
	for _, ip := range ips {
		if !hostAllowed {
			if err := d.allow.checkIP(host, ip, uint16(pn), ""); err != nil {
				errs = append(errs, err)
				continue
			}
		}
		conn, err := d.dial(ctx, network, net.JoinHostPort(ip.Unmap().String(), port), !hostAllowed)
		if err == nil {
			return conn, nil
		}
		errs = append(errs, err)
	}
	if len(errs) == 0 {
		return nil, fmt.Errorf("callback host %s: no address to connect to", host)
	}
	return nil, errors.Join(errs...)
}

// resolve returns host's addresses: the literal itself, or what the
// resolver answers for the network ("tcp", "tcp4", "tcp6"). A localhost
// name is refused without asking the resolver unless the allow-list names
// it.
func (d *guardedDialer) resolve(ctx context.Context, network, host string, hostAllowed bool) ([]netip.Addr, error) {
	if ip, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{ip}, nil
	}
	if isLocalName(host) && !hostAllowed {
		return nil, &AddressError{Host: host, Reason: "loopback (localhost name)"}
	}
	ipNet := "ip"
	switch network {
	case "tcp4":
		ipNet = "ip4"
	case "tcp6":
		ipNet = "ip6"
	}
	ips, err := d.lookup(ctx, ipNet, host)
	if err != nil {
		return nil, fmt.Errorf("callback host %s: resolving: %w", host, err)
	}
	return ips, nil
}

// control is the socket's last check before connect: the numeric address
// about to be connected must be permitted.
func (d *guardedDialer) control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("callback connect to %q: not a numeric address: %w", address, err)
	}
	return d.allow.checkIP(ap.Addr().String(), ap.Addr(), ap.Port(), "")
}
