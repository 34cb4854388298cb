// Package settings composes the settings of Herald's binaries from those
// their components declare: settings.Worker holds the worker's Config
// (worker.Config with its digests, ratelimit's limits, the Bot API
// client's telegram.Config, the Redis connection's redisconn.Config) and
// settings.Producer the producer's, and LoadWorker and LoadProducer fill
// them from defaults, the environment and flags, in that order.
//
// A component's settings are its own: their names, defaults, help and
// bounds are written once, in the component's settings.go (Specs and
// Check), and this package only concatenates the spec lists, runs the
// checks, and adds the rules that span components (a per-queue limit must
// name a queue HERALD_QUEUES lists) and the settings of the binaries
// themselves (listen addresses, the bots and their tokens). The callers
// pass the components' Configs on as loaded.
//
// WorkerSettings and ProducerSettings describe every setting; the
// tables of docs/CONFIGURATION.md are generated from them
// (go test ./internal/settings -run ConfigDoc -update) and a
// test keeps them current.
package settings
