package alerts

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/ledger"
	"github.com/redis/go-redis/v9"
)

// fakeSilencer silences the alerts whose title starts with "mute", as
// silence "s-1", and keeps what it was asked to record.
type fakeSilencer struct {
	mu       sync.Mutex
	recorded []SilencedAlert
	err      error // returned by Silenced
	recErr   error // returned by Record
}

func (f *fakeSilencer) Silenced(_ context.Context, a *Alert, _ time.Time) (string, error) {
	if f.err != nil {
		return "", f.err
	}
	if strings.HasPrefix(a.Title, "mute") {
		return "s-1", nil
	}
	return "", nil
}

func (f *fakeSilencer) Record(_ context.Context, caught []SilencedAlert, _ time.Time) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.recErr != nil {
		return f.recErr
	}
	f.recorded = append(f.recorded, caught...)
	return nil
}

// fakeHolder keeps held requests.
type fakeHolder struct {
	mu    sync.Mutex
	reqs  []jobs.Request
	until []time.Time
}

func (f *fakeHolder) Hold(_ context.Context, req jobs.Request, until time.Time) (jobs.Result, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reqs = append(f.reqs, req)
	f.until = append(f.until, until)
	return jobs.Result{TaskID: "held-" + req.Message.Chat, Queue: req.Queue, Coalesced: true}, nil
}

const quietTable = `
routes:
  - name: night
    match: {labels: {team: db}}
    quiet_hours: {start: "22:00", end: "07:00", time_zone: Europe/Berlin}
    destinations: ["1"]
  - name: always
    match: {labels: {team: db}}
    destinations: ["2"]
`

// TestDispatchSilenced: a silenced alert sends nothing, needs no route, is
// recorded with its silence and reported as silenced; the rest of the
// batch goes on.
func TestDispatchSilenced(t *testing.T) {
	t.Parallel()
	rec, sil := &recorder{}, &fakeSilencer{}
	r := newTestRouter(t, "routes:\n  - name: db\n    match: {labels: {team: db}}\n    destinations: [\"1\"]\n", rec)
	r.cfg.Silences = sil
	mr := miniredis.RunT(t)
	book := ledger.NewStore(redis.NewClient(&redis.Options{Addr: mr.Addr()}), ledger.Config{})
	r.cfg.Ledger = book
	res, err := r.Dispatch(context.Background(), []Alert{
		{Title: "mute me", Fingerprint: "fp-1", Labels: map[string]string{"team": "web"}}, // no route, but silenced
		{Title: "send me", Labels: map[string]string{"team": "db"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := rec.requests(); len(got) != 1 || got[0].Message.Chat != "1" {
		t.Fatalf("enqueued %+v, want one message to chat 1", got)
	}
	if len(res.Silenced) != 1 || res.Silenced[0].Index != 0 || res.Silenced[0].SilencedBy != "s-1" || res.Silenced[0].Fingerprint != "fp-1" {
		t.Fatalf("Silenced = %+v", res.Silenced)
	}
	// The ledger answers for the silenced alert under the id the answer gives.
	lr, ok, err := book.Get(context.Background(), "", res.Silenced[0].TaskID)
	if err != nil || !ok || lr.State != ledger.StateSilenced || lr.Silence != "s-1" {
		t.Fatalf("ledger record of the silenced alert %q = %+v (%v, %v)", res.Silenced[0].TaskID, lr, ok, err)
	}
	if len(sil.recorded) != 1 || sil.recorded[0].Alert.Title != "mute me" || sil.recorded[0].SilencedBy != "s-1" {
		t.Fatalf("recorded %+v", sil.recorded)
	}
	if sil.recorded[0].Alert.Severity != SeverityInfo {
		t.Errorf("the recorded alert is not normalised: %+v", sil.recorded[0].Alert)
	}
}

// TestDispatchSilencedInvalidBatch: a batch refused for a bad alert records
// nothing, silenced alerts included.
func TestDispatchSilencedInvalidBatch(t *testing.T) {
	t.Parallel()
	rec, sil := &recorder{}, &fakeSilencer{}
	r := newTestRouter(t, dispatchTable, rec)
	r.cfg.Silences = sil
	_, err := r.Dispatch(context.Background(), []Alert{{Title: "mute me"}, {Title: ""}})
	var verr *jobs.ValidationError
	if !errors.As(err, &verr) {
		t.Fatalf("err = %v, want a validation error", err)
	}
	if len(sil.recorded) != 0 || len(rec.requests()) != 0 {
		t.Fatalf("recorded %d, enqueued %d; want nothing", len(sil.recorded), len(rec.requests()))
	}
}

// TestDispatchSilencerErrors: a silence store that cannot answer or
// record fails the dispatch with its error, before anything is enqueued.
func TestDispatchSilencerErrors(t *testing.T) {
	t.Parallel()
	for _, sil := range []*fakeSilencer{{err: jobs.ErrUnavailable}, {recErr: jobs.ErrUnavailable}} {
		rec := &recorder{}
		r := newTestRouter(t, dispatchTable, rec)
		r.cfg.Silences = sil
		_, err := r.Dispatch(context.Background(), []Alert{{Title: "mute me"}, {Title: "send me"}})
		if !errors.Is(err, jobs.ErrUnavailable) {
			t.Fatalf("err = %v, want ErrUnavailable", err)
		}
		if len(rec.requests()) != 0 {
			t.Fatalf("enqueued %d messages", len(rec.requests()))
		}
	}
}

// TestDispatchQuietHours: in a route's quiet hours its non-critical
// messages go to the Holder with the alert's digest entry, until the end
// of the window; critical ones and other routes' messages are enqueued.
func TestDispatchQuietHours(t *testing.T) {
	t.Parallel()
	berlin := mustZone(t, "Europe/Berlin")
	rec, h := &recorder{}, &fakeHolder{}
	r := newTestRouter(t, quietTable, rec)
	r.cfg.Holder = h
	night := time.Date(2026, 6, 10, 23, 0, 0, 0, berlin)
	r.cfg.Now = func() time.Time { return night }
	res, err := r.Dispatch(context.Background(), []Alert{
		{Title: "disk 91%", Severity: SeverityWarning, URL: "https://x.test/d", Body: "db-1", Labels: map[string]string{"team": "db"}},
		{Title: "db down", Severity: SeverityCritical, Labels: map[string]string{"team": "db"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	wantUntil := time.Date(2026, 6, 11, 7, 0, 0, 0, berlin)
	if len(h.reqs) != 1 || h.reqs[0].Message.Chat != "1" || !h.until[0].Equal(wantUntil) {
		t.Fatalf("held %+v until %v", h.reqs, h.until)
	}
	if it := h.reqs[0].Item; !h.reqs[0].Coalesce || it == nil || it.Title != "disk 91%" || it.URL != "https://x.test/d" || it.Summary != "db-1" {
		t.Fatalf("held request %+v, item %+v", h.reqs[0], it)
	}
	var chats []string
	for _, q := range rec.requests() {
		chats = append(chats, q.Message.Chat)
	}
	// The warning's other route, then both routes of the critical alert.
	if strings.Join(chats, ",") != "2,1,2" {
		t.Fatalf("enqueued to %v, want 2,1,2", chats)
	}
	if len(res.Held) != 1 || res.Held[0].Route != "night" || !res.Held[0].Until.Equal(wantUntil) || res.Held[0].TaskID != "held-1" ||
		len(res.Messages) != 3 {
		t.Fatalf("result %+v", res)
	}

	// By day nothing is held.
	r.cfg.Now = func() time.Time { return night.Add(9 * time.Hour) }
	if res, err := r.Dispatch(context.Background(), []Alert{{Title: "disk 92%", Labels: map[string]string{"team": "db"}}}); err != nil || len(res.Held) != 0 || len(res.Messages) != 2 {
		t.Fatalf("by day: %+v, %v", res, err)
	}
}

// TestDispatchQuietHoursWithoutHolder: without a Holder quiet hours do
// not apply.
func TestDispatchQuietHoursWithoutHolder(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	r := newTestRouter(t, quietTable, rec)
	r.cfg.Now = func() time.Time { return time.Date(2026, 6, 10, 23, 0, 0, 0, mustZone(t, "Europe/Berlin")) }
	res, err := r.Dispatch(context.Background(), []Alert{{Title: "disk", Labels: map[string]string{"team": "db"}}})
	if err != nil || len(res.Messages) != 2 || len(res.Held) != 0 {
		t.Fatalf("%+v, %v", res, err)
	}
}

// TestAPISilencedResponse: POST /v1/alerts says which silence caught an
// alert.
func TestAPISilencedResponse(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	r := newTestRouter(t, dispatchTable, rec)
	r.cfg.Silences = &fakeSilencer{}
	h := NewAPIHandler(r, 0, quietLogger())
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/v1/alerts", strings.NewReader(`{"title":"mute the disk alert","severity":"warning"}`)))
	if w.Code != http.StatusAccepted {
		t.Fatalf("status %d: %s", w.Code, w.Body)
	}
	var body struct {
		Messages []jobs.Result `json:"messages"`
		Silenced []struct {
			Alert      int    `json:"alert"`
			SilencedBy string `json:"silenced_by"`
		} `json:"silenced"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil {
		t.Fatal(err)
	}
	if body.Messages == nil || len(body.Messages) != 0 || len(body.Silenced) != 1 || body.Silenced[0].SilencedBy != "s-1" {
		t.Fatalf("body %s", w.Body)
	}
}
