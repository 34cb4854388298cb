package webhooks

import (
	"strings"

	"github.com/herald-dev/herald/internal/alerts"
)

// severityWords maps the severity words senders use to Herald's three.
// Alertmanager and Grafana labels are free text, so the common spellings of
// on-call tools are listed; Sentry levels (fatal, error, warning, info,
// debug) and GitHub advisory severities are among them.
var severityWords = map[string]alerts.Severity{
	"critical": alerts.SeverityCritical, "crit": alerts.SeverityCritical,
	"page": alerts.SeverityCritical, "pager": alerts.SeverityCritical,
	"error": alerts.SeverityCritical, "err": alerts.SeverityCritical,
	"fatal": alerts.SeverityCritical, "emergency": alerts.SeverityCritical,
	"emerg": alerts.SeverityCritical, "alert": alerts.SeverityCritical,
	"disaster": alerts.SeverityCritical, "high": alerts.SeverityCritical,
	"p1": alerts.SeverityCritical, "sev1": alerts.SeverityCritical,

	"warning": alerts.SeverityWarning, "warn": alerts.SeverityWarning,
	"major": alerts.SeverityWarning, "minor": alerts.SeverityWarning,
	"medium": alerts.SeverityWarning, "moderate": alerts.SeverityWarning,
	"average": alerts.SeverityWarning, "p2": alerts.SeverityWarning,
	"p3": alerts.SeverityWarning, "sev2": alerts.SeverityWarning,
	"sev3": alerts.SeverityWarning,

	"info": alerts.SeverityInfo, "informational": alerts.SeverityInfo,
	"information": alerts.SeverityInfo, "notice": alerts.SeverityInfo,
	"low": alerts.SeverityInfo, "none": alerts.SeverityInfo,
	"debug": alerts.SeverityInfo, "ok": alerts.SeverityInfo,
	"p4": alerts.SeverityInfo, "p5": alerts.SeverityInfo,
	"sev4": alerts.SeverityInfo, "sev5": alerts.SeverityInfo,
}

// mapSeverity returns the Herald severity of a sender's word, or def when
// the word is empty or unknown.
func mapSeverity(word string, def alerts.Severity) alerts.Severity {
	if s, ok := severityWords[strings.ToLower(strings.TrimSpace(word))]; ok {
		return s
	}
	return def
}

// advisorySeverity maps a GitHub advisory severity (critical, high,
// moderate/medium, low): critical and high page, the rest warn.
func advisorySeverity(word string) alerts.Severity {
	switch strings.ToLower(strings.TrimSpace(word)) {
	case "critical", "high":
		return alerts.SeverityCritical
	}
	return alerts.SeverityWarning
}
