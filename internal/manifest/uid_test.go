package manifest

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

const (
	uidNode = "node-1"
	uidPath = "/etc/actorlet/manifests/web.yaml"
)

func uidOf(t *testing.T, node, path, data string) types.UID {
	t.Helper()
	pod, err := Decode(path, []byte(data))
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	return StaticPodUID(node, path, pod)
}

// TestStaticPodUIDGolden pins the UID of a known manifest. If it changes,
// every static pod on every upgraded node gets a new UID and is restarted:
// change the golden value only on purpose (e.g. a k8s.io/api bump that
// changes the pod's JSON), and say so in the release notes.
func TestStaticPodUIDGolden(t *testing.T) {
	const golden = types.UID("55babe550ecf62fe965fad3c3e3af36d")
	got := uidOf(t, uidNode, uidPath, validYAML)
	if got != golden {
		t.Errorf("StaticPodUID = %q, want %q", got, golden)
	}
	if len(got) != 32 {
		t.Errorf("len(UID) = %d, want 32", len(got))
	}
}

func TestStaticPodUIDStable(t *testing.T) {
	base := uidOf(t, uidNode, uidPath, validYAML)
	same := map[string]string{
		"comment added": "# owner: web team\n" + strings.Replace(validYAML, "  name: web\n", "  name: web # the name\n", 1),
		"whitespace":    strings.ReplaceAll(validYAML, "\n", "\n\n"),
		"key order": `kind: Pod
apiVersion: v1
spec:
  containers:
  - ports:
    - containerPort: 80
    image: nginx:1.25
    name: nginx
metadata:
  labels:
    app: web
  name: web
`,
		"json":               validJSON,
		"explicit defaults":  strings.Replace(validYAML, "spec:\n", "spec:\n  restartPolicy: Always\n  dnsPolicy: ClusterFirst\n", 1),
		"explicit namespace": strings.Replace(validYAML, "  name: web\n", "  name: web\n  namespace: default\n", 1),
		"quoted values":      strings.Replace(validYAML, "image: nginx:1.25", `image: "nginx:1.25"`, 1),
	}
	for name, data := range same {
		if got := uidOf(t, uidNode, uidPath, data); got != base {
			t.Errorf("%s: UID %q, want unchanged %q", name, got, base)
		}
	}
}

func TestStaticPodUIDChanges(t *testing.T) {
	base := uidOf(t, uidNode, uidPath, validYAML)
	tests := []struct {
		name, node, path, data string
	}{
		{"image edit", uidNode, uidPath, strings.Replace(validYAML, "nginx:1.25", "nginx:1.26", 1)},
		{"label edit", uidNode, uidPath, strings.Replace(validYAML, "app: web", "app: api", 1)},
		{"restartPolicy edit", uidNode, uidPath, strings.Replace(validYAML, "spec:\n", "spec:\n  restartPolicy: Never\n", 1)},
		{"other file", uidNode, "/etc/actorlet/manifests/web2.yaml", validYAML},
		{"other node", "node-2", uidPath, validYAML},
	}
	seen := map[types.UID]string{base: "base"}
	for _, tt := range tests {
		got := uidOf(t, tt.node, tt.path, tt.data)
		if prev, dup := seen[got]; dup {
			t.Errorf("%s: UID %q same as %s", tt.name, got, prev)
		}
		seen[got] = tt.name
	}
}

func TestStaticPodUIDExplicit(t *testing.T) {
	data := strings.Replace(validYAML, "  name: web\n", "  name: web\n  uid: 0c5ab7f2-0000-4000-8000-000000000001\n", 1)
	if got := uidOf(t, uidNode, uidPath, data); got != "0c5ab7f2-0000-4000-8000-000000000001" {
		t.Errorf("UID = %q, want metadata.uid", got)
	}
}

func TestStaticPodUIDDoesNotModify(t *testing.T) {
	pod, err := Decode(uidPath, []byte(validYAML))
	if err != nil {
		t.Fatal(err)
	}
	before := pod.DeepCopy()
	StaticPodUID(uidNode, uidPath, pod)
	if pod.Namespace != before.Namespace || pod.Spec.RestartPolicy != before.Spec.RestartPolicy || pod.UID != "" {
		t.Errorf("StaticPodUID modified its pod")
	}
}
