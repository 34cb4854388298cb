package amsilence

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/herald-dev/herald/test/alertmanagertest"
)

// TestCreateAndFindInRealAlertmanager: the silence Create makes is the
// one Alertmanager's API lists, with its matchers, and Find finds it by
// its comment.
func TestCreateAndFindInRealAlertmanager(t *testing.T) {
	t.Parallel()
	base := alertmanagertest.Start(t, "route: {receiver: none}\nreceivers: [{name: none}]\n", 0).URL
	ctx := context.Background()
	var c Client
	now := time.Now()
	id, err := c.Create(ctx, base+"/", Silence{
		Matchers: []Matcher{{Name: "alertname", Value: "DiskFull"}, {Name: "instance", Value: "db-1"}},
		StartsAt: now, EndsAt: now.Add(4 * time.Hour), CreatedBy: "@alice (Telegram)", Comment: "acknowledged in Telegram, press 42",
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := c.Find(ctx, base, "acknowledged in Telegram, press 42"); err != nil || got != id {
		t.Fatalf("Find = %q, %v; want %q", got, err, id)
	}
	if got, err := c.Find(ctx, base, "another press"); err != nil || got != "" {
		t.Fatalf("Find of another comment = %q, %v", got, err)
	}
	resp, err := http.Get(base + "/api/v2/silence/" + id)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var s struct {
		Matchers  []apiMatcher `json:"matchers"`
		CreatedBy string       `json:"createdBy"`
		Status    struct{ State string }
	}
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil {
		t.Fatal(err)
	}
	if len(s.Matchers) != 2 || s.Matchers[1] != (apiMatcher{Name: "instance", Value: "db-1", IsEqual: true}) ||
		s.CreatedBy != "@alice (Telegram)" || s.Status.State != "active" {
		t.Fatalf("alertmanager holds %+v", s)
	}
	if _, err := c.Create(ctx, base, Silence{StartsAt: now, EndsAt: now.Add(time.Hour), CreatedBy: "x", Comment: "no matchers"}); err == nil {
		t.Fatal("a silence without matchers was accepted")
	}
}
