package jobs

import (
	"net/url"
	"strings"
	"time"
	"unicode/utf8"
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

// MaxThreadKey is the longest Thread.Key, in bytes.
const MaxThreadKey = 256

// ThreadRetention is how long a thread's first message is remembered: a
// resolution that comes later goes out as a plain message.
const ThreadRetention = 7 * 24 * time.Hour

// ThreadWait bounds how long a reply or edit waits for the thread's first
// message to be sent (it was accepted, but is still queued): after that it
// goes out as a plain message.
const ThreadWait = 10 * time.Minute

// Thread ties messages about one subject in one chat, per bot.
type Thread struct {
	// Key names the subject, such as an alert's fingerprint.
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

// MaxPhotoBytes is the largest photo upload (Telegram's limit for photos).
const MaxPhotoBytes = 10 << 20

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

// validateExtras checks Thread, Photo and Buttons.
func (m *SendMessage) validateExtras(verr *ValidationError) {
	if t := m.Thread; t != nil {
		switch {
		case strings.TrimSpace(t.Key) == "":
			verr.add("thread.key", "is required")
		case len(t.Key) > MaxThreadKey:
			verr.add("thread.key", "is %d bytes long; the limit is %d", len(t.Key), MaxThreadKey)
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
		case len(p.Data) > MaxPhotoBytes:
			verr.add("photo.data", "is %d bytes; Telegram takes photo uploads of at most %d", len(p.Data), MaxPhotoBytes)
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
