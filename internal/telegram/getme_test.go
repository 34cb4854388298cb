package telegram

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// GetMe calls getMe and reads the bot's user; a result without an id is
// a server error.
func TestGetMe(t *testing.T) {
	var path string
	srv := startServer(t, func(w http.ResponseWriter, r *http.Request) {
		path = r.URL.Path
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"ok":true,"result":{"id":42,"is_bot":true,"first_name":"Herald","username":"herald_bot"}}`)
	})
	c, _ := newTestClient(t, srv.URL, 5*time.Second)
	me, err := c.GetMe(context.Background())
	if err != nil || me.ID != 42 || me.Username != "herald_bot" || !strings.HasSuffix(path, "/getMe") {
		t.Fatalf("GetMe = %+v, %v (path %q)", me, err, path)
	}
	bad, _ := newTestClient(t, jsonServer(http.StatusOK, `{"ok":true,"result":{}}`)(t), 5*time.Second)
	_, err = bad.GetMe(context.Background())
	if te, ok := AsError(err); !ok || te.Reason != ReasonServerError {
		t.Fatalf("GetMe of a result without an id: %v, want a server error", err)
	}
}
