package ledger

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/hibiken/asynq"

	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/keys"
)

// Status is what the API says of one message.
type Status struct {
	ID    string `json:"id"`
	State State  `json:"state"`
	Bot   string `json:"bot"`
	Chat  string `json:"chat,omitempty"`
	Queue string `json:"queue,omitempty"`
	// From is the name of the token that sent the message ("" for the
	// messages Herald makes itself).
	From string `json:"from,omitempty"`
	// Attempts counts the failed attempts so far.
	Attempts  int        `json:"attempts"`
	CreatedAt *time.Time `json:"created_at,omitempty"`
	// SettledAt is when the message was sent, failed, was cancelled, ...
	SettledAt *time.Time `json:"settled_at,omitempty"`
	// DueAt is when a scheduled message is due: its send slot, or its
	// next try after a failure.
	DueAt *time.Time `json:"due_at,omitempty"`
	// Parts are the messages Telegram accepted, in order.
	Parts []Part `json:"parts,omitempty"`
	// PartsSent counts the parts of a message on its way that went out.
	PartsSent int `json:"parts_sent,omitempty"`
	// Reason and Error say why a message failed (or, for a scheduled
	// message, why its last attempt did).
	Reason string `json:"reason,omitempty"`
	Error  string `json:"error,omitempty"`
	// SilenceID names the silence that caught an alert.
	SilenceID string `json:"silence_id,omitempty"`
	// DigestID is the digest that carried a coalesced message; GET it for
	// the digest's own state.
	DigestID string `json:"digest_id,omitempty"`
	// Cancelling is set when a cancel was asked while a worker held the
	// message: it is settled as cancelled unless its send had begun.
	Cancelling bool `json:"cancelling,omitempty"`
}

// Part is one message Telegram accepted.
type Part struct {
	MessageID int `json:"message_id"`
	// Link opens the message in Telegram, where Telegram can form one: a
	// public chat's t.me/<username>/<id>, or t.me/c/<id>/<id> (for members)
	// in supergroups and channels. Private chats and basic groups have none.
	Link string `json:"link,omitempty"`
}

// Link is the t.me link of message id in chat (numeric, as the record
// keeps it; username when the message named the chat so), or "".
func Link(chat, username string, id int) string {
	switch {
	case id <= 0:
		return ""
	case username != "":
		return "https://t.me/" + strings.TrimPrefix(username, "@") + "/" + strconv.Itoa(id)
	case strings.HasPrefix(chat, "-100") && len(chat) > 4:
		return "https://t.me/c/" + chat[4:] + "/" + strconv.Itoa(id)
	}
	return ""
}

// StatusOf is the status of the message id of bot, settled as r says.
func StatusOf(id, bot string, r Record) Status {
	st := Status{ID: id, State: r.State, Bot: botName(bot), Chat: r.Chat, Queue: r.Queue, From: r.From,
		Attempts: r.Attempts, CreatedAt: timeOf(r.Created), SettledAt: timeOf(r.Settled), Reason: r.Reason,
		Error: r.Error, SilenceID: r.Silence, DigestID: r.Digest}
	if st.Chat == "" {
		st.Chat = r.Username
	}
	for _, m := range r.MessageIDs {
		st.Parts = append(st.Parts, Part{MessageID: m, Link: Link(r.Chat, r.Username, m)})
	}
	return st
}

func botName(b string) string {
	if b == "" {
		return keys.DefaultBot
	}
	return b
}

// ErrNotFound is returned for a message Herald does not know (any more).
var ErrNotFound = errors.New("no such message")

// taskStatus is the status of a message on its way, from asynq's record of
// its task and the worker's send record (progress, "" for none).
func taskStatus(info *asynq.TaskInfo, progress string) (Status, string, error) {
	msg, err := messageOf(info)
	if err != nil {
		return Status{}, "", err
	}
	st := Status{ID: info.ID, Bot: msg.BotName(), Chat: msg.Chat, Queue: info.Queue, From: msg.From,
		Attempts: info.Retried, CreatedAt: timeOf(Millis(msg.CreatedAt))}
	st.PartsSent = partsSent(progress)
	switch info.State {
	case asynq.TaskStatePending, asynq.TaskStateAggregating:
		st.State = StateQueued
	case asynq.TaskStateActive:
		st.State = StateSending
	case asynq.TaskStateScheduled, asynq.TaskStateRetry:
		st.State = StateScheduled
		st.DueAt = timeOf(Millis(info.NextProcessAt))
		if info.State == asynq.TaskStateRetry && info.LastErr != "" {
			st.Reason, st.Error = splitErr(info.LastErr)
		}
	case asynq.TaskStateArchived:
		st.State = StateFailed
		st.Reason, st.Error = splitErr(info.LastErr)
		st.SettledAt = timeOf(Millis(info.LastFailedAt))
	case asynq.TaskStateCompleted:
		st.State = StateSent
		st.SettledAt = timeOf(Millis(info.CompletedAt))
	}
	return st, msg.BotName(), nil
}

// messageOf reads the message of a SendMessage or digest item task.
func messageOf(info *asynq.TaskInfo) (jobs.SendMessage, error) {
	switch info.Type {
	case jobs.TypeSendMessage:
		return jobs.Decode(info.Payload)
	case jobs.TypeDigestItem:
		it, err := jobs.DecodeItem(info.Payload)
		return it.Message, err
	}
	return jobs.SendMessage{}, ErrNotFound
}

// splitErr reads an archived or retried task's last error, "<reason>:
// <error>" as the worker writes it (broker.Archive, broker.Retry).
func splitErr(s string) (reason, text string) {
	s = strings.TrimSuffix(s, "; not retried")
	r, rest, ok := strings.Cut(s, ": ")
	if !ok || strings.ContainsAny(r, " ()") {
		return "", s
	}
	if i := strings.Index(r, " ("); i >= 0 {
		r = r[:i]
	}
	return r, rest
}

// partsSent counts the parts a send record says went out.
func partsSent(progress string) int {
	n, _ := strconv.Atoi(strings.SplitN(progress, ":", 2)[0])
	return n
}

// Messages answers for messages by id: their status, and cancel and retry.
type Messages struct {
	store  *Store
	insp   Tasks
	queues []string
	bots   []string
}

// Tasks is the part of *asynq.Inspector that Messages uses.
type Tasks interface {
	GetTaskInfo(queue, id string) (*asynq.TaskInfo, error)
	DeleteTask(queue, id string) error
	RunTask(queue, id string) error
	ListArchivedTasks(queue string, opts ...asynq.ListOption) ([]*asynq.TaskInfo, error)
}

// NewMessages looks messages up in store and, for those on their way, in
// the given asynq queues (insp is usually an *asynq.Inspector); bots are
// the bots whose key spaces hold records.
func NewMessages(store *Store, insp Tasks, queues, bots []string) *Messages {
	if len(bots) == 0 {
		bots = []string{keys.DefaultBot}
	}
	return &Messages{store: store, insp: insp, queues: queues, bots: bots}
}

// Queues are the queues messages are looked up in.
func (m *Messages) Queues() []string { return m.queues }

// found is one message as the lookup met it.
type found struct {
	st     Status
	bot    string
	record *Record // its settled record, if any
	task   *asynq.TaskInfo
	raw    string // the send record's value
}

// find looks id up: first its record, then its task. A failed record
// gives way to the task when the task was run again (the web UI's "run").
// A worker writes a message's record before asynq drops its task, so a
// message that settles between the two looks has its record by the time
// the task is missing: find reads the record once more before it answers
// ErrNotFound.
func (m *Messages) find(ctx context.Context, id string) (found, error) {
	f, err := m.findOnce(ctx, id)
	if errors.Is(err, ErrNotFound) && f.record == nil {
		return m.findOnce(ctx, id)
	}
	return f, err
}

// findOnce is one look at id's record, then its task.
func (m *Messages) findOnce(ctx context.Context, id string) (found, error) {
	bot, raw, err := m.store.raw(ctx, m.bots, id)
	if err != nil {
		return found{}, err
	}
	var f found
	if r, ok := Decode(raw); ok {
		f = found{st: StatusOf(id, bot, r), bot: bot, record: &r, raw: raw}
		if r.State != StateFailed {
			return f, nil
		}
	}
	info, err := m.task(id)
	if err != nil {
		if f.record != nil && errors.Is(err, ErrNotFound) {
			return f, nil
		}
		return found{}, err
	}
	if f.record != nil && info.State == asynq.TaskStateArchived {
		f.task = info
		return f, nil
	}
	st, tbot, err := taskStatus(info, progressOf(raw))
	if err != nil {
		return found{}, err
	}
	return found{st: st, bot: tbot, task: info, raw: raw, record: f.record}, nil
}

// progressOf is the send record of a message on its way ("" for a
// settled record).
func progressOf(raw string) string {
	if _, ok := Decode(raw); ok {
		return ""
	}
	return raw
}

// task finds id's task in the queues.
func (m *Messages) task(id string) (*asynq.TaskInfo, error) {
	for _, q := range m.queues {
		info, err := m.insp.GetTaskInfo(q, id)
		switch {
		case err == nil:
			return info, nil
		case errors.Is(err, asynq.ErrTaskNotFound), errors.Is(err, asynq.ErrQueueNotFound):
			continue
		default:
			return nil, fmt.Errorf("ledger: look up %s in %s: %w", id, q, err)
		}
	}
	return nil, ErrNotFound
}

// Status returns what became of message id, or ErrNotFound.
func (m *Messages) Status(ctx context.Context, id string) (Status, error) {
	f, err := m.find(ctx, id)
	return f.st, err
}
