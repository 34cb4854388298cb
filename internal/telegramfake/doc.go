// Package telegramfake is a stand-in for the Telegram Bot API that Herald's
// integration tests, its benchmark command and its all-local mode talk to
// instead of api.telegram.org.
//
// The fake answers getMe, getChat, sendMessage, sendPhoto, editMessageText,
// editMessageCaption, editMessageReplyMarkup, answerCallbackQuery,
// getUpdates, setWebhook, deleteWebhook and getWebhookInfo with the same
// JSON envelopes and error descriptions the real service uses, applies
// Telegram's flood control, and lets a test inject the failures a real
// deployment meets: blocked users, kicked bots, migrated groups, 5xx
// answers, HTML gateway pages, hung requests, requests that are delivered
// but never answered, outages and global flood waits. It can serve several
// bots at once, each with its own token and its own limits. Tests press
// inline keyboard buttons (Press), delete messages (DeleteMessage) and make
// Telegram deliver an update again (Redeliver) as users and Telegram do.
//
// Where the Bot API documentation is silent, the fake follows the Bot API
// server itself (github.com/tdlib/telegram-bot-api: Client.cpp and
// WebhookActor.cpp): error descriptions, getUpdates and webhook semantics,
// the lifetime of updates. What it reads differently or leaves out is said
// below.
//
// # Several bots
//
// Config.Token is the bot named DefaultBot ("default"); Config.Tokens adds
// bots by name. With neither set the fake serves DefaultToken alone. Every
// token is a separate bot, as on Telegram: its id is the number before the
// token's colon, getMe describes it (Config.BotUsername for the default bot,
// "herald_<name>_bot" for the others), and it has its own flood control. Two
// bots may each send 30 messages a second, may each send one a second to the
// same chat, and a flood wait announced to one does not refuse the other. A
// token the fake does not serve is answered 401.
//
// Chats are shared: a chat id, its @name, its getChat answer, its message
// numbering and its ChatBehavior (a migration included) are the same for
// every bot. Records say which bot sent each message (Message.Bot, its name,
// and Message.BotID), Server.MessagesOf filters them, and Stats.Bots holds
// each bot's own counters beside the totals. The fault methods that act on
// "the bot" (FailNext, SetFaultRates, SetOutage, Force429) take optional bot
// selectors, a bot's name or id; without one they act on every bot.
//
// A token appears in nothing the fake shows: not in records, counters, log
// records, error answers or control errors. Bots are named by name and id.
//
// # Flood control is strict by default
//
// Telegram's Bot FAQ gives three numbers: in a single chat "avoid sending
// more than one message per second"; in a group the bot "will not be able to
// send more than 20 messages per minute"; and in bulk the API "will not allow
// more than about 30 messages per second". The fake reads them as hard
// limits with no burst: private chats 1 per second; groups, supergroups and
// channels 1 per second and 20 per minute; the bot as a whole 30 per second
// over all chats (see defaultPrivateLimit, defaultGroupLimit and
// defaultBotLimit). Every bot is held to them separately: a chat's limit
// counts one bot's sends to it, not every bot's.
//
// Each limit is a set of sliding windows over accepted sends. A window
// {N, Per} admits a send only if fewer than N sends of its scope were
// accepted in the last Per: the accepted send N places back must be at least
// Per×(1−Tolerance) old, where Config.Tolerance is 0.3% unless set (at most
// 0.5%). Refused sends do not count. A client that paces itself exactly at
// Telegram's documented rates is therefore accepted; one that relies on a
// burst is not. Config.Lenient restores some slack (N+1 per chat window, 2×N
// for the bot) for tests written against a more forgiving fake.
//
// A refused send is answered 429 with parameters.retry_after: the time until
// the scope's windows admit again, in whole Telegram seconds rounded up and
// at least 1. That answer announces a flood wait that lasts the whole
// retry_after: until it ends, every send of that bot to the chat (for a
// chat's limit) or to any chat (for the bot-wide limit) is answered 429
// with the remaining retry_after, even when the windows would already admit
// it, and is counted in Stats.InsideWait. Config.Penalty can make such
// requests lengthen the wait.
//
// The sends are sendMessage, sendPhoto and the three edit methods: a photo
// is a message, and Telegram counts edits towards a chat's limits, which
// the fake reads as an edit costing what a send costs. They also share the
// injected faults (FailNext, SetFaultRates). getChat, getMe,
// answerCallbackQuery, getUpdates and the webhook methods are not limited
// (setWebhook has a limit of its own, below).
//
// A chat named by @username gets a stable -100… id; the name in any letter
// case and that id name one chat and share one flood-control scope.
//
// # Paid broadcasts
//
// Bot API 7.11 lets a bot pass allow_paid_broadcast to sendMessage and
// sendPhoto "to allow up to 1000 messages per second, ignoring
// broadcasting limits for a fee of 0.1 Telegram Stars per message", once
// paid broadcasts are enabled in @BotFather, from the bot's Stars balance;
// Telegram bills the requests that exceeded the regular limits. The fake
// reads it so (Config.PaidBroadcast, per bot Config.PaidBroadcastByBot):
// every accepted send counts in the bot's free windows (Config.Bot, 30 per
// second) whether it was paid or not; a send without the flag is held to
// them as ever; a paid send is admitted by the paid windows (1000 per
// second, sliding, strict) or the free ones, and when the free ones alone
// would have refused it, it is charged StarsPerCharge. Chat and group
// limits hold for paid sends as for any other. A paid send from a bot
// without paid broadcasts is refused with 400 ErrPaidNotEnabled, and a
// charged one the balance cannot pay for with 400 ErrBalanceTooLow; neither
// is delivered or counted in any window. Telegram documents neither
// answer: see those constants for where their texts come from. Stats count
// PaidSends, ChargedSends, StarsSpent and PaidRefused; records say Paid and
// Charged. Reset refills the balances from the Config.
//
// Config.Bot may also be lifted far above any client's reach (Rate), to
// measure a client's own ceiling with only chat limits in the way.
//
// # Time
//
// All durations in Config and in the fault methods are expressed in Telegram
// time. Config.TimeScale compresses Telegram time into real time, so a
// benchmark can replay minutes of traffic in seconds; RetryAfterUnit says how
// long one "second" of retry_after lasts in real time. Config.Now replaces
// the clock, so tests can step through windows without sleeping. A send or
// an edit is judged and recorded at its arrival (after Config.Latency),
// read before the server's own locks, so the fake's bookkeeping does not
// move a request closer to the ones after it; a request the server got to
// after a later one is counted in its place among them, as a server that
// took requests in the order they came would have counted it.
//
// # Messages, replies and edits
//
// Every accepted message stays addressable by its chat and message id, as
// on Telegram, with the inline keyboard it was sent with (reply_markup;
// other kinds of reply markup are checked and accepted but not kept).
// A message may reply to another: reply_parameters ({message_id, chat_id,
// allow_sending_without_reply}) or, when it is absent, the older
// reply_to_message_id and allow_sending_without_reply. A reply to a message
// that does not exist or was deleted (DeleteMessage, standing in for a user
// or admin) is refused with 400 "message to be replied not found", unless
// allow_sending_without_reply is set and the target is in the same chat;
// the message then goes out as no reply. A message id of 0 means no reply,
// as in the Bot API. Message.ReplyTo records the target, and the answer
// carries reply_to_message.
//
// A bot edits only its own messages: editMessageText (text messages),
// editMessageCaption (photos) and editMessageReplyMarkup, addressed by
// chat_id and message_id. The errors are Telegram's: "message to edit not
// found" (none, or deleted), "message can't be edited" (another bot's),
// "there is no text in the message to edit", "there is no caption in the
// message to edit", and "message is not modified: …" when the text, its
// formatting and the keyboard are all unchanged. An edit's reply_markup
// replaces the keyboard, and an edit without one removes it. The fake sends
// no inline messages, so an inline_message_id is always invalid. Formatting
// is compared as written: formatted text without markup equals plain text,
// but <b> and <strong> differ, where Telegram compares entities. Each edit
// is kept (Server.Edits); Message.Edited, Message.LastEdit and
// Message.Current tell what a message shows now, and answers carry
// edit_date.
//
// # Photos
//
// sendPhoto takes the photo as an HTTP URL, a file_id the same bot got
// before (file ids belong to one bot) or a multipart upload (field
// "photo", or "attach://<name>"), with a caption of at most maxCaptionLen
// (1024) characters, counted like text (UTF-16 units after entity parsing,
// or markup included under Config.CountMarkup). The fake never fetches a
// URL: it is a valid image unless SetPhotoURL says it fails ("failed to get
// HTTP URL content"), is no image ("wrong type of the web page content"),
// is over maxPhotoURLBytes (5 MB) or has dimensions Telegram refuses. An
// upload must look like an image ("IMAGE_PROCESS_FAILED"), be non-empty,
// be at most maxPhotoBytes (10 MB; above, "PHOTO_SAVE_FILE_INVALID", the
// error Telegram's servers give) and have a width and height that sum to at
// most 10000 with a ratio of at most 20 ("PHOTO_INVALID_DIMENSIONS";
// dimensions are read from PNG, JPEG and GIF). A request body over
// maxUploadBytes (50 MB) is answered 413 "Request Entity Too Large". The
// record's Photo holds the URL, or the upload's size and SHA-256.
//
// # Button presses and updates
//
// Press presses a callback button of a message as a user: it makes a
// callback query (id, from, the message as it is now, chat_instance, data)
// and a callback_query update for the bot that sent the message. The bot
// answers it once with answerCallbackQuery, within
// Config.CallbackAnswerTimeout of the press (15 s unless set; Telegram
// gives no figure); a later, second or unknown answer is refused with
// "query is too old and response timeout expired or query ID is invalid".
// Answers are recorded (CallbackQueries).
//
// Say sends a message to a chat as a person does. The bot receives it as
// a message update as Telegram hands them over to a bot in privacy mode:
// every message of a private chat, and only commands (texts starting with
// "/", with their bot_command entity) in groups; the message takes its id
// among the chat's. A message update not received within 24 hours is
// dropped.
//
// Updates are per bot, with ids counting up from a number of the bot's
// own. A callback_query update not received within 150 seconds is dropped,
// as the Bot API server does. Without a webhook, getUpdates returns the
// waiting updates from its offset on (offset confirms and forgets the
// lower ids; a negative offset keeps the last -offset; an offset past the
// next id is ignored), at most limit (1 to 100), waiting up to timeout
// seconds (at most 50) for one when there are none; the wait ends as soon
// as an update arrives. A getUpdates that starts waiting ends the one
// already waiting with 409 "Conflict: terminated by other getUpdates
// request; make sure that only one bot instance is running", and
// getUpdates while a webhook is set gets 409 "Conflict: can't use
// getUpdates method while webhook is active; use deleteWebhook to delete
// the webhook first". allowed_updates works as in the Bot API: an absent
// or unreadable value keeps the previous one, and it filters updates when
// they are made (a Press the bot does not receive fails). The Bot API's
// throttling of repeated short polls and the 3-second delay between two
// conflicts are left out.
//
// SetChat (and POST /fake/chat) also stands in for the people who block a
// bot or remove it from a chat: when a chat starts refusing the bots
// (Blocked or Kicked) or stops, every bot gets a my_chat_member update, a
// ChatMemberUpdated shaped as the Bot API server writes it (chat, from,
// date, old_chat_member and new_chat_member about the bot as getMe
// describes it). In a private chat it comes from the user and the bot
// goes from "member" to "kicked" and back; in a basic group the bot has
// "left", in a supergroup or channel it is "kicked", and it comes back as
// "member" (an "administrator" that may post, in a channel), the change
// coming from a made-up administrator of the chat. A SetChat that keeps
// the bots in or out (Kicked after Blocked, the same state again), or
// that involves NotFound or MigrateTo, makes none. These updates live a
// day, as the Bot API keeps them.
//
// Redeliver hands an update to the bot again, any number of times, with
// the same update_id and callback query id, as when Telegram does not
// learn that a delivery succeeded: with a webhook each copy is posted;
// without, each copy is returned once by a later getUpdates whatever its
// offset.
//
// # Webhooks
//
// setWebhook (url, secret_token, max_connections, allowed_updates,
// drop_pending_updates), deleteWebhook and getWebhookInfo behave as the Bot
// API server's: a second setWebhook with a URL within a second is answered
// 429 (counted in Stats.TooManySetWebhook); an unchanged one answers
// "Webhook is already set"; setting one ends a waiting getUpdates with 409
// "Conflict: terminated by setWebhook request"; the old webhook is closed
// before the new URL and secret are checked ("invalid webhook URL
// specified", "secret token is too long", "secret token contains unallowed
// characters"). Like a Bot API server in --local mode, and unlike
// api.telegram.org, the fake accepts http URLs on any port; it does not
// reach the URL before answering.
//
// The fake posts each update as JSON to the URL, with the header
// X-Telegram-Bot-Api-Secret-Token when a secret is set, through
// Config.WebhookClient. A delivery answered 2xx is done; any other answer
// or a failed connection is retried, at once and then after 2, 4, 8…
// Config.WebhookRetry (one second unless set, at most 60 of them; a
// Retry-After header wins), until the update would expire; getWebhookInfo
// reports the last error ("Wrong response from the webhook: 500 Internal
// Server Error"). Updates are posted one at a time, in order, where the
// Bot API server posts in parallel over max_connections to separate
// queues; the fake ignores a method call in a webhook's answer.
//
// # Records
//
// Every accepted message is recorded with the name and id of the bot that
// sent it; Messages, MessagesOf, Lookup, Edits, CallbackQueries, Updates,
// Stats, Wait and WaitUntil expose the records in-process, and Handler adds
// /fake/... endpoints (read by Remote) for a client living in another
// process, with the same per-bot breakdown. Records are updated in place
// (edits, deletions), so a client reading /fake/messages from an index on
// sees the records as they are now.
package telegramfake
