package alerts

import "sort"

// Only tests look at a table's route and webhook names.

// RouteNames lists the route names in file order, the default route (if
// any) last.
func (t *Table) RouteNames() []string {
	names := make([]string, 0, len(t.routes)+1)
	for _, r := range t.routes {
		names = append(names, r.name)
	}
	if t.fallback != nil {
		names = append(names, t.fallback.name)
	}
	return names
}

// WebhookNames lists the generic webhook mappings, sorted.
func (t *Table) WebhookNames() []string {
	names := make([]string, 0, len(t.webhooks))
	for n := range t.webhooks {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
