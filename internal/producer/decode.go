package producer

// MessageRequest is the body of POST /v1/messages.
type MessageRequest struct {
	Chat                string `json:"chat"`
	Text                string `json:"text"`
	ParseMode           string `json:"parse_mode,omitempty"`
	DisableNotification bool   `json:"disable_notification,omitempty"`
	MessageThreadID     int    `json:"message_thread_id,omitempty"`
	DisableLinkPreview  bool   `json:"disable_link_preview,omitempty"`
	ProtectContent      bool   `json:"protect_content,omitempty"`
	IdempotencyKey      string `json:"idempotency_key,omitempty"`
	// Queue is "critical", "default" or "low" (or as configured).
	Queue string `json:"queue,omitempty"`
	// Coalesce lets the message wait for the chat's next digest instead of
	// going out alone; ignored on the critical queue.
	Coalesce bool `json:"coalesce,omitempty"`
}
