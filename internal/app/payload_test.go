package app

import (
	"strings"
	"testing"

	"github.com/herald-dev/herald/internal/jobs"
)

func TestMessagePayloadHidesCallbackQuery(t *testing.T) {
	t.Parallel()
	msg := `{"v":1,"chat":"5","text":"x","callback_url":"https://app.example.com/hook?token=s3cret"}`
	item := `{"v":1,"id":"i","item":{"title":"t"},"message":` + msg + `}`
	for typ, p := range map[string]string{jobs.TypeSendMessage: msg, jobs.TypeDigestItem: item} {
		out := PayloadFormatter.FormatPayload(typ, []byte(p))
		if strings.Contains(out, "s3cret") || !strings.Contains(out, "https://app.example.com/hook?…") {
			t.Errorf("%s shown as %s", typ, out)
		}
	}
}
