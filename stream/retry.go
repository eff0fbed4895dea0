package stream

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/segmentio/kafka-go"
)

// DefaultRetry is how long a client that was connected tries a failed
// request again (ClientConfig.Retry), with backoff, before it gives up with
// ErrUnreachable: long enough for a broker to be restarted.
const DefaultRetry = 2 * time.Minute

// maxRetry bounds ClientConfig.Retry.
const maxRetry = 24 * time.Hour

// retriable reports whether trying err's request again may succeed: a
// network error (a broker restarting closes connections and refuses new
// ones) or an error the broker gives as temporary, or as Unknown (a broker
// still loading its data), but not a cancelled context, failed
// authentication or another error the broker gives.
func retriable(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrAuthentication) || errors.Is(err, ErrGroupHeld) || errors.Is(err, ErrUnreachable) {
		return false
	}
	var ke kafka.Error
	if errors.As(err, &ke) {
		return ke.Temporary() || ke == kafka.Unknown
	}
	return true
}

// unreachable wraps the error of a request still failing after tried,
// saying the broker is unreachable.
func (c ClientConfig) unreachable(what string, tried time.Duration, err error) error {
	return fmt.Errorf("%w (%v, tried again for %v; --broker-retry sets how long): %s: %w",
		ErrUnreachable, c.Brokers, tried.Round(time.Millisecond), what, err)
}

// retry calls f until it succeeds, fails with an error that is not
// retriable, ctx ends, or Retry has passed since its first failure; each
// failure is logged and waited on with backoff (fetchBackoffMin doubling up
// to fetchBackoffMax). An error after Retry wraps ErrUnreachable.
func (c ClientConfig) retry(ctx context.Context, logger *slog.Logger, what string, f func() error) error {
	var t0 time.Time
	backoff := fetchBackoffMin
	for {
		err := f()
		if err == nil || !retriable(err) || ctx.Err() != nil {
			return err
		}
		if t0.IsZero() {
			t0 = time.Now()
		}
		if tried := time.Since(t0); tried >= c.retryFor() {
			return c.unreachable(what, tried, err)
		}
		if logger != nil {
			logger.Warn("the broker failed a request, trying again", "request", what, "in", backoff, "err", err)
		}
		t := time.NewTimer(backoff)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return err
		}
		backoff = min(2*backoff, fetchBackoffMax)
	}
}
