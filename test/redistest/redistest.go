// Package redistest starts a real redis-server for integration tests: on a
// free loopback port, in a temporary directory, owned by the test so it can be
// killed, paused and restarted on the same data. StartSentinelGroup starts a
// master, a replica and three sentinels (redis-server --sentinel, the same
// binary), and StartCluster a six-node Redis Cluster, all of them servers of
// this kind.
//
// When redis-server is not installed the test is skipped with a one-line
// reason, so `go test ./...` passes on a fresh machine; with
// HERALD_REQUIRE_REDIS=1 (as .ci/run sets it) a missing server fails the test.
package redistest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Server is one redis-server process.
type Server struct {
	Addr string // "127.0.0.1:port"
	Dir  string // working directory holding the AOF, kept across restarts
	// BusPort is the Cluster bus port of a node started with
	// Options.Cluster, 0 otherwise.
	BusPort int

	bin  string
	args []string
	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
}

// Options tune the server.
type Options struct {
	// AppendOnly turns on the AOF with appendfsync always, so a SIGKILL loses
	// nothing that was acknowledged.
	AppendOnly bool
	// Dir is the working directory; Start uses the test's temporary
	// directory, Launch a new temporary directory when empty.
	Dir string
	// Args go at the end of redis-server's command line, after the
	// defaults, so they override them (for instance "--replicaof",
	// "127.0.0.1", "6379").
	Args []string
	// Sentinel runs the process as a Redis Sentinel (redis-server
	// --sentinel, same binary) with Config as its configuration file.
	Sentinel bool
	// Config, when set, is written to redis.conf in Dir before the first
	// start and passed as the configuration file. A Sentinel rewrites it
	// as it learns the topology; a restart keeps the rewritten file.
	Config string
	// Cluster starts a Redis Cluster node (cluster-enabled) whose bus
	// listens on a free port of its own (Server.BusPort); a zero
	// NodeTimeout means 1s.
	Cluster     bool
	NodeTimeout time.Duration

	busPort int // chosen by Launch
}

// Binary returns the path of redis-server, or skips (or fails, when
// HERALD_REQUIRE_REDIS=1) the test when it is missing.
func Binary(tb testing.TB) string {
	tb.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("HERALD_REQUIRE_REDIS") == "1" {
			tb.Fatalf("redis-server not found in PATH and HERALD_REQUIRE_REDIS=1: install it (apt-get install -y redis-server)")
		}
		tb.Skip("redis-server not installed; skipping integration test (set HERALD_REQUIRE_REDIS=1 to fail instead)")
	}
	return bin
}

// Start launches redis-server for the test and stops it at cleanup.
func Start(tb testing.TB, opts ...Options) *Server {
	tb.Helper()
	var o Options
	if len(opts) > 0 {
		o = opts[0]
	}
	o.Dir = tb.TempDir()
	s, err := Launch(Binary(tb), o)
	if err != nil {
		tb.Fatalf("redistest: %v", err)
	}
	tb.Cleanup(s.Kill)
	return s
}

// Launch starts redis-server from bin without a testing.TB (for the benchmark
// command). The caller must Kill it.
func Launch(bin string, o Options) (*Server, error) {
	dir := o.Dir
	if dir == "" {
		d, err := os.MkdirTemp("", "herald-redis-")
		if err != nil {
			return nil, err
		}
		dir = d
	}
	// FreePort's port is free when asked, not when redis-server binds it: a
	// server started in parallel may take it first. start notices (the
	// server answering is not ours) and we try another port.
	var lastErr error
	for attempt := 0; attempt < 5; attempt++ {
		port, err := FreePort()
		if err != nil {
			return nil, fmt.Errorf("free port: %w", err)
		}
		if o.Cluster {
			bus, err := FreePort()
			if err != nil {
				return nil, fmt.Errorf("free port: %w", err)
			}
			o.busPort = bus
		}
		if o.Config != "" {
			conf := filepath.Join(dir, "redis.conf")
			if _, err := os.Stat(conf); errors.Is(err, os.ErrNotExist) {
				if err := os.WriteFile(conf, []byte(o.Config), 0o600); err != nil {
					return nil, err
				}
			}
		}
		s := newServer(bin, dir, port, o)
		err = s.start()
		if err == nil {
			return s, nil
		}
		if !errors.Is(err, errPortTaken) {
			return nil, err
		}
		lastErr = err
	}
	return nil, lastErr
}

// errPortTaken: another process answered on the port redis-server was
// started on.
var errPortTaken = errors.New("the port was taken by another server")

func newServer(bin, dir string, port int, o Options) *Server {
	s := &Server{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), Dir: dir, bin: bin, BusPort: o.busPort}
	if o.Config != "" {
		s.args = append(s.args, filepath.Join(dir, "redis.conf"))
	}
	if o.Sentinel {
		s.args = append(s.args, "--sentinel")
	}
	s.args = append(s.args,
		"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", dir,
		"--save", "", "--protected-mode", "yes", "--loglevel", "warning",
		"--maxmemory-policy", "noeviction",
	)
	if o.AppendOnly {
		s.args = append(s.args, "--appendonly", "yes", "--appendfsync", "always")
	} else {
		s.args = append(s.args, "--appendonly", "no")
	}
	if o.Cluster {
		timeout := o.NodeTimeout
		if timeout == 0 {
			timeout = time.Second
		}
		s.args = append(s.args, "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
			"--cluster-port", strconv.Itoa(o.busPort), "--cluster-node-timeout", strconv.FormatInt(timeout.Milliseconds(), 10))
	}
	s.args = append(s.args, o.Args...)
	return s
}

// URL returns the redis:// URL of the server.
func (s *Server) URL() string { return "redis://" + s.Addr + "/0" }

// Client returns a go-redis client closed at test cleanup.
func (s *Server) Client(tb testing.TB) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: s.Addr})
	tb.Cleanup(func() { _ = c.Close() })
	return c
}

func (s *Server) start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	cmd := exec.Command(s.bin, s.args...)
	cmd.Dir = s.Dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	logf, err := os.Create(filepath.Join(s.Dir, "redis.log"))
	if err != nil {
		return err
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("start redis-server: %w", err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); logf.Close(); close(done) }()
	s.cmd, s.done = cmd, done
	return s.waitReady(cmd.Process.Pid, done)
}

// waitReady waits until the server answers, and checks that the one
// answering is the process just started (pid), not another test's server
// that took the port first.
func (s *Server) waitReady(pid int, done chan struct{}) error {
	c := redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	defer c.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		select {
		case <-done:
			return fmt.Errorf("redis-server exited at start: %s", s.logTail())
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		info, err := c.Info(ctx, "server").Result()
		cancel()
		if err == nil {
			if strings.Contains(info, "process_id:"+strconv.Itoa(pid)+"\r\n") {
				return nil
			}
			// Ours cannot bind the port; make sure it is gone.
			s.killLocked(done)
			return fmt.Errorf("redis-server on %s: %w", s.Addr, errPortTaken)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("redis-server on %s not ready after 10s: %v", s.Addr, err)
		}
		time.Sleep(10 * time.Millisecond) // polling a port that is not listening yet: no signal exists
	}
}

func (s *Server) logTail() string {
	f, err := os.Open(filepath.Join(s.Dir, "redis.log"))
	if err != nil {
		return ""
	}
	defer f.Close()
	var last string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		last = sc.Text()
	}
	return last
}

// killLocked kills the process start just launched; s.mu is held.
func (s *Server) killLocked(done chan struct{}) {
	if s.cmd != nil {
		_ = s.cmd.Process.Kill()
		<-done
		s.cmd = nil
	}
}

// Kill stops the server with SIGKILL (a crash, not a shutdown) and waits for it.
func (s *Server) Kill() {
	s.mu.Lock()
	cmd, done := s.cmd, s.done
	s.cmd = nil
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Kill()
	<-done
}

// Restart starts the server again on the same port and directory (and so the
// same AOF, when AppendOnly is on).
func (s *Server) Restart(tb testing.TB) {
	tb.Helper()
	s.Kill()
	if err := s.start(); err != nil {
		tb.Fatalf("redistest: restart: %v", err)
	}
}

// Pause stops the server with SIGSTOP: it keeps its sockets and data but
// answers nothing, reads nothing and sends nothing (a replica falls
// behind, a master looks dead) until Resume. Kill and Restart work on a
// paused server.
//
// Pause returns once the kernel reports the process stopped: SIGSTOP takes
// effect asynchronously, and a server that runs on for a moment would
// still acknowledge what a test sends right after.
func (s *Server) Pause() error {
	if err := s.signal(syscall.SIGSTOP); err != nil {
		return err
	}
	stat := fmt.Sprintf("/proc/%d/stat", s.Pid())
	deadline := time.Now().Add(2 * time.Second)
	for {
		b, err := os.ReadFile(stat)
		if err != nil {
			return err
		}
		// The state follows the parenthesised command name: "pid (comm) T ...".
		if i := strings.LastIndexByte(string(b), ')'); i > 0 && i+2 < len(b) && (b[i+2] == 'T' || b[i+2] == 't') {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("redis-server on %s not stopped 2s after SIGSTOP: %s", s.Addr, b)
		}
		time.Sleep(time.Millisecond) // the kernel sends no notice of the stop to non-parents waiting this way
	}
}

// Resume continues a paused server with SIGCONT.
func (s *Server) Resume() error { return s.signal(syscall.SIGCONT) }

func (s *Server) signal(sig syscall.Signal) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return fmt.Errorf("redis-server on %s is not running", s.Addr)
	}
	return s.cmd.Process.Signal(sig)
}

// Pid returns the server's process id, or 0 when it is not running.
func (s *Server) Pid() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return 0
	}
	return s.cmd.Process.Pid
}

// FreePort asks the kernel for an unused loopback TCP port.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
