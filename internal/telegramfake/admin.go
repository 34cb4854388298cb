package telegramfake

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// statsReport is the body of GET /fake/stats: the counters, with each bot's
// own under "bots", plus the number of recorded messages.
type statsReport struct {
	Stats
	Messages int `json:"messages"`
}

// Handler serves the Bot API (see ServeHTTP) together with endpoints that let
// another process read and steer the fake:
//
//	GET  /fake/stats                 statsReport as JSON
//	GET  /fake/bots                  JSON array of botInfo (no tokens)
//	GET  /fake/messages?since=N      JSON array of Message, from index N (default 0)
//	GET  /fake/messages?bot=B&since=N   the messages of bot B, skipping its first N
//	POST /fake/reset                 Reset
//	POST /fake/outage?on=BOOL        SetOutage
//	POST /fake/force429?retry_after=DURATION   Force429, e.g. 30s
//	POST /fake/fail?n=N&fault=NAME   FailNext; NAME as printed by fault.String
//	POST /fake/fault-rates?server_error=F&hang=F&accept_then_hang=F&seed=N   SetFaultRates
//	POST /fake/chat?chat=ID&blocked=BOOL&kicked=BOOL&not_found=BOOL&never_started=BOOL&migrate_to=ID   SetChat (with its my_chat_member updates)
//
// and the endpoints of replies, edits, photos and updates: /fake/message,
// /fake/edits, /fake/delete-message, /fake/photo-url, /fake/press,
// /fake/redeliver, /fake/callbacks and /fake/updates (see
// handleInteractive in inspect.go; Remote has a method for each).
//
// outage, force429, fail and fault-rates take optional bot=B parameters,
// repeated for several bots, each a bot's name or id: the bot selectors of
// the methods they call. Control endpoints answer {"ok":true} or 400 with a
// plain-text reason, an unknown bot included.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /fake/stats", s.handleStats)
	mux.HandleFunc("GET /fake/messages", s.handleMessages)
	mux.HandleFunc("GET /fake/bots", func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, http.StatusOK, s.Bots()) })
	mux.HandleFunc("POST /fake/reset", s.control(func(*http.Request) error { s.Reset(); return nil }))
	mux.HandleFunc("POST /fake/outage", s.control(s.controlOutage))
	mux.HandleFunc("POST /fake/force429", s.control(s.controlForce429))
	mux.HandleFunc("POST /fake/fail", s.control(s.controlFail))
	mux.HandleFunc("POST /fake/fault-rates", s.control(s.controlFaultRates))
	mux.HandleFunc("POST /fake/chat", s.control(s.controlChat))
	s.handleInteractive(mux)
	mux.HandleFunc("/fake/", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no control endpoint "+r.Method+" "+r.URL.Path+
			": stats, bots, messages, message, edits, callbacks and updates are GET, the others POST (see telegramfake.Server.Handler)", http.StatusNotFound)
	})
	mux.Handle("/", s)
	return mux
}

func (s *Server) handleStats(w http.ResponseWriter, _ *http.Request) {
	st := s.Stats()
	s.mu.Lock()
	n := len(s.messages)
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, statsReport{Stats: st, Messages: n})
}

func (s *Server) handleMessages(w http.ResponseWriter, r *http.Request) {
	since := 0
	if v := r.URL.Query().Get("since"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			http.Error(w, "since: want a non-negative message index", http.StatusBadRequest)
			return
		}
		since = n
	}
	var sel []*bot
	if q := r.URL.Query(); q.Has("bot") {
		var err error
		if sel, err = s.selectBots([]string{q.Get("bot")}); err != nil {
			http.Error(w, "bot: "+err.Error(), http.StatusBadRequest)
			return
		}
	}
	s.mu.Lock()
	msgs := s.messages
	if sel != nil {
		msgs = messagesOf(msgs, sel)
	}
	var out []Message
	if since < len(msgs) {
		out = append([]Message(nil), msgs[since:]...)
	}
	s.mu.Unlock()
	if out == nil {
		out = []Message{}
	}
	writeJSON(w, http.StatusOK, out)
}

// formBots returns the bot selectors of a control request after checking
// that each names a bot.
func (s *Server) formBots(r *http.Request) ([]string, error) {
	bots := r.Form["bot"]
	if _, err := s.selectBots(bots); err != nil {
		return nil, fmt.Errorf("bot: %w", err)
	}
	return bots, nil
}

// control wraps a control action into a handler answering {"ok":true}.
func (s *Server) control(act func(*http.Request) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if err := act(r); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		writeJSON(w, http.StatusOK, json.RawMessage(`{"ok":true}`))
	}
}

func formBool(r *http.Request, name string) (bool, error) {
	v := r.Form.Get(name)
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("%s: want true or false, got %q", name, v)
	}
	return b, nil
}

func formFloat(r *http.Request, name string) (float64, error) {
	v := r.Form.Get(name)
	if v == "" {
		return 0, nil
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: want a fraction between 0 and 1, got %q", name, v)
	}
	return f, nil
}

func (s *Server) controlOutage(r *http.Request) error {
	on, err := formBool(r, "on")
	if err != nil {
		return err
	}
	bots, err := s.formBots(r)
	if err != nil {
		return err
	}
	s.SetOutage(on, bots...)
	return nil
}

func (s *Server) controlForce429(r *http.Request) error {
	d, err := time.ParseDuration(r.Form.Get("retry_after"))
	if err != nil {
		return fmt.Errorf("retry_after: want a Go duration such as 30s: %w", err)
	}
	bots, err := s.formBots(r)
	if err != nil {
		return err
	}
	s.Force429(d, bots...)
	return nil
}

func (s *Server) controlFail(r *http.Request) error {
	n, err := strconv.Atoi(r.Form.Get("n"))
	if err != nil || n <= 0 {
		return fmt.Errorf("n: want a positive count, got %q", r.Form.Get("n"))
	}
	f, err := faultNamed(r.Form.Get("fault"))
	if err != nil {
		return fmt.Errorf("fault: %w", err)
	}
	bots, err := s.formBots(r)
	if err != nil {
		return err
	}
	s.FailNext(n, f, bots...)
	return nil
}

func (s *Server) controlFaultRates(r *http.Request) error {
	var fr FaultRates
	var err error
	if fr.ServerError, err = formFloat(r, "server_error"); err != nil {
		return err
	}
	if fr.Hang, err = formFloat(r, "hang"); err != nil {
		return err
	}
	if fr.AcceptThenHang, err = formFloat(r, "accept_then_hang"); err != nil {
		return err
	}
	if v := r.Form.Get("seed"); v != "" {
		if fr.Seed, err = strconv.ParseUint(v, 10, 64); err != nil {
			return fmt.Errorf("seed: want an unsigned integer, got %q", v)
		}
	}
	bots, err := s.formBots(r)
	if err != nil {
		return err
	}
	s.SetFaultRates(fr, bots...)
	return nil
}

func (s *Server) controlChat(r *http.Request) error {
	chat := r.Form.Get("chat")
	if _, err := parseChatRef(chat); err != nil {
		return fmt.Errorf("chat: %w", err)
	}
	var b ChatBehavior
	var err error
	if b.Blocked, err = formBool(r, "blocked"); err != nil {
		return err
	}
	if b.Kicked, err = formBool(r, "kicked"); err != nil {
		return err
	}
	if b.NotFound, err = formBool(r, "not_found"); err != nil {
		return err
	}
	if b.NeverStarted, err = formBool(r, "never_started"); err != nil {
		return err
	}
	if v := r.Form.Get("migrate_to"); v != "" {
		if b.MigrateTo, err = strconv.ParseInt(v, 10, 64); err != nil {
			return fmt.Errorf("migrate_to: want a chat id, got %q", v)
		}
	}
	s.SetChat(chat, b)
	return nil
}
