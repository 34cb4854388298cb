package telegram

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/herald-dev/herald/internal/ratelimit"
)

// Client sends Bot API requests for one bot. It is safe for concurrent use.
type Client struct {
	token    string
	forms    []string // spellings of token to redact
	apiURL   string
	endpoint string // tgbotapi endpoint format: <apiURL>/bot%s/%s
	timeout  time.Duration
	http     *http.Client
	log      *slog.Logger
}

// New checks cfg, fills in defaults and returns a Client. It does not
// contact Telegram.
func New(cfg Config) (*Client, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	cfg = cfg.WithDefaults()
	apiURL, timeout := strings.TrimRight(cfg.APIURL, "/"), cfg.Timeout
	hc := cfg.HTTPClient
	if hc == nil {
		hc = defaultHTTPClient(timeout)
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.Default()
	}
	return &Client{
		token:  cfg.Token,
		forms:  tokenForms(cfg.Token),
		apiURL: apiURL,
		// A '%' in the base URL must survive tgbotapi's Sprintf.
		endpoint: strings.ReplaceAll(apiURL, "%", "%%") + "/bot%s/%s",
		timeout:  timeout,
		http:     hc,
		log:      logger,
	}, nil
}

// Send delivers m with sendMessage. A failure is always an *Error, except
// when ctx is already done on entry: then ctx.Err() is returned and nothing
// is sent; and ErrLate, when the request would leave after ctx's send-by
// time (WithSendBy): nothing is sent either. If ctx ends during the call, the error is ReasonTimeout with
// Ambiguous set when the request had been written and reasonTransport
// otherwise; either way errors.Is reports the context error. If Telegram
// accepted the message but its reply could not be decoded, Send returns a
// zero Sent and a nil error, so that the message is not sent twice.
//
// g is the limiter's grant of a slot for this message: without a valid one
// Send returns ErrNoSlot and sends nothing. The message goes with
// allow_paid_broadcast exactly when the slot was given under the paid limit
// (Grant.Paid), whatever m.AllowPaidBroadcast says, and not after g's
// send-by time (ErrLate).
func (c *Client) Send(ctx context.Context, g ratelimit.Grant, m Message) (Sent, error) {
	ctx, err := granted(ctx, g)
	if err != nil {
		return Sent{}, err
	}
	m.AllowPaidBroadcast = g.Paid()
	params, perr := m.params()
	if perr != nil {
		return Sent{}, perr
	}
	method, files := "sendMessage", []tgbotapi.RequestFile(nil)
	if m.Photo != nil {
		method = "sendPhoto"
		if len(m.Photo.Data) > 0 {
			name := m.Photo.Name
			if name == "" {
				name = "photo.jpg"
			}
			files = []tgbotapi.RequestFile{{Name: "photo", Data: tgbotapi.FileBytes{Name: name, Bytes: m.Photo.Data}}}
		}
	}
	result, err := c.callFiles(ctx, method, params, files)
	if err != nil {
		if te, ok := AsError(err); ok && m.AllowPaidBroadcast && paidRefused(te) {
			te.Reason = ReasonPaidRefused
		}
		return Sent{}, err
	}
	var msg struct {
		MessageID int `json:"message_id"`
		Chat      struct {
			ID int64 `json:"id"`
		} `json:"chat"`
	}
	if jerr := json.Unmarshal(result, &msg); jerr != nil {
		c.log.LogAttrs(ctx, slog.LevelWarn, "telegram accepted the message but its result did not decode",
			slog.String("error", c.Redact(jerr.Error())))
		return Sent{}, nil
	}
	return Sent{MessageID: msg.MessageID, ChatID: msg.Chat.ID}, nil
}

// ChatID asks Telegram (getChat) for the numeric id of chat, a numeric id
// or an @username. Herald resolves @names once so that a channel named by
// @name and by id shares one schedule. Failures are classified like Send's
// (a missing chat is ReasonChatNotFound).
func (c *Client) ChatID(ctx context.Context, chat string) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	ref, perr := normalizeChat(chat)
	if perr != nil {
		return 0, perr
	}
	result, err := c.call(ctx, "getChat", tgbotapi.Params{"chat_id": ref})
	if err != nil {
		return 0, err
	}
	var info struct {
		ID int64 `json:"id"`
	}
	if jerr := json.Unmarshal(result, &info); jerr != nil || info.ID == 0 {
		desc := "getChat result carries no chat id"
		if jerr != nil {
			desc = "getChat result did not decode: " + c.Redact(jerr.Error())
		}
		return 0, &Error{Reason: ReasonServerError, Description: desc}
	}
	return info.ID, nil
}

// CloseIdleConnections closes the HTTP client's idle keep-alive
// connections, for example at shutdown.
func (c *Client) CloseIdleConnections() {
	c.http.CloseIdleConnections()
}

// Format implements fmt.Formatter so that printing a Client with any verb
// shows its API URL but never its token.
func (c *Client) Format(s fmt.State, _ rune) {
	if c == nil {
		writeString(s, "(*telegram.Client)(nil)")
		return
	}
	_, _ = fmt.Fprintf(s, "&telegram.Client{APIURL:%q, Timeout:%s}", c.apiURL, c.timeout)
}

// call runs one Bot API method and returns its result, or an *Error.
func (c *Client) call(ctx context.Context, method string, params tgbotapi.Params) (json.RawMessage, error) {
	return c.callFiles(ctx, method, params, nil)
}

// callFiles is call with files uploaded as multipart/form-data (none: a
// plain form request).
func (c *Client) callFiles(ctx context.Context, method string, params tgbotapi.Params, files []tgbotapi.RequestFile) (json.RawMessage, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()

	x := &exchange{}
	// A fresh BotAPI per call carries this call's context; the library
	// offers no other way to pass one. The struct is cheap and holds no
	// connections: those live in the shared http.Client.
	bot := &tgbotapi.BotAPI{
		Token:  c.token,
		Client: &callDoer{ctx: ctx, base: c.http, x: x},
		Buffer: 100,
	}
	bot.SetAPIEndpoint(c.endpoint)

	var resp *tgbotapi.APIResponse
	var err error
	if len(files) > 0 {
		resp, err = bot.UploadFiles(method, params, files)
	} else {
		resp, err = bot.MakeRequest(method, params)
	}
	if err == nil {
		return resp.Result, nil
	}
	if errors.Is(err, ErrLate) || errors.Is(x.snapshot().doErr, ErrLate) {
		return nil, ErrLate
	}
	e := c.classify(err, x.snapshot())
	c.log.LogAttrs(ctx, slog.LevelDebug, "telegram request failed",
		slog.String("method", method),
		slog.String("reason", string(e.Reason)),
		slog.Int("code", e.Code),
		slog.Bool("ambiguous", e.Ambiguous),
		slog.String("error", e.Error()),
	)
	return nil, e
}
