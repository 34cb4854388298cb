package broadcast

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/keys"
	"github.com/herald-dev/herald/internal/markup"
)

// Request is one broadcast: one text (a template, see template.go) for
// many chats of one bot.
type Request struct {
	// Bot is one of HERALD_BOTS; "" is the bot "default".
	Bot string
	// Chats are the chats, as numeric ids or @usernames; a chat listed
	// twice gets one message. Audience, instead, names a chat list the
	// sender uploaded (PutAudience).
	Chats    []string
	Audience string
	// Text is the template; Values fill its placeholders per chat (keyed
	// by the chat as Chats spells it), Defaults where a chat has none.
	Text      string
	Values    map[string]map[string]string
	Defaults  map[string]string
	ParseMode string
	// The options of a message, as in POST /v1/messages.
	DisableNotification bool
	DisableLinkPreview  bool
	ProtectContent      bool
	Photo               *jobs.Photo
	Buttons             *jobs.Keyboard
	// CallbackURL receives every message's status events; the caller has
	// checked it (statushook.Emitter.CheckURL).
	CallbackURL string
	// IdempotencyKey makes a repeated request a no-op (the broadcast id
	// derives from it and From).
	IdempotencyKey string
	// From names the token that sends the broadcast; Paid says it may
	// spend the bot's Stars (jobs.SendMessage.Paid).
	From string
	Paid bool
	// Admit, when set, is asked once the request is valid and before
	// anything is stored, with the number of chats and the messages'
	// creation time: its error (a quota's refusal) is Create's.
	Admit func(ctx context.Context, chats int, at time.Time) error
}

// maxListedErrors is how many bad chats one answer names.
const maxListedErrors = 10

// fieldErrors collects a request's problems.
type fieldErrors []jobs.FieldError

func (f *fieldErrors) add(field, format string, args ...any) {
	*f = append(*f, jobs.FieldError{Field: field, Message: fmt.Sprintf(format, args...)})
}

func (f fieldErrors) err() error {
	if len(f) == 0 {
		return nil
	}
	return &jobs.ValidationError{Fields: f}
}

// checkChats validates and normalises chats, leaving out repeats: each
// bad entry is named by its index (the first maxListedErrors of them).
// field names the list in errors ("chats").
func checkChats(field string, chats []string, maxChats int) (list []string, repeats int, err error) {
	var errs fieldErrors
	switch {
	case len(chats) == 0:
		errs.add(field, "is required: list 1 to %d chats (numeric ids or @usernames), or name an audience", maxChats)
	case len(chats) > maxChats:
		errs.add(field, "lists %d chats; the limit is %d (%s): split the broadcast", len(chats), maxChats, EnvMaxChats)
	}
	if len(errs) > 0 {
		return nil, 0, errs.err()
	}
	seen := make(map[string]struct{}, len(chats))
	list = make([]string, 0, len(chats))
	bad := 0
	for i, c := range chats {
		norm, err := jobs.ValidateChat(c)
		if err != nil {
			if bad++; bad <= maxListedErrors {
				errs.add(fmt.Sprintf("%s[%d]", field, i), "%v", err)
			}
			continue
		}
		k := keys.NormChat(norm)
		if _, dup := seen[k]; dup {
			repeats++
			continue
		}
		seen[k] = struct{}{}
		list = append(list, norm)
	}
	if bad > maxListedErrors {
		errs.add(field, "has %d more chats that are neither numeric ids nor @usernames", bad-maxListedErrors)
	}
	return list, repeats, errs.err()
}

// chatEntry judges an entry of a body's chats as it arrives, as
// httpapi.ChatRef and checkChats will: a string is a chat reference, an
// integer literal its digits; other literals are left to the decoder.
func chatEntry(text string, quoted bool) error {
	if !quoted {
		if _, err := strconv.ParseInt(text, 10, 64); err != nil {
			return nil
		}
	}
	_, err := jobs.ValidateChat(text)
	return err
}

// checkShape reports the problems of a request that do not depend on
// its chats: a photo to upload, values for chats it does not list.
func checkShape(req Request, chats []string) error {
	var errs fieldErrors
	if req.Photo != nil && len(req.Photo.Data) > 0 {
		errs.add("photo.data", "is not accepted in a broadcast (every message would carry its own copy); give photo.url, a URL or file_id Telegram fetches")
	}
	if req.Audience != "" && len(req.Chats) > 0 {
		errs.add("audience", "and chats are both given; name an audience or list the chats")
	}
	if len(req.Values) > 0 {
		listed := make(map[string]struct{}, len(chats))
		for _, c := range chats {
			listed[keys.NormChat(c)] = struct{}{}
		}
		for c := range req.Values {
			norm, err := jobs.ValidateChat(c)
			if _, ok := listed[keys.NormChat(norm)]; err != nil || !ok {
				errs.add("values", "has values for %q, which is not among the chats", c)
				break
			}
		}
	}
	return errs.err()
}

// valuesByChat re-keys the values by the chats as checkChats spells them.
func valuesByChat(values map[string]map[string]string) map[string]map[string]string {
	out := make(map[string]map[string]string, len(values))
	for c, v := range values {
		if norm, err := jobs.ValidateChat(c); err == nil {
			out[keys.NormChat(norm)] = v
		}
	}
	return out
}

// partsOf estimates how many messages a text becomes: Telegram takes
// 4,096 characters per message (the worker splits longer texts).
func partsOf(text string) int {
	const limit = 4096
	return max(1, (markup.UTF16Len(strings.TrimSpace(text))+limit-1)/limit)
}
