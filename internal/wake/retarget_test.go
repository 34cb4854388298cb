package wake

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"
)

func TestClassifyAndRetarget(t *testing.T) {
	cmd := redis.NewCmd(context.Background(), "evalsha", "abc", 4,
		"asynq:{low}:pending", "asynq:{low}:paused", "asynq:{low}:active", "asynq:{low}:lease",
		int64(1700000000), "asynq:{low}:t:")
	kind, q := classify(cmd)
	if kind != dequeue || q != "low" {
		t.Fatalf("classify = %v %q, want dequeue of low", kind, q)
	}
	retarget(cmd, "low", "critical")
	want := []any{"evalsha", "abc", 4, "asynq:{critical}:pending", "asynq:{critical}:paused",
		"asynq:{critical}:active", "asynq:{critical}:lease", int64(1700000000), "asynq:{critical}:t:"}
	for i, a := range cmd.Args() {
		if a != want[i] {
			t.Fatalf("arg %d = %v, want %v", i, a, want[i])
		}
	}
	fwd := redis.NewCmd(context.Background(), "evalsha", "def", 2, "asynq:{default}:retry", "asynq:{default}:pending", 1, "p", 2, "g")
	if kind, q := classify(fwd); kind != forward || q != "default" {
		t.Fatalf("classify forward = %v %q", kind, q)
	}
	if kind, _ := classify(redis.NewCmd(context.Background(), "get", "x")); kind != other {
		t.Fatal("a plain command is not a dequeue")
	}
}
