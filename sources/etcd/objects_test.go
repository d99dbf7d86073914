package etcd

import (
	"fmt"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/actorlet/actorlet/sources"
	"github.com/actorlet/actorlet/sources/sourcetest"
)

func hasObjects(want string) func(sources.Update) bool {
	return func(u sources.Update) bool { return u.Err == nil && sourcetest.ObjectNames(u) == want }
}

func configMapYAML(value string) string {
	return "apiVersion: v1\nkind: ConfigMap\ndata:\n  app.conf: " + value + "\n"
}

func secretYAML(key, value string) string {
	return fmt.Sprintf("apiVersion: v1\nkind: Secret\nstringData:\n  %q: %s\n", key, value)
}

// ConfigMaps and Secrets under the node's configmaps/ and secrets/ keys
// are carried with its pods: named by their key, updated when changed,
// removed when deleted, a bad value a problem naming the key that keeps
// the last good object and never shows a Secret's value. The node's
// heartbeat and events keys, inside the watched range, are skipped.
func TestConfigMapsAndSecretsFromKeys(t *testing.T) {
	_, c := startEtcd(t)
	put(t, c, testKeys.Pod(testNode, "default", "web"), podYAML("web", "nginx:1"))
	put(t, c, testKeys.ConfigMap(testNode, "default", "conf"), configMapYAML("v1"))
	put(t, c, testKeys.Secret(testNode, "team", "creds"), secretYAML("password", "hunter2-s3cret"))
	put(t, c, testKeys.Heartbeat(testNode), `{"time": "now"}`)
	put(t, c, testKeys.Events(testNode)+"1", `{"reason": "Started"}`)
	// Another node's ConfigMap never reaches this source.
	put(t, c, testKeys.ConfigMap("node-2", "default", "other"), configMapYAML("other"))

	core, logs := observer.New(zapcore.DebugLevel)
	r := start(t, c, WithLogger(zap.New(core)))
	u := r.next(t, slack)
	wantPods(t, u, "default/web=nginx:1")
	if got, want := sourcetest.ObjectNames(u), "ConfigMap default/conf=v1,Secret team/creds=hunter2-s3cret"; got != want || len(u.Problems) != 0 {
		t.Fatalf("objects %q, problems %v; want %q and no problem", got, u.Problems, want)
	}
	if got := u.Secrets[0].Annotations[AnnotationSourceKey]; got != testKeys.Secret(testNode, "team", "creds") {
		t.Errorf("Secret annotation %s = %q", AnnotationSourceKey, got)
	}
	web := u.Pods[0].UID

	// A changed ConfigMap is updated; the pod is untouched.
	put(t, c, testKeys.ConfigMap(testNode, "default", "conf"), configMapYAML("v2"))
	u = r.waitFor(t, slack, "ConfigMap v2", hasObjects("ConfigMap default/conf=v2,Secret team/creds=hunter2-s3cret"), nil)
	if len(u.Pods) != 1 || u.Pods[0].UID != web {
		t.Errorf("pods %v after a ConfigMap change, want web with UID %s", podNames(u), web)
	}

	// A bad Secret value keeps the last good Secret, and its problem names
	// the key and field, not the value.
	put(t, c, testKeys.Secret(testNode, "team", "creds"), secretYAML("bad key!", "hunter2-other"))
	u = r.waitFor(t, slack, "a problem", func(u sources.Update) bool { return len(u.Problems) == 1 }, nil)
	if got := sourcetest.ObjectNames(u); got != "ConfigMap default/conf=v2,Secret team/creds=hunter2-s3cret" {
		t.Errorf("objects %q: the Secret did not keep its last good version", got)
	}
	if p := u.Problems[0].Error(); !strings.Contains(p, "etcd key "+testKeys.Secret(testNode, "team", "creds")+": ") ||
		!strings.Contains(p, "data[bad key!]") || strings.Contains(p, "hunter2") {
		t.Errorf("problem %q: want the key and field, without the value", p)
	}

	// A value of the wrong kind, and names that do not match the key.
	put(t, c, testKeys.Secret(testNode, "team", "creds"), secretYAML("password", "hunter2-s3cret"))
	put(t, c, testKeys.Secret(testNode, "default", "wrong"), configMapYAML("v1"))
	put(t, c, testKeys.ConfigMap(testNode, "default", "named"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: other\n")
	u = r.waitFor(t, slack, "two problems", func(u sources.Update) bool { return len(u.Problems) == 2 }, nil)
	for i, want := range []string{`metadata.name: Invalid value: "other": must be the key's name "named"`, `kind: Unsupported value: "ConfigMap"`} {
		if !strings.Contains(u.Problems[i].Error(), want) {
			t.Errorf("problem %d %q does not contain %q", i, u.Problems[i], want)
		}
	}

	// A deleted Secret is removed.
	del(t, c, testKeys.Secret(testNode, "default", "wrong"))
	del(t, c, testKeys.ConfigMap(testNode, "default", "named"))
	del(t, c, testKeys.Secret(testNode, "team", "creds"))
	r.waitFor(t, slack, "the Secret removed", hasObjects("ConfigMap default/conf=v2"), nil)

	sourcetest.NoSecretShown(t, logs, nil, "hunter2")
}
