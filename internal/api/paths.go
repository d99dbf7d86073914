package api

import (
	"fmt"
	"net/http"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// pprofPrefix is the one path prefix whose index ends with a slash.
const pprofPrefix = "/debug/pprof/"

// guardPath answers 400 for a request path that is not a plain sequence of
// non-empty segments before the router sees it (the router would clean it
// and redirect): percent-encoded bytes of any kind (%2e%2e, %2f, %5c, %00,
// and non-ASCII), ".", ".." or empty segments ("//", a trailing "/"
// except for /debug/pprof/), and request targets that are not absolute
// paths. Every name the API serves is a Kubernetes name, which never needs
// encoding.
func guardPath(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if msg := checkPath(r); msg != "" {
			writeError(w, http.StatusBadRequest, msg)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// checkPath returns why r's path is refused, or "".
func checkPath(r *http.Request) string {
	p := r.URL.Path
	if r.URL.Opaque != "" || !strings.HasPrefix(p, "/") {
		return "the request path must be absolute"
	}
	if strings.ContainsRune(r.URL.EscapedPath(), '%') || strings.ContainsRune(r.URL.RawPath, '%') {
		return "encoded characters are not allowed in the request path"
	}
	if p == "/" {
		return ""
	}
	segs := strings.Split(p[1:], "/")
	for i, s := range segs {
		switch s {
		case "":
			if i == len(segs)-1 && p == pprofPrefix {
				continue
			}
			return "empty segments are not allowed in the request path"
		case ".", "..":
			return "relative segments are not allowed in the request path"
		}
	}
	return ""
}

// nameKind says which Kubernetes name rules a path segment follows.
type nameKind int

const (
	namespaceName nameKind = iota // DNS-1123 label
	podName                       // DNS-1123 subdomain
	containerName                 // DNS-1123 label
)

func (k nameKind) String() string {
	switch k {
	case namespaceName:
		return "namespace"
	case podName:
		return "pod name"
	default:
		return "container name"
	}
}

// validateName checks a path segment as the Kubernetes name it stands for:
// namespaces and container names are DNS-1123 labels, pod names DNS-1123
// subdomains.
func validateName(kind nameKind, value string) error {
	var errs []string
	if kind == podName {
		errs = validation.IsDNS1123Subdomain(value)
	} else {
		errs = validation.IsDNS1123Label(value)
	}
	if len(errs) > 0 {
		return fmt.Errorf("invalid %s %q: %s", kind, value, strings.Join(errs, "; "))
	}
	return nil
}

// validateNames checks a namespace, a pod name and, when given, a container
// name; it returns the first error.
func validateNames(namespace, pod string, container ...string) error {
	if err := validateName(namespaceName, namespace); err != nil {
		return err
	}
	if err := validateName(podName, pod); err != nil {
		return err
	}
	for _, c := range container {
		if err := validateName(containerName, c); err != nil {
			return err
		}
	}
	return nil
}
