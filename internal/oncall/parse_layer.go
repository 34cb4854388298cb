package oncall

import (
	"fmt"
	"strings"
	"time"

	"go.yaml.in/yaml/v4"

	"github.com/herald-dev/herald/internal/yamlstrict"
)

// layer reads one rotation.
func (p *scheduleParser) layer(n *yaml.Node, path string) Rotation {
	r := Rotation{Location: p.loc, Weekday: time.Monday}
	m := p.w.Mapping(n, path, layerKeys)
	if m == nil {
		return r
	}
	if f, ok := m["name"]; ok {
		r.Name, _ = p.w.String(f.Value, f.Path)
	}
	if f, ok := m["time_zone"]; ok {
		r.Location = p.zone(f)
	} else if p.loc == nil {
		p.w.Report(n, yamlstrict.Join(path, "time_zone"), "is missing", "add time_zone: to the layer or the schedule, an IANA name such as Europe/Berlin")
	}
	if f, ok := m["users"]; ok {
		r.Users = p.userList(f, true)
	} else {
		p.w.Report(n, yamlstrict.Join(path, "users"), "is missing", "add users: the people who take turns, in order")
	}
	if f, ok := m["shift"]; ok {
		r.Length = p.length(f)
	} else {
		p.w.Report(n, yamlstrict.Join(path, "shift"), "is missing", "add shift: daily, weekly, every N days, every N weeks, or a duration such as 12h")
	}
	if f, ok := m["handoff"]; ok {
		r.Handoff = p.clock(f)
	} else {
		p.w.Report(n, yamlstrict.Join(path, "handoff"), "is missing", `add handoff: the time of day shifts change, such as "09:00"`)
	}
	if f, ok := m["handoff_day"]; ok {
		r.Weekday = p.weekday(f)
		if r.Length != (Length{}) && !r.Length.Weekly() {
			p.w.Report(f.Key, f.Path, fmt.Sprintf("applies to weekly shifts only, and the shift is %s", r.Length), "remove handoff_day:, or make the shift weekly")
		}
	}
	r.Start = p.required(n, path, m, "start", r.Location, "the date the first shift begins, such as 2026-01-05")
	if f, ok := m["end"]; ok {
		r.End = p.when(f, r.Location)
		p.order(f, r.Start, r.End, "the layer would never have anyone on call")
	}
	return r
}

// userList reads a users: list. In a layer (rotation true) it must not be
// empty and may not name a person twice.
func (p *scheduleParser) userList(f yamlstrict.Field, rotation bool) []User {
	items := p.w.List(f.Value, f.Path)
	if rotation && f.Value.Kind == yaml.SequenceNode && len(items) == 0 {
		p.w.Report(f.Value, f.Path, "the layer has no users", "list at least one user: an id and a name, or the id or @username of one in the schedule's users:")
	}
	var out []User
	first := map[int64]int{}
	for i, item := range items {
		u, ok := p.user(item, yamlstrict.Index(f.Path, i))
		if !ok {
			continue
		}
		if line, dup := first[u.ID]; dup {
			p.w.Report(item, yamlstrict.Index(f.Path, i), fmt.Sprintf("user %d (%s) is listed twice (first at line %d)", u.ID, u.Name, line), "list each person once")
			continue
		}
		first[u.ID] = item.Line
		out = append(out, u)
	}
	return out
}

// user reads a user written out ({id, name, username}) or named by the id
// or @username of one written out before in the schedule.
func (p *scheduleParser) user(n *yaml.Node, path string) (User, bool) {
	if n != nil && n.Kind == yaml.MappingNode {
		return p.userMapping(n, path)
	}
	s, ok := p.w.Scalar(n, path)
	if !ok {
		return User{}, false
	}
	var u User
	var known bool
	if n.Tag == "!!int" {
		var id int64
		if _, err := fmt.Sscan(s, &id); err == nil {
			u, known = p.users[id]
		}
	} else if name, at := strings.CutPrefix(strings.TrimSpace(s), "@"); at {
		u, known = p.byName[strings.ToLower(name)]
	}
	if !known {
		p.w.Report(n, path, fmt.Sprintf("%q names no user of this schedule", s), "write the user out as {id: 12345, name: Alice}, or list them first in the schedule's users:")
	}
	return u, known
}

// userMapping reads a user written out, and remembers it for references.
func (p *scheduleParser) userMapping(n *yaml.Node, path string) (User, bool) {
	m := p.w.Mapping(n, path, userKeys)
	var u User
	ok := true
	if f, present := m["id"]; present {
		id, good := p.w.Int(f.Value, f.Path)
		u.ID, ok = int64(id), good
	} else {
		p.w.Report(n, yamlstrict.Join(path, "id"), "is missing", "add id: the user's numeric Telegram id")
		ok = false
	}
	if f, present := m["name"]; present {
		u.Name, _ = p.w.String(f.Value, f.Path)
	}
	if f, present := m["username"]; present {
		s, _ := p.w.String(f.Value, f.Path)
		u.Username = strings.TrimPrefix(strings.TrimSpace(s), "@")
	}
	if !ok {
		return User{}, false
	}
	if err := u.Validate(); err != nil {
		field, detail, _ := strings.Cut(err.Error(), ": ")
		at := n
		if f, present := m[field]; present {
			at = f.Value
		}
		what, fix, _ := strings.Cut(detail, "; ")
		p.w.Report(at, yamlstrict.Join(path, field), what, fix)
		return User{}, false
	}
	p.remember(u)
	return u, true
}

// remember makes u known to later references by id and @username; when
// an id is written out twice, references get the last spelling.
func (p *scheduleParser) remember(u User) {
	p.users[u.ID] = u
	if u.Username != "" {
		p.byName[strings.ToLower(u.Username)] = u
	}
}
