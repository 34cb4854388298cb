package telegramfake

import (
	"log/slog"
	"time"
)

// DefaultToken is the bot token the fake accepts when Config.Token is empty.
const DefaultToken = "100000001:fake-telegram-token"

// Default values used for zero fields of Config.
const (
	DefaultBotUsername = "herald_fake_bot"
	DefaultBotName     = "Herald Fake"
)

// Limit is one flood-control rule in generic-cell-rate form: on average Rate
// events per Per, and up to Burst events back to back after the sender has
// been quiet. The zero Limit selects the default for its field of Config;
// a zero Rate inside a non-zero Limit takes the default rate, a zero Per means
// one second and a Burst below 1 means 1. A negative Rate switches the rule
// off.
type Limit struct {
	Rate  float64
	Per   time.Duration
	Burst int
}

// Off reports whether the limit has been switched off with a negative Rate.
func (l Limit) Off() bool { return l.Rate < 0 }

func (l Limit) orDefault(def Limit) Limit {
	if l == (Limit{}) {
		return def
	}
	if l.Off() {
		return l
	}
	if l.Rate == 0 {
		l.Rate = def.Rate
	}
	if l.Per <= 0 {
		l.Per = time.Second
	}
	if l.Burst < 1 {
		l.Burst = 1
	}
	return l
}

// Default flood-control rules, as Telegram documents them for bots.
var (
	DefaultPrivateLimit = Limit{Rate: 1, Per: time.Second, Burst: 2}
	DefaultGroupLimit   = Limit{Rate: 20, Per: time.Minute, Burst: 2}
	DefaultBotLimit     = Limit{Rate: 30, Per: time.Second, Burst: 30}
)

// Config shapes a Server. The zero Config is usable: it accepts DefaultToken
// and enforces the default limits in real time.
type Config struct {
	// Token is the only bot token accepted; any other token is answered with
	// 401 Unauthorized. Empty means DefaultToken.
	Token string

	// Private limits each private chat (positive chat ids).
	// Zero means DefaultPrivateLimit: 1 per second, burst 2.
	Private Limit
	// Group limits each group, supergroup and channel (negative ids and
	// @names). Zero means DefaultGroupLimit: 20 per minute, burst 2.
	Group Limit
	// Bot limits all chats together. Zero means DefaultBotLimit:
	// 30 per second, burst 30.
	Bot Limit

	// TimeScale makes Telegram time run faster than real time: at 10 every
	// window, lockout, latency and retry_after lasts a tenth as long. The
	// retry_after field stays a whole number of Telegram seconds, rounded up,
	// so a client that sleeps retry_after × RetryAfterUnit() (equivalently
	// retry_after/TimeScale real seconds) never comes back early.
	// Zero or negative means 1.
	TimeScale float64

	// Penalty lengthens a lockout each time a request arrives while its
	// sender is still locked out by an earlier 429, and the answer carries the
	// longer retry_after. Zero (the default) means no penalty: Telegram does
	// not document one, and with it a fleet of workers that each honour their
	// own retry_after but share a chat would keep pushing one another's
	// lockouts out. Set it (one second is a realistic figure) to measure how a
	// client copes with punishment for flooding. Negative is the same as zero.
	Penalty time.Duration

	// Latency delays every Bot API request before it is processed.
	Latency time.Duration

	// BotUsername and BotName describe the bot user in getMe and in the from
	// field of messages. Empty means DefaultBotUsername and DefaultBotName.
	BotUsername string
	BotName     string

	// Addr is where Start listens. Empty means "127.0.0.1:0", a free
	// loopback port.
	Addr string

	// Now reads the clock used for flood control, lockouts and message dates.
	// Nil means time.Now. Tests pass a manual clock to step through windows
	// without waiting; timers for Latency and hangs always run in real time.
	Now func() time.Time

	// Logger receives debug records for refused and faulted requests.
	// Nil discards them.
	Logger *slog.Logger
}

func (c Config) withDefaults() Config {
	if c.Token == "" {
		c.Token = DefaultToken
	}
	c.Private = c.Private.orDefault(DefaultPrivateLimit)
	c.Group = c.Group.orDefault(DefaultGroupLimit)
	c.Bot = c.Bot.orDefault(DefaultBotLimit)
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
		c.BotUsername = DefaultBotUsername
	}
	if c.BotName == "" {
		c.BotName = DefaultBotName
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
	return c
}
