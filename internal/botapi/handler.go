package botapi

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/herald-dev/herald/internal/durable"
	"github.com/herald-dev/herald/internal/httpapi"
	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/keys"
)

// handler serves the front.
type handler struct {
	cfg     Config
	waiting *waitSlots // the answers waiting for their send
	metrics *metrics
}

func newHandler(cfg Config) *handler {
	cfg = cfg.withDefaults()
	return &handler{cfg: cfg, waiting: newWaitSlots(cfg.MaxWaiting), metrics: newMetrics(cfg.Registerer)}
}

// statusWriter remembers the status of the answer, for the metrics.
type statusWriter struct {
	http.ResponseWriter
	code int
}

func (s *statusWriter) WriteHeader(code int) {
	if s.code == 0 {
		s.code = code
	}
	s.ResponseWriter.WriteHeader(code)
}

// Unwrap lets http.ResponseController reach the connection.
func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// call is one request to the front, its path read.
type call struct {
	bot    string // "" for the default bot
	token  string
	method string // lower case: Telegram's method names ignore case
}

// parsePath reads /telegram/[<bot>/]bot<TOKEN>/<method>.
func parsePath(path string) (call, bool) {
	rest, ok := strings.CutPrefix(path, Prefix)
	if !ok {
		return call{}, false
	}
	segs := strings.Split(rest, "/")
	var c call
	switch len(segs) {
	case 2:
	case 3:
		c.bot, segs = segs[0], segs[1:]
		if !keys.ValidBotName(c.bot) {
			return call{}, false
		}
	default:
		return call{}, false
	}
	token, ok := strings.CutPrefix(segs[0], "bot")
	if !ok || token == "" || segs[1] == "" {
		return call{}, false
	}
	c.token, c.method = token, strings.ToLower(segs[1])
	return c, true
}

func (h *handler) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	w := &statusWriter{ResponseWriter: rw}
	c, ok := parsePath(r.URL.Path)
	// The path carries a credential: whatever logs the request's path
	// after this (the API's wrappers share its URL) sees it masked.
	r.URL.Path, r.URL.RawPath = maskedPath(r.URL.Path, c.token), ""
	if !ok {
		writeRefusal(w, errNotFound)
		h.metrics.request("", "", w.code)
		return
	}
	p, rf := h.authenticate(c)
	defer func() { h.metrics.request(c.method, p.Name, w.code) }()
	if rf != nil {
		writeRefusal(w, rf)
		return
	}
	switch c.method {
	case "getme":
		writeResult(w, botUser(c.bot), nil)
	case "sendmessage":
		h.send(w, r, c, p, method{})
	case "sendphoto":
		h.send(w, r, c, p, method{photo: true})
	default:
		writeRefusal(w, errNotFound)
	}
}

// authenticate finds the principal of the path's TOKEN (a Herald
// credential, compared as the keyring compares a bearer token) and checks
// it may send through the path's bot.
func (h *handler) authenticate(c call) (httpapi.Principal, *refusal) {
	probe := &http.Request{Header: http.Header{"Authorization": {"Bearer " + c.token}}}
	p, ok := h.cfg.Keyring.Identify(probe)
	if !ok {
		return p, errUnauthorized
	}
	if !p.Has(httpapi.ScopeSend) {
		return p, &refusal{Code: http.StatusForbidden,
			Description: fmt.Sprintf("Forbidden: Herald token %q lacks the %q scope", p.Name, httpapi.ScopeSend)}
	}
	if !slices.Contains(h.cfg.Bots, cmpBot(c.bot)) {
		return p, &refusal{Code: http.StatusNotFound, Description: "Not Found: this Herald has no bot " + cmpBot(c.bot)}
	}
	return p, nil
}

// maskedPath is path with the credential after "bot" replaced by "***":
// the segment "bot"+token, or, in a path that did not parse (token ""),
// every segment after the prefix that starts with "bot".
func maskedPath(path, token string) string {
	segs := strings.Split(path, "/")
	for i, s := range segs {
		rest, ok := strings.CutPrefix(s, "bot")
		if ok && i > 1 && rest != "" && (token == "" || rest == token) {
			segs[i] = "bot***"
		}
	}
	return strings.Join(segs, "/")
}

// cmpBot is the name of the bot a path names ("" is the default bot).
func cmpBot(bot string) string {
	if bot == "" {
		return keys.DefaultBot
	}
	return bot
}

// crossSite reports a request a browser sent from another site's page. A
// GET changes nothing elsewhere in the API, so the API's same-origin guard
// lets it through; here a GET sends, as Telegram's does.
func crossSite(r *http.Request) bool {
	switch r.Header.Get("Sec-Fetch-Site") {
	case "", "same-origin", "none":
		return false
	}
	return true
}

// send stores the message a sendMessage or sendPhoto asks for and answers
// with it.
func (h *handler) send(w http.ResponseWriter, r *http.Request, c call, p httpapi.Principal, m method) {
	if crossSite(r) {
		writeRefusal(w, &refusal{Code: http.StatusForbidden, Description: "Forbidden: cross-site request refused"})
		return
	}
	ps, rf := readParams(w, r, h.cfg.MaxBodyBytes)
	if rf != nil {
		writeRefusal(w, rf)
		return
	}
	msg, rf := buildMessage(m, ps)
	if rf != nil {
		writeRefusal(w, rf)
		return
	}
	msg.Bot, msg.From = c.bot, p.Name
	ctx := durable.Track(r.Context())
	res, err := h.cfg.Enqueuer.Enqueue(ctx, jobs.Request{Message: msg, CheckMarkup: true, ThreadSpace: jobs.MessageThreadSpace(p.Name)})
	if rf := enqueueRefusal(m, err); rf != nil {
		if rf.Code == http.StatusServiceUnavailable {
			h.cfg.Logger.Error("botapi: enqueue failed; answering 503", "error", err)
		}
		writeRefusal(w, rf)
		return
	}
	// The answer promises the message survives a failover, as POST
	// /v1/messages's 202 does.
	if err := h.cfg.Enqueuer.Settle(ctx, keys.HeartbeatRecords()); err != nil {
		h.cfg.Logger.Warn("botapi: message stored but not confirmed; answering 503", "task_id", res.TaskID, "error", err)
		writeRefusal(w, &refusal{Code: http.StatusServiceUnavailable, Description: "Service Unavailable: the message may not be stored; retry later"})
		return
	}
	h.answer(w, r, c, p, msg, res)
}

// enqueueRefusal words an enqueue error as Telegram would (nil for none).
// The checks before it leave the length of the text, and what Herald
// itself bounds, to refuse.
func enqueueRefusal(m method, err error) *refusal {
	var verr *jobs.ValidationError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &verr):
		f := verr.Fields[0]
		switch {
		case f.Field == "text" && m.photo:
			return badRequest(descCaptionLong)
		case f.Field == "text":
			return badRequest(descTooLong)
		case strings.HasPrefix(f.Field, "photo"):
			return badRequest(descBadPhoto + ": " + f.Message)
		case strings.HasPrefix(f.Field, "buttons"):
			return badRequest("can't parse inline keyboard button: " + f.Error())
		}
		return badRequest(f.Error())
	}
	return &refusal{Code: http.StatusServiceUnavailable, Description: "Service Unavailable: the queue is unavailable; nothing was stored, retry later"}
}
