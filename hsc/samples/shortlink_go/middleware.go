package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log"
	"net/http"
	"runtime/debug"
	"time"
)

// Middleware wraps an http.Handler with extra behaviour.
type Middleware func(http.Handler) http.Handler

type ctxKey int

const requestIDKey ctxKey = iota

// requestIDHeader is the header used both to accept an upstream request ID
// and to echo the ID back to the client.
const requestIDHeader = "X-Request-ID"

// Chain applies middlewares so that the first one listed is the innermost:
// Chain(h, a, b) handles a request as b(a(h)).
func Chain(h http.Handler, middlewares ...Middleware) http.Handler {
	for _, m := range middlewares {
		h = m(h)
	}
	return h
}

// statusRecorder captures the status code and body size written by a
// handler so the logging middleware can report them.
type statusRecorder struct {
	http.ResponseWriter
	status int
	bytes  int
}

// WriteHeader remembers the status code before passing it on.
func (r *statusRecorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}

// Write counts bytes and records an implicit 200 status if the handler
// never called WriteHeader.
func (r *statusRecorder) Write(p []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	n, err := r.ResponseWriter.Write(p)
	r.bytes += n
	return n, err
}

// Logging writes one access log line per request with the method, path,
// status, response size, duration and request ID.
func Logging(logger *log.Logger) Middleware {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			start := time.Now()
			rec := &statusRecorder{ResponseWriter: w}
			next.ServeHTTP(rec, r)
			if rec.status == 0 {
				rec.status = http.StatusOK
			}
			logger.Printf("%s %s %d %dB %s id=%s",
				r.Method, r.URL.Path, rec.status, rec.bytes,
				time.Since(start).Round(time.Microsecond), RequestIDFrom(r.Context()))
		})
	}
}

// Recover turns a panic inside a handler into a 500 response and logs the
// stack trace, so one bad request cannot take the whole server down.
func Recover(logger *log.Logger) Middleware {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			defer func() {
				if err := recover(); err != nil {
					if err == http.ErrAbortHandler {
						panic(err)
					}
					logger.Printf("panic serving %s %s: %v\n%s", r.Method, r.URL.Path, err, debug.Stack())
					http.Error(w, "internal server error", http.StatusInternalServerError)
				}
			}()
			next.ServeHTTP(w, r)
		})
	}
}

// RequestID makes sure every request carries an ID: it keeps a valid ID
// supplied by a proxy or generates a new one, stores it in the request
// context and echoes it in the response headers.
func RequestID() Middleware {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			id := r.Header.Get(requestIDHeader)
			if id == "" || len(id) > 64 {
				id = newRequestID()
			}
			w.Header().Set(requestIDHeader, id)
			ctx := context.WithValue(r.Context(), requestIDKey, id)
			next.ServeHTTP(w, r.WithContext(ctx))
		})
	}
}

// newRequestID returns 16 random hex characters.
func newRequestID() string {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "unknown"
	}
	return hex.EncodeToString(b[:])
}

// RequestIDFrom extracts the request ID stored by the RequestID middleware,
// or "-" when there is none.
func RequestIDFrom(ctx context.Context) string {
	if id, ok := ctx.Value(requestIDKey).(string); ok {
		return id
	}
	return "-"
}
