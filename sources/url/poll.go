package url

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"go.uber.org/zap"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"

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

// goodPod is a pod that passed validation, with its fingerprint.
type goodPod struct {
	pod *v1.Pod
	// fingerprint identifies the pod's UID and full content, to see changes.
	fingerprint string
}

// poller turns poll results into updates. It is used by one goroutine
// (Run's) and keeps no goroutines of its own.
type poller struct {
	source, url, node string // url: without secrets
	log               *zap.Logger
	validate          manifest.ValidationOptions

	decoded bool   // body is the latest response that decoded
	body    []byte // its content, to skip an unchanged response

	// The set from the latest decoded response.
	lastGood map[string]goodPod // by namespace/name
	pods     []*v1.Pod
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
		lastGood: map[string]goodPod{}, logged: map[string]bool{},
	}
}

// handle takes one poll's result, the body of a 2xx response or the fetch
// error, and returns the update and whether to send it: on the first
// success, when the pods or problems changed, on a failure (once per
// distinct error) and on the first success after a failure.
func (p *poller) handle(body []byte, err error) (sources.Update, bool) {
	if err == nil && (!p.decoded || !bytes.Equal(body, p.body)) {
		items, derr := manifest.DecodeList(p.url, body)
		var fe *manifest.FileError
		switch {
		case derr == nil:
			p.apply(items)
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

	u := sources.Update{Source: p.source, Pods: p.pods, Problems: p.problems}
	send := !p.sent || recovered || p.key != p.sentKey
	p.sent, p.sentKey = true, p.key
	return u, send
}

// apply makes the decoded items the current set. Items are taken in order;
// a bad item is a problem and keeps the last good pod of its
// namespace/name, if any; when two pods have the same namespace/name (or
// UID) the first keeps it and the other is a problem.
func (p *poller) apply(items []manifest.ListItem) {
	var (
		pods         []*v1.Pod
		problems     []error
		fingerprints []string
	)
	lastGood := map[string]goodPod{}
	byName := map[string]string{}   // namespace/name → item
	byUID := map[types.UID]string{} // UID → item
	// logged collects this round's messages; each is logged only if the
	// previous round did not have it.
	logged := map[string]bool{}
	isNew := func(msg string) bool {
		logged[msg] = true
		return !p.logged[msg]
	}

	for _, it := range items {
		label := itemLabel(it.Field)
		pod, warnings, err := p.load(it)
		for _, w := range warnings {
			if isNew(w) {
				p.log.Warn("manifest field ignored", zap.String("url", p.url), zap.String("warning", w))
			}
		}
		var good goodPod
		var key string
		if err == nil {
			key = pod.Namespace + "/" + pod.Name
			good = goodPod{pod: pod, fingerprint: fingerprint(pod)}
		} else {
			problems = append(problems, err)
			if it.Name != "" {
				ns := it.Namespace
				if ns == "" {
					ns = manifest.DefaultNamespace
				}
				key = ns + "/" + it.Name
			}
			var ok bool
			good, ok = p.lastGood[key]
			switch {
			case ok && isNew(err.Error()):
				p.log.Error("manifest item rejected; its pod keeps its last good spec", zap.Error(err),
					zap.String("pod", key), zap.String("uid", string(good.pod.UID)))
			case !ok && isNew(err.Error()):
				p.log.Error("manifest item rejected", zap.Error(err))
			}
			if !ok {
				continue
			}
		}

		winner, clash := byName[key]
		what := "pod " + key
		if !clash {
			if winner, clash = byUID[good.pod.UID]; clash {
				what = "pod UID " + string(good.pod.UID)
			}
		}
		if clash {
			err := &manifest.FileError{Path: p.url, Err: fmt.Errorf(
				"%s: %s is also defined by %s, which comes first and wins; this item is ignored", label, what, winner)}
			problems = append(problems, err)
			if isNew(err.Error()) {
				p.log.Warn("two manifest items define the same pod", zap.Error(err))
			}
			continue
		}
		byName[key], byUID[good.pod.UID] = label, label
		lastGood[key] = good
		pods = append(pods, good.pod)
		fingerprints = append(fingerprints, good.fingerprint)
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
	p.lastGood, p.pods, p.problems, p.key, p.logged = lastGood, pods, problems, k.String(), logged
}

// load defaults and validates a decoded item and gives it its UID and
// annotations. Its errors are *manifest.FileError naming the URL and the
// item's fields.
func (p *poller) load(it manifest.ListItem) (*v1.Pod, []string, error) {
	if it.Err != nil {
		return nil, nil, it.Err
	}
	pod := it.Pod // decoded for this response: ours to change
	manifest.SetDefaults(pod)
	warnings, err := manifest.ValidateAtWith(pod, it.Field, p.validate)
	if err != nil {
		return nil, warnings, &manifest.FileError{Path: p.url, Err: err}
	}
	// The namespace/name is part of the "path", so a pod's UID does not
	// depend on its place in the list, nor on whether it comes alone.
	pod.UID = manifest.StaticPodUID(p.node, p.url+"#"+pod.Namespace+"/"+pod.Name, pod)
	if pod.Annotations == nil {
		pod.Annotations = make(map[string]string, 3)
	}
	pod.Annotations[manifest.AnnotationConfigSource] = ConfigSourceHTTP
	pod.Annotations[manifest.AnnotationConfigHash] = string(pod.UID)
	pod.Annotations[AnnotationSourceURL] = p.url
	return pod, warnings, nil
}

// itemLabel names an item in messages: its path in the PodList, or "pod"
// for a document that is a single Pod.
func itemLabel(f *field.Path) string {
	if f == nil {
		return "pod"
	}
	return f.String()
}

// fingerprint identifies a pod's UID and whole content.
func fingerprint(pod *v1.Pod) string {
	data, _ := json.Marshal(pod) // a v1.Pod always marshals
	sum := sha256.Sum256(data)
	return string(pod.UID) + "/" + hex.EncodeToString(sum[:])
}
