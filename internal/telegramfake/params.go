package telegramfake

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
)

// maxBodyBytes caps a request body; Bot API text requests are far smaller.
const maxBodyBytes = 16 << 20

// readParams collects a method's parameters the way the Bot API accepts
// them: from the query string and from a body that is form-encoded, JSON or
// multipart. A body value overrides a query value of the same name. Bodies
// of any other type are ignored, and so are uploaded files.
func readParams(w http.ResponseWriter, r *http.Request) (map[string]string, error) {
	p, _, err := readRequest(w, r, maxBodyBytes, false)
	return p, err
}

// readRequest is readParams for a body of at most limit bytes that, with
// withFiles, also reads the files of a multipart body (see upload).
func readRequest(w http.ResponseWriter, r *http.Request, limit int64, withFiles bool) (map[string]string, map[string]upload, error) {
	var files map[string]upload
	if withFiles {
		files = make(map[string]upload)
	}
	p := make(map[string]string)
	for k, v := range r.URL.Query() {
		if len(v) > 0 {
			p[k] = v[0]
		}
	}
	ct := r.Header.Get("Content-Type")
	if ct == "" || r.Body == nil || r.Body == http.NoBody {
		return p, files, nil
	}
	media, mediaParams, err := mime.ParseMediaType(ct)
	if err != nil {
		return p, files, nil
	}
	body := http.MaxBytesReader(w, r.Body, limit)
	switch media {
	case "application/x-www-form-urlencoded":
		err = readFormParams(body, p)
	case "application/json":
		err = readJSONParams(body, p)
	case "multipart/form-data":
		err = readMultipartParams(body, mediaParams["boundary"], p, files)
	}
	return p, files, err
}

func readFormParams(body io.Reader, p map[string]string) error {
	raw, err := io.ReadAll(body)
	if err != nil {
		return fmt.Errorf("reading form body: %w", err)
	}
	vals, err := url.ParseQuery(string(raw))
	if err != nil {
		return fmt.Errorf("form body: %w", err)
	}
	for k, v := range vals {
		if len(v) > 0 {
			p[k] = v[0]
		}
	}
	return nil
}

func readJSONParams(body io.Reader, p map[string]string) error {
	var obj map[string]json.RawMessage
	if err := json.NewDecoder(body).Decode(&obj); err != nil {
		if errors.Is(err, io.EOF) {
			return nil
		}
		return fmt.Errorf("JSON body must be one object: %w", err)
	}
	for k, raw := range obj {
		if v, ok := jsonParam(raw); ok {
			p[k] = v
		}
	}
	return nil
}

// jsonParam renders one JSON member as the string a form would carry:
// strings unquoted, numbers and booleans as written, objects and arrays as
// their JSON text; null means absent.
func jsonParam(raw json.RawMessage) (string, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", false
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", false
		}
		return s, true
	}
	return string(raw), true
}

// readMultipartParams reads the fields of a multipart body into p and, when
// files is not nil, its files into files; otherwise files are skipped.
func readMultipartParams(body io.Reader, boundary string, p map[string]string, files map[string]upload) error {
	if boundary == "" {
		return errors.New("multipart body without a boundary in Content-Type")
	}
	mr := multipart.NewReader(body, boundary)
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("multipart body: %w", err)
		}
		name := part.FormName()
		if name != "" && part.FileName() != "" && files != nil {
			up, err := readUpload(part)
			_ = part.Close()
			if err != nil {
				return fmt.Errorf("multipart file %q: %w", name, err)
			}
			files[name] = up
			continue
		}
		if name == "" || part.FileName() != "" {
			_ = part.Close()
			continue
		}
		v, err := io.ReadAll(part)
		_ = part.Close()
		if err != nil {
			return fmt.Errorf("multipart field %q: %w", name, err)
		}
		p[name] = string(v)
	}
}
