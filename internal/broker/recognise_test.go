package broker

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

func TestAggregationSetDeletedIsRecognised(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tests := []struct {
		args  []any
		queue string
	}{
		{[]any{"evalsha", "abc", 2, "asynq:{default}:g:-100123:7:5b1c", "asynq:{default}:aggregation_sets", "asynq:{default}:t:"}, "default"},
		{[]any{"eval", "script", 2, "asynq:{low}:g:42:5b1c", "asynq:{low}:aggregation_sets", "asynq:{low}:t:"}, "low"},
		{[]any{"evalsha", "abc", 1, "asynq:{default}:aggregation_sets", "1700000000"}, ""},
		{[]any{"evalsha", "abc", 4, "asynq:{default}:g:42", "asynq:{default}:g:42:x", "asynq:{default}:aggregation_sets", "asynq:{default}:groups"}, ""},
		{[]any{"get", "asynq:{default}:g:42:x"}, ""},
	}
	for _, tc := range tests {
		q, ok := aggregationSetDeleted(redis.NewCmd(ctx, tc.args...))
		if q != tc.queue || ok != (tc.queue != "") {
			t.Errorf("%v: got %q %v, want %q", tc.args, q, ok, tc.queue)
		}
	}
}
