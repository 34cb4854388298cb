package statushook

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
)

func vectorHeaders() http.Header {
	h := http.Header{}
	h.Set(HeaderID, vectorID)
	h.Set(HeaderTimestamp, "1614265330")
	h.Set(HeaderSignature, vectorSignature)
	return h
}

func TestVerifyRefuses(t *testing.T) {
	at := time.Unix(vectorTimestamp, 0)
	bad := "v1,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc="
	cases := []struct {
		name   string
		edit   func(http.Header)
		body   string
		now    time.Time
		want   error
		reason string
	}{
		{"missing id", func(h http.Header) { h.Del(HeaderID) }, vectorBody, at, ErrMissingHeader, HeaderID},
		{"missing timestamp", func(h http.Header) { h.Del(HeaderTimestamp) }, vectorBody, at, ErrMissingHeader, HeaderTimestamp},
		{"missing signature", func(h http.Header) { h.Del(HeaderSignature) }, vectorBody, at, ErrMissingHeader, HeaderSignature},
		{"tampered body", nil, `{"test": 2432232315}`, at, ErrNoMatch, "no signature"},
		{"other id", func(h http.Header) { h.Set(HeaderID, "msg_other") }, vectorBody, at, ErrNoMatch, "no signature"},
		{"wrong signature", func(h http.Header) { h.Set(HeaderSignature, bad) }, vectorBody, at, ErrNoMatch, "no signature"},
		{"empty signature", func(h http.Header) { h.Set(HeaderSignature, "v1,") }, vectorBody, at, ErrNoMatch, "no signature"},
		{"right bytes, other version", func(h http.Header) {
			h.Set(HeaderSignature, strings.Replace(vectorSignature, "v1,", "v2,", 1))
		}, vectorBody, at, ErrNoMatch, "no signature"},
		{"too old", nil, vectorBody, at.Add(DefaultTolerance + time.Second), ErrTimestamp, "old"},
		{"too new", nil, vectorBody, at.Add(-DefaultTolerance - time.Second), ErrTimestamp, "future"},
		{"not a number", func(h http.Header) { h.Set(HeaderTimestamp, "2021-02-25") }, vectorBody, at, ErrTimestamp, "integer"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := vectorHeaders()
			if c.edit != nil {
				c.edit(h)
			}
			err := Verify(vectorSecret, h, []byte(c.body), c.now, 0)
			if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.reason) {
				t.Fatalf("Verify = %v, want %v mentioning %q", err, c.want, c.reason)
			}
		})
	}
}

func TestVerifyAcceptsWithinTolerance(t *testing.T) {
	at := time.Unix(vectorTimestamp, 0)
	for _, now := range []time.Time{at.Add(DefaultTolerance), at.Add(-DefaultTolerance)} {
		if err := Verify(vectorSecret, vectorHeaders(), []byte(vectorBody), now, 0); err != nil {
			t.Errorf("Verify at %s from the timestamp: %v", now.Sub(at), err)
		}
	}
	if err := Verify(vectorSecret, vectorHeaders(), []byte(vectorBody), at.Add(time.Hour), 2*time.Hour); err != nil {
		t.Errorf("Verify with a 2 h tolerance, 1 h late: %v", err)
	}
}

func TestVerifyFindsTheMatchAmongSeveral(t *testing.T) {
	h := vectorHeaders()
	h.Set(HeaderSignature, "v1a,AAAA v1,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc= garbage "+vectorSignature)
	if err := Verify(vectorSecret, h, []byte(vectorBody), time.Unix(vectorTimestamp, 0), 0); err != nil {
		t.Fatal(err)
	}
}
