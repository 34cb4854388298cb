package telegramfake

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"image"
	_ "image/gif" // decoders for the dimensions of uploaded photos
	_ "image/jpeg"
	_ "image/png"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/herald-dev/herald/internal/markup"
)

// Telegram's limits on photos, from the Bot API documentation of sendPhoto
// ("The photo must be at most 10 MB in size. The photo's width and height
// must not exceed 10000 in total. Width and height ratio must be at most
// 20.") and of sending files ("5 MB max size for photos" sent by URL;
// multipart uploads of up to 50 MB).
const (
	// maxCaptionLen is the longest caption, in UTF-16 code units after
	// entity parsing, as markup.MaxMessageLen is for text.
	maxCaptionLen = 1024
	// maxPhotoBytes is the largest photo upload.
	maxPhotoBytes = 10 << 20
	// maxPhotoURLBytes is the largest photo Telegram fetches from a URL.
	maxPhotoURLBytes = 5 << 20
	// maxUploadBytes is the largest multipart request the Bot API reads;
	// a larger one is answered 413 "Request Entity Too Large".
	maxUploadBytes = 50 << 20
	// maxPhotoSides and maxPhotoRatio bound a photo's dimensions.
	maxPhotoSides = 10000
	maxPhotoRatio = 20
	// uploadHead is how much of an upload is kept to tell its type and size.
	uploadHead = 64 << 10
)

// photo describes the photo of a message sent with sendPhoto.
type photo struct {
	// FileID is the file_id the fake gave the photo; the same bot can send
	// it again by passing it as photo. File ids belong to one bot.
	FileID       string `json:"file_id"`
	FileUniqueID string `json:"file_unique_id"`
	// Source is how the request gave the photo: "url", "upload" or
	// "file_id" (a photo sent before, whose other fields it repeats).
	Source string `json:"source"`
	// URL is the HTTP URL Telegram was asked to fetch.
	URL string `json:"url,omitempty"`
	// FileName, Size, SHA256 (hex) and ContentType (as sniffed) describe an
	// upload; Size is also set for a URL given a size by SetPhotoURL.
	FileName    string `json:"file_name,omitempty"`
	ContentType string `json:"content_type,omitempty"`
	Size        int64  `json:"size,omitempty"`
	SHA256      string `json:"sha256,omitempty"`
	// Width and Height are the photo's dimensions when known: decoded from
	// a PNG, JPEG or GIF upload, or given by SetPhotoURL.
	Width  int `json:"width,omitempty"`
	Height int `json:"height,omitempty"`
}

// photoSizeJSON is one PhotoSize of a Message's photo array.
type photoSizeJSON struct {
	FileID       string `json:"file_id"`
	FileUniqueID string `json:"file_unique_id"`
	Width        int    `json:"width"`
	Height       int    `json:"height"`
	FileSize     int64  `json:"file_size,omitempty"`
}

// sizes renders the photo as Telegram's array of sizes: here a single
// size, the photo itself (800×600 when its dimensions are unknown).
func (p *photo) sizes() []photoSizeJSON {
	w, h := p.Width, p.Height
	if w == 0 || h == 0 {
		w, h = 800, 600
	}
	return []photoSizeJSON{{FileID: p.FileID, FileUniqueID: p.FileUniqueID, Width: w, Height: h, FileSize: p.Size}}
}

// PhotoURL says what Telegram finds when it fetches a photo URL, which the
// fake never does: an unknown URL is a valid image of unknown size. The zero
// PhotoURL is that default.
type PhotoURL struct {
	// Unreachable answers 400 "failed to get HTTP URL content", as for a URL
	// that does not resolve, refuses the connection or answers an error.
	Unreachable bool `json:"unreachable,omitempty"`
	// WrongType answers 400 "wrong type of the web page content", as for a
	// URL serving HTML rather than an image.
	WrongType bool `json:"wrong_type,omitempty"`
	// Size is the size of the image in bytes; over maxPhotoURLBytes the URL
	// fails as Unreachable does.
	Size int64 `json:"size,omitempty"`
	// Width and Height are its dimensions; when both are set they are held
	// to the limits of an upload ("PHOTO_INVALID_DIMENSIONS").
	Width  int `json:"width,omitempty"`
	Height int `json:"height,omitempty"`
}

// SetPhotoURL sets what a sendPhoto with the HTTP URL rawURL finds, for
// every bot; the zero PhotoURL restores the default (a valid image).
func (s *Server) SetPhotoURL(rawURL string, p PhotoURL) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p == (PhotoURL{}) {
		delete(s.x.photoURLs, rawURL)
		return
	}
	s.x.photoURLs[rawURL] = p
}

// upload is a file of a multipart request: its name, size and digest, and
// its first bytes, enough to tell its type and dimensions.
type upload struct {
	name   string
	size   int64
	sha256 string
	head   []byte
}

// readUpload reads a file part without keeping more than its head.
func readUpload(r io.Reader) (upload, error) {
	h := sha256.New()
	var head bytes.Buffer
	n, err := io.Copy(io.MultiWriter(h, &limitedBuffer{buf: &head, max: uploadHead}), r)
	if err != nil {
		return upload{}, err
	}
	return upload{size: n, sha256: hex.EncodeToString(h.Sum(nil)), head: head.Bytes()}, nil
}

// limitedBuffer keeps the first max bytes written to it and discards the
// rest.
type limitedBuffer struct {
	buf *bytes.Buffer
	max int
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := l.max - l.buf.Len(); room > 0 {
		l.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

// errTooLarge is the answer of the proxy in front of the Bot API to a body
// over maxUploadBytes.
var errTooLarge = &apiError{code: http.StatusRequestEntityTooLarge, desc: "Request Entity Too Large"}

// photoRef is the photo parameter of a request before it is resolved: an
// upload, or a string that is an HTTP URL or a file_id.
type photoRef struct {
	upload *upload
	remote string
}

// sendPhoto is sendMessage for a photo: the same flood control, faults,
// chat behaviours, replies and inline keyboards, with a caption of at most
// maxCaptionLen characters instead of a text.
func (s *Server) sendPhoto(w http.ResponseWriter, r *http.Request, b *bot) {
	params, files, perr := readRequest(w, r, maxUploadBytes, true)
	if perr != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](perr); ok {
			s.fail(w, b, errTooLarge)
			return
		}
	}
	at := s.arrival(r)
	fault, done := s.admitSend(w, r, b, params, perr, at)
	if done {
		return
	}
	ref, req, e := parsePhotoRequest(params, files, s.cfg.CountMarkup)
	if e != nil {
		s.fail(w, b, e)
		return
	}
	req.at = at
	if e := parseFault(fault, req.mode); e != nil {
		s.fail(w, b, e)
		return
	}
	if req.photo, e = s.resolvePhoto(b, ref); e != nil {
		s.fail(w, b, e)
		return
	}
	msg, e := s.deliver(b, req)
	s.answerSend(w, r, b, fault, msg, e)
}

// parsePhotoRequest checks the parameters of sendPhoto in the order the Bot
// API does: the photo, the caption, then what sendMessage checks.
func parsePhotoRequest(p map[string]string, files map[string]upload, countMarkup bool) (photoRef, sendRequest, *apiError) {
	var ref photoRef
	name := "photo"
	if v := p["photo"]; v != "" {
		att, ok := strings.CutPrefix(v, "attach://")
		if !ok {
			ref.remote = v
		}
		name = att
	}
	if ref.remote == "" {
		up, ok := files[name]
		if !ok {
			return ref, sendRequest{}, badRequest("there is no photo in the request")
		}
		up.name = name
		ref.upload = &up
	}

	// The caption is checked like a text, against its own limit; an empty
	// caption is no caption.
	capt := p["caption"]
	mode, err := telegramParseMode(p["parse_mode"])
	if err != nil {
		return ref, sendRequest{}, badRequest("unsupported parse_mode")
	}
	if err := markup.Validate(capt, mode); err != nil {
		return ref, sendRequest{}, badRequest(err.Error())
	}
	n, err := markup.VisibleLen(capt, mode)
	if err != nil {
		return ref, sendRequest{}, badRequest(err.Error())
	}
	if countMarkup {
		n = markup.UTF16Len(capt)
	}
	if n > maxCaptionLen {
		return ref, sendRequest{}, badRequest("message caption is too long")
	}

	// The rest is sendMessage's, with a stand-in text so that its checks of
	// the text pass.
	q := make(map[string]string, len(p))
	for k, v := range p {
		q[k] = v
	}
	q["text"], q["parse_mode"] = "x", ""
	req, e := parseSendRequest(q, false)
	if e != nil {
		return ref, req, e
	}
	req.text, req.mode, req.linkPreviewDisabled = capt, mode, false
	if req.plain, err = markup.Plain(capt, mode); err != nil {
		return ref, req, badRequest(err.Error())
	}
	if n == 0 {
		req.text, req.mode, req.plain = "", markup.None, ""
	}
	return ref, req, nil
}

// resolvePhoto turns the photo of a request into the photo it sends, or
// the error Telegram answers: an unknown file_id or malformed URL, a URL
// set to fail, an upload that is no image, too big, or of dimensions
// Telegram refuses.
func (s *Server) resolvePhoto(b *bot, ref photoRef) (*photo, *apiError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if up := ref.upload; up != nil {
		return uploadedPhoto(up)
	}
	v := strings.TrimSpace(ref.remote)
	if u, err := url.Parse(v); err == nil && (strings.EqualFold(u.Scheme, "http") || strings.EqualFold(u.Scheme, "https")) {
		if u.Host == "" {
			return nil, badRequest("wrong file identifier/HTTP URL specified")
		}
		behave := s.x.photoURLs[v]
		switch {
		case behave.Unreachable || behave.Size > maxPhotoURLBytes:
			return nil, badRequest("failed to get HTTP URL content")
		case behave.WrongType:
			return nil, badRequest("wrong type of the web page content")
		case !validDimensions(behave.Width, behave.Height):
			return nil, badRequest("PHOTO_INVALID_DIMENSIONS")
		}
		return &photo{Source: "url", URL: v, Size: behave.Size, Width: behave.Width, Height: behave.Height}, nil
	}
	known, ok := b.x.files[v]
	if !ok {
		return nil, badRequest("wrong file identifier/HTTP URL specified")
	}
	p := *known
	p.Source = "file_id"
	return &p, nil
}

// uploadedPhoto checks an uploaded photo as Telegram does.
func uploadedPhoto(up *upload) (*photo, *apiError) {
	switch {
	case up.size == 0:
		return nil, badRequest("file must be non-empty")
	case up.size > maxPhotoBytes:
		return nil, badRequest("PHOTO_SAVE_FILE_INVALID")
	}
	ct := http.DetectContentType(up.head)
	if !strings.HasPrefix(ct, "image/") {
		return nil, badRequest("IMAGE_PROCESS_FAILED")
	}
	p := &photo{Source: "upload", FileName: up.name, ContentType: ct, Size: up.size, SHA256: up.sha256}
	if cfg, _, err := image.DecodeConfig(bytes.NewReader(up.head)); err == nil {
		p.Width, p.Height = cfg.Width, cfg.Height
	}
	if !validDimensions(p.Width, p.Height) {
		return nil, badRequest("PHOTO_INVALID_DIMENSIONS")
	}
	return p, nil
}

// validDimensions applies Telegram's limits to known dimensions.
func validDimensions(w, h int) bool {
	if w <= 0 || h <= 0 {
		return true // unknown
	}
	return w+h <= maxPhotoSides && max(w, h) <= maxPhotoRatio*min(w, h)
}

// keepPhotoLocked gives a photo being sent its file_id, unless it is sent
// again by one, and remembers it for b, so that b can send it again.
func (st *botState) keepPhotoLocked(b *bot, p *photo) *photo {
	if p.Source == "file_id" {
		return p
	}
	st.fileSeq++
	var buf [16]byte
	binary.BigEndian.PutUint64(buf[:8], uint64(b.user.ID))
	binary.BigEndian.PutUint64(buf[8:], uint64(st.fileSeq))
	sum := sha256.Sum256(buf[:])
	p.FileID = "AgACAgIAAxkBAA" + base64.RawURLEncoding.EncodeToString(sum[:24])
	p.FileUniqueID = "AQAD" + base64.RawURLEncoding.EncodeToString(sum[24:])
	kept := *p
	st.files[p.FileID] = &kept
	return p
}
