package local_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/local"
	"github.com/herald-dev/herald/internal/telegramfake"
)

// lockedBuffer is the banner as the local mode prints it from its goroutine.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// localMode is one run of the local mode on free ports.
type localMode struct {
	ep     local.Endpoints
	banner *lockedBuffer
	ctx    context.Context
	stop   func() error // ends the run and returns local.Run's error
}

// startLocal runs the local mode until the test ends (or stop is called)
// and waits until it serves.
func startLocal(t *testing.T) *localMode {
	t.Helper()
	return startLocalWith(t, nil)
}

// startLocalWith is startLocal with options changed by edit (nil: none).
func startLocalWith(t *testing.T, edit func(*local.Options)) *localMode {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	ready := make(chan local.Endpoints, 1)
	banner := &lockedBuffer{}
	done := make(chan error, 1)
	o := local.Options{
		Listen: "127.0.0.1:0", RedisListen: "127.0.0.1:0", Out: banner,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Ready:  func(e local.Endpoints) { ready <- e },
	}
	if edit != nil {
		edit(&o)
	}
	go func() { done <- local.Run(ctx, o) }()
	m := &localMode{banner: banner, ctx: ctx, stop: func() error { cancel(); return <-done }}
	select {
	case m.ep = <-ready:
	case err := <-done:
		t.Fatalf("local.Run returned early: %v", err)
	}
	return m
}

// waitOne waits until the fake Telegram of m has received one message and
// returns it.
func (m *localMode) waitOne(t *testing.T) telegramfake.Message {
	t.Helper()
	fake := telegramfake.Remote{URL: m.ep.FakeTelegram}
	for {
		ms, err := fake.Messages(m.ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(ms) == 1 {
			return ms[0]
		}
		if m.ctx.Err() != nil {
			t.Fatal("message not delivered in time")
		}
		time.Sleep(20 * time.Millisecond) // the fake's API is the interface; it has no push
	}
}
