package local

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"

	"github.com/herald-dev/herald/internal/httpapi"
	"github.com/herald-dev/herald/internal/telegramfake"
)

// fakeListen is where the fake Bot API listens: a free loopback port.
const fakeListen = "127.0.0.1:0"

// fakeAPI is the fake Bot API on a port of its own. It is served here
// rather than by telegramfake.Start so that it sits behind the same Host
// check as the API: its /fake endpoints read every delivered message and
// inject faults.
type fakeAPI struct {
	*telegramfake.Server
	url  string
	srv  *http.Server
	done chan struct{}
}

// startFake serves a fake Bot API configured by fc on fakeListen.
func startFake(fc telegramfake.Config, log *slog.Logger) (*fakeAPI, error) {
	ln, err := net.Listen("tcp", fakeListen)
	if err != nil {
		return nil, fmt.Errorf("local: start fake Telegram: %w", err)
	}
	f := &fakeAPI{Server: telegramfake.New(fc), url: "http://" + ln.Addr().String(), done: make(chan struct{})}
	f.srv = httpapi.NewServer(httpapi.AllowHosts(httpapi.ListenHosts(fakeListen), f.Handler()), log)
	go func() {
		defer close(f.done)
		if err := f.srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			log.Error("local: fake Telegram stopped serving", "err", err)
		}
	}()
	return f, nil
}

// URL is the fake's base URL, e.g. http://127.0.0.1:41234.
func (f *fakeAPI) URL() string { return f.url }

// Close stops the listener, then the fake, which releases the requests it
// holds (hung ones included) and waits for them.
func (f *fakeAPI) Close() error {
	err := f.srv.Close()
	<-f.done
	return errors.Join(err, f.Server.Close())
}
