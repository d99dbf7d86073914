package kubeapi

import (
	"encoding/json"
	"fmt"
	"net/http"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// statusError is an API error answered as a metav1.Status, the body the
// API server gives every failure (kubectl prints its message).
type statusError struct {
	st metav1.Status
}

func (e *statusError) Error() string { return e.st.Message }

// newStatus builds a failure Status; details may be nil.
func newStatus(code int, reason metav1.StatusReason, details *metav1.StatusDetails, format string, args ...any) *statusError {
	return &statusError{st: metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusFailure,
		Message:  fmt.Sprintf(format, args...),
		Reason:   reason,
		Details:  details,
		Code:     int32(code),
	}}
}

// errNotFound is the API server's 404 for a named object of a resource.
func errNotFound(resource, name string) *statusError {
	return newStatus(http.StatusNotFound, metav1.StatusReasonNotFound,
		&metav1.StatusDetails{Name: name, Kind: resource},
		"%s %q not found", resource, name)
}

// errNoResource is the API server's 404 for a path it does not serve.
func errNoResource() *statusError {
	return newStatus(http.StatusNotFound, metav1.StatusReasonNotFound, &metav1.StatusDetails{},
		"the server could not find the requested resource")
}

// errMethod is the API server's 405 for a verb a resource does not support.
func errMethod(verb, resource string) *statusError {
	return newStatus(http.StatusMethodNotAllowed, metav1.StatusReasonMethodNotAllowed, &metav1.StatusDetails{},
		"the server does not allow this method on the requested resource: %s %s is not supported by actorlet", verb, resource)
}

func errBadRequest(format string, args ...any) *statusError {
	return newStatus(http.StatusBadRequest, metav1.StatusReasonBadRequest, nil, format, args...)
}

func errInternal(err error) *statusError {
	return newStatus(http.StatusInternalServerError, metav1.StatusReasonInternalError, nil, "%s", err.Error())
}

// writeStatus answers e.
func writeStatus(w http.ResponseWriter, e *statusError) {
	writeObject(w, int(e.st.Code), &e.st)
}

// writeObject answers code with v as JSON.
func writeObject(w http.ResponseWriter, code int, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		e := errInternal(fmt.Errorf("encoding the answer: %w", err))
		data, _ = json.Marshal(&e.st)
		code = http.StatusInternalServerError
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_, _ = w.Write(append(data, '\n'))
}
