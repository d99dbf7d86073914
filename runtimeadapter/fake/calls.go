package fake

import "time"

// Call is one logged call of a Runtime method.
type Call struct {
	// Method is a Method* constant.
	Method string
	// Arg identifies what the call was about: the ID or name passed to
	// Inspect, Start, Stop and Remove; the spec's name for Create; the image
	// for EnsureImage; the node for Events; "node=N pod=P all=B" for List.
	Arg string
	// Grace is Stop's grace period; zero for other methods.
	Grace time.Duration
	// Time is when the call began (time.Now).
	Time time.Time
	// Err is what the call returned; nil while it is still running or if it
	// succeeded.
	Err error
}

// finish records a call's outcome.
func (r *Runtime) finish(c *Call, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c.Err = err
}

// Calls returns a copy of the call log, in the order calls began.
func (r *Runtime) Calls() []Call {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]Call, len(r.calls))
	for i, c := range r.calls {
		out[i] = *c
	}
	return out
}

// CallCount returns how many calls of method (a Method* constant) are in
// the log, failed ones included.
func (r *Runtime) CallCount(method string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, c := range r.calls {
		if c.Method == method {
			n++
		}
	}
	return n
}

// ResetCalls empties the call log. Calls still running are not logged
// again when they finish.
func (r *Runtime) ResetCalls() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = nil
}
