package botapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
)

// params are a request's parameters as Telegram reads them: every value as
// text (a JSON string unquoted, any other JSON value as written, so that
// "chat_id": 42 and "chat_id": "42" are alike), and the files a multipart
// body uploaded, by part name.
type params struct {
	vals  map[string]string
	files map[string]upload
}

// upload is one uploaded file.
type upload struct {
	Name string
	Data []byte
}

// get returns a parameter's value, spaces trimmed.
func (p params) get(name string) string { return strings.TrimSpace(p.vals[name]) }

// readParams reads r's parameters: the query string, then the body by its
// Content-Type, a body's value winning over the query's. A JSON, form or
// query body is bounded by maxBody, a multipart body by maxUpload.
func readParams(w http.ResponseWriter, r *http.Request, maxBody int64) (params, *refusal) {
	p := params{vals: map[string]string{}, files: map[string]upload{}}
	for k, v := range r.URL.Query() {
		p.vals[k] = v[0]
	}
	if r.Method == http.MethodGet || r.Method == http.MethodHead || r.ContentLength == 0 {
		return p, nil
	}
	mt, mp, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	var err error
	switch mt {
	case "multipart/form-data":
		err = readMultipart(http.MaxBytesReader(w, r.Body, maxUpload), mp["boundary"], maxBody, p)
	case "application/x-www-form-urlencoded":
		err = readForm(http.MaxBytesReader(w, r.Body, maxBody), p)
	default:
		// Telegram reads a body of any other type as JSON.
		err = readJSON(http.MaxBytesReader(w, r.Body, maxBody), p)
	}
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		w.Header().Set("Connection", "close")
		return p, &refusal{Code: http.StatusRequestEntityTooLarge, Description: "Request Entity Too Large"}
	case err != nil:
		return p, badRequest(err.Error())
	}
	return p, nil
}

// readJSON reads a JSON object's members into p. An empty body is no
// parameters.
func readJSON(body io.Reader, p params) error {
	raw, err := io.ReadAll(body)
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return err
		}
		return errors.New("can't parse JSON object")
	}
	for k, v := range obj {
		var s string
		switch {
		case string(v) == "null":
			continue
		case json.Unmarshal(v, &s) == nil:
			p.vals[k] = s
		default:
			p.vals[k] = string(v)
		}
	}
	return nil
}

// readForm reads an application/x-www-form-urlencoded body into p.
func readForm(body io.Reader, p params) error {
	raw, err := io.ReadAll(body)
	if err != nil {
		return err
	}
	vals, err := url.ParseQuery(string(raw))
	if err != nil {
		return errors.New("can't parse form data")
	}
	for k, v := range vals {
		p.vals[k] = v[0]
	}
	return nil
}

// readMultipart reads a multipart/form-data body into p: parts with a file
// name are uploads, the others values, whose total is bounded by maxVals.
func readMultipart(body io.Reader, boundary string, maxVals int64, p params) error {
	if boundary == "" {
		return errors.New("can't parse multipart form data: no boundary")
	}
	mr := multipart.NewReader(body, boundary)
	left := maxVals
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return multipartErr(err)
		}
		name := part.FormName()
		data, err := io.ReadAll(part)
		if err != nil {
			return multipartErr(err)
		}
		if part.FileName() != "" {
			p.files[name] = upload{Name: part.FileName(), Data: data}
			continue
		}
		if left -= int64(len(data)); left < 0 {
			return &http.MaxBytesError{Limit: maxVals}
		}
		p.vals[name] = string(data)
	}
}

// multipartErr keeps a body's size error as it is (a 413) and words any
// other as Telegram's 400.
func multipartErr(err error) error {
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return err
	}
	return errors.New("can't parse multipart form data")
}
