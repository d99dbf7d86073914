package api

import "net/http"

// healthz serves GET /healthz: 200 when healthy, 503 otherwise, with every
// check as JSON either way. The answer is unhealthy when the Backend says so
// or when any check failed.
func (h *handler) healthz(w http.ResponseWriter, r *http.Request) {
	health := h.b.Health(r.Context())
	if health.Checks == nil {
		health.Checks = []Check{}
	}
	for _, c := range health.Checks {
		if !c.OK {
			health.OK = false
		}
	}
	code := http.StatusOK
	if !health.OK {
		code = http.StatusServiceUnavailable
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, code, &health)
}
