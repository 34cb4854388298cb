package jobs_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/jobs"
)

// validMessage returns a message that passes Validate; cases change one thing.
func validMessage() jobs.SendMessage {
	return jobs.SendMessage{V: jobs.PayloadVersion, Chat: "42", Text: "disk full"}
}

// fieldsOf returns the field names of a *jobs.ValidationError, or fails.
func fieldsOf(t *testing.T, err error) map[string]string {
	t.Helper()
	var verr *jobs.ValidationError
	if !errors.As(err, &verr) {
		t.Fatalf("error %v (%T) is not a *jobs.ValidationError", err, err)
	}
	out := map[string]string{}
	for _, f := range verr.Fields {
		out[f.Field] = f.Message
	}
	return out
}

func TestValidateChat(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, want string
		wantErr  string // substring of the error; "" means valid
	}{
		{in: "42", want: "42"},
		{in: "-1001234567890", want: "-1001234567890"},
		{in: "  42\t", want: "42"},
		{in: "+42", want: "42"},
		{in: "0042", want: "42"},
		{in: "@alerts", want: "@alerts"},
		{in: "@Ops_Team_2024", want: "@Ops_Team_2024"},
		{in: "@" + strings.Repeat("a", 32), want: "@" + strings.Repeat("a", 32)},
		{in: "", wantErr: "is required"},
		{in: "   ", wantErr: "is required"},
		{in: "abc", wantErr: "neither a numeric chat id nor an @username"},
		{in: "0", wantErr: "neither"},
		{in: "-0", wantErr: "neither"},
		{in: "1.5", wantErr: "neither"},
		{in: "99999999999999999999", wantErr: "neither"},
		{in: "@ab", wantErr: "not a valid @username"},
		{in: "@abcd", wantErr: "not a valid @username"},
		{in: "@1abcd", wantErr: "not a valid @username"},
		{in: "@" + strings.Repeat("a", 33), wantErr: "not a valid @username"},
		{in: "@with-dash", wantErr: "not a valid @username"},
		{in: "@", wantErr: "not a valid @username"},
		{in: strings.Repeat(" ", jobs.MaxChatBytes-2) + "42", want: "42"},
		{in: strings.Repeat("0", jobs.MaxChatBytes-2) + "42", want: "42"},
		{in: strings.Repeat(" ", jobs.MaxChatBytes-1) + "42", wantErr: "at most 256"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			got, err := jobs.ValidateChat(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ValidateChat(%q) = %q, %v; want an error containing %q", tt.in, got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ValidateChat(%q) = %q, %v; want %q, nil", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	emoji := "\U0001F525" // 1 rune, 4 UTF-8 bytes, 2 UTF-16 code units
	tests := []struct {
		name   string
		mutate func(m *jobs.SendMessage)
		limits jobs.Limits
		// wantFields maps each expected invalid field to a substring of its
		// message; empty means the message is valid.
		wantFields map[string]string
	}{
		{name: "valid", mutate: func(*jobs.SendMessage) {}},
		{name: "valid username chat", mutate: func(m *jobs.SendMessage) { m.Chat = "@alerts" }},
		{name: "valid html", mutate: func(m *jobs.SendMessage) { m.ParseMode = "HTML" }},
		{name: "valid lower-case mode", mutate: func(m *jobs.SendMessage) { m.ParseMode = "markdownv2" }},
		{name: "valid all options", mutate: func(m *jobs.SendMessage) {
			m.DisableNotification, m.DisableLinkPreview, m.ProtectContent = true, true, true
			m.MessageThreadID = 7
			m.IdempotencyKey = strings.Repeat("k", 256)
		}},
		{name: "version zero", mutate: func(m *jobs.SendMessage) { m.V = 0 }},
		{name: "newer version", mutate: func(m *jobs.SendMessage) { m.V = jobs.PayloadVersion + 1 },
			wantFields: map[string]string{"v": "upgrade"}},
		{name: "negative version", mutate: func(m *jobs.SendMessage) { m.V = -1 },
			wantFields: map[string]string{"v": "not supported"}},
		{name: "missing chat", mutate: func(m *jobs.SendMessage) { m.Chat = "" },
			wantFields: map[string]string{"chat": "is required"}},
		{name: "word chat", mutate: func(m *jobs.SendMessage) { m.Chat = "abc" },
			wantFields: map[string]string{"chat": `"abc"`}},
		{name: "short username", mutate: func(m *jobs.SendMessage) { m.Chat = "@ab" },
			wantFields: map[string]string{"chat": "@username"}},
		{name: "zero chat", mutate: func(m *jobs.SendMessage) { m.Chat = "0" },
			wantFields: map[string]string{"chat": `"0"`}},
		{name: "empty text", mutate: func(m *jobs.SendMessage) { m.Text = "" },
			wantFields: map[string]string{"text": "required"}},
		{name: "blank text", mutate: func(m *jobs.SendMessage) { m.Text = " \n\t " },
			wantFields: map[string]string{"text": "blank"}},
		{name: "text at limit in UTF-16 units", limits: jobs.Limits{MaxTextLen: 10},
			mutate: func(m *jobs.SendMessage) { m.Text = strings.Repeat(emoji, 5) }},
		{name: "text over limit in UTF-16 units though under it in runes", limits: jobs.Limits{MaxTextLen: 10},
			mutate:     func(m *jobs.SendMessage) { m.Text = strings.Repeat(emoji, 6) },
			wantFields: map[string]string{"text": "12 UTF-16 code units long; the limit is 10"}},
		{name: "default limit accepts DefaultMaxTextLen",
			mutate: func(m *jobs.SendMessage) { m.Text = strings.Repeat("a", jobs.DefaultMaxTextLen) }},
		{name: "default limit refuses one more",
			mutate:     func(m *jobs.SendMessage) { m.Text = strings.Repeat("a", jobs.DefaultMaxTextLen+1) },
			wantFields: map[string]string{"text": "the limit is 32768"}},
		{name: "legacy markdown", mutate: func(m *jobs.SendMessage) { m.ParseMode = "Markdown" },
			wantFields: map[string]string{"parse_mode": "MarkdownV2"}},
		{name: "unknown parse mode", mutate: func(m *jobs.SendMessage) { m.ParseMode = "bbcode" },
			wantFields: map[string]string{"parse_mode": "unknown parse mode"}},
		{name: "negative thread", mutate: func(m *jobs.SendMessage) { m.MessageThreadID = -3 },
			wantFields: map[string]string{"message_thread_id": "got -3"}},
		{name: "long idempotency key", mutate: func(m *jobs.SendMessage) { m.IdempotencyKey = strings.Repeat("k", 257) },
			wantFields: map[string]string{"idempotency_key": "257 bytes"}},
		{name: "idempotency key not UTF-8", mutate: func(m *jobs.SendMessage) { m.IdempotencyKey = "k\xff" },
			wantFields: map[string]string{"idempotency_key": "UTF-8"}},
		{name: "everything wrong at once", mutate: func(m *jobs.SendMessage) {
			*m = jobs.SendMessage{V: 9, Chat: "@x", Text: " ", ParseMode: "Markdown", MessageThreadID: -1, IdempotencyKey: strings.Repeat("k", 300)}
		}, wantFields: map[string]string{"v": "", "chat": "", "text": "", "parse_mode": "", "message_thread_id": "", "idempotency_key": ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m := validMessage()
			tt.mutate(&m)
			err := m.Validate(tt.limits)
			if len(tt.wantFields) == 0 {
				if err != nil {
					t.Fatalf("Validate(%+v) = %v, want nil", m, err)
				}
				return
			}
			got := fieldsOf(t, err)
			if len(got) != len(tt.wantFields) {
				t.Errorf("invalid fields %v, want exactly %v", got, tt.wantFields)
			}
			for field, sub := range tt.wantFields {
				msg, ok := got[field]
				if !ok {
					t.Errorf("field %q not reported; got %v", field, got)
					continue
				}
				if !strings.Contains(msg, sub) {
					t.Errorf("field %q message %q does not contain %q", field, msg, sub)
				}
				if !strings.Contains(err.Error(), field+": ") {
					t.Errorf("Error() %q does not name %q", err.Error(), field)
				}
			}
		})
	}
}

func TestNormalize(t *testing.T) {
	t.Parallel()
	now := time.Date(2024, 5, 6, 7, 8, 9, 0, time.FixedZone("CEST", 2*3600))
	earlier := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name    string
		in      jobs.SendMessage
		want    jobs.SendMessage
		wantErr string // invalid field expected, "" for none
	}{
		{
			name: "fills version and creation time in UTC",
			in:   jobs.SendMessage{Chat: "42", Text: "hi"},
			want: jobs.SendMessage{V: 1, Chat: "42", Text: "hi", CreatedAt: now.UTC()},
		},
		{
			name: "keeps a given creation time",
			in:   jobs.SendMessage{Chat: "42", Text: "hi", CreatedAt: earlier},
			want: jobs.SendMessage{V: 1, Chat: "42", Text: "hi", CreatedAt: earlier},
		},
		{
			name: "canonical chat id",
			in:   jobs.SendMessage{Chat: " +0042 ", Text: "hi"},
			want: jobs.SendMessage{V: 1, Chat: "42", Text: "hi", CreatedAt: now.UTC()},
		},
		{
			name: "trimmed username",
			in:   jobs.SendMessage{Chat: " @alerts ", Text: "hi"},
			want: jobs.SendMessage{V: 1, Chat: "@alerts", Text: "hi", CreatedAt: now.UTC()},
		},
		{
			name: "html casing",
			in:   jobs.SendMessage{Chat: "42", Text: "<b>hi</b>", ParseMode: "html"},
			want: jobs.SendMessage{V: 1, Chat: "42", Text: "<b>hi</b>", ParseMode: "HTML", CreatedAt: now.UTC()},
		},
		{
			name: "markdownv2 casing",
			in:   jobs.SendMessage{Chat: "42", Text: "*hi*", ParseMode: "MARKDOWNV2"},
			want: jobs.SendMessage{V: 1, Chat: "42", Text: "*hi*", ParseMode: "MarkdownV2", CreatedAt: now.UTC()},
		},
		{
			name: "none means plain",
			in:   jobs.SendMessage{Chat: "42", Text: "hi", ParseMode: "none"},
			want: jobs.SendMessage{V: 1, Chat: "42", Text: "hi", CreatedAt: now.UTC()},
		},
		{
			name:    "bad chat is left alone and reported",
			in:      jobs.SendMessage{Chat: "abc", Text: "hi"},
			want:    jobs.SendMessage{V: 1, Chat: "abc", Text: "hi", CreatedAt: now.UTC()},
			wantErr: "chat",
		},
		{
			name:    "legacy markdown is left alone and reported",
			in:      jobs.SendMessage{Chat: "42", Text: "hi", ParseMode: "Markdown"},
			want:    jobs.SendMessage{V: 1, Chat: "42", Text: "hi", ParseMode: "Markdown", CreatedAt: now.UTC()},
			wantErr: "parse_mode",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m := tt.in
			err := m.Normalize(jobs.Limits{}, now)
			if tt.wantErr == "" && err != nil {
				t.Fatalf("Normalize: %v", err)
			}
			if tt.wantErr != "" {
				if _, ok := fieldsOf(t, err)[tt.wantErr]; !ok {
					t.Fatalf("Normalize error %v does not name %q", err, tt.wantErr)
				}
			}
			if m != tt.want {
				t.Fatalf("normalised to\n%+v\nwant\n%+v", m, tt.want)
			}
		})
	}
}

func TestDecode(t *testing.T) {
	t.Parallel()
	t.Run("newer version asks for an upgrade", func(t *testing.T) {
		t.Parallel()
		_, err := jobs.Decode([]byte(`{"v":2,"chat":"42","text":"hi","created_at":"2024-01-01T00:00:00Z"}`))
		if err == nil {
			t.Fatal("Decode accepted payload version 2")
		}
		if msg := fieldsOf(t, err)["v"]; !strings.Contains(msg, "upgrade") || !strings.Contains(msg, "2") {
			t.Fatalf("version error %q does not say which version or to upgrade", msg)
		}
	})
	t.Run("missing version means version 1", func(t *testing.T) {
		t.Parallel()
		m, err := jobs.Decode([]byte(`{"chat":"42","text":"hi"}`))
		if err != nil {
			t.Fatal(err)
		}
		if m.V != jobs.PayloadVersion {
			t.Fatalf("V = %d, want %d", m.V, jobs.PayloadVersion)
		}
	})
	t.Run("unknown fields are tolerated", func(t *testing.T) {
		t.Parallel()
		m, err := jobs.Decode([]byte(`{"v":1,"chat":"42","text":"hi","reply_markup":{"x":[1,2]},"future":true}`))
		if err != nil {
			t.Fatalf("Decode refused a payload with unknown fields: %v", err)
		}
		if m.Chat != "42" || m.Text != "hi" {
			t.Fatalf("decoded %+v", m)
		}
	})
	t.Run("invalid payloads are refused", func(t *testing.T) {
		t.Parallel()
		for _, p := range []string{``, `not json`, `[]`, `"x"`, `{"chat":42,"text":"hi"}`, `{"chat":"42","text":" "}`, `{"chat":"42","text":"hi","v":-1}`} {
			if m, err := jobs.Decode([]byte(p)); err == nil {
				t.Errorf("Decode(%q) = %+v, nil; want an error", p, m)
			}
		}
	})
	t.Run("not JSON names the type", func(t *testing.T) {
		t.Parallel()
		_, err := jobs.Decode([]byte(`{`))
		if err == nil || !strings.Contains(err.Error(), "SendMessage") {
			t.Fatalf("error %v does not say what was expected", err)
		}
	})
	t.Run("worker bound is wider than the producer limit", func(t *testing.T) {
		t.Parallel()
		m := validMessage()
		m.Text = strings.Repeat("a", jobs.DefaultMaxTextLen*2)
		b, err := m.Encode()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := jobs.Decode(b); err != nil {
			t.Fatalf("Decode refused a long text a producer with a larger limit could store: %v", err)
		}
	})
}

func TestEncodeDecodeRoundTrip(t *testing.T) {
	t.Parallel()
	in := jobs.SendMessage{
		V: 1, Chat: "-1001234567890", Text: "<b>disk</b> full \U0001F525 on \"db-1\" & <co>",
		ParseMode: "HTML", DisableNotification: true, MessageThreadID: 12,
		DisableLinkPreview: true, ProtectContent: true, IdempotencyKey: "alert-7",
		CreatedAt: time.Date(2024, 2, 29, 23, 59, 59, 123456789, time.UTC),
	}
	b, err := in.Encode()
	if err != nil {
		t.Fatal(err)
	}
	out, err := jobs.Decode(b)
	if err != nil {
		t.Fatalf("Decode(%s): %v", b, err)
	}
	if !out.CreatedAt.Equal(in.CreatedAt) {
		t.Fatalf("created_at %v, want %v", out.CreatedAt, in.CreatedAt)
	}
	out.CreatedAt, in.CreatedAt = time.Time{}, time.Time{}
	if out != in {
		t.Fatalf("round trip\n got %+v\nwant %+v", out, in)
	}
	for _, key := range []string{`"v":1`, `"chat":"-1001234567890"`, `"parse_mode":"HTML"`, `"message_thread_id":12`, `"created_at":"2024-02-29T23:59:59.123456789Z"`} {
		if !strings.Contains(string(b), key) {
			t.Errorf("payload %s lacks %s", b, key)
		}
	}
}

func TestEncodeOmitsUnsetOptions(t *testing.T) {
	t.Parallel()
	b, err := validMessage().Encode()
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"parse_mode", "disable_notification", "message_thread_id", "disable_link_preview", "protect_content", "idempotency_key"} {
		if strings.Contains(string(b), key) {
			t.Errorf("payload %s carries unset option %s", b, key)
		}
	}
}

func TestValidationErrorListsEveryField(t *testing.T) {
	t.Parallel()
	err := &jobs.ValidationError{Fields: []jobs.FieldError{{Field: "chat", Message: "bad"}, {Field: "text", Message: "worse"}}}
	if got, want := err.Error(), "invalid message: chat: bad; text: worse"; got != want {
		t.Fatalf("Error() = %q, want %q", got, want)
	}
}
