// Package producer is Herald's front door: the HTTP API's mux (every route
// behind its token scope, same-origin and host checks), the messages API
// (POST /v1/messages and the ledger's GET/DELETE/retry), the health
// endpoints, the Asynq web UI mount, and the `producer send` command line.
// A 2xx answer means the task is stored in Redis; when Redis cannot take it
// the answer is 503 and nothing is lost silently: the client retries.
//
// The other endpoints (alerts, heartbeats, silences, webhooks, chats,
// broadcasts, on-call, status-callback endpoints) are served by the
// packages that own them, which export them as httpapi.Mount values
// (Config.Mounts): see internal/httpapi's doc, "Adding an HTTP surface".
package producer
