package alerts

import (
	"fmt"
	"strconv"

	"github.com/herald-dev/herald/internal/config"
	"github.com/herald-dev/herald/internal/jobs"
)

// The routing settings of the producer.
const (
	EnvRoutesFile  = "HERALD_ROUTES_FILE"
	EnvDefaultChat = "HERALD_ALERTS_DEFAULT_CHAT"
)

// RoutesConfig says where the routing table comes from: a routing file, or
// one default route to a chat.
type RoutesConfig struct {
	// File is the YAML routing file for alerts, webhooks, heartbeats and
	// feeds (HERALD_ROUTES_FILE); the producer reloads it on SIGHUP.
	File string
	// DefaultChat receives every alert when File is empty
	// (HERALD_ALERTS_DEFAULT_CHAT).
	DefaultChat string
}

// Specs binds the routing settings to c, in documentation order.
func (c *RoutesConfig) Specs() []config.Spec {
	return []config.Spec{
		config.NewSpec(EnvRoutesFile, "", "YAML routing file for alerts, webhooks, heartbeats and feeds; reloaded on SIGHUP.",
			config.StringVar(&c.File)),
		config.NewSpec(EnvDefaultChat, "", "Chat that receives every alert when no routing file is set.",
			config.StringVar(&c.DefaultChat)),
	}
}

// Check reports the problems of the routing settings that show before
// the file is read (the default chat's spelling); the file's own are
// Load's.
func (c RoutesConfig) Check(p *config.Problems) {
	if c.File != "" || c.DefaultChat == "" {
		return
	}
	if _, err := jobs.ValidateChat(c.DefaultChat); err != nil {
		p.Add(EnvDefaultChat, "%v", err)
	}
}

// Load returns the routing table c names: the routing file when File is
// set, else one default route to DefaultChat, else nil (alerts answer 422
// no_route). The routes are checked against opts.
func (c RoutesConfig) Load(opts ParseOptions) (*Table, error) {
	switch {
	case c.File != "":
		t, err := LoadRoutesWith(c.File, opts)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", EnvRoutesFile, err)
		}
		return t, nil
	case c.DefaultChat != "":
		var p config.Problems
		if c.Check(&p); p.Err() != nil {
			return nil, p.Err()
		}
		chat, _ := jobs.ValidateChat(c.DefaultChat)
		doc := "routes:\n  - name: default\n    default: true\n    destinations:\n      - chat: " + strconv.Quote(chat) + "\n"
		return ParseRoutesWith(EnvDefaultChat, []byte(doc), opts)
	}
	return nil, nil
}
