package webhooks

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/herald-dev/herald/internal/httpapi"
)

// GrafanaConfig configures the Grafana receiver's signature check.
type GrafanaConfig struct {
	// Secret, when set, makes the Grafana webhook also require the
	// HMAC-SHA256 signature configured on the contact point
	// (HERALD_GRAFANA_WEBHOOK_SECRET).
	Secret string
	// SecretFile is a file holding the secret, read by Handler
	// (HERALD_GRAFANA_WEBHOOK_SECRET_FILE); it excludes Secret.
	SecretFile string
	// SignatureHeader is the header holding Grafana's signature; default
	// [defaultGrafanaSignatureHeader].
	SignatureHeader string
	// TimestampHeader is the contact point's optional timestamp header
	// (HERALD_GRAFANA_TIMESTAMP_HEADER). When set, the signature covers
	// "<timestamp>:<body>" and the timestamp must be within MaxSkew of now.
	// Default: none.
	TimestampHeader string
	// MaxSkew bounds the age of a signed timestamp; default
	// [defaultGrafanaMaxSkew].
	MaxSkew time.Duration
}

// withDefaults fills the zero fields.
func (c GrafanaConfig) withDefaults() GrafanaConfig {
	if c.SignatureHeader == "" {
		c.SignatureHeader = defaultGrafanaSignatureHeader
	}
	if c.MaxSkew == 0 {
		c.MaxSkew = defaultGrafanaMaxSkew
	}
	return c
}

// grafana is the receiver of Grafana alerting's webhook contact point. Its
// payload mirrors Alertmanager's; authentication is the API token and, when
// Grafana.Secret is set, also the contact point's HMAC signature.
func (s *server) grafana() receiver {
	rc := receiver{
		name:      "grafana",
		authorize: s.requireToken("the Grafana contact point (Authorization header or basic auth)"),
		decode: func(_ *http.Request, body []byte) (decoded, *httpapi.Error) {
			return decodeGrafana(body)
		},
	}
	if s.cfg.Grafana.Secret != "" {
		rc.verify = s.verifyGrafana
	}
	return rc
}

// decodeGrafana turns a Grafana webhook payload into one alert per alert
// of the notification, with the query values and dashboard links in the
// body.
func decodeGrafana(body []byte) (decoded, *httpapi.Error) {
	return decodeGroup("grafana", body)
}

// verifyGrafana checks Grafana's HMAC-SHA256 signature: hex over the body,
// or over "<timestamp>:<body>" when a timestamp header is configured, in
// which case the timestamp (Unix seconds) must also be recent.
func (s *server) verifyGrafana(r *http.Request, body []byte) *httpapi.Error {
	const fix = "set the same secret in the contact point's HMAC signature settings"
	sigHeader := s.cfg.Grafana.SignatureHeader
	sig := r.Header.Get(sigHeader)
	if sig == "" {
		return missingSignature(sigHeader, fix)
	}
	tsHeader := s.cfg.Grafana.TimestampHeader
	if tsHeader == "" {
		if !signatureMatches(sig, s.cfg.Grafana.Secret, body) {
			return wrongSignature(sigHeader, fix)
		}
		return nil
	}
	ts := strings.TrimSpace(r.Header.Get(tsHeader))
	if ts == "" {
		return missingSignature(tsHeader, "set the same timestamp header in the contact point's HMAC signature settings")
	}
	if !signatureMatches(sig, s.cfg.Grafana.Secret, []byte(ts), []byte(":"), body) {
		return wrongSignature(sigHeader, fix+", and the same timestamp header")
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return httpapi.Errorf(http.StatusUnauthorized, httpapi.CodeBadSignature, "%s is not a Unix timestamp in seconds", tsHeader)
	}
	skew := s.cfg.Clock().Sub(time.Unix(sec, 0))
	if skew > s.cfg.Grafana.MaxSkew || skew < -s.cfg.Grafana.MaxSkew {
		return httpapi.Errorf(http.StatusUnauthorized, httpapi.CodeBadSignature,
			"%s is %s away from this server's clock (limit %s): a replayed request, or a clock to fix",
			tsHeader, skew.Round(time.Second), s.cfg.Grafana.MaxSkew)
	}
	return nil
}
