// Package ledger keeps what became of each message after the producer's
// 202: its state, and once it is settled, the Telegram message ids of its
// parts or why it was not sent.
//
// # Where a message's state lives
//
// A message's state is not written at every step. While it is on its way,
// asynq's own records say where it is (pending, scheduled, active, retry,
// aggregating in a digest group, archived), and the worker's send record
// (keys.Space.Sent) says how many of its parts went out. When the message is
// settled, the worker (or the producer, for a cancel or a silence) replaces
// the send record with the ledger's Record: a small JSON object kept for
// Config.Retention. The sent state is therefore written by the write that
// already records the last part's send, at no extra Redis command; only the
// rarer states (failed, cancelled, silenced, coalesced) add a write.
//
// Status puts the two together: a settled Record wins; otherwise asynq's
// task info gives queued, scheduled (with the time it is due), sending or
// failed (archived, with the reason the worker recorded).
//
// # What "sent" means
//
// Telegram has no delivery or read receipts for bots: sent is the strongest
// state there is. It means Telegram accepted every part and answered with
// its message_id; whether a person saw it is not known to any bot.
package ledger
