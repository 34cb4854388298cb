package telegramfake

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
)

// The control endpoints of replies, edits, photos and updates, registered
// by Handler beside the others (see Handler):
//
//	GET  /fake/message?chat=ID&message_id=N      Lookup: Message as JSON, 404 when none
//	GET  /fake/edits?chat=ID&message_id=N        Edits: JSON array of Edit
//	POST /fake/delete-message?chat=ID&message_id=N   DeleteMessage
//	POST /fake/photo-url?url=U&unreachable=BOOL&wrong_type=BOOL&size=N&width=N&height=N   SetPhotoURL
//	POST /fake/press?bot=B&chat=ID&message_id=N&user_id=N&first_name=S&last_name=S&username=S&data=S
//	                                             Press: the CallbackQuery as JSON
//	POST /fake/redeliver?bot=B&update_id=N&times=N   Redeliver
//	GET  /fake/callbacks?bot=B                   CallbackQueries: JSON array of CallbackQuery
//	GET  /fake/updates?bot=B                     Updates: updateState as JSON
//
// bot is a bot's name or id and may be left out when the fake serves one
// bot. Chats are numeric ids, as Message.ChatID holds them.
func (s *Server) handleInteractive(mux *http.ServeMux) {
	mux.HandleFunc("GET /fake/message", s.inspect(func(r *http.Request) (any, error) {
		chat, id, err := formMessage(r)
		if err != nil {
			return nil, err
		}
		m, ok := s.Lookup(chat, id)
		if !ok {
			return nil, errNotHeld
		}
		return m, nil
	}))
	mux.HandleFunc("GET /fake/edits", s.inspect(func(r *http.Request) (any, error) {
		chat, id, err := formMessage(r)
		if err != nil {
			return nil, err
		}
		edits := s.Edits(chat, id)
		if edits == nil {
			edits = []Edit{}
		}
		return edits, nil
	}))
	mux.HandleFunc("POST /fake/delete-message", s.control(func(r *http.Request) error {
		chat, id, err := formMessage(r)
		if err != nil {
			return err
		}
		return s.DeleteMessage(chat, id)
	}))
	mux.HandleFunc("POST /fake/photo-url", s.control(s.controlPhotoURL))
	mux.HandleFunc("POST /fake/press", s.inspect(s.controlPress))
	mux.HandleFunc("POST /fake/redeliver", s.control(func(r *http.Request) error {
		id, err := formInt(r, "update_id")
		if err != nil {
			return err
		}
		times := 1
		if r.Form.Get("times") != "" {
			if times, err = formInt(r, "times"); err != nil {
				return err
			}
		}
		return s.Redeliver(r.Form.Get("bot"), id, times)
	}))
	mux.HandleFunc("GET /fake/callbacks", s.inspect(func(r *http.Request) (any, error) {
		if _, err := s.oneBot(r.Form.Get("bot")); err != nil {
			return nil, fmt.Errorf("bot: %w", err)
		}
		return s.CallbackQueries(r.Form.Get("bot")), nil
	}))
	mux.HandleFunc("GET /fake/updates", s.inspect(func(r *http.Request) (any, error) {
		return s.Updates(r.Form.Get("bot"))
	}))
}

// statusError is the error Remote returns for an answer other than 200.
type statusError struct {
	code int
	msg  string
}

func (e statusError) Error() string { return e.msg }

// errNotHeld answers a lookup of a message the fake does not hold with 404.
var errNotHeld = errors.New("no such message")

// inspect wraps an action that answers a JSON value; an error is a 400
// with a plain-text reason (404 for errNotHeld).
func (s *Server) inspect(act func(*http.Request) (any, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		v, err := act(r)
		switch {
		case errors.Is(err, errNotHeld):
			http.Error(w, err.Error(), http.StatusNotFound)
		case err != nil:
			http.Error(w, err.Error(), http.StatusBadRequest)
		default:
			writeJSON(w, http.StatusOK, v)
		}
	}
}

func formInt(r *http.Request, name string) (int, error) {
	n, err := strconv.Atoi(r.Form.Get(name))
	if err != nil {
		return 0, fmt.Errorf("%s: want an integer, got %q", name, r.Form.Get(name))
	}
	return n, nil
}

func formInt64(r *http.Request, name string) (int64, error) {
	v := r.Form.Get(name)
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: want an integer, got %q", name, v)
	}
	return n, nil
}

// formMessage reads the chat and message_id of a control request.
func formMessage(r *http.Request) (int64, int, error) {
	chat, err := strconv.ParseInt(r.Form.Get("chat"), 10, 64)
	if err != nil || chat == 0 {
		return 0, 0, fmt.Errorf("chat: want a numeric chat id, got %q", r.Form.Get("chat"))
	}
	id, err := formInt(r, "message_id")
	if err != nil {
		return 0, 0, err
	}
	return chat, id, nil
}

func (s *Server) controlPhotoURL(r *http.Request) error {
	u := r.Form.Get("url")
	if u == "" {
		return errors.New("url: want the photo URL")
	}
	var p PhotoURL
	var err error
	if p.Unreachable, err = formBool(r, "unreachable"); err != nil {
		return err
	}
	if p.WrongType, err = formBool(r, "wrong_type"); err != nil {
		return err
	}
	if p.Size, err = formInt64(r, "size"); err != nil {
		return err
	}
	w, err := formInt64(r, "width")
	if err != nil {
		return err
	}
	h, err := formInt64(r, "height")
	if err != nil {
		return err
	}
	p.Width, p.Height = int(w), int(h)
	s.SetPhotoURL(u, p)
	return nil
}

func (s *Server) controlPress(r *http.Request) (any, error) {
	chat, id, err := formMessage(r)
	if err != nil {
		return nil, err
	}
	uid, err := formInt64(r, "user_id")
	if err != nil {
		return nil, err
	}
	from := User{ID: uid, FirstName: r.Form.Get("first_name"), LastName: r.Form.Get("last_name"), Username: r.Form.Get("username")}
	return s.Press(r.Form.Get("bot"), chat, id, from, r.Form.Get("data"))
}

// Lookup calls Server.Lookup; ok is false when the fake holds no such
// message.
func (rm Remote) Lookup(ctx context.Context, chatID int64, messageID int) (m Message, ok bool, err error) {
	q := url.Values{"chat": {strconv.FormatInt(chatID, 10)}, "message_id": {strconv.Itoa(messageID)}}
	err = rm.do(ctx, http.MethodGet, "/fake/message", q, &m)
	var st statusError
	if errors.As(err, &st) && st.code == http.StatusNotFound {
		return Message{}, false, nil
	}
	return m, err == nil, err
}

// Edits calls Server.Edits.
func (rm Remote) Edits(ctx context.Context, chatID int64, messageID int) ([]Edit, error) {
	var edits []Edit
	q := url.Values{"chat": {strconv.FormatInt(chatID, 10)}, "message_id": {strconv.Itoa(messageID)}}
	err := rm.do(ctx, http.MethodGet, "/fake/edits", q, &edits)
	return edits, err
}

// DeleteMessage calls Server.DeleteMessage.
func (rm Remote) DeleteMessage(ctx context.Context, chatID int64, messageID int) error {
	q := url.Values{"chat": {strconv.FormatInt(chatID, 10)}, "message_id": {strconv.Itoa(messageID)}}
	return rm.do(ctx, http.MethodPost, "/fake/delete-message", q, nil)
}

// SetPhotoURL calls Server.SetPhotoURL.
func (rm Remote) SetPhotoURL(ctx context.Context, rawURL string, p PhotoURL) error {
	q := url.Values{
		"url":         {rawURL},
		"unreachable": {strconv.FormatBool(p.Unreachable)},
		"wrong_type":  {strconv.FormatBool(p.WrongType)},
		"size":        {strconv.FormatInt(p.Size, 10)},
		"width":       {strconv.Itoa(p.Width)},
		"height":      {strconv.Itoa(p.Height)},
	}
	return rm.do(ctx, http.MethodPost, "/fake/photo-url", q, nil)
}

// Press calls Server.Press.
func (rm Remote) Press(ctx context.Context, bot string, chatID int64, messageID int, from User, data string) (CallbackQuery, error) {
	q := url.Values{
		"chat":       {strconv.FormatInt(chatID, 10)},
		"message_id": {strconv.Itoa(messageID)},
		"user_id":    {strconv.FormatInt(from.ID, 10)},
		"first_name": {from.FirstName},
		"last_name":  {from.LastName},
		"username":   {from.Username},
		"data":       {data},
	}
	if bot != "" {
		q.Set("bot", bot)
	}
	var cq CallbackQuery
	err := rm.do(ctx, http.MethodPost, "/fake/press", q, &cq)
	return cq, err
}

// Redeliver calls Server.Redeliver.
func (rm Remote) Redeliver(ctx context.Context, bot string, updateID, times int) error {
	q := url.Values{"update_id": {strconv.Itoa(updateID)}, "times": {strconv.Itoa(times)}}
	if bot != "" {
		q.Set("bot", bot)
	}
	return rm.do(ctx, http.MethodPost, "/fake/redeliver", q, nil)
}

// CallbackQueries calls Server.CallbackQueries; an unknown bot is an error.
func (rm Remote) CallbackQueries(ctx context.Context, bot string) ([]CallbackQuery, error) {
	var out []CallbackQuery
	err := rm.do(ctx, http.MethodGet, "/fake/callbacks", withBot(bot), &out)
	return out, err
}

// Updates calls Server.Updates.
func (rm Remote) Updates(ctx context.Context, bot string) (updateState, error) {
	var st updateState
	err := rm.do(ctx, http.MethodGet, "/fake/updates", withBot(bot), &st)
	return st, err
}

func withBot(bot string) url.Values {
	if bot == "" {
		return nil
	}
	return url.Values{"bot": {bot}}
}
