package actors

import (
	"slices"
	"testing"
	"testing/synctest"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/runtimeadapter"
	"github.com/actorlet/actorlet/runtimeadapter/fake"
)

// An app container's env has the running sandbox's address
// (status.podIP) and the node's (status.hostIP), and the pod's status
// reports both; a hostNetwork pod has the node's address as its own.
func TestPodIPAndHostIPInEnvAndStatus(t *testing.T) {
	for _, hostNet := range []bool{false, true} {
		t.Run(map[bool]string{false: "bridge", true: "hostNetwork"}[hostNet], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rt := fake.New(fake.AutoImages(true))
				h := newHarness(t, rt)
				h.cfg.Spec.HostIPs = []string{"10.0.0.5"}
				h.start()
				pod := testPod("web", "uid-ip", v1.RestartPolicyAlways, "app")
				pod.Spec.HostNetwork = hostNet
				pod.Spec.Containers[0].Env = []v1.EnvVar{
					{Name: "POD_IP", ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: "status.podIP"}}},
					{Name: "HOST_IP", ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: "status.hostIP"}}},
				}
				h.apply(pod)
				waitFor(t, 10*time.Second, "app running", func() bool { return len(rt.Running("uid-ip", "app")) == 1 })
				sb := rt.Running("uid-ip", runtimeadapter.SandboxName)
				if len(sb) != 1 {
					t.Fatalf("sandboxes %v, want one running", sb)
				}
				wantPodIP := sb[0].IP
				if hostNet {
					wantPodIP = "10.0.0.5"
				}
				if wantPodIP == "" {
					t.Fatal("the sandbox has no address")
				}
				spec, err := rt.Spec(rt.Running("uid-ip", "app")[0].ID)
				if err != nil {
					t.Fatal(err)
				}
				for _, want := range []string{"POD_IP=" + wantPodIP, "HOST_IP=10.0.0.5"} {
					if !slices.Contains(spec.Env, want) {
						t.Errorf("env %q lacks %s", spec.Env, want)
					}
				}
				waitFor(t, 10*time.Second, "status with addresses", func() bool {
					st := podStatus(t, h, "web")
					return st.PodIP == wantPodIP && st.HostIP == "10.0.0.5" && len(st.HostIPs) == 1
				})
				h.stop()
			})
		})
	}
}
