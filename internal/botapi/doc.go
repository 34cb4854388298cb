// Package botapi is Herald's Telegram Bot API front: a tool that speaks
// the Bot API (Alertmanager's telegram_configs, Uptime Kuma, any client
// library) reaches Herald by swapping only its base URL, and its messages
// get Herald's fleet-wide limits, splitting, retries and ledger.
//
// # Paths and credentials
//
// The front answers under Prefix:
//
//	/telegram/bot<TOKEN>/<method>        the default bot
//	/telegram/<bot>/bot<TOKEN>/<method>  the bot HERALD_BOTS names <bot>
//
// TOKEN is a Herald credential (HERALD_API_TOKEN, or a token of the tokens
// file), never a bot token: the real bot tokens stay with the workers. The
// request is the credential's principal as if it had sent POST
// /v1/messages, and needs the send scope. The bot is chosen by the path, as
// POST /v1/messages chooses it by its body's bot field.
//
// # Methods
//
// sendMessage and sendPhoto (a URL, or an upload) are stored exactly as
// POST /v1/messages stores a message (jobs.Enqueuer, markup checked, the
// token as the message's From). getMe describes the bot from what the
// producer knows, its name: the producer holds no bot token and never calls
// Telegram. Every other method is answered as Telegram answers an unknown
// one: 404 "Not Found".
//
// Parameters come as Telegram takes them: a query string, a JSON body, an
// application/x-www-form-urlencoded or a multipart/form-data body, scalars
// as strings or JSON values alike, and reply_markup or
// link_preview_options as objects or as JSON text.
//
// # Answers
//
// Success is {"ok":true,"result":{...Message...}}; a refusal is
// {"ok":false,"error_code":N,"description":"..."} with the description
// Telegram gives for the same mistake ("Bad Request: message text is
// empty", "Bad Request: can't parse entities: ...", "Bad Request: chat not
// found", ...), decided before anything is stored. A text longer than one
// Telegram message is not refused: the worker splits it.
//
// The answer normally comes before the message is sent. The front waits up
// to Config.ResultWait for the message's ledger record: when the message
// was sent by then, result.message_id is the id Telegram gave its first
// part; when it failed for good, the answer is the failure. Otherwise
// result.message_id is 0, a value Telegram never gives, and the top-level
// "herald" object (and the Herald-Message-Id header) names Herald's message
// id, to follow at GET /v1/messages/{id}. docs/TELEGRAM_FRONT.md says which
// tools read what.
package botapi
