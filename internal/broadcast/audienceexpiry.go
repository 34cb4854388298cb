package broadcast

import (
	"context"
	"fmt"
	"time"

	"github.com/herald-dev/herald/internal/durable"
	"github.com/herald-dev/herald/internal/keys"
)

// ExpireAudience makes owner's audience name expire ttl from now (its
// token's audience_ttl quota, internal/quota): an audience uploaded once
// and never again does not stay in Redis for ever. Uploading it again
// starts the time again.
func (s *Service) ExpireAudience(ctx context.Context, owner, name string, ttl time.Duration) error {
	k := keys.Audience(owner, name)
	durable.Wrote(ctx, k)
	if err := s.rdb.Expire(ctx, k, ttl).Err(); err != nil {
		return unavailable(fmt.Errorf("expire audience %s: %w", name, err))
	}
	return nil
}
