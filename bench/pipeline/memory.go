package pipeline

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/node"
)

// Memory is the heap cost of a node's pods, per pod.
//
// Tree is the heap the node's actor tree holds per pod: HeapAlloc with the
// pods running and idle, minus HeapAlloc after the node has stopped (the
// fake runtime, still holding every container, is in both and cancels
// out), divided by the number of pods. It includes everything actorlet
// keeps per pod: the node's copy of the spec and its maps, the router's
// entry, the pod actor (protoactor's process, context and mailbox, the
// actor's struct, maps, logger, timer, its copy of the container listing
// and its last status), the relist's snapshot entries.
//
// Spec and Status are the sizes of one deep copy of a pod's spec (with
// metadata) and of its status, measured the same way (HeapAlloc delta of
// holding a copy of each); Actor = Tree − Spec − Status is the issue's
// "per idle pod actor, pod spec and status excluded".
type Memory struct {
	Pods                      int
	H1, H2                    uint64 // HeapAlloc with the pods, and after the node stopped
	Tree, Spec, Status, Actor float64
	// Sites break Tree down by allocation site, from a heap profile taken
	// at both moments (sampled; see runtime.MemProfileRate).
	Sites []Site
}

// Categories of Site, in the order they are reported.
var Categories = []string{
	"pod spec (node's defaulted copy)",
	"pod status (pod actor's and node's)",
	"container listings held by pod actors",
	"PLEG snapshot entries (relist)",
	"node actor's per-pod maps and events",
	"protoactor: process, context, mailbox, registry, children",
	"pod actor: struct, maps, props, logger, GC timer; router entry",
}

// Category returns which of Categories s belongs to, judged by its
// allocation site.
func (s Site) Category() string {
	has := func(x, sub string) bool { return strings.Contains(x, sub) }
	switch {
	case has(s.Via, "prepareHostPod") || has(s.Via, "manifest."):
		return Categories[0]
	case has(s.Via, "podsync.StatusWith") || has(s.Via, "podsync.StatusOn") || has(s.Via, "podsync.containerStatus") ||
		has(s.Via, "podsync.ContainerID") || has(s.Via, "(*podActor).report") || has(s.Via, "podstate.(*Pod).report"):
		return Categories[1]
	case has(s.Func, "runtimeadapter/fake.") || has(s.Via, "pleg.(*Relister).batch") || has(s.Via, "(*indexed).List") ||
		has(s.Via, "podstate.hold") || has(s.Via, "podstate.packLabels"):
		return Categories[2]
	case has(s.Via, "internal/pleg."):
		return Categories[3]
	case has(s.Via, "nodeActor") || has(s.Via, "internal/nodestate."):
		return Categories[4]
	case strings.HasPrefix(s.Func, "protoactor/"):
		return Categories[5]
	default:
		return Categories[6]
	}
}

// Site is the in-use heap per pod allocated at one place.
type Site struct {
	Func  string // innermost function outside the Go runtime and standard library
	Via   string // innermost actorlet function on the stack
	Bytes float64
}

// heapAlloc returns the lowest HeapAlloc of three measurements, each after
// two full collections, 200 ms apart: a relist in flight (holding a whole
// listing) is garbage a moment later, and the minimum leaves it out.
func heapAlloc() uint64 {
	best := uint64(math.MaxUint64)
	for i := range 3 {
		if i > 0 {
			time.Sleep(200 * time.Millisecond)
		}
		runtime.GC()
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		best = min(best, ms.HeapAlloc)
	}
	return best
}

// Held measures the heap e holds with its pods idle (call it before
// anything else touches the pods), and the spec and status sizes. Finish
// completes the measurement.
func (e *Env) Held() (*Held, error) {
	n := len(e.UIDs)
	h := &Held{m: Memory{Pods: n}}
	time.Sleep(time.Second) // let the last status reports and relists land
	e.RT.ResetCalls()       // the fake's call log is not actorlet's
	h.m.H1 = heapAlloc()
	h.prof = heapSites()

	// Spec and status sizes, from copies of what the node reports.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pods, err := node.PodStatuses(ctx, e.Sys.Root, e.Node)
	if err != nil {
		return nil, fmt.Errorf("GetPodStatuses: %w", err)
	}
	if len(pods) != n {
		return nil, fmt.Errorf("GetPodStatuses: %d pods, want %d", len(pods), n)
	}
	for _, p := range pods {
		p.Spec.NodeName = "" // as the node holds it
	}
	a := heapAlloc()
	specs := make([]*v1.Pod, n)
	for i, p := range pods {
		specs[i] = &v1.Pod{TypeMeta: p.TypeMeta, ObjectMeta: *p.ObjectMeta.DeepCopy(), Spec: *p.Spec.DeepCopy()}
	}
	b := heapAlloc()
	statuses := make([]*v1.PodStatus, n)
	for i, p := range pods {
		statuses[i] = p.Status.DeepCopy()
	}
	c := heapAlloc()
	runtime.KeepAlive(pods)
	runtime.KeepAlive(specs)
	runtime.KeepAlive(statuses)
	h.m.Spec = float64(int64(b)-int64(a)) / float64(n)
	h.m.Status = float64(int64(c)-int64(b)) / float64(n)
	return h, nil
}

// Held is the first half of a memory measurement.
type Held struct {
	m    Memory
	prof map[siteKey]float64
}

// Finish stops e's node, measures the heap without it and returns the
// memory per pod. e is closed afterwards.
func (e *Env) Finish(h *Held) (Memory, error) {
	defer e.Close()
	m := h.m
	if err := node.Stop(e.Sys.Root, e.Node, time.Minute); err != nil {
		return m, err
	}
	// A protoactor PID caches its process: a PID kept here would keep the
	// stopped router, and through its map every pod actor, alive.
	e.Node, e.Router = nil, nil
	time.Sleep(500 * time.Millisecond) // goroutines of the stopped actors end
	e.RT.ResetCalls()
	m.H2 = heapAlloc()
	prof2 := heapSites()

	n := float64(m.Pods)
	m.Tree = float64(int64(m.H1)-int64(m.H2)) / n
	m.Actor = m.Tree - m.Spec - m.Status
	for k, v := range h.prof {
		if d := (v - prof2[k]) / n; d >= 4 {
			m.Sites = append(m.Sites, Site{Func: k.fn, Via: k.via, Bytes: d})
		}
	}
	slices.SortFunc(m.Sites, func(x, y Site) int { return cmp.Compare(y.Bytes, x.Bytes) })
	return m, nil
}

type siteKey struct{ fn, via string }

// heapSites returns the in-use heap bytes by allocation site, from the
// runtime's heap profile (as of the last GC), scaled for sampling as pprof
// does.
func heapSites() map[siteKey]float64 {
	var recs []runtime.MemProfileRecord
	n, _ := runtime.MemProfile(nil, false)
	for {
		recs = make([]runtime.MemProfileRecord, n+100)
		var ok bool
		n, ok = runtime.MemProfile(recs, false)
		if ok {
			recs = recs[:n]
			break
		}
	}
	rate := float64(runtime.MemProfileRate)
	out := map[siteKey]float64{}
	for _, r := range recs {
		bytes, objs := float64(r.InUseBytes()), float64(r.InUseObjects())
		if bytes <= 0 || objs <= 0 {
			continue
		}
		if rate > 1 {
			bytes /= 1 - math.Exp(-bytes/objs/rate)
		}
		out[classify(r.Stack())] += bytes
	}
	return out
}

// classify names an allocation by its innermost non-standard-library frame
// and its innermost actorlet frame.
func classify(stk []uintptr) siteKey {
	var k siteKey
	frames := runtime.CallersFrames(stk)
	first := ""
	for {
		f, more := frames.Next()
		fn := f.Function
		if first == "" && fn != "" && !strings.HasPrefix(fn, "runtime.") {
			first = fn
		}
		if k.fn == "" && isThirdParty(fn) {
			k.fn = short(fn)
		}
		if k.via == "" && strings.HasPrefix(fn, "github.com/actorlet/actorlet/") {
			k.via = short(fn)
		}
		if !more || (k.fn != "" && k.via != "") {
			break
		}
	}
	if k.fn == "" {
		k.fn = short(first)
	}
	return k
}

// isThirdParty: the function is not the Go runtime's or the standard
// library's (a module path's first element has a dot).
func isThirdParty(fn string) bool {
	first, _, _ := strings.Cut(fn, "/")
	return strings.Contains(first, ".") && strings.Contains(fn, "/")
}

// short drops the module prefixes of a function name.
func short(fn string) string {
	for _, p := range []string{"github.com/actorlet/actorlet/", "github.com/asynkron/protoactor-go/", "k8s.io/apimachinery/pkg/", "k8s.io/"} {
		if s, ok := strings.CutPrefix(fn, p); ok {
			if p == "github.com/asynkron/protoactor-go/" {
				return "protoactor/" + s
			}
			return s
		}
	}
	return fn
}
