package telegramfake

import (
	"hash/fnv"
	"time"
)

// Membership: when SetChat makes a chat start or stop refusing the bots
// (Blocked or Kicked), Telegram would tell each bot with a my_chat_member
// update, a ChatMemberUpdated about the bot itself (Client::
// add_update_chat_member and JsonChatMemberUpdated in tdlib/telegram-bot-
// api). The fake makes that update for every bot it serves, since chats
// and their behaviour are shared: a blocked chat refuses every bot.

// memberUpdateLifetime is how long a my_chat_member update waits to be
// received: the Bot API keeps it for a day after its date.
const memberUpdateLifetime = 24 * time.Hour

// chatMemberJSON is Telegram's ChatMember object, fields in the order the
// Bot API writes them: the user and status, the administrator's rights
// for an administrator, until_date for a banned member.
type chatMemberJSON struct {
	User   userJSON `json:"user"`
	Status string   `json:"status"`
	*adminRightsJSON
	UntilDate *int64 `json:"until_date,omitempty"`
}

// adminRightsJSON are the rights of a ChatMemberAdministrator in a
// channel: a bot that posts there holds the right to post and edit.
type adminRightsJSON struct {
	CanBeEdited         bool `json:"can_be_edited"`
	CanManageChat       bool `json:"can_manage_chat"`
	CanChangeInfo       bool `json:"can_change_info"`
	CanPostMessages     bool `json:"can_post_messages"`
	CanEditMessages     bool `json:"can_edit_messages"`
	CanDeleteMessages   bool `json:"can_delete_messages"`
	CanInviteUsers      bool `json:"can_invite_users"`
	CanRestrictMembers  bool `json:"can_restrict_members"`
	CanPromoteMembers   bool `json:"can_promote_members"`
	CanManageVideoChats bool `json:"can_manage_video_chats"`
	CanPostStories      bool `json:"can_post_stories"`
	CanEditStories      bool `json:"can_edit_stories"`
	CanDeleteStories    bool `json:"can_delete_stories"`
	IsAnonymous         bool `json:"is_anonymous"`
	CanManageVoiceChats bool `json:"can_manage_voice_chats"`
}

// chatMemberUpdatedJSON is Telegram's ChatMemberUpdated object.
type chatMemberUpdatedJSON struct {
	Chat          chatJSON       `json:"chat"`
	From          User           `json:"from"`
	Date          int64          `json:"date"`
	OldChatMember chatMemberJSON `json:"old_chat_member"`
	NewChatMember chatMemberJSON `json:"new_chat_member"`
}

// Bot membership statuses.
const (
	statusMember = "member"
	statusAdmin  = "administrator"
	statusKicked = "kicked"
	statusLeft   = "left"
)

// botStatus is the bot's status in chat under behaviour b: out of it when
// the chat refuses the bot (a user who blocked it is "kicked" in Bot API
// terms; a bot removed from a basic group has "left" it, which has no ban
// list; from a supergroup or channel it is "kicked"), in it otherwise (an
// administrator in a channel, where only administrators post). A chat
// that is not found or has migrated, or a user's chat the bot never had,
// has no status the fake models: "".
func botStatus(b ChatBehavior, chat chatJSON) string {
	switch {
	case b.NotFound || b.MigrateTo != 0 || b.NeverStarted:
		return ""
	case (b.Blocked || b.Kicked) && chat.Type == chatGroup:
		return statusLeft
	case b.Blocked || b.Kicked:
		return statusKicked
	case chat.Type == chatChannel:
		return statusAdmin
	}
	return statusMember
}

// memberOf is the ChatMember of bot with status.
func memberOf(bot userJSON, status string) chatMemberJSON {
	m := chatMemberJSON{User: bot, Status: status}
	switch status {
	case statusKicked:
		forever := int64(0)
		m.UntilDate = &forever
	case statusAdmin:
		m.adminRightsJSON = &adminRightsJSON{CanManageChat: true, CanPostMessages: true, CanEditMessages: true}
	}
	return m
}

// performer is who made the change: in a private chat the user, in a group
// or channel one of its administrators (a stable made-up user per chat).
func performer(chat chatJSON) User {
	if chat.Type == chatPrivate {
		return User{ID: chat.ID, FirstName: chat.FirstName}
	}
	h := fnv.New64a()
	h.Write([]byte(chat.Title))
	return User{ID: 5_000_000_000 + int64(h.Sum64()%1_000_000_000), FirstName: "Admin"}
}

// memberChangeLocked makes the my_chat_member update of every bot whose
// status in chat changes from behaviour old to now, unless the bot's
// allowed_updates leave my_chat_member out (Telegram drops the update
// then).
func (s *Server) memberChangeLocked(chat chatJSON, old, now ChatBehavior) {
	from, to := botStatus(old, chat), botStatus(now, chat)
	if from == "" || to == "" || from == to {
		return
	}
	at := s.cfg.Now()
	for _, b := range s.bots {
		st := &b.x
		if !st.allows("my_chat_member") {
			continue
		}
		id := st.nextUpdateID
		body, err := marshalVerbatim(updateJSON{UpdateID: id, MyChatMember: &chatMemberUpdatedJSON{
			Chat: chat, From: performer(chat), Date: at.Unix(),
			OldChatMember: memberOf(b.user, from), NewChatMember: memberOf(b.user, to),
		}})
		if err != nil {
			s.log.Error("telegramfake: my_chat_member update not made", "err", err)
			continue
		}
		st.nextUpdateID++
		st.pushLocked(&update{id: id, body: body, expires: at.Add(toReal(memberUpdateLifetime, s.cfg.TimeScale))})
	}
	s.notifyLocked()
}
