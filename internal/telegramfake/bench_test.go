package telegramfake

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
)

// BenchmarkSendMessage measures the fake's own throughput with flood control
// off, in-process and over loopback HTTP.
func BenchmarkSendMessage(b *testing.B) {
	cfg := Config{Token: testToken, Bot: unlimited, Private: unlimited, Group: unlimited}
	body := url.Values{"chat_id": {"42"}, "text": {"<b>disk</b> almost full on db-1"}, "parse_mode": {"HTML"}}.Encode()

	b.Run("handler", func(b *testing.B) {
		s := New(cfg)
		defer s.Close()
		b.ReportAllocs()
		for b.Loop() {
			r := httptest.NewRequest(http.MethodPost, "/bot"+testToken+"/sendMessage", strings.NewReader(body))
			r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			rec := httptest.NewRecorder()
			s.ServeHTTP(rec, r)
			if rec.Code != http.StatusOK {
				b.Fatalf("got %d %s", rec.Code, rec.Body)
			}
		}
	})

	b.Run("http-parallel", func(b *testing.B) {
		s, err := Start(cfg)
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
		var chat atomic.Int64
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			form := url.Values{"chat_id": {strconv.FormatInt(chat.Add(1), 10)}, "text": {"alert"}}.Encode()
			for pb.Next() {
				req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost,
					s.URL()+"/bot"+testToken+"/sendMessage", strings.NewReader(form))
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				resp, err := client.Do(req)
				if err != nil {
					b.Error(err)
					return
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					b.Errorf("got %d", resp.StatusCode)
					return
				}
			}
		})
	})
}
