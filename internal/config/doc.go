// Package config turns environment variables and command-line flags into the
// settings of Herald's two binaries, the worker and the producer.
//
// Each binary has one struct (Worker, Producer). Values are resolved in three
// layers: built-in defaults, then environment variables, then flags, so a flag
// always wins over the environment. Every environment variable has a flag whose
// name is the variable in kebab case without the HERALD_ prefix, for example
// HERALD_CONCURRENCY becomes -concurrency and REDIS_URL becomes -redis-url.
// The exception are the token variables of the bots HERALD_BOTS lists
// besides "default" (HERALD_BOT_<NAME>_TOKEN and _FILE): named after the
// bots, they are read from the environment only.
//
// Validation reports every problem at once (errors.Join); each message names
// the environment variable, the flag and what to change. Secrets (bot tokens,
// API tokens, Redis passwords) are never echoed in errors, String or LogValue.
//
// WorkerSettings and ProducerSettings describe every setting so that
// documentation can be generated from, and checked against, this package.
package config
