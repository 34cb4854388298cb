// Package keys builds every Redis key and channel name that Herald itself uses
// (asynq's own keys are asynq's business).
//
// All of Herald's keys share the hash tag "{herald}", so they live in one Redis
// Cluster hash slot. That lets a single Lua script read and update the bot-wide,
// per-queue and per-chat limiter state and a task's reservation atomically, in
// one round trip, on a cluster as on a single node. Herald's limiter traffic is
// tiny (a few commands per message at Telegram's 30 messages per second), so one
// slot is far from a bottleneck.
package keys

import "strings"

// Tag is the hash tag shared by every Herald key.
const Tag = "{herald}"

const prefix = Tag + ":"

// WakeList holds wake-up tokens (queue names) that producers push after an
// enqueue; each wakes one idle worker blocked on it.
func WakeList() string { return prefix + "wake" }

// WakeInbox is one worker process's own wake-up list, for news it learns
// locally while its dequeue round is blocked.
func WakeInbox(id string) string { return prefix + "wake:" + id }

// BotLimit is the GCRA state (theoretical arrival time) of the bot-wide limit.
func BotLimit() string { return prefix + "rl:bot" }

// QueueLimit is the GCRA state of the optional per-queue limit.
func QueueLimit(queue string) string { return prefix + "rl:queue:" + queue }

// ChatLimit is the GCRA state of one destination chat ("123", "-100123", "@name").
func ChatLimit(chat string) string { return prefix + "rl:chat:" + normChat(chat) }

// Recent429 counts recent 429 answers from distinct chats; it tells a
// bot-wide flood from a single chat's limit.
func Recent429() string { return prefix + "rl:recent429" }

// Reservation holds the send slot a deferred task owns.
func Reservation(taskID string) string { return prefix + "resv:" + taskID }

// Sent records that a task's message(s) reached Telegram, so a redelivered
// task (a worker crash between send and ack) is not sent again. Its value is
// "parts sent:part from which plain text is sent (-1 none):last message id".
func Sent(taskID string) string { return prefix + "sent:" + taskID }

// Idempotency claims an idempotency key (by its task id) across queues; its
// value is the queue the task went to.
func Idempotency(taskID string) string { return prefix + "idem:" + taskID }

// Migrations maps a group chat id to the supergroup id Telegram migrated it to.
func Migrations() string { return prefix + "migrated" }

// Failures is the durable stream of permanent failures (asynq keeps only a
// bounded number of archived tasks).
func Failures() string { return prefix + "failures" }

// normChat lower-cases @usernames: Telegram treats them case-insensitively, and
// two spellings of one channel must share one limit.
func normChat(chat string) string {
	if strings.HasPrefix(chat, "@") {
		return strings.ToLower(chat)
	}
	return chat
}

// ChatSendLimit is the GCRA state of a chat's actual send times. It differs
// from ChatLimit (the pacing of a chat's arrivals at the bot-wide stage) when
// the bot-wide limit delayed an earlier message of the chat.
func ChatSendLimit(chat string) string { return prefix + "rl:chatsend:" + normChat(chat) }
