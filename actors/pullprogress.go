package actors

import (
	"fmt"
	"sync"

	"github.com/actorlet/actorlet/internal/images"
	"github.com/actorlet/actorlet/messages"
	"github.com/actorlet/actorlet/runtimeadapter"
)

// pullProgress fans an image pull's layer progress out to the pods waiting
// for that image, as "Pulling" events (so `describe pod` and /events show
// long pulls moving). Each pod hears each layer's status once (Pulling fs
// layer, Downloading, Extracting, Pull complete), not every byte.
type pullProgress struct {
	mu      sync.Mutex
	waiters map[string]map[*worker]bool // image ref → waiting workers
	seen    map[string]bool             // ref/layer/status already told
}

func newPullProgress() *pullProgress {
	return &pullProgress{waiters: map[string]map[*worker]bool{}, seen: map[string]bool{}}
}

// option is the image manager option that feeds the hub.
func (h *pullProgress) option() images.Option {
	return images.WithProgress(func(ref string, p runtimeadapter.PullProgress) { h.report(ref, p) })
}

// norm keys refs the way the image manager shares pulls.
func norm(ref string) string {
	if n, err := images.Normalize(ref); err == nil {
		return n
	}
	return ref
}

func (h *pullProgress) wait(ref string, w *worker) func() {
	ref = norm(ref)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.waiters[ref] == nil {
		h.waiters[ref] = map[*worker]bool{}
	}
	h.waiters[ref][w] = true
	return func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		delete(h.waiters[ref], w)
		if len(h.waiters[ref]) == 0 {
			delete(h.waiters, ref)
			for k := range h.seen { // a later pull reports afresh
				if len(k) > len(ref) && k[:len(ref)+1] == ref+"/" {
					delete(h.seen, k)
				}
			}
		}
	}
}

func (h *pullProgress) report(ref string, p runtimeadapter.PullProgress) {
	if p.Status == "" {
		return
	}
	shown := ref
	ref = norm(ref)
	key := ref + "/" + p.Layer + "/" + p.Status
	h.mu.Lock()
	if h.seen[key] {
		h.mu.Unlock()
		return
	}
	h.seen[key] = true
	var ws []*worker
	for w := range h.waiters[ref] {
		ws = append(ws, w)
	}
	h.mu.Unlock()
	msg := fmt.Sprintf("Pulling image %q: %s", shown, p.Status)
	if p.Layer != "" {
		msg = fmt.Sprintf("Pulling image %q: layer %s: %s", shown, p.Layer, p.Status)
	}
	if p.Total > 0 {
		msg += fmt.Sprintf(" (%.1f of %.1f MB)", float64(p.Current)/1e6, float64(p.Total)/1e6)
	}
	for _, w := range ws {
		w.event(messages.EventNormal, "Pulling", w.pulling, msg)
	}
}
