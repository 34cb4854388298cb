package settings

import (
	"encoding/json"
	"log/slog"
	"slices"
	"strings"

	"github.com/herald-dev/herald/internal/config"
	"github.com/herald-dev/herald/internal/keys"
)

// EnvBots lists the bots one Herald serves. Producer and worker read the
// same variable: the producer refuses messages and routes that name any
// other bot, and the worker needs a token for each of them.
const EnvBots = "HERALD_BOTS"

// botEnvPrefix starts the token variables of every bot other than
// keys.DefaultBot, which keeps TELEGRAM_BOT_TOKEN.
const botEnvPrefix = "HERALD_BOT_"

// defaultBots is HERALD_BOTS when it is not set: the one bot single-bot
// Herald always had.
var defaultBots = []string{keys.DefaultBot}

// botsHelp documents HERALD_BOTS and the token variables it brings along,
// which, being named after the bots, have no row of their own.
const botsHelp = `Bots this Herald serves, separated by commas: 1 to 32 lower-case letters, digits, _ or -, starting with a letter. ` +
	`A message or route names its bot ("bot": "pages"); one naming none goes to the bot "default". ` +
	`Workers read the token of "default" from ` + EnvTelegramToken + ` or ` + EnvTelegramTokenFile + `, and that of any other bot ` +
	`from HERALD_BOT_<NAME>_TOKEN or HERALD_BOT_<NAME>_TOKEN_FILE, the name upper-cased with - as _ ` +
	`(HERALD_BOT_PAGES_TOKEN_FILE for pages), and its paid broadcasts from HERALD_BOT_<NAME>_PAID_BROADCAST, _PAID_LIMIT and _PAID_BUDGET (see HERALD_PAID_BROADCAST); those have no flag. Producers need only the names.`

// BotTokenEnv is the variable that holds the token of the bot called name:
// TELEGRAM_BOT_TOKEN for the default bot, HERALD_BOT_<NAME>_TOKEN for any
// other (upper-cased, '-' written '_').
func BotTokenEnv(name string) string {
	if name == "" || name == keys.DefaultBot {
		return EnvTelegramToken
	}
	return botEnvStem(name) + "_TOKEN"
}

// BotTokenFileEnv is the variable that names a file holding the token of
// the bot called name: TELEGRAM_BOT_TOKEN_FILE for the default bot,
// HERALD_BOT_<NAME>_TOKEN_FILE for any other.
func BotTokenFileEnv(name string) string {
	if name == "" || name == keys.DefaultBot {
		return EnvTelegramTokenFile
	}
	return botEnvStem(name) + "_TOKEN_FILE"
}

// botEnvStem is HERALD_BOT_ followed by name in environment spelling.
func botEnvStem(name string) string {
	return botEnvPrefix + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// BotToken is where a worker finds the token of one bot other than the
// default one. It prints and logs with the token masked.
type BotToken struct {
	// Token is the bot token itself (HERALD_BOT_<NAME>_TOKEN).
	Token string
	// TokenFile names a file holding the token, trimmed
	// (HERALD_BOT_<NAME>_TOKEN_FILE); it cannot be combined with Token.
	TokenFile string
}

// String describes the token's sources with the token masked.
func (t BotToken) String() string {
	return "{Token:" + masked(t.Token) + " TokenFile:" + t.TokenFile + "}"
}

// LogValue logs the token's sources with the token masked.
func (t BotToken) LogValue() slog.Value {
	return slog.GroupValue(slog.String("token", masked(t.Token)), slog.String("token_file", t.TokenFile))
}

// GoString keeps %#v from printing the token.
func (t BotToken) GoString() string { return "settings.BotToken" + t.String() }

// MarshalJSON encodes the token's sources with the token masked, so that a
// map of them logged by slog's JSON handler (which encodes maps without
// asking their values for a LogValue) shows no token either.
func (t BotToken) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Token     string `json:"token"`
		TokenFile string `json:"token_file"`
	}{masked(t.Token), t.TokenFile})
}

// masked stands in for a secret: RedactedValue when it is set, "" when not.
func masked(secret string) string {
	if secret == "" {
		return ""
	}
	return config.RedactedValue
}

// botsVar binds HERALD_BOTS: names separated by commas, spaces around them
// ignored. An empty value is the default list; the names are checked by
// validateBots, so that every bad one is reported with the others.
func botsVar(p *[]string) config.Binding {
	return config.Binding{
		Set: func(s string) error {
			if strings.TrimSpace(s) == "" {
				*p = slices.Clone(defaultBots)
				return nil
			}
			parts := strings.Split(s, ",")
			for i := range parts {
				parts[i] = strings.TrimSpace(parts[i])
			}
			*p = parts
			return nil
		},
		Get: func() string { return strings.Join(*p, ",") },
	}
}

// validateBots checks the bot list: at least one bot, every name well
// formed, none twice, and no two names sharing their token variables
// ("a-b" and "a_b" both read HERALD_BOT_A_B_TOKEN).
func validateBots(p *config.Problems, bots []string) {
	if len(bots) == 0 {
		p.Add(EnvBots, "must name at least one bot, e.g. %q; leave it unset for the bot %q alone", "default,pages", keys.DefaultBot)
		return
	}
	seen := map[string]bool{}
	envOwner := map[string]string{}
	for _, name := range bots {
		switch {
		case name == "":
			p.Add(EnvBots, "has an empty name; write the names separated by single commas, e.g. %q", "default,pages")
			continue
		case !keys.ValidBotName(name):
			p.Add(EnvBots, "has %q, which is not a bot name; use 1 to %d lower-case letters, digits, _ or -, starting with a letter",
				name, keys.MaxBotName)
			continue
		case seen[name]:
			p.Add(EnvBots, "lists the bot %q twice; keep one entry per bot", name)
			continue
		}
		seen[name] = true
		env := BotTokenEnv(name)
		if other, ok := envOwner[env]; ok {
			p.Add(EnvBots, "has the bots %q and %q, which would both read their token from %s; rename one", other, name, env)
			continue
		}
		envOwner[env] = name
	}
}

// botList renders the bots for a message.
func botList(bots []string) string {
	return strings.Join(bots, ", ")
}

// botNames is bots, or the default list when it is unset.
func botNames(bots []string) []string {
	if bots == nil {
		return slices.Clone(defaultBots)
	}
	return slices.Clone(bots)
}

// ParseBots reads a HERALD_BOTS value as the binaries do ("" gives the
// default bot alone) and checks it, for a program that needs only the bot
// names, such as the local mode. Errors name HERALD_BOTS and the fix.
func ParseBots(s string) ([]string, error) {
	var bots []string
	if err := botsVar(&bots).Set(strings.TrimSpace(s)); err != nil {
		return nil, config.FieldErr(EnvBots, "%v", err)
	}
	var p config.Problems
	validateBots(&p, bots)
	if err := p.Err(); err != nil {
		return nil, err
	}
	return bots, nil
}
