package fake

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"weak"

	"github.com/actorlet/actorlet/runtimeadapter"
)

// Method names of runtimeadapter.ImageService, for the fault injectors
// (InjectError, SetDelay, Hang) and the call log. A Hang on MethodPullImage
// or MethodImagePresent matches the image reference as given.
const (
	MethodImagePresent = "ImagePresent"
	MethodPullImage    = "PullImage"
)

func init() {
	methods[MethodImagePresent] = true
	methods[MethodPullImage] = true
}

var _ runtimeadapter.ImageService = (*Runtime)(nil)

// pullState is what a Runtime knows about its registry: the images a pull
// finds. It is kept beside the Runtime (in pullStates) rather than in it,
// and guarded by the Runtime's mu.
type pullState struct {
	pullable map[string]bool // normalised refs
}

var (
	pullStatesMu sync.Mutex
	// pullStates holds each Runtime's pullState. The weak key lets a
	// Runtime be collected; a cleanup then drops its entry.
	pullStates = map[weak.Pointer[Runtime]]*pullState{}
)

// pulls returns r's pullState, creating it on first use.
func (r *Runtime) pulls() *pullState {
	key := weak.Make(r)
	pullStatesMu.Lock()
	defer pullStatesMu.Unlock()
	st := pullStates[key]
	if st == nil {
		st = &pullState{pullable: make(map[string]bool)}
		pullStates[key] = st
		runtime.AddCleanup(r, func(k weak.Pointer[Runtime]) {
			pullStatesMu.Lock()
			defer pullStatesMu.Unlock()
			delete(pullStates, k)
		}, key)
	}
	return st
}

// WithPullable makes refs pullable, as AddPullable does.
func WithPullable(refs ...string) Option {
	return func(r *Runtime) { r.AddPullable(refs...) }
}

// AddPullable makes refs pullable: PullImage then succeeds for them and
// makes them present (a reference without tag means ":latest"). It does
// not make them present by itself.
func (r *Runtime) AddPullable(refs ...string) {
	st := r.pulls()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, ref := range refs {
		st.pullable[normalizeImage(ref)] = true
	}
}

// PullCount returns how many PullImage calls for ref (compared after
// adding ":latest" to a reference without tag) are in the call log, failed
// and still running ones included; ResetCalls sets it back to 0.
func (r *Runtime) PullCount(ref string) int {
	ref = normalizeImage(ref)
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, c := range r.calls {
		if c.Method == MethodPullImage && normalizeImage(c.Arg) == ref {
			n++
		}
	}
	return n
}

// ImagePresent reports whether ref is present (AddImage, WithImages, a
// successful PullImage or EnsureImage). Faults injected for
// MethodImagePresent apply; it implements runtimeadapter.ImageService.
func (r *Runtime) ImagePresent(ctx context.Context, ref string) (present bool, err error) {
	call, err := r.begin(ctx, Call{Method: MethodImagePresent, Arg: ref})
	defer func() { r.finish(call, err) }()
	if err != nil {
		return false, err
	}
	r.mu.Lock()
	present = r.images[normalizeImage(ref)]
	r.mu.Unlock()
	if err := r.faultAfter(MethodImagePresent); err != nil {
		return false, err
	}
	return present, nil
}

// PullImage "pulls" ref: it succeeds for a pullable image (AddPullable,
// WithPullable) and, with AutoImages, for any image, making it present and
// reporting one progress message ("Downloaded newer image for <ref>") to
// progress when it is not nil. Otherwise it fails with an error wrapping
// runtimeadapter.ErrNotFound that names the image, as a registry without
// that tag does. Faults injected for MethodPullImage apply: SetDelay for a
// slow pull, Hang for one that never ends (until ctx does), InjectError
// for a failing one (InjectErrorAfter: the image becomes present but the
// call fails). Every call is logged and counted by PullCount. It
// implements runtimeadapter.ImageService.
func (r *Runtime) PullImage(ctx context.Context, ref string, progress func(runtimeadapter.PullProgress)) (err error) {
	call, err := r.begin(ctx, Call{Method: MethodPullImage, Arg: ref})
	defer func() { r.finish(call, err) }()
	if err != nil {
		return err
	}
	st := r.pulls()
	norm := normalizeImage(ref)
	r.mu.Lock()
	ok := r.autoImages || st.pullable[norm]
	if ok {
		r.images[norm] = true
	}
	r.mu.Unlock()
	if !ok {
		return fmt.Errorf("fake: pull image %q: manifest unknown: %w", ref, runtimeadapter.ErrNotFound)
	}
	if progress != nil {
		progress(runtimeadapter.PullProgress{Status: "Downloaded newer image for " + norm})
	}
	return r.faultAfter(MethodPullImage)
}
