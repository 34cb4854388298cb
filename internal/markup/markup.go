// Package markup implements Telegram's message formatting rules (parse modes
// HTML and MarkdownV2) in one place: it validates formatted text the way the
// Bot API parses it, measures the text a user will see, escapes arbitrary
// strings, and splits long formatted messages into parts that each stay valid
// and within Telegram's length limit.
//
// The parsing rules follow the behaviour of Telegram's server side (TDLib's
// entity parser), including a few places where it is more lenient than the
// Bot API documentation: in HTML a '&' that does not start a known entity and a
// '>' outside a tag are taken literally, and in MarkdownV2 a '\' that is not
// followed by an ASCII character is taken literally. Everything the documentation
// calls an error that the server also rejects is reported as a *ParseError.
package markup
