// Package inbound receives the notification formats other tools already
// speak — Slack incoming webhooks, Discord webhooks, Microsoft Teams
// (MessageCard and Adaptive Cards through Workflows), the PagerDuty Events
// API v2, the Opsgenie Alert API, ntfy and Gotify — and turns each post
// into Herald alerts routed like every webhook's. A tool is pointed at
// Herald by swapping the service's URL for Herald's; nothing else changes.
//
// Why a package of its own and not more receivers in package webhooks:
// those receivers answer in Herald's shape (202 with the messages, JSON
// errors with Herald's codes), while these must answer exactly as the
// service they stand in for, success and failure alike, because the
// sending tool checks that answer (Slack's 200 "ok", Discord's 204 or
// message, PagerDuty's 202 with dedup_key, Opsgenie's 202 with requestId,
// ntfy's and Gotify's message JSON). The steps after decoding are shared
// with package webhooks (webhooks.Fit, MapSeverity, DispatchError), so an
// alert from here is fitted, validated and dispatched as one from there.
//
// One file per format (slack.go, discord.go, teams.go, pagerduty.go,
// opsgenie.go, ntfy.go, gotify.go), each with its paths, auth, decoding
// and answers; inbound.go holds the request steps they share, auth.go how
// a credential becomes a Herald token, text.go the conversion of Slack
// mrkdwn and Markdown to plain text, memory.go the firing alerts kept in
// Redis for the closes that carry only a key.
//
// Every request follows the same steps: find the credential where the
// service's clients put it (the URL path for Slack, Discord and Teams, the
// body's routing_key for PagerDuty, "Authorization: GenieKey" for Opsgenie,
// a bearer, basic or ?auth= credential for ntfy, X-Gotify-Key or ?token=
// for Gotify) and look it up as a Herald API token that must carry the
// send scope; read the body within the webhook body limit; decode it into
// alerts whose labels carry "token" (the token's name) plus the format's
// own routable fields; dispatch; answer 2xx only once the messages are
// stored. A refused request stores nothing and gets the status and body the
// real service gives for that mistake.
//
// Text. The converters (text.go) read Slack's *bold* _italic_ ~strike~
// `code` ```pre```, <url|label>, <!here>; Discord's and Teams' Markdown,
// masked links, mentions and timestamps — in one left-to-right pass with a
// stack of the marks open on the line, so their work is linear in the
// input; a mark that does not close stays text. They write marked text
// (rich.go): plain text with the styles marked by Unicode noncharacters,
// which the steps that pick a title and join blocks treat as text. Before
// dispatch the marks become the alert's plain Title and Body and its
// BodyHTML, Telegram HTML that is valid by construction (escaped, every
// tag closed and nested, nothing inside code, links to http, https and
// mailto only): HTML routes show it, other parse modes the plain body. No
// raw mark reaches a chat.
//
// Threads. Where the source gives a key — PagerDuty's dedup_key,
// Opsgenie's alias — it is the alert's Key, so a resolve or close joins the
// firing message's thread (reply or edit, per the route's on_resolve).
// Slack, Discord, Teams, ntfy and Gotify give none: each post is its own
// message. A close that carries nothing but the key (Opsgenie's close, a
// PagerDuty resolve without payload) takes the title, severity and labels
// its firing alert was dispatched with (Config.Redis), so it reads and
// routes as that alert. Acknowledge events (PagerDuty acknowledge, Opsgenie
// acknowledge) are answered as the service answers and passed to
// Config.Acknowledge by the tool's name and the alert's key; the producer
// wires it to interact.SourceAcks, which acknowledges the alert's
// messages as a press of their Acknowledge button would (the edit, the
// escalation stopped). Nothing is sent for them otherwise.
//
// docs/INTEGRATIONS.md tells, per tool, which format to pick and which
// setting to change.
package inbound
