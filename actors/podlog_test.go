package actors

import (
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
	v1 "k8s.io/api/core/v1"

	"github.com/actorlet/actorlet/runtimeadapter/fake"
)

// An idle pod actor keeps no logger of its own (it is made again when
// the pod next logs): the lines it logs after being idle still carry the
// pod's UID and namespace/name.
func TestPodLogLinesNameThePodAfterIdle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := fake.New(fake.AutoImages(true))
		h := newHarness(t, rt)
		core, logs := observer.New(zapcore.InfoLevel)
		h.cfg.Logger = zap.New(core)
		h.start()
		h.apply(testPod("web", "uid-web", v1.RestartPolicyAlways, "a"))
		waitFor(t, 10*time.Second, "the app running", func() bool { return len(rt.Running("uid-web", "a")) == 1 })
		synctest.Wait() // idle
		h.apply()
		waitFor(t, 40*time.Second, "the pod terminated", func() bool {
			return logs.FilterMessage("pod terminated: all containers removed").Len() == 1
		})
		fields := logs.FilterMessage("pod terminated: all containers removed").All()[0].ContextMap()
		if fields["podUID"] != "uid-web" || fields["pod"] != "default/web" {
			t.Errorf("the pod's log line has fields %v, want podUID uid-web and pod default/web", fields)
		}
		h.stop()
		rt.Close()
	})
}
