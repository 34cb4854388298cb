package redisconn

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"testing"

	"github.com/redis/go-redis/v9"
)

// TestClusterReloadsOnRefusal: a node that refuses connections makes the
// cluster client reload its slot map at once (the hook), rather than at
// the next interval.
func TestClusterReloadsOnRefusal(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{nil, false}, {redis.Nil, false}, {context.Canceled, false},
		{&net.OpError{Op: "dial", Err: errors.New("connect: connection refused")}, true},
		{io.EOF, true}, {redis.ErrClosed, true},
		{&net.OpError{Op: "read", Err: os.ErrDeadlineExceeded}, true}, // a hung node
		{errors.New("READONLY You can't write against a read only replica."), true},
		{errors.New("CLUSTERDOWN The cluster is down"), true},
		{errors.New("ERR wrong number of arguments"), false},
	} {
		if got := topologyChanged(tc.err); got != tc.want {
			t.Errorf("topologyChanged(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
