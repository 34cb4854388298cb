package broadcast

import (
	"context"

	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/markup"
)

// checkSizes refuses a request whose parts are too large for the work
// they would start, before any of it starts: the template longer than a
// message's text may be (HERALD_MAX_TEXT_LEN; a template is at most as
// long as what it renders, placeholders aside), more values or chats than
// a broadcast may list, a value longer than a text may be.
func checkSizes(req Request, maxText, maxChats int) error {
	var errs fieldErrors
	// Bytes first: a UTF-16 count is never more than the byte count.
	if len(req.Text) > maxText {
		if n := markup.UTF16Len(req.Text); n > maxText {
			errs.add("text", "is %d UTF-16 code units long; the limit is %d (%s), placeholders included", n, maxText, jobs.EnvMaxTextLen)
		}
	}
	if len(req.Chats) > maxChats {
		errs.add("chats", "lists %d chats; the limit is %d (%s): split the broadcast", len(req.Chats), maxChats, EnvMaxChats)
	}
	if len(req.Values) > maxChats {
		errs.add("values", "has values for %d chats; the limit is %d (%s)", len(req.Values), maxChats, EnvMaxChats)
	}
	for chat, vs := range req.Values {
		if field := longValue(vs, maxText); field != "" {
			errs.add("values", "has a value of %q for chat %q longer than a text may be (%d UTF-16 code units)", field, chat, maxText)
			break
		}
	}
	if field := longValue(req.Defaults, maxText); field != "" {
		errs.add("defaults", "has a value of %q longer than a text may be (%d UTF-16 code units)", field, maxText)
	}
	return errs.err()
}

// longValue names a value of vs longer than maxText ("" when none is).
func longValue(vs map[string]string, maxText int) string {
	for k, v := range vs {
		if len(v) > maxText && markup.UTF16Len(v) > maxText {
			return k
		}
	}
	return ""
}

// checkEvery is how many chats a loop handles between two looks at its
// context: a request whose client left stops within that many.
const checkEvery = 1024

// stopped returns ctx's error every checkEvery-th i, nil otherwise.
func stopped(ctx context.Context, i int) error {
	if i%checkEvery != 0 {
		return nil
	}
	return ctx.Err()
}
