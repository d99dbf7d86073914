package cri

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/actorlet/actorlet/runtimeadapter"
)

func TestFromStatus(t *testing.T) {
	t0 := time.Unix(1000, 0)
	ns := func(d time.Duration) int64 { return t0.Add(d).UnixNano() }
	base := func(s *runtimeapi.ContainerStatus) *runtimeapi.ContainerStatus {
		s.Id, s.Metadata = "abc", &runtimeapi.ContainerMetadata{Name: "actorlet_app_p_ns_u_0"}
		s.Image = &runtimeapi.ImageSpec{Image: "docker.io/library/x:1"}
		s.Annotations = map[string]string{AnnotationImage: "x:1"}
		s.CreatedAt = ns(0)
		return s
	}
	for _, tc := range []struct {
		name string
		in   *runtimeapi.ContainerStatus
		want runtimeadapter.Container
	}{
		{"created", base(&runtimeapi.ContainerStatus{State: runtimeapi.ContainerState_CONTAINER_CREATED}),
			runtimeadapter.Container{State: runtimeadapter.StateUnknown, RawState: "created"}},
		{"running", base(&runtimeapi.ContainerStatus{State: runtimeapi.ContainerState_CONTAINER_RUNNING, StartedAt: ns(time.Second)}),
			runtimeadapter.Container{State: runtimeadapter.StateRunning, RawState: "running", StartedAt: t0.Add(time.Second)}},
		{"completed", base(&runtimeapi.ContainerStatus{State: runtimeapi.ContainerState_CONTAINER_EXITED, StartedAt: ns(time.Second), FinishedAt: ns(2 * time.Second), Reason: "Completed"}),
			runtimeadapter.Container{State: runtimeadapter.StateExited, RawState: "exited", Reason: "Completed", StartedAt: t0.Add(time.Second), FinishedAt: t0.Add(2 * time.Second)}},
		{"error without a reason", base(&runtimeapi.ContainerStatus{State: runtimeapi.ContainerState_CONTAINER_EXITED, StartedAt: ns(time.Second), FinishedAt: ns(2 * time.Second), ExitCode: 3}),
			runtimeadapter.Container{State: runtimeadapter.StateExited, RawState: "exited", ExitCode: 3, Reason: "Error", StartedAt: t0.Add(time.Second), FinishedAt: t0.Add(2 * time.Second)}},
		{"OOM killed", base(&runtimeapi.ContainerStatus{State: runtimeapi.ContainerState_CONTAINER_EXITED, StartedAt: ns(time.Second), FinishedAt: ns(2 * time.Second), ExitCode: 137, Reason: "OOMKilled"}),
			runtimeadapter.Container{State: runtimeadapter.StateExited, RawState: "exited", ExitCode: 137, Reason: "OOMKilled", StartedAt: t0.Add(time.Second), FinishedAt: t0.Add(2 * time.Second)}},
		// containerd marks a failed start exited, never started, 128:
		// Docker's view (and podsync's StartError) is created + Error.
		{"start error", base(&runtimeapi.ContainerStatus{State: runtimeapi.ContainerState_CONTAINER_EXITED, FinishedAt: ns(time.Second), ExitCode: 128, Reason: "StartError", Message: "exec: /nope: not found"}),
			runtimeadapter.Container{State: runtimeadapter.StateUnknown, RawState: "created", ExitCode: 128, Error: "exec: /nope: not found"}},
		{"unknown", base(&runtimeapi.ContainerStatus{State: runtimeapi.ContainerState_CONTAINER_UNKNOWN}),
			runtimeadapter.Container{State: runtimeadapter.StateUnknown, RawState: "unknown"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := fromStatus(tc.in)
			want := tc.want
			want.ID, want.Name, want.Image, want.CreatedAt, want.Labels = "abc", "actorlet_app_p_ns_u_0", "x:1", t0, map[string]string{}
			if got.ID != want.ID || got.Name != want.Name || got.Image != want.Image || got.State != want.State || got.RawState != want.RawState ||
				got.ExitCode != want.ExitCode || got.Reason != want.Reason || got.Error != want.Error ||
				!got.CreatedAt.Equal(want.CreatedAt) || !got.StartedAt.Equal(want.StartedAt) || !got.FinishedAt.Equal(want.FinishedAt) {
				t.Errorf("fromStatus =\n%+v\nwant\n%+v", got, want)
			}
		})
	}
	// A listed created container reads as its status does.
	l := &runtimeapi.Container{Id: "abc", Metadata: &runtimeapi.ContainerMetadata{Name: "n"}, CreatedAt: ns(0),
		State: runtimeapi.ContainerState_CONTAINER_CREATED, Labels: map[string]string{"k": "v"}}
	s := &runtimeapi.ContainerStatus{Id: "abc", Metadata: l.Metadata, CreatedAt: l.CreatedAt, State: l.State, Labels: l.Labels}
	a, b := fromListed(l), fromStatus(s)
	if a.ID != b.ID || a.Name != b.Name || a.RawState != b.RawState || !a.CreatedAt.Equal(b.CreatedAt) || a.Labels["k"] != b.Labels["k"] {
		t.Errorf("fromListed %+v != fromStatus %+v", a, b)
	}
	a.Labels["k"] = "changed"
	if l.Labels["k"] != "v" {
		t.Error("fromListed shares the listing's labels")
	}
}

func TestFromSandbox(t *testing.T) {
	md := &runtimeapi.PodSandboxMetadata{Name: "actorlet_POD_p_ns_u_0"}
	created := time.Unix(50, 0)
	ann := map[string]string{AnnotationImage: "actorlet/pause:0.1.0"}
	ready := fromSandbox("s1", md, runtimeapi.PodSandboxState_SANDBOX_READY, created.UnixNano(), nil, ann, "10.0.0.2", time.Time{})
	if ready.State != runtimeadapter.StateRunning || ready.RawState != "running" || ready.IP != "10.0.0.2" ||
		!ready.StartedAt.Equal(created) || ready.Image != "actorlet/pause:0.1.0" || ready.Name != md.Name {
		t.Errorf("ready sandbox: %+v", ready)
	}
	done := time.Unix(60, 0)
	stopped := fromSandbox("s1", md, runtimeapi.PodSandboxState_SANDBOX_NOTREADY, created.UnixNano(), nil, ann, "10.0.0.2", done)
	if stopped.State != runtimeadapter.StateExited || stopped.IP != "" || stopped.ExitCode != 0 || stopped.Reason != "Completed" || !stopped.FinishedAt.Equal(done) {
		t.Errorf("stopped sandbox: %+v", stopped)
	}
}

func TestSandboxConfig(t *testing.T) {
	meta := runtimeadapter.Meta{Node: "n", PodUID: "uid-1", PodName: "web", PodNamespace: "prod", ContainerName: "POD", Type: runtimeadapter.TypeSandbox, RestartCount: 2}
	spec := runtimeadapter.ContainerSpec{Name: "actorlet_POD_web_prod_uid-1_2", Image: "pause", Hostname: "web", Labels: meta.Labels(),
		PortBindings: []runtimeadapter.PortBinding{{HostPort: 8080, ContainerPort: 80, Protocol: "udp", HostIP: "127.0.0.1"}}}
	host := sandboxConfig(spec, "/logs", true)
	if host.Hostname != "" {
		t.Errorf("host-network sandbox hostname %q: containerd refuses one without a UTS namespace", host.Hostname)
	}
	if got := host.GetLinux().GetSecurityContext().GetNamespaceOptions().GetNetwork(); got != runtimeapi.NamespaceMode_NODE {
		t.Errorf("host network mode %v", got)
	}
	if host.Annotations[AnnotationNetwork] != networkHost || host.Annotations[AnnotationImage] != "pause" {
		t.Errorf("annotations %v", host.Annotations)
	}
	if md := host.Metadata; md.Name != spec.Name || md.Uid != "uid-1" || md.Namespace != "prod" || md.Attempt != 2 {
		t.Errorf("metadata %+v", md)
	}
	if host.LogDirectory != "/logs/prod_web_uid-1" {
		t.Errorf("log directory %s, want the kubelet's <ns>_<pod>_<uid>", host.LogDirectory)
	}
	pod := sandboxConfig(spec, "/logs", false)
	if pod.Hostname != "web" || pod.GetLinux().GetSecurityContext().GetNamespaceOptions().GetNetwork() != runtimeapi.NamespaceMode_POD {
		t.Errorf("pod-network sandbox: hostname %q, mode %v", pod.Hostname, pod.GetLinux().GetSecurityContext().GetNamespaceOptions().GetNetwork())
	}
	if len(pod.PortMappings) != 1 || pod.PortMappings[0].Protocol != runtimeapi.Protocol_UDP || pod.PortMappings[0].HostPort != 8080 || pod.PortMappings[0].HostIp != "127.0.0.1" {
		t.Errorf("port mappings %+v", pod.PortMappings)
	}
	if got := pod.GetLinux().GetSecurityContext().GetNamespaceOptions().GetPid(); got != runtimeapi.NamespaceMode_CONTAINER {
		t.Errorf("PID mode %v without shareProcessNamespace", got)
	}
	shared := spec
	shared.PidMode = runtimeadapter.PidModePod
	sh := sandboxConfig(shared, "/logs", false)
	if got := sh.GetLinux().GetSecurityContext().GetNamespaceOptions().GetPid(); got != runtimeapi.NamespaceMode_POD {
		t.Errorf("PID mode %v of a sandbox its pod shares, want POD", got)
	}
	st0 := &runtimeapi.PodSandboxStatus{Metadata: sh.Metadata, Labels: sh.Labels, Annotations: sh.Annotations}
	if got := sandboxConfigOf(st0, "/logs").GetLinux().GetSecurityContext().GetNamespaceOptions().GetPid(); got != runtimeapi.NamespaceMode_POD {
		t.Errorf("PID mode %v of the rebuilt config of a shared sandbox, want POD", got)
	}
	// The config rebuilt from the sandbox's status agrees on what
	// CreateContainer reads.
	st := &runtimeapi.PodSandboxStatus{Metadata: host.Metadata, Labels: host.Labels, Annotations: host.Annotations}
	back := sandboxConfigOf(st, "/logs")
	if back.LogDirectory != host.LogDirectory || back.GetLinux().GetSecurityContext().GetNamespaceOptions().GetNetwork() != runtimeapi.NamespaceMode_NODE {
		t.Errorf("rebuilt config %+v", back)
	}
}

func TestContainerConfig(t *testing.T) {
	meta := runtimeadapter.Meta{Node: "n", PodUID: "u", PodName: "p", PodNamespace: "ns", ContainerName: "app", Type: runtimeadapter.TypeApp, RestartCount: 3}
	spec := runtimeadapter.ContainerSpec{
		Name: "actorlet_app_p_ns_u_3", Image: "img:1", Entrypoint: []string{"/bin/x"}, Cmd: []string{"a"}, Env: []string{"A=1", "B=x=y"},
		WorkingDir: "/w", Labels: meta.Labels(), User: "1000:2000", ReadOnlyRootfs: true, NoNewPrivileges: true,
		CapAdd: []string{"CAP_NET_ADMIN"}, CapDrop: []string{"all"}, GroupAdd: []int64{2000, 4000},
		Mounts:    []runtimeadapter.Mount{{Type: runtimeadapter.MountBind, Source: "/h", Target: "/c", ReadOnly: true}},
		Resources: runtimeadapter.Resources{MemoryBytes: 1 << 20, CPUPeriod: 100000, CPUQuota: 50000, CPUShares: 512},
	}
	cfg, err := containerConfig(spec, networkHost, "")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.LogPath != "app/3.log" || cfg.Metadata.Attempt != 3 || cfg.Metadata.Name != spec.Name {
		t.Errorf("log path %q, metadata %+v", cfg.LogPath, cfg.Metadata)
	}
	if len(cfg.Envs) != 2 || cfg.Envs[1].Key != "B" || string(cfg.Envs[1].Value) != "x=y" {
		t.Errorf("envs %+v", cfg.Envs)
	}
	sc := cfg.Linux.SecurityContext
	if sc.RunAsUser.GetValue() != 1000 || sc.RunAsGroup.GetValue() != 2000 || !sc.ReadonlyRootfs || !sc.NoNewPrivs {
		t.Errorf("security context %+v", sc)
	}
	if !slices.Equal(sc.SupplementalGroups, []int64{2000, 4000}) {
		t.Errorf("supplemental groups %v, want [2000 4000]", sc.SupplementalGroups)
	}
	if sc.Capabilities.AddCapabilities[0] != "NET_ADMIN" || sc.Capabilities.DropCapabilities[0] != "ALL" {
		t.Errorf("capabilities %+v", sc.Capabilities)
	}
	if sc.Seccomp.ProfileType != runtimeapi.SecurityProfile_RuntimeDefault {
		t.Errorf("seccomp %v, want RuntimeDefault (Docker's default)", sc.Seccomp)
	}
	if sc.NamespaceOptions.Network != runtimeapi.NamespaceMode_NODE {
		t.Errorf("network mode %v in a host-network sandbox", sc.NamespaceOptions.Network)
	}
	if sc.NamespaceOptions.Pid != runtimeapi.NamespaceMode_CONTAINER {
		t.Errorf("PID mode %v without shareProcessNamespace", sc.NamespaceOptions.Pid)
	}
	withPid := spec
	withPid.PidMode = "container:sb"
	if c, _ := containerConfig(withPid, networkPod, ""); c.Linux.SecurityContext.NamespaceOptions.Pid != runtimeapi.NamespaceMode_POD {
		t.Errorf("PID mode %v of a container joining its sandbox's, want POD", c.Linux.SecurityContext.NamespaceOptions.Pid)
	}
	if r := cfg.Linux.Resources; r.MemoryLimitInBytes != 1<<20 || r.CpuQuota != 50000 || r.CpuShares != 512 {
		t.Errorf("resources %+v", r)
	}
	if m := cfg.Mounts[0]; m.HostPath != "/h" || m.ContainerPath != "/c" || !m.Readonly {
		t.Errorf("mount %+v", m)
	}

	for _, tc := range []struct {
		name  string
		edit  func(*runtimeadapter.ContainerSpec)
		error string
	}{
		{"published port", func(s *runtimeadapter.ContainerSpec) {
			s.PortBindings = []runtimeadapter.PortBinding{{HostPort: 80, ContainerPort: 80}}
		}, "ports are published by its pod's sandbox"},
		{"tmpfs", func(s *runtimeadapter.ContainerSpec) {
			s.Mounts = []runtimeadapter.Mount{{Type: runtimeadapter.MountTmpfs, Target: "/cache"}}
		}, "tmpfs mount at /cache"},
		{"user name", func(s *runtimeadapter.ContainerSpec) { s.User = "nobody" }, `user "nobody"`},
	} {
		s := spec
		tc.edit(&s)
		if _, err := containerConfig(s, networkPod, ""); err == nil || !strings.Contains(err.Error(), tc.error) || !strings.Contains(err.Error(), spec.Name) {
			t.Errorf("%s: %v, want an error naming the container and %q", tc.name, err, tc.error)
		}
	}
	s := spec
	s.Seccomp, s.AppArmor = `{"defaultAction":"SCMP_ACT_ALLOW"}`, "my-profile"
	cfg, _ = containerConfig(s, networkPod, "/state/seccomp/x.json")
	if p := cfg.Linux.SecurityContext.Seccomp; p.ProfileType != runtimeapi.SecurityProfile_Localhost || p.LocalhostRef != "/state/seccomp/x.json" {
		t.Errorf("localhost seccomp %+v", p)
	}
	if p := cfg.Linux.SecurityContext.Apparmor; p.ProfileType != runtimeapi.SecurityProfile_Localhost || p.LocalhostRef != "my-profile" {
		t.Errorf("apparmor %+v", p)
	}
	s.Seccomp, s.AppArmor = runtimeadapter.SeccompUnconfined, runtimeadapter.AppArmorUnconfined
	cfg, _ = containerConfig(s, networkPod, "")
	if cfg.Linux.SecurityContext.Seccomp.ProfileType != runtimeapi.SecurityProfile_Unconfined || cfg.Linux.SecurityContext.Apparmor.ProfileType != runtimeapi.SecurityProfile_Unconfined {
		t.Errorf("unconfined: %+v", cfg.Linux.SecurityContext)
	}
}

func TestWriteSeccomp(t *testing.T) {
	dir := t.TempDir()
	a, err := writeSeccomp(dir, `{"a":1}`)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := writeSeccomp(dir, `{"a":1}`)
	c, _ := writeSeccomp(dir, `{"a":2}`)
	if a != b || a == c || !strings.HasPrefix(a, dir) {
		t.Errorf("paths %s %s %s: one file per profile", a, b, c)
	}
}

func TestTarget(t *testing.T) {
	for in, want := range map[string]string{
		"unix:///run/containerd/containerd.sock": "unix:///run/containerd/containerd.sock",
		"/run/crio/crio.sock":                    "unix:///run/crio/crio.sock",
	} {
		if got, err := Target(in); err != nil || got != want {
			t.Errorf("Target(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "tcp://1.2.3.4:5", "unix://"} {
		if _, err := Target(bad); err == nil {
			t.Errorf("Target(%q): nil error", bad)
		}
	}
	if got, _ := Target("rel.sock"); !strings.HasPrefix(got, "unix:///") {
		t.Errorf("relative path: %q, want it made absolute (gRPC reads unix://rel as an authority)", got)
	}
}

func TestGraceAndReserved(t *testing.T) {
	for d, want := range map[time.Duration]int64{0: 0, -time.Second: 0, time.Millisecond: 1, time.Second: 1, 1500 * time.Millisecond: 2, 30 * time.Second: 30} {
		if got := graceSeconds(d); got != want {
			t.Errorf("graceSeconds(%v) = %d, want %d", d, got, want)
		}
	}
	id := strings.Repeat("ab", 32)
	err := errors.New(`failed to reserve container name "x": name "x" is reserved for "` + id + `"`)
	if got := reservedBy(err); got != id {
		t.Errorf("reservedBy = %q, want %s", got, id)
	}
	if got := reservedBy(errors.New("something else")); got != "" {
		t.Errorf("reservedBy of another error = %q", got)
	}
}
