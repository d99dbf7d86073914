// Package logging builds actorlet's zap logger and routes protoactor-go's
// slog output through it.
package logging

import (
	"fmt"
	"log/slog"

	"github.com/asynkron/protoactor-go/actor"
	"go.uber.org/zap"
	"go.uber.org/zap/exp/zapslog"
	"go.uber.org/zap/zapcore"
)

// New returns a logger writing to stderr in format "console" or "json" at
// level ("debug", "info", "warn", "error").
func New(format, level string) (*zap.Logger, error) {
	lvl, err := zapcore.ParseLevel(level)
	if err != nil {
		return nil, fmt.Errorf("log level %q: %w", level, err)
	}
	var cfg zap.Config
	switch format {
	case "json":
		cfg = zap.NewProductionConfig()
	case "console", "":
		cfg = zap.NewDevelopmentConfig()
		cfg.Development = false
		cfg.EncoderConfig.EncodeLevel = zapcore.CapitalLevelEncoder // no colour codes: logs often go to files
		cfg.DisableStacktrace = true
	default:
		return nil, fmt.Errorf("log format %q: want console or json", format)
	}
	cfg.Level = zap.NewAtomicLevelAt(lvl)
	cfg.DisableStacktrace = true // an operator's typo is not a crash
	cfg.Sampling = nil
	return cfg.Build()
}

// ActorSystemOption routes protoactor-go's own logs through z (named
// "protoactor"). Its info lines (every actor recovery, dead letters) are
// detail an operator does not need, so only warnings and errors pass;
// actorlet logs the events that matter itself.
func ActorSystemOption(z *zap.Logger) actor.ConfigOption {
	return actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger {
		return slog.New(zapslog.NewHandler(z.Named("protoactor").WithOptions(zap.IncreaseLevel(zapcore.WarnLevel)).Core()))
	})
}
