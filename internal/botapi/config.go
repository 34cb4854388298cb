package botapi

import (
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/herald-dev/herald/internal/httpapi"
	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/keys"
	"github.com/herald-dev/herald/internal/ledger"
	"github.com/herald-dev/herald/internal/producer"
)

// Prefix is the path under which the front answers.
const Prefix = "/telegram/"

// DefaultResultWait is how long an answer waits for its message to be sent,
// to carry the real message_id (Config.ResultWait).
const DefaultResultWait = 2 * time.Second

// DefaultMaxWaiting bounds the answers waiting at once (Config.MaxWaiting).
const DefaultMaxWaiting = 64

// maxUpload bounds a multipart body: Telegram's 10 MB for a photo upload
// and room for the other fields.
const maxUpload = 10<<20 + 1<<20

// Config configures the front.
type Config struct {
	// Enqueuer stores the messages. Required.
	Enqueuer *jobs.Enqueuer
	// Keyring tells whose credential a path's TOKEN is. Required.
	Keyring *httpapi.Keyring
	// Ledger is read for the record of a message just stored, to answer
	// with its message_id; nil answers at once with the placeholder.
	Ledger *ledger.Store
	// Bots are the bots a path may name (HERALD_BOTS); nil: only the
	// default bot.
	Bots []string
	// MaxBodyBytes bounds a JSON, form or query body; 0: the producer's
	// default. A multipart body may carry a photo of up to 10 MB.
	MaxBodyBytes int64
	// ResultWait bounds how long an answer waits for the message to be
	// sent; 0: DefaultResultWait; negative: never wait.
	ResultWait time.Duration
	// MaxWaiting bounds the answers waiting at once, a quarter of them
	// (at least one) per Herald token; the others answer at once with the
	// placeholder. 0: DefaultMaxWaiting.
	MaxWaiting int
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// Registerer receives the front's metrics; nil means none.
	Registerer prometheus.Registerer
}

// withDefaults fills the zero fields.
func (c Config) withDefaults() Config {
	if c.MaxBodyBytes <= 0 {
		c.MaxBodyBytes = producer.DefaultMaxBodyBytes
	}
	if c.ResultWait == 0 {
		c.ResultWait = DefaultResultWait
	}
	if c.MaxWaiting <= 0 {
		c.MaxWaiting = DefaultMaxWaiting
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if len(c.Bots) == 0 {
		c.Bots = []string{keys.DefaultBot}
	}
	return c
}

// Mounts returns the front's endpoint for the producer's API. It
// authenticates each request itself, from the TOKEN in its path.
func Mounts(cfg Config) []httpapi.Mount {
	return []httpapi.Mount{{Pattern: Prefix, Handler: newHandler(cfg), SelfAuth: true}}
}
