package kubeapi

import (
	"encoding/base64"
	"encoding/json"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
)

// listQuery is the parsed query of a list or watch.
type listQuery struct {
	namespace       string
	label           labels.Selector
	field           fields.Selector
	watch           bool
	resourceVersion string
	bookmarks       bool
	initialEvents   bool
	timeout         time.Duration
	// limit > 0 pages a list; cont continues one (see page).
	limit int64
	cont  continueToken
}

// fieldsOf returns the fields an object of res can be selected by, the
// API server's for that kind.
func fieldsOf(res resource, obj runtime.Object) fields.Set {
	switch o := obj.(type) {
	case *v1.Pod:
		return fields.Set{
			"metadata.name":            o.Name,
			"metadata.namespace":       o.Namespace,
			"spec.nodeName":            o.Spec.NodeName,
			"spec.restartPolicy":       string(o.Spec.RestartPolicy),
			"spec.schedulerName":       o.Spec.SchedulerName,
			"spec.serviceAccountName":  o.Spec.ServiceAccountName,
			"spec.hostNetwork":         strconv.FormatBool(o.Spec.HostNetwork),
			"status.phase":             string(o.Status.Phase),
			"status.podIP":             o.Status.PodIP,
			"status.nominatedNodeName": o.Status.NominatedNodeName,
		}
	case *v1.Event:
		return fields.Set{
			"metadata.name":                  o.Name,
			"metadata.namespace":             o.Namespace,
			"involvedObject.kind":            o.InvolvedObject.Kind,
			"involvedObject.namespace":       o.InvolvedObject.Namespace,
			"involvedObject.name":            o.InvolvedObject.Name,
			"involvedObject.uid":             string(o.InvolvedObject.UID),
			"involvedObject.apiVersion":      o.InvolvedObject.APIVersion,
			"involvedObject.resourceVersion": o.InvolvedObject.ResourceVersion,
			"involvedObject.fieldPath":       o.InvolvedObject.FieldPath,
			"reason":                         o.Reason,
			"reportingComponent":             o.ReportingController,
			"source":                         o.Source.Component,
			"type":                           o.Type,
		}
	case *v1.Node:
		return fields.Set{
			"metadata.name":      o.Name,
			"spec.unschedulable": strconv.FormatBool(o.Spec.Unschedulable),
		}
	}
	return fields.Set{}
}

// selectable is the field names of res, for checking a selector.
func selectable(res resource) fields.Set {
	switch res {
	case resPods:
		return fieldsOf(res, &v1.Pod{})
	case resEvents:
		return fieldsOf(res, &v1.Event{})
	default:
		return fieldsOf(res, &v1.Node{})
	}
}

// parseListQuery reads labelSelector, fieldSelector, watch,
// resourceVersion, allowWatchBookmarks, sendInitialEvents, timeoutSeconds,
// limit and continue (a watch ignores the last two, as the API server).
func parseListQuery(v url.Values, res resource) (listQuery, error) {
	q := listQuery{label: labels.Everything(), field: fields.Everything()}
	var err error
	if s := v.Get("limit"); s != "" {
		if q.limit, err = strconv.ParseInt(s, 10, 64); err != nil || q.limit < 0 {
			return q, errBadRequest("invalid limit %q: want an integer ≥ 0", s)
		}
	}
	if s := v.Get("continue"); s != "" {
		if q.cont, err = decodeContinue(s); err != nil {
			return q, err
		}
	}
	if s := v.Get("labelSelector"); s != "" {
		if q.label, err = labels.Parse(s); err != nil {
			return q, errBadRequest("unable to parse requirement: %v", err)
		}
	}
	if s := v.Get("fieldSelector"); s != "" {
		if q.field, err = fields.ParseSelector(s); err != nil {
			return q, errBadRequest("invalid field selector %q: %v", s, err)
		}
		known := selectable(res)
		for _, req := range q.field.Requirements() {
			if _, ok := known[req.Field]; !ok {
				return q, errBadRequest("field label not supported: %s", req.Field)
			}
		}
	}
	if q.watch, err = boolParam(v, "watch"); err != nil {
		return q, err
	}
	if q.bookmarks, err = boolParam(v, "allowWatchBookmarks"); err != nil {
		return q, err
	}
	if q.initialEvents, err = boolParam(v, "sendInitialEvents"); err != nil {
		return q, err
	}
	q.resourceVersion = v.Get("resourceVersion")
	if q.resourceVersion != "" {
		if _, err := strconv.ParseUint(q.resourceVersion, 10, 64); err != nil {
			return q, errBadRequest("invalid resourceVersion %q: want an integer", q.resourceVersion)
		}
	}
	if s := v.Get("timeoutSeconds"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 0 {
			return q, errBadRequest("invalid timeoutSeconds %q: want an integer ≥ 0", s)
		}
		q.timeout = time.Duration(n) * time.Second
	}
	return q, nil
}

func boolParam(v url.Values, key string) (bool, error) {
	s, ok := v[key]
	if !ok || len(s) == 0 {
		return false, nil
	}
	if s[0] == "" {
		return true, nil
	}
	b, err := strconv.ParseBool(s[0])
	if err != nil {
		return false, errBadRequest("invalid %s %q: want true or false", key, s[0])
	}
	return b, nil
}

// matches says whether obj is in q's namespace and selected by it.
func (q listQuery) matches(res resource, obj runtime.Object) bool {
	m := metaOf(obj)
	if q.namespace != "" && m.GetNamespace() != q.namespace {
		return false
	}
	if !q.label.Matches(labels.Set(m.GetLabels())) {
		return false
	}
	return q.field.Matches(fieldsOf(res, obj))
}

func metaOf(obj runtime.Object) metav1.Object {
	m, err := meta.Accessor(obj)
	if err != nil {
		return &metav1.ObjectMeta{}
	}
	return m
}

// nameRule says which Kubernetes name rules a path segment follows.
type nameRule int

const (
	nsName    nameRule = iota // DNS-1123 label
	podNameOf                 // DNS-1123 subdomain
	nameOf                    // any path segment name (events, nodes)
)

// validName checks a name from the path.
func validName(rule nameRule, s string) error {
	var errs []string
	switch rule {
	case nsName:
		errs = validation.IsDNS1123Label(s)
	case podNameOf:
		errs = validation.IsDNS1123Subdomain(s)
	default:
		if s == "" || len(s) > 253 {
			errs = []string{"must be 1 to 253 characters"}
		}
	}
	if len(errs) > 0 {
		return errBadRequest("invalid name %q: %s", s, strings.Join(errs, "; "))
	}
	return nil
}

// wantsTable says whether the client asked for the server-side Table
// form (Accept: application/json;as=Table;v=v1;g=meta.k8s.io, as kubectl
// get does, with v1beta1 as a second choice, which gets v1 too).
func wantsTable(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept"), ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil || mt != "application/json" {
			continue
		}
		if params["as"] == "Table" && params["g"] == "meta.k8s.io" && (params["v"] == "v1" || params["v"] == "v1beta1") {
			return true
		}
	}
	return false
}

// continueToken is a paged list's place: the version the list is of and
// the key of the last object sent (the API server's token has the same
// two fields).
type continueToken struct {
	RV    uint64 `json:"rv"`
	Start string `json:"start"`
}

func (c continueToken) encode() string {
	data, _ := json.Marshal(c) // a number and a string always encode
	return base64.RawURLEncoding.EncodeToString(data)
}

func decodeContinue(s string) (continueToken, error) {
	var c continueToken
	data, err := base64.RawURLEncoding.DecodeString(s)
	if err == nil {
		err = json.Unmarshal(data, &c)
	}
	if err != nil || c.RV == 0 || c.Start == "" {
		return continueToken{}, errBadRequest("invalid continue %q: not a token this server gave", s)
	}
	return c, nil
}

// errContinueExpired is the API server's 410 for a continue token whose
// list can no longer be rebuilt.
func errContinueExpired() *statusError {
	return newStatus(http.StatusGone, metav1.StatusReasonExpired, nil,
		"The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.")
}
