package cri_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
	"google.golang.org/grpc"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/actorlet/actorlet/runtimeadapter"
	"github.com/actorlet/actorlet/runtimeadapter/cri"
)

// recordingCRI is a CRI runtime service holding sandboxes and containers
// in memory, filtering lists by label as containerd does, and recording
// every list's label selector (nil: an unfiltered list).
type recordingCRI struct {
	runtimeapi.UnimplementedRuntimeServiceServer
	mu         sync.Mutex
	sandboxes  []*runtimeapi.PodSandbox
	containers []*runtimeapi.Container
	lists      []listCall
}

type listCall struct {
	method   string
	selector map[string]string
}

func matches(labels, sel map[string]string) bool {
	for k, v := range sel {
		if labels[k] != v {
			return false
		}
	}
	return true
}

func (f *recordingCRI) ListContainers(_ context.Context, req *runtimeapi.ListContainersRequest) (*runtimeapi.ListContainersResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	sel := req.GetFilter().GetLabelSelector()
	f.lists = append(f.lists, listCall{"ListContainers", maps.Clone(sel)})
	var out []*runtimeapi.Container
	for _, c := range f.containers {
		if matches(c.GetLabels(), sel) {
			out = append(out, c)
		}
	}
	return &runtimeapi.ListContainersResponse{Containers: out}, nil
}

func (f *recordingCRI) ListPodSandbox(_ context.Context, req *runtimeapi.ListPodSandboxRequest) (*runtimeapi.ListPodSandboxResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	sel := req.GetFilter().GetLabelSelector()
	f.lists = append(f.lists, listCall{"ListPodSandbox", maps.Clone(sel)})
	var out []*runtimeapi.PodSandbox
	for _, s := range f.sandboxes {
		if matches(s.GetLabels(), sel) {
			out = append(out, s)
		}
	}
	return &runtimeapi.ListPodSandboxResponse{Items: out}, nil
}

func (f *recordingCRI) RunPodSandbox(_ context.Context, req *runtimeapi.RunPodSandboxRequest) (*runtimeapi.RunPodSandboxResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	id := fmt.Sprintf("%064x", len(f.sandboxes)+1)
	f.sandboxes = append(f.sandboxes, &runtimeapi.PodSandbox{Id: id, Metadata: req.GetConfig().GetMetadata(),
		Labels: req.GetConfig().GetLabels(), State: runtimeapi.PodSandboxState_SANDBOX_READY})
	return &runtimeapi.RunPodSandboxResponse{PodSandboxId: id}, nil
}

func (f *recordingCRI) takeLists() []listCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	l := f.lists
	f.lists = nil
	return l
}

// serveRecording serves f on a socket under t's temporary directory and
// returns an adapter connected to it.
func serveRecording(t *testing.T, f *recordingCRI, log ...*zap.Logger) *cri.Runtime {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "cri.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	runtimeapi.RegisterRuntimeServiceServer(srv, f)
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(srv.Stop)
	opts := cri.Options{Endpoint: "unix://" + sock, LogRoot: t.TempDir()}
	if len(log) > 0 {
		opts.Logger = log[0]
	}
	rt, err := cri.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	return rt
}

// TestDebugLogTimesEachCall: at debug level every CRI call is logged with
// its method, duration and error (how a pod's start is traced); above
// debug none is.
func TestDebugLogTimesEachCall(t *testing.T) {
	for _, level := range []zapcore.Level{zapcore.DebugLevel, zapcore.InfoLevel} {
		t.Run(level.String(), func(t *testing.T) {
			core, logs := observer.New(level)
			rt := serveRecording(t, &recordingCRI{}, zap.New(core))
			sandbox, _ := pod("n1", "web")
			if _, err := rt.Create(t.Context(), sandbox); err != nil {
				t.Fatal(err)
			}
			var methods []string
			for _, e := range logs.FilterMessage("cri call").All() {
				f := e.ContextMap()
				if _, ok := f["took"]; !ok {
					t.Errorf("cri call %v: no duration", f)
				}
				methods = append(methods, fmt.Sprint(f["method"]))
			}
			want := []string{"ListContainers", "ListPodSandbox", "RunPodSandbox"}
			if level != zapcore.DebugLevel {
				want = nil
			}
			if !slices.Equal(methods, want) {
				t.Errorf("logged calls at %s: %v; want %v", level, methods, want)
			}
		})
	}
}

// TestCreateChecksTheNameInItsPod: Create's check that the name is free
// lists only the containers and sandboxes of the spec's pod (a label
// filter the runtime applies), never every one on the runtime — a pod's
// start waited for two full listings before its RunPodSandbox — and still
// finds the name taken in that pod (adoption after a crash). A spec
// without a pod UID is checked against every container and sandbox.
func TestCreateChecksTheNameInItsPod(t *testing.T) {
	f := &recordingCRI{}
	rt := serveRecording(t, f)
	ctx := t.Context()
	// Other pods' sandboxes and containers, as on a busy node.
	for i := range 3 {
		other, app := pod("n1", fmt.Sprintf("other%d", i))
		if _, err := rt.Create(ctx, other); err != nil {
			t.Fatal(err)
		}
		f.containers = append(f.containers, &runtimeapi.Container{Id: fmt.Sprintf("c%d", i),
			Metadata: &runtimeapi.ContainerMetadata{Name: app.Name}, Labels: app.Labels})
	}
	f.takeLists()

	sandbox, _ := pod("n1", "web")
	uid := sandbox.Labels[runtimeadapter.LabelPodUID]
	id, err := rt.Create(ctx, sandbox)
	if err != nil {
		t.Fatalf("create sandbox %s: %v", sandbox.Name, err)
	}
	lists := f.takeLists()
	if len(lists) == 0 {
		t.Fatalf("create sandbox %s: no list checked its name", sandbox.Name)
	}
	for _, l := range lists {
		if l.selector[runtimeadapter.LabelPodUID] != uid {
			t.Errorf("create sandbox %s: %s with selector %v; want only pod %s's (label %s)", sandbox.Name, l.method, l.selector, uid, runtimeadapter.LabelPodUID)
		}
	}

	// The name is taken now: the second create names the first.
	_, err = rt.Create(ctx, sandbox)
	var conflict *runtimeadapter.NameConflictError
	if !errors.As(err, &conflict) || conflict.ID != id {
		t.Errorf("second create of %s: %v; want a NameConflictError naming %s", sandbox.Name, err, id)
	}
	for _, l := range f.takeLists() {
		if l.selector[runtimeadapter.LabelPodUID] != uid {
			t.Errorf("second create of %s: %s with selector %v; want only pod %s's", sandbox.Name, l.method, l.selector, uid)
		}
	}

	// A spec without a pod: its name is checked against everything.
	bare := runtimeadapter.ContainerSpec{Name: "actorlet_POD_other0_default_n1-other_0", Labels: map[string]string{
		runtimeadapter.LabelContainerType: string(runtimeadapter.TypeSandbox)}, NetworkMode: "host"}
	if _, err := rt.Create(ctx, bare); !errors.As(err, &conflict) || conflict.ID == "" {
		t.Errorf("create of %s, no pod UID, over another pod's sandbox of that name: %v; want a NameConflictError", bare.Name, err)
	}
	for _, l := range f.takeLists() {
		if len(l.selector) != 0 {
			t.Errorf("create of %s, no pod UID: %s with selector %v; want every one", bare.Name, l.method, l.selector)
		}
	}
}
