package docker

import "go.uber.org/zap"

// Option configures New.
type Option func(*options)

type options struct {
	log  *zap.Logger
	host string
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
