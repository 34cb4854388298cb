package digest

import (
	"context"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/keys"
)

// claimScript claims items for one digest: each item whose claim is free is
// given to the digest, and the owner of every item is returned. A digest
// retried after a crash finds its own claims and carries on; an item that
// reached a second digest (a reclaimed aggregation set) stays with the first
// one that claimed it.
//
// KEYS[i] <bot's tag>:digestitem:<item id>, one per item, all of one bot.
// ARGV[1] the digest's task id, ARGV[2] the claim's time to live in ms.
// Returns the owner of each item, in KEYS order ("" if unreadable).
var claimScript = redis.NewScript(`
local owners = {}
for i, k in ipairs(KEYS) do
  if redis.call('SET', k, ARGV[1], 'NX', 'PX', ARGV[2]) then
    owners[i] = ARGV[1]
  else
    owners[i] = redis.call('GET', k) or ''
  end
end
return owners
`)

// claim claims ids for owner and reports, per id, whether owner holds it.
func claim(ctx context.Context, rdb redis.Scripter, space keys.Space, owner string, ids []string, ttlMillis int64) ([]bool, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	ks := make([]string, len(ids))
	for i, id := range ids {
		ks[i] = space.DigestItemClaim(id)
	}
	owners, err := claimScript.Run(ctx, rdb, ks, owner, strconv.FormatInt(ttlMillis, 10)).StringSlice()
	if err != nil {
		return nil, fmt.Errorf("claim digest items: %w", err)
	}
	if len(owners) != len(ids) {
		return nil, fmt.Errorf("claim digest items: %d owners for %d items", len(owners), len(ids))
	}
	mine := make([]bool, len(ids))
	for i, o := range owners {
		if o == "" {
			return nil, fmt.Errorf("claim digest items: item %s has no owner after claiming", ids[i])
		}
		mine[i] = o == owner
	}
	return mine, nil
}
