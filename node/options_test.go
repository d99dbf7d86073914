package node

import (
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/actorlet/actorlet/runtimeadapter"
	"github.com/actorlet/actorlet/runtimeadapter/fake"
	"github.com/actorlet/actorlet/supervision"
)

// Every option `actorlet run` sets reaches the actor tree's Config: an
// embedder gets the binary's promises through Options alone.
func TestOptionsReachConfig(t *testing.T) {
	rt := fake.New()
	defer rt.Close()
	history, err := supervision.NewHistory(filepath.Join(t.TempDir(), "n.containers.json"))
	if err != nil {
		t.Fatal(err)
	}
	backoff := supervision.BackoffPolicy{Initial: 3 * time.Second, Max: 7 * time.Second}
	o := Options{
		NodeName: "n", Runtime: rt, PodInfraImage: "pause:x",
		RelistPeriod: 2 * time.Second, EventRelistPeriod: -1,
		Backoff: &backoff, StandbyContainers: true, History: history,
		MaxPodRestarts: 4, PodRestartWindow: 9 * time.Second,
		RootDir: "/r", AllowPrivileged: true, AllowHostPath: true,
		RuntimeTimeout: 11 * time.Second, ListTimeout: 12 * time.Second,
		RelistThreshold: 13 * time.Second, MaxEvents: 14, HostSource: true, ParallelPodStarts: 15,
	}
	cfg, err := o.config()
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"NodeName", cfg.NodeName, "n"},
		{"PodInfraImage", cfg.PodInfraImage, "pause:x"},
		{"RelistPeriod", cfg.RelistPeriod, 2 * time.Second},
		{"EventRelistPeriod", cfg.EventRelistPeriod, time.Duration(-1)},
		{"Backoff", cfg.Backoff, backoff},
		{"Standby", cfg.Standby, true},
		{"History", cfg.History, history},
		{"MaxPodRestarts", cfg.MaxPodRestarts, 4},
		{"PodRestartWindow", cfg.PodRestartWindow, 9 * time.Second},
		{"Spec.RootDir", cfg.Spec.RootDir, "/r"},
		{"Spec.AllowPrivileged", cfg.Spec.AllowPrivileged, true},
		{"Spec.AllowHostPath", cfg.Spec.AllowHostPath, true},
		{"RuntimeTimeout", cfg.RuntimeTimeout, 11 * time.Second},
		{"ListTimeout", cfg.ListTimeout, 12 * time.Second},
		{"RelistThreshold", cfg.RelistThreshold, 13 * time.Second},
		{"MaxEvents", cfg.MaxEvents, 14},
		{"HostSource", cfg.HostSource, true},
		{"ParallelPodStarts", cfg.ParallelPodStarts, 15},
		{"Runtime", cfg.Runtime, runtimeadapter.Runtime(rt)},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("Config.%s = %v, want %v", c.name, c.got, c.want)
		}
	}
}

// New instruments the runtime once, and Runtime returns that runtime for
// the host's own calls; without InstrumentRuntime it is Options.Runtime.
func TestNewRuntime(t *testing.T) {
	rt := fake.New()
	defer rt.Close()
	plain, err := New(Options{NodeName: "n", Runtime: rt, Metrics: prometheus.NewRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	if plain.Runtime() != runtimeadapter.Runtime(rt) {
		t.Errorf("Runtime() without InstrumentRuntime = %T, want the fake itself", plain.Runtime())
	}
	inst, err := New(Options{NodeName: "n", Runtime: rt, Metrics: prometheus.NewRegistry(), InstrumentRuntime: true})
	if err != nil {
		t.Fatal(err)
	}
	u, ok := inst.Runtime().(interface{ Unwrap() runtimeadapter.Runtime })
	if !ok || u.Unwrap() != runtimeadapter.Runtime(rt) {
		t.Errorf("Runtime() with InstrumentRuntime = %T, want a wrapper of the fake", inst.Runtime())
	}
	if _, err := New(Options{NodeName: "n"}); !errors.Is(err, ErrOptions) {
		t.Errorf("New without Runtime: %v, want ErrOptions", err)
	}
}
