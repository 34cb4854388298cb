package markup

import "strconv"

// ParseError mirrors Telegram's "Bad Request: can't parse entities: <Msg> at byte offset N" answer.
type ParseError struct {
	// Offset is the byte offset in the original text where the problem starts.
	Offset int
	// Msg describes the problem in Telegram's words, without the offset.
	Msg string
}

// Error formats the error like the text Telegram puts after "Bad Request: ".
func (e *ParseError) Error() string {
	return "can't parse entities: " + e.Msg + " at byte offset " + strconv.Itoa(e.Offset)
}

// parseErr builds a *ParseError.
func parseErr(offset int, msg string) *ParseError {
	return &ParseError{Offset: offset, Msg: msg}
}
