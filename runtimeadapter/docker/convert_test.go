package docker

import (
	"archive/tar"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/network"

	"github.com/actorlet/actorlet/runtimeadapter"
)

func TestMapState(t *testing.T) {
	cases := map[string]runtimeadapter.State{
		"running":    runtimeadapter.StateRunning,
		"exited":     runtimeadapter.StateExited,
		"dead":       runtimeadapter.StateExited,
		"created":    runtimeadapter.StateUnknown,
		"paused":     runtimeadapter.StateUnknown,
		"restarting": runtimeadapter.StateUnknown,
		"removing":   runtimeadapter.StateUnknown,
		"":           runtimeadapter.StateUnknown,
	}
	for raw, want := range cases {
		if got := mapState(raw); got != want {
			t.Errorf("mapState(%q) = %q, want %q", raw, got, want)
		}
	}
}

func TestGraceSeconds(t *testing.T) {
	cases := map[time.Duration]int{
		-time.Second:                          0,
		0:                                     0,
		time.Nanosecond:                       1,
		time.Second:                           1,
		time.Second + time.Millisecond:        2,
		30 * time.Second:                      30,
		29*time.Second + 999*time.Millisecond: 30,
	}
	for d, want := range cases {
		if got := graceSeconds(d); got != want {
			t.Errorf("graceSeconds(%v) = %d, want %d", d, got, want)
		}
	}
}

func TestFromInspectExited(t *testing.T) {
	in := container.InspectResponse{
		ContainerJSONBase: &container.ContainerJSONBase{
			ID:      "abc",
			Name:    "/actorlet_x",
			Image:   "sha256:123",
			Created: "2024-01-02T03:04:05.123456789Z",
			State: &container.State{
				Status: "exited", ExitCode: 137, OOMKilled: true,
				StartedAt:  "2024-01-02T03:04:06Z",
				FinishedAt: "2024-01-02T03:04:07Z",
			},
		},
		Config: &container.Config{Image: "busybox:1", Labels: map[string]string{"a": "b"}},
		NetworkSettings: &container.NetworkSettings{Networks: map[string]*network.EndpointSettings{
			"zz":     {IPAddress: "10.0.0.9"},
			"bridge": {IPAddress: "172.17.0.2"},
		}},
	}
	c := fromInspect(in)
	if c.ID != "abc" || c.Name != "actorlet_x" || c.Image != "busybox:1" {
		t.Errorf("identity: %+v", c)
	}
	if c.State != runtimeadapter.StateExited || c.RawState != "exited" || c.ExitCode != 137 || c.Reason != "OOMKilled" {
		t.Errorf("state: %+v", c)
	}
	if c.CreatedAt.IsZero() || c.StartedAt.IsZero() || !c.FinishedAt.After(c.StartedAt) {
		t.Errorf("times: %+v", c)
	}
	if c.IP != "172.17.0.2" {
		t.Errorf("IP = %q, want the bridge address", c.IP)
	}
	if c.Labels["a"] != "b" {
		t.Errorf("labels = %v", c.Labels)
	}
}

func TestFromInspectRunningHasNoReason(t *testing.T) {
	c := fromInspect(container.InspectResponse{ContainerJSONBase: &container.ContainerJSONBase{
		State: &container.State{Status: "running", StartedAt: "2024-01-02T03:04:06Z", FinishedAt: "0001-01-01T00:00:00Z"},
	}})
	if c.Reason != "" || !c.FinishedAt.IsZero() || c.StartedAt.IsZero() {
		t.Errorf("running container: %+v", c)
	}
}

func TestExitReason(t *testing.T) {
	if r := exitReason(false, 0); r != "Completed" {
		t.Errorf("exit 0: %q", r)
	}
	if r := exitReason(false, 3); r != "Error" {
		t.Errorf("exit 3: %q", r)
	}
	if r := exitReason(true, 137); r != "OOMKilled" {
		t.Errorf("oom: %q", r)
	}
}

func TestDrainStream(t *testing.T) {
	ok := `{"stream":"Step 1/2"}` + "\n" + `{"stream":"done"}`
	if err := drainStream(strings.NewReader(ok)); err != nil {
		t.Errorf("clean stream: %v", err)
	}
	bad := `{"stream":"Step 1/2"}{"errorDetail":{"message":"boom"},"error":"boom"}{"stream":"never"}`
	if err := drainStream(strings.NewReader(bad)); err == nil || err.Error() != "boom" {
		t.Errorf("error stream: %v", err)
	}
	if err := drainStream(strings.NewReader(`{"stream":`)); err == nil {
		t.Error("truncated stream: no error")
	}
}

func TestTarContextModes(t *testing.T) {
	buf, err := tarContext(map[string][]byte{Dockerfile: []byte("FROM scratch\n"), "bin": []byte("x")})
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(buf)
	modes := map[string]int64{}
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		modes[h.Name] = h.Mode
	}
	if modes[Dockerfile] != 0o644 || modes["bin"] != 0o755 {
		t.Errorf("modes = %v, want Dockerfile 0644 and bin 0755", modes)
	}
}
