package telegramfake

import "net/http"

// userJSON is Telegram's User object as it describes the bot in messages.
type userJSON struct {
	ID        int64  `json:"id"`
	IsBot     bool   `json:"is_bot"`
	FirstName string `json:"first_name"`
	Username  string `json:"username,omitempty"`
}

// botUserJSON is the fuller User object getMe returns.
type botUserJSON struct {
	userJSON
	CanJoinGroups           bool `json:"can_join_groups"`
	CanReadAllGroupMessages bool `json:"can_read_all_group_messages"`
	SupportsInlineQueries   bool `json:"supports_inline_queries"`
	CanConnectToBusiness    bool `json:"can_connect_to_business"`
	HasMainWebApp           bool `json:"has_main_web_app"`
}

// getMe answers with the User object of the bot whose token the request
// carries.
func (s *Server) getMe(w http.ResponseWriter, _ *http.Request, b *bot) {
	writeResult(w, botUserJSON{userJSON: b.user, CanJoinGroups: true})
}
