package redistest

import (
	"context"
	"errors"
	"net"
	"strconv"
	"testing"
)

// TestPortTakenIsNoticed: a server started on a port another server holds
// must not pass for started (the Ping would reach the other one, and two
// tests would share a Redis).
func TestPortTakenIsNoticed(t *testing.T) {
	t.Parallel()
	first := Start(t)
	_, p, _ := net.SplitHostPort(first.Addr)
	port, _ := strconv.Atoi(p)
	second := newServer(Binary(t), t.TempDir(), port, Options{})
	err := second.start()
	if !errors.Is(err, errPortTaken) {
		second.Kill()
		t.Fatalf("start on a taken port: %v, want errPortTaken", err)
	}
	if second.Pid() != 0 {
		t.Errorf("the server that could not bind is still running (pid %d)", second.Pid())
	}
	if err := first.Client(t).Ping(context.Background()).Err(); err != nil {
		t.Errorf("the first server was disturbed: %v", err)
	}
}
