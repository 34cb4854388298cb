package interact

import (
	"context"
	"time"

	"github.com/herald-dev/herald/internal/telegram"
)

// bot is what the package asks of one bot's Bot API client;
// *telegram.Client implements it.
type bot interface {
	// AnswerCallback answers a press (answerCallbackQuery).
	AnswerCallback(ctx context.Context, queryID, text string, alert bool) error
	// GetUpdates long-polls for callback queries after offset.
	GetUpdates(ctx context.Context, offset int64, timeout time.Duration) ([]telegram.Update, error)
	// SetWebhook points the bot's updates at url.
	SetWebhook(ctx context.Context, url, secret string) error
	// GetMe describes the bot: its username names the commands addressed
	// to it in groups.
	GetMe(ctx context.Context) (telegram.UpdateUser, error)
}

var _ bot = (*telegram.Client)(nil)

// BotsOf returns the clients among clients that are Bots, by name: a
// worker's senders (worker.Config.Bots) are *telegram.Client.
func BotsOf[S any](clients map[string]S) map[string]bot {
	out := make(map[string]bot, len(clients))
	for name, c := range clients {
		if b, ok := any(c).(bot); ok {
			out[name] = b
		}
	}
	return out
}
