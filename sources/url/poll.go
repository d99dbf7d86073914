package url

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"

	"go.uber.org/zap"
	"k8s.io/apimachinery/pkg/types"

	"github.com/actorlet/actorlet/internal/manifest"
	"github.com/actorlet/actorlet/sources"
)

// Annotations set on every pod from a URL, besides manifest's
// AnnotationConfigSource and AnnotationConfigHash (the UID).
const (
	// ConfigSourceHTTP is manifest.AnnotationConfigSource's value for pods
	// from a URL, as the kubelet's.
	ConfigSourceHTTP = "http"
	// AnnotationSourceURL is the URL the pod came from, as in the source's
	// Name (without credentials).
	AnnotationSourceURL = "io.actorlet/source-url"
)

// poller turns poll results into updates. It is used by one goroutine
// (Run's) and keeps no goroutines of its own.
type poller struct {
	source, url, node string // url: without secrets
	log               *zap.Logger
	validate          manifest.ValidationOptions

	decoded bool   // body is the latest response that decoded
	body    []byte // its content, to skip an unchanged response

	// The set from the latest decoded response.
	lastGood map[string]manifest.Object // by kind and namespace/name
	set      manifest.Objects
	problems []error
	key      string          // summarises pods (in any order) and problems, to send only changes
	logged   map[string]bool // problems and warnings of the latest response, logged once each

	sent    bool   // an update has been sent
	failed  bool   // the latest poll failed
	lastErr string // the error last sent
	sentKey string // key of the last successful update sent
}

func newPoller(source, url, node string, log *zap.Logger) *poller {
	return &poller{
		source: source, url: url, node: node, log: log,
		lastGood: map[string]manifest.Object{}, logged: map[string]bool{},
	}
}

// handle takes one poll's result, the body of a 2xx response or the fetch
// error, and returns the update and whether to send it: on the first
// success, when the pods or problems changed, on a failure (once per
// distinct error) and on the first success after a failure.
func (p *poller) handle(body []byte, err error) (sources.Update, bool) {
	if err == nil && (!p.decoded || !bytes.Equal(body, p.body)) {
		docs, derr := manifest.DecodeObjects(p.url, body)
		var fe *manifest.FileError
		switch {
		case derr == nil:
			p.apply(docs)
			p.decoded, p.body = true, body
		case errors.As(derr, &fe):
			err = fe.Err // named with the URL below
		default:
			err = derr
		}
	}
	if err != nil {
		err = fmt.Errorf("manifest URL %s: %w", p.url, err)
		send := !p.failed || err.Error() != p.lastErr
		if send {
			p.log.Error("manifest URL poll failed; keeping the last set of pods", zap.Error(err))
		}
		p.failed, p.lastErr = true, err.Error()
		return sources.Update{Source: p.source, Err: err}, send
	}
	recovered := p.failed
	if recovered {
		p.log.Info("manifest URL polled successfully again", zap.String("url", p.url))
	}
	p.failed, p.lastErr = false, ""

	u := sources.Update{Source: p.source, Pods: p.set.Pods, ConfigMaps: p.set.ConfigMaps, Secrets: p.set.Secrets, Problems: p.problems}
	send := !p.sent || recovered || p.key != p.sentKey
	p.sent, p.sentKey = true, p.key
	return u, send
}

// apply makes the decoded documents (pods, ConfigMaps, Secrets) the
// current set. They are taken in order; a bad one is a problem and keeps
// the last good object of its kind and namespace/name, if any; when two
// define the same object (or pod UID) the first keeps it and the other is
// a problem.
func (p *poller) apply(docs []manifest.Document) {
	var (
		set          manifest.Objects
		problems     []error
		fingerprints []string
	)
	multi := len(docs) > 1
	lastGood := map[string]manifest.Object{}
	byKey := map[string]string{}    // kind and namespace/name → item
	byUID := map[types.UID]string{} // pod UID → item
	// logged collects this round's messages; each is logged only if the
	// previous round did not have it.
	logged := map[string]bool{}
	isNew := func(msg string) bool {
		logged[msg] = true
		return !p.logged[msg]
	}

	for i := range docs {
		d := &docs[i]
		label := itemLabel(d, multi)
		for _, w := range p.load(d, multi) {
			if isNew(w) {
				p.log.Warn("manifest field ignored", zap.String("url", p.url), zap.String("warning", w))
			}
		}
		var good manifest.Object
		var key string
		if d.Err == nil {
			good = manifest.NewObject(*d)
			key = good.Key()
		} else {
			problems = append(problems, d.Err)
			if d.Name != "" {
				ns := d.Namespace
				if ns == "" {
					ns = manifest.DefaultNamespace
				}
				key = manifest.ObjectKey(d.Kind, ns+"/"+d.Name)
			}
			var ok bool
			good, ok = p.lastGood[key]
			switch {
			case ok && good.Pod != nil && isNew(d.Err.Error()):
				p.log.Error("manifest item rejected; its pod keeps its last good spec", zap.Error(d.Err),
					zap.String("pod", good.Name()), zap.String("uid", string(good.Pod.UID)))
			case ok && isNew(d.Err.Error()):
				p.log.Error("manifest item rejected; it keeps its last good version", zap.Error(d.Err),
					zap.String("object", good.What()))
			case !ok && isNew(d.Err.Error()):
				p.log.Error("manifest item rejected", zap.Error(d.Err))
			}
			if !ok {
				continue
			}
		}

		winner, clash := byKey[key]
		what := good.What()
		if !clash && good.Pod != nil {
			if winner, clash = byUID[good.Pod.UID]; clash {
				what = "pod UID " + string(good.Pod.UID)
			}
		}
		if clash {
			err := &manifest.FileError{Path: p.url, Err: fmt.Errorf(
				"%s: %s is also defined by %s, which comes first and wins; this item is ignored", label, what, winner)}
			problems = append(problems, err)
			if isNew(err.Error()) {
				p.log.Warn("two manifest items define the same "+strings.ToLower(good.Kind()), zap.Error(err))
			}
			continue
		}
		byKey[key] = label
		if good.Pod != nil {
			byUID[good.Pod.UID] = label
		}
		lastGood[key] = good
		set.Add(good)
		fingerprints = append(fingerprints, good.Fingerprint)
	}
	// The key ignores the pods' order: the update is a set.
	slices.Sort(fingerprints)
	var k strings.Builder
	for _, f := range fingerprints {
		k.WriteString(f + "\n")
	}
	k.WriteString("problems:\n")
	for _, e := range problems {
		k.WriteString(e.Error() + "\n")
	}
	p.lastGood, p.set, p.problems, p.key, p.logged = lastGood, set, problems, k.String(), logged
}

// load defaults and validates a decoded document: a ConfigMap or Secret
// as every source does (manifest.Document.LoadConfigData), a pod given
// its UID and annotations. A refused one gets Err, a *manifest.FileError
// naming the URL, the document and the fields. It returns the warnings.
func (p *poller) load(d *manifest.Document, multi bool) []string {
	if d.Err != nil || d.LoadConfigData(p.url, multi, AnnotationSourceURL, p.url) {
		return nil
	}
	pod := d.Pod // decoded for this response: ours to change
	manifest.SetDefaults(pod)
	warnings, err := manifest.ValidateAtWith(pod, d.Item, p.validate)
	if d.Item == nil {
		for i, w := range warnings {
			warnings[i] = d.Label(multi) + w
		}
	}
	if err != nil {
		d.Refuse(p.url, multi, err)
		return warnings
	}
	// The namespace/name is part of the "path", so a pod's UID does not
	// depend on its place in the body, nor on whether it comes alone.
	pod.UID = manifest.StaticPodUID(p.node, p.url+"#"+pod.Namespace+"/"+pod.Name, pod)
	if pod.Annotations == nil {
		pod.Annotations = make(map[string]string, 3)
	}
	pod.Annotations[manifest.AnnotationConfigSource] = ConfigSourceHTTP
	pod.Annotations[manifest.AnnotationConfigHash] = string(pod.UID)
	pod.Annotations[AnnotationSourceURL] = p.url
	return warnings
}

// itemLabel names a document in messages: its path in a PodList or List,
// "document 2 (line 14)" in a body of several, or "pod" for a body that
// is a single Pod.
func itemLabel(d *manifest.Document, multi bool) string {
	if l := d.Label(multi); l != "" {
		return strings.TrimSuffix(l, ": ")
	}
	return "pod"
}
