package oncall_test

import (
	"strings"
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/oncall"
)

// Layers: a higher layer hides the lower one only where it has someone on
// call; overrides hide every layer, the later made over the earlier.
func TestLayersAndOverlappingOverrides(t *testing.T) {
	berlin := zone(t, "Europe/Berlin")
	at := func(day, h int) time.Time { return time.Date(2026, time.June, day, h, 0, 0, 0, berlin) }
	// Alice, Bob, Carol weekly from Monday 2026-01-05: June 1 is week 21
	// (Alice), June 8 week 22 (Bob).
	cover := daily(t, berlin, oncall.Clock{Hour: 18}, "2026-06-05")
	cover.Users, cover.End = []oncall.User{dana}, local(t, berlin, "2026-06-07")
	s := oncall.Schedule{
		Layers: []oncall.Rotation{weekly(t, berlin), cover},
		Overrides: []oncall.Override{
			{User: carol, Start: at(3, 0), End: at(5, 0)},
			{User: bob, Start: at(4, 0), End: at(4, 12)}, // made later: wins on the 4th
		},
	}
	for _, c := range []struct {
		at  time.Time
		who string
	}{
		{at(2, 12), "Alice"},
		{at(3, 12), "Carol"},
		{at(4, 6), "Bob"},
		{at(4, 12), "Carol"},
		{at(5, 12), "Alice"},
		{at(5, 18), "Dana"}, // the cover layer's first handoff
		{at(7, 17), "Dana"},
		{at(7, 18), "Alice"}, // the cover layer ends at its first handoff after 06-07 00:00
		{at(8, 9), "Bob"},
	} {
		u, _, ok := s.OnCall(c.at)
		if got := name(u, ok); got != c.who {
			t.Errorf("OnCall(%s) = %s, want %s", c.at, got, c.who)
		}
	}
	got := s.Handoffs(at(1, 12), at(8, 12))
	var b strings.Builder
	for _, h := range got {
		b.WriteString(h.At.Format("02 15:04 ") + h.From.Name + ">" + h.To.Name + "; ")
	}
	want := "03 00:00 Alice>Carol; 04 00:00 Carol>Bob; 04 12:00 Bob>Carol; 05 00:00 Carol>Alice; 05 18:00 Alice>Dana; 07 18:00 Dana>Alice; 08 09:00 Alice>Bob; "
	if b.String() != want {
		t.Errorf("Handoffs:\n got %s\nwant %s", b.String(), want)
	}
}

// Before a rotation's first handoff nobody is on call; a handoff to the
// same person is no handoff, and a shift without end in sight has a zero
// End.
func TestEdges(t *testing.T) {
	berlin := zone(t, "Europe/Berlin")
	r := daily(t, berlin, oncall.Clock{Hour: 9}, "2026-06-01")
	r.Users = []oncall.User{alice}
	s := oncall.Schedule{Layers: []oncall.Rotation{r}, Overrides: []oncall.Override{
		{User: alice, Start: time.Date(2026, 6, 2, 0, 0, 0, 0, berlin), End: time.Date(2026, 6, 3, 0, 0, 0, 0, berlin)},
	}}
	if u, _, ok := s.OnCall(time.Date(2026, 6, 1, 8, 59, 0, 0, berlin)); ok {
		t.Errorf("OnCall before the first handoff = %s, want nobody", u.Name)
	}
	u, sh, ok := s.OnCall(time.Date(2026, 6, 10, 0, 0, 0, 0, berlin))
	if !ok || u.ID != alice.ID || !sh.Start.Equal(time.Date(2026, 6, 1, 9, 0, 0, 0, berlin)) || !sh.End.IsZero() {
		t.Errorf("OnCall in a one-person rotation = %s %v, want Alice from 2026-06-01 09:00 with no end", u.Name, sh)
	}
	hs := s.Handoffs(time.Date(2026, 5, 1, 0, 0, 0, 0, berlin), time.Date(2026, 7, 1, 0, 0, 0, 0, berlin))
	if len(hs) != 1 || !hs[0].From.IsZero() || hs[0].To.ID != alice.ID {
		t.Errorf("Handoffs = %v, want only the first shift", hs)
	}
	if u, sh, ok := s.Next(time.Date(2026, 5, 1, 0, 0, 0, 0, berlin)); !ok || u.ID != alice.ID || !sh.Start.Equal(time.Date(2026, 6, 1, 9, 0, 0, 0, berlin)) {
		t.Errorf("Next before the start = %s %v %v, want Alice from 2026-06-01 09:00", u.Name, sh, ok)
	}
	if u, _, ok := s.Next(time.Date(2026, 6, 10, 0, 0, 0, 0, berlin)); ok {
		t.Errorf("Next in a one-person rotation = %s, want none", u.Name)
	}
	// A handoff at exactly from is included; one at to is not.
	w := oncall.Schedule{Layers: []oncall.Rotation{weekly(t, berlin)}}
	mon := time.Date(2026, 6, 8, 9, 0, 0, 0, berlin)
	if hs := w.Handoffs(mon, mon.Add(7*24*time.Hour)); len(hs) != 1 || !hs[0].At.Equal(mon) {
		t.Errorf("Handoffs over [Mon 09:00, next Mon 09:00) = %v, want the first Monday only", hs)
	}
}

func TestValidate(t *testing.T) {
	berlin := zone(t, "Europe/Berlin")
	ok := weekly(t, berlin)
	for label, c := range map[string]struct {
		edit func(*oncall.Schedule)
		want string
	}{
		"no layers":      {func(s *oncall.Schedule) { s.Layers = nil }, "layers: the schedule has no layers"},
		"no users":       {func(s *oncall.Schedule) { s.Layers[0].Users = nil }, "layers[0].users: the layer has no users"},
		"duplicate user": {func(s *oncall.Schedule) { s.Layers[0].Users = []oncall.User{alice, bob, alice} }, "layers[0].users[2].id: user 1001 is listed twice"},
		"bad id":         {func(s *oncall.Schedule) { s.Layers[0].Users = []oncall.User{{ID: -5, Name: "x"}} }, "layers[0].users[0].id: -5 is not a Telegram user id"},
		"short shift":    {func(s *oncall.Schedule) { s.Layers[0].Length = oncall.Length{Fixed: time.Minute} }, "layers[0].shift: 1m0s is shorter than 1h"},
		"no zone":        {func(s *oncall.Schedule) { s.Layers[0].Location = nil }, "layers[0].time_zone: is missing"},
		"end before start": {func(s *oncall.Schedule) {
			s.Overrides = []oncall.Override{{User: dana, Start: time.Date(2026, 3, 2, 0, 0, 0, 0, berlin), End: time.Date(2026, 3, 1, 0, 0, 0, 0, berlin)}}
		}, "overrides[0].end: 2026-03-01T00:00:00+01:00 is not after start 2026-03-02T00:00:00+01:00"},
	} {
		s := oncall.Schedule{Layers: []oncall.Rotation{ok}}
		s.Layers[0].Users = append([]oncall.User(nil), team...)
		c.edit(&s)
		err := s.Validate()
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: Validate() = %v, want %q...", label, err, c.want)
		}
	}
	if err := (oncall.Schedule{Layers: []oncall.Rotation{ok}}).Validate(); err != nil {
		t.Errorf("valid schedule: %v", err)
	}
}
