package app

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/herald-dev/herald/internal/redisconn"
	"github.com/redis/go-redis/v9"
)

// checkRedisAuth pings Redis once at start-up and fails fast when Redis
// refuses the credentials (or the database) of REDIS_URL: retrying cannot
// fix those, and without this check the process would start and log the
// same refusal several times a second. A Redis that is down or slow is not
// an error here: the producer answers 503 and the worker waits until it
// comes back.
func checkRedisAuth(ctx context.Context, rdb redis.UniversalClient, redacted string) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	err := rdb.Ping(ctx).Err()
	if err == nil || !isRedisRefusal(err) {
		return nil
	}
	return fmt.Errorf("redis at %s refused the connection: %v: fix the user name, password or database in %s (-redis-url)",
		redacted, err, redisconn.EnvURL)
}

// isRedisRefusal reports errors that only a configuration change fixes:
// authentication and permission errors, an unknown database.
func isRedisRefusal(err error) bool {
	var rerr redis.Error
	if !errors.As(err, &rerr) {
		return false
	}
	msg := rerr.Error()
	for _, prefix := range []string{"WRONGPASS", "NOAUTH", "NOPERM"} {
		if strings.HasPrefix(msg, prefix) {
			return true
		}
	}
	return strings.Contains(msg, "invalid password") || strings.Contains(msg, "DB index is out of range") ||
		strings.Contains(msg, "without any password configured")
}
