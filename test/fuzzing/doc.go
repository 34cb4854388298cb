// Package fuzzing runs every fuzz target of the module for a fixed time when
// HERALD_FUZZ_TIME is set (CI sets it). The targets' seed corpora already run
// in every plain `go test`; this adds a short burst of real fuzzing so new
// inputs are explored on every CI run without a second test command.
package fuzzing
