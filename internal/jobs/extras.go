package jobs

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/herald-dev/herald/internal/keys"
)

// Thread modes (Thread.Mode).
const (
	// ThreadOpen starts a thread: the message's id is remembered under the
	// thread's key, and replies and edits of later messages refer to it.
	ThreadOpen = "open"
	// ThreadReply sends the message as a reply to the thread's first
	// message (a plain message when there is none).
	ThreadReply = "reply"
	// ThreadEdit replaces the text of the thread's first message with this
	// one (a new message when there is none, or it can no longer be
	// edited).
	ThreadEdit = "edit"
)

// MaxThreadKey is the longest Thread.Key a sender may write, in bytes. The
// namespace that the Enqueuer puts in front of it (Request.ThreadSpace)
// does not count; a stored key may be up to MaxThreadSpace bytes longer.
const MaxThreadKey = 256

// MaxThreadSpace is the longest thread namespace (Request.ThreadSpace), in
// bytes.
const MaxThreadSpace = 64

// maxStoredThreadKey bounds Thread.Key in a payload, namespace included.
const maxStoredThreadKey = MaxThreadKey + MaxThreadSpace

// Thread namespaces. A thread's stored key starts with the namespace of
// whoever opened it, so that a key a sender writes can only reach the
// threads opened in the same namespace: alerts' threads and those of each
// API token are apart. Namespaces end in "/" and none is a prefix of
// another. (internal/interact keeps the threads of pressed messages under
// "press/".)
const (
	// AlertThreadSpace holds alerts' threads (internal/alerts builds their
	// keys with it).
	AlertThreadSpace = "alert/"
	// CLIThreadSpace holds the threads of `producer send`.
	CLIThreadSpace = "cli/"
	// messageThreadSpace starts the namespace of each API token.
	messageThreadSpace = "msg/"
)

// MessageThreadSpace is the namespace of the threads that POST /v1/messages
// opens for the token named principal: "msg/<principal>/". A name that
// could blur the boundary (empty, too long, or with a character outside
// a-z, 0-9, _ and -) is replaced by "=" and a digest of it, which no valid
// name can spell.
func MessageThreadSpace(principal string) string {
	if !plainSpaceName(principal) {
		sum := sha256.Sum256([]byte(principal))
		principal = "=" + hex.EncodeToString(sum[:16])
	}
	return messageThreadSpace + principal + "/"
}

// plainSpaceName reports whether name may appear as is in a namespace.
func plainSpaceName(name string) bool {
	return name != "" && len(name) <= MaxThreadSpace-len(messageThreadSpace)-1 && keys.NameChars(name)
}

// spaceThread puts the request's namespace in front of its message's
// thread key (on a copy: the caller's Thread is left alone). An empty
// namespace leaves the key as it is: the caller built the whole key.
func spaceThread(m *SendMessage, space string) error {
	if m.Thread == nil || space == "" {
		return nil
	}
	if len(space) > MaxThreadSpace || !strings.HasSuffix(space, "/") || !utf8.ValidString(space) {
		return fmt.Errorf("jobs: %q is not a thread namespace (at most %d bytes, ending in /)", space, MaxThreadSpace)
	}
	t := *m.Thread
	t.Key = space + t.Key
	m.Thread = &t
	return nil
}

// ThreadRetention is how long a thread's first message is remembered: a
// resolution that comes later goes out as a plain message.
const ThreadRetention = 7 * 24 * time.Hour

// ThreadWait bounds how long a reply or edit waits for the thread's first
// message to be sent (it was accepted, but is still queued): after that it
// goes out as a plain message.
const ThreadWait = 10 * time.Minute

// Thread ties messages about one subject in one chat, per bot.
type Thread struct {
	// Key names the subject, such as an alert's fingerprint. In a payload
	// it starts with the namespace of whoever opened the thread (see
	// Request.ThreadSpace).
	Key string `json:"key"`
	// Mode is ThreadOpen, ThreadReply or ThreadEdit.
	Mode string `json:"mode"`
	// Close forgets the thread once this message is sent (an alert's
	// resolution): the next message with the key opens a new one.
	Close bool `json:"close,omitempty"`
}

// Photo is a message's image: a URL that Telegram fetches, or an uploaded
// file (base64 in the JSON payload).
type Photo struct {
	URL  string `json:"url,omitempty"`
	Data []byte `json:"data,omitempty"`
	Name string `json:"name,omitempty"`
}

// maxPhotoBytes is the largest photo upload (Telegram's limit for photos).
const maxPhotoBytes = 10 << 20

// Button is one inline keyboard button: Data comes back to the bot when
// pressed (at most 64 bytes), or URL opens.
type Button struct {
	Text string `json:"text"`
	Data string `json:"callback_data,omitempty"`
	URL  string `json:"url,omitempty"`
}

// Keyboard is an inline keyboard: rows of buttons.
type Keyboard [][]Button

// Rows returns the keyboard's rows (none for a nil keyboard).
func (k *Keyboard) Rows() [][]Button {
	if k == nil {
		return nil
	}
	return *k
}

// validateExtras checks Thread (its key at most maxKey bytes), Photo and
// Buttons.
func (m *SendMessage) validateExtras(verr *ValidationError, maxKey int) {
	if t := m.Thread; t != nil {
		switch {
		case strings.TrimSpace(t.Key) == "":
			verr.add("thread.key", "is required")
		case len(t.Key) > maxKey:
			verr.add("thread.key", "is %d bytes long; the limit is %d", len(t.Key), maxKey)
		case !utf8.ValidString(t.Key):
			verr.add("thread.key", "is not valid UTF-8")
		}
		switch t.Mode {
		case ThreadOpen, ThreadReply, ThreadEdit:
		default:
			verr.add("thread.mode", "%q is not one of %s, %s, %s", t.Mode, ThreadOpen, ThreadReply, ThreadEdit)
		}
	}
	if p := m.Photo; p != nil {
		switch {
		case (p.URL == "") == (len(p.Data) == 0):
			verr.add("photo", "needs exactly one of url and data")
		case len(p.Data) > maxPhotoBytes:
			verr.add("photo.data", "is %d bytes; Telegram takes photo uploads of at most %d", len(p.Data), maxPhotoBytes)
		case p.URL != "":
			if u, err := url.Parse(p.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				verr.add("photo.url", "must be an http:// or https:// URL Telegram can fetch")
			}
		}
	}
	n := 0
	for i, row := range m.Buttons.Rows() {
		for j, b := range row {
			n++
			field := "buttons[" + itoa(i) + "][" + itoa(j) + "]"
			switch {
			case strings.TrimSpace(b.Text) == "":
				verr.add(field+".text", "is required")
			case (b.Data == "") == (b.URL == ""):
				verr.add(field, "needs exactly one of callback_data and url")
			case len(b.Data) > 64:
				verr.add(field+".callback_data", "is %d bytes; Telegram allows 64", len(b.Data))
			}
		}
	}
	if n > 100 {
		verr.add("buttons", "has %d buttons; Telegram allows 100", n)
	}
}

func itoa(i int) string {
	const digits = "0123456789"
	if i < 10 {
		return digits[i : i+1]
	}
	return itoa(i/10) + digits[i%10:i%10+1]
}
