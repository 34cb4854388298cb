package webhooks

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/herald-dev/herald/internal/alerts"
	"github.com/herald-dev/herald/internal/httpapi"
	"github.com/herald-dev/herald/internal/jobs"
)

// ghRender builds the alert of one delivery.
type ghRender struct {
	event, delivery string
	// digest is bodyDigest of the signed body: the idempotency key.
	digest string
	p      *ghPayload
}

// base returns an alert with the fields every GitHub alert shares.
func (g ghRender) base(sev alerts.Severity, status alerts.Status) alerts.Alert {
	labels := map[string]string{"event": g.event}
	if g.p.Action != "" {
		labels["action"] = g.p.Action
	}
	if repo := g.repo(); repo != "" {
		labels["repo"] = repo
	}
	return alerts.Alert{Severity: sev, Status: status, Source: "github", Labels: labels, Fingerprint: fingerprint("github", g.event, g.digest)}
}

// key is the key of the alerts about one numbered object of the
// repository (an issue, a pull request, a Dependabot alert), so that its
// opening, reopening and closing share a thread.
func (g ghRender) key(kind string, number int64) string {
	return fingerprint("github", g.repo(), kind, strconv.FormatInt(number, 10))
}

func (g ghRender) repo() string {
	if g.p.Repository == nil {
		return ""
	}
	return g.p.Repository.FullName
}

// in returns " in owner/repo" when the delivery names a repository.
func (g ghRender) in() string {
	if r := g.repo(); r != "" {
		return " in " + r
	}
	return ""
}

func (g ghRender) sender() string {
	if g.p.Sender == nil {
		return ""
	}
	return g.p.Sender.Login
}

func (g ghRender) ignoredAction(handled string) string {
	return fmt.Sprintf("GitHub %s action %q is not rendered (only %s)", g.event, clip(g.p.Action, 64), handled)
}

// required is the 400 for a payload without the object its event needs.
func (g ghRender) required(field string) *httpapi.Error {
	return httpapi.Invalid("not a GitHub "+g.event+" payload",
		jobs.FieldError{Field: field, Message: "is required for a " + g.event + " event"})
}

func (g ghRender) release() (alerts.Alert, string, *httpapi.Error) {
	if g.p.Action != "published" {
		return alerts.Alert{}, g.ignoredAction("published"), nil
	}
	r := g.p.Release
	if r == nil {
		return alerts.Alert{}, "", g.required("release")
	}
	a := g.base(alerts.SeverityInfo, alerts.StatusFiring)
	kind := "Release"
	if r.Prerelease {
		kind = "Pre-release"
	}
	name := r.TagName
	if n := strings.TrimSpace(r.Name); n != "" && n != r.TagName {
		name = fmt.Sprintf("%s (%s)", n, r.TagName)
	}
	a.Title = fmt.Sprintf("%s %s published%s", kind, name, g.in())
	a.Body = paragraphs(by("Published", firstNonBlank(r.Author.Login, g.sender())), clip(r.Body, summaryLen))
	a.URL = r.HTMLURL
	a.Time = parseTime(r.PublishedAt)
	a.Labels["tag"] = r.TagName
	a.Labels["prerelease"] = strconv.FormatBool(r.Prerelease)
	return a, "", nil
}

func (g ghRender) workflowRun() (alerts.Alert, string, *httpapi.Error) {
	if g.p.Action != "completed" {
		return alerts.Alert{}, g.ignoredAction("completed runs that failed or timed out"), nil
	}
	run := g.p.WorkflowRun
	if run == nil {
		return alerts.Alert{}, "", g.required("workflow_run")
	}
	var verb string
	switch run.Conclusion {
	case "failure":
		verb = "failed"
	case "timed_out":
		verb = "timed out"
	default:
		return alerts.Alert{}, fmt.Sprintf("workflow run concluded %q: only failure and timed_out are sent", clip(run.Conclusion, 64)), nil
	}
	name := firstNonBlank(run.Name)
	if name == "" && g.p.Workflow != nil {
		name = g.p.Workflow.Name
	}
	a := g.base(alerts.SeverityWarning, alerts.StatusFiring)
	on := ""
	if run.HeadBranch != "" {
		on = " on " + run.HeadBranch
	}
	a.Title = fmt.Sprintf("Workflow %s %s%s%s", firstNonBlank(name, "run"), verb, on, g.in())
	runLine := fmt.Sprintf("Run #%d", run.RunNumber)
	if run.RunAttempt > 1 {
		runLine += fmt.Sprintf(" (attempt %d)", run.RunAttempt)
	}
	if run.Event != "" {
		runLine += ", event " + run.Event
	}
	if run.Actor.Login != "" {
		runLine += ", started by @" + run.Actor.Login
	}
	commit := ""
	if sha := shortSHA(run.HeadSHA); sha != "" {
		msg := ""
		if run.HeadCommit != nil {
			msg = firstLine(run.HeadCommit.Message)
		}
		if msg == "" {
			msg = firstLine(run.DisplayName)
		}
		commit = strings.TrimSuffix("Commit "+sha+": "+msg, ": ")
	}
	a.Body = lines(runLine, commit)
	a.URL = run.HTMLURL
	a.Time = parseTime(run.UpdatedAt)
	a.Labels["workflow"] = name
	a.Labels["branch"] = run.HeadBranch
	a.Labels["conclusion"] = run.Conclusion
	return a, "", nil
}

func (g ghRender) issue() (alerts.Alert, string, *httpapi.Error) {
	var status alerts.Status
	switch g.p.Action {
	case "opened", "reopened":
		status = alerts.StatusFiring
	case "closed":
		status = alerts.StatusResolved
	default:
		return alerts.Alert{}, g.ignoredAction("opened, closed and reopened"), nil
	}
	is := g.p.Issue
	if is == nil {
		return alerts.Alert{}, "", g.required("issue")
	}
	a := g.base(alerts.SeverityInfo, status)
	a.Key = g.key("issue", is.Number)
	verb := g.p.Action
	if verb == "closed" && is.StateReason == "not_planned" {
		verb = "closed as not planned"
	}
	a.Title = fmt.Sprintf("Issue #%d %s%s: %s", is.Number, verb, g.in(), is.Title)
	who := g.sender()
	if g.p.Action == "opened" {
		who = firstNonBlank(is.User.Login, who)
	}
	text := ""
	if g.p.Action == "opened" {
		text = clip(is.Body, summaryLen)
	}
	a.Body = paragraphs(by(capitalize(verb), who), text)
	a.URL = is.HTMLURL
	a.Time = parseTime(is.UpdatedAt)
	return a, "", nil
}

func (g ghRender) pullRequest() (alerts.Alert, string, *httpapi.Error) {
	pr := g.p.PullRequest
	var (
		status = alerts.StatusFiring
		verb   string
	)
	switch g.p.Action {
	case "opened", "reopened":
		verb = g.p.Action
	case "closed":
		status = alerts.StatusResolved
		verb = "closed without merging"
		if pr != nil && pr.Merged {
			verb = "merged"
		}
	default:
		return alerts.Alert{}, g.ignoredAction("opened, closed and reopened"), nil
	}
	if pr == nil {
		return alerts.Alert{}, "", g.required("pull_request")
	}
	a := g.base(alerts.SeverityInfo, status)
	a.Key = g.key("pull", pr.Number)
	if verb == "merged" && pr.Base.Ref != "" {
		verb = "merged into " + pr.Base.Ref
	}
	a.Title = fmt.Sprintf("Pull request #%d %s%s: %s", pr.Number, verb, g.in(), pr.Title)
	var who string
	switch {
	case g.p.Action == "opened":
		who = firstNonBlank(pr.User.Login, g.sender())
	case pr.Merged:
		who = firstNonBlank(pr.MergedBy.Login, g.sender())
	default:
		who = g.sender()
	}
	head := by(capitalize(strings.Fields(verb)[0]), who)
	if g.p.Action == "opened" && pr.Head.Ref != "" && pr.Base.Ref != "" {
		head += fmt.Sprintf(": %s → %s", pr.Head.Ref, pr.Base.Ref)
	}
	text := ""
	if g.p.Action == "opened" {
		text = clip(pr.Body, summaryLen)
	}
	a.Body = paragraphs(head, text)
	a.URL = pr.HTMLURL
	a.Time = parseTime(pr.UpdatedAt)
	a.Labels["base"] = pr.Base.Ref
	if pr.Draft {
		a.Labels["draft"] = "true"
	}
	return a, "", nil
}

func (g ghRender) securityAdvisory() (alerts.Alert, string, *httpapi.Error) {
	if g.p.Action != "published" {
		return alerts.Alert{}, g.ignoredAction("published"), nil
	}
	adv := g.p.SecurityAdvisory
	if adv == nil {
		return alerts.Alert{}, "", g.required("security_advisory")
	}
	a := g.base(advisorySeverity(adv.Severity), alerts.StatusFiring)
	a.Title = fmt.Sprintf("Security advisory %s (%s): %s", firstNonBlank(append(adv.ids(), "published")...), firstNonBlank(adv.Severity, "unknown severity"), adv.Summary)
	var affected []string
	for i, v := range adv.Vulnerabilities {
		if i == 10 {
			affected = append(affected, fmt.Sprintf("… and %d more", len(adv.Vulnerabilities)-i))
			break
		}
		affected = append(affected, "Affected: "+vulnerabilityLine(v))
	}
	a.Body = paragraphs(clip(adv.Description, summaryLen), lines(affected...), identifiers(adv.ids()...))
	a.URL = firstURL(adv.HTMLURL, "https://github.com/advisories/"+adv.GHSAID)
	a.Time = parseTime(adv.PublishedAt)
	a.Labels["ghsa_id"] = adv.GHSAID
	a.Labels["advisory_severity"] = adv.Severity
	return a, "", nil
}

func (g ghRender) dependabotAlert() (alerts.Alert, string, *httpapi.Error) {
	switch g.p.Action {
	case "created", "reopened", "reintroduced", "auto_reopened":
	default:
		return alerts.Alert{}, g.ignoredAction("created, reopened, reintroduced and auto_reopened"), nil
	}
	al := g.p.Alert
	if al == nil {
		return alerts.Alert{}, "", g.required("alert")
	}
	adv := al.SecurityAdvisory
	if adv == nil {
		adv = &ghAdvisory{}
	}
	vuln := al.SecurityVulnerability
	if vuln == nil {
		vuln = &ghVulnerability{}
	}
	severity := firstNonBlank(adv.Severity, vuln.Severity)
	a := g.base(advisorySeverity(severity), alerts.StatusFiring)
	a.Key = g.key("dependabot", al.Number)
	pkg := vuln.Package
	manifest := ""
	if al.Dependency != nil {
		pkg = al.Dependency.Package
		manifest = al.Dependency.ManifestPath
	}
	a.Title = fmt.Sprintf("Dependabot alert #%d%s (%s): %s", al.Number, g.in(), firstNonBlank(severity, "unknown severity"),
		firstNonBlank(adv.Summary, "vulnerable dependency "+pkg.Name))
	pkgLine := "Package: " + packageName(pkg)
	if manifest != "" {
		pkgLine += " in " + manifest
	}
	vuln.Package = pkg
	a.Body = lines(pkgLine, "Vulnerable: "+firstNonBlank(vuln.VulnerableVersionRange, "unknown"),
		patched(vuln), identifiers(adv.ids()...))
	a.URL = firstURL(al.HTMLURL, adv.HTMLURL)
	a.Time = parseTime(al.CreatedAt)
	a.Labels["ghsa_id"] = adv.GHSAID
	a.Labels["advisory_severity"] = severity
	a.Labels["package"] = pkg.Name
	a.Labels["ecosystem"] = pkg.Ecosystem
	return a, "", nil
}

func (g ghRender) vulnerabilityAlert() (alerts.Alert, string, *httpapi.Error) {
	if g.p.Action != "create" {
		return alerts.Alert{}, g.ignoredAction("create"), nil
	}
	al := g.p.Alert
	if al == nil {
		return alerts.Alert{}, "", g.required("alert")
	}
	a := g.base(advisorySeverity(al.Severity), alerts.StatusFiring)
	a.Title = fmt.Sprintf("Vulnerable dependency %s%s (%s)", firstNonBlank(al.AffectedPackageName, "package"), g.in(), firstNonBlank(al.Severity, "unknown severity"))
	fixed := ""
	if al.FixedIn != "" {
		fixed = "Fixed in: " + al.FixedIn
	}
	a.Body = lines("Vulnerable: "+firstNonBlank(al.AffectedRange, "unknown"), fixed,
		identifiers(al.GHSAID, al.ExternalIdentifier))
	repoURL := ""
	if g.p.Repository != nil && webURL(g.p.Repository.HTMLURL) != "" {
		repoURL = strings.TrimSuffix(g.p.Repository.HTMLURL, "/") + "/security"
	}
	a.URL = firstURL(al.ExternalReference, repoURL)
	a.Time = parseTime(al.CreatedAt)
	a.Labels["ghsa_id"] = al.GHSAID
	a.Labels["advisory_severity"] = al.Severity
	a.Labels["package"] = al.AffectedPackageName
	return a, "", nil
}

// by renders "Verb by @login", or just the verb when nobody is named.
func by(verb, login string) string {
	if login == "" {
		return verb
	}
	return verb + " by @" + login
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func shortSHA(sha string) string {
	if len(sha) > 7 {
		return sha[:7]
	}
	return sha
}

func packageName(p ghPackage) string {
	switch {
	case p.Ecosystem != "" && p.Name != "":
		return p.Ecosystem + "/" + p.Name
	case p.Name != "":
		return p.Name
	}
	return "unknown"
}

func vulnerabilityLine(v ghVulnerability) string {
	s := packageName(v.Package)
	if v.VulnerableVersionRange != "" {
		s += " " + v.VulnerableVersionRange
	}
	if v.FirstPatchedVersion != nil && v.FirstPatchedVersion.Identifier != "" {
		s += " (patched in " + v.FirstPatchedVersion.Identifier + ")"
	}
	return s
}

func patched(v *ghVulnerability) string {
	if v.FirstPatchedVersion == nil || v.FirstPatchedVersion.Identifier == "" {
		return "Patched: no patched version yet"
	}
	return "Patched: " + v.FirstPatchedVersion.Identifier
}

// identifiers renders "Advisory: GHSA-…, CVE-…" from the ids present.
func identifiers(ids ...string) string {
	var present []string
	for _, id := range ids {
		if id = strings.TrimSpace(id); id != "" {
			present = append(present, id)
		}
	}
	if len(present) == 0 {
		return ""
	}
	return "Advisory: " + strings.Join(present, ", ")
}

// ids lists an advisory's GHSA id, then its CVE ids, each once: from
// ghsa_id and cve_id and from identifiers by type (a payload may carry
// only the latter).
func (a *ghAdvisory) ids() []string {
	var ids []string
	add := func(id string) {
		if id = strings.TrimSpace(id); id != "" && !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	of := func(kind string) {
		for _, id := range a.Identifiers {
			if strings.EqualFold(strings.TrimSpace(id.Type), kind) {
				add(id.Value)
			}
		}
	}
	add(a.GHSAID)
	of("GHSA")
	add(a.CVEID)
	of("CVE")
	return ids
}

// parseTime reads an RFC 3339 time, zero when absent or malformed.
func parseTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(s))
	if err != nil || t.Year() <= 1 {
		return time.Time{}
	}
	return t.UTC()
}
