package broker

import (
	"log/slog"

	"github.com/hibiken/asynq"
)

// PlainServer is an asynq server on the Redis at addr with none of
// Herald's parts: no wake-up list, no lease sweep, no durable
// acknowledgements, and its log lines dropped. It is what a plain asynq
// deployment runs, for the benchmark's baseline (bench's ASYNQ scenario),
// which measures Herald's workers against it.
func PlainServer(addr string, concurrency int) *asynq.Server {
	return asynq.NewServer(asynq.RedisClientOpt{Addr: addr},
		asynq.Config{Concurrency: concurrency, Logger: asynqLogger{l: slog.New(slog.DiscardHandler)}, LogLevel: asynq.FatalLevel})
}
