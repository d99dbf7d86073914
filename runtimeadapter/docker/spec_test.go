package docker_test

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/actorlet/actorlet/internal/podsync"
	"github.com/actorlet/actorlet/internal/volumeprep"
	"github.com/actorlet/actorlet/runtimeadapter"
	"github.com/actorlet/actorlet/test/support/testimages"
)

// Integration tests of what ContainerSpec carries beyond the basics:
// resources, security, mounts and port bindings, built by hand or by
// podsync from a pod as the pod actor does.

func TestCreateAppliesResourcesAndSecurity(t *testing.T) {
	f := newFixture(t)
	spec := f.spec("limited")
	spec.Resources = runtimeadapter.Resources{MemoryBytes: 64 << 20, CPUPeriod: 100_000, CPUQuota: 50_000, CPUShares: 512}
	spec.User = "1000:1000"
	spec.ReadOnlyRootfs = true
	spec.CapDrop = []string{"ALL"}
	spec.CapAdd = []string{"NET_BIND_SERVICE"}
	spec.NoNewPrivileges = true
	id := f.run(spec)

	in, err := f.rt.RawInspect(f.ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	h := in.HostConfig
	if h.Memory != 64<<20 || h.MemorySwap != 64<<20 {
		t.Errorf("Memory %d MemorySwap %d, want %d both", h.Memory, h.MemorySwap, 64<<20)
	}
	if h.CPUPeriod != 100_000 || h.CPUQuota != 50_000 || h.CPUShares != 512 {
		t.Errorf("CPU period %d quota %d shares %d", h.CPUPeriod, h.CPUQuota, h.CPUShares)
	}
	// Docker records capabilities with the CAP_ prefix (older engines
	// without).
	capAdd := slices.Clone(h.CapAdd)
	for i := range capAdd {
		capAdd[i] = strings.TrimPrefix(capAdd[i], "CAP_")
	}
	if !h.ReadonlyRootfs || !slices.Equal(h.CapDrop, []string{"ALL"}) || !slices.Equal(capAdd, []string{"NET_BIND_SERVICE"}) ||
		!slices.Contains(h.SecurityOpt, "no-new-privileges") {
		t.Errorf("security: ro %v add %v drop %v opts %v", h.ReadonlyRootfs, h.CapAdd, h.CapDrop, h.SecurityOpt)
	}
	if in.Config.User != "1000:1000" {
		t.Errorf("user %q", in.Config.User)
	}
	// The limits are real: the workload runs under them.
	if c, err := f.rt.Inspect(f.ctx, id); err != nil || c.State != runtimeadapter.StateRunning {
		t.Errorf("limited container: %+v, %v; want running", c, err)
	}
}

func TestBindMountReadOnly(t *testing.T) {
	f := newFixture(t)
	dir := t.TempDir()
	bind := func(name string, readOnly bool) string {
		spec := f.spec(name, "touch", "--file", "/data/"+name)
		spec.Mounts = []runtimeadapter.Mount{{Type: runtimeadapter.MountBind, Source: dir, Target: "/data", ReadOnly: readOnly}}
		return f.run(spec)
	}
	rw, ro := bind("rw", false), bind("ro", true)

	if c := f.waitExited(rw); c.ExitCode != 0 {
		t.Errorf("touch on a read-write bind exited %d, want 0", c.ExitCode)
	}
	if _, err := os.Stat(filepath.Join(dir, "rw")); err != nil {
		t.Errorf("the file written through the bind mount is not on the host: %v", err)
	}
	if c := f.waitExited(ro); c.ExitCode != 1 {
		t.Errorf("touch on a read-only bind exited %d, want 1 (write refused)", c.ExitCode)
	}
	if _, err := os.Stat(filepath.Join(dir, "ro")); !os.IsNotExist(err) {
		t.Errorf("a file appeared through the read-only bind mount: %v", err)
	}
}

// podFixture runs a pod's containers as the pod actor would: specs from
// podsync, volumes prepared, a sandbox first.
type podFixture struct {
	*fixture
	pod  *v1.Pod
	opts podsync.SpecOptions
}

func newPodFixture(t *testing.T, pod *v1.Pod) *podFixture {
	f := newFixture(t)
	pod.Name, pod.Namespace, pod.UID = "pod", "default", types.UID(f.uid)
	return &podFixture{fixture: f, pod: pod, opts: podsync.SpecOptions{RootDir: t.TempDir()}}
}

// sandbox prepares the pod's volumes and runs its sandbox.
func (p *podFixture) sandbox() string {
	p.t.Helper()
	if err := volumeprep.Prepare(p.opts, p.pod); err != nil {
		p.t.Fatal(err)
	}
	return p.run(podsync.SandboxSpec(p.node, p.pod, testimages.PauseTag, 0))
}

// app runs the app container named name in the sandbox.
func (p *podFixture) app(sandboxID, name string) string {
	p.t.Helper()
	for i := range p.pod.Spec.Containers {
		if c := &p.pod.Spec.Containers[i]; c.Name == name {
			spec, err := podsync.AppSpecWith(p.opts, p.node, p.pod, c, sandboxID, 0)
			if err != nil {
				p.t.Fatal(err)
			}
			return p.run(spec)
		}
	}
	p.t.Fatalf("no container %s", name)
	return ""
}

func (p *podFixture) wantExit(id string, code int, what string) {
	p.t.Helper()
	if c := p.waitExited(id); c.ExitCode != code {
		p.t.Errorf("%s exited %d, want %d", what, c.ExitCode, code)
	}
}

func TestEmptyDirSharedBetweenContainers(t *testing.T) {
	workload := func(name string, args ...string) v1.Container {
		return v1.Container{Name: name, Image: testimages.TestWorkloadTag, Args: args}
	}
	writer := workload("writer", "touch", "--file", "/cache/hello")
	writer.VolumeMounts = []v1.VolumeMount{{Name: "cache", MountPath: "/cache"}}
	reader := workload("reader", "check", "--file", "/shared/hello")
	reader.VolumeMounts = []v1.VolumeMount{{Name: "cache", MountPath: "/shared", ReadOnly: true}}
	absent := workload("absent", "check", "--file", "/shared/absent")
	absent.VolumeMounts = reader.VolumeMounts
	nonRoot := workload("nonroot", "touch", "--file", "/cache/sub/by-1000")
	nonRoot.VolumeMounts = []v1.VolumeMount{{Name: "cache", MountPath: "/cache/sub", SubPath: "sub"}}
	nonRoot.SecurityContext = &v1.SecurityContext{RunAsUser: ptr.To(int64(1000)), RunAsGroup: ptr.To(int64(1000))}
	scratch := workload("scratch", "touch", "--file", "/scratch/x")
	scratch.VolumeMounts = []v1.VolumeMount{{Name: "scratch", MountPath: "/scratch"}}

	p := newPodFixture(t, &v1.Pod{Spec: v1.PodSpec{
		Volumes: []v1.Volume{
			{Name: "cache", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}},
			{Name: "scratch", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{
				Medium: v1.StorageMediumMemory, SizeLimit: ptr.To(resource.MustParse("1Mi"))}}},
		},
		Containers: []v1.Container{writer, reader, absent, nonRoot, scratch},
	}})
	sb := p.sandbox()

	p.wantExit(p.app(sb, "writer"), 0, "writer")
	p.wantExit(p.app(sb, "reader"), 0, "reader of the writer's file")
	p.wantExit(p.app(sb, "absent"), 1, "reader of a file nobody wrote")
	p.wantExit(p.app(sb, "nonroot"), 0, "uid 1000 writing into the emptyDir")
	dir := podsync.EmptyDirPath(p.opts.RootDir, p.pod.UID, "cache")
	for _, f := range []string{"hello", "sub/by-1000"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("emptyDir file %s: %v", f, err)
		}
	}

	id := p.app(sb, "scratch")
	p.wantExit(id, 0, "writer into the Memory emptyDir")
	in, err := p.rt.RawInspect(p.ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if got := in.HostConfig.Tmpfs["/scratch"]; got != "rw,exec,size=1048576" {
		t.Errorf("tmpfs /scratch options %q", got)
	}
}

func TestSandboxPublishesHostPort(t *testing.T) {
	port := freePort(t)
	p := newPodFixture(t, &v1.Pod{Spec: v1.PodSpec{Containers: []v1.Container{{
		Name: "web", Image: testimages.TestWorkloadTag, Args: []string{"--http", ":8080"},
		Ports: []v1.ContainerPort{{ContainerPort: 8080, HostPort: int32(port), HostIP: "127.0.0.1", Protocol: v1.ProtocolTCP}},
	}}}})
	sb := p.sandbox()
	p.app(sb, "web")

	in, err := p.rt.RawInspect(p.ctx, sb)
	if err != nil {
		t.Fatal(err)
	}
	if got := in.HostConfig.PortBindings["8080/tcp"]; len(got) != 1 || got[0].HostIP != "127.0.0.1" || got[0].HostPort != strconv.Itoa(port) {
		t.Errorf("sandbox port bindings %v", in.HostConfig.PortBindings)
	}
	url := fmt.Sprintf("http://127.0.0.1:%d/healthz", port)
	client := &http.Client{Timeout: time.Second}
	eventually(t, 20*time.Second, "GET "+url, func() bool {
		resp, err := client.Get(url)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
}

// freePort returns a TCP port free on 127.0.0.1 a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
