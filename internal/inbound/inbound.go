package inbound

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/alerts"
	"github.com/herald-dev/herald/internal/httpapi"
	"github.com/herald-dev/herald/internal/webhooks"
)

// Prefix is where every format's paths start.
const Prefix = "/v1/inbound/"

// DefaultMaxBodyBytes bounds a body when Config.MaxBodyBytes is zero: the
// webhooks' default.
const DefaultMaxBodyBytes = webhooks.DefaultMaxBodyBytes

// Config configures the receivers. Dispatcher and Keyring are required.
type Config struct {
	// Dispatcher routes the alerts and stores their messages.
	Dispatcher alerts.Dispatcher
	// Keyring holds the Herald tokens the tools present (in the URL, the
	// body or a header, each as the format's clients send it); a token
	// needs the send scope. httpapi.OpenKeyring accepts any credential.
	Keyring *httpapi.Keyring
	// Acknowledge, when set, is told of an acknowledge event (PagerDuty's
	// acknowledge, Opsgenie's acknowledge) by the tool's name ("PagerDuty",
	// "Opsgenie") and the alert's key, the same Key the firing alert was
	// dispatched with (its identity: inbound alerts have no Owner). An error is
	// a 503 to the sender, who retries. Nil: acknowledgements are
	// answered as the service answers them and nothing else happens.
	Acknowledge func(ctx context.Context, source, key string) error
	// Redis, when set, remembers firing alerts by key for the closes that
	// carry nothing else (Opsgenie's close, PagerDuty's resolve without
	// payload), so they read and route as the alert they end. Optional.
	Redis redis.UniversalClient
	// MaxBodyBytes bounds a request body; default DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// Logger receives one line per request; default slog.Default().
	Logger *slog.Logger
	// Clock returns the current time; default time.Now.
	Clock func() time.Time
}

// Mounts returns the receivers as the producer's API mounts them: every
// path under Prefix, each request authenticated by the receiver itself. It
// panics when cfg lacks its Dispatcher or Keyring, a wiring mistake.
func Mounts(cfg Config) []httpapi.Mount {
	return []httpapi.Mount{{Pattern: Prefix, Handler: newHandler(cfg), SelfAuth: true}}
}

// server holds the defaulted config the formats share.
type server struct {
	cfg  Config
	gate *httpapi.BodyGate
	mem  memory
}

func newHandler(cfg Config) http.Handler {
	if cfg.Dispatcher == nil || cfg.Keyring == nil {
		panic("inbound: Config.Dispatcher and Config.Keyring are required")
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	s := &server{cfg: cfg, gate: httpapi.NewBodyGate(0, 0), mem: memory{rdb: cfg.Redis, log: cfg.Logger}}
	mux := http.NewServeMux()
	for _, f := range []*format{slackFormat(), discordFormat(), teamsFormat(), pagerDutyFormat(), opsgenieFormat(), ntfyFormat(), gotifyFormat()} {
		for _, p := range f.patterns {
			mux.HandleFunc(p, func(w http.ResponseWriter, r *http.Request) { s.serve(f, w, r) })
		}
	}
	mux.HandleFunc(Prefix, func(w http.ResponseWriter, _ *http.Request) {
		httpapi.WriteError(w, httpapi.Errorf(http.StatusNotFound, httpapi.CodeNotFound,
			"no such inbound format or method; see docs/INTEGRATIONS.md for the paths"))
	})
	return mux
}

// format is one service's receiver.
type format struct {
	name     string
	patterns []string
	// credential returns the secret the request presents. It runs before
	// the body is read unless inBody is set, and then gets the body.
	credential func(r *http.Request, body []byte) string
	inBody     bool
	// decode turns the request into what to do.
	decode func(q *request) (outcome, *httpapi.Error)
	// answer writes the service's success answer.
	answer func(w http.ResponseWriter, q *request, o outcome)
	// fail writes the service's answer to a refusal.
	fail func(w http.ResponseWriter, e *httpapi.Error)
}

// request is one post being handled.
type request struct {
	r     *http.Request
	body  []byte
	token string    // the Herald token's name
	now   time.Time // Config.Clock's time, for the answers' dates
	start time.Time // the monotonic start, for the answers' durations
	id    string    // a request id, for answers that carry one
}

// outcome is what a post asks for: alerts to dispatch, or a key to
// acknowledge, or neither (a post the service accepts and Herald ignores).
type outcome struct {
	alerts []alerts.Alert
	ack    string
	// dedupKey is echoed by PagerDuty's answer.
	dedupKey string
	// bare marks a resolution that carries only its key: it takes the
	// wording and labels of the firing alert when remembered.
	bare bool
	// stored is what the dispatcher answered.
	stored alerts.Dispatched
}

// serve runs a format's steps. Every refusal leaves nothing stored.
func (s *server) serve(f *format, w http.ResponseWriter, r *http.Request) {
	log := s.cfg.Logger.With("inbound", f.name)
	reject := func(e *httpapi.Error) {
		if e.Status < 500 {
			log.Warn("inbound post refused", "status", e.Status, "code", e.Code, "reason", e.Message)
		}
		if e.Status == http.StatusServiceUnavailable && w.Header().Get("Retry-After") == "" {
			w.Header().Set("Retry-After", "1")
		}
		f.fail(w, e)
	}
	q := &request{r: r, now: s.cfg.Clock(), start: time.Now(), id: newID()}
	if r.ContentLength > s.cfg.MaxBodyBytes {
		w.Header().Set("Connection", "close")
		reject(httpapi.Errorf(http.StatusRequestEntityTooLarge, httpapi.CodeBodyTooLarge, "body exceeds %d bytes", s.cfg.MaxBodyBytes))
		return
	}
	var err error
	if !f.inBody {
		if q.token, err = s.identify(f.credential(r, nil)); err != nil {
			reject(asError(err))
			return
		}
		q.body, err = httpapi.ReadBody(w, r, s.cfg.MaxBodyBytes)
	} else {
		q.body, err = s.gate.ReadBody(w, r, s.cfg.MaxBodyBytes)
		if err == nil {
			q.token, err = s.identify(f.credential(r, q.body))
		}
	}
	if err != nil {
		reject(asError(err))
		return
	}
	o, e := f.decode(q)
	if e == nil {
		e = s.act(r.Context(), f.name, &o)
	}
	if e != nil {
		if e.Status >= 500 {
			log.Error("inbound post not stored; the sender retries", "alerts", len(o.alerts), "reason", e.Message)
		}
		reject(e)
		return
	}
	log.Info("inbound post accepted", "token", q.token, "alerts", len(o.alerts), "messages", len(o.stored.Messages), "ack", o.ack != "")
	f.answer(w, q, o)
}

// act fits and dispatches the outcome's alerts, or passes its
// acknowledgement on.
func (s *server) act(ctx context.Context, source string, o *outcome) *httpapi.Error {
	if o.ack != "" && s.cfg.Acknowledge != nil {
		// The key as webhooks.Fit makes it the firing alert's.
		probe := []alerts.Alert{{Title: "ack", Key: o.ack}}
		if e := webhooks.Fit(probe, ""); e != nil {
			return e
		}
		if err := s.cfg.Acknowledge(ctx, toolNames[source], probe[0].Key); err != nil {
			return httpapi.Errorf(http.StatusServiceUnavailable, httpapi.CodeUnavailable, "the acknowledgement was not recorded; retry later")
		}
	}
	if len(o.alerts) == 0 {
		return nil
	}
	for i := range o.alerts {
		finishText(&o.alerts[i])
		if o.bare {
			s.mem.recall(ctx, &o.alerts[i])
		}
	}
	if e := webhooks.Fit(o.alerts, source+" notification"); e != nil {
		return e
	}
	res, err := s.cfg.Dispatcher.Dispatch(ctx, o.alerts)
	if err != nil {
		return webhooks.DispatchError(err)
	}
	o.stored = res
	for _, a := range o.alerts {
		if a.Status != alerts.StatusResolved {
			s.mem.keep(ctx, a)
		}
	}
	return nil
}

// toolNames name the tools whose acknowledgements are passed on.
var toolNames = map[string]string{"pagerduty": "PagerDuty", "opsgenie": "Opsgenie"}

// asError returns err as an *httpapi.Error (a read failure is a 400).
func asError(err error) *httpapi.Error {
	var he *httpapi.Error
	if errors.As(err, &he) {
		return he
	}
	return httpapi.Errorf(http.StatusBadRequest, httpapi.CodeInvalidJSON, "%v", err)
}

// newID returns 16 random bytes in hex, for the request ids and message
// ids the services' answers carry.
func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// uuid renders a 32-digit hex id as a UUID (8-4-4-4-12).
func uuid(id string) string {
	if len(id) != 32 {
		return id
	}
	return strings.Join([]string{id[:8], id[8:12], id[12:16], id[16:20], id[20:]}, "-")
}

// labelsOf returns the labels every inbound alert carries: the token's
// name, so routes can tell one tool's token from another's, plus the
// format's own non-empty pairs (name, value, name, value, ...).
func labelsOf(token string, pairs ...string) map[string]string {
	m := map[string]string{}
	if token != "" {
		m["token"] = token
	}
	for i := 0; i+1 < len(pairs); i += 2 {
		if v := strings.TrimSpace(pairs[i+1]); v != "" {
			m[pairs[i]] = v
		}
	}
	return m
}

// key joins the parts of an alert key or fingerprint; webhooks.Fit digests
// one that is too long.
func key(parts ...string) string { return strings.Join(parts, "/") }
