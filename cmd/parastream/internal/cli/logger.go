package cli

import (
	"io"
	"log/slog"
)

// Logger is a command's logger, writing text lines to w: warnings and
// errors, and progress (info) too when verbose (-v).
func Logger(w io.Writer, verbose bool) *slog.Logger {
	level := slog.LevelWarn
	if verbose {
		level = slog.LevelInfo
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level}))
}
