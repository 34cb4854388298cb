package chats

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/durable"
	"github.com/herald-dev/herald/internal/keys"
)

// Store reads and writes the blocked marks on one Redis (or Cluster).
type Store struct {
	rdb     redis.UniversalClient
	metrics *Metrics
	now     func() time.Time
}

// Option tunes a Store.
type Option func(*Store)

// WithMetrics has the store count the changes it makes (a new mark, a
// mark cleared) in m.
func WithMetrics(m *Metrics) Option { return func(s *Store) { s.metrics = m } }

// NewStore returns a Store on rdb (shared, not closed by the store).
func NewStore(rdb redis.UniversalClient, opts ...Option) *Store {
	s := &Store{rdb: rdb, now: time.Now}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Block marks chat blocked for bot, unless it is marked already: first
// reports that this call set the mark, and its caller is the one to tell
// the app (the chat.blocked callback); an existing mark is kept as it is,
// with its own Since. The bot "" is the default bot.
func (s *Store) Block(ctx context.Context, bot, chat string, b Block) (first bool, err error) {
	bot, chat, err = Normalize(bot, chat)
	if err != nil {
		return false, err
	}
	if err := b.check(); err != nil {
		return false, err
	}
	v, err := b.encode(s.now())
	if err != nil {
		return false, err
	}
	key := keys.Bot(bot).Blocked(chat)
	durable.Wrote(ctx, key)
	first, err = s.rdb.SetNX(ctx, key, v, 0).Result()
	if err != nil {
		return false, fmt.Errorf("chats: block %s for bot %s: %w", chat, bot, err)
	}
	if first {
		s.metrics.Blocked(bot, b.Source)
	}
	return first, nil
}

// Unblock clears the mark of chat for bot; was reports that there was
// one. source (SourceMyChatMember, SourceAPI) labels the count.
func (s *Store) Unblock(ctx context.Context, bot, chat, source string) (was bool, err error) {
	bot, chat, err = Normalize(bot, chat)
	if err != nil {
		return false, err
	}
	if !validSource(source) {
		return false, (Block{Reason: "-", Source: source}).check()
	}
	key := keys.Bot(bot).Blocked(chat)
	durable.Wrote(ctx, key)
	n, err := s.rdb.Del(ctx, key).Result()
	if err != nil {
		return false, fmt.Errorf("chats: unblock %s for bot %s: %w", chat, bot, err)
	}
	if n > 0 {
		s.metrics.Unblocked(bot, source)
	}
	return n > 0, nil
}

// Get returns what is known of chat for bot.
func (s *Store) Get(ctx context.Context, bot, chat string) (State, error) {
	bot, chat, err := Normalize(bot, chat)
	if err != nil {
		return State{}, err
	}
	v, err := s.rdb.Get(ctx, keys.Bot(bot).Blocked(chat)).Result()
	switch {
	case errors.Is(err, redis.Nil):
		return State{Bot: bot, Chat: chat}, nil
	case err != nil:
		return State{}, fmt.Errorf("chats: read %s of bot %s: %w", chat, bot, err)
	}
	return stateOf(bot, chat, v), nil
}

// memberUpdateTTL is how long a chat's last applied update id is kept:
// longer than Telegram keeps an update (a day) and than its task lives.
const memberUpdateTTL = 25 * time.Hour

// What followScript found.
const (
	followApplied = 0 // a newer update: applied now
	followRepeat  = 1 // the update applied last, again (a retried task)
	followStale   = 2 // older than the last applied: ignored
)

// Follow applies a change of the bot's membership that Telegram reported
// in the update numbered updateID: with b the chats are marked blocked
// (where not marked already), without (nil) their marks are cleared.
// names are the names of one chat, its numeric id first and then its
// @username if it has one, so that messages addressed either way stop or
// resume. Changes apply in update_id order: an update older than the last
// one applied to the chat changes nothing. changed reports that the update
// set or cleared a mark, also when it is the last one applied, seen again
// (a retried task, whose caller must still tell the app).
func (s *Store) Follow(ctx context.Context, bot string, names []string, updateID int64, b *Block) (changed bool, err error) {
	if len(names) == 0 {
		return false, &InvalidError{Field: "chat", Message: "name the chat (its numeric id first)"}
	}
	sp := keys.Bot(bot)
	ks := make([]string, 0, 1+len(names))
	var id string
	for i, name := range names {
		if bot, name, err = Normalize(bot, name); err != nil {
			return false, err
		}
		if i == 0 {
			id = name
			ks = append(ks, sp.MemberUpdate(name))
		}
		ks = append(ks, sp.Blocked(name))
	}
	value, source := "", SourceMyChatMember
	if b != nil {
		if err := b.check(); err != nil {
			return false, err
		}
		if value, err = b.encode(s.now()); err != nil {
			return false, err
		}
		source = b.Source
	}
	durable.Wrote(ctx, ks[0])
	res, err := followScript.Run(ctx, s.rdb, ks, updateID, memberUpdateTTL.Milliseconds(), value).Int64Slice()
	if err != nil || len(res) != 2 {
		return false, fmt.Errorf("chats: apply update %d to %s of bot %s: %w", updateID, id, bot, cmpErr(err))
	}
	changed = res[1] > 0
	if res[0] == followApplied && changed {
		if b != nil {
			s.metrics.Blocked(bot, source)
		} else {
			s.metrics.Unblocked(bot, source)
		}
	}
	return changed && res[0] != followStale, nil
}

// cmpErr is err, or an error for a reply of the wrong shape.
func cmpErr(err error) error {
	if err != nil {
		return err
	}
	return errors.New("unexpected reply")
}

// followScript applies one membership update (see Follow). KEYS[1] is the
// chat's MemberUpdate, holding "<update id>:<changed>" of the last update
// applied; KEYS[2..] its Blocked marks. ARGV: the update id, the TTL of
// KEYS[1] in ms, and the mark's value ("" clears the marks). It returns
// {followApplied|followRepeat|followStale, changed}.
var followScript = redis.NewScript(`
local id = tonumber(ARGV[1])
local last = redis.call('GET', KEYS[1])
if last then
  local sep = string.find(last, ':', 1, true)
  local lastID = tonumber(string.sub(last, 1, sep - 1))
  if id == lastID then return {` + strconv.Itoa(followRepeat) + `, tonumber(string.sub(last, sep + 1))} end
  if id < lastID then return {` + strconv.Itoa(followStale) + `, 0} end
end
local changed = 0
for i = 2, #KEYS do
  if ARGV[3] == '' then
    changed = changed + redis.call('DEL', KEYS[i])
  elseif redis.call('SET', KEYS[i], ARGV[3], 'NX') then
    changed = changed + 1
  end
end
redis.call('SET', KEYS[1], ARGV[1] .. ':' .. changed, 'PX', ARGV[2])
return {` + strconv.Itoa(followApplied) + `, changed}
`)
