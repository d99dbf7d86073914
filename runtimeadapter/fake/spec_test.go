package fake

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/actorlet/actorlet/runtimeadapter"
)

func TestCreateRecordsSpec(t *testing.T) {
	ctx := context.Background()
	rt := New(WithImages(image))
	s := spec("u1", "web")
	s.Env = []string{"A=1"}
	s.PortBindings = []runtimeadapter.PortBinding{{HostIP: "127.0.0.1", HostPort: 8080, ContainerPort: 80, Protocol: "tcp"}}
	s.Mounts = []runtimeadapter.Mount{
		{Type: runtimeadapter.MountBind, Source: "/var/lib/actorlet/pods/u1/volumes/empty-dir/cache", Target: "/cache"},
		{Type: runtimeadapter.MountTmpfs, Target: "/tmp", SizeBytes: 1 << 20, ReadOnly: true},
	}
	s.Resources = runtimeadapter.Resources{MemoryBytes: 64 << 20, CPUPeriod: 100000, CPUQuota: 50000, CPUShares: 512}
	s.User = "1000:1000"
	s.ReadOnlyRootfs = true
	s.Privileged = true
	s.CapAdd = []string{"NET_ADMIN"}
	s.CapDrop = []string{"ALL"}
	s.NoNewPrivileges = true
	s.GroupAdd = []int64{2000, 4000}
	want := cloneSpec(s)

	id, err := rt.Create(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	// The fake keeps its own copy.
	s.PortBindings[0].HostPort = 1
	s.Mounts[0].ReadOnly = true
	s.CapAdd[0] = "SYS_ADMIN"
	s.CapDrop[0] = "NONE"
	s.GroupAdd[0] = 1

	for _, ref := range []string{id, want.Name} {
		got, err := rt.Spec(ref)
		if err != nil {
			t.Fatalf("Spec(%s): %v", ref, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("Spec(%s) =\n%+v\nwant\n%+v", ref, got, want)
		}
		got.Mounts[0].Target = "/mutated" // and hands out copies
	}
	if got, _ := rt.Spec(id); got.Mounts[0].Target != "/cache" {
		t.Errorf("Spec handed out the fake's own slice")
	}
	if n := rt.CallCount(MethodInspect); n != 0 {
		t.Errorf("Spec logged %d Inspect calls", n)
	}
}

func TestSpecMissing(t *testing.T) {
	rt := New()
	_, err := rt.Spec("nope")
	wantErrIs(t, err, runtimeadapter.ErrNotFound)
}

func TestCreateRefusesPortsOnJoinedContainer(t *testing.T) {
	ctx := context.Background()
	rt := New(WithImages(image))
	s := spec("u1", "web")
	s.NetworkMode = "container:abc"
	s.PortBindings = []runtimeadapter.PortBinding{{HostPort: 8080, ContainerPort: 80, Protocol: "tcp"}}
	_, err := rt.Create(ctx, s)
	if err == nil || !strings.Contains(err.Error(), "port publishing") {
		t.Fatalf("Create = %v, want a port publishing conflict", err)
	}
	if len(rt.Containers()) != 0 {
		t.Errorf("failed Create left a container")
	}
	// The sandbox itself may publish ports.
	s.NetworkMode = ""
	if _, err := rt.Create(ctx, s); err != nil {
		t.Errorf("Create with ports on the default network: %v", err)
	}
}

// A "container:<id>" PID mode (shareProcessNamespace) joins a running
// container at start, as Docker checks it: a missing or stopped one fails
// the start.
func TestStartJoinsPIDNamespace(t *testing.T) {
	ctx := context.Background()
	rt := New(WithImages(image))
	sb, err := rt.Create(ctx, spec("u1", "POD"))
	if err != nil {
		t.Fatal(err)
	}
	s := spec("u1", "app")
	s.PidMode = "container:" + sb
	app, err := rt.Create(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.Start(ctx, app); err == nil || !strings.Contains(err.Error(), "cannot join PID namespace of a non running container") {
		t.Fatalf("Start joining a created sandbox's PID namespace: %v, want Docker's refusal", err)
	}
	if err := rt.Start(ctx, sb); err != nil {
		t.Fatal(err)
	}
	s.Name = "app-2"
	app2, err := rt.Create(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.Start(ctx, app2); err != nil {
		t.Fatalf("Start joining a running sandbox's PID namespace: %v", err)
	}
	if got, _ := rt.Spec(app2); got.PidMode != "container:"+sb {
		t.Errorf("recorded PID mode %q", got.PidMode)
	}
}
