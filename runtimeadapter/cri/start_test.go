package cri_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/actorlet/actorlet/runtimeadapter"
	"github.com/actorlet/actorlet/runtimeadapter/cri"
	"github.com/actorlet/actorlet/test/support/testimages"
)

// startCRI is a CRI runtime and image service in memory that reserves
// names as containerd 1.6 does (a sandbox's name among all sandboxes, a
// container's within its sandbox: "name ... is reserved for <id>"), and
// logs every call's method.
type startCRI struct {
	runtimeapi.UnimplementedRuntimeServiceServer
	runtimeapi.UnimplementedImageServiceServer
	name string // the runtime's name in Version
	mu   sync.Mutex
	sbs  map[string]*runtimeapi.PodSandbox
	cs   map[string]*runtimeapi.Container
	// sbOf is a container's sandbox.
	sbOf   map[string]string
	images map[string]bool
	calls  []string
	n      int
}

func newStartCRI(name string) *startCRI {
	return &startCRI{name: name, sbs: map[string]*runtimeapi.PodSandbox{}, cs: map[string]*runtimeapi.Container{},
		sbOf: map[string]string{}, images: map[string]bool{testimages.TestWorkloadTag: true}}
}

func (f *startCRI) log(_ context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	f.mu.Lock()
	f.calls = append(f.calls, info.FullMethod[strings.LastIndexByte(info.FullMethod, '/')+1:])
	f.mu.Unlock()
	return h(context.Background(), req)
}

func (f *startCRI) takeCalls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.calls
	f.calls = nil
	return c
}

func (f *startCRI) id() string { f.n++; return fmt.Sprintf("%064x", f.n) }

func (f *startCRI) Version(context.Context, *runtimeapi.VersionRequest) (*runtimeapi.VersionResponse, error) {
	return &runtimeapi.VersionResponse{RuntimeName: f.name, RuntimeVersion: "1.6.20", RuntimeApiVersion: "v1"}, nil
}

func (f *startCRI) RunPodSandbox(_ context.Context, req *runtimeapi.RunPodSandboxRequest) (*runtimeapi.RunPodSandboxResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	md := req.GetConfig().GetMetadata()
	for id, sb := range f.sbs {
		if sb.GetMetadata().GetName() == md.GetName() && sb.GetMetadata().GetAttempt() == md.GetAttempt() {
			return nil, status.Errorf(codes.Unknown, "failed to reserve sandbox name %q: name %q is reserved for %q", md.GetName(), md.GetName(), id)
		}
	}
	id := f.id()
	f.sbs[id] = &runtimeapi.PodSandbox{Id: id, Metadata: md, Labels: req.GetConfig().GetLabels(),
		Annotations: req.GetConfig().GetAnnotations(), State: runtimeapi.PodSandboxState_SANDBOX_READY}
	return &runtimeapi.RunPodSandboxResponse{PodSandboxId: id}, nil
}

func (f *startCRI) PodSandboxStatus(_ context.Context, req *runtimeapi.PodSandboxStatusRequest) (*runtimeapi.PodSandboxStatusResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	sb, ok := f.sbs[req.GetPodSandboxId()]
	if !ok {
		return nil, status.Errorf(codes.NotFound, "sandbox %s not found", req.GetPodSandboxId())
	}
	return &runtimeapi.PodSandboxStatusResponse{Status: &runtimeapi.PodSandboxStatus{Id: sb.Id, Metadata: sb.Metadata,
		State: sb.State, Labels: sb.Labels, Annotations: sb.Annotations}}, nil
}

func (f *startCRI) StopPodSandbox(_ context.Context, req *runtimeapi.StopPodSandboxRequest) (*runtimeapi.StopPodSandboxResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	sb, ok := f.sbs[req.GetPodSandboxId()]
	if !ok {
		return nil, status.Errorf(codes.NotFound, "sandbox %s not found", req.GetPodSandboxId())
	}
	sb.State = runtimeapi.PodSandboxState_SANDBOX_NOTREADY
	return &runtimeapi.StopPodSandboxResponse{}, nil
}

func (f *startCRI) ListPodSandbox(_ context.Context, req *runtimeapi.ListPodSandboxRequest) (*runtimeapi.ListPodSandboxResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []*runtimeapi.PodSandbox
	for _, sb := range f.sbs {
		if st := req.GetFilter().GetState(); st != nil && st.State != sb.State {
			continue
		}
		if matches(sb.Labels, req.GetFilter().GetLabelSelector()) {
			out = append(out, sb)
		}
	}
	return &runtimeapi.ListPodSandboxResponse{Items: out}, nil
}

func (f *startCRI) ListContainers(_ context.Context, req *runtimeapi.ListContainersRequest) (*runtimeapi.ListContainersResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []*runtimeapi.Container
	for _, c := range f.cs {
		if matches(c.Labels, req.GetFilter().GetLabelSelector()) {
			out = append(out, c)
		}
	}
	return &runtimeapi.ListContainersResponse{Containers: out}, nil
}

func (f *startCRI) CreateContainer(_ context.Context, req *runtimeapi.CreateContainerRequest) (*runtimeapi.CreateContainerResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	sid := req.GetPodSandboxId()
	if _, ok := f.sbs[sid]; !ok {
		return nil, status.Errorf(codes.NotFound, "sandbox %s not found", sid)
	}
	md := req.GetConfig().GetMetadata()
	for id, c := range f.cs {
		if f.sbOf[id] == sid && c.GetMetadata().GetName() == md.GetName() && c.GetMetadata().GetAttempt() == md.GetAttempt() {
			return nil, status.Errorf(codes.Unknown, "failed to reserve container name %q: name %q is reserved for %q", md.GetName(), md.GetName(), id)
		}
	}
	if img := req.GetConfig().GetImage().GetImage(); !f.images[img] {
		return nil, status.Errorf(codes.NotFound, "failed to resolve image %q: not found", img)
	}
	id := f.id()
	f.cs[id] = &runtimeapi.Container{Id: id, PodSandboxId: sid, Metadata: md, Labels: req.GetConfig().GetLabels(),
		Image: req.GetConfig().GetImage(), State: runtimeapi.ContainerState_CONTAINER_CREATED}
	f.sbOf[id] = sid
	return &runtimeapi.CreateContainerResponse{ContainerId: id}, nil
}

func (f *startCRI) StartContainer(_ context.Context, req *runtimeapi.StartContainerRequest) (*runtimeapi.StartContainerResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.cs[req.GetContainerId()]
	if !ok {
		return nil, status.Errorf(codes.NotFound, "container %s not found", req.GetContainerId())
	}
	if c.State != runtimeapi.ContainerState_CONTAINER_CREATED {
		return nil, status.Errorf(codes.Unknown, "container %s is in %s state", c.Id, c.State)
	}
	c.State = runtimeapi.ContainerState_CONTAINER_RUNNING
	return &runtimeapi.StartContainerResponse{}, nil
}

func (f *startCRI) ContainerStatus(_ context.Context, req *runtimeapi.ContainerStatusRequest) (*runtimeapi.ContainerStatusResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.cs[req.GetContainerId()]
	if !ok {
		return nil, status.Errorf(codes.NotFound, "container %s not found", req.GetContainerId())
	}
	return &runtimeapi.ContainerStatusResponse{Status: &runtimeapi.ContainerStatus{Id: c.Id, Metadata: c.Metadata,
		State: c.State, Labels: c.Labels, Image: c.Image, StartedAt: 1}}, nil
}

func (f *startCRI) ImageStatus(_ context.Context, req *runtimeapi.ImageStatusRequest) (*runtimeapi.ImageStatusResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.images[req.GetImage().GetImage()] {
		return &runtimeapi.ImageStatusResponse{}, nil
	}
	return &runtimeapi.ImageStatusResponse{Image: &runtimeapi.Image{Id: "sha256:1", RepoTags: []string{req.GetImage().GetImage()}}}, nil
}

// serveStart serves f on a socket under t's temporary directory; connect
// makes an adapter on it (as an agent's start: a new one knows nothing).
func serveStart(t *testing.T, f *startCRI) (connect func() *cri.Runtime) {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "cri.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer(grpc.UnaryInterceptor(f.log))
	runtimeapi.RegisterRuntimeServiceServer(srv, f)
	runtimeapi.RegisterImageServiceServer(srv, f)
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(srv.Stop)
	logs := t.TempDir()
	return func() *cri.Runtime {
		rt, err := cri.New(cri.Options{Endpoint: "unix://" + sock, LogRoot: logs})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { rt.Close() })
		// The pod actor lists before it plans; the list learns the
		// runtime's name.
		if _, err := rt.List(t.Context(), runtimeadapter.ListOptions{Node: "n1", All: true}); err != nil {
			t.Fatal(err)
		}
		f.takeCalls()
		return rt
	}
}

// startPod creates and starts sandbox and app as the executor does.
func startPod(ctx context.Context, rt *cri.Runtime, sandbox, app runtimeadapter.ContainerSpec) (sid, id string, err error) {
	if sid, err = rt.Create(ctx, sandbox); err != nil {
		return "", "", fmt.Errorf("create sandbox: %w", err)
	}
	if err = rt.Start(ctx, sid); err != nil {
		return "", "", fmt.Errorf("start sandbox: %w", err)
	}
	if id, err = rt.Create(ctx, app); err != nil {
		return "", "", fmt.Errorf("create app: %w", err)
	}
	if err = rt.Start(ctx, id); err != nil {
		return "", "", fmt.Errorf("start app: %w", err)
	}
	return sid, id, nil
}

// TestPodStartMakesTheKubeletsCalls: on containerd, a host-network pod's
// start (its sandbox's create and start, its app's create and start) is
// RunPodSandbox, CreateContainer, StartContainer, as the kubelet's
// SyncPod (which adds PodSandboxStatus for the pod's IP, and whose
// ImageStatus the executor's image check is): no name-check lists (the
// runtime reserves names), no lookup of the sandbox the adapter just ran,
// no ImageStatus of an image CreateContainer finds, no status before a
// start. Before, the same start made 13 calls. A name taken is still a
// NameConflictError naming the holder (adoption), an absent image still
// ErrNotFound, and an adapter that did not run the sandbox (a restarted
// agent) still finds it; a runtime that is not containerd keeps the name
// check.
func TestPodStartMakesTheKubeletsCalls(t *testing.T) {
	ctx := t.Context()
	f := newStartCRI("containerd")
	connect := serveStart(t, f)
	rt := connect()

	sandbox, app := pod("n1", "web")
	sid, id, err := startPod(ctx, rt, sandbox, app)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"RunPodSandbox", "CreateContainer", "StartContainer"}
	if got := f.takeCalls(); !slices.Equal(got, want) {
		t.Errorf("a pod's start called %v; want %v", got, want)
	}

	// The names are taken: the runtime's reservation names the holders.
	var conflict *runtimeadapter.NameConflictError
	if _, err := rt.Create(ctx, app); !errors.As(err, &conflict) || conflict.ID != id {
		t.Errorf("second create of app %s: %v; want a NameConflictError naming %s", app.Name, err, id)
	}
	if _, err := rt.Create(ctx, sandbox); !errors.As(err, &conflict) || conflict.ID != sid {
		t.Errorf("second create of sandbox %s: %v; want a NameConflictError naming %s", sandbox.Name, err, sid)
	}
	// A sandbox started again asks the runtime (it may have stopped).
	f.takeCalls()
	if err := rt.Start(ctx, sid); err != nil {
		t.Errorf("second start of sandbox %s: %v", sid, err)
	}
	if got := f.takeCalls(); len(got) == 0 {
		t.Errorf("second start of sandbox %s made no call; want its status asked", sid)
	}

	// An absent image: ErrNotFound naming it.
	_, missing := pod("n1", "web")
	missing.Name, missing.Image = missing.Name+"-2", "absent:1"
	if _, err := rt.Create(ctx, missing); !errors.Is(err, runtimeadapter.ErrNotFound) || !strings.Contains(err.Error(), "absent:1") {
		t.Errorf("create from an absent image: %v; want ErrNotFound naming it", err)
	}

	// A restarted agent knows no sandbox: the app's create finds it (and
	// checks its name), then goes into it.
	rt2 := connect()
	next := app
	next.Name += "-restarted"
	id2, err := rt2.Create(ctx, next)
	if err != nil {
		t.Fatalf("create of app %s after a restart: %v", next.Name, err)
	}
	if got := f.sbOf[id2]; got != sid {
		t.Errorf("app %s created in sandbox %s; want its pod's %s", next.Name, got, sid)
	}
	if got := f.takeCalls(); !slices.Contains(got, "ListPodSandbox") {
		t.Errorf("create after a restart called %v; want its sandbox looked up", got)
	}
	if _, err := rt2.Create(ctx, app); !errors.As(err, &conflict) || conflict.ID != id {
		t.Errorf("create of app %s after a restart: %v; want a NameConflictError naming %s", app.Name, err, id)
	}

	// A stopped sandbox is forgotten: the next create looks again.
	if err := rt.Stop(ctx, sid, 0); err != nil {
		t.Fatal(err)
	}
	f.takeCalls()
	other := app
	other.Name += "-after-stop"
	_, _ = rt.Create(ctx, other)
	if got := f.takeCalls(); !slices.Contains(got, "ListPodSandbox") {
		t.Errorf("create after the sandbox's stop called %v; want the sandbox looked up", got)
	}

	// Not containerd: the name is checked by a lookup.
	g := newStartCRI("cri-o")
	rt3 := serveStart(t, g)()
	sandbox, app = pod("n1", "db")
	if _, _, err := startPod(ctx, rt3, sandbox, app); err != nil {
		t.Fatal(err)
	}
	if got := g.takeCalls(); !slices.Contains(got, "ListContainers") {
		t.Errorf("a pod's start on cri-o called %v; want the names checked by lists", got)
	}
}
