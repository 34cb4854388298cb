package escalation

import (
	"fmt"
	"strings"
	"time"

	"go.yaml.in/yaml/v4"

	"github.com/herald-dev/herald/internal/keys"
	"github.com/herald-dev/herald/internal/oncall"
	"github.com/herald-dev/herald/internal/yamlstrict"
)

// The keys of a policy, per mapping.
var (
	policyKeys = []string{"name", "steps", "repeat", "repeat_interval"}
	stepKeys   = []string{"notify", "wait"}
	targetKeys = []string{"chat", "thread", "name", "user", "on_call"}
	userKeys   = []string{"id", "name", "username"}
)

// Bounds of a policy, far above any real one.
const (
	maxSteps   = 10
	maxTargets = 10
	maxRepeat  = 10
	// minWait and maxWait bound a step's wait and the repeat interval.
	minWait = time.Second
	maxWait = 24 * time.Hour
)

// Read reads an escalation_policies: list, the value of f, recording every
// problem in w, each at its line and column with its fix. schedules are
// the schedules of the same file: on_call targets must name one, and users
// may be named by the id or @username of a user of theirs (in users:, a
// layer or an override). The result is
// only meaningful when w has no problems.
//
//	escalation_policies:
//	  - name: db-critical           # required, unique: letters, digits, _ . -
//	    steps:                      # 1 to 10, taken in order
//	      - notify: [{chat: "-1001234567890", thread: 7, name: DB team}]
//	        wait: 2m                # for an acknowledgement, before the next step
//	      - notify: [{on_call: primary}]          # whoever is on call in the schedule
//	        wait: 4m
//	      - notify: [{user: "@carol"}, {user: {id: 1005, name: Erin}}]  # direct messages
//	        wait: 10m               # the last step too, when the steps repeat
//	    repeat: 1                   # take the steps once more when nobody acknowledged
//	    repeat_interval: 30m        # then re-notify the last step every 30m (critical alerts)
func Read(w *yamlstrict.Walker, f yamlstrict.Field, schedules []oncall.Schedule) []Policy {
	r := &reader{w: w, schedules: map[string]bool{}, byID: map[int64]oncall.User{}, byName: map[string]oncall.User{}}
	for _, s := range schedules {
		r.schedules[s.Name] = true
		for _, u := range s.Users {
			r.know(u)
		}
		for _, l := range s.Layers {
			for _, u := range l.Users {
				r.know(u)
			}
		}
		for _, o := range s.Overrides {
			r.know(o.User)
		}
	}
	items := w.List(f.Value, f.Path)
	if f.Value != nil && f.Value.Kind == yaml.SequenceNode && len(items) == 0 {
		w.Report(f.Value, f.Path, "is empty", "add at least one policy, or leave escalation_policies: out")
	}
	var out []Policy
	seen := map[string]int{}
	for i, item := range items {
		path := yamlstrict.Index(f.Path, i)
		p, nameNode := r.policy(item, path)
		if nameNode == nil {
			continue
		}
		if line, dup := seen[p.Name]; dup {
			w.Report(nameNode, yamlstrict.Join(path, "name"), fmt.Sprintf("the policy %q is defined twice (first at line %d)", p.Name, line), "give each policy its own name")
			continue
		}
		seen[p.Name] = nameNode.Line
		out = append(out, p)
	}
	return out
}

// reader reads policies; it knows the file's schedules and their users.
type reader struct {
	w         *yamlstrict.Walker
	schedules map[string]bool
	byID      map[int64]oncall.User
	byName    map[string]oncall.User
}

func (r *reader) know(u oncall.User) {
	r.byID[u.ID] = u
	if u.Username != "" {
		r.byName[strings.ToLower(u.Username)] = u
	}
}

// policy reads one policy; nameNode is nil when it has no good name.
func (r *reader) policy(n *yaml.Node, path string) (p Policy, nameNode *yaml.Node) {
	m := r.w.Mapping(n, path, policyKeys)
	if m == nil {
		return p, nil
	}
	if f, ok := m["name"]; !ok {
		r.w.Report(n, yamlstrict.Join(path, "name"), "is missing", "add name: with a name routes can refer to, such as db-critical")
	} else if s, good := r.w.String(f.Value, f.Path); good {
		if namePattern.MatchString(s) {
			p.Name, nameNode = s, f.Value
		} else {
			r.w.Report(f.Value, f.Path, fmt.Sprintf("%q is not a policy name", s), "use 1 to 64 letters, digits, _ . or -, starting with a letter or digit")
		}
	}
	if f, ok := m["steps"]; ok {
		items := r.w.List(f.Value, f.Path)
		switch {
		case f.Value.Kind == yaml.SequenceNode && len(items) == 0:
			r.w.Report(f.Value, f.Path, "is empty", "add at least one step: notify: and wait:")
		case len(items) > maxSteps:
			r.w.Report(f.Value, f.Path, fmt.Sprintf("has %d steps, more than the limit of %d", len(items), maxSteps), "notify more targets in one step")
			items = items[:maxSteps]
		}
		for i, item := range items {
			p.Steps = append(p.Steps, r.step(item, yamlstrict.Index(f.Path, i), i == len(items)-1))
		}
	} else {
		r.w.Report(n, yamlstrict.Join(path, "steps"), "is missing", "add steps: a list of notify: and wait:")
	}
	r.repeats(m, &p)
	return p, nameNode
}

// repeats reads repeat: and repeat_interval:.
func (r *reader) repeats(m map[string]yamlstrict.Field, p *Policy) {
	if f, ok := m["repeat"]; ok {
		if v, good := r.w.Int(f.Value, f.Path); good {
			if v < 0 || v > maxRepeat {
				r.w.Report(f.Value, f.Path, fmt.Sprintf("%d is out of range", v), fmt.Sprintf("repeat the steps 0 to %d times", maxRepeat))
			} else {
				p.Repeat = v
			}
		}
		if last := len(p.Steps) - 1; p.Repeat > 0 && last >= 0 && p.Steps[last].Wait == 0 {
			r.w.Report(f.Value, f.Path, "the steps would start again the moment the last one notified", "give the last step a wait:")
		}
	}
	if f, ok := m["repeat_interval"]; ok {
		if d, good := r.w.Duration(f.Value, f.Path); good {
			if d < minWait || d > maxWait {
				r.w.Report(f.Value, f.Path, fmt.Sprintf("%s is out of range", d), fmt.Sprintf("use %s to %s", minWait, maxWait))
			} else {
				p.RepeatInterval = d
			}
		}
	}
}

// step reads one step; only the last may leave out wait:.
func (r *reader) step(n *yaml.Node, path string, last bool) Step {
	var s Step
	m := r.w.Mapping(n, path, stepKeys)
	if m == nil {
		return s
	}
	if f, ok := m["notify"]; ok {
		items := []*yaml.Node{f.Value}
		if f.Value == nil || f.Value.Kind != yaml.MappingNode {
			items = r.w.List(f.Value, f.Path)
		}
		switch {
		case f.Value.Kind == yaml.SequenceNode && len(items) == 0:
			r.w.Report(f.Value, f.Path, "is empty", "list at least one target: a chat:, a user: or on_call: a schedule")
		case len(items) > maxTargets:
			r.w.Report(f.Value, f.Path, fmt.Sprintf("has %d targets, more than the limit of %d", len(items), maxTargets), "notify a chat they are all in")
			items = items[:maxTargets]
		}
		for i, item := range items {
			at := f.Path
			if f.Value.Kind == yaml.SequenceNode {
				at = yamlstrict.Index(f.Path, i)
			}
			if t, ok := r.target(item, at); ok {
				s.Targets = append(s.Targets, t)
			}
		}
	} else {
		r.w.Report(n, yamlstrict.Join(path, "notify"), "is missing", "add notify: the chats, users or schedules this step tells")
	}
	if f, ok := m["wait"]; ok {
		if d, good := r.w.Duration(f.Value, f.Path); good {
			if d < minWait || d > maxWait {
				r.w.Report(f.Value, f.Path, fmt.Sprintf("%s is out of range", d), fmt.Sprintf("wait %s to %s", minWait, maxWait))
			} else {
				s.Wait = d
			}
		}
	} else if !last {
		r.w.Report(n, yamlstrict.Join(path, "wait"), "is missing", "add wait: how long to wait for an acknowledgement before the next step, such as 5m")
	}
	return s
}

// target reads one target: exactly one of chat:, user: and on_call:.
func (r *reader) target(n *yaml.Node, path string) (Target, bool) {
	var t Target
	m := r.w.Mapping(n, path, targetKeys)
	if m == nil {
		return t, false
	}
	kinds := 0
	for _, k := range []string{"chat", "user", "on_call"} {
		if _, ok := m[k]; ok {
			kinds++
		}
	}
	if kinds != 1 {
		r.w.Report(n, path, "names no target or more than one", "give exactly one of chat:, user: and on_call:")
		return t, false
	}
	ok := true
	if f, has := m["chat"]; has {
		t.Chat, t.Topic, ok = r.chat(f, m)
	} else if _, topic := m["thread"]; topic {
		r.w.Report(m["thread"].Key, m["thread"].Path, "a topic belongs to a chat target", "remove thread:, or make the target a chat:")
		ok = false
	}
	if f, has := m["name"]; has {
		if _, isChat := m["chat"]; !isChat {
			r.w.Report(f.Key, f.Path, "only a chat target takes a name (a user's comes with them)", "remove name:")
			ok = false
		} else {
			t.Name, _ = r.w.String(f.Value, f.Path)
		}
	}
	if f, has := m["user"]; has {
		t.User, ok = r.user(f)
	}
	if f, has := m["on_call"]; has {
		if s, good := r.w.String(f.Value, f.Path); good && r.schedules[s] {
			t.Schedule = s
		} else if good {
			r.w.Report(f.Value, f.Path, fmt.Sprintf("%q names no schedule of this file", s), "name one of the schedules: list, or add it there")
			ok = false
		}
	}
	return t, ok
}

// chat reads a chat target's chat: and thread:.
func (r *reader) chat(f yamlstrict.Field, m map[string]yamlstrict.Field) (string, int, bool) {
	s, ok := r.w.Scalar(f.Value, f.Path)
	if !ok {
		return "", 0, false
	}
	chat, err := keys.ParseChat(strings.TrimSpace(s))
	if err != nil {
		r.w.Report(f.Value, f.Path, fmt.Sprintf("%q is %v", s, err), `write a numeric chat id in quotes, such as "-1001234567890", or an @username of a group or channel`)
		return "", 0, false
	}
	topic := 0
	if g, has := m["thread"]; has {
		v, good := r.w.Int(g.Value, g.Path)
		if !good {
			return "", 0, false
		}
		if v <= 0 {
			r.w.Report(g.Value, g.Path, fmt.Sprintf("%d is not a forum topic id", v), "give the topic's positive message_thread_id, or leave thread: out")
			return "", 0, false
		}
		topic = v
	}
	return chat, topic, true
}

// user reads a user target: a user written out, or the id or @username of
// a user of the file's schedules.
func (r *reader) user(f yamlstrict.Field) (oncall.User, bool) {
	n := f.Value
	if n != nil && n.Kind == yaml.MappingNode {
		return r.userMapping(n, f.Path)
	}
	s, ok := r.w.Scalar(n, f.Path)
	if !ok {
		return oncall.User{}, false
	}
	var u oncall.User
	var known bool
	if n.Tag == "!!int" {
		var id int64
		if _, err := fmt.Sscan(s, &id); err == nil {
			u, known = r.byID[id]
		}
	} else if name, at := strings.CutPrefix(strings.TrimSpace(s), "@"); at {
		u, known = r.byName[strings.ToLower(name)]
	}
	if !known {
		r.w.Report(n, f.Path, fmt.Sprintf("%q names no user of the schedules", s), "write the user out as {id: 12345, name: Alice}, or use the id or @username of a user in a schedule")
	}
	return u, known
}

// userMapping reads a user written out.
func (r *reader) userMapping(n *yaml.Node, path string) (oncall.User, bool) {
	m := r.w.Mapping(n, path, userKeys)
	var u oncall.User
	f, ok := m["id"]
	if !ok {
		r.w.Report(n, yamlstrict.Join(path, "id"), "is missing", "add id: the user's numeric Telegram id")
		return u, false
	}
	id, good := r.w.Int(f.Value, f.Path)
	if !good {
		return u, false
	}
	u.ID = int64(id)
	if g, has := m["name"]; has {
		u.Name, _ = r.w.String(g.Value, g.Path)
	}
	if g, has := m["username"]; has {
		s, _ := r.w.String(g.Value, g.Path)
		u.Username = strings.TrimPrefix(strings.TrimSpace(s), "@")
	}
	if err := u.Validate(); err != nil {
		field, detail, _ := strings.Cut(err.Error(), ": ")
		at := n
		if g, has := m[field]; has {
			at = g.Value
		}
		what, fix, _ := strings.Cut(detail, "; ")
		r.w.Report(at, yamlstrict.Join(path, field), what, fix)
		return oncall.User{}, false
	}
	return u, true
}
