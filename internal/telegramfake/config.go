package telegramfake

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"slices"
	"time"
)

// DefaultToken is the bot token the fake accepts when Config.Token and
// Config.Tokens are both empty.
const DefaultToken = "100000001:fake-telegram-token"

// DefaultBot is the name of the bot whose token is Config.Token (or
// DefaultToken): the name its messages and counters are recorded under.
const DefaultBot = "default"

// Default values used for zero fields of Config.
const (
	defaultBotUsername = "herald_fake_bot"
	defaultBotName     = "Herald Fake"
)

// windowRule is one sliding window of a flood-control rule: at most N sends may
// be accepted in any span of Per (Telegram time). A send is admitted only if
// the accepted send N places before it is at least Per×(1−Tolerance) old.
type windowRule struct {
	N   int
	Per time.Duration
}

// String prints the window as "N/Per", such as "20/1m0s".
func (w windowRule) String() string { return fmt.Sprintf("%d/%v", w.N, w.Per) }

// limit is one flood-control rule: a send must fit every one of its windows.
// A nil limit selects the default for its field of Config; an empty non-nil
// limit (Unlimited) switches the rule off.
type limit []windowRule

// Unlimited is the limit that switches a rule off.
var Unlimited = limit{}

// Rate is the limit of n sends in any span of per (Telegram time), for
// Config.Private, Group or Bot.
func Rate(n int, per time.Duration) limit { return limit{{N: n, Per: per}} }

// Off reports whether the limit switches its rule off: empty but not nil.
func (l limit) Off() bool { return l != nil && len(l) == 0 }

// Default flood-control rules: the numbers Telegram documents for bots in
// its Bot FAQ ("My bot is hitting limits, how do I avoid this?"), read as
// hard limits with no burst:
//
//   - a single chat: "avoid sending more than one message per second";
//   - a group: "your bot will not be able to send more than 20 messages per
//     minute to the same group" (and, being a chat, one per second);
//   - overall: "not allow more than about 30 messages per second".
//
// They are variables only so that Config fields can refer to them; Config
// copies them and never changes them, and neither should callers.
var (
	defaultPrivateLimit = limit{{N: 1, Per: time.Second}}
	defaultGroupLimit   = limit{{N: 1, Per: time.Second}, {N: 20, Per: time.Minute}}
	defaultBotLimit     = limit{{N: 30, Per: time.Second}}
)

// DefaultTolerance is the Config.Tolerance used when the field is zero:
// a send may come 0.3% of a window early, enough to absorb clock jitter
// and rounding without hiding a client that paces too fast.
const DefaultTolerance = 0.003

// maxTolerance is the largest Config.Tolerance accepted.
const maxTolerance = 0.005

// orDefault returns a private copy of l, or of def when l is nil, with the
// fields of invalid windows repaired: N below 1 counts as 1 and a
// non-positive Per as one second.
func (l limit) orDefault(def limit) limit {
	if l == nil {
		l = def
	}
	out := slices.Clone(l)
	if out == nil {
		out = limit{}
	}
	for i := range out {
		out[i].N = max(out[i].N, 1)
		if out[i].Per <= 0 {
			out[i].Per = time.Second
		}
	}
	return out
}

func (l limit) validate(field string) error {
	for i, w := range l {
		if w.N < 1 || w.Per <= 0 {
			return fmt.Errorf("telegramfake: Config.%s[%d] = %+v: want N >= 1 and Per > 0", field, i, w)
		}
	}
	return nil
}

// Config shapes a Server. The zero Config is usable: it accepts DefaultToken
// and enforces Telegram's documented limits, strictly, in real time.
type Config struct {
	// Token is the token of the bot named DefaultBot ("default"). Empty
	// means DefaultToken when Tokens is empty too, and no such bot
	// otherwise. A request with a token the fake does not know is answered
	// 401 Unauthorized.
	Token string

	// Tokens adds bots by name: name → token. Each bot is a separate
	// Telegram bot with its own id (the digits before the token's colon),
	// its own getMe answer, and its own flood control: the Bot, Private and
	// Group limits below apply to every bot separately, as Telegram applies
	// them. Records and counters carry the bot's name, never its token.
	// A name already used by Token ("default") must map to the same token.
	// Start refuses empty names or tokens, a token holding a '/', a token
	// shared by two names and two bots with one id; New drops or renames
	// such entries instead.
	Tokens map[string]string

	// Private limits each private chat (positive chat ids). Nil means
	// defaultPrivateLimit: 1 per second.
	Private limit
	// Group limits each group, supergroup and channel (negative ids and
	// @names). Nil means defaultGroupLimit: 1 per second and 20 per minute.
	Group limit
	// Bot limits all chats together. Nil means defaultBotLimit: 30 per
	// second. Rate builds another, such as a limit far above any client's
	// reach for a benchmark of the client's own ceiling.
	Bot limit

	// PaidBroadcast is the paid broadcasts of every bot: enabled or not,
	// and each bot's own Stars balance. The zero value is a bot without
	// them. PaidBroadcastByBot sets them for the bots it names instead;
	// Start refuses a name that is no bot of Token or Tokens.
	PaidBroadcast      Paid
	PaidBroadcastByBot map[string]Paid

	// Tolerance is the fraction of a window by which a send may come early:
	// a window {N, Per} admits a send once the accepted send N places
	// before it is Per×(1−Tolerance) old. Zero means DefaultTolerance
	// (0.003); a negative value means no tolerance at all. Start rejects a
	// value above maxTolerance (0.005) or NaN; New clamps it to maxTolerance.
	Tolerance float64

	// Lenient relaxes every window for tests written against the old,
	// burst-tolerant fake: a chat window admits N+1 sends per Per instead
	// of N, and a bot window 2×N. It is off by default; a client tuned
	// against a lenient fake will be refused by Telegram.
	Lenient bool

	// CountMarkup makes the 4,096-character limit of a message count the
	// text as sent, markup included (in UTF-16 units), instead of the text
	// Telegram shows, as a Bot API server that counts differently would.
	// Herald then meets "message is too long" for a text it split to fit.
	CountMarkup bool

	// TimeScale makes Telegram time run faster than real time: at 10 every
	// window, flood wait, latency and retry_after lasts a tenth as long. The
	// retry_after field stays a whole number of Telegram seconds, rounded up,
	// so a client that sleeps retry_after × RetryAfterUnit() (equivalently
	// retry_after/TimeScale real seconds) never comes back early.
	// Zero or negative means 1.
	TimeScale float64

	// Penalty lengthens a flood wait each time a request arrives inside it
	// (after the 429 that announced it), and the answer carries the longer
	// retry_after. Zero (the default) means no penalty: Telegram does not
	// document one, and with it a fleet of workers that each honour their
	// own retry_after but share a chat would keep pushing one another's
	// waits out. Set it (one second is a realistic figure) to measure how a
	// client copes with punishment for flooding. Negative is the same as zero.
	Penalty time.Duration

	// Latency delays every Bot API request before it is processed.
	Latency time.Duration

	// BotUsername and BotName describe the bot named DefaultBot in getMe and
	// in the from field of its messages. Empty means defaultBotUsername and
	// defaultBotName. The other bots of Tokens are described from their
	// names: "herald_<name>_bot" and "Herald Fake <name>".
	BotUsername string
	BotName     string

	// Addr is where Start listens. Empty means "127.0.0.1:0", a free
	// loopback port.
	Addr string

	// Now reads the clock used for flood control, flood waits and message dates.
	// Nil means time.Now. Tests pass a manual clock to step through windows
	// without waiting; timers for Latency and hangs always run in real time.
	Now func() time.Time

	// Logger receives debug records for refused and faulted requests.
	// Nil discards them.
	Logger *slog.Logger

	// CallbackAnswerTimeout is how long after a button press (Press)
	// answerCallbackQuery still accepts its query. Telegram documents no
	// figure, only that a query can become "too old"; zero means
	// defaultCallbackAnswerTimeout and a negative value means no limit.
	CallbackAnswerTimeout time.Duration

	// WebhookRetry is the unit of the webhook's redelivery backoff, which
	// follows the Bot API server's: after a failed delivery the update is
	// posted again at once, then after 2, 4, 8… units, at most 60 apart,
	// unless the webhook's answer carries a Retry-After header. Zero means
	// one second, as on Telegram; tests set a millisecond.
	WebhookRetry time.Duration

	// WebhookClient posts updates to webhooks. Nil means a client of the
	// fake's own, which gives up on an answer after defaultWebhookTimeout
	// (Telegram time) and whose connections Close closes.
	WebhookClient *http.Client
}

// Defaults of the Config fields for updates.
const (
	defaultCallbackAnswerTimeout = 15 * time.Second
	defaultWebhookTimeout        = 60 * time.Second
)

func (c Config) withDefaults() Config {
	if c.Token == "" && len(c.Tokens) == 0 {
		c.Token = DefaultToken
	}
	c.Private = c.Private.orDefault(defaultPrivateLimit)
	c.Group = c.Group.orDefault(defaultGroupLimit)
	c.Bot = c.Bot.orDefault(defaultBotLimit)
	switch {
	case c.Tolerance == 0 || math.IsNaN(c.Tolerance):
		c.Tolerance = DefaultTolerance
	case c.Tolerance > maxTolerance:
		c.Tolerance = maxTolerance
	}
	if c.TimeScale <= 0 {
		c.TimeScale = 1
	}
	if c.Penalty < 0 {
		c.Penalty = 0
	}
	if c.Latency < 0 {
		c.Latency = 0
	}
	if c.BotUsername == "" {
		c.BotUsername = defaultBotUsername
	}
	if c.BotName == "" {
		c.BotName = defaultBotName
	}
	if c.Addr == "" {
		c.Addr = "127.0.0.1:0"
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.CallbackAnswerTimeout == 0 {
		c.CallbackAnswerTimeout = defaultCallbackAnswerTimeout
	}
	if c.WebhookRetry <= 0 {
		c.WebhookRetry = time.Second
	}
	return c
}

// validate reports the settings New would have to repair.
func (c Config) validate() error {
	if math.IsNaN(c.Tolerance) || c.Tolerance > maxTolerance {
		return fmt.Errorf("telegramfake: Config.Tolerance %v: want at most %v (negative for none)", c.Tolerance, maxTolerance)
	}
	return errors.Join(c.Private.validate("Private"), c.Group.validate("Group"), c.Bot.validate("Bot"), c.validateTokens(), c.validatePaid())
}

// tolerance is the effective tolerance of a Config after withDefaults.
func (c Config) tolerance() float64 { return max(c.Tolerance, 0) }
