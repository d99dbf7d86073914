package kubeapi

import "net/http"

func (h *Handler) create(w http.ResponseWriter, r *http.Request, ns string) error {
	return errMethod("create", "pods")
}

func (h *Handler) write(w http.ResponseWriter, r *http.Request, ns, name string) error {
	return errMethod(r.Method, "pods")
}

func (h *Handler) podExec(w http.ResponseWriter, r *http.Request, ns, name string) error {
	return errNoResource()
}
