package dir

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/actorlet/actorlet/internal/manifest"
	"github.com/actorlet/actorlet/sources"
)

const testNode = "node-1"

// podYAML is a valid manifest for a pod named name running image.
func podYAML(name, image string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: %s
spec:
  containers:
  - name: app
    image: %s
`, name, image)
}

// write replaces dir/name with data atomically (temp dotfile + rename), as
// careful tools do, so no scan sees a half-written file.
func write(t *testing.T, dir, name, data string) {
	t.Helper()
	tmp := filepath.Join(dir, ".tmp-"+name)
	if err := os.WriteFile(tmp, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
		t.Fatal(err)
	}
}

func remove(t *testing.T, path string) {
	t.Helper()
	if err := os.RemoveAll(path); err != nil {
		t.Fatal(err)
	}
}

func observedLogger() (*zap.Logger, *observer.ObservedLogs) {
	core, logs := observer.New(zapcore.DebugLevel)
	return zap.New(core), logs
}

// running is a Source under Run in the background.
type running struct {
	updates chan sources.Update
	logs    *observer.ObservedLogs
}

// start runs a Source for dir with test-friendly options (opts override
// them) until the test ends.
func start(t *testing.T, dir string, opts ...Option) *running {
	t.Helper()
	log, logs := observedLogger()
	opts = append([]Option{WithLogger(log), WithDebounce(10 * time.Millisecond), WithRescanPeriod(time.Hour)}, opts...)
	src := New(dir, testNode, opts...)
	r := &running{updates: make(chan sources.Update, 100), logs: logs}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := src.Run(ctx, func(u sources.Update) { r.updates <- u }); err != nil {
			t.Errorf("Run: %v", err)
		}
	}()
	t.Cleanup(func() {
		cancel()
		wg.Wait()
	})
	return r
}

// waitFor returns the first update (received within timeout) for which
// ok holds, failing the test otherwise.
func (r *running) waitFor(t *testing.T, timeout time.Duration, what string, ok func(sources.Update) bool) sources.Update {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	var last sources.Update
	for {
		select {
		case u := <-r.updates:
			if ok(u) {
				return u
			}
			last = u
		case <-deadline.C:
			t.Fatalf("no update with %s within %v; last update: %s", what, timeout, describe(last))
			return sources.Update{}
		}
	}
}

// podNames returns "namespace/name=image" for each pod of u, in order.
func podNames(u sources.Update) []string {
	var out []string
	for _, p := range u.Pods {
		out = append(out, p.Namespace+"/"+p.Name+"="+p.Spec.Containers[0].Image)
	}
	return out
}

func describe(u sources.Update) string {
	return fmt.Sprintf("{pods %q, problems %v, err %v}", podNames(u), u.Problems, u.Err)
}

func sourceFile(u sources.Update, i int) string {
	return u.Pods[i].Annotations[manifest.AnnotationSourceFile]
}
