package telegramfake

import (
	"net/http"
	"strings"
)

// chatFullJSON is the ChatFullInfo object getChat returns: the Chat fields
// plus the two fields the Bot API always sends with them.
type chatFullJSON struct {
	chatJSON
	AccentColorID    int `json:"accent_color_id"`
	MaxReactionCount int `json:"max_reaction_count"`
}

// getChat describes the chat named by chat_id, a numeric id or @username.
// A @name and the -100… id it stands for describe the same channel. A chat
// marked NotFound, or with a chat_id that cannot be read, gets 400 "chat not
// found"; a migrated or kicked chat gets the error sendMessage would get,
// while a user who blocked the bot can still be looked up. getChat is not
// subject to the send limits and does not count against them. Every bot
// sees the same chats: their ids, names and behaviours are shared.
func (s *Server) getChat(w http.ResponseWriter, r *http.Request, bt *bot) {
	params, err := readParams(w, r)
	if err != nil {
		s.fail(w, bt, badRequest("can't parse request: "+err.Error()))
		return
	}
	v := strings.TrimSpace(params["chat_id"])
	if v == "" {
		s.fail(w, bt, badRequest("chat_id is empty"))
		return
	}
	ref, err := parseChatRef(v)
	if err != nil {
		s.fail(w, bt, badRequest("chat not found"))
		return
	}
	s.mu.Lock()
	chat := describeChat(ref.id, s.rememberChatLocked(ref))
	b := s.behaviors[chat.ID]
	s.mu.Unlock()
	b.Blocked = false
	if e := b.refusal(chat); e != nil {
		s.fail(w, bt, e)
		return
	}
	writeResult(w, chatFullJSON{chatJSON: chat, MaxReactionCount: 11})
}
