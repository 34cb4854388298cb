package telegram

import (
	"net/url"
	"strings"

	"github.com/herald-dev/herald/internal/config"
)

// The Bot API settings of a worker; the bots' tokens are the settings
// package's, which reads one per bot.
const (
	EnvAPIURL  = "TELEGRAM_API_URL"
	envTimeout = "TELEGRAM_TIMEOUT"
)

// Specs binds the Bot API settings to c's fields.
func (c *Config) Specs() []config.Spec {
	return []config.Spec{
		config.NewSpec(EnvAPIURL, DefaultAPIURL, "Bot API base URL, http:// or https://.", config.BaseURLVar(&c.APIURL)),
		config.NewSpec(envTimeout, config.FmtDur(defaultTimeout), "Timeout of one Bot API request.", config.DurationVar(&c.Timeout)),
	}
}

// WithDefaults returns c with the API URL and the timeout filled.
func (c Config) WithDefaults() Config {
	if c.APIURL == "" {
		c.APIURL = DefaultAPIURL
	}
	if c.Timeout == 0 {
		c.Timeout = defaultTimeout
	}
	return c
}

// Check records what is wrong with the API URL and the timeout of c, whose
// defaults must be filled. An error never shows the URL's user information
// or a path that may hold a token.
func (c Config) Check(p *config.Problems) {
	u, err := url.Parse(c.APIURL)
	switch {
	case err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https"):
		p.Add(EnvAPIURL, "must be an http:// or https:// URL such as %s, got %q", DefaultAPIURL, shownURL(c.APIURL))
	case strings.Contains(u.Path, "/bot"):
		// The path may hold the token; do not echo it.
		p.Add(EnvAPIURL, "must be the base URL only (e.g. %s), without /bot<token>", DefaultAPIURL)
	case u.RawQuery != "" || u.Fragment != "" || u.ForceQuery || u.User != nil:
		p.Add(EnvAPIURL, "must be a plain base URL without user, query or fragment, got %q", shownURL(c.APIURL))
	}
	p.Positive(envTimeout, c.Timeout, defaultTimeout)
}

// shownURL is raw with any password masked, for an error message.
func shownURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		if i := strings.LastIndex(raw, "@"); err != nil && i >= 0 {
			return "xxxxx" + raw[i:]
		}
		return raw
	}
	return u.Redacted()
}
