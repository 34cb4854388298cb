package telegramfake

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// bot is one token the fake accepts: a Telegram bot with its own flood
// control, faults and counters. name, token and user never change after
// New; the other fields are guarded by Server.mu.
type bot struct {
	name  string
	token string // only ever compared with the token of a request
	user  userJSON

	stats  Stats    // this bot's counters; its Bots field stays nil
	limits *limiter // this bot's bot-wide and per-chat windows
	wallet wallet   // this bot's paid broadcasts
	faults botFaults
	x      botState // updates, webhook, callback queries and photo files
}

// botInfo describes one bot the fake serves. It carries no token.
type botInfo struct {
	// Name is the bot's name in Config.Tokens, or DefaultBot for
	// Config.Token; records and counters are keyed by it.
	Name string `json:"name"`
	// ID is the bot's user id: the digits before its token's colon.
	ID int64 `json:"id"`
	// Username is the username getMe answers, without the @.
	Username string `json:"username"`
}

// Bots lists the bots the fake serves, sorted by name.
func (s *Server) Bots() []botInfo {
	out := make([]botInfo, 0, len(s.bots))
	for _, b := range s.bots {
		out = append(out, b.info())
	}
	return out
}

func (b *bot) info() botInfo {
	return botInfo{Name: b.name, ID: b.user.ID, Username: b.user.Username}
}

// botID reads the bot's user id from the digits before the colon of its
// token, as Telegram tokens carry it; other tokens give id 1.
func botID(token string) int64 {
	digits, _, _ := strings.Cut(token, ":")
	if id, err := strconv.ParseInt(digits, 10, 64); err == nil && id > 0 {
		return id
	}
	return 1
}

// botEntry is one accepted token as Config describes it.
type botEntry struct{ name, token string }

// botEntries lists the bots of c, which has been through withDefaults,
// with the repairs New makes to a Config that Start would refuse: Token is
// the bot DefaultBot and wins over a different Tokens[DefaultBot]; an entry
// without a token is dropped; an entry without a name is named by its bot
// id; a token already taken by an earlier entry (in name order, DefaultBot
// first) is dropped, as is a name already taken. Bots sharing an id are
// kept; the fake itself keys them by name.
func (c Config) botEntries() []botEntry {
	var out []botEntry
	names := map[string]bool{}
	tokens := map[string]bool{}
	add := func(name, token string) {
		if token == "" || tokens[token] {
			return
		}
		if name == "" {
			name = strconv.FormatInt(botID(token), 10)
		}
		if names[name] {
			return
		}
		names[name], tokens[token] = true, true
		out = append(out, botEntry{name: name, token: token})
	}
	if c.Token != "" {
		add(DefaultBot, c.Token)
	}
	keys := make([]string, 0, len(c.Tokens))
	for name := range c.Tokens {
		keys = append(keys, name)
	}
	slices.Sort(keys)
	for _, name := range keys {
		add(name, c.Tokens[name])
	}
	slices.SortFunc(out, func(a, b botEntry) int { return strings.Compare(a.name, b.name) })
	return out
}

// validateTokens reports the bot settings that botEntries would have to
// repair. Its messages name bots, never tokens.
func (c Config) validateTokens() error {
	var errs []error
	if strings.Contains(c.Token, "/") {
		errs = append(errs, errors.New("telegramfake: Config.Token holds a '/', which no request path can carry"))
	}
	if tok, ok := c.Tokens[DefaultBot]; ok && c.Token != "" && tok != c.Token {
		errs = append(errs, fmt.Errorf("telegramfake: Config.Tokens[%q] differs from Config.Token, which names that bot too", DefaultBot))
	}
	byToken := map[string]string{}
	byID := map[int64]string{}
	if c.Token != "" {
		byToken[c.Token] = DefaultBot
		byID[botID(c.Token)] = DefaultBot
	}
	keys := make([]string, 0, len(c.Tokens))
	for name := range c.Tokens {
		keys = append(keys, name)
	}
	slices.Sort(keys)
	for _, name := range keys {
		token := c.Tokens[name]
		switch {
		case name == "":
			errs = append(errs, errors.New("telegramfake: Config.Tokens has a bot without a name"))
			continue
		case token == "":
			errs = append(errs, fmt.Errorf("telegramfake: Config.Tokens[%q] is empty", name))
			continue
		case strings.Contains(token, "/"):
			errs = append(errs, fmt.Errorf("telegramfake: Config.Tokens[%q] holds a '/', which no request path can carry", name))
			continue
		}
		if name == DefaultBot && token == c.Token {
			continue // the same bot as Config.Token
		}
		if other, ok := byToken[token]; ok {
			errs = append(errs, fmt.Errorf("telegramfake: Config.Tokens: bots %q and %q have the same token", other, name))
			continue
		}
		byToken[token] = name
		id := botID(token)
		if other, ok := byID[id]; ok {
			errs = append(errs, fmt.Errorf("telegramfake: Config.Tokens: bots %q and %q have the same id %d "+
				"(a token starts with its bot's id and a colon, as in 222:secret)", other, name, id))
			continue
		}
		byID[id] = name
	}
	return errors.Join(errs...)
}

// makeBot builds the bot of one entry of a Config after withDefaults.
func makeBot(cfg Config, e botEntry) *bot {
	id := botID(e.token)
	user := userJSON{ID: id, IsBot: true, FirstName: cfg.BotName, Username: cfg.BotUsername}
	if e.name != DefaultBot {
		user.FirstName = defaultBotName + " " + e.name
		user.Username = derivedUsername(e.name, id)
	}
	return &bot{name: e.name, token: e.token, user: user}
}

// maxUsernameStem keeps a derived username within Telegram's 32 characters.
const maxUsernameStem = 32 - len("herald_") - len("_bot")

// derivedUsername makes a bot username from a bot's name the way Telegram
// shapes them: letters, digits and underscores, ending in "bot", at most 32
// characters. A name with nothing usable in it gives way to the bot id.
func derivedUsername(name string, id int64) string {
	var stem strings.Builder
	for _, r := range name {
		switch {
		case r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z':
			stem.WriteRune(r)
		default:
			stem.WriteByte('_')
		}
	}
	st := strings.Trim(stem.String(), "_")
	if st == "" {
		st = strconv.FormatInt(id, 10)
	}
	if len(st) > maxUsernameStem {
		st = st[:maxUsernameStem]
	}
	return "herald_" + st + "_bot"
}

// selectBots resolves the bot selectors of a fault method or control
// endpoint: each names a bot by its name or by its id in decimal. No
// selectors select nil, which callers read as every bot. An unknown
// selector is an error listing the known bots; a selector that looks like
// a token is not repeated in it.
func (s *Server) selectBots(selectors []string) ([]*bot, error) {
	if len(selectors) == 0 {
		return nil, nil
	}
	var out []*bot
	for _, sel := range selectors {
		found := false
		for _, b := range s.bots {
			if b.name == sel {
				out, found = appendBot(out, b), true
			}
		}
		if !found {
			for _, b := range s.bots {
				if strconv.FormatInt(b.user.ID, 10) == sel {
					out, found = appendBot(out, b), true
				}
			}
		}
		if !found {
			return nil, s.unknownBot(sel)
		}
	}
	return out, nil
}

func appendBot(list []*bot, b *bot) []*bot {
	if slices.Contains(list, b) {
		return list
	}
	return append(list, b)
}

// unknownBot is the error for a selector that names no bot.
func (s *Server) unknownBot(sel string) error {
	known := make([]string, 0, len(s.bots))
	for _, b := range s.bots {
		known = append(known, fmt.Sprintf("%s (id %d)", b.name, b.user.ID))
	}
	what := strconv.Quote(sel)
	if strings.Contains(sel, ":") || s.byToken[sel] != nil {
		what = "given a token-like value (withheld)"
	}
	return fmt.Errorf("telegramfake: no bot %s; name one of %s by name or id", what, strings.Join(known, ", "))
}

// forBots runs f on the selected bots, or on every bot when there are no
// selectors, under the server's mutex. An unknown selector is logged and
// nothing is changed.
func (s *Server) forBots(selectors []string, f func(*bot)) {
	sel, err := s.selectBots(selectors)
	if err != nil {
		s.log.Error("telegramfake: bot selector ignored", "err", err)
		return
	}
	if sel == nil {
		sel = s.bots
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, b := range sel {
		f(b)
	}
}

// tallyLocked applies f to the server's totals and, when the request
// belongs to a known bot, to that bot's own counters.
func (s *Server) tallyLocked(b *bot, f func(*Stats)) {
	f(&s.stats)
	if b != nil {
		f(&b.stats)
	}
}
