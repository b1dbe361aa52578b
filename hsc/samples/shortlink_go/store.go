package main

import (
	"errors"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"
)

var (
	// ErrNotFound means no link exists for the requested code.
	ErrNotFound = errors.New("link not found")
	// ErrCodeTaken means a custom code is already in use.
	ErrCodeTaken = errors.New("short code already taken")
	// ErrExpired means the link existed but its expiry time has passed.
	ErrExpired = errors.New("link expired")
)

// Link is one shortened URL together with its ownership and lifetime.
type Link struct {
	Code      string     `json:"code"`
	Target    string     `json:"target"`
	Owner     string     `json:"owner,omitempty"`
	CreatedAt time.Time  `json:"created_at"`
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
	Disabled  bool       `json:"disabled,omitempty"`
}

// IsExpired reports whether the link has an expiry time at or before now.
func (l Link) IsExpired(now time.Time) bool {
	return l.ExpiresAt != nil && !now.Before(*l.ExpiresAt)
}

// ShortURL joins the public base URL and the code into the link users share.
func (l Link) ShortURL(baseURL string) string {
	return strings.TrimRight(baseURL, "/") + "/" + l.Code
}

// NormalizeTarget validates a destination URL and returns it in canonical
// form: a scheme is required and must be http or https, the host is
// lower-cased, and a bare host gets a trailing slash.
func NormalizeTarget(raw string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return "", err
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", errors.New("target must be an http or https URL")
	}
	if u.Host == "" {
		return "", errors.New("target URL has no host")
	}
	u.Host = strings.ToLower(u.Host)
	if u.Path == "" {
		u.Path = "/"
	}
	return u.String(), nil
}

// MemoryStore keeps links in a map guarded by a read-write mutex. Reads
// (redirects) vastly outnumber writes, so they take only the read lock.
type MemoryStore struct {
	mu      sync.RWMutex
	links   map[string]*Link
	byOwner map[string][]string
	now     func() time.Time
}

// NewMemoryStore creates an empty store that uses the wall clock.
func NewMemoryStore() *MemoryStore {
	return &MemoryStore{
		links:   make(map[string]*Link),
		byOwner: make(map[string][]string),
		now:     time.Now,
	}
}

// Exists reports whether a code is in use, including expired links that
// have not been purged yet, so their codes are not handed out again.
func (s *MemoryStore) Exists(code string) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	_, ok := s.links[code]
	return ok
}

// Create stores a new link. It fails with ErrCodeTaken if the code is
// already present; the check and insert happen under one lock so two
// requests cannot claim the same code.
func (s *MemoryStore) Create(link Link) (*Link, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.links[link.Code]; ok {
		return nil, ErrCodeTaken
	}
	if link.CreatedAt.IsZero() {
		link.CreatedAt = s.now()
	}
	stored := link
	s.links[link.Code] = &stored
	if link.Owner != "" {
		s.byOwner[link.Owner] = append(s.byOwner[link.Owner], link.Code)
	}
	return &stored, nil
}

// Resolve looks up the destination for a code, refusing disabled or
// expired links. It returns a copy so callers cannot mutate stored state.
func (s *MemoryStore) Resolve(code string) (Link, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	link, ok := s.links[code]
	if !ok || link.Disabled {
		return Link{}, ErrNotFound
	}
	if link.IsExpired(s.now()) {
		return Link{}, ErrExpired
	}
	return *link, nil
}

// Delete removes a link if the requester owns it. An empty requester is
// treated as an administrator and may delete any link.
func (s *MemoryStore) Delete(code, requester string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	link, ok := s.links[code]
	if !ok {
		return ErrNotFound
	}
	if requester != "" && link.Owner != requester {
		return ErrNotFound
	}
	delete(s.links, code)
	codes := s.byOwner[link.Owner]
	for i, c := range codes {
		if c == code {
			s.byOwner[link.Owner] = append(codes[:i], codes[i+1:]...)
			break
		}
	}
	return nil
}

// SetDisabled turns a link off or back on without deleting it, for
// example while an abuse report is investigated.
func (s *MemoryStore) SetDisabled(code string, disabled bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	link, ok := s.links[code]
	if !ok {
		return ErrNotFound
	}
	link.Disabled = disabled
	return nil
}

// ListByOwner returns copies of an owner's links, newest first.
func (s *MemoryStore) ListByOwner(owner string) []Link {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]Link, 0, len(s.byOwner[owner]))
	for _, code := range s.byOwner[owner] {
		if link, ok := s.links[code]; ok {
			out = append(out, *link)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].CreatedAt.After(out[j].CreatedAt) })
	return out
}

// PurgeExpired deletes every link whose expiry has passed and returns how
// many were removed. Intended to run periodically from a background task.
func (s *MemoryStore) PurgeExpired() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	removed := 0
	for code, link := range s.links {
		if link.IsExpired(now) {
			delete(s.links, code)
			removed++
		}
	}
	return removed
}

// Len returns the number of stored links.
func (s *MemoryStore) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.links)
}
