package broadcast_test

import (
	"context"
	"errors"
	"strconv"
	"testing"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/broadcast"
	"github.com/herald-dev/herald/internal/chats"
	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/ledger"
	"github.com/herald-dev/herald/test/redistest"
)

// fixture is a Service on a real redis-server.
type fixture struct {
	rdb *redis.Client
	enq *jobs.Enqueuer
	svc *broadcast.Service
}

func newFixture(t testing.TB, cfg broadcast.Config) *fixture {
	t.Helper()
	rdb := redistest.Start(t).Client(t)
	return newFixtureOn(t, rdb, cfg)
}

func newFixtureOn(t testing.TB, rdb *redis.Client, cfg broadcast.Config) *fixture {
	t.Helper()
	enq := jobs.NewEnqueuer(rdb, jobs.EnqueueConfig{Limits: jobs.Limits{Bots: []string{"default", "pages"}}})
	svc := broadcast.New(rdb, enq, chats.NewStore(rdb), ledger.NewStore(rdb, ledger.Config{}), cfg)
	return &fixture{rdb: rdb, enq: enq, svc: svc}
}

// chatList is n numeric chat ids from first on.
func chatList(first, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = strconv.Itoa(first + i)
	}
	return out
}

// pending is the number of tasks waiting in the broadcast queue.
func (f *fixture) pending(t testing.TB) int64 {
	t.Helper()
	n, err := f.rdb.LLen(context.Background(), "asynq:{"+jobs.QueueBroadcast+"}:pending").Result()
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// payload decodes the stored message of a broadcast's chat.
func (f *fixture) payload(t testing.TB, id, chat string) jobs.SendMessage {
	t.Helper()
	info, err := asynq.NewInspectorFromRedisClient(f.rdb).GetTaskInfo(jobs.QueueBroadcast, broadcast.TaskID(id, chat))
	if err != nil {
		t.Fatalf("no task for chat %s: %v", chat, err)
	}
	m, err := jobs.Decode(info.Payload)
	if err != nil {
		t.Fatalf("payload of chat %s: %v", chat, err)
	}
	return m
}

// fields returns the fields a validation error names.
func fields(t testing.TB, err error) map[string]string {
	t.Helper()
	var verr *jobs.ValidationError
	if !errors.As(err, &verr) {
		t.Fatalf("error %v is not a ValidationError", err)
	}
	out := map[string]string{}
	for _, f := range verr.Fields {
		out[f.Field] = f.Message
	}
	return out
}

// settle writes the ledger's record of a broadcast's message, as a
// worker does when it settles it.
func (f *fixture) settle(t testing.TB, id, chat string, r ledger.Record) {
	t.Helper()
	if err := ledger.NewStore(f.rdb, ledger.Config{}).Put(context.Background(), "", broadcast.TaskID(id, chat), r); err != nil {
		t.Fatal(err)
	}
}

var ctx = context.Background()

func photoData() *jobs.Photo { return &jobs.Photo{Data: []byte("\x89PNG"), Name: "a.png"} }
