package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// startedByGoRun reports whether exe is a binary `go run` built: it lives
// in a go-build directory of the temporary directory.
func startedByGoRun(exe string) bool {
	return strings.Contains(filepath.ToSlash(exe), "/go-build")
}

// parentGone returns a channel closed once the parent process has exited
// (this process was re-parented), checking every interval until ctx ends.
//
// `go run` does not pass SIGTERM on to the program it runs: `kill <pid of
// go run>` ends the go command and leaves Herald serving :8080. Run under
// go run, Herald therefore stops when its parent does. (Ctrl-C signals the
// whole process group and needs none of this.)
func parentGone(ctx context.Context, getppid func() int, interval time.Duration) <-chan struct{} {
	gone := make(chan struct{})
	parent := getppid()
	go func() {
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if getppid() != parent {
					close(gone)
					return
				}
			}
		}
	}()
	return gone
}

// stopWithGoRun cancels ctx's child when the go command that started this
// process exits; otherwise it returns ctx as is.
func stopWithGoRun(ctx context.Context, onStop func()) context.Context {
	exe, err := os.Executable()
	if err != nil || !startedByGoRun(exe) {
		return ctx
	}
	ctx, cancel := context.WithCancel(ctx)
	gone := parentGone(ctx, os.Getppid, 250*time.Millisecond)
	go func() {
		select {
		case <-gone:
			onStop()
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx
}
