// Package httpapi is the one HTTP toolbox of Herald's endpoints: the JSON
// error body with its stable codes, strict JSON decoding that names the bad
// field, size-limited raw bodies for signed webhooks, token authentication
// compared in constant time with scopes, the checks of a callback_url and
// of a chat as a client writes it, and the Mount that a package exports
// its routes as.
//
// # Adding an HTTP surface
//
// The package that owns the domain serves it; the producer package keeps
// only the mux (authentication, scopes, the replicas' settle), the messages
// API and the command line. To add an endpoint:
//
//  1. In the domain package, write the handlers with this package's
//     helpers (DecodeJSON, WriteJSON, WriteError, Invalid, MethodNotAllowed,
//     NotFound, PrincipalFrom) and export a function or method named
//     Mounts that takes what the handlers need and returns []Mount: each
//     route's pattern, its handler, the Scope its token must carry (empty:
//     ScopeSend) or SelfAuth for a receiver that checks its own signature.
//  2. Add one line to the list in internal/app's surfaces.mounts, calling
//     that Mounts.
//
// The package's tests serve the handlers of its Mounts directly; the
// producer's tests cover the mux (scopes, 401/403, same-origin).
// Existing surfaces built this way: alerts.Mounts, heartbeat.Mounts,
// (*silences.Store).Mounts, webhooks.Mounts, interact.Mounts,
// chats.Mounts, (*statushook.Emitter).Mounts, broadcast.Mounts and
// roster.Mounts (the on-call API, package internal/oncall/roster).
package httpapi
