package runtimetest

import (
	"fmt"
	"strings"
	"time"

	"github.com/actorlet/actorlet/runtimeadapter"
)

// lifecycleCases: the states a container goes through, and what each
// says, as the plan (internal/podsync) reads them: a created container is
// adopted and started (podsync.Adoptable), a failed start is a
// StartError, an exit is a crash or a completion.
var lifecycleCases = []testCase{
	{"CreateThenStart", func(e *env) {
		before := time.Now()
		spec := e.app("app", Workload{})
		id := e.create(spec)
		e.step("CreatedIsNotStarted", func(e *env) {
			for _, c := range []runtimeadapter.Container{e.inspect(id), mustFind(e, id)} {
				// podsync.Adoptable: created, with no Error.
				if c.State != runtimeadapter.StateUnknown || c.RawState != "created" || c.Error != "" {
					e.t.Errorf("created container: state %q/%q, error %q; want unknown/created and no error", c.State, c.RawState, c.Error)
				}
				if c.ExitCode != 0 || c.Reason != "" || !c.StartedAt.IsZero() || !c.FinishedAt.IsZero() {
					e.t.Errorf("created container: exit %d reason %q started %v finished %v; want none", c.ExitCode, c.Reason, c.StartedAt, c.FinishedAt)
				}
				if c.CreatedAt.Before(before.Add(-time.Second)) || c.CreatedAt.After(time.Now().Add(time.Second)) {
					e.t.Errorf("CreatedAt = %v, want about %v", c.CreatedAt, before)
				}
			}
			if got := ids(e.list(runtimeadapter.ListOptions{}).Containers); got[id] {
				e.t.Errorf("a created container is listed as running")
			}
		})
		e.step("StartByNameRuns", func(e *env) {
			created := e.inspect(id).CreatedAt
			if err := e.Runtime.Start(e.ctx, spec.Name); err != nil {
				e.t.Fatal(err)
			}
			for _, c := range []runtimeadapter.Container{e.inspect(id), mustFind(e, id)} {
				if c.State != runtimeadapter.StateRunning || c.RawState != "running" {
					e.t.Errorf("started container: state %q/%q, want running", c.State, c.RawState)
				}
				if c.StartedAt.IsZero() || c.StartedAt.Before(created) || !c.FinishedAt.IsZero() {
					e.t.Errorf("started container: created %v started %v finished %v", created, c.StartedAt, c.FinishedAt)
				}
				if c.Reason != "" || c.Error != "" || c.ExitCode != 0 {
					e.t.Errorf("started container: reason %q error %q exit %d, want none", c.Reason, c.Error, c.ExitCode)
				}
			}
		})
		e.step("StartOfARunningContainerIsANoOp", func(e *env) {
			started := e.inspect(id).StartedAt
			if err := e.Runtime.Start(e.ctx, id); err != nil {
				e.t.Errorf("second start: %v, want nil", err)
			}
			if c := e.inspect(id); c.State != runtimeadapter.StateRunning || !c.StartedAt.Equal(started) {
				e.t.Errorf("after a second start: %q, started %v (was %v)", c.State, c.StartedAt, started)
			}
		})
	}},
	{"ExitCodeAndTimes", func(e *env) {
		for _, tc := range []struct {
			code   int
			reason string
		}{{0, "Completed"}, {3, "Error"}} {
			id := e.run(e.app(fmt.Sprintf("exit%d", tc.code), Workload{Exits: true, ExitCode: tc.code, ExitAfter: shortExit}))
			c := e.waitExited(id)
			for _, c := range []runtimeadapter.Container{c, mustFind(e, id)} {
				if c.RawState != "exited" || c.ExitCode != tc.code || c.Reason != tc.reason || c.Error != "" {
					e.t.Errorf("exited container: %q, exit %d, reason %q, error %q; want exited, %d, %q, none",
						c.RawState, c.ExitCode, c.Reason, c.Error, tc.code, tc.reason)
				}
				if c.StartedAt.IsZero() || c.FinishedAt.Before(c.StartedAt) || c.FinishedAt.Sub(c.StartedAt) > slack {
					e.t.Errorf("exited container: started %v, finished %v; want both, finish after start", c.StartedAt, c.FinishedAt)
				}
			}
		}
	}},
	{"FailedStartLeavesItCreatedWithAnError", func(e *env) {
		id := e.create(e.app("broken", Workload{CannotStart: true}))
		if err := e.Runtime.Start(e.ctx, id); err == nil {
			e.t.Fatal("start of a container whose command does not exist: nil error")
		}
		// What Docker does, and podsync reads as a StartError (exit code
		// 128 in the pod's status, the message from Error).
		check := func(c runtimeadapter.Container) {
			e.t.Helper()
			if c.State != runtimeadapter.StateUnknown || c.RawState != "created" || c.Error == "" {
				e.t.Errorf("after a failed start: state %q/%q, error %q; want unknown/created and an error", c.State, c.RawState, c.Error)
			}
			if c.ExitCode != 126 && c.ExitCode != 127 && c.ExitCode != 128 {
				e.t.Errorf("after a failed start: exit code %d, want 126, 127 or 128", c.ExitCode)
			}
			if !c.StartedAt.IsZero() || !c.FinishedAt.IsZero() {
				e.t.Errorf("after a failed start: started %v, finished %v; want no times", c.StartedAt, c.FinishedAt)
			}
		}
		check(e.inspect(id))
		check(mustFind(e, id))
		// It fails again the same way, and is never listed as running.
		if err := e.Runtime.Start(e.ctx, id); err == nil {
			e.t.Error("second start of a container that cannot start: nil error")
		}
		check(e.inspect(id))
		check(mustFind(e, id))
		if got := ids(e.list(runtimeadapter.ListOptions{}).Containers); got[id] {
			e.t.Error("a container that failed to start is listed as running")
		}
	}},
	{"SandboxAndJoinedApp", func(e *env) {
		p := e.pod("p")
		sandbox := e.spec(p, runtimeadapter.SandboxName, runtimeadapter.TypeSandbox, Workload{})
		sandbox.Hostname = "p"
		sid := e.run(sandbox)
		app := e.spec(p, "app", runtimeadapter.TypeApp, Workload{})
		app.NetworkMode = "container:" + sid
		aid := e.run(app)
		for _, id := range []string{sid, aid} {
			if c := e.inspect(id); c.State != runtimeadapter.StateRunning {
				e.t.Errorf("container %s: %q, want running", c.Name, c.State)
			}
		}
		got := e.list(runtimeadapter.ListOptions{PodUID: p.uid}).Containers
		if len(got) != 2 {
			e.t.Fatalf("pod lists %d containers, want 2", len(got))
		}
		types := map[runtimeadapter.ContainerType]string{}
		for _, c := range got {
			m, err := runtimeadapter.ParseMeta(c.Labels)
			if err != nil {
				e.t.Fatal(err)
			}
			types[m.Type] = c.ID
		}
		if types[runtimeadapter.TypeSandbox] != sid || types[runtimeadapter.TypeApp] != aid {
			e.t.Errorf("types of the pod's containers: %v, want sandbox %s and app %s", types, sid, aid)
		}
		// Stopping the app leaves the sandbox running, and the sandbox
		// stops after its app, as a pod stops.
		if err := e.Runtime.Stop(e.ctx, aid, grace); err != nil {
			e.t.Fatal(err)
		}
		if c := e.inspect(sid); c.State != runtimeadapter.StateRunning {
			e.t.Errorf("sandbox after its app stopped: %q, want running", c.State)
		}
		if err := e.Runtime.Stop(e.ctx, sid, grace); err != nil {
			e.t.Fatal(err)
		}
	}},
	{"OnlyARunningSandboxHasAnIP", func(e *env) {
		// The pod's IP is its sandbox's (podsync's status, HTTP probes
		// and hooks): a sandbox on the runtime's default network has one
		// while it runs, a container that joins it or the host's network
		// has none of its own.
		p := e.pod("p")
		if e.NoPodNetwork {
			e.noPodNetwork(p)
			return
		}
		sid := e.create(e.spec(p, runtimeadapter.SandboxName, runtimeadapter.TypeSandbox, Workload{}))
		if c := e.inspect(sid); c.IP != "" {
			e.t.Errorf("created sandbox has IP %q, want none before it runs", c.IP)
		}
		if err := e.Runtime.Start(e.ctx, sid); err != nil {
			e.t.Fatal(err)
		}
		sandbox := e.inspect(sid)
		if sandbox.IP == "" {
			e.t.Errorf("running sandbox has no IP")
		}
		if c := mustFind(e, sid); c.IP != sandbox.IP {
			e.t.Errorf("List says the sandbox's IP is %q, Inspect %q", c.IP, sandbox.IP)
		}
		app := e.spec(p, "app", runtimeadapter.TypeApp, Workload{})
		app.NetworkMode = "container:" + sid
		host := e.spec(e.pod("h"), runtimeadapter.SandboxName, runtimeadapter.TypeSandbox, Workload{})
		host.NetworkMode = "host"
		for _, id := range []string{e.run(app), e.run(host)} {
			if c := e.inspect(id); c.IP != "" {
				e.t.Errorf("container %s (network %s) has IP %q, want none", c.Name, c.Labels[runtimeadapter.LabelContainerName], c.IP)
			}
		}
		e.ready(sid)
		if err := e.Runtime.Stop(e.ctx, sid, grace); err != nil {
			e.t.Fatal(err)
		}
		if c := e.inspect(sid); c.IP != "" {
			e.t.Errorf("stopped sandbox keeps IP %q", c.IP)
		}
	}},
	{"SharedPIDNamespaceAndSupplementalGroups", func(e *env) {
		// shareProcessNamespace: a sandbox its pod shares (PidModePod)
		// and an app joining its network and PID namespaces, with a
		// user and supplemental groups (fsGroup, supplementalGroups):
		// every adapter runs them.
		p := e.pod("p")
		sandbox := e.spec(p, runtimeadapter.SandboxName, runtimeadapter.TypeSandbox, Workload{})
		sandbox.PidMode = runtimeadapter.PidModePod
		sid := e.run(sandbox)
		app := e.spec(p, "app", runtimeadapter.TypeApp, Workload{})
		app.NetworkMode, app.PidMode = "container:"+sid, "container:"+sid
		app.User, app.GroupAdd = "1000:3000", []int64{2000, 4000}
		aid := e.run(app)
		for _, id := range []string{sid, aid} {
			if c := e.inspect(id); c.State != runtimeadapter.StateRunning {
				e.t.Errorf("container %s: %q, want running", c.Name, c.State)
			}
		}
	}},
	{"PortsCannotBePublishedByAJoinedContainer", func(e *env) {
		sid := e.run(e.spec(e.pod("p"), runtimeadapter.SandboxName, runtimeadapter.TypeSandbox, Workload{}))
		app := e.app("app", Workload{})
		app.NetworkMode = "container:" + sid
		app.PortBindings = []runtimeadapter.PortBinding{{HostIP: "127.0.0.1", HostPort: 0, ContainerPort: 8080, Protocol: "tcp"}}
		id, err := e.Runtime.Create(e.ctx, app)
		if id != "" {
			e.track(id)
		}
		if err == nil {
			e.t.Error("create of a joined container publishing a port: nil error, want Docker's refusal")
		}
	}},
}

// mustFind lists everything on the node and returns container id.
func mustFind(e *env, id string) runtimeadapter.Container {
	e.t.Helper()
	c, ok := find(e.list(runtimeadapter.ListOptions{All: true}).Containers, id)
	if !ok {
		e.t.Fatalf("container %s not listed (All)", id)
	}
	return c
}

// noPodNetwork is OnlyARunningSandboxHasAnIP on a runtime without a pod
// network: a sandbox on the pod network is refused at create, naming it
// (nothing is left of it), and a sandbox on the host's network, and a
// container that joins it, have no IP of their own.
func (e *env) noPodNetwork(p pod) {
	e.t.Helper()
	spec := e.spec(p, runtimeadapter.SandboxName, runtimeadapter.TypeSandbox, Workload{})
	spec.NetworkMode = ""
	id, err := e.Runtime.Create(e.ctx, spec)
	if id != "" {
		e.track(id)
	}
	if err == nil {
		e.t.Errorf("create of a sandbox on the pod network of a runtime without one: nil error")
	} else if !strings.Contains(err.Error(), spec.Name) {
		e.t.Errorf("create of a sandbox on the pod network: %q does not name it", err)
	}
	if got := e.list(runtimeadapter.ListOptions{All: true}).Containers; len(got) != 0 {
		e.t.Errorf("a refused sandbox left %+v", got)
	}
	host := e.spec(p, runtimeadapter.SandboxName, runtimeadapter.TypeSandbox, Workload{})
	sid := e.run(host)
	app := e.spec(p, "app", runtimeadapter.TypeApp, Workload{})
	app.NetworkMode = "container:" + sid
	for _, id := range []string{sid, e.run(app)} {
		if c := e.inspect(id); c.IP != "" {
			e.t.Errorf("container %s on the host's network has IP %q, want none", c.Name, c.IP)
		}
	}
}
