package chats

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/keys"
)

// amongChunk is how many marks one MGET of BlockedAmong reads.
const amongChunk = 1000

// BlockedAmong reports which of chats (as keys.ParseChat returns them)
// are marked blocked for bot: blocked[i] is chats[i]'s. It reads the
// marks with MGETs of amongChunk keys, all pipelined: one round trip per
// node for any number of chats.
func (s *Store) BlockedAmong(ctx context.Context, bot string, chats []string) ([]bool, error) {
	ks := keys.Bot(bot)
	cmds := make([]*redis.SliceCmd, 0, (len(chats)+amongChunk-1)/amongChunk)
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for start := 0; start < len(chats); start += amongChunk {
			part := chats[start:min(start+amongChunk, len(chats))]
			names := make([]string, len(part))
			for i, c := range part {
				names[i] = ks.Blocked(c)
			}
			cmds = append(cmds, p.MGet(ctx, names...))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("chats: read the marks of %d chats of bot %s: %w", len(chats), bot, err)
	}
	blocked := make([]bool, 0, len(chats))
	for _, c := range cmds {
		for _, v := range c.Val() {
			blocked = append(blocked, v != nil)
		}
	}
	return blocked, nil
}
