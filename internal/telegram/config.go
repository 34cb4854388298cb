package telegram

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/herald-dev/herald/internal/config"
)

// Defaults applied by New to zero Config fields.
const (
	DefaultAPIURL  = "https://api.telegram.org"
	defaultTimeout = 15 * time.Second
)

// Config configures a Client.
type Config struct {
	// Token is the bot token from @BotFather. Required.
	Token string
	// APIURL is the Bot API base URL, for example a local Bot API server
	// or a proxy. Default DefaultAPIURL; a trailing slash is ignored.
	APIURL string
	// Timeout bounds each request from dialling to reading the whole
	// answer. Default DefaultTimeout. It applies to HTTPClient as well.
	Timeout time.Duration
	// HTTPClient sends the requests. When nil, New builds one with a pooled
	// HTTP/1.1 transport (100 idle connections per host, 10s TLS handshake
	// timeout) that does not follow redirects, so the token never travels
	// to a host named in a Location header.
	HTTPClient *http.Client
	// Logger receives debug records about failed calls; default
	// slog.Default(). Records never contain the token.
	Logger *slog.Logger
}

// validate checks the fields and returns the first problem, naming the
// field and how to fix it. The token's value is never quoted.
func (c Config) validate() error {
	if c.Token == "" {
		return errors.New("telegram: Config.Token is empty; set it to the bot token issued by @BotFather")
	}
	for _, r := range c.Token {
		if !tokenRune(r) {
			return fmt.Errorf("telegram: Config.Token contains the character %q; a bot token has only letters, digits, ':', '_' and '-' (copy it again from @BotFather)", r)
		}
	}
	var p config.Problems
	c.WithDefaults().Check(&p)
	if err := p.Err(); err != nil {
		return fmt.Errorf("telegram: %w", err)
	}
	return nil
}

// tokenRune reports whether r may appear in a bot token. Restricting the
// alphabet keeps the token verbatim in request URLs, which is what makes
// redaction reliable.
func tokenRune(r rune) bool {
	return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' ||
		r == ':' || r == '_' || r == '-'
}

// defaultHTTPClient builds the client used when Config.HTTPClient is nil.
// It speaks HTTP/1.1 only: there, the transport finishes its write (and
// reports it through httptrace) before Do returns an error, which is what
// tells "not sent" apart from "maybe sent".
func defaultHTTPClient(timeout time.Duration) *http.Client {
	dialer := &net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}
	var protocols http.Protocols
	protocols.SetHTTP1(true)
	return &http.Client{
		Timeout: timeout,
		Transport: &http.Transport{
			Protocols:             &protocols,
			Proxy:                 http.ProxyFromEnvironment,
			DialContext:           dialer.DialContext,
			TLSHandshakeTimeout:   10 * time.Second,
			MaxIdleConns:          100,
			MaxIdleConnsPerHost:   100,
			IdleConnTimeout:       90 * time.Second,
			ExpectContinueTimeout: time.Second,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

// Format implements fmt.Formatter so that printing a Config with any verb
// hides the token.
func (c Config) Format(s fmt.State, _ rune) {
	token := ""
	if c.Token != "" {
		token = redacted
	}
	_, _ = fmt.Fprintf(s, "telegram.Config{Token:%q, APIURL:%q, Timeout:%s, HTTPClient:%t, Logger:%t}",
		token, c.APIURL, c.Timeout, c.HTTPClient != nil, c.Logger != nil)
}

// LogValue implements slog.LogValuer so that logging a Config hides the
// token.
func (c Config) LogValue() slog.Value {
	return slog.GroupValue(
		slog.Bool("token_set", c.Token != ""),
		slog.String("api_url", c.APIURL),
		slog.Duration("timeout", c.Timeout),
	)
}

// writeString is io.WriteString with the error dropped, for Formatters.
func writeString(w io.Writer, s string) { _, _ = io.WriteString(w, s) }
