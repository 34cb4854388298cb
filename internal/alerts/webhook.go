package alerts

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"text/template"

	"github.com/herald-dev/herald/internal/jobs"
	"github.com/herald-dev/herald/internal/markup"
)

// GenericWebhook turns the JSON body of a generic webhook into an alert,
// following a mapping of the routing file's webhooks: section. Each alert
// field is a Go template executed on the decoded body; the results are
// plain text (routes escape them when they render the message).
type GenericWebhook struct {
	name   string
	line   int
	fields []webhookField
}

// webhookField is one alert field's template; for labels, name is
// "labels.<label>".
type webhookField struct {
	name string
	tmpl *template.Template
}

// Name is the mapping's name (the last segment of its URL).
func (g *GenericWebhook) Name() string { return g.name }

// Alerts renders the alert a webhook body describes. body is the request
// body decoded by encoding/json into an any (a map[string]any for a JSON
// object). A template that fails on this body (a key it needs is missing,
// say) is the sender's mistake: the error is a *jobs.ValidationError
// naming the alert field ("title", "labels.env") and the reason. The alert
// is not normalised or validated yet: Dispatch does that.
//
// Whole numbers in the body print as such ({{ .id }} prints 12345678, not
// 1.2345678e+07). Empty results leave a field unset; a label whose value
// renders empty is left out.
func (g *GenericWebhook) Alerts(body any) ([]Alert, error) {
	data := wholeNumbers(body)
	a := Alert{Source: g.name}
	var verr jobs.ValidationError
	for _, f := range g.fields {
		var buf cappedBuffer
		if err := f.tmpl.Execute(&buf, data); err != nil {
			verr.Fields = append(verr.Fields, jobs.FieldError{Field: f.name, Message: webhookTemplateError(err)})
			continue
		}
		v := strings.TrimSpace(buf.String())
		switch f.name {
		case "title":
			a.Title = v
		case "body":
			a.Body = v
		case "url":
			a.URL = v
		case "severity":
			a.Severity = Severity(v)
		case "status":
			// firing or resolved; Dispatch refuses anything else, naming
			// the field.
			a.Status = Status(strings.ToLower(v))
		case "source":
			if v != "" {
				a.Source = v
			}
		case "fingerprint":
			a.Fingerprint = v
		case "key":
			a.Key = v
		case "image_url":
			a.ImageURL = v
		default:
			if v == "" {
				continue
			}
			if a.Labels == nil {
				a.Labels = map[string]string{}
			}
			a.Labels[strings.TrimPrefix(f.name, "labels.")] = v
		}
	}
	if len(verr.Fields) > 0 {
		return nil, &verr
	}
	return []Alert{a}, nil
}

// webhookTemplateError keeps the part of a template execution error that
// tells the sender what is wrong with the body.
func webhookTemplateError(err error) string {
	msg := err.Error()
	if i := strings.LastIndex(msg, ": "); i >= 0 && strings.HasPrefix(msg, "template: ") {
		// "template: title:1:3: executing "title" at <.monitor.name>: map has no entry for key "monitor""
		if j := strings.Index(msg, " at <"); j >= 0 {
			if k := strings.Index(msg[j:], ">: "); k >= 0 {
				return "cannot render " + msg[j+5:j+k] + " from the body: " + msg[j+k+3:]
			}
		}
		return msg[i+2:]
	}
	return msg
}

// wholeNumbers returns a copy of v (a value decoded by encoding/json) in
// which float64 values that are whole numbers (within ±2^53) are int64, so
// templates print them without an exponent, and JSON nulls are empty
// strings, so they print as nothing rather than "<no value>".
func wholeNumbers(v any) any {
	switch x := v.(type) {
	case nil:
		return ""
	case float64:
		if x == math.Trunc(x) && math.Abs(x) <= 1<<53 {
			return int64(x)
		}
		return x
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = wholeNumbers(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = wholeNumbers(e)
		}
		return out
	}
	return v
}

// webhookFuncs are the helpers of webhook templates. They work on plain
// text: the results become alert fields, not markup.
var webhookFuncs = template.FuncMap{
	"get":      getPath,
	"json":     toJSON,
	"join":     joinAny,
	"upper":    func(v any) string { return strings.ToUpper(textOf(v)) },
	"lower":    func(v any) string { return strings.ToLower(textOf(v)) },
	"truncate": func(n int, v any) string { return markup.TruncateRunes(textOf(v), n) },
	"default":  func(def, v any) any { return defaultValue(def, v) },
}

// textOf prints a value the way a template would, with nil as "".
func textOf(v any) string {
	if v == nil {
		return ""
	}
	if s, ok := v.(string); ok {
		return s
	}
	return fmt.Sprint(v)
}

// getPath walks a dotted path ("monitor.name", "items.0.id") through maps
// and lists and returns what it finds, or "" when any step is missing:
// {{ get . "monitor.url" }} for optional fields.
func getPath(root any, path string) any {
	cur := root
	for _, step := range strings.Split(path, ".") {
		switch x := cur.(type) {
		case map[string]any:
			v, ok := x[step]
			if !ok {
				return ""
			}
			cur = v
		case []any:
			var i int
			i, err := strconv.Atoi(step)
			if err != nil || i < 0 || i >= len(x) {
				return ""
			}
			cur = x[i]
		default:
			return ""
		}
	}
	return cur
}

// toJSON prints v as compact JSON.
func toJSON(v any) (string, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return strings.TrimSuffix(buf.String(), "\n"), nil
}

// joinAny joins the elements of a list with sep: {{ join ", " .tags }}.
func joinAny(sep string, list any) (string, error) {
	if list == nil {
		return "", nil
	}
	v := reflect.ValueOf(list)
	if v.Kind() != reflect.Slice && v.Kind() != reflect.Array {
		return "", fmt.Errorf("join: want a list, got %T", list)
	}
	parts := make([]string, v.Len())
	for i := range parts {
		parts[i] = textOf(v.Index(i).Interface())
	}
	return strings.Join(parts, sep), nil
}

// defaultValue returns v unless it is nil or empty text: {{ get . "level" | default "warning" }}.
func defaultValue(def, v any) any {
	if v == nil {
		return def
	}
	if s, ok := v.(string); ok && s == "" {
		return def
	}
	return v
}
