package broadcast

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/herald-dev/herald/internal/durable"
	"github.com/herald-dev/herald/internal/keys"
)

// An audience is a chat list an app uploads once (PUT
// /v1/audiences/{name}) and names in its broadcasts instead of listing the
// chats each time. It belongs to the token that uploaded it: another token
// naming the same audience reaches its own, or none. It is kept until it
// is replaced or deleted.

// maxAudienceName is the longest audience name.
const maxAudienceName = 64

// AudienceInfo is what PutAudience stored.
type AudienceInfo struct {
	Name          string `json:"name"`
	Chats         int    `json:"chats"`
	RepeatedChats int    `json:"repeated_chats,omitempty"`
}

// checkAudienceName refuses a name that is not 1-64 of a-z, 0-9, _ and -.
func checkAudienceName(name string) error {
	if name == "" || len(name) > maxAudienceName || !keys.NameChars(name) {
		return fieldErrors{{Field: "audience", Message: fmt.Sprintf("%q is not an audience name: 1-%d of a-z, 0-9, _ and -", name, maxAudienceName)}}.err()
	}
	return nil
}

// PutAudience stores chats, checked and without repeats, as owner's
// audience name, replacing what it held.
func (s *Service) PutAudience(ctx context.Context, owner, name string, chats []string) (AudienceInfo, error) {
	if err := checkAudienceName(name); err != nil {
		return AudienceInfo{}, err
	}
	list, repeats, err := checkChats("chats", chats, s.cfg.MaxChats)
	if err != nil {
		return AudienceInfo{}, err
	}
	k := keys.Audience(owner, name)
	durable.Wrote(ctx, k)
	if err := s.rdb.Set(ctx, k, strings.Join(list, "\n"), 0).Err(); err != nil {
		return AudienceInfo{}, unavailable(fmt.Errorf("write audience %s: %w", name, err))
	}
	return AudienceInfo{Name: name, Chats: len(list), RepeatedChats: repeats}, nil
}

// DeleteAudience removes owner's audience name; false when there was none.
func (s *Service) DeleteAudience(ctx context.Context, owner, name string) (bool, error) {
	if err := checkAudienceName(name); err != nil {
		return false, err
	}
	k := keys.Audience(owner, name)
	durable.Wrote(ctx, k)
	n, err := s.rdb.Del(ctx, k).Result()
	if err != nil {
		return false, unavailable(fmt.Errorf("delete audience %s: %w", name, err))
	}
	return n > 0, nil
}

// audience reads owner's audience name: a *jobs.ValidationError naming
// "audience" when there is none.
func (s *Service) audience(ctx context.Context, owner, name string) ([]string, error) {
	if err := checkAudienceName(name); err != nil {
		return nil, err
	}
	v, err := s.rdb.Get(ctx, keys.Audience(owner, name)).Result()
	switch {
	case errors.Is(err, redis.Nil):
		return nil, fieldErrors{{Field: "audience", Message: fmt.Sprintf("%q is not an audience of this token; upload it with PUT /v1/audiences/%s first", name, name)}}.err()
	case err != nil:
		return nil, unavailable(fmt.Errorf("read audience %s: %w", name, err))
	}
	return strings.Split(v, "\n"), nil
}
