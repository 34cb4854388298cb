package roster

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/keys"
	"github.com/herald-dev/herald/internal/oncall"
)

// The workers answer /oncall, but the routing file is the producers':
// each producer publishes the file's schedules: section (Catalog.Source)
// to Redis, and the workers read it from there (Snapshot).

// publish stores the schedules' source for the workers; nil clears it.
func publish(ctx context.Context, rdb redis.UniversalClient, source []byte) error {
	if len(source) == 0 {
		return rdb.Del(ctx, keys.OnCallSchedules()).Err()
	}
	return rdb.Set(ctx, keys.OnCallSchedules(), source, 0).Err()
}

// Snapshot is the schedules the producers published, for a process
// without the routing file (a worker answering /oncall). It parses the
// published YAML again only when it changed.
type Snapshot struct {
	rdb redis.UniversalClient

	mu   sync.Mutex
	sum  [32]byte
	last Catalog
}

// NewSnapshot reads the schedules published in rdb.
func NewSnapshot(rdb redis.UniversalClient) *Snapshot { return &Snapshot{rdb: rdb} }

// Catalog returns the published schedules (no policies); none when nothing
// is published.
func (s *Snapshot) Catalog(ctx context.Context) (Catalog, error) {
	raw, err := s.rdb.Get(ctx, keys.OnCallSchedules()).Bytes()
	switch {
	case errors.Is(err, redis.Nil):
		return Catalog{}, nil
	case err != nil:
		return Catalog{}, fmt.Errorf("roster: read the published schedules: %w", err)
	}
	sum := sha256.Sum256(raw)
	s.mu.Lock()
	defer s.mu.Unlock()
	if sum == s.sum {
		return s.last, nil
	}
	list, err := oncall.Parse("the published schedules", raw)
	if err != nil {
		return Catalog{}, err
	}
	c := Catalog{Schedules: make(map[string]oncall.Schedule, len(list))}
	for _, sch := range list {
		c.Schedules[sch.Name] = sch
	}
	s.sum, s.last = sum, c
	return c, nil
}
