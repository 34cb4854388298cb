package settings

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/herald-dev/herald/internal/config"
	"github.com/herald-dev/herald/internal/jobs"
)

// queueEntry is one item of a HERALD_QUEUES list.
type queueEntry struct {
	name     string
	priority int
}

// parseQueueList reads "critical=6,default=3,low=1"; a missing priority
// counts as 1. Names are checked later by validation.
func parseQueueList(s string) ([]queueEntry, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []queueEntry
	for item := range strings.SplitSeq(s, ",") {
		name, prio, hasPrio := strings.Cut(strings.TrimSpace(item), "=")
		name = strings.TrimSpace(name)
		if name == "" {
			return nil, fmt.Errorf("has an empty queue name; use NAME=PRIORITY pairs such as %q", defaultQueueWeights())
		}
		e := queueEntry{name: name, priority: 1}
		if hasPrio {
			n, err := strconv.Atoi(strings.TrimSpace(prio))
			if err != nil {
				return nil, fmt.Errorf("gives queue %q the priority %q; priorities must be whole numbers, as in %q", name, prio, defaultQueueWeights())
			}
			e.priority = n
		}
		if slices.ContainsFunc(out, func(o queueEntry) bool { return o.name == name }) {
			return nil, fmt.Errorf("lists queue %q twice; keep one entry per queue", name)
		}
		out = append(out, e)
	}
	return out, nil
}

// queueListVar binds a HERALD_QUEUES list: set parses it and hands the
// entries to keep, which stores the part its field holds; get renders the
// field. The worker and the producer read the same variable into different
// fields.
func queueListVar(keep func([]queueEntry), get func() string) config.Binding {
	return config.Binding{
		Set: func(s string) error {
			list, err := parseQueueList(s)
			if err != nil {
				return err
			}
			keep(list)
			return nil
		},
		Get: get,
	}
}

// queueMapVar binds the worker's queue→priority map.
func queueMapVar(p *map[string]int) config.Binding {
	return queueListVar(func(list []queueEntry) {
		m := make(map[string]int, len(list))
		for _, e := range list {
			m[e.name] = e.priority
		}
		*p = m
	}, func() string { return formatQueueMap(*p) })
}

// defaultQueueWeights renders the worker's default queues as HERALD_QUEUES
// is written, "critical=6,default=3,low=1": the documented default and the
// example errors give.
func defaultQueueWeights() string {
	return formatQueueMap(jobs.DefaultQueueWeights())
}

// formatQueueMap renders queues by descending priority, then by name.
func formatQueueMap(m map[string]int) string {
	names := slices.SortedFunc(maps.Keys(m), func(a, b string) int {
		return cmp.Or(cmp.Compare(m[b], m[a]), cmp.Compare(a, b))
	})
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = n + "=" + strconv.Itoa(m[n])
	}
	return strings.Join(parts, ",")
}

// queueNamesVar binds the producer's queue list; priorities are accepted
// (the variable is shared with the worker) but not kept.
func queueNamesVar(p *[]string) config.Binding {
	return queueListVar(func(list []queueEntry) {
		names := make([]string, len(list))
		for i, e := range list {
			names[i] = e.name
		}
		*p = names
	}, func() string { return strings.Join(*p, ",") })
}

// validQueueName reports whether name matches [a-z0-9_-]+.
func validQueueName(name string) bool {
	if name == "" {
		return false
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// queuesSpec is HERALD_QUEUES, which both binaries read: the worker the
// queues with their priorities (b is queueMapVar), the producer the names
// alone (queueNamesVar).
func queuesSpec(b config.Binding) config.Spec {
	return config.NewSpec(EnvQueues, defaultQueueWeights(),
		"Queues as NAME=PRIORITY pairs (names use a-z, 0-9, _ and -): workers serve them by priority, producers accept messages for them (and ignore the priorities).", b)
}
