package statushook_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/herald-dev/herald/internal/statushook"
)

func vectorHeaders() http.Header {
	h := http.Header{}
	h.Set(statushook.HeaderID, vectorID)
	h.Set(statushook.HeaderTimestamp, "1614265330")
	h.Set(statushook.HeaderSignature, vectorSignature)
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
		{"missing id", func(h http.Header) { h.Del(statushook.HeaderID) }, vectorBody, at, statushook.ErrMissingHeader, statushook.HeaderID},
		{"missing timestamp", func(h http.Header) { h.Del(statushook.HeaderTimestamp) }, vectorBody, at, statushook.ErrMissingHeader, statushook.HeaderTimestamp},
		{"missing signature", func(h http.Header) { h.Del(statushook.HeaderSignature) }, vectorBody, at, statushook.ErrMissingHeader, statushook.HeaderSignature},
		{"tampered body", nil, `{"test": 2432232315}`, at, statushook.ErrNoMatch, "no signature"},
		{"other id", func(h http.Header) { h.Set(statushook.HeaderID, "msg_other") }, vectorBody, at, statushook.ErrNoMatch, "no signature"},
		{"wrong signature", func(h http.Header) { h.Set(statushook.HeaderSignature, bad) }, vectorBody, at, statushook.ErrNoMatch, "no signature"},
		{"empty signature", func(h http.Header) { h.Set(statushook.HeaderSignature, "v1,") }, vectorBody, at, statushook.ErrNoMatch, "no signature"},
		{"right bytes, other version", func(h http.Header) {
			h.Set(statushook.HeaderSignature, strings.Replace(vectorSignature, "v1,", "v2,", 1))
		}, vectorBody, at, statushook.ErrNoMatch, "no signature"},
		{"too old", nil, vectorBody, at.Add(statushook.DefaultTolerance + time.Second), statushook.ErrTimestamp, "old"},
		{"too new", nil, vectorBody, at.Add(-statushook.DefaultTolerance - time.Second), statushook.ErrTimestamp, "future"},
		{"not a number", func(h http.Header) { h.Set(statushook.HeaderTimestamp, "2021-02-25") }, vectorBody, at, statushook.ErrTimestamp, "integer"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := vectorHeaders()
			if c.edit != nil {
				c.edit(h)
			}
			err := statushook.Verify(vectorSecret, h, []byte(c.body), c.now, 0)
			if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.reason) {
				t.Fatalf("Verify = %v, want %v mentioning %q", err, c.want, c.reason)
			}
		})
	}
}

func TestVerifyAcceptsWithinTolerance(t *testing.T) {
	at := time.Unix(vectorTimestamp, 0)
	for _, now := range []time.Time{at.Add(statushook.DefaultTolerance), at.Add(-statushook.DefaultTolerance)} {
		if err := statushook.Verify(vectorSecret, vectorHeaders(), []byte(vectorBody), now, 0); err != nil {
			t.Errorf("Verify at %s from the timestamp: %v", now.Sub(at), err)
		}
	}
	if err := statushook.Verify(vectorSecret, vectorHeaders(), []byte(vectorBody), at.Add(time.Hour), 2*time.Hour); err != nil {
		t.Errorf("Verify with a 2 h tolerance, 1 h late: %v", err)
	}
}

func TestVerifyFindsTheMatchAmongSeveral(t *testing.T) {
	h := vectorHeaders()
	h.Set(statushook.HeaderSignature, "v1a,AAAA v1,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc= garbage "+vectorSignature)
	if err := statushook.Verify(vectorSecret, h, []byte(vectorBody), time.Unix(vectorTimestamp, 0), 0); err != nil {
		t.Fatal(err)
	}
}
