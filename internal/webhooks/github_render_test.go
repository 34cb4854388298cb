package webhooks

import (
	"slices"
	"testing"
)

// TestAdvisoryIDs: the GHSA id comes first, then every CVE id once,
// whether the payload names it in cve_id, in identifiers or in both.
func TestAdvisoryIDs(t *testing.T) {
	for _, c := range []struct {
		name string
		adv  ghAdvisory
		want []string
	}{
		{"both fields", ghAdvisory{GHSAID: "GHSA-a", CVEID: "CVE-1"}, []string{"GHSA-a", "CVE-1"}},
		{"identifiers only", ghAdvisory{Identifiers: []ghIdentifier{{"CVE", "CVE-1"}, {"GHSA", "GHSA-a"}}}, []string{"GHSA-a", "CVE-1"}},
		{"both, twice", ghAdvisory{GHSAID: "GHSA-a", CVEID: "CVE-1", Identifiers: []ghIdentifier{{"GHSA", "GHSA-a"}, {"CVE", " CVE-1 "}, {"cve", "CVE-2"}}}, []string{"GHSA-a", "CVE-1", "CVE-2"}},
		{"no CVE", ghAdvisory{GHSAID: "GHSA-a", Identifiers: []ghIdentifier{{"GHSA", "GHSA-a"}, {"CVE", ""}}}, []string{"GHSA-a"}},
		{"nothing", ghAdvisory{}, nil},
	} {
		if got := c.adv.ids(); !slices.Equal(got, c.want) {
			t.Errorf("%s: ids %q, want %q", c.name, got, c.want)
		}
	}
	if got := identifiers((&ghAdvisory{GHSAID: "GHSA-a"}).ids()...); got != "Advisory: GHSA-a" {
		t.Errorf("without a CVE: %q", got)
	}
}
