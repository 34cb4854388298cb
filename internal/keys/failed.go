package keys

// FailedTask holds the payload of the bot's failed message taskID for the
// ledger's retention, so that a retry can rebuild its task when asynq's
// archive (capped) has dropped it (internal/ledger).
func (s Space) FailedTask(taskID string) string { return s.prefix() + "failed:" + taskID }
