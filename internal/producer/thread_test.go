package producer_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/herald-dev/herald/internal/httpapi"
	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/keys"
	"github.com/herald-dev/herald/internal/producer"
)

// TestMessageThreadsAreTheTokens: a message's thread key is stored in the
// namespace of the token that sent it, so two tokens naming one key open
// two threads, and neither reaches an alert's thread.
func TestMessageThreadsAreTheTokens(t *testing.T) {
	t.Parallel()
	h, b := newTestAPI(t, func(c *producer.Config) { c.Keyring = testKeyring(t, testToken, testAdminToken) })
	asAdmin := hdr("Authorization", "Bearer "+testAdminToken)
	const open = `{"chat":"42","text":"x","thread":{"key":"disk/default","mode":"open"}}`
	for _, tc := range []struct {
		name   string
		header http.Header
		want   string
	}{
		{"api", nil, "msg/api/disk/default"},
		{"admin", asAdmin, "msg/admin/disk/default"},
	} {
		res := accepted(t, do(h, request{body: open, header: tc.header}))
		m, _ := b.task(t, res.Queue, res.TaskID)
		if m.Thread == nil || m.Thread.Key != tc.want {
			t.Errorf("%s: stored thread %+v, want key %s", tc.name, m.Thread, tc.want)
		}
		if v, _ := b.rdb.Get(context.Background(), keys.Bot("").Thread("42", tc.want)).Result(); v != "pending" {
			t.Errorf("%s: thread record %q, want pending", tc.name, v)
		}
	}
	if n := b.rdb.Exists(context.Background(), keys.Bot("").Thread("42", "alert/disk/default")).Val(); n != 0 {
		t.Error("a message marked the alert's thread open")
	}
}

// TestMessageThreadKeyLimit: the limit on thread.key is on the key as the
// client wrote it, and the error names thread.key.
func TestMessageThreadKeyLimit(t *testing.T) {
	t.Parallel()
	h, b := newTestAPI(t, nil)
	key := strings.Repeat("k", jobs.MaxThreadKey)
	res := accepted(t, post(h, `{"chat":"42","text":"x","thread":{"key":"`+key+`","mode":"open"}}`))
	if m, _ := b.task(t, res.Queue, res.TaskID); m.Thread == nil || m.Thread.Key != "msg/api/"+key {
		t.Fatalf("stored thread %+v", m.Thread)
	}
	eb := errorBody(t, post(h, `{"chat":"42","text":"x","thread":{"key":"`+key+`k","mode":"open"}}`), http.StatusBadRequest, httpapi.CodeInvalidField)
	if msg := fieldMessages(eb)["thread.key"]; !strings.Contains(msg, "the limit is 256") || len(eb.Error.Fields) != 1 {
		t.Fatalf("fields %+v, want thread.key over the limit of 256", eb.Error.Fields)
	}
}

// TestMessageThreadsWithoutAuth: with authentication off, every message's
// thread is the local principal's.
func TestMessageThreadsWithoutAuth(t *testing.T) {
	t.Parallel()
	h, b := newTestAPI(t, func(c *producer.Config) { c.Keyring = httpapi.OpenKeyring() })
	res := accepted(t, do(h, request{noAuth: true, body: `{"chat":"42","text":"x","thread":{"key":"x","mode":"reply"}}`}))
	if m, _ := b.task(t, res.Queue, res.TaskID); m.Thread == nil || m.Thread.Key != "msg/local/x" {
		t.Fatalf("stored thread %+v, want msg/local/x", m.Thread)
	}
}
