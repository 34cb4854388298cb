package telegramfake

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Server is a fake Telegram Bot API. It is safe for concurrent use.
type Server struct {
	cfg  Config
	log  *slog.Logger
	unit time.Duration

	// bots are the accepted tokens, sorted by name; byToken finds them.
	// Both are fixed by New; the state inside each bot is guarded by mu.
	bots    []*bot
	byToken map[string]*bot

	closing  chan struct{} // closed by Close
	inflight sync.WaitGroup
	serving  atomic.Int64 // requests being served now (InFlight)

	mu        sync.Mutex
	closed    bool
	changed   chan struct{} // closed and replaced whenever records change
	messages  []Message
	nextID    map[int64]int
	stats     Stats // totals over every bot and over requests of no bot
	behaviors map[int64]ChatBehavior
	usernames map[int64]string
	faults    faultState
	onHang    func() // test hook: called when a request starts hanging
	x         extras // replies, edits, photos, updates and webhooks

	httpSrv   *http.Server
	url       string
	serveDone chan struct{}
}

// New returns a Server that is not listening; mount it with ServeHTTP or
// Handler, or use Start for a listening one. Settings out of range are
// repaired as the Config fields describe (see Start).
func New(cfg Config) *Server {
	cfg = cfg.withDefaults()
	s := &Server{
		cfg:       cfg,
		log:       cfg.Logger,
		unit:      retryUnit(cfg.TimeScale),
		byToken:   make(map[string]*bot),
		closing:   make(chan struct{}),
		changed:   make(chan struct{}),
		usernames: make(map[int64]string),
	}
	s.initExtras()
	for _, e := range cfg.botEntries() {
		b := makeBot(cfg, e)
		s.bots = append(s.bots, b)
		s.byToken[e.token] = b
	}
	s.resetLocked()
	return s
}

// Start creates a Server and serves Handler on Config.Addr (by default a
// free port on 127.0.0.1) until Close.
//
// Unlike New, which repairs them, Start refuses settings out of range: a
// Tolerance above maxTolerance (or NaN), windows with N < 1 or Per <= 0, and
// bots it could not serve as configured (see Config.Tokens).
func Start(cfg Config) (*Server, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	s := New(cfg)
	ln, err := net.Listen("tcp", s.cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("telegramfake: listening on Config.Addr %q: %w", s.cfg.Addr, err)
	}
	s.url = "http://" + ln.Addr().String()
	s.httpSrv = &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: 30 * time.Second,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelDebug),
	}
	s.serveDone = make(chan struct{})
	go func() {
		defer close(s.serveDone)
		if err := s.httpSrv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("telegramfake: serving stopped", "err", err)
		}
	}()
	s.log.Debug("telegramfake: listening", "url", s.url)
	return s, nil
}

// URL returns the base URL of a started server, such as
// "http://127.0.0.1:41234", or "" for a server made with New. Clients use
// URL()+"/bot%s/%s" as their API endpoint.
func (s *Server) URL() string { return s.url }

// Close stops the listener of a started server, releases every hung or
// delayed request by dropping its connection (the handler panics with
// http.ErrAbortHandler, which net/http turns into a closed connection),
// waits for the requests being served to return, and ends the webhook
// deliveries, a post under way included. Later Bot API requests get
// the 502 gateway page and Wait calls return errClosed. Close is idempotent.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	close(s.closing)
	s.mu.Unlock()

	var err error
	if s.httpSrv != nil {
		err = s.httpSrv.Close()
		<-s.serveDone
	}
	s.inflight.Wait()
	s.closeExtras()
	return err
}

// enter registers a request as in flight; it fails once Close has begun.
func (s *Server) enter() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.inflight.Add(1)
	return true
}

// InFlight is how many requests the server is serving at this instant
// (waiting out Config.Latency, hanging, or being answered): the sends on
// the wire, for a test that breaks something while they are.
func (s *Server) InFlight() int { return int(s.serving.Load()) }

// ServeHTTP serves the Bot API: /bot<token>/getMe, /bot<token>/getChat,
// /bot<token>/sendMessage and the methods the package doc lists (sendPhoto,
// the edit methods, answerCallbackQuery, getUpdates and the webhook methods)
// at the root of the request path (mount under a prefix with
// http.StripPrefix), for every token of Config. Method names are matched
// without regard to case, as Telegram does; other paths get Telegram's 404
// answer and unknown tokens 401.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	at := s.cfg.Now() // before any of the server's own locks: see countedAtLocked
	if !s.enter() {
		writeGatewayPage(w)
		return
	}
	defer s.inflight.Done()
	s.serving.Add(1)
	defer s.serving.Add(-1)

	token, method, ok := splitBotPath(r.URL.Path)
	var b *bot
	if ok {
		b = s.byToken[token]
	}
	s.mu.Lock()
	s.tallyLocked(b, func(st *Stats) { st.Requests++ })
	outage := s.faults.outage || b != nil && b.faults.outage
	s.mu.Unlock()
	if outage {
		s.count(b, http.StatusBadGateway)
		writeGatewayPage(w)
		return
	}

	switch {
	case !ok:
		s.fail(w, nil, errNotFound)
		return
	case b == nil:
		s.fail(w, nil, errUnauthorized)
		return
	}
	var serve func(http.ResponseWriter, *http.Request, *bot)
	switch strings.ToLower(method) {
	case "getme":
		serve = s.getMe
	case "getchat":
		serve = s.getChat
	case "sendmessage":
		serve = s.sendMessage
	default:
		if serve = s.moreMethods(method); serve == nil {
			s.fail(w, b, errNotFound)
			return
		}
	}
	if !s.delay(r) {
		return
	}
	if s.cfg.Latency > 0 {
		at = s.cfg.Now() // the request reaches "Telegram" after the latency
	}
	r = r.WithContext(context.WithValue(r.Context(), arrivalKey{}, at))
	if floodLimited(method) {
		if e := s.floodError(b); e != nil {
			s.fail(w, b, e)
			return
		}
	}
	serve(w, r, b)
}

// floodLimited reports whether a flood wait (Force429) refuses method: the
// methods that put or change messages in chats, which Telegram's limits
// count. Reading updates, answering a button press, the webhook settings,
// getMe and getChat are not documented as counted, so a flood wait does
// not hold them back.
func floodLimited(method string) bool {
	switch strings.ToLower(method) {
	case "sendmessage", "sendphoto", "editmessagetext", "editmessagecaption", "editmessagereplymarkup":
		return true
	}
	return false
}

// splitBotPath splits "/bot<token>/<method>".
func splitBotPath(path string) (token, method string, ok bool) {
	rest, ok := strings.CutPrefix(path, "/bot")
	if !ok {
		return "", "", false
	}
	token, method, ok = strings.Cut(rest, "/")
	if !ok || token == "" || method == "" || strings.Contains(method, "/") {
		return "", "", false
	}
	return token, method, true
}

// arrivalKey is the context key of a request's arrival time (ServeHTTP).
type arrivalKey struct{}

// arrival is when r reached the server, read from Config.Now on its way in
// (after Config.Latency); now for a request served some other way.
func (s *Server) arrival(r *http.Request) time.Time {
	if at, ok := r.Context().Value(arrivalKey{}).(time.Time); ok {
		return at
	}
	return s.cfg.Now()
}

// countedAtLocked is the time a send or edit that arrived at at (arrival)
// is judged and recorded at: its arrival, as a server stamps a request
// when it comes in rather than when its own bookkeeping gets to it. A
// request that waited on the server's lock (behind a copy of the message
// records as they grow, or behind a request that came after it but was
// read sooner) is not counted later than it came, which would put it
// closer to the sends a window's length after it than the client sent
// it; the limiter counts it in its place among the others (scope.push).
func (s *Server) countedAtLocked(at time.Time) time.Time {
	if at.IsZero() {
		return s.cfg.Now()
	}
	return at
}

// delay applies Config.Latency; it reports false when the client left.
func (s *Server) delay(r *http.Request) bool {
	d := toReal(s.cfg.Latency, s.cfg.TimeScale)
	if d == 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	case <-s.closing:
		panic(http.ErrAbortHandler)
	}
}

// floodError returns the 429 owed during a Force429 flood wait of b, or
// nil. Every answer after the first of a flood wait counts as inside it.
func (s *Server) floodError(b *bot) *apiError {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.cfg.Now()
	f := &b.faults
	if !now.Before(f.floodUntil) {
		return nil
	}
	inside := f.floodAnnounced
	f.floodAnnounced = true
	s.tallyLocked(b, func(st *Stats) {
		st.TooManyFlood++
		if inside {
			st.InsideWait++
			st.InsideWaitBot++
		}
	})
	return tooMany(s.retryAfterSeconds(f.floodUntil.Sub(now)))
}

// fail counts and writes an error answer; b is the bot of the request, nil
// when the request names none the fake knows. The log record names the bot,
// never its token.
func (s *Server) fail(w http.ResponseWriter, b *bot, e *apiError) {
	s.count(b, e.code)
	attrs := []slog.Attr{slog.Int("code", e.code), slog.String("description", e.desc)}
	if b != nil {
		attrs = append(attrs, slog.String("bot", b.name))
	}
	s.log.LogAttrs(context.Background(), slog.LevelDebug, "telegramfake: refused", attrs...)
	writeAPIError(w, e)
}

// count adds an answer with status code to the counters.
func (s *Server) count(b *bot, code int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tallyLocked(b, func(st *Stats) {
		switch {
		case code == http.StatusTooManyRequests:
			st.TooMany++
		case code >= 500:
			st.ServerErrors++
		case code >= 400:
			st.Rejected++
		}
	})
}
