package roster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/background"
	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/keys"
	"github.com/herald-dev/herald/internal/oncall"
)

// Defaults of AnnouncerConfig.
const (
	// DefaultAnnounceInterval is how often an announcer looks for
	// handoffs: a handoff is announced within about this long.
	DefaultAnnounceInterval = 15 * time.Second
	// maxLate is the oldest handoff still announced: after an outage of
	// every producer, older ones are skipped (the chat learns who is on
	// call from the latest).
	maxLate = time.Hour
)

// enqueuer is the part of *jobs.Enqueuer the announcer sends through:
// every announcement is an ordinary message, under the fleet's limits and
// retries.
type enqueuer interface {
	Enqueue(ctx context.Context, req jobs.Request) (jobs.Result, error)
}

// AnnouncerConfig configures an Announcer.
type AnnouncerConfig struct {
	Redis    redis.UniversalClient
	Messages enqueuer
	Roster   *Roster
	// Interval is how often it looks (default DefaultAnnounceInterval).
	Interval time.Duration
	Logger   *slog.Logger
	// now is the clock (tests); default time.Now.
	now func() time.Time
}

// Announcer posts a message to a schedule's chat at each handoff, once
// fleet-wide: it runs in every producer, each handoff's message has an
// idempotency key of its own, and the time up to which a schedule's
// handoffs were announced moves forward by compare and set. It also
// publishes the schedules for the workers' /oncall.
type Announcer struct {
	cfg   AnnouncerConfig
	loops background.Group
}

// NewAnnouncer checks cfg and returns an announcer; Start runs it.
func NewAnnouncer(cfg AnnouncerConfig) (*Announcer, error) {
	if cfg.Redis == nil || cfg.Messages == nil || cfg.Roster == nil || cfg.Roster.Catalog == nil {
		return nil, errors.New("roster: AnnouncerConfig.Redis, Messages and Roster (with its Catalog) are required")
	}
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultAnnounceInterval
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.now == nil {
		cfg.now = time.Now
	}
	return &Announcer{cfg: cfg}, nil
}

// Start runs the announcer until Shutdown or the end of ctx: a look at
// once, then every Interval (± 20%).
func (a *Announcer) Start(ctx context.Context) error {
	err := a.loops.Start(ctx, func(ctx context.Context) {
		background.Every(ctx, 0, a.cfg.Interval, func() {
			if err := a.Announce(context.WithoutCancel(ctx)); err != nil {
				a.cfg.Logger.Warn("handoff announcements failed; retrying at the next look", "error", err)
			}
		})
	})
	if err != nil {
		return fmt.Errorf("roster: announcer %w", err)
	}
	return nil
}

// Shutdown stops the announcer and waits for a look under way.
func (a *Announcer) Shutdown() { a.loops.Shutdown() }

// cursorScript moves a schedule's announcement time from the one the
// caller read to a later one, or sets the first.
//
// KEYS[1] the announcement times (keys.OnCallHandoffs).
// ARGV[1] schedule, ARGV[2] the time read ("" none), ARGV[3] the new time
// µs.
// Returns 1 when moved, 0 when another producer moved it first.
var cursorScript = redis.NewScript(`
local cur = redis.call('HGET', KEYS[1], ARGV[1])
if (cur or '') ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
return 1
`)

// Announce publishes the schedules and announces the handoffs since the
// last look of any producer, for every schedule with a chat.
func (a *Announcer) Announce(ctx context.Context) error {
	cat := a.cfg.Roster.Catalog()
	if err := publish(ctx, a.cfg.Redis, cat.Source); err != nil {
		return fmt.Errorf("roster: publish the schedules: %w", err)
	}
	now := a.cfg.now()
	var errs []error
	for _, name := range a.cfg.Roster.Names() {
		s, _, err := a.cfg.Roster.Schedule(ctx, name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if s.Chat == "" {
			continue
		}
		errs = append(errs, a.announce(ctx, cat.Bot, s, now))
	}
	return errors.Join(errs...)
}

// announce announces s's handoffs from the last announced time to now.
func (a *Announcer) announce(ctx context.Context, bot string, s oncall.Schedule, now time.Time) error {
	raw, err := a.cfg.Redis.HGet(ctx, keys.OnCallHandoffs(), s.Name).Result()
	if err != nil && !errors.Is(err, redis.Nil) {
		return err
	}
	to := strconv.FormatInt(now.UnixMicro(), 10)
	if raw == "" {
		// A schedule seen for the first time: its handoffs count from now.
		return cursorScript.Run(ctx, a.cfg.Redis, []string{keys.OnCallHandoffs()}, s.Name, "", to).Err()
	}
	us, err := strconv.ParseInt(raw, 10, 64)
	if err != nil {
		return fmt.Errorf("roster: announcement time of %q: %w", s.Name, err)
	}
	from := time.UnixMicro(us)
	if !now.After(from) {
		return nil
	}
	for _, h := range s.Handoffs(from, now) {
		if now.Sub(h.At) > maxLate {
			a.cfg.Logger.Info("handoff too old to announce", "schedule", s.Name, "at", h.At)
			continue
		}
		m := jobs.SendMessage{Bot: bot, Chat: s.Chat, MessageThreadID: s.Topic, Text: handoffText(s, h),
			IdempotencyKey: fmt.Sprintf("oncall-handoff/%s/%d/%d", s.Name, h.At.UnixMicro(), h.To.ID)}
		if _, err := a.cfg.Messages.Enqueue(ctx, jobs.Request{Message: m}); err != nil {
			return err
		}
		a.cfg.Logger.Info("handoff announced", "schedule", s.Name, "at", h.At, "from", h.From.Name, "to", h.To.Name)
	}
	return cursorScript.Run(ctx, a.cfg.Redis, []string{keys.OnCallHandoffs()}, s.Name, raw, to).Err()
}

// handoffText is the announcement of h: who is on call now, until when,
// after whom, and who is next.
func handoffText(s oncall.Schedule, h oncall.Handoff) string {
	loc := zoneOf(s)
	if h.To.IsZero() {
		t := "🔄 " + s.Name + ": nobody is on call from " + when(h.At, loc) + " (after " + h.From.String() + ")."
		if u, sh, ok := s.Next(h.At); ok {
			t += "\nNext: " + u.String() + " from " + when(sh.Start, loc)
		}
		return t
	}
	t := "🔄 " + s.Name + ": " + h.To.String() + " is on call"
	if !h.Shift.End.IsZero() {
		t += " until " + when(h.Shift.End, loc)
	}
	if !h.From.IsZero() {
		t += ", taking over from " + h.From.String()
	}
	t += "."
	if u, sh, ok := s.Next(h.At); ok {
		t += "\nNext: " + u.String() + " from " + when(sh.Start, loc)
	}
	return t
}
