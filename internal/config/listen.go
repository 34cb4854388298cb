package config

import (
	"net"
	"strconv"
)

// ValidateListen checks a host:port listen address; port 0 picks a free port.
func ValidateListen(p *Problems, env, addr, example string) {
	_, port, err := net.SplitHostPort(addr)
	if err == nil {
		n, convErr := strconv.Atoi(port)
		if convErr != nil || n < 0 || n > 65535 {
			err = strconv.ErrRange
		}
	}
	if err != nil {
		p.Add(env, "must be host:port such as %q or \"127.0.0.1%s\", got %q", example, example, addr)
	}
}
