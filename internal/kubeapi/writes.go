package kubeapi

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"mime"
	"net/http"
	"strings"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/strategicpatch"

	"github.com/actorlet/actorlet/internal/api"
	"github.com/actorlet/actorlet/internal/manifest"
	"github.com/actorlet/actorlet/sources/apipods"
)

// maxBody bounds a write's body: a manifest's limit, plus room for a patch's
// framing.
const maxBody = manifest.MaxManifestBytes + 64<<10

// writeQuery is a write's parsed query.
type writeQuery struct {
	strict bool // fieldValidation=Strict
	warn   bool // fieldValidation=Warn (the default): unknown fields are Warning headers
	dryRun bool
}

func parseWriteQuery(r *http.Request) (writeQuery, error) {
	q := writeQuery{warn: true}
	v := r.URL.Query()
	switch fv := v.Get("fieldValidation"); fv {
	case "", "Warn":
	case "Strict":
		q.strict, q.warn = true, false
	case "Ignore":
		q.warn = false
	default:
		return q, errBadRequest("fieldValidation %q: want Strict, Warn or Ignore", fv)
	}
	for _, d := range v["dryRun"] {
		if d != "All" {
			return q, errBadRequest("dryRun %q: want All", d)
		}
		q.dryRun = true
	}
	return q, nil
}

// authorizeWrite refuses a write without an identity: 403 when the agent
// has no credential configured (writes are then impossible: say how to
// configure one), 401 when it has but the request brought none.
func authorizeWrite(r *http.Request, what string) error {
	if api.IdentityOf(r).Kind != "" {
		return nil
	}
	if !api.AuthConfigured(r) {
		return newStatus(http.StatusForbidden, metav1.StatusReasonForbidden, nil,
			"%s needs credentials, and this agent has none configured: start it with --api-token-file FILE (then kubectl --token, or the kubeconfig `make run` writes to build/kubeconfig) or --client-ca-file with --tls-cert-file", what)
	}
	return newStatus(http.StatusUnauthorized, metav1.StatusReasonUnauthorized, nil,
		"%s needs credentials: a bearer token (--api-token-file) or a client certificate signed by --client-ca-file", what)
}

// readBody reads a write's body, at most maxBody.
func readBody(r *http.Request) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		return nil, errBadRequest("reading the body: %v", err)
	}
	if len(data) > maxBody {
		return nil, newStatus(http.StatusRequestEntityTooLarge, metav1.StatusReasonRequestEntityTooLarge, nil, "the request body is over %d bytes", maxBody)
	}
	return data, nil
}

// decodePod decodes a pod from a write's body (JSON or YAML), strictly
// when q asks; unknown fields are warnings otherwise.
func decodePod(what, nameHint string, data []byte, q writeQuery) (*v1.Pod, []string, error) {
	docs, err := manifest.DecodeDocuments(what, data, manifest.DecodeOptions{Strict: q.strict})
	if err != nil {
		return nil, nil, invalid(nameHint, err)
	}
	if len(docs) != 1 {
		return nil, nil, errBadRequest("%s: want one object, found %d", what, len(docs))
	}
	d := docs[0]
	if d.Err != nil {
		if d.Name != "" {
			nameHint = d.Name
		}
		return nil, nil, invalid(nameHint, d.Err)
	}
	if d.Pod == nil {
		return nil, nil, errBadRequest("%s: kind %q: only a v1 Pod can be written here", what, d.Kind)
	}
	if !q.warn {
		d.Warnings = nil
	}
	return d.Pod, d.Warnings, nil
}

// invalid is the 422 (or 400 for a syntax error) of a pod that does not
// decode or validate; the message names the field, and kubectl prints it
// as the API server's: The Pod "web" is invalid: * <cause>.
func invalid(name string, err error) *statusError {
	var se *manifest.SyntaxError
	if errors.As(err, &se) {
		return errBadRequest("%v", err)
	}
	msg := err.Error()
	var fe *manifest.FileError
	if errors.As(err, &fe) {
		msg = fe.Err.Error() // the field's error, without "manifest pod …:"
	}
	if strings.HasPrefix(msg, "unknown field ") || strings.Contains(msg, "duplicate field") {
		return errBadRequest("strict decoding error: %s", msg)
	}
	cause := metav1.StatusCause{Type: metav1.CauseTypeFieldValueInvalid, Message: msg}
	if f, m, ok := strings.Cut(msg, ": "); ok && !strings.Contains(f, " ") {
		cause.Field, cause.Message = f, m
	}
	return newStatus(http.StatusUnprocessableEntity, metav1.StatusReasonInvalid,
		&metav1.StatusDetails{Kind: "Pod", Name: name, Causes: []metav1.StatusCause{cause}},
		"Pod %q is invalid: %s", name, msg)
}

// owned refuses a write to a pod that another source defines: it is
// changed where it comes from, as a mirror pod is.
func (h *Handler) owned(ns, name string) error {
	if where := h.foreignSource(ns, name); where != "" {
		return newStatus(http.StatusForbidden, metav1.StatusReasonForbidden, &metav1.StatusDetails{Name: name, Kind: "pods"},
			"pods %q is forbidden: it comes from %s; change it there: only pods pushed through this API can be changed through it", name, where)
	}
	return nil
}

// foreignSource names the source of the pod namespace/name when it is not
// this API ("file /etc/actorlet/web.yaml"), or "".
func (h *Handler) foreignSource(ns, name string) string {
	obj, ok := h.store.get(resPods, ns+"/"+name)
	if !ok {
		return ""
	}
	p := obj.(*v1.Pod)
	src := p.Annotations[manifest.AnnotationConfigSource]
	if src == apipods.ConfigSourceAPI {
		return ""
	}
	where := src
	for _, a := range []string{manifest.AnnotationSourceFile, "io.actorlet/source-url", "io.actorlet/source-etcd-key"} {
		if v := p.Annotations[a]; v != "" {
			where += " " + v
		}
	}
	if where = strings.TrimSpace(where); where == "" {
		where = "another source"
	}
	return where
}

// answer writes the pod a write made, with its warnings.
func answer(w http.ResponseWriter, code int, p *v1.Pod, warnings []string) {
	for _, msg := range warnings {
		w.Header().Add("Warning", fmt.Sprintf("299 - %q", msg))
	}
	out := p.DeepCopy()
	out.TypeMeta = metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"}
	writeObject(w, code, out)
}

// putError maps the source's errors.
func putError(err error, name string) error {
	var se *statusError
	switch {
	case errors.As(err, &se):
		return se
	case errors.Is(err, apipods.ErrExists):
		return newStatus(http.StatusConflict, metav1.StatusReasonAlreadyExists, &metav1.StatusDetails{Name: name, Kind: "pods"}, "pods %q already exists", name)
	case errors.Is(err, apipods.ErrNotFound):
		return errNotFound("pods", name)
	case errors.Is(err, manifest.ErrTooLarge):
		return newStatus(http.StatusRequestEntityTooLarge, metav1.StatusReasonRequestEntityTooLarge, nil, "%v", err)
	}
	var fe *manifest.FileError
	if errors.As(err, &fe) {
		return invalid(name, err)
	}
	return err
}

// create serves POST …/namespaces/{ns}/pods.
func (h *Handler) create(w http.ResponseWriter, r *http.Request, ns string) error {
	if err := authorizeWrite(r, "creating a pod"); err != nil {
		return err
	}
	q, err := parseWriteQuery(r)
	if err != nil {
		return err
	}
	data, err := readBody(r)
	if err != nil {
		return err
	}
	pod, warnings, err := decodePod("pod", "", data, q)
	if err != nil {
		return err
	}
	if pod.Namespace == "" {
		pod.Namespace = ns
	}
	if pod.Namespace != ns {
		return errBadRequest("the namespace of the provided object (%s) does not match the namespace sent on the request (%s)", pod.Namespace, ns)
	}
	if pod.Name == "" && pod.GenerateName != "" {
		pod.Name = pod.GenerateName + randomSuffix()
	}
	if pod.Name == "" {
		return invalid("", fmt.Errorf("metadata.name: Required value: name or generateName is required"))
	}
	if err := h.refresh(r.Context()); err != nil {
		return err
	}
	if where := h.foreignSource(ns, pod.Name); where != "" {
		return newStatus(http.StatusConflict, metav1.StatusReasonAlreadyExists, &metav1.StatusDetails{Name: pod.Name, Kind: "pods"},
			"pods %q already exists: it comes from %s", pod.Name, where)
	}
	out, w2, err := h.opts.Pushed.Put(pod, apipods.PutOptions{Create: true, DryRun: q.dryRun})
	if err != nil {
		return putError(err, pod.Name)
	}
	answer(w, http.StatusCreated, out, append(warnings, w2...))
	return nil
}

// write serves PUT, PATCH and DELETE of …/pods/{name}.
func (h *Handler) write(w http.ResponseWriter, r *http.Request, ns, name string) error {
	verb := map[string]string{http.MethodPut: "replacing", http.MethodPatch: "patching", http.MethodDelete: "deleting"}[r.Method]
	if err := authorizeWrite(r, verb+" a pod"); err != nil {
		return err
	}
	q, err := parseWriteQuery(r)
	if err != nil {
		return err
	}
	if err := h.refresh(r.Context()); err != nil {
		return err
	}
	if err := h.owned(ns, name); err != nil {
		return err
	}
	stored, ok := h.opts.Pushed.Stored(ns, name)
	if !ok {
		return errNotFound("pods", name)
	}
	if r.Method == http.MethodDelete {
		out, err := h.opts.Pushed.Delete(ns, name, q.dryRun)
		if err != nil {
			return putError(err, name)
		}
		answer(w, http.StatusOK, out, nil)
		return nil
	}
	data, err := readBody(r)
	if err != nil {
		return err
	}
	if r.Method == http.MethodPatch {
		if data, err = patch(r.Header.Get("Content-Type"), stored, data); err != nil {
			return err
		}
	}
	pod, warnings, err := decodePod("pod "+ns+"/"+name, name, data, q)
	if err != nil {
		return err
	}
	if pod.Namespace == "" {
		pod.Namespace = ns
	}
	if pod.Namespace != ns || pod.Name != name {
		return errBadRequest("the name and namespace of the object (%s/%s) do not match the request's (%s/%s)", pod.Namespace, pod.Name, ns, name)
	}
	if rv := pod.ResourceVersion; rv != "" && r.Method == http.MethodPut {
		if cur, ok := h.store.get(resPods, ns+"/"+name); ok && metaOf(cur).GetResourceVersion() != rv {
			return newStatus(http.StatusConflict, metav1.StatusReasonConflict, &metav1.StatusDetails{Name: name, Kind: "pods"},
				"Operation cannot be fulfilled on pods %q: the object has been modified; please apply your changes to the latest version and try again", name)
		}
	}
	// A UID the API showed but the pusher never set is derived, not kept.
	if cur, ok := h.opts.Pushed.Get(ns, name); ok && stored.UID == "" && pod.UID == cur.UID {
		pod.UID = ""
	}
	out, w2, err := h.opts.Pushed.Put(pod, apipods.PutOptions{DryRun: q.dryRun})
	if err != nil {
		return putError(err, name)
	}
	answer(w, http.StatusOK, out, append(warnings, w2...))
	return nil
}

// patch applies a patch of the given content type to the stored pod and
// returns the result as JSON.
func patch(contentType string, stored *v1.Pod, p []byte) ([]byte, error) {
	mt, _, _ := mime.ParseMediaType(contentType)
	stored.TypeMeta = metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"}
	orig, err := json.Marshal(stored)
	if err != nil {
		return nil, fmt.Errorf("encoding pod %s/%s: %w", stored.Namespace, stored.Name, err)
	}
	var out []byte
	switch mt {
	case "application/strategic-merge-patch+json":
		out, err = strategicpatch.StrategicMergePatch(orig, p, v1.Pod{})
	case "application/merge-patch+json":
		out, err = jsonpatch.MergePatch(orig, p)
	case "application/json-patch+json":
		var ops jsonpatch.Patch
		if ops, err = jsonpatch.DecodePatch(p); err == nil {
			out, err = ops.Apply(orig)
		}
	case "application/apply-patch+yaml":
		return nil, newStatus(http.StatusUnsupportedMediaType, metav1.StatusReasonUnsupportedMediaType, nil,
			"server-side apply is not supported by actorlet: use kubectl apply without --server-side")
	default:
		return nil, newStatus(http.StatusUnsupportedMediaType, metav1.StatusReasonUnsupportedMediaType, nil,
			"the body of a PATCH must be application/strategic-merge-patch+json, application/merge-patch+json or application/json-patch+json, not %q", contentType)
	}
	if err != nil {
		return nil, errBadRequest("the patch does not apply to pod %s/%s: %v", stored.Namespace, stored.Name, err)
	}
	return out, nil
}

// randomSuffix is generateName's five random characters.
func randomSuffix() string {
	const alphabet = "bcdfghjklmnpqrstvwxz2456789"
	b := make([]byte, 5)
	for i := range b {
		n, _ := rand.Int(rand.Reader, big.NewInt(int64(len(alphabet))))
		b[i] = alphabet[n.Int64()]
	}
	return string(b)
}
