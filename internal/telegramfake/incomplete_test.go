package telegramfake

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"testing"
	"time"
)

// TestIncompleteRequestIsNoSend: a sendMessage whose body stops short of
// its Content-Length (the client cut it off) delivers nothing and is
// counted in Incomplete, apart from the whole requests.
func TestIncompleteRequestIsNoSend(t *testing.T) {
	s := startFake(t, Config{})
	u, err := url.Parse(s.URL())
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	body := "chat_id=42&text=disk+full"
	fmt.Fprintf(conn, "POST /bot%s/sendMessage HTTP/1.1\r\nHost: %s\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: %d\r\n\r\n%s",
		testToken, u.Host, len(body)+20, body)
	_ = conn.(*net.TCPConn).CloseWrite()
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err == nil {
		resp.Body.Close()
	}
	conn.Close()
	deadline := time.Now().Add(5 * time.Second)
	for s.Stats().Incomplete == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	st := s.Stats()
	if st.Incomplete != 1 || st.Accepted != 0 || len(s.Messages()) != 0 {
		t.Fatalf("stats %+v, %d messages; want 1 incomplete request and nothing delivered", st, len(s.Messages()))
	}
	// A whole request is not counted there.
	resp, err = http.PostForm(s.URL()+"/bot"+testToken+"/sendMessage", url.Values{"chat_id": {"42"}, "text": {"disk full"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if st := s.Stats(); st.Incomplete != 1 || st.Accepted != 1 {
		t.Fatalf("after a whole request: %+v, want 1 incomplete and 1 accepted", st)
	}
}
