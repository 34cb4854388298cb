package httpapi

import (
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// CodeMisdirectedHost is the code of AllowHosts' 421: the request's Host
// names a server other than this one.
const CodeMisdirectedHost = "misdirected_host"

// loopbackHosts are the names under which a browser on this machine reaches
// a server on the loopback interface.
var loopbackHosts = []string{"localhost", "127.0.0.1", "::1"}

// AllowHosts refuses, with a 421 misdirected_host, every request whose Host
// header matches none of allowed. It defeats DNS rebinding: a page on
// evil.example whose name the attacker re-points at 127.0.0.1 becomes
// same-origin with a loopback server, but its requests still carry
// Host: evil.example.
//
// An entry is a name or an IP address, which matches with any port, or a
// host:port, which matches that port only ("[::1]" or "::1" for IPv6).
// Names compare without case or a trailing dot, IP addresses by value. An
// unspecified address (0.0.0.0 or ::) matches every IP address: a browser
// sends an address as Host only when it connected to that address itself,
// so no DNS answer is involved. A request without Host is refused.
func AllowHosts(allowed []string, next http.Handler) http.Handler {
	rules := parseRules(allowed)
	names := describeHosts(rules)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if matchHost(rules, r.Host) {
			next.ServeHTTP(w, r)
			return
		}
		WriteError(w, Errorf(http.StatusMisdirectedRequest, CodeMisdirectedHost,
			"Host %q is not a name of this server (%s), so the request is refused as a possible DNS rebinding attack; open %s instead",
			r.Host, names, suggestURL(rules, r)))
	})
}

// ListenHosts returns the Host values, for AllowHosts, of a server
// listening on addr: the loopback names and every IP address, with any port
// (an SSH tunnel, a port mapping or a relay such as socat changes the port
// or the address, and neither is what rebinding forges: an IP address in
// Host means no DNS answer was involved), and addr's own host when it is a
// name. Other names the server is reached by are the caller's to add.
func ListenHosts(addr string) []string {
	hosts := append(append([]string(nil), loopbackHosts...), "0.0.0.0")
	host, _ := splitHost(addr)
	if host != "" && !matchHost(parseRules(hosts), host) {
		hosts = append(hosts, host)
	}
	return hosts
}

// parseRules parses the entries of AllowHosts, leaving out empty ones.
func parseRules(allowed []string) []hostRule {
	rules := make([]hostRule, 0, len(allowed))
	for _, a := range allowed {
		if r, ok := parseHostRule(a); ok {
			rules = append(rules, r)
		}
	}
	return rules
}

// hostRule is one parsed entry of AllowHosts.
type hostRule struct {
	name  string     // lower case, without a trailing dot; "" for an IP
	ip    netip.Addr // valid for an IP address
	port  string     // "" for any port
	anyIP bool       // an unspecified address: every IP address
}

// parseHostRule parses an entry of AllowHosts; an empty one matches nothing.
func parseHostRule(s string) (hostRule, bool) {
	host, port := splitHost(s)
	if host == "" {
		return hostRule{}, false
	}
	r := hostRule{port: port}
	if ip, err := netip.ParseAddr(host); err == nil {
		r.ip = ip.Unmap().WithZone("")
		r.anyIP = ip.IsUnspecified()
	} else {
		r.name = strings.TrimSuffix(strings.ToLower(host), ".")
	}
	return r, true
}

// matchHost reports whether the Host header host matches one of rules.
func matchHost(rules []hostRule, host string) bool {
	h, ok := parseHostRule(host)
	if !ok {
		return false
	}
	for _, r := range rules {
		if r.port != "" && r.port != h.port {
			continue
		}
		if r.anyIP && h.ip.IsValid() || r.ip.IsValid() && r.ip == h.ip || r.name != "" && r.name == h.name {
			return true
		}
	}
	return false
}

// splitHost splits host[:port], with or without the brackets of IPv6.
func splitHost(s string) (host, port string) {
	if h, p, err := net.SplitHostPort(s); err == nil {
		return h, p
	}
	return strings.TrimSuffix(strings.TrimPrefix(s, "["), "]"), ""
}

// hostname is r's host as a Host header spells it.
func (r hostRule) hostname() string {
	switch {
	case r.name != "":
		return r.name
	case r.ip.Is6():
		return "[" + r.ip.String() + "]"
	}
	return r.ip.String()
}

// describeHosts lists rules for the 421's message.
func describeHosts(rules []hostRule) string {
	out := make([]string, 0, len(rules))
	for _, r := range rules {
		s := r.hostname()
		if r.anyIP {
			s = "any IP address"
		}
		if r.port != "" {
			s += ":" + r.port
		}
		out = append(out, s)
	}
	if len(out) == 0 {
		return "none allowed"
	}
	return strings.Join(out, ", ")
}

// suggestURL is the base URL the 421 tells the user to open: the address
// the request came in on when that passes rules (it does on loopback), else
// the first allowed host on the same port.
func suggestURL(rules []hostRule, r *http.Request) string {
	local, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	_, port := splitHost(r.Host)
	if local != nil {
		if matchHost(rules, local.String()) {
			return "http://" + local.String()
		}
		_, port = splitHost(local.String())
	}
	for _, rule := range rules {
		if rule.anyIP {
			continue
		}
		if rule.port != "" {
			port = rule.port
		}
		if port == "" {
			return "http://" + rule.hostname()
		}
		return "http://" + rule.hostname() + ":" + port
	}
	return "this server by its own address"
}
