package producer_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/herald-dev/herald/internal/broadcast"
	"github.com/herald-dev/herald/internal/chats"
	"github.com/herald-dev/herald/internal/ledger"
	"github.com/herald-dev/herald/internal/producer"
)

// TestBroadcastCommand: `producer broadcast` stores one message per chat
// of the file, prints the id, and `status` and `cancel` act on it; a bad
// chat is a usage error naming its index.
func TestBroadcastCommand(t *testing.T) {
	t.Parallel()
	b := newBundle(t)
	svc := broadcast.New(b.rdb, b.enq, chats.NewStore(b.rdb), ledger.NewStore(b.rdb, ledger.Config{}), broadcast.Config{})
	file := filepath.Join(t.TempDir(), "chats.txt")
	if err := os.WriteFile(file, []byte("# launch list\n1001\n\n@launch_news  # the channel\n1002\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(stdin string, args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		code := producer.BroadcastCommand(context.Background(), svc, b.enq, args, strings.NewReader(stdin), &out, &errOut)
		return code, out.String(), errOut.String()
	}
	code, out, errOut := run("", "--chats-file", file, "--silent", "we", "launched")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var res broadcast.Result
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.Queued != 3 {
		t.Fatalf("printed %q (%v)", out, err)
	}
	if n := len(b.taskKeys()); n != 3 {
		t.Errorf("%d tasks stored, want 3", n)
	}
	if code, out, _ := run("", "status", res.ID); code != 0 || !strings.Contains(out, `"queued":3`) {
		t.Errorf("status: exit %d, %s", code, out)
	}
	if code, out, _ := run("", "cancel", res.ID); code != 0 || !strings.Contains(out, `"cancelling":3`) {
		t.Errorf("cancel: exit %d, %s", code, out)
	}
	if code, _, errOut := run("", "status", "bc-nope"); code != producer.ExitNoMessage {
		t.Errorf("status of an unknown id: exit %d, %s", code, errOut)
	}
	if code, _, errOut := run("1\nnot-a-chat\n", "--chats-file", "-", "hi"); code != producer.ExitUsage || !strings.Contains(errOut, "chats[1]") {
		t.Errorf("bad chat: exit %d, %q", code, errOut)
	}
	if code, _, errOut := run("", "hi"); code != producer.ExitUsage || !strings.Contains(errOut, "--chats-file is required") {
		t.Errorf("no file: exit %d, %q", code, errOut)
	}
}
