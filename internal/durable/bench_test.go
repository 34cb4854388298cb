package durable_test

import (
	"context"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/durable"
	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/test/redistest"
)

// BenchmarkAcknowledge measures what a durable acknowledgement adds to one
// message with an idempotency key (the producer's path: Enqueue, then
// Settle), on loopback redis-server processes:
//
//   - off: no wait (HERALD_REDIS_WAIT_REPLICAS=0);
//   - auto-alone: auto on a server without replicas (the default on a
//     single Redis): one INFO replication per second, nothing per message;
//   - wait1: one replica confirms each message (auto with a replica, or 1).
//
// Besides ns/op it reports the commands the master processed per message
// (INFO stats, so asynq's scripts count once) and the round trips the
// client made (pipelines count once).
//
//	go test ./internal/durable -run '^$' -bench Acknowledge -benchtime 2000x
func BenchmarkAcknowledge(b *testing.B) {
	alone := redistest.Start(b)
	master := redistest.Start(b)
	host, port, _ := strings.Cut(master.Addr, ":")
	replica := redistest.Start(b, redistest.Options{Args: []string{"--replicaof", host, port}})
	ctx := context.Background()
	if err := redistest.WaitInSync(ctx, replica); err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		server *redistest.Server
		cfg    durable.Config
	}{
		{"off", master, durable.Config{}},
		{"auto-alone", alone, durable.Config{Auto: true}},
		{"wait1", master, durable.Config{Replicas: 1}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			rdb := redis.NewClient(&redis.Options{Addr: tc.server.Addr})
			defer rdb.Close()
			var trips atomic.Int64
			rdb.AddHook(tripCounter{&trips})
			enq := jobs.NewEnqueuer(rdb, jobs.EnqueueConfig{Durable: durable.New(rdb, tc.cfg)})
			before := processed(b, tc.server)
			b.ResetTimer()
			for i := range b.N {
				c := durable.Track(ctx)
				req := jobs.Request{Message: jobs.SendMessage{Chat: "42", Text: "bench", IdempotencyKey: tc.name + strconv.Itoa(i) + strconv.FormatInt(time.Now().UnixNano(), 36)}}
				if _, err := enq.Enqueue(c, req); err != nil {
					b.Fatal(err)
				}
				if err := enq.Settle(c); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			// INFO itself is one command.
			b.ReportMetric(float64(processed(b, tc.server)-before-1)/float64(b.N), "redis-cmds/op")
			b.ReportMetric(float64(trips.Load())/float64(b.N), "round-trips/op")
		})
	}
}

// processed returns the server's total_commands_processed.
func processed(b *testing.B, s *redistest.Server) int64 {
	c := redis.NewClient(&redis.Options{Addr: s.Addr})
	defer c.Close()
	info, err := c.Info(context.Background(), "stats").Result()
	if err != nil {
		b.Fatal(err)
	}
	for line := range strings.SplitSeq(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, "total_commands_processed:"); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	b.Fatal("no total_commands_processed in INFO stats")
	return 0
}

// tripCounter counts the client's round trips.
type tripCounter struct{ n *atomic.Int64 }

func (t tripCounter) DialHook(next redis.DialHook) redis.DialHook { return next }

func (t tripCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error { t.n.Add(1); return next(ctx, cmd) }
}

func (t tripCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error { t.n.Add(1); return next(ctx, cmds) }
}
