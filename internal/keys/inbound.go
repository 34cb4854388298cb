package keys

// InboundAlert remembers how an alert fired through one of package
// inbound's formats (title, severity, labels, link), by the alert's key,
// so that a close carrying nothing but that key (Opsgenie's close by
// alias, a PagerDuty resolve without payload) is worded and routed as the
// alert it ends. Fleet-wide: any producer may receive the close.
func InboundAlert(alertKey string) string { return prefix + "inbound:alert:" + alertKey }
