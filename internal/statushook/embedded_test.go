package statushook_test

import (
	"strings"
	"testing"

	"github.com/herald-dev/herald/internal/statushook"
)

// TestEmbeddedIPv4Refused: every IPv6 form that carries an IPv4 address
// (mapped, compatible, NAT64 and local-use NAT64, 6to4, Teredo's server
// and client) is refused when the IPv4 address would be, and a zone id is
// refused whatever the address, so that "%eth0" cannot step around a
// range; the same forms around a public IPv4 address pass (but NAT64,
// refused whole).
func TestEmbeddedIPv4Refused(t *testing.T) {
	t.Parallel()
	p := statushook.Policy{}
	for _, c := range []struct{ host, reason string }{
		{"[::ffff:127.0.0.1]", "loopback"},
		{"[::ffff:7f00:1]", "loopback"},
		{"[::127.0.0.1]", "loopback embedded in an IPv4-compatible"},
		{"[::a9fe:a9fe]", "link-local embedded in an IPv4-compatible"},
		{"[64:ff9b::127.0.0.1]", "NAT64"},
		{"[64:ff9b::8.8.8.8]", "NAT64"},
		{"[64:ff9b:1::7f00:1]", "local-use NAT64"},
		{"[2002:7f00:1::1]", "loopback embedded in a 6to4"},
		{"[2002:a00:1::]", "private (RFC 1918) embedded in a 6to4"},
		{"[2002:a9fe:a9fe::1]", "link-local embedded in a 6to4"},
		{"[2001:0:7f00:1::1]", "loopback embedded in a Teredo address's server"},
		{"[2001:0:808:808:0:0:f5ff:fffe]", "private (RFC 1918) embedded in a Teredo address's client"}, // client 10.0.0.1
		{"[2001:0:808:808::80ff:fefe]", "loopback embedded in a Teredo address's client"},              // client 127.0.1.1
		{"[fe80::1%25eth0]", "zone id"},
		{"[64:ff9b::7f00:1%25eth0]", "zone id"},
		{"[2606:4700::1%25lo]", "zone id"},
	} {
		_, err := p.ValidateURL("https://" + c.host + "/hook")
		if err == nil || !strings.Contains(err.Error(), c.reason) {
			t.Errorf("%s: %v, want a refusal saying %q", c.host, err, c.reason)
		}
	}
	for _, host := range []string{"[::ffff:8.8.8.8]", "[::8.8.8.8]", "[2002:808:808::1]", "[2001:0:808:808::f7f7:f7f7]", "[2606:4700::1111]"} {
		if _, err := p.ValidateURL("https://" + host + "/hook"); err != nil {
			t.Errorf("%s (a public address in it): %v", host, err)
		}
	}
}
