package telegram

// Reason classifies the outcome of a failed Bot API call. The values are
// stable snake_case strings, safe to use as metric label values and to store
// in archived task errors.
type Reason string

// The reasons a call can fail with.
const (
	// ReasonRateLimited is HTTP 429: Telegram asks to wait Error.RetryAfter.
	ReasonRateLimited Reason = "rate_limited"
	// ReasonServerError is a 5xx answer or a body that is not Telegram JSON
	// (for example an HTML error page from a proxy).
	ReasonServerError Reason = "server_error"
	// reasonTransport is a network failure before the request was fully
	// written (refused connection, DNS, TLS handshake): nothing was sent.
	reasonTransport Reason = "transport"
	// ReasonTimeout is a timeout, reset or cancellation after the request
	// was written: Telegram may have delivered the message.
	ReasonTimeout Reason = "timeout"
	// ReasonParseEntities is a 400 about HTML or MarkdownV2 markup Telegram
	// could not parse.
	ReasonParseEntities Reason = "parse_entities"
	// ReasonMigrated is a 400 saying the group became a supergroup; the new
	// chat id is in Error.MigrateTo.
	ReasonMigrated Reason = "chat_migrated"
	// ReasonBlocked is a 403 because the user blocked the bot or the
	// account was deleted.
	ReasonBlocked Reason = "blocked"
	// reasonKicked is a 403 because the bot was removed from the chat or is
	// not a member of it.
	reasonKicked Reason = "kicked"
	// reasonForbidden is any other 403.
	reasonForbidden Reason = "forbidden"
	// ReasonChatNotFound is a 400 for a chat id or username Telegram does
	// not know.
	ReasonChatNotFound Reason = "chat_not_found"
	// ReasonTooLong is a 400 because the text exceeds Telegram's limit.
	ReasonTooLong Reason = "message_too_long"
	// ReasonBadRequest is any other 400-class answer, and a Message this
	// package refuses to send.
	ReasonBadRequest Reason = "bad_request"
	// ReasonUnauthorized is a 401: the bot token is wrong or revoked.
	ReasonUnauthorized Reason = "unauthorized"
	// reasonNotFound is a 404, which Telegram returns for a wrong API URL or
	// a malformed token.
	reasonNotFound Reason = "not_found"
	// reasonNotModified is a 400 to an edit that would change nothing: the
	// message already reads so. An edit that meets it has its effect.
	reasonNotModified Reason = "not_modified"
	// ReasonMessageGone is a 400 because the message to edit (or to answer)
	// is no longer there or can no longer be edited.
	ReasonMessageGone Reason = "message_gone"
	// reasonPhotoRejected is a 400 or 413 about a photo: Telegram could not
	// fetch its URL, did not take the file for an image, or found it too
	// large.
	reasonPhotoRejected Reason = "photo_rejected"
	// ReasonPaidRefused is a 400 or 403 to a send with
	// Message.AllowPaidBroadcast that refuses the paid broadcast: paid
	// broadcasts are not enabled for the bot, or its Stars balance is too
	// low. The message was not sent; sent again without the flag, at the
	// free limit, it may go.
	ReasonPaidRefused Reason = "paid_refused"
)

// allReasons lists every Reason in a fixed order.
var allReasons = []Reason{
	ReasonRateLimited, ReasonServerError, reasonTransport, ReasonTimeout,
	ReasonParseEntities, ReasonMigrated, ReasonBlocked, reasonKicked,
	reasonForbidden, ReasonChatNotFound, ReasonTooLong, ReasonBadRequest,
	ReasonUnauthorized, reasonNotFound, reasonNotModified, ReasonMessageGone,
	reasonPhotoRejected, ReasonPaidRefused,
}

// Reasons returns every Reason the package can report, for example to
// initialise metric label values up front. The caller owns the slice.
func Reasons() []Reason {
	return append([]Reason(nil), allReasons...)
}

// Temporary reports whether a failure with this reason may succeed when
// retried later without changing the message. Unauthorized and not_found
// count as temporary because an operator fixes them in configuration and
// the queued messages must survive that. Parse_entities and chat_migrated
// are not temporary: the worker must change the message before retrying.
func (r Reason) Temporary() bool {
	switch r {
	case ReasonRateLimited, ReasonServerError, reasonTransport, ReasonTimeout,
		ReasonUnauthorized, reasonNotFound:
		return true
	}
	return false
}
