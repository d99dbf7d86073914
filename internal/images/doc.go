// Package images decides whether a container's image is pulled before the
// container starts, the way the kubelet's image manager does, on top of a
// runtimeadapter.ImageService.
//
// Manager.Ensure applies the container's imagePullPolicy:
//
//   - Never: the image must be present; otherwise ErrImageNeverPull.
//   - IfNotPresent: pull only when the image is absent.
//   - Always: pull on every Ensure, i.e. every container start, whether or
//     not the image is present. As with the kubelet, a failed pull fails
//     the start even when an older copy of the image is present.
//   - "" (not defaulted): Always for a ":latest" image or one with neither
//     tag nor digest, else IfNotPresent (DefaultPolicy), as Kubernetes
//     defaults it.
//
// Pulls of one image are shared: while a pull of an image is in flight,
// every Ensure that needs the same image (by its normalised name, so
// "busybox" and "docker.io/library/busybox:latest" are one image) waits for
// that pull and gets its result; golang.org/x/sync/singleflight does the
// bookkeeping. No lock is held during a pull, so a slow or hung pull only
// delays the callers that need that image. A pull runs on the Manager's
// context, not on a caller's: a caller that gives up (its ctx ends) leaves
// the pull running for the others and for its own next attempt; pulls end
// at their timeout (WithPullTimeout, default 10 min) or at Close.
//
// A failed pull puts its image in back-off (ImagePullBackOff): the next
// pull of that image may start 10 s after the failure, then 20 s, 40 s …
// capped at 300 s after each further failure (the kubelet's image back-off;
// WithBackOff changes it). Meanwhile Ensure returns a *BackOffError at once,
// without contacting the runtime or the registry; it carries the time the
// next pull is allowed, so a caller can requeue itself then. A successful
// pull resets the back-off; a back-off whose last failure is older than
// twice the cap (600 s) is forgotten, as the kubelet forgets it.
//
// The back-off is kept per image, not per pod and image as the kubelet
// keeps it. The reason: pulls are already shared per image, and a registry
// that fails for one pod fails for all of them; with one record per image,
// N pods that use a broken image cause one pull per back-off period instead
// of N, and a pod that arrives during the back-off reports
// ImagePullBackOff at once instead of trying again. The price is that a new
// pod's first attempt may wait for a back-off that an earlier pod's
// failures started (at most 300 s).
//
// Errors carry the kubelet's waiting reason; Reason extracts it.
package images
