// Package webui holds the browser tests of the Asynq web UI (asynqmon) that
// the producer serves under its monitoring path.
//
// The tests start a real redis-server, put SendMessage tasks into Herald's
// queues, let a real worker archive one of them against a fake Telegram that
// refuses the chat, and then drive Debian's chromium through chromedp: the UI
// must demand a token, list the queues, show the archived task with its
// reason and an indented payload, never reveal the bot token, and hide every
// mutating action in read-only mode. Chromium logs in through its own login
// prompt (answered over the DevTools Fetch domain); the API token, which
// every sender holds, gets the read-only UI and a 403 for any change, the
// admin token the read-write one; a form another site submits to a mutating
// endpoint is refused.
//
// Without chromium the tests skip with a one-line reason; with
// HERALD_REQUIRE_BROWSER=1 a missing browser fails them instead. With
// HERALD_UPDATE_SCREENSHOT=1 the archived-task view is saved to
// docs/img/web-ui-archived.png for the documentation.
//
// The package has no code of its own outside its tests.
package webui
