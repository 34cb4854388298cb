package telegramfake

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"
)

// Messages that people send: Say makes the message update a bot receives
// when someone writes in a chat with it, as Telegram hands them over.

// messageUpdateLifetime is how long the Bot API keeps an update that no
// one received: 24 hours.
const messageUpdateLifetime = 24 * time.Hour

// entityJSON is Telegram's MessageEntity.
type entityJSON struct {
	Type   string `json:"type"`
	Offset int    `json:"offset"`
	Length int    `json:"length"`
}

// userMessageJSON is the Message object of a message a person sent.
type userMessageJSON struct {
	MessageID       int          `json:"message_id"`
	MessageThreadID int          `json:"message_thread_id,omitempty"`
	From            User         `json:"from"`
	Chat            chatJSON     `json:"chat"`
	Date            int64        `json:"date"`
	IsTopicMessage  bool         `json:"is_topic_message,omitempty"`
	Text            string       `json:"text"`
	Entities        []entityJSON `json:"entities,omitempty"`
}

type messageUpdateJSON struct {
	UpdateID int             `json:"update_id"`
	Message  userMessageJSON `json:"message"`
}

// Say sends text to the chat chatID as the user from does in a Telegram
// client, in the forum topic topic (0: none), and returns the message's
// id, which it takes from the chat's message ids as any message does. The
// bot (its name or id; "" when the fake serves one bot) receives it as a
// message update, by getUpdates or its webhook, when Telegram would hand
// it over:
//
//   - in a private chat (chatID is from's id), every message;
//   - in a group or supergroup, only a command (a text starting with "/"):
//     the fake's bots keep privacy mode on, as bots do unless BotFather
//     turns it off;
//   - never when the bot's allowed_updates leave out message.
//
// delivered reports whether the bot got the update. A leading command
// carries its bot_command entity, as Telegram marks it. Say fails, making
// nothing, for an empty text, a user without a positive id, a private
// chat of someone else, or a topic outside a supergroup.
func (s *Server) Say(bot string, chatID int64, topic int, from User, text string) (messageID int, delivered bool, err error) {
	b, err := s.oneBot(bot)
	if err != nil {
		return 0, false, err
	}
	kind := chatKind(chatID)
	switch {
	case from.ID <= 0:
		return 0, false, fmt.Errorf("telegramfake: Say: a user needs a positive id, got %d", from.ID)
	case strings.TrimSpace(text) == "":
		return 0, false, fmt.Errorf("telegramfake: Say: Telegram sends no empty messages")
	case kind == chatPrivate && chatID != from.ID:
		return 0, false, fmt.Errorf("telegramfake: Say: chat %d is the private chat of user %d with the bot, not of user %d", chatID, chatID, from.ID)
	case topic != 0 && kind != chatSupergroup:
		return 0, false, fmt.Errorf("telegramfake: Say: only supergroups have forum topics, chat %d is a %s", chatID, kind)
	}
	if from.FirstName == "" {
		from.FirstName = "User " + strconv.FormatInt(from.ID, 10)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextID[chatID]++
	id := s.nextID[chatID]
	// The index maps message ids to the bots' messages; a person's message
	// holds its id with no record.
	s.x.index[chatID] = append(s.x.index[chatID], -1)
	command := strings.HasPrefix(text, "/")
	if !b.x.allows("message") || (kind != chatPrivate && !command) {
		return id, false, nil
	}
	now := s.cfg.Now()
	m := userMessageJSON{MessageID: id, MessageThreadID: topic, From: from, Chat: describeChat(chatID, ""), Date: now.Unix(),
		IsTopicMessage: topic != 0, Text: text}
	if command {
		word, _, _ := strings.Cut(text, " ")
		m.Entities = []entityJSON{{Type: "bot_command", Offset: 0, Length: len(utf16.Encode([]rune(word)))}}
	}
	st := &b.x
	u := messageUpdateJSON{UpdateID: st.nextUpdateID, Message: m}
	st.nextUpdateID++
	body, err := marshalVerbatim(u)
	if err != nil {
		return 0, false, fmt.Errorf("telegramfake: Say: %w", err)
	}
	st.pushLocked(&update{id: u.UpdateID, body: body, expires: now.Add(toReal(messageUpdateLifetime, s.cfg.TimeScale))})
	s.notifyLocked()
	return id, true, nil
}
