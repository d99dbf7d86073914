package podsync

import (
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/runtimeadapter"
)

// Which pods start their first container beside a new sandbox, and how a
// created, never started sandbox is adopted (the running containers kept
// only when they could have started beside it).
func TestStartBeside(t *testing.T) {
	yes := true
	bridge := testPod(v1.RestartPolicyAlways, "app")
	hostNet := testPod(v1.RestartPolicyAlways, "app")
	hostNet.Spec.HostNetwork = true
	hostPID := testPod(v1.RestartPolicyAlways, "app")
	hostPID.Spec.HostNetwork, hostPID.Spec.ShareProcessNamespace = true, &yes
	hostInit := testPod(v1.RestartPolicyAlways, "app")
	hostInit.Spec.HostNetwork = true
	hostInit.Spec.InitContainers = []v1.Container{{Name: "init1", Image: "img:1"}}
	hostTwo := testPod(v1.RestartPolicyAlways, "a", "b")
	hostTwo.Spec.HostNetwork = true
	R, X, U := runtimeadapter.StateRunning, runtimeadapter.StateExited, runtimeadapter.StateUnknown
	now := t0.Add(2 * time.Second)
	cs := func(c ...runtimeadapter.Container) []runtimeadapter.Container { return c }

	for _, c := range []struct {
		name  string
		pod   *v1.Pod
		cs    []runtimeadapter.Container
		want  string // summary, then "; beside" when StartBeside
		inCRI bool   // on a runtime that makes containers inside their sandbox
	}{
		{"new host-network pod: the app starts beside its sandbox", hostNet, nil,
			"sandbox#0; start app#0(Created); beside", false},
		{"new host-network pod of two: the first beside, the second after", hostTwo, nil,
			"sandbox#0; start a#0(Created); start b#0(Created); beside", false},
		{"new host-network pod with an init container: the init container beside", hostInit, nil,
			"sandbox#0; start init1#0(Init); beside", false},
		{"new pod on the pod network: it joins the sandbox's network, after", bridge, nil,
			"sandbox#0; start app#0(Created)", false},
		{"new host-network pod sharing its PID namespace: it joins the sandbox's, after", hostPID, nil,
			"sandbox#0; start app#0(Created)", false},
		{"a sandbox whose start failed: the next one starts alone first", hostNet,
			cs(startFailedInst(inst(hostNet, "POD", 0, U, 0))),
			"sandbox#1; start app#0(Created); rm POD-0", false},
		{"a sandbox that died: the next one starts alone first", hostNet,
			cs(inst(hostNet, "POD", 0, X, 0), inst(hostNet, "app", 0, R, 0)),
			"kill app-0(SandboxChanged); sandbox#1; start app#1(SandboxChanged)", false},

		// Adoption of a created, never started sandbox (the agent stopped
		// before its start returned).
		{"host network, created sandbox, the app started beside it: kept, the sandbox started", hostNet,
			cs(inst(hostNet, "POD", 0, U, 0), inst(hostNet, "app", 0, R, 0)),
			"adopt sandbox POD-0", false},
		{"host network, created sandbox and app: both adopted", hostNet,
			cs(inst(hostNet, "POD", 0, U, 0), inst(hostNet, "app", 0, U, 0)),
			"adopt sandbox POD-0; adopt app-0", false},
		{"host network, created sandbox alone: adopted, the app after it", hostNet,
			cs(inst(hostNet, "POD", 0, U, 0)),
			"adopt sandbox POD-0; start app#0(Created)", false},
		{"host network, created sandbox, the app exited: restarted per restartPolicy", hostNet,
			cs(inst(hostNet, "POD", 0, U, 0), inst(hostNet, "app", 0, X, 1)),
			"adopt sandbox POD-0; start app#1(Restart)", false},
		{"host network, created sandbox, the init container started beside it: kept", hostInit,
			cs(inst(hostInit, "POD", 0, U, 0), inst(hostInit, "init1", 0, R, 0)),
			"adopt sandbox POD-0", false},
		{"pod network, created sandbox and a running app (not made by actorlet): as before, replaced", bridge,
			cs(inst(bridge, "POD", 0, U, 0), inst(bridge, "app", 0, R, 0)),
			"kill app-0(SandboxChanged); adopt sandbox POD-0; start app#1(SandboxChanged)", false},
		{"host network sharing PID, created sandbox and a running app: as before, replaced", hostPID,
			cs(inst(hostPID, "POD", 0, U, 0), inst(hostPID, "app", 0, R, 0)),
			"kill app-0(SandboxChanged); adopt sandbox POD-0; start app#1(SandboxChanged)", false},
		{"host network, a second sandbox created (never beside): as before, replaced", hostNet,
			cs(inst(hostNet, "POD", 0, X, 0), inst(hostNet, "POD", 1, U, 0), inst(hostNet, "app", 1, R, 0)),
			"kill app-1(SandboxChanged); adopt sandbox POD-1; start app#2(SandboxChanged)", false},
		{"host network, created sandbox of an old spec: as before, replaced", hostNet,
			cs(inst(bridge, "POD", 0, U, 0), inst(hostNet, "app", 0, R, 0)),
			"kill app-0(SandboxChanged); sandbox#1; start app#1(SandboxChanged); rm POD-0", false},
		{"host network, running sandbox: nothing beside", hostNet,
			cs(inst(hostNet, "POD", 0, R, 0)),
			"start app#0(Created)", false},

		// A CRI runtime makes a container inside its sandbox (which
		// RunPodSandbox creates and starts in one call): nothing beside.
		{"CRI: new host-network pod: the app after its sandbox", hostNet, nil,
			"sandbox#0; start app#0(Created)", true},
		{"CRI: host network, created sandbox and a running app: as before, replaced", hostNet,
			cs(inst(hostNet, "POD", 0, U, 0), inst(hostNet, "app", 0, R, 0)),
			"kill app-0(SandboxChanged); adopt sandbox POD-0; start app#1(SandboxChanged)", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := Compute(Input{Node: node, Pod: c.pod, Containers: c.cs, Now: now, Backoff: policy, SandboxIsContainer: !c.inCRI})
			got := summary(p)
			if p.StartBeside {
				got += "; beside"
			}
			if got != c.want {
				t.Errorf("plan\n got %q\nwant %q", got, c.want)
			}
			if p.StartBeside && (!p.CreateSandbox || len(p.Start) == 0 || p.Start[0].AdoptID != "") {
				t.Errorf("StartBeside in a plan that makes no new sandbox or first start: %s", got)
			}
			if p.AdoptSandboxID != "" && p.SandboxID != "" && p.SandboxID != p.AdoptSandboxID {
				t.Errorf("SandboxID %s, AdoptSandboxID %s: want the same sandbox", p.SandboxID, p.AdoptSandboxID)
			}
		})
	}
}

// JoinsSandbox says exactly whether some container of the pod (app or
// init) is made to join a namespace of its sandbox ("container:<id>"):
// the rule and the specs cannot drift apart.
func TestJoinsSandboxAgreesWithSpecs(t *testing.T) {
	yes, no := true, false
	for _, hostNetwork := range []bool{false, true} {
		for _, share := range []*bool{nil, &no, &yes} {
			for _, withInit := range []bool{false, true} {
				pod := testPod(v1.RestartPolicyAlways, "app", "side")
				pod.Spec.HostNetwork, pod.Spec.ShareProcessNamespace = hostNetwork, share
				if withInit {
					pod.Spec.InitContainers = []v1.Container{{Name: "init1", Image: "img:1"}}
				}
				name := fmt.Sprintf("hostNetwork=%v shareProcessNamespace=%v init=%v", hostNetwork, share != nil && *share, withInit)
				var joins []string
				check := func(c *v1.Container, init bool) {
					s, err := AppSpecWith(SpecOptions{RootDir: DefaultRootDir}, node, pod, c, "sb-1", 0)
					if err != nil {
						t.Fatalf("%s: container %s: %v", name, c.Name, err)
					}
					if init {
						s = AsInit(s, "sb-1")
					}
					for what, mode := range map[string]string{"network": s.NetworkMode, "pid": s.PidMode} {
						if strings.HasPrefix(mode, "container:") {
							joins = append(joins, c.Name+":"+what)
						}
					}
				}
				for i := range pod.Spec.Containers {
					check(&pod.Spec.Containers[i], false)
				}
				for i := range pod.Spec.InitContainers {
					check(&pod.Spec.InitContainers[i], true)
				}
				if got, want := JoinsSandbox(pod), len(joins) > 0; got != want {
					t.Errorf("%s: JoinsSandbox = %v, but the specs join %v", name, got, joins)
				}
			}
		}
	}
}
