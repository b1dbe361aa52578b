package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// maxBodyBytes limits JSON request bodies; a link request is tiny.
const maxBodyBytes = 8 << 10

// maxStatsDays bounds the window the statistics endpoint will return.
const maxStatsDays = 90

// Server holds the dependencies shared by all HTTP handlers.
type Server struct {
	store   *MemoryStore
	stats   *ClickStats
	limiter *LimiterPool
	codes   *CodeGenerator
	baseURL string
	logger  *log.Logger
}

// createRequest is the JSON body accepted when shortening a URL.
type createRequest struct {
	URL        string `json:"url"`
	CustomCode string `json:"custom_code,omitempty"`
	ExpiresIn  string `json:"expires_in,omitempty"`
}

// linkResponse is what the API returns for a single link.
type linkResponse struct {
	Code      string     `json:"code"`
	ShortURL  string     `json:"short_url"`
	Target    string     `json:"target"`
	CreatedAt time.Time  `json:"created_at"`
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
}

// apiError is the JSON shape of every error response.
type apiError struct {
	Error string `json:"error"`
	Code  int    `json:"status"`
}

// writeJSON encodes a value as the JSON response body with the given status.
func writeJSON(w http.ResponseWriter, status int, v interface{}) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

// writeError sends a JSON error body with a message and status code.
func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, apiError{Error: msg, Code: status})
}

// decodeJSON reads a size-limited JSON body into dst, rejecting unknown
// fields and trailing data so client typos surface as errors.
func decodeJSON(w http.ResponseWriter, r *http.Request, dst interface{}) error {
	body := http.MaxBytesReader(w, r.Body, maxBodyBytes)
	dec := json.NewDecoder(body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return fmt.Errorf("invalid JSON body: %w", err)
	}
	if err := dec.Decode(&struct{}{}); err != io.EOF {
		return errors.New("request body must contain a single JSON object")
	}
	return nil
}

// parseExpiry turns an "expires_in" value such as "24h" or "7d" into an
// absolute time. Go durations do not support days, so a trailing "d" is
// handled here. An empty value means the link never expires.
func parseExpiry(value string, now time.Time) (*time.Time, error) {
	if value == "" {
		return nil, nil
	}
	var d time.Duration
	if strings.HasSuffix(value, "d") {
		days, err := strconv.Atoi(strings.TrimSuffix(value, "d"))
		if err != nil {
			return nil, fmt.Errorf("invalid expires_in %q", value)
		}
		d = time.Duration(days) * 24 * time.Hour
	} else {
		parsed, err := time.ParseDuration(value)
		if err != nil {
			return nil, fmt.Errorf("invalid expires_in %q", value)
		}
		d = parsed
	}
	if d <= 0 || d > 365*24*time.Hour {
		return nil, errors.New("expires_in must be between 1 minute and 365 days")
	}
	t := now.Add(d)
	return &t, nil
}

// toResponse converts a stored link into its API representation.
func (s *Server) toResponse(l *Link) linkResponse {
	return linkResponse{
		Code:      l.Code,
		ShortURL:  l.ShortURL(s.baseURL),
		Target:    l.Target,
		CreatedAt: l.CreatedAt,
		ExpiresAt: l.ExpiresAt,
	}
}

// owner identifies the caller from the API key header. Real deployments
// would verify the key; here it simply scopes links to a caller.
func owner(r *http.Request) string {
	return strings.TrimSpace(r.Header.Get("X-API-Key"))
}

// ServeHTTP is the router for the whole service. It dispatches on path and
// method: the health check, the JSON API for creating, listing, inspecting,
// disabling and deleting links, the statistics endpoints, and finally the
// public redirect for any other single-segment path. Creation requests are
// rate limited per client and redirects record a click.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := strings.Trim(r.URL.Path, "/")
	segments := strings.Split(path, "/")

	switch {
	case path == "health":
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			writeError(w, http.StatusMethodNotAllowed, "use GET")
			return
		}
		writeJSON(w, http.StatusOK, map[string]interface{}{"status": "ok", "links": s.store.Len()})

	case path == "api/links":
		switch r.Method {
		case http.MethodPost:
			allowed, wait := s.limiter.Allow(ClientKey(r))
			if !allowed {
				w.Header().Set("Retry-After", strconv.Itoa(int(wait.Seconds())+1))
				writeError(w, http.StatusTooManyRequests, "rate limit exceeded, slow down")
				return
			}
			s.handleCreate(w, r)
		case http.MethodGet:
			who := owner(r)
			if who == "" {
				writeError(w, http.StatusUnauthorized, "X-API-Key header required to list links")
				return
			}
			links := s.store.ListByOwner(who)
			out := make([]linkResponse, 0, len(links))
			for i := range links {
				out = append(out, s.toResponse(&links[i]))
			}
			writeJSON(w, http.StatusOK, out)
		default:
			w.Header().Set("Allow", "GET, POST")
			writeError(w, http.StatusMethodNotAllowed, "use GET or POST")
		}

	case len(segments) == 3 && segments[0] == "api" && segments[1] == "links":
		code := segments[2]
		switch r.Method {
		case http.MethodGet:
			link, err := s.store.Resolve(code)
			if err != nil {
				writeError(w, http.StatusNotFound, err.Error())
				return
			}
			writeJSON(w, http.StatusOK, s.toResponse(&link))
		case http.MethodDelete:
			if err := s.store.Delete(code, owner(r)); err != nil {
				writeError(w, http.StatusNotFound, err.Error())
				return
			}
			s.stats.Forget(code)
			w.WriteHeader(http.StatusNoContent)
		case http.MethodPatch:
			var body struct {
				Disabled *bool `json:"disabled"`
			}
			if err := decodeJSON(w, r, &body); err != nil || body.Disabled == nil {
				writeError(w, http.StatusBadRequest, "body must be {\"disabled\": true|false}")
				return
			}
			if err := s.store.SetDisabled(code, *body.Disabled); err != nil {
				writeError(w, http.StatusNotFound, err.Error())
				return
			}
			w.WriteHeader(http.StatusNoContent)
		default:
			w.Header().Set("Allow", "GET, DELETE, PATCH")
			writeError(w, http.StatusMethodNotAllowed, "unsupported method")
		}

	case len(segments) == 3 && segments[0] == "api" && segments[1] == "stats":
		if r.Method != http.MethodGet {
			writeError(w, http.StatusMethodNotAllowed, "use GET")
			return
		}
		s.handleStats(w, r, segments[2])

	case path == "api/top":
		day := time.Now()
		if q := r.URL.Query().Get("day"); q != "" {
			parsed, err := time.Parse(dayLayout, q)
			if err != nil {
				writeError(w, http.StatusBadRequest, "day must be YYYY-MM-DD")
				return
			}
			day = parsed
		}
		writeJSON(w, http.StatusOK, s.stats.TopLinks(day, 10))

	case strings.HasPrefix(path, "api/"):
		writeError(w, http.StatusNotFound, "unknown API endpoint")

	case path == "":
		writeJSON(w, http.StatusOK, map[string]string{"service": "shortlink", "docs": "POST /api/links"})

	case len(segments) == 1:
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			writeError(w, http.StatusMethodNotAllowed, "use GET")
			return
		}
		s.handleRedirect(w, r, segments[0])

	default:
		http.NotFound(w, r)
	}
}

// handleCreate shortens a URL. It validates and normalises the target,
// accepts an optional custom code and expiry, and otherwise generates a
// random code that is not yet in use.
func (s *Server) handleCreate(w http.ResponseWriter, r *http.Request) {
	var req createRequest
	if err := decodeJSON(w, r, &req); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	target, err := NormalizeTarget(req.URL)
	if err != nil {
		writeError(w, http.StatusUnprocessableEntity, err.Error())
		return
	}
	expires, err := parseExpiry(req.ExpiresIn, time.Now())
	if err != nil {
		writeError(w, http.StatusUnprocessableEntity, err.Error())
		return
	}
	code := req.CustomCode
	if code != "" {
		if err := ValidateCustomCode(code); err != nil {
			writeError(w, http.StatusUnprocessableEntity, err.Error())
			return
		}
	} else if code, err = s.codes.GenerateUnique(s.store.Exists); err != nil {
		writeError(w, http.StatusServiceUnavailable, err.Error())
		return
	}
	link, err := s.store.Create(Link{Code: code, Target: target, Owner: owner(r), ExpiresAt: expires})
	if errors.Is(err, ErrCodeTaken) {
		writeError(w, http.StatusConflict, "that custom code is already taken")
		return
	} else if err != nil {
		writeError(w, http.StatusInternalServerError, "could not store link")
		return
	}
	w.Header().Set("Location", link.ShortURL(s.baseURL))
	writeJSON(w, http.StatusCreated, s.toResponse(link))
}

// handleRedirect sends the visitor to the link's target with a 302 and
// records the click. Expired links answer 410 Gone so crawlers drop them.
func (s *Server) handleRedirect(w http.ResponseWriter, r *http.Request, code string) {
	link, err := s.store.Resolve(code)
	switch {
	case errors.Is(err, ErrExpired):
		http.Error(w, "this link has expired", http.StatusGone)
		return
	case err != nil:
		http.NotFound(w, r)
		return
	}
	s.stats.Record(code, time.Now(), r.Referer())
	w.Header().Set("Cache-Control", "private, max-age=0")
	http.Redirect(w, r, link.Target, http.StatusFound)
}

// handleStats returns click totals, a daily series and referrer counts for
// a link. The optional "days" query parameter selects the window size.
func (s *Server) handleStats(w http.ResponseWriter, r *http.Request, code string) {
	if !s.store.Exists(code) {
		writeError(w, http.StatusNotFound, ErrNotFound.Error())
		return
	}
	days := 30
	if q := r.URL.Query().Get("days"); q != "" {
		n, err := strconv.Atoi(q)
		if err != nil || n < 1 || n > maxStatsDays {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("days must be between 1 and %d", maxStatsDays))
			return
		}
		days = n
	}
	writeJSON(w, http.StatusOK, s.stats.Summary(code, days, time.Now()))
}
