package silences

import (
	"context"
	"errors"

	"github.com/herald-dev/herald/internal/keys"
	"github.com/redis/go-redis/v9"
)

// Only tests count the messages quiet hours hold.

// HeldCount returns how many messages quiet hours hold now.
func (s *Store) HeldCount(ctx context.Context) (int64, error) {
	n, err := s.rdb.HLen(ctx, keys.QuietHeld()).Result()
	if err != nil && !errors.Is(err, redis.Nil) {
		return 0, unavailable("count held messages", err)
	}
	return n, nil
}
