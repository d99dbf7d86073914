package kubeapi

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"runtime"
	"strings"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/version"

	avers "github.com/actorlet/actorlet/internal/version"
)

// KubernetesVersion is the Kubernetes API version whose types actorlet
// serves (k8s.io/api v0.37): /version reports it, so clients judge skew
// by the API they talk to.
const (
	kubeMajor = "1"
	kubeMinor = "37"
)

// resources returns the v1 resources served, as /api/v1 lists them: exactly
// what the handler answers.
func (h *Handler) resources() []metav1.APIResource {
	read := metav1.Verbs{"get", "list", "watch"}
	podVerbs := read
	if h.writes() {
		podVerbs = metav1.Verbs{"create", "delete", "get", "list", "patch", "update", "watch"}
	}
	out := []metav1.APIResource{
		{Name: "events", SingularName: "event", Namespaced: true, Kind: "Event", Verbs: read, ShortNames: []string{"ev"}},
		{Name: "nodes", SingularName: "node", Namespaced: false, Kind: "Node", Verbs: read, ShortNames: []string{"no"}},
		{Name: "pods", SingularName: "pod", Namespaced: true, Kind: "Pod", Verbs: podVerbs, ShortNames: []string{"po"}, Categories: []string{"all"}},
	}
	out = append(out, metav1.APIResource{Name: "pods/log", SingularName: "", Namespaced: true, Kind: "Pod", Verbs: metav1.Verbs{"get"}})
	if h.exec() {
		out = append(out, metav1.APIResource{Name: "pods/exec", SingularName: "", Namespaced: true, Kind: "PodExecOptions", Verbs: metav1.Verbs{"create", "get"}})
	}
	return out
}

// discoveryPaths are the documents discovery serves.
var discoveryPaths = map[string]bool{"/api": true, "/api/v1": true, "/apis": true, "/version": true, "/openapi/v3": true, "/openapi/v3/api/v1": true}

// discovery serves /api, /api/v1, /apis, /version and /openapi/v3, to GET
// only (405 for any other method, as the API server). kubectl asks for
// aggregated discovery first and falls back to these legacy documents when
// the answer is plain application/json.
func (h *Handler) discovery(w http.ResponseWriter, r *http.Request, path string) bool {
	if discoveryPaths[path] && r.Method != http.MethodGet && r.Method != http.MethodHead {
		writeStatus(w, errMethod(strings.ToLower(r.Method), path))
		return true
	}
	switch path {
	case "/api":
		writeObject(w, http.StatusOK, &metav1.APIVersions{
			TypeMeta: metav1.TypeMeta{Kind: "APIVersions"},
			Versions: []string{"v1"},
			ServerAddressByClientCIDRs: []metav1.ServerAddressByClientCIDR{
				{ClientCIDR: "0.0.0.0/0", ServerAddress: r.Host},
			},
		})
	case "/api/v1":
		writeObject(w, http.StatusOK, &metav1.APIResourceList{
			TypeMeta:     metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"},
			GroupVersion: "v1",
			APIResources: h.resources(),
		})
	case "/apis":
		writeObject(w, http.StatusOK, &metav1.APIGroupList{
			TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"},
			Groups:   []metav1.APIGroup{},
		})
	case "/version":
		writeObject(w, http.StatusOK, &version.Info{
			Major:      kubeMajor,
			Minor:      kubeMinor,
			GitVersion: "v" + kubeMajor + "." + kubeMinor + ".0-actorlet." + avers.Version,
			GoVersion:  runtime.Version(),
			Compiler:   runtime.Compiler,
			Platform:   runtime.GOOS + "/" + runtime.GOARCH,
		})
	case "/openapi/v3":
		doc := h.openAPIDoc()
		sum := sha256.Sum256(doc)
		writeObject(w, http.StatusOK, map[string]any{
			"paths": map[string]any{
				"api/v1": map[string]string{"serverRelativeURL": "/openapi/v3/api/v1?hash=" + hex.EncodeToString(sum[:16])},
			},
		})
	case "/openapi/v3/api/v1":
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(h.openAPIDoc())
	default:
		return false
	}
	return true
}

// kindSchemas are the schemas of the served kinds (openapi.go), built once.
var kindSchemas = sync.OnceValue(schemas)

// openAPIDoc is the OpenAPI v3 document of /api/v1: the operations served
// on pods, nodes and events, and the schemas of the three kinds (kubectl
// explain reads them; kubectl apply takes its strategic merge patches'
// list strategies from them, the same as its built-in types'). The PATCH
// of a pod declares fieldValidation, which tells kubectl
// (--validate=strict, its default) that this server validates fields
// itself, so kubectl sends fieldValidation=Strict instead of validating
// against the schemas.
func (h *Handler) openAPIDoc() []byte {
	gvk := func(kind string) map[string]string {
		return map[string]string{"group": "", "version": "v1", "kind": kind}
	}
	query := func(name, desc string) map[string]any {
		return map[string]any{"name": name, "in": "query", "description": desc, "schema": map[string]string{"type": "string"}}
	}
	fieldValidation := query("fieldValidation", "Strict, Warn (the default) or Ignore: what to do with an unknown or duplicated field")
	op := func(id, kind, action string, params ...map[string]any) map[string]any {
		o := map[string]any{
			"operationId":                     id,
			"x-kubernetes-action":             action,
			"x-kubernetes-group-version-kind": gvk(kind),
			"responses":                       map[string]any{"200": map[string]string{"description": "OK"}},
		}
		if len(params) > 0 {
			o["parameters"] = params
		}
		return o
	}
	pod := map[string]any{
		"get": op("readCoreV1NamespacedPod", "Pod", "get"),
	}
	pods := map[string]any{
		"get": op("listCoreV1NamespacedPod", "Pod", "list"),
	}
	if h.writes() {
		pod["put"] = op("replaceCoreV1NamespacedPod", "Pod", "put", fieldValidation)
		pod["patch"] = op("patchCoreV1NamespacedPod", "Pod", "patch", fieldValidation)
		pod["delete"] = op("deleteCoreV1NamespacedPod", "Pod", "delete")
		pods["post"] = op("createCoreV1NamespacedPod", "Pod", "post", fieldValidation)
	}
	paths := map[string]any{
		"/api/v1/namespaces/{namespace}/pods":        pods,
		"/api/v1/namespaces/{namespace}/pods/{name}": pod,
		"/api/v1/pods":                                 map[string]any{"get": op("listCoreV1PodForAllNamespaces", "Pod", "list")},
		"/api/v1/nodes":                                map[string]any{"get": op("listCoreV1Node", "Node", "list")},
		"/api/v1/nodes/{name}":                         map[string]any{"get": op("readCoreV1Node", "Node", "get")},
		"/api/v1/events":                               map[string]any{"get": op("listCoreV1EventForAllNamespaces", "Event", "list")},
		"/api/v1/namespaces/{namespace}/events":        map[string]any{"get": op("listCoreV1NamespacedEvent", "Event", "list")},
		"/api/v1/namespaces/{namespace}/events/{name}": map[string]any{"get": op("readCoreV1NamespacedEvent", "Event", "get")},
	}
	doc := map[string]any{
		"openapi":    "3.0.0",
		"info":       map[string]string{"title": "actorlet", "version": "v" + kubeMajor + "." + kubeMinor + ".0"},
		"paths":      paths,
		"components": map[string]any{"schemas": kindSchemas()},
	}
	data, _ := json.Marshal(doc) // maps of strings always encode
	return data
}
