package roster

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/herald-dev/herald/internal/oncall"
)

// Catalog is the schedules in force, by name, as the routing file gives
// them (its loader builds it, see alerts.Table.Schedules; a reload swaps
// it), or as the producers published them (Snapshot).
type Catalog struct {
	Schedules map[string]oncall.Schedule
	// Bot is the bot that announces handoffs (the routing file's default
	// bot); "" is the default bot.
	Bot string
	// Source is the file's schedules: section as YAML (oncall.Parse reads
	// it), which producers publish for the workers' /oncall.
	Source []byte
}

// Roster answers who is on call: the schedules in force (a Catalog's)
// with the overrides made through the API above them.
type Roster struct {
	// Catalog returns the schedules in force. Required.
	Catalog func() Catalog
	// Overrides are the stored overrides; nil: the file's alone.
	Overrides *Overrides
}

// Turn is someone's time on call: from Start to End (zero when not in
// sight, see oncall.Shift).
type Turn struct {
	User  oncall.User
	Start time.Time
	End   time.Time
}

// Status is a schedule's answer at an instant: who is on call (nil:
// nobody) and who comes next (nil: nobody within oncall.Horizon).
type Status struct {
	Schedule string
	Chat     string
	Topic    int
	// Location is the schedule's time zone (its first layer's), in which
	// messages show times.
	Location *time.Location
	Now      *Turn
	Next     *Turn
}

// Names lists the schedules, sorted.
func (r *Roster) Names() []string {
	c := r.Catalog()
	out := make([]string, 0, len(c.Schedules))
	for n := range c.Schedules {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// Schedule returns the named schedule with its stored overrides.
func (r *Roster) Schedule(ctx context.Context, name string) (oncall.Schedule, bool, error) {
	s, ok := r.Catalog().Schedules[name]
	if !ok {
		return oncall.Schedule{}, false, nil
	}
	s, err := r.Overrides.Live(ctx, s)
	return s, true, err
}

// Status says who is on call in the named schedule at t, and who is next.
func (r *Roster) Status(ctx context.Context, name string, t time.Time) (Status, bool, error) {
	s, ok, err := r.Schedule(ctx, name)
	if !ok || err != nil {
		return Status{}, ok, err
	}
	return statusOf(s, t), true, nil
}

// OnCall says who is on call in the named schedule at t, overrides
// included; found is false when nobody is, or there is no such schedule.
// The escalation engine asks it for its on_call targets.
func (r *Roster) OnCall(ctx context.Context, schedule string, t time.Time) (u oncall.User, found bool, err error) {
	s, ok, err := r.Schedule(ctx, schedule)
	if !ok || err != nil {
		return oncall.User{}, false, err
	}
	u, _, found = s.OnCall(t)
	return u, found, nil
}

// statusOf is s's status at t.
func statusOf(s oncall.Schedule, t time.Time) Status {
	st := Status{Schedule: s.Name, Chat: s.Chat, Topic: s.Topic, Location: zoneOf(s)}
	if u, sh, ok := s.OnCall(t); ok {
		st.Now = &Turn{User: u, Start: sh.Start, End: sh.End}
	}
	if u, sh, ok := s.Next(t); ok {
		st.Next = &Turn{User: u, Start: sh.Start, End: sh.End}
	}
	return st
}

// zoneOf is the time zone a schedule's times are shown in.
func zoneOf(s oncall.Schedule) *time.Location {
	for _, l := range s.Layers {
		if l.Location != nil {
			return l.Location
		}
	}
	return time.UTC
}

// User finds a user of the named schedule (its layers and overrides) by
// numeric id or @username.
func (r *Roster) User(ctx context.Context, schedule, ref string) (oncall.User, bool, error) {
	s, ok, err := r.Schedule(ctx, schedule)
	if !ok || err != nil {
		return oncall.User{}, false, err
	}
	ref = strings.TrimSpace(ref)
	id, _ := strconv.ParseInt(ref, 10, 64)
	name, byName := strings.CutPrefix(ref, "@")
	match := func(u oncall.User) bool {
		if byName {
			return u.Username != "" && strings.EqualFold(u.Username, name)
		}
		return id > 0 && u.ID == id
	}
	for _, l := range s.Layers {
		for _, u := range l.Users {
			if match(u) {
				return u, true, nil
			}
		}
	}
	for _, o := range s.Overrides {
		if match(o.User) {
			return o.User, true, nil
		}
	}
	return oncall.User{}, false, nil
}

// describe renders a status for a chat: who is on call until when, and
// who is next.
func describe(st Status) string {
	var b strings.Builder
	fmt.Fprintf(&b, "📟 %s: ", st.Schedule)
	if st.Now != nil {
		b.WriteString(st.Now.User.String())
		if !st.Now.End.IsZero() {
			b.WriteString(" until " + when(st.Now.End, st.Location))
		}
	} else {
		b.WriteString("nobody is on call")
	}
	if st.Next != nil {
		b.WriteString("\n   next: " + st.Next.User.String() + " from " + when(st.Next.Start, st.Location))
	}
	return b.String()
}

// when renders an instant in loc: "Mon 13 Apr 09:00 CEST".
func when(t time.Time, loc *time.Location) string {
	return t.In(loc).Format("Mon 2 Jan 15:04 MST")
}
