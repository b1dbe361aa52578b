// Command shortlink runs a small URL shortening service with per-client
// rate limiting and click statistics, keeping everything in memory.
package main

import (
	"context"
	"errors"
	"flag"
	"log"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// Config holds the settings that can be changed from the command line.
type Config struct {
	Addr         string
	BaseURL      string
	CodeLength   int
	RatePerMin   float64
	Burst        int
	ShutdownWait time.Duration
}

const (
	defaultAddr       = ":8080"
	defaultBaseURL    = "http://localhost:8080"
	defaultCodeLength = 7
	defaultRatePerMin = 30
	defaultBurst      = 10
)

// parseConfig reads flags into a Config, falling back to environment
// variables for the listen address and public base URL so the service can
// be configured the same way in containers.
func parseConfig(args []string) (Config, error) {
	fs := flag.NewFlagSet("shortlink", flag.ContinueOnError)
	cfg := Config{}
	fs.StringVar(&cfg.Addr, "addr", envOr("SHORTLINK_ADDR", defaultAddr), "listen address")
	fs.StringVar(&cfg.BaseURL, "base-url", envOr("SHORTLINK_BASE_URL", defaultBaseURL), "public URL prefix for short links")
	fs.IntVar(&cfg.CodeLength, "code-length", defaultCodeLength, "length of generated codes")
	fs.Float64Var(&cfg.RatePerMin, "rate", defaultRatePerMin, "link creations allowed per client per minute")
	fs.IntVar(&cfg.Burst, "burst", defaultBurst, "short bursts allowed above the steady rate")
	fs.DurationVar(&cfg.ShutdownWait, "shutdown-wait", 10*time.Second, "grace period for in-flight requests")
	if err := fs.Parse(args); err != nil {
		return Config{}, err
	}
	if cfg.CodeLength < 4 || cfg.CodeLength > 16 {
		return Config{}, errors.New("code-length must be between 4 and 16")
	}
	return cfg, nil
}

// envOr returns the value of an environment variable, or a fallback when it
// is unset or empty.
func envOr(key, fallback string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return fallback
}

// run wires the store, limiter, statistics and handlers together, starts
// the HTTP server and blocks until a termination signal arrives, then
// shuts down gracefully.
func run(cfg Config, logger *log.Logger) error {
	store := NewMemoryStore()
	stats := NewClickStats()
	limiter := NewLimiterPool(cfg.RatePerMin/60, cfg.Burst)
	gen := NewCodeGenerator(cfg.CodeLength)

	app := &Server{
		store:   store,
		stats:   stats,
		limiter: limiter,
		codes:   gen,
		baseURL: cfg.BaseURL,
		logger:  logger,
	}
	handler := Chain(app, Recover(logger), RequestID(), Logging(logger))

	srv := &http.Server{
		Addr:              cfg.Addr,
		Handler:           handler,
		ReadHeaderTimeout: 5 * time.Second,
		WriteTimeout:      15 * time.Second,
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go limiter.SweepEvery(ctx, time.Minute)
	go purgeLoop(ctx, store, stats, 5*time.Minute, logger)

	errCh := make(chan error, 1)
	go func() {
		logger.Printf("listening on %s", cfg.Addr)
		errCh <- srv.ListenAndServe()
	}()

	select {
	case err := <-errCh:
		if !errors.Is(err, http.ErrServerClosed) {
			return err
		}
	case <-ctx.Done():
		logger.Printf("shutting down")
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownWait)
	defer cancel()
	return srv.Shutdown(shutdownCtx)
}

// purgeLoop periodically deletes expired links and trims click history
// older than a year, logging how much was removed on each pass.
func purgeLoop(ctx context.Context, store *MemoryStore, stats *ClickStats, every time.Duration, logger *log.Logger) {
	ticker := time.NewTicker(every)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-ticker.C:
			links := store.PurgeExpired()
			days := stats.PruneBefore(now.AddDate(-1, 0, 0))
			if links > 0 || days > 0 {
				logger.Printf("purged %d expired links and %d old daily buckets", links, days)
			}
		}
	}
}

func main() {
	logger := log.New(os.Stderr, "shortlink ", log.LstdFlags|log.Lmicroseconds)
	cfg, err := parseConfig(os.Args[1:])
	if err != nil {
		logger.Fatal(err)
	}
	if err := run(cfg, logger); err != nil {
		logger.Fatal(err)
	}
}
