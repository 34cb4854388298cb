// Package statushook delivers Herald's signed status callbacks (issue 28,
// docs/STATUS.md): the events Herald posts to a sender's callback_url when
// a message is sent, failed, silenced or coalesced, or when a chat blocked
// the bot.
//
// Names: "status hook" is the callback_url side (its Redis keys are
// keys.HookWakeList and keys.HookEndpoint, under "{herald}:hook:");
// package buttons is the other kind of callback, the callback_data of an
// alert's inline buttons.
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
//   - Secrets (endpoint.go): each endpoint (scheme://host[:port]/path, the
//     URL without its query) has a secret of its own, derived from one
//     master key (HERALD_CALLBACK_SECRET), so that nothing needs storing or
//     coordinating; endpointSecret says why.
//   - Payload (event.go): {"type", "timestamp" (RFC 3339), "data"}, with a
//     stable webhook-id (EventID) for the receiver to drop repeats.
//   - Outbound HTTP (url.go, dial.go, client.go): callback URLs come from
//     sender tokens, so they are checked at parse time (ValidateURL) and
//     again at dial time on the resolved address (newPoster), which refuses
//     loopback, link-local, private, CGNAT, unspecified and multicast
//     addresses unless an allow-list permits them. No redirect is followed,
//     the time is bounded and at most maxResponseBody bytes of an answer are
//     read.
//   - Retries (retry.go): the Svix schedule (Schedule) and what a result
//     means for the next step (classify).
//
// The moving parts:
//
//   - Emitter (emitter.go): Emit stores one event for one URL as an asynq
//     task of its own type (TaskType) in a queue of its own (Queue), the
//     webhook-id as the task id (a repeated Emit stores nothing), and wakes
//     an idle deliverer through the callbacks' own wake list
//     (keys.HookWakeList). The producer uses it too, to check a
//     callback_url (CheckURL) and to serve the endpoints' state (Handler).
//   - Deliverer (deliverer.go, deliver.go): in every worker process, an
//     asynq server of its own on a Redis client of its own serves that
//     queue: one attempt per task, then done, a retry after the schedule's
//     next wait (or the receiver's longer Retry-After), or the archive
//     with a readable reason.
//   - Endpoint health (health.go): a fleet-wide record per failing or
//     disabled endpoint (keys.HookEndpoint): a 410, or failing for
//     longer than HERALD_CALLBACK_DISABLE_AFTER, disables it until the
//     endpoint API enables it again (endpointapi.go).
package statushook
