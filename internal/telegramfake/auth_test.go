package telegramfake

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestTokenAndRouting(t *testing.T) {
	t.Parallel()
	const unauthorized = `{"ok":false,"error_code":401,"description":"Unauthorized"}`
	const notFound = `{"ok":false,"error_code":404,"description":"Not Found"}`
	tests := []struct {
		name, path string
		code       int
		body       string
	}{
		{"wrong token getMe", "/bot999:nope/getMe", 401, unauthorized},
		{"wrong token sendMessage", "/bot999:nope/sendMessage?chat_id=42&text=x", 401, unauthorized},
		{"empty token", "/bot/getMe", 404, notFound},
		{"unknown method", "/bot" + testToken + "/sendPigeon", 404, notFound},
		{"no method", "/bot" + testToken + "/", 404, notFound},
		{"not a bot path", "/file/bot" + testToken + "/x", 404, notFound},
		{"method case ignored", "/bot" + testToken + "/SENDMESSAGE?chat_id=42&text=x", 200, ""},
		{"getMe lower case", "/bot" + testToken + "/getme", 200, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, _ := newFake(t, Config{})
			got := serve(s, httptest.NewRequest(http.MethodGet, tc.path, nil))
			if got.code != tc.code || (tc.body != "" && got.body != tc.body) {
				t.Errorf("got %d %s, want %d %s", got.code, got.body, tc.code, tc.body)
			}
			if tc.code != 200 {
				if st := s.Stats(); st.Rejected != 1 || st.Requests != 1 {
					t.Errorf("stats %+v", st)
				}
			}
		})
	}
}

func TestDefaultToken(t *testing.T) {
	t.Parallel()
	s := New(Config{})
	defer s.Close()
	mustAccept(t, call(s, DefaultToken, "getMe", nil))
	if got := call(s, testToken, "getMe", nil); got.code != http.StatusUnauthorized {
		t.Errorf("got %d, want 401", got.code)
	}
}

func TestClosedServerRefuses(t *testing.T) {
	t.Parallel()
	s, _ := newFake(t, Config{})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if got := send(s, text("42", "x")); got.code != http.StatusBadGateway {
		t.Errorf("after Close got %d, want 502", got.code)
	}
}
