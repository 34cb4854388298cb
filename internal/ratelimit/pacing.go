package ratelimit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/keys"
)

// Pacing is how fast a bot's workers send bot-wide: its free limit, the
// paid one while paid broadcasts are on, and the queues that run as lanes.
// The workers publish it (Limiter.Publish) because the processes that
// report on a backlog, such as a broadcast's ETA in the producer, do not
// share the workers' settings.
type Pacing struct {
	Bot   Limit    `json:"bot"`
	Paid  Limit    `json:"paid,omitempty"`
	Lanes []string `json:"lanes,omitempty"`
	// PaidOff is set by ReadPacing when the paid broadcasts are off for
	// now (a spent budget, a refusal by Telegram): the free limit paces
	// the bot until the mark expires.
	PaidOff bool `json:"-"`
}

// pacing is the limiter's own pacing, as Publish writes it.
func (l *Limiter) pacing() Pacing {
	return Pacing{Bot: l.cfg.Bot, Paid: l.paid.Limit, Lanes: l.cfg.Lanes}
}

// Publish writes the limiter's pacing for the bot, for ReadPacing in other
// processes. Every worker writes the same value when the fleet shares its
// settings; otherwise the last to start wins.
func (l *Limiter) Publish(ctx context.Context) error {
	b, err := json.Marshal(l.pacing())
	if err != nil {
		return fmt.Errorf("ratelimit: encode the pacing of bot %q: %w", l.name, err)
	}
	if err := l.rdb.Set(ctx, l.ks.Pacing(), b, 0).Err(); err != nil {
		return fmt.Errorf("ratelimit: publish the pacing of bot %q: %w", l.name, err)
	}
	return nil
}

// ReadPacing reads the pacing the workers of bot published and whether
// its paid broadcasts are off for now, in one round trip. ok is false when
// no worker has published one yet.
func ReadPacing(ctx context.Context, rdb redis.Cmdable, bot string) (p Pacing, ok bool, err error) {
	ks := keys.Bot(bot)
	var get *redis.StringCmd
	var off *redis.IntCmd
	if _, err := rdb.Pipelined(ctx, func(pl redis.Pipeliner) error {
		get = pl.Get(ctx, ks.Pacing())
		off = pl.Exists(ctx, ks.PaidOff())
		return nil
	}); err != nil && !errors.Is(err, redis.Nil) {
		return Pacing{}, false, fmt.Errorf("ratelimit: read the pacing of bot %q: %w", bot, err)
	}
	b, err := get.Bytes()
	if errors.Is(err, redis.Nil) {
		return Pacing{}, false, nil
	}
	if err != nil {
		return Pacing{}, false, fmt.Errorf("ratelimit: read the pacing of bot %q: %w", bot, err)
	}
	if err := json.Unmarshal(b, &p); err != nil {
		return Pacing{}, false, fmt.Errorf("ratelimit: decode the pacing of bot %q: %w", bot, err)
	}
	p.PaidOff = off.Val() > 0
	return p, true, nil
}

// Rate is the most sends per second a backlog of queue gets in the long
// run: the paid limit while paid broadcasts are on, else the free one, and
// for a lane the share the acquire script leaves it (N - max(1, 3% of N)
// of each window of N > 1). 0: nothing bounds it.
func (p Pacing) Rate(queue string) float64 {
	lim := p.Bot
	if len(p.Paid) > 0 && !p.PaidOff {
		lim = p.Paid
	}
	if slices.Contains(p.Lanes, queue) {
		lim = laneShare(lim)
	}
	return lim.Rate()
}

// laneShare is the part of lim's windows a lane's queue turns take, as
// the acquire script computes it.
func laneShare(lim Limit) Limit {
	out := make(Limit, 0, len(lim))
	for _, w := range lim {
		if w.N > 1 {
			w.N -= max(1, int(math.Ceil(float64(w.N)*0.03)))
		}
		out = append(out, w)
	}
	return out
}
