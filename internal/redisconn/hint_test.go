package redisconn

import (
	"strings"
	"testing"
)

// TestReplicaHint names the fix in the URL's own terms and no password.
func TestReplicaHint(t *testing.T) {
	t.Parallel()
	plain := Config{URL: "redis://u:secret@cache:6379/0"}.ReplicaHint()
	if !strings.Contains(plain, "redis-sentinel://") || !strings.Contains(plain, EnvURL) || strings.Contains(plain, "secret") {
		t.Errorf("plain URL hint: %q", plain)
	}
	if h := (Config{URL: "redis-sentinel://:secret@s1/0?master=m"}).ReplicaHint(); !strings.Contains(h, `"m"`) || strings.Contains(h, "secret") {
		t.Errorf("sentinel hint: %q", h)
	}
	if h := (Config{URL: "redis-cluster://n1"}).ReplicaHint(); !strings.Contains(h, "slot map") {
		t.Errorf("cluster hint: %q", h)
	}
}
