// Package statushook is the groundwork for signed status callbacks (issue
// 28): the events Herald posts to a sender's callback_url when a message is
// sent, failed, silenced or coalesced, or when a chat blocked the bot.
//
// It follows the Standard Webhooks specification
// (https://www.standardwebhooks.com/, spec/standard-webhooks.md in
// github.com/standard-webhooks/standard-webhooks):
//
//   - Signing (sign.go, verify.go): secrets are "whsec_" plus base64 of at
//     least 24 random bytes; the signed content is
//     "{webhook-id}.{webhook-timestamp}.{body}"; the webhook-signature
//     header is a space-separated list of "v1,<base64 HMAC-SHA256>", one per
//     secret, so that a secret can be rotated without downtime. Verify is
//     the receiver's side, used by the tests and the docs' receiver example.
//   - Payload (event.go): {"type", "timestamp" (RFC 3339), "data"}.
//   - Outbound HTTP (url.go, dial.go): callback URLs come from sender
//     tokens, so they are checked at parse time (ValidateURL) and again at
//     dial time on the resolved address (NewClient), which refuses
//     loopback, link-local, private, CGNAT, unspecified and multicast
//     addresses unless an allow-list permits them. No redirect is followed,
//     the time is bounded and at most MaxResponseBody bytes of an answer are
//     read.
//   - Retries (retry.go): the Svix schedule (Delay) and what a result means
//     for the next step (Classify).
//
// The package holds no state and talks to no Redis; the worker's callback
// queue wires it in.
package statushook
