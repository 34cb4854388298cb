package webhooks

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"

	"github.com/herald-dev/herald/internal/alerts"
	"github.com/herald-dev/herald/internal/httpapi"
	"github.com/herald-dev/herald/internal/jobs"
)

// genericMapper renders the JSON body of a generic webhook (decoded by
// encoding/json into an any) as alerts. *alerts.GenericWebhook, a mapping
// of the routing file's webhooks: section, implements it.
type genericMapper interface {
	Alerts(body any) ([]alerts.Alert, error)
}

// genericLookup returns the mapping of the generic webhook called name, and
// whether there is one.
type genericLookup func(name string) (genericMapper, bool)

var _ genericMapper = (*alerts.GenericWebhook)(nil)

// GenericFromRouter looks mappings up in the router's current routing
// table, so a reloaded routing file applies from the next request on.
func GenericFromRouter(r *alerts.Router) genericLookup {
	return func(name string) (genericMapper, bool) {
		g, ok := r.Table().GenericWebhook(name)
		if !ok || g == nil {
			return nil, false
		}
		return g, true
	}
}

// generic is the receiver of POST /v1/webhooks/generic/{name}: token
// authentication, then the named mapping of the routing file.
func (s *server) generic() receiver {
	return receiver{
		name:      "generic",
		authorize: s.requireToken("the sender"),
		decode: func(r *http.Request, body []byte) (decoded, *httpapi.Error) {
			name := r.PathValue("name")
			d := decoded{attrs: []any{"name", clip(name, 64)}}
			var m genericMapper
			ok := false
			if s.cfg.Generic != nil {
				m, ok = s.cfg.Generic(name)
			}
			if !ok || m == nil {
				return d, httpapi.Errorf(http.StatusNotFound, httpapi.CodeNotFound,
					"no generic webhook %q: define it in the webhooks: section of the routing file", clip(name, 64))
			}
			out, e := decodeGeneric(name, m, body)
			out.attrs = append(d.attrs, out.attrs...)
			return out, e
		},
	}
}

// decodeGeneric decodes a JSON body into an any and renders it with the
// mapping m of the webhook called name. Fingerprints and keys the mapping
// renders are prefixed with "generic/<name>/", so that two mappings keying
// their events alike never suppress or thread each other's messages. An
// image_url that is not an http(s) URL is dropped, as a bad url is. A mapping that cannot render the body (a key it needs is missing) is the
// sender's mistake: 400 naming the alert field. Severity words other tools
// use (page, error, high, …) are mapped as for Alertmanager labels.
func decodeGeneric(name string, m genericMapper, body []byte) (decoded, *httpapi.Error) {
	var d decoded
	v, e := decodeAny(body)
	if e != nil {
		return d, e
	}
	batch, err := m.Alerts(v)
	if err != nil {
		var (
			verr *jobs.ValidationError
			he   *httpapi.Error
		)
		switch {
		case errors.As(err, &he):
			return d, he
		case errors.As(err, &verr):
			return d, httpapi.Invalid("the webhook's mapping cannot render this body", verr.Fields...)
		default:
			return d, httpapi.Errorf(http.StatusBadRequest, httpapi.CodeInvalidField, "the webhook's mapping cannot render this body: %s", err.Error())
		}
	}
	for i := range batch {
		if sev := batch[i].Severity; sev != "" {
			batch[i].Severity = mapSeverity(string(sev), sev)
		}
		if fp := batch[i].Fingerprint; fp != "" {
			batch[i].Fingerprint = fingerprint("generic", name, fp)
		}
		if k := batch[i].Key; k != "" {
			batch[i].Key = fingerprint("generic", name, k)
		}
	}
	d.alerts = batch
	if len(batch) == 0 {
		d.ignored = "the mapping gave no alert for this body"
		return d, nil
	}
	return d, finish(d.alerts, "generic webhook")
}

// decodeAny decodes exactly one JSON value.
func decodeAny(body []byte) (any, *httpapi.Error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, httpapi.Errorf(http.StatusBadRequest, httpapi.CodeInvalidJSON, "body is empty; send a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, httpapi.Errorf(http.StatusBadRequest, httpapi.CodeInvalidJSON, "malformed JSON: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, httpapi.Errorf(http.StatusBadRequest, httpapi.CodeInvalidJSON, "body must hold exactly one JSON value")
	}
	return v, nil
}
