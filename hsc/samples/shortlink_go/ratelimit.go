package main

import (
	"context"
	"math"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// idleBucketTTL is how long a client's bucket may sit unused before the
// sweeper discards it to free memory.
const idleBucketTTL = 10 * time.Minute

// TokenBucket is a classic token bucket: it refills at a steady rate up to
// a maximum capacity, and each request spends one token.
type TokenBucket struct {
	mu       sync.Mutex
	rate     float64 // tokens added per second
	capacity float64
	tokens   float64
	last     time.Time
}

// NewTokenBucket creates a bucket that starts full.
func NewTokenBucket(ratePerSecond float64, capacity int) *TokenBucket {
	return &TokenBucket{
		rate:     ratePerSecond,
		capacity: float64(capacity),
		tokens:   float64(capacity),
		last:     time.Now(),
	}
}

// refill adds the tokens earned since the last call, capped at capacity.
// The caller must hold the mutex.
func (b *TokenBucket) refill(now time.Time) {
	elapsed := now.Sub(b.last).Seconds()
	if elapsed <= 0 {
		return
	}
	b.tokens = math.Min(b.capacity, b.tokens+elapsed*b.rate)
	b.last = now
}

// AllowAt reports whether a request at the given time may proceed, and if
// so consumes a token. Taking the time as a parameter keeps it testable.
func (b *TokenBucket) AllowAt(now time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refill(now)
	if b.tokens >= 1 {
		b.tokens--
		return true
	}
	return false
}

// RetryAfter estimates how long a rejected client should wait before the
// next token becomes available.
func (b *TokenBucket) RetryAfter(now time.Time) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refill(now)
	if b.tokens >= 1 || b.rate <= 0 {
		return 0
	}
	missing := 1 - b.tokens
	return time.Duration(missing / b.rate * float64(time.Second))
}

// LimiterPool hands out one token bucket per client key, typically the
// client IP address.
type LimiterPool struct {
	mu       sync.Mutex
	buckets  map[string]*TokenBucket
	rate     float64
	capacity int
}

// NewLimiterPool creates a pool whose buckets share the same rate and burst.
func NewLimiterPool(ratePerSecond float64, burst int) *LimiterPool {
	return &LimiterPool{
		buckets:  make(map[string]*TokenBucket),
		rate:     ratePerSecond,
		capacity: burst,
	}
}

// bucketFor returns the bucket for a key, creating it on first use.
func (p *LimiterPool) bucketFor(key string) *TokenBucket {
	p.mu.Lock()
	defer p.mu.Unlock()
	b, ok := p.buckets[key]
	if !ok {
		b = NewTokenBucket(p.rate, p.capacity)
		p.buckets[key] = b
	}
	return b
}

// Allow checks and consumes a token for the key. When the request is
// refused it also returns how long the client should wait.
func (p *LimiterPool) Allow(key string) (bool, time.Duration) {
	now := time.Now()
	b := p.bucketFor(key)
	if b.AllowAt(now) {
		return true, 0
	}
	return false, b.RetryAfter(now)
}

// Sweep removes buckets that have been idle longer than the TTL. An idle
// bucket is full again anyway, so dropping it loses no information.
func (p *LimiterPool) Sweep(now time.Time) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	removed := 0
	for key, b := range p.buckets {
		b.mu.Lock()
		idle := now.Sub(b.last)
		b.mu.Unlock()
		if idle > idleBucketTTL {
			delete(p.buckets, key)
			removed++
		}
	}
	return removed
}

// SweepEvery runs Sweep on a ticker until the context is cancelled.
func (p *LimiterPool) SweepEvery(ctx context.Context, interval time.Duration) {
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-ticker.C:
			p.Sweep(now)
		}
	}
}

// ClientKey derives the rate limit key for a request. It trusts the first
// address in X-Forwarded-For because the service is deployed behind a
// reverse proxy, and otherwise uses the remote address without its port.
func ClientKey(r *http.Request) string {
	if fwd := r.Header.Get("X-Forwarded-For"); fwd != "" {
		first := strings.TrimSpace(strings.Split(fwd, ",")[0])
		if first != "" {
			return first
		}
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
