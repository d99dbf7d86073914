package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/actorlet/actorlet/sources"
	etcdsource "github.com/actorlet/actorlet/sources/etcd"
)

// TestRunStrictManifests: --strict-manifests reaches the directory source:
// without it an unknown field is ignored (a warning) and the pod runs;
// with it the file is refused, naming the field.
func TestRunStrictManifests(t *testing.T) {
	if f := newRunCmd().Flags().Lookup("strict-manifests"); f == nil || f.DefValue != "false" {
		t.Fatalf("--strict-manifests: %v, want a flag defaulting to false", f)
	}
	dir := t.TempDir()
	pod := "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n  component: web\nspec:\n  containers:\n  - name: app\n    image: nginx\n"
	if err := os.WriteFile(filepath.Join(dir, "web.manifest"), []byte(pod), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, strict := range []bool{false, true} {
		f := runFlags{manifests: dir, nodeName: "n1", strict: strict}
		srcs, err := buildSources(f, zap.NewNop(), nil, etcdsource.Keys{})
		if err != nil || len(srcs) != 1 {
			t.Fatalf("buildSources = %v, %v", srcs, err)
		}
		u := firstUpdate(t, srcs[0])
		switch {
		case !strict && (len(u.Pods) != 1 || len(u.Problems) != 0):
			t.Errorf("lenient: %d pods, problems %v; want the pod", len(u.Pods), u.Problems)
		case strict && (len(u.Pods) != 0 || len(u.Problems) != 1 || !strings.Contains(u.Problems[0].Error(), `unknown field "metadata.component"`)):
			t.Errorf("strict: %d pods, problems %v; want the unknown field refused", len(u.Pods), u.Problems)
		}
	}
}

// firstUpdate runs src until its first update.
func firstUpdate(t *testing.T, src sources.Source) sources.Update {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := make(chan sources.Update, 1)
	done := make(chan error, 1)
	go func() {
		done <- src.Run(ctx, func(u sources.Update) {
			select {
			case got <- u:
			default:
			}
		})
	}()
	defer func() { cancel(); <-done }()
	select {
	case u := <-got:
		return u
	case <-time.After(10 * time.Second):
		t.Fatal("no update within 10 s")
		return sources.Update{}
	}
}
