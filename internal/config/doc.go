// Package config is the machinery of Herald's settings, and knows none of
// them: each component declares its own settings beside its Config (an
// Env constant, a Spec binding it to a field with its default and help,
// and a Check that reports what is out of bounds), and the settings
// package composes them into the producer's and the worker's.
//
// A Spec ties an environment variable and its flag to a field through a
// Binding (StringVar, DurationVar, IntVar and the others, or one of the
// component's own). Load resolves values in three layers: the defaults the
// fields hold, then the environment, then flags, so a flag always wins.
// Every environment variable has a flag whose name is the variable in
// kebab case without the HERALD_ prefix (HERALD_CONCURRENCY is
// -concurrency, REDIS_URL -redis-url); the token variables of named bots
// (HERALD_BOT_<NAME>_TOKEN and _FILE) are read from the environment only.
//
// Problems collects every validation failure so that all are reported at
// once; each names the variable, its flag and the fix (FieldError).
// Secrets are never echoed: SecretSpec masks them in Render and LogAttrs,
// and SecretPair reads a value or its _FILE variant without showing
// either in an error. Describe, Usage and MarkdownTable document a list of
// specs, which is how docs/CONFIGURATION.md's tables are generated and checked.
//
// The package imports no other Herald package (test/surface checks it).
package config
