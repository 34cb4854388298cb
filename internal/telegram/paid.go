package telegram

import "strings"

// paidFragments are the words of a refusal that is about the paid
// broadcast itself rather than the message: Telegram documents no error
// for a bot without paid broadcasts or without Stars, so any answer that
// names the balance, Stars or paid broadcasts counts.
var paidFragments = []string{"balance", "stars", "paid broadcast", "paid_broadcast", "floodskip", "paid"}

// paidRefused reports whether e, the answer to a send with
// allow_paid_broadcast, refuses the paid broadcast: a 400 or 403 that no
// more specific reason explains and whose description names the balance,
// Stars or paid broadcasts.
func paidRefused(e *Error) bool {
	if e.Reason != ReasonBadRequest && e.Reason != reasonForbidden {
		return false
	}
	if e.Code != 400 && e.Code != 403 {
		return false
	}
	d := strings.ToLower(e.Description)
	for _, f := range paidFragments {
		if strings.Contains(d, f) {
			return true
		}
	}
	return false
}
