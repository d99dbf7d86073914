package apipods

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/actorlet/actorlet/internal/manifest"
	"github.com/actorlet/actorlet/sources"
)

func newPod(name, image string) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Spec:       v1.PodSpec{Containers: []v1.Container{{Name: "app", Image: image}}},
	}
}

// updates runs s and returns its updates as they come.
func updates(t *testing.T, s *Source) <-chan sources.Update {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan sources.Update, 10)
	done := make(chan struct{})
	go func() { defer close(done); _ = s.Run(ctx, func(u sources.Update) { ch <- u }) }()
	t.Cleanup(func() { cancel(); <-done })
	return ch
}

func nextUpdate(t *testing.T, ch <-chan sources.Update) sources.Update {
	t.Helper()
	select {
	case u := <-ch:
		return u
	case <-time.After(5 * time.Second):
		t.Fatal("no update within 5 s")
	}
	return sources.Update{}
}

func TestPutPersistsAndSurvivesARestart(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "n1.api-pods")
	s := New(dir, "n1")
	ch := updates(t, s)
	if u := nextUpdate(t, ch); u.Err != nil || len(u.Pods) != 0 || u.Source != "api:"+dir {
		t.Fatalf("first update = %+v, want an empty synced set from api:%s", u, dir)
	}
	out, _, err := s.Put(newPod("web", "nginx:1.27"), PutOptions{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	if out.UID == "" || out.Annotations[manifest.AnnotationConfigSource] != ConfigSourceAPI || out.Spec.RestartPolicy != v1.RestartPolicyAlways {
		t.Fatalf("stored pod = uid %q, annotations %v, restartPolicy %q: want a UID, the api source and defaults", out.UID, out.Annotations, out.Spec.RestartPolicy)
	}
	u := nextUpdate(t, ch)
	if len(u.Pods) != 1 || u.Pods[0].UID != out.UID {
		t.Fatalf("update after Put = %+v, want web with UID %s", u.Pods, out.UID)
	}
	if _, _, err := s.Put(newPod("web", "nginx:1.27"), PutOptions{Create: true}); !errors.Is(err, ErrExists) {
		t.Fatalf("second create: %v, want ErrExists", err)
	}
	if _, _, err := s.Put(newPod("db", "postgres:17"), PutOptions{}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("update of a missing pod: %v, want ErrNotFound", err)
	}
	if fi, err := os.Stat(filepath.Join(dir, "default_web.json")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("pod file: %v %v, want mode 0600", fi, err)
	}

	// A new Source on the same directory (the agent restarted) has the
	// pod, with the same UID: nothing is replaced.
	again := New(dir, "n1")
	if u := nextUpdate(t, updates(t, again)); len(u.Pods) != 1 || u.Pods[0].UID != out.UID || len(u.Problems) != 0 {
		t.Fatalf("after a restart: %+v, want web with UID %s", u, out.UID)
	}
	// The same content again keeps the UID; a change gives a new one.
	same, _, _ := again.Put(newPod("web", "nginx:1.27"), PutOptions{})
	changed, _, _ := again.Put(newPod("web", "nginx:1.28"), PutOptions{})
	if same.UID != out.UID || changed.UID == out.UID {
		t.Fatalf("UIDs: same content %s, changed %s, original %s", same.UID, changed.UID, out.UID)
	}
	if _, err := again.Delete("default", "web", false); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "default_web.json")); !os.IsNotExist(err) {
		t.Fatalf("pod file after Delete: %v, want gone", err)
	}
}

func TestPutValidatesAsAManifest(t *testing.T) {
	s := New(t.TempDir(), "n1")
	cases := []struct {
		pod  *v1.Pod
		want string
	}{
		{newPod("web", ""), "spec.containers[0].image: Required value"},
		{func() *v1.Pod {
			p := newPod("web", "nginx")
			p.Spec.Volumes = []v1.Volume{{Name: "h", VolumeSource: v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{Path: "/"}}}}
			return p
		}(), "hostPath"},
		{newPod("Bad_Name", "nginx"), "metadata.name"},
	}
	for _, c := range cases {
		_, _, err := s.Put(c.pod, PutOptions{Create: true})
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "pod default/") {
			t.Errorf("Put(%s): %v, want an error naming the pod and %q", c.pod.Name, err, c.want)
		}
	}
	if _, _, err := New(t.TempDir(), "n1", WithValidation(sources.Validation{AllowHostPath: true})).Put(cases[1].pod, PutOptions{Create: true}); err != nil {
		t.Fatalf("hostPath with AllowHostPath: %v", err)
	}
}
