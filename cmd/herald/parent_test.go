package main

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

func TestStartedByGoRun(t *testing.T) {
	t.Parallel()
	for exe, want := range map[string]bool{
		"/tmp/go-build3385617227/b001/exe/herald": true,
		"/home/me/.cache/go-build/herald":         true,
		"/usr/local/bin/herald":                   false,
		"/work/main/bin/herald":                   false,
	} {
		if got := startedByGoRun(exe); got != want {
			t.Errorf("startedByGoRun(%q) = %v, want %v", exe, got, want)
		}
	}
}

// TestParentGone: the channel closes when the parent pid changes, and not
// before.
func TestParentGone(t *testing.T) {
	t.Parallel()
	var ppid atomic.Int64
	ppid.Store(100)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	gone := parentGone(ctx, func() int { return int(ppid.Load()) }, time.Millisecond)
	select {
	case <-gone:
		t.Fatal("gone while the parent is still there")
	case <-time.After(20 * time.Millisecond): // 20 checks with the parent in place
	}
	ppid.Store(1)
	select {
	case <-gone:
	case <-time.After(10 * time.Second):
		t.Fatal("parent change not noticed")
	}
}

// TestStopsWhenGoRunIsKilled reproduces issue 14: herald built as `go run`
// builds it, started by a parent that is then killed (as `kill <pid of go
// run>` does to the go command), must exit and free its port. The test
// waits for herald's stdout to close: only herald's exit closes it.
func TestStopsWhenGoRunIsKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("builds cmd/herald")
	}
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	exe := filepath.Join(t.TempDir(), "go-build123", "b001", "exe", "herald")
	if out, err := exec.Command("go", "build", "-o", exe, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	// sh plays the go command: it starts herald and waits for it.
	parent := exec.Command("sh", "-c", `"$0" -listen 127.0.0.1:0 -redis-listen 127.0.0.1:0 & echo "pid $!"; wait`, exe)
	parent.Env = append(os.Environ(), "LOG_FORMAT=text")
	// A plain pipe, not StdoutPipe: Wait on the parent must not close our
	// end, which herald holds open until it exits.
	stdout, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdout.Close()
	parent.Stdout = w
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	lines := bufio.NewScanner(stdout)
	var pid int
	for lines.Scan() {
		if p, ok := strings.CutPrefix(lines.Text(), "pid "); ok {
			pid, _ = strconv.Atoi(p)
		}
		if strings.HasPrefix(lines.Text(), "Herald is running locally") {
			break
		}
	}
	if pid == 0 {
		t.Fatalf("herald did not start (pid %d, scan error %v)", pid, lines.Err())
	}
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	_ = parent.Process.Kill() // SIGKILL: nothing is passed on, as with go run and SIGTERM
	_ = parent.Wait()

	closed := make(chan struct{})
	go func() {
		for lines.Scan() {
		}
		close(closed)
	}()
	select {
	case <-closed:
	case <-time.After(15 * time.Second):
		t.Fatal("herald kept running after the process that started it was killed")
	}
}
