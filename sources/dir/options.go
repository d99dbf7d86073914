package dir

import (
	"time"

	"github.com/actorlet/actorlet/internal/manifest"
	"github.com/actorlet/actorlet/sources"

	"go.uber.org/zap"
)

// Defaults for New's options.
const (
	// DefaultRescanPeriod is how often the whole directory is re-read as a
	// safety net behind the file-system watch.
	DefaultRescanPeriod = 20 * time.Second
	// DefaultDebounce is the window in which file-system events are read
	// together: the first event after a quiet window is read at once, the
	// ones after it within the window at its end, so that one editor save
	// (often several events) or a burst of new manifests gives at most two
	// scans.
	DefaultDebounce = 100 * time.Millisecond
)

// Option configures a Source.
type Option func(*Source)

// WithRescanPeriod sets how often the directory is re-read in full even
// without file-system events (default DefaultRescanPeriod, 20 s). It also
// bounds how long a missing directory goes unnoticed when it cannot be
// watched. A period ≤ 0 keeps the default.
func WithRescanPeriod(d time.Duration) Option {
	return func(s *Source) {
		if d > 0 {
			s.rescan = d
		}
	}
}

// WithDebounce sets the window in which file-system events are read
// together (default DefaultDebounce, 100 ms): the first event is read at
// once, the later ones in the window at its end. A negative value keeps
// the default; 0 reads every event at once.
func WithDebounce(d time.Duration) Option {
	return func(s *Source) {
		if d >= 0 {
			s.debounce = d
		}
	}
}

// WithLogger sets the logger (default: none). A nil logger keeps the default.
func WithLogger(l *zap.Logger) Option {
	return func(s *Source) {
		if l != nil {
			s.log = l
		}
	}
}

// WithValidation sets what the operator allows in manifests (privileged
// containers, hostPath volumes); default: neither.
func WithValidation(v sources.Validation) Option {
	return func(s *Source) { s.validate = manifest.ValidationOptions(v) }
}

// WithStrictManifests makes an unknown field in a manifest an error that
// refuses its document, as the API server's strict decoding
// (--strict-manifests). By default it is a warning naming the field, and
// the field is ignored, as the kubelet ignores it.
func WithStrictManifests(strict bool) Option {
	return func(s *Source) { s.strict = strict }
}
