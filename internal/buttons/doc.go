// Package buttons ties the inline keyboard under an alert's message to
// what its buttons act on.
//
// Names: this package is about inline buttons and the callback_data
// Telegram sends back when one is pressed (keys.Space.ButtonSubject,
// ButtonChats; keys.Space.CallbackQuery keeps Telegram's own term for a
// press). The status events posted to a message's callback_url are
// another thing, package statushook (its keys are keys.Hook*).
//
// When a route gives its alerts buttons (Acknowledge, Silence 1 h,
// Silence 24 h), the router stores a Subject: the bot, the chat, the
// alert's thread key (its fingerprint), the text as sent, the silence
// matchers a press would create and who may press. Each button's
// callback_data names an action and the Subject's reference:
// "h1:<action>:<ref>", well within Telegram's 64 bytes. A press comes back
// as a callback query (by webhook or getUpdates); the worker side
// (internal/interact) loads the Subject by its reference and acts.
//
// Subjects live in the bot's key space (keys.Space.ButtonSubject) for
// jobs.ThreadRetention: a press on an older message is answered as "no
// longer tracked".
//
// The same buttons may also be sent to people by direct message (an
// escalation's step: Buttons, with the reference RefOf reads from the
// alert's keyboard). AllowDirect records each such person
// (keys.Space.ButtonChats): a press in their private chat with the bot
// acts on the alert's message as one in its chat does.
package buttons
