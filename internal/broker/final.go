package broker

import (
	"errors"

	"github.com/hibiken/asynq"
)

// Final reports whether a handler's outcome ends its task: success (nil)
// or Archive. Snooze, Retry and any other error hand the task back.
func Final(err error) bool { return err == nil || errors.Is(err, asynq.SkipRetry) }
