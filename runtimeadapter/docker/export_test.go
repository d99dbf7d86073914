package docker

import "io"

// InspectCalls returns how many ContainerInspect calls r has made.
func (r *Runtime) InspectCalls() int64 { return r.inspects.Load() }

// CacheLen returns the number of containers in r's List cache.
func (r *Runtime) CacheLen() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.cache)
}

// LogsDone returns a channel closed once the goroutine behind a reader
// returned by Logs has ended and closed Docker's response.
func LogsDone(rc io.ReadCloser) <-chan struct{} { return rc.(*logStream).done }

// LazyNegotiation makes New skip its negotiation, as when the daemon does
// not answer it: the first calls negotiate.
func LazyNegotiation() Option { return func(o *options) { o.lazy = true } }
