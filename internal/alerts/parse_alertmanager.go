package alerts

import (
	"fmt"
	"net/url"
	"slices"
	"time"

	"github.com/herald-dev/herald/internal/buttons"
	"github.com/herald-dev/herald/internal/yamlstrict"
)

// alertmanagerAck is a route's alertmanager: setting, opt-in: an
// Acknowledge pressed on an alert that came from Alertmanager also creates
// a silence of the alert's labels in that Alertmanager (API v2), lasting
// silence.
//
//	alertmanager:
//	  url: http://alertmanager:9093   # the Alertmanager's URL, as the worker reaches it
//	  silence: 4h                     # default 4h
type alertmanagerAck struct {
	url     string
	silence time.Duration
}

// Bounds of alertmanager.silence.
const (
	defaultAMSilence = 4 * time.Hour
	maxAMSilence     = 30 * 24 * time.Hour
)

// alertmanagerSource is the source of the alerts Alertmanager's webhook
// receiver makes, the only ones an acknowledgement silences there.
const alertmanagerSource = "alertmanager"

var alertmanagerKeys = []string{"url", "silence"}

// alertmanager reads a route's alertmanager: setting. The route must show
// the ack button for it to act.
func (p *parser) alertmanager(f yamlstrict.Field, shown []string, who string) *alertmanagerAck {
	m := p.Mapping(f.Value, f.Path, alertmanagerKeys)
	if m == nil {
		return nil
	}
	am := &alertmanagerAck{silence: defaultAMSilence}
	if u, ok := m["url"]; !ok {
		p.Report(f.Value, yamlstrict.Join(f.Path, "url"), "is missing", "add url: with the Alertmanager's URL, such as http://alertmanager:9093")
	} else if s, ok := p.String(u.Value, u.Path); ok {
		if pu, err := url.Parse(s); err != nil || (pu.Scheme != "http" && pu.Scheme != "https") || pu.Host == "" {
			p.Report(u.Value, u.Path, fmt.Sprintf("%q is not an http(s) URL", s), "write the Alertmanager's URL, such as http://alertmanager:9093")
		}
		am.url = s
	}
	if d, ok := m["silence"]; ok {
		if v, ok := p.Duration(d.Value, d.Path); ok {
			if v <= 0 || v > maxAMSilence {
				p.Report(d.Value, d.Path, fmt.Sprintf("%s is not a silence's length", v), "use a duration from 1m to 720h")
			}
			am.silence = v
		}
	}
	if !slices.Contains(shown, buttons.Ack) {
		p.Report(f.Key, f.Path, who+" silences in Alertmanager on an Acknowledge but shows no ack button", "add ack to its buttons:, or remove alertmanager:")
	}
	return am
}
