package apiclient

import (
	"errors"
	"fmt"
	"net/http"
)

// Sentinels matched by a *StatusError with errors.Is.
var (
	// ErrNotFound: the agent answered 404 (unknown pod or container).
	ErrNotFound = errors.New("not found")
	// ErrUnauthorized: the agent answered 401 (missing or wrong token).
	ErrUnauthorized = errors.New("unauthorized")
)

// NoAgentError says that nothing answered at the server address (connection
// refused, unknown host, timeout, …). Err is the transport's error.
type NoAgentError struct {
	Server string
	Err    error
}

func (e *NoAgentError) Error() string {
	return fmt.Sprintf("no actorlet agent answers at %s: %v", e.Server, e.Err)
}

// Unwrap returns the transport's error.
func (e *NoAgentError) Unwrap() error { return e.Err }

// StatusError is an answer other than 200 from the agent.
type StatusError struct {
	Code int // HTTP status code
	// Reason is the Kubernetes reason when the agent sent one (NotFound,
	// BadRequest, Unauthorized, InternalError), else the HTTP status text.
	Reason  string
	Message string
}

func (e *StatusError) Error() string {
	reason := e.Reason
	if reason == "" {
		reason = http.StatusText(e.Code)
	}
	if e.Message == "" {
		return fmt.Sprintf("error from the agent (%s): HTTP %d", reason, e.Code)
	}
	return fmt.Sprintf("error from the agent (%s): %s", reason, e.Message)
}

// Is matches ErrNotFound for 404 and ErrUnauthorized for 401.
func (e *StatusError) Is(target error) bool {
	switch target {
	case ErrNotFound:
		return e.Code == http.StatusNotFound
	case ErrUnauthorized:
		return e.Code == http.StatusUnauthorized
	}
	return false
}
