package docker

import (
	"time"

	"go.uber.org/zap"
)

// Option configures New.
type Option func(*options)

type options struct {
	log            *zap.Logger
	host           string
	inspectTimeout time.Duration
	lazy           bool // tests: do not negotiate in New
	local          map[string]LocalImage
	containerd     string // WithContainerd
}

// LocalImage returns the build context of an image that is built on the
// node rather than pulled (files as BuildImage takes them).
type LocalImage func() (files map[string][]byte, err error)

// WithLocalImage makes EnsureImage build ref from build's context when it
// is missing, instead of pulling it: an image no registry has (actorlet's
// pause image). It is built when first needed, not by New, so a daemon
// that does not answer yet delays nothing; one build of ref runs at a
// time, and a failed one is tried again by the next EnsureImage.
func WithLocalImage(ref string, build LocalImage) Option {
	return func(o *options) {
		if o.local == nil {
			o.local = map[string]LocalImage{}
		}
		o.local[ref] = build
	}
}

// WithLogger sets the logger for debug messages (cache misses, pulls,
// builds). The default discards everything. A nil logger is ignored.
func WithLogger(l *zap.Logger) Option {
	return func(o *options) {
		if l != nil {
			o.log = l
		}
	}
}

// WithHost overrides DOCKER_HOST, e.g. "unix:///var/run/docker.sock" or
// "tcp://127.0.0.1:2375". An empty host keeps the environment's.
func WithHost(host string) Option {
	return func(o *options) { o.host = host }
}

// DefaultInspectTimeout bounds each inspect List makes of a container whose
// state it has not seen (3 s: a healthy daemon answers in milliseconds,
// while one container's inspect can hang as long as the daemon holds that
// container's lock).
const DefaultInspectTimeout = 3 * time.Second

// WithInspectTimeout sets how long List waits for the inspect of one
// container (default DefaultInspectTimeout, 3 s). List never waits more
// than half of what is left of its ctx when its inspects begin, so a
// hung inspect leaves time for the List to answer; the container is then
// reported from the list alone (see List). d ≤ 0 keeps the default.
func WithInspectTimeout(d time.Duration) Option {
	return func(o *options) {
		if d > 0 {
			o.inspectTimeout = d
		}
	}
}
