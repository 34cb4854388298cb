package main

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

type redisStats struct{ rdb *redis.Client }

func newRedisStats(addr string) *redisStats {
	return &redisStats{rdb: redis.NewClient(&redis.Options{Addr: addr})}
}

func (r *redisStats) close() { _ = r.rdb.Close() }

// commands returns the total number of commands Redis has executed, from
// INFO commandstats, excluding the INFO calls themselves.
func (r *redisStats) commands(ctx context.Context) (int64, error) {
	by, err := r.breakdown(ctx)
	if err != nil {
		return 0, err
	}
	var total int64
	for name, n := range by {
		if name != "info" {
			total += n
		}
	}
	return total, nil
}

// breakdown returns calls per command name from INFO commandstats.
func (r *redisStats) breakdown(ctx context.Context) (map[string]int64, error) {
	s, err := r.rdb.Info(ctx, "commandstats").Result()
	if err != nil {
		return nil, err
	}
	out := map[string]int64{}
	for _, line := range strings.Split(s, "\n") {
		if !strings.HasPrefix(line, "cmdstat_") {
			continue
		}
		name, rest, _ := strings.Cut(strings.TrimPrefix(line, "cmdstat_"), ":")
		i := strings.Index(rest, "calls=")
		if i < 0 {
			continue
		}
		v := rest[i+len("calls="):]
		if j := strings.IndexByte(v, ','); j >= 0 {
			v = v[:j]
		}
		n, _ := strconv.ParseInt(v, 10, 64)
		out[name] = n
	}
	return out, nil
}

// cpu is the CPU time Redis has used so far (INFO cpu, user and system).
func (r *redisStats) cpu(ctx context.Context) (time.Duration, error) {
	s, err := r.rdb.Info(ctx, "cpu").Result()
	if err != nil {
		return 0, err
	}
	var total float64
	for _, line := range strings.Split(s, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if ok && (k == "used_cpu_user" || k == "used_cpu_sys") {
			f, _ := strconv.ParseFloat(v, 64)
			total += f
		}
	}
	return time.Duration(total * float64(time.Second)), nil
}

// idle measures commands per second over d while nothing is sent.
func (r *redisStats) idle(ctx context.Context, d time.Duration) (float64, error) {
	// Let start-up traffic settle first.
	select {
	case <-time.After(2 * time.Second):
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	a, err := r.commands(ctx)
	if err != nil {
		return 0, err
	}
	select {
	case <-time.After(d):
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	b, err := r.commands(ctx)
	if err != nil {
		return 0, err
	}
	return float64(b-a) / d.Seconds(), nil
}
