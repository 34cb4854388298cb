package quota

import (
	"fmt"
	"time"
)

// Names of the quotas, as the tokens file, the 429's body and the metrics
// spell them.
const (
	NameQueued            = "queued_messages"
	NameRecipients        = "queued_recipients"
	NameBroadcastsPerHour = "broadcasts_per_hour"
	NameAlertsPerMinute   = "alerts_per_minute"
	NameAudiences         = "audiences"
	NameAudienceSize      = "audience_size"
	NameAudienceTTL       = "audience_ttl"
)

// Limits are one token's quotas. A zero field takes its default
// (DefaultLimits); a negative one means no limit.
type Limits struct {
	// QueuedMessages bounds the token's messages (POST /v1/messages) that
	// are stored and not yet settled.
	QueuedMessages int
	// QueuedRecipients bounds the messages of the token's broadcasts that
	// are stored and not yet settled.
	QueuedRecipients int
	// BroadcastsPerHour bounds POST /v1/broadcasts in any hour.
	BroadcastsPerHour int
	// AlertsPerMinute bounds POST /v1/alerts in any minute.
	AlertsPerMinute int
	// Audiences bounds how many audiences the token keeps; AudienceSize
	// the chats of one; AudienceTTL how long one is kept after it was
	// last uploaded.
	Audiences    int
	AudienceSize int
	AudienceTTL  time.Duration
}

// Defaults of Limits: far above what a team's alerts, cron jobs and
// newsletters need, low enough that one token cannot fill Redis.
const (
	DefaultQueuedMessages    = 10_000
	DefaultQueuedRecipients  = 300_000
	DefaultBroadcastsPerHour = 60
	DefaultAlertsPerMinute   = 600
	DefaultAudiences         = 100
	DefaultAudienceSize      = 100_000
	DefaultAudienceTTL       = 90 * 24 * time.Hour
)

// DefaultLimits are the quotas of a token whose entry sets none.
func DefaultLimits() Limits { return Limits{}.WithDefaults() }

// WithDefaults fills in the zero fields.
func (l Limits) WithDefaults() Limits {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&l.QueuedMessages, DefaultQueuedMessages)
	def(&l.QueuedRecipients, DefaultQueuedRecipients)
	def(&l.BroadcastsPerHour, DefaultBroadcastsPerHour)
	def(&l.AlertsPerMinute, DefaultAlertsPerMinute)
	def(&l.Audiences, DefaultAudiences)
	def(&l.AudienceSize, DefaultAudienceSize)
	if l.AudienceTTL == 0 {
		l.AudienceTTL = DefaultAudienceTTL
	}
	return l
}

// Validate reports the first field out of bounds, naming it.
func (l Limits) Validate() error {
	if l.AudienceTTL < 0 {
		return fmt.Errorf("%s: must be a positive duration such as 720h", NameAudienceTTL)
	}
	if l.AudienceTTL > 0 && l.AudienceTTL < time.Minute {
		return fmt.Errorf("%s: %s is shorter than a minute; use 1m or more", NameAudienceTTL, l.AudienceTTL)
	}
	return nil
}

// kind is how a quota counts.
type kind struct {
	width   time.Duration // bucket width
	buckets int           // buckets in the horizon
	// retry is the Retry-After of a refusal of a queued-at-once quota,
	// which frees as the worker settles messages (no time is known).
	retry time.Duration
}

// kinds are the counting quotas' buckets.
var kinds = map[string]kind{
	NameQueued:            {width: time.Hour, buckets: 24, retry: 10 * time.Second},
	NameRecipients:        {width: time.Hour, buckets: 24, retry: 60 * time.Second},
	NameBroadcastsPerHour: {width: 5 * time.Minute, buckets: 12},
	NameAlertsPerMinute:   {width: 10 * time.Second, buckets: 6},
}

// limitOf is l's limit of the quota name.
func (l Limits) limitOf(name string) int {
	switch name {
	case NameQueued:
		return l.QueuedMessages
	case NameRecipients:
		return l.QueuedRecipients
	case NameBroadcastsPerHour:
		return l.BroadcastsPerHour
	case NameAlertsPerMinute:
		return l.AlertsPerMinute
	case NameAudiences:
		return l.Audiences
	case NameAudienceSize:
		return l.AudienceSize
	}
	return -1
}
