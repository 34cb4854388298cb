package alerts

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v4"

	"github.com/herald-dev/herald/internal/buttons"
	"github.com/herald-dev/herald/internal/keys"
	"github.com/herald-dev/herald/internal/yamlstrict"
)

// buttonNames maps the names buttons: takes to callbacks actions, in the
// order the keyboard shows them.
var buttonNames = []struct{ name, action string }{
	{"ack", buttons.Ack},
	{"silence_1h", buttons.Silence1h},
	{"silence_24h", buttons.Silence24h},
}

// buttonsFix lists the buttons there are.
const buttonsFix = "use ack, silence_1h or silence_24h (or a list of them)"

// maxAllowedUsers bounds allowed_users; a longer list belongs in a group
// whose members are trusted.
const maxAllowedUsers = 100

// interaction reads the settings of how an alert lives on in the chat:
// on_resolve, buttons and allowed_users, from the entries m of defaults or
// of a route (who names it in messages: "defaults", `route "db"`).
func (p *parser) interaction(m map[string]yamlstrict.Field, o *options, who string) {
	if f, ok := m["on_resolve"]; ok {
		if s, ok := p.String(f.Value, f.Path); ok {
			switch v := strings.ToLower(strings.TrimSpace(s)); v {
			case resolveReply, resolveEdit, resolveNew:
				o.onResolve = v
			default:
				p.Report(f.Value, f.Path, fmt.Sprintf("%s: %q is not a way to show a resolved alert", who, s),
					"use reply (a reply to the firing message, the default), edit (the firing message is replaced) or new (a message of its own)")
			}
		}
	}
	if f, ok := m["buttons"]; ok {
		o.buttons = p.buttons(f, who)
	}
	if f, ok := m["allowed_users"]; ok {
		o.allowed = p.allowedUsers(f, who)
		if who != "defaults" && len(o.allowed) > 0 && len(o.buttons) == 0 {
			p.Report(f.Key, f.Path, who+" says who may press its buttons but has none",
				"add buttons: [ack, silence_1h, silence_24h], or remove allowed_users")
		}
	}
}

// buttons reads a buttons: setting into callbacks actions, in keyboard
// order. An empty list (or an empty value) means no buttons, overriding
// the defaults.
func (p *parser) buttons(f yamlstrict.Field, who string) []string {
	if yamlstrict.IsNull(f.Value) {
		return []string{}
	}
	chosen := map[string]bool{}
	for i, n := range p.OneOrList(f.Value, f.Path) {
		at := f.Path
		if f.Value.Kind == yaml.SequenceNode {
			at = yamlstrict.Index(f.Path, i)
		}
		s, ok := p.String(n, at)
		if !ok {
			continue
		}
		name := strings.ToLower(strings.TrimSpace(s))
		j := slices.IndexFunc(buttonNames, func(b struct{ name, action string }) bool { return b.name == name })
		switch {
		case j < 0:
			fix := buttonsFix
			if sug := yamlstrict.Suggest(name, []string{"ack", "silence_1h", "silence_24h"}); strings.HasPrefix(sug, "did you mean") {
				fix = sug + " The buttons are ack, silence_1h and silence_24h"
			}
			p.Report(n, at, fmt.Sprintf("%s: %q is not a button", who, s), fix)
		case chosen[buttonNames[j].action]:
			p.Report(n, at, fmt.Sprintf("%s: the button %q is listed twice", who, name), "list each button once")
		default:
			chosen[buttonNames[j].action] = true
		}
	}
	out := []string{}
	for _, b := range buttonNames {
		if chosen[b.action] {
			out = append(out, b.action)
		}
	}
	return out
}

// allowedUsers reads allowed_users: @usernames or numeric user ids. An
// empty list means anyone in the chat.
func (p *parser) allowedUsers(f yamlstrict.Field, who string) []string {
	if yamlstrict.IsNull(f.Value) {
		return nil
	}
	items := p.OneOrList(f.Value, f.Path)
	if len(items) > maxAllowedUsers {
		p.Report(f.Value, f.Path, fmt.Sprintf("%s lists %d users, more than the limit of %d", who, len(items), maxAllowedUsers),
			"send the route to a chat whose members may all press, and leave allowed_users out")
		return nil
	}
	var out []string
	seen := map[string]bool{}
	for i, n := range items {
		at := f.Path
		if f.Value.Kind == yaml.SequenceNode {
			at = yamlstrict.Index(f.Path, i)
		}
		s, ok := p.String(n, at)
		if !ok {
			continue
		}
		s = strings.TrimSpace(s)
		var user string
		if strings.HasPrefix(s, "@") {
			if !keys.ValidUsername(s[1:]) {
				p.Report(n, at, fmt.Sprintf("%s: %q is not a Telegram username", who, s),
					"write @ and the user's name: "+keys.UsernameRule)
				continue
			}
			user = s
		} else {
			id, err := strconv.ParseInt(s, 10, 64)
			switch {
			case err != nil:
				fix := "write @name for a username, or the user's numeric id such as 123456789"
				if keys.ValidUsername(s) {
					fix = fmt.Sprintf("write %q for the username, or the user's numeric id", "@"+s)
				}
				p.Report(n, at, fmt.Sprintf("%s: %q is neither an @username nor a numeric user id", who, s), fix)
				continue
			case id <= 0:
				p.Report(n, at, fmt.Sprintf("%s: %d is not a user id (user ids are positive; negative ids are groups and channels)", who, id),
					"write the id of a user, as the bot sees it in a message's from.id")
				continue
			}
			user = strconv.FormatInt(id, 10)
		}
		if seen[strings.ToLower(user)] {
			p.Report(n, at, fmt.Sprintf("%s: %q is listed twice", who, s), "list each user once")
			continue
		}
		seen[strings.ToLower(user)] = true
		out = append(out, user)
	}
	return out
}
