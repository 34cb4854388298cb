// Package telegram is Herald's client for the Telegram Bot API.
//
// It sends one message per call through the go-telegram-bot-api library and
// turns every failure into an *Error whose Reason tells the worker what to do
// next: wait and retry (rate limits, server trouble, network faults), stop
// retrying (blocked users, unknown chats, malformed markup), or follow a chat
// migration.
//
// The most important distinction it draws is between "not sent" and "maybe
// sent". A failure that happens before the request has been completely
// written to the connection (refused dial, DNS or TLS failure) cannot have
// reached Telegram and is reported as reasonTransport. A failure after that
// point (timeout while waiting for the answer, connection reset, the caller
// cancelling) is reported as ReasonTimeout with Ambiguous set, because
// Telegram may already have delivered the message.
//
// A message may go as a paid broadcast (Message.AllowPaidBroadcast, Bot API
// 7.11). Telegram documents no error for a refused one, so a 400 or 403 to
// such a send that names the Stars balance or paid broadcasts, and that no
// more specific reason explains, is ReasonPaidRefused: the caller sends it
// again without the flag.
//
// The bot token is part of every request URL. The package removes it from
// every error text, formatted value and log record it produces.
package telegram
