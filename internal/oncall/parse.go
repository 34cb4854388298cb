package oncall

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"go.yaml.in/yaml/v4"

	"github.com/herald-dev/herald/internal/keys"
	"github.com/herald-dev/herald/internal/yamlstrict"
)

// The keys of a schedules file, per mapping.
var (
	fileKeys     = []string{"schedules"}
	scheduleKeys = []string{"name", "time_zone", "chat", "thread", "users", "layers", "overrides"}
	layerKeys    = []string{"name", "users", "shift", "handoff", "handoff_day", "time_zone", "start", "end"}
	userKeys     = []string{"id", "name", "username"}
	overrideKeys = []string{"user", "start", "end"}
)

// namePattern is the syntax of schedule names, which appear in routes,
// API paths and Redis keys.
var namePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

// Parse reads a file whose top level is a schedules: list; name is used in
// error messages (normally the file's path). Every problem is reported,
// each as file:line:column: path: what; fix, in one *yamlstrict.Error.
//
//	schedules:
//	  - name: primary              # required, unique: letters, digits, _ . -
//	    time_zone: Europe/Berlin   # default of the layers and of override times
//	    chat: "-1001234567890"     # optional: where handoffs are announced (and /oncall shows it first)
//	    thread: 42                 # optional: a forum topic of that chat
//	    users:                     # optional: people the layers and overrides name by id or @username
//	      - {id: 1001, name: Alice, username: alice}
//	    layers:                    # at least one; each later layer above the ones before
//	      - name: weekly
//	        users: ["@alice", 1002, {id: 1003, name: Carol}]  # in turn; a reference or a user
//	        shift: weekly          # daily, weekly, every N days, every N weeks, or a duration such as 12h
//	        handoff: "09:00"       # wall-clock time in time_zone
//	        handoff_day: monday    # weekly shifts only; default monday
//	        start: 2026-01-05      # the first shift begins at the first handoff at or after it
//	        end: 2026-12-31        # optional: the layer stops at the first handoff at or after it
//	    overrides:                 # in the order they were made; the later wins where two overlap
//	      - {user: "@alice", start: "2026-03-28T09:00", end: "2026-03-30T09:00"}
//
// Dates and times are wall-clock times in the time zone of the layer (or
// of the schedule, for overrides) unless they carry an offset, as in
// 2026-03-28T09:00:00+01:00.
func Parse(name string, data []byte) ([]Schedule, error) {
	var w yamlstrict.Walker
	var out []Schedule
	if root := w.Document(data, "add a schedules: list with at least one schedule"); root != nil {
		top := w.Mapping(root, "", fileKeys)
		if f, ok := top["schedules"]; ok {
			out = Read(&w, f)
		} else if top != nil {
			w.Report(root, "schedules", "is missing", "add a schedules: list with at least one schedule")
		}
	}
	if err := w.Err(name); err != nil {
		return nil, err
	}
	return out, nil
}

// Read reads a schedules: list, the value of f, recording every problem
// in w: for files that hold schedules among other settings. The result is
// only meaningful when w has no problems.
func Read(w *yamlstrict.Walker, f yamlstrict.Field) []Schedule {
	var out []Schedule
	seen := map[string]int{}
	items := w.List(f.Value, f.Path)
	if f.Value != nil && f.Value.Kind == yaml.SequenceNode && len(items) == 0 {
		w.Report(f.Value, f.Path, "is empty", "add at least one schedule, or leave schedules: out")
	}
	for i, item := range items {
		path := yamlstrict.Index(f.Path, i)
		p := &scheduleParser{w: w, users: map[int64]User{}, byName: map[string]User{}}
		s, nameNode := p.schedule(item, path)
		if nameNode != nil {
			if line, dup := seen[s.Name]; dup {
				w.Report(nameNode, yamlstrict.Join(path, "name"), fmt.Sprintf("the schedule %q is defined twice (first at line %d)", s.Name, line), "give each schedule its own name")
			}
			seen[s.Name] = nameNode.Line
		}
		out = append(out, s)
	}
	return out
}

// scheduleParser reads one schedule. users and byName are the people the
// schedule has written out so far (in users: and in layers), whom later
// entries may name by id or @username.
type scheduleParser struct {
	w      *yamlstrict.Walker
	loc    *time.Location
	users  map[int64]User
	byName map[string]User
}

// schedule reads one schedule; nameNode is where its name is written, nil
// when it has no good one.
func (p *scheduleParser) schedule(n *yaml.Node, path string) (s Schedule, nameNode *yaml.Node) {
	m := p.w.Mapping(n, path, scheduleKeys)
	if m == nil {
		return s, nil
	}
	if f, ok := m["name"]; ok {
		if v, good := p.w.String(f.Value, f.Path); good && namePattern.MatchString(v) {
			s.Name, nameNode = v, f.Value
		} else if good {
			p.w.Report(f.Value, f.Path, fmt.Sprintf("%q is not a schedule name", v), "use 1 to 64 letters, digits, _ . or -, starting with a letter or digit")
		}
	} else {
		p.w.Report(n, yamlstrict.Join(path, "name"), "is missing", "add name: with a name routes can refer to, such as primary")
	}
	if f, ok := m["time_zone"]; ok {
		p.loc = p.zone(f)
	}
	s.Chat, s.Topic = p.chat(n, path, m)
	if f, ok := m["users"]; ok {
		s.Users = p.userList(f, false)
	}
	f, ok := m["layers"]
	items := p.w.List(f.Value, f.Path)
	if !ok || len(items) == 0 && f.Value.Kind == yaml.SequenceNode {
		p.w.Report(n, yamlstrict.Join(path, "layers"), "the schedule has no layers", "add layers: with at least one rotation (users, shift, handoff, start)")
	}
	for i, item := range items {
		s.Layers = append(s.Layers, p.layer(item, yamlstrict.Index(f.Path, i)))
	}
	if f, ok := m["overrides"]; ok {
		for i, item := range p.w.List(f.Value, f.Path) {
			s.Overrides = append(s.Overrides, p.override(item, yamlstrict.Index(f.Path, i)))
		}
	}
	return s, nameNode
}

// chat reads the schedule's chat: and thread:.
func (p *scheduleParser) chat(n *yaml.Node, path string, m map[string]yamlstrict.Field) (string, int) {
	var chat string
	var topic int
	if f, ok := m["chat"]; ok {
		if s, good := p.w.Scalar(f.Value, f.Path); good {
			c, err := keys.ParseChat(strings.TrimSpace(s))
			if err != nil {
				p.w.Report(f.Value, f.Path, fmt.Sprintf("%q is %v", s, err), `write a numeric chat id in quotes, such as "-1001234567890", or an @username of a group or channel`)
			}
			chat = c
		}
	}
	if f, ok := m["thread"]; ok {
		if v, good := p.w.Int(f.Value, f.Path); good && v <= 0 {
			p.w.Report(f.Value, f.Path, fmt.Sprintf("%d is not a forum topic id", v), "give the topic's positive message_thread_id, or leave thread: out")
		} else if good {
			topic = v
		}
		if _, hasChat := m["chat"]; !hasChat {
			p.w.Report(f.Key, f.Path, "a topic without a chat", "add chat: the forum the topic belongs to")
		}
	}
	return chat, topic
}

// override reads one override.
func (p *scheduleParser) override(n *yaml.Node, path string) Override {
	var o Override
	m := p.w.Mapping(n, path, overrideKeys)
	if m == nil {
		return o
	}
	if f, ok := m["user"]; ok {
		o.User, _ = p.user(f.Value, f.Path)
	} else {
		p.w.Report(n, yamlstrict.Join(path, "user"), "is missing", `add user: with the id or @username of who takes over, such as "@alice"`)
	}
	o.Start = p.required(n, path, m, "start", p.loc, "when the override begins, such as \"2026-03-28T09:00\"")
	o.End = p.required(n, path, m, "end", p.loc, "when the override ends, such as \"2026-03-30T09:00\"")
	p.order(m["end"], o.Start, o.End, "the override would be empty")
	return o
}

// required reads the time under key, reporting it when missing.
func (p *scheduleParser) required(n *yaml.Node, path string, m map[string]yamlstrict.Field, key string, loc *time.Location, what string) time.Time {
	f, ok := m[key]
	if !ok {
		p.w.Report(n, yamlstrict.Join(path, key), "is missing", "add "+key+": with "+what)
		return time.Time{}
	}
	return p.when(f, loc)
}

// order reports an end (at f) that does not come after start.
func (p *scheduleParser) order(f yamlstrict.Field, start, end time.Time, why string) {
	if start.IsZero() || end.IsZero() || end.After(start) {
		return
	}
	p.w.Report(f.Value, f.Path, fmt.Sprintf("%s is not after start %s, so %s", end.Format(time.RFC3339), start.Format(time.RFC3339), why), "give an end later than the start")
}
