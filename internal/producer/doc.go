// Package producer is Herald's front door: the HTTP API that accepts messages
// (POST /v1/messages), the health endpoints, the Asynq web UI mount, and the
// `producer send` command line. A 2xx answer means the task is stored in
// Redis; when Redis cannot take it the answer is 503 and nothing is lost
// silently: the client retries.
package producer
