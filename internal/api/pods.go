package api

import (
	"fmt"
	"net/http"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// pods serves GET /pods: every pod as a v1.PodList with full status, the
// shape of the kubelet's read-only /pods.
func (h *handler) pods(w http.ResponseWriter, r *http.Request) {
	pods, err := h.b.Pods(r.Context())
	if err != nil {
		h.fail(w, r, err)
		return
	}
	list := v1.PodList{
		TypeMeta: metav1.TypeMeta{Kind: "PodList", APIVersion: "v1"},
		Items:    make([]v1.Pod, 0, len(pods)),
	}
	for _, p := range pods {
		if p != nil {
			list.Items = append(list.Items, *p)
		}
	}
	writeJSON(w, http.StatusOK, &list)
}

// pod serves GET /pods/{namespace}/{name}: one v1.Pod, or 404.
func (h *handler) pod(w http.ResponseWriter, r *http.Request) {
	ns, name := r.PathValue("namespace"), r.PathValue("name")
	if err := validateNames(ns, name); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	pods, err := h.b.Pods(r.Context())
	if err != nil {
		h.fail(w, r, err)
		return
	}
	for _, p := range pods {
		if p != nil && p.Namespace == ns && p.Name == name {
			out := *p
			out.TypeMeta = metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"}
			writeJSON(w, http.StatusOK, &out)
			return
		}
	}
	writeError(w, http.StatusNotFound, fmt.Sprintf("pods %q not found in namespace %q", name, ns))
}
