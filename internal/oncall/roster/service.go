package roster

import (
	"context"
	"errors"
	"log/slog"

	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/httpapi"
)

// Config configures the producer's side of on-call (New).
type Config struct {
	// Redis holds the overrides, the announcement times and the published
	// schedules. Required.
	Redis redis.UniversalClient
	// Messages enqueues the handoff announcements. Required.
	Messages enqueuer
	// Catalog returns the schedules in force (the routing file's, swapped
	// on reload). Required.
	Catalog  func() Catalog
	Settings Settings
	// MaxBodyBytes bounds a request body of the on-call API.
	MaxBodyBytes int64
	Logger       *slog.Logger
}

// Service is the producer's side of on-call: the Roster over the schedules
// in force and the overrides stored in Redis, the Announcer of handoffs,
// and the on-call API's routes (Mounts). A worker needs none of it: it
// answers /oncall with Commands.
type Service struct {
	roster    *Roster
	announcer *Announcer
	mounts    []httpapi.Mount
}

// New builds the service; Start runs its announcer.
func New(cfg Config) (*Service, error) {
	if cfg.Catalog == nil {
		return nil, errors.New("roster: Config.Catalog is required: the schedules in force")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	r := &Roster{Catalog: cfg.Catalog, Overrides: NewOverrides(cfg.Redis)}
	a, err := NewAnnouncer(AnnouncerConfig{Redis: cfg.Redis, Messages: cfg.Messages, Roster: r,
		Interval: cfg.Settings.AnnounceInterval, Logger: cfg.Logger.With("component", "oncall")})
	if err != nil {
		return nil, err
	}
	mounts, err := Mounts(APIConfig{Roster: r, MaxBodyBytes: cfg.MaxBodyBytes, Logger: cfg.Logger})
	if err != nil {
		return nil, err
	}
	return &Service{roster: r, announcer: a, mounts: mounts}, nil
}

// Roster answers who is on call; the escalation engine asks it about its
// on_call targets.
func (s *Service) Roster() *Roster { return s.roster }

// Mounts are the on-call API's routes (see Mounts).
func (s *Service) Mounts() []httpapi.Mount { return s.mounts }

// Start runs the announcer until Shutdown or the end of ctx.
func (s *Service) Start(ctx context.Context) error { return s.announcer.Start(ctx) }

// Shutdown stops the announcer, waiting for a look under way.
func (s *Service) Shutdown() { s.announcer.Shutdown() }
