// Package broadcast sends one text to many chats of a bot (POST
// /v1/broadcasts, `producer broadcast`). Each chat gets a message of its
// own, its {{name}} placeholders filled for that chat, stored through the
// enqueuer a thousand per round trip into the lowest queue, skipping the
// chats that blocked the bot; a broadcast's status is counted from its
// messages' ledger records, and cancelling it cancels what is not sent yet
// (docs/BROADCASTS.md).
package broadcast
