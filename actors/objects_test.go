package actors

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/actorlet/actorlet/internal/podsync"
	"github.com/actorlet/actorlet/messages"
	"github.com/actorlet/actorlet/runtimeadapter/fake"
)

const objSecretValue = "pa55-w0rd-never-logged"

// A pod with a configMap volume and env from a ConfigMap and a Secret
// waits for them as the kubelet: the volume's ConfigMap missing, it is
// ContainerCreating with FailedMount; the env's Secret missing,
// CreateContainerConfigError with the kubelet's message; it starts once
// both come. A changed ConfigMap is written into the volume (through
// ..data) while the container runs on, not restarted; env stays as
// created. The Secret's value reaches the container's env and nothing
// else: no log line, event or pod status holds it.
func TestConfigMapAndSecretFromSources(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := fake.New(fake.AutoImages(true))
		h := newHarness(t, rt)
		core, logs := observer.New(zapcore.DebugLevel)
		h.cfg.Logger = zap.New(core)
		h.cfg.Spec.RootDir = t.TempDir()
		h.cfg.Spec.SecretsOnDisk = true // no tmpfs mounts from a unit test
		h.start()

		pod := testPod("web", "uid-cm", v1.RestartPolicyAlways, "app")
		pod.Spec.Volumes = []v1.Volume{
			{Name: "cfg", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{LocalObjectReference: v1.LocalObjectReference{Name: "app"}}}},
			{Name: "creds", VolumeSource: v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: "db", DefaultMode: ptrTo[int32](0o400)}}},
		}
		c := &pod.Spec.Containers[0]
		c.VolumeMounts = []v1.VolumeMount{{Name: "cfg", MountPath: "/etc/app"}, {Name: "creds", MountPath: "/etc/creds"}}
		c.Env = []v1.EnvVar{
			{Name: "URL", ValueFrom: &v1.EnvVarSource{ConfigMapKeyRef: &v1.ConfigMapKeySelector{LocalObjectReference: v1.LocalObjectReference{Name: "app"}, Key: "url"}}},
			{Name: "PASSWORD", ValueFrom: &v1.EnvVarSource{SecretKeyRef: &v1.SecretKeySelector{LocalObjectReference: v1.LocalObjectReference{Name: "envdb"}, Key: "password"}}},
		}
		cm := func(ns, url string) *v1.ConfigMap {
			return &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "app"}, Data: map[string]string{"url": url}}
		}
		secret := func(name string) *v1.Secret {
			return &v1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}, Data: map[string][]byte{"password": []byte(objSecretValue)}}
		}

		// Nothing there (the ConfigMap of another namespace does not count).
		h.src.sendAll([]*v1.Pod{pod}, []*v1.ConfigMap{cm("other", "http://other")}, []*v1.Secret{secret("db")})
		waitFor(t, 30*time.Second, "ContainerCreating with FailedMount", func() bool {
			w, _ := waiting(t, h, "web", "app")
			return w != nil && w.Reason == "ContainerCreating" &&
				len(eventsWith(podEvents(t, h, "web"), "FailedMount", `MountVolume.SetUp failed for volume "cfg" : configmap "app" not found`)) > 0
		})
		if n := len(h.creates("actorlet_app_")); n != 0 {
			t.Fatalf("%d creates of app before its volume is ready", n)
		}

		// The volume's ConfigMap comes; the env's Secret is still missing.
		h.src.sendAll([]*v1.Pod{pod}, []*v1.ConfigMap{cm("default", "http://one")}, []*v1.Secret{secret("db")})
		waitFor(t, 5*time.Second, "CreateContainerConfigError", func() bool {
			w, _ := waiting(t, h, "web", "app")
			return w != nil && w.Reason == "CreateContainerConfigError" && w.Message == `secret "envdb" not found`
		})

		// Both there: it starts at once.
		h.src.sendAll([]*v1.Pod{pod}, []*v1.ConfigMap{cm("default", "http://one")}, []*v1.Secret{secret("db"), secret("envdb")})
		waitFor(t, 5*time.Second, "app running", func() bool { return len(rt.Running("uid-cm", "app")) == 1 })
		app := rt.Running("uid-cm", "app")[0]
		spec, err := rt.Spec(app.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"URL=http://one", "PASSWORD=" + objSecretValue} {
			if !slices.Contains(spec.Env, want) {
				t.Errorf("env %q lacks %s", spec.Env, want)
			}
		}
		cfgDir := podsync.ConfigMapPath(h.cfg.Spec.RootDir, pod.UID, "cfg")
		readURL := func() string { b, _ := os.ReadFile(filepath.Join(cfgDir, "url")); return string(b) }
		if got := readURL(); got != "http://one" {
			t.Errorf("volume file url = %q", got)
		}
		secretFile := filepath.Join(podsync.SecretPath(h.cfg.Spec.RootDir, pod.UID, "creds"), "password")
		if fi, err := os.Stat(secretFile); err != nil || fi.Mode().Perm() != 0o400 {
			t.Errorf("secret file %s: %v, %v; want mode 0400", secretFile, fi, err)
		}
		if fi, err := os.Stat(filepath.Dir(filepath.Dir(secretFile))); err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("secret volumes' parent: %v, %v; want 0700", fi, err)
		}

		// The ConfigMap changes: the file follows, the container runs on.
		creates := len(h.creates("actorlet_"))
		h.src.sendAll([]*v1.Pod{pod}, []*v1.ConfigMap{cm("default", "http://two")}, []*v1.Secret{secret("db"), secret("envdb")})
		waitFor(t, 5*time.Second, "volume updated", func() bool { return readURL() == "http://two" })
		if target, err := os.Readlink(filepath.Join(cfgDir, "url")); err != nil || target != "..data/url" {
			t.Errorf("url -> %q, %v; want a link through ..data", target, err)
		}
		time.Sleep(30 * time.Second) // virtual: any restart would have happened
		synctest.Wait()
		if now := rt.Running("uid-cm", "app"); len(now) != 1 || now[0].ID != app.ID || len(h.creates("actorlet_")) != creates {
			t.Errorf("app %v after the change (was %s), creates %d → %d: restarted", now, app.ID, creates, len(h.creates("actorlet_")))
		}
		if spec, _ := rt.Spec(app.ID); !slices.Contains(spec.Env, "URL=http://one") {
			t.Errorf("env %q changed; it is fixed at creation", spec.Env)
		}

		// The secret's value appears nowhere but in the container.
		res, err := h.sys.Root.RequestFuture(h.pid, &messages.GetPodStatuses{}, time.Second).Result()
		if err != nil {
			t.Fatal(err)
		}
		statuses, _ := json.Marshal(res)
		evs, _ := json.Marshal(podEvents(t, h, "web"))
		var logText strings.Builder
		for _, e := range logs.All() {
			b, _ := json.Marshal(e.ContextMap())
			logText.WriteString(e.Message + " " + string(b) + "\n")
		}
		for what, text := range map[string]string{"pod statuses": string(statuses), "events": string(evs), "logs": logText.String()} {
			if strings.Contains(text, objSecretValue) {
				t.Errorf("%s hold the secret's value", what)
			}
		}
		if !strings.Contains(logText.String(), "secrets [db envdb]") {
			t.Errorf("logs do not name the pod's secrets: %s", logText.String())
		}
		h.stop()
	})
}

func ptrTo[T any](v T) *T { return &v }
