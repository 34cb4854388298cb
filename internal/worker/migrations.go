package worker

import (
	"sync"
	"time"
)

// migrationCache remembers chat migrations (and @username ids) in-process,
// per bot. Entries with a zero expiry never expire.
type migrationCache struct {
	mu sync.Mutex
	m  map[string]migrationEntry
}

type migrationEntry struct {
	to      string
	expires time.Time
}

const migrationCacheMax = 100_000

func (c *migrationCache) get(bot, chat string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[bot+"/"+chat]
	if !ok || (!e.expires.IsZero() && time.Now().After(e.expires)) {
		return "", false
	}
	return e.to, true
}

func (c *migrationCache) put(bot, chat, to string, ttl time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= migrationCacheMax {
		c.m = map[string]migrationEntry{} // crude bound: start over
	}
	e := migrationEntry{to: to}
	if ttl > 0 {
		e.expires = time.Now().Add(ttl)
	}
	c.m[bot+"/"+chat] = e
}
