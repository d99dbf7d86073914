package manifest_test

// The fuzz tests of issue 6 and of invariant 5 of DESIGN.md ("a bad
// manifest fails alone, with a message naming the file and the field"):
// FuzzLoadManifest drives LoadFile (the directory source's path),
// FuzzDecodeList drives DecodeList + SetDefaults + ValidateAt (the URL
// source's). For any bytes they must
//
//   - not panic;
//   - return, error message formatted, within a time linear in the input
//     (see budget; LoadFile runs in a goroutine so that a blow-up fails
//     instead of hanging), with a message of bounded size (maxMessage);
//   - on error: return no pod and a *manifest.FileError whose Path is the
//     file and whose message starts with "manifest <path>: ", and whose
//     cause names what is wrong as precisely as it can (checkCause):
//
//     a. A problem with the manifest as a whole, where no field exists to
//     be named. It must be one of these, and be what it claims:
//     ErrEmpty (the input has no content), ErrTooLarge (the input is
//     over MaxManifestBytes), ErrNotOneObject (several YAML documents, or
//     a root that is not an object), or a *SyntaxError: JSON that does
//     not parse (encoding/json agrees) with a line and column inside the
//     input, or YAML the parser rejects, with the parser's line, inside
//     the input, when it gives one. For syntax errors, a position is
//     what "names the field" means: the text has no fields yet.
//
//     b. Otherwise every error of the (flattened) aggregate must name a
//     field: be a *field.Error (validation), a sigs.k8s.io/json
//     FieldError (unknown or duplicated field) or a *ValueError (a value
//     of the wrong type or format: a type error). Its path must be a
//     field path, appear in its message, and be real: a decoding error's
//     path is found in the input; a validation error's in the decoded,
//     defaulted pod (a Required field's parent, since the field itself
//     is missing). Anything else — a bare decoder message, an error
//     naming a path that is not there — fails.
//
//   - on success: the input held one YAML document with content (none
//     was dropped); LoadFile returned a pod with a UID and its annotations
//     that validates again, warnings that each start with the path of a
//     field that is set, and (up to 16 KiB) a UID that survives
//     re-encoding the defaulted pod as JSON, as StaticPodUID documents.
//     DecodeList returned the pod Decode returns, for a document Decode
//     accepts, and items numbered items[0], items[1]... named as their
//     pods are.
//
// TestFuzzCheckerFails shows each of these checks failing on a bad
// result, so that none of them holds vacuously.
//
// The seed corpus (f.Add below, plus testdata/fuzz/<Target>/) covers
// valid YAML and JSON, the examples/ manifests, broken, empty,
// wrong-kind, truncated, duplicated-key, multi-document, binary, type
// error and huge manifests (up to MaxManifestBytes, and just over it).
// `go test` runs every seed; fuzz with
//
//	go test -run '^$' -fuzz '^FuzzLoadManifest$' -fuzztime 10m ./internal/manifest/
//	go test -run '^$' -fuzz '^FuzzDecodeList$' -fuzztime 10m ./internal/manifest/
//
// Huge seeds are left out while fuzzing (each mutation of them would be
// slow and teach the fuzzer nothing a small input does not), and are
// smaller under -race and -short (decoding is several times slower under
// -race, and `make test` runs every package with it).

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"
	"unicode/utf16"

	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	sigsjson "sigs.k8s.io/json"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/actorlet/actorlet/internal/manifest"
)

const (
	fuzzNode = "fuzz-node"
	fuzzPath = "/etc/actorlet/manifests/fuzz pod.yaml" // absolute, with a space
)

const seedPodYAML = `# a static pod
apiVersion: v1
kind: Pod
metadata:
  name: web
  namespace: kube-system
  labels:
    app: web
  annotations:
    note: "hello"
spec:
  restartPolicy: OnFailure
  terminationGracePeriodSeconds: 5
  initContainers:
  - name: init
    image: busybox:1.36
    command: ["true"]
  containers:
  - name: nginx
    image: nginx:1.25
    imagePullPolicy: IfNotPresent
    env:
    - name: POD_NAME
      valueFrom:
        fieldRef:
          fieldPath: metadata.name
    - name: PLAIN
      value: x
    ports:
    - name: http
      containerPort: 80
      hostPort: 8080
      protocol: TCP
    resources:
      limits:
        cpu: 500m
        memory: 64Mi
      requests:
        cpu: 100m
    livenessProbe:
      httpGet:
        path: /
        port: http
      periodSeconds: 3
    readinessProbe:
      tcpSocket:
        port: 80
    volumeMounts:
    - name: scratch
      mountPath: /scratch
  - name: sidecar
    image: busybox:1.36
    args: ["sleep", "infinity"]
  volumes:
  - name: scratch
    emptyDir: {}
`

const seedPodJSON = `{
	"apiVersion": "v1",
	"kind": "Pod",
	"metadata": {"name": "web", "labels": {"app": "web"}, "uid": "0123456789abcdef"},
	"spec": {"hostNetwork": true, "containers": [{"name": "nginx", "image": "nginx:1.25",
		"ports": [{"containerPort": 80, "hostPort": 80}]}]}
}`

// minimal is the smallest valid pod; variations below edit it.
const minimal = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\nspec:\n  containers:\n  - name: app\n    image: img:1\n"

func smallSeeds() []string {
	seeds := []string{
		seedPodYAML, seedPodJSON, minimal,
		// empty and nearly empty
		"", " ", "\n\n\t\n", "# only a comment\n", "---\n", "---\n---\n...\n", "null", "~", "{}", "[]",
		"\ufeff" + minimal, // BOM
		// wrong kind / apiVersion
		strings.Replace(minimal, "kind: Pod", "kind: Deployment", 1),
		strings.Replace(minimal, "apiVersion: v1", "apiVersion: apps/v1", 1),
		strings.Replace(minimal, "kind: Pod\n", "", 1),
		strings.Replace(minimal, "apiVersion: v1\n", "", 1),
		strings.Replace(minimal, "kind: Pod", "kind: PodList", 1),
		strings.Replace(minimal, "kind: Pod", "Kind: Pod", 1),
		strings.Replace(minimal, "kind: Pod", "kind: 5", 1),
		strings.Replace(minimal, "kind: Pod", "kind: [Pod]", 1),
		"apiVersion: v1\nkind: PodList\nitems:\n- " + strings.ReplaceAll(minimal, "\n", "\n  "),
		`{"apiVersion":"v1","kind":"List","items":[]}`,
		// truncated
		seedPodYAML[:len(seedPodYAML)/2], seedPodYAML[:len(seedPodYAML)/3], seedPodJSON[:len(seedPodJSON)/2],
		seedPodJSON[:len(seedPodJSON)-1], `{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "we`,
		"apiVersion: v1\nkind: Pod\nmetadata:\n  name: 'web\n",
		// duplicated keys
		minimal + "    image: img:2\n",
		strings.Replace(minimal, "metadata:\n", "metadata:\n  name: other\n", 1),
		minimal + "metadata:\n  name: again\n",
		`{"apiVersion":"v1","kind":"Pod","kind":"Pod","metadata":{"name":"a","name":"b"},"spec":{"containers":[{"name":"a","image":"i"}]}}`,
		// duplicated container names, ports
		minimal + "  - name: app\n    image: img:2\n",
		minimal + "    ports:\n    - containerPort: 80\n      hostPort: 80\n    - containerPort: 81\n      hostPort: 80\n",
		// several documents
		minimal + "---\n" + minimal, "---\n" + minimal + "---\n", minimal + "...\n---\n# trailing comment\n",
		`{"apiVersion":"v1","kind":"Pod"} {"apiVersion":"v1","kind":"Pod"}`,
		// binary junk
		"\x00\x01\x02\x03", "\xff\xfe\x00k\x00i\x00n\x00d", "\xef\xbb\xbf\xef\xbb\xbf", "\x1b[31mred\x1b[0m",
		string([]byte{0x7b, 0x00, 0x7d}), "kind: Pod\napiVersion: v1\nmetadata: {name: \"\xff\xfe\"}\n",
		"\t" + minimal, // tabs are not YAML indentation
		// unknown and mistyped fields
		strings.Replace(minimal, "image: img:1", "imagee: img:1", 1),
		minimal + "  bogus: 1\n",
		minimal + "status:\n  phase: Running\n",
		minimal + "    ports: 5\n",
		minimal + "    ports:\n    - containerPort: abc\n",
		minimal + "  terminationGracePeriodSeconds: 99999999999999999999999\n",
		minimal + "  terminationGracePeriodSeconds: 1.5\n",
		minimal + "  terminationGracePeriodSeconds: -1\n",
		strings.Replace(minimal, "  name: web\n", "  name: web\n  labels: {a: 1}\n", 1),
		"kind: Pod\napiVersion: v1\nspec: 5\n",
		"kind: Pod\napiVersion: v1\nmetadata: !!binary aGVsbG8=\n",
		"apiVersion: v1\nkind: Pod\n<<: {metadata: {name: x}}\n",
		minimal + "    livenessProbe:\n      httpGet:\n        port: {}\n",
		minimal + "    livenessProbe:\n      httpGet:\n        port: 70000\n",
		// invalid values
		strings.Replace(minimal, "name: web", "name: Web_Server", 1),
		strings.Replace(minimal, "image: img:1", "image: ''", 1),
		minimal + "  restartPolicy: Sometimes\n",
		minimal + "  hostPID: true\n",
		minimal + "  nodeSelector:\n    disk: ssd\n",
		minimal + "    securityContext:\n      privileged: true\n",
		minimal + "  volumes:\n  - name: h\n    hostPath:\n      path: /etc\n",
		minimal + "    env:\n    - name: A\n      value: x\n      valueFrom:\n        fieldRef:\n          fieldPath: status.podIP\n",
		// YAML features
		"a: &a [x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\ng: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]\n",
		"apiVersion: v1\nkind: Pod\nmetadata: &m {name: web}\nspec:\n  containers:\n  - name: app\n    image: img:1\n    env: [{name: X, value: *m}]\n",
		"!!python/object:os.system\nargs: [ls]\n",
		"%YAML 1.2\n---\n" + minimal,
		"? [complex, key]\n: value\n",
		"1: 2\n", "[1, 2]\n", "just a string\n", "'quoted'\n", "- a\n- b\n",
		"apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n  annotations:\n    x: |\n      multi\n      line\nspec:\n  containers:\n  - {name: app, image: img:1}\n",
	}
	// The example manifests shipped in the repository.
	for _, f := range []string{"web.yaml", "crasher.yaml", "job.json"} {
		if data, err := os.ReadFile(filepath.Join("..", "..", "examples", f)); err == nil {
			seeds = append(seeds, string(data))
		}
	}
	return seeds
}

// moreSeeds: type and format errors (every one must name its field),
// document splitting, and other findings.
func moreSeeds() []string {
	withMeta := func(line string) string {
		return strings.Replace(minimal, "  name: web\n", "  name: web\n"+line+"\n", 1)
	}
	return []string{
		minimal + "    resources:\n      limits:\n        cpu: 1x\n",
		minimal + "    resources:\n      requests:\n        memory: 5i\n",
		minimal + "    resources:\n      limits:\n        cpu: 99999999999999999999999999999999999999999999999999999999999999999999999999999Ei\n",
		minimal + "  - name: two\n    image: i\n    resources: {limits: {memory: abc}}\n",
		minimal + "  volumes:\n  - name: v\n    emptyDir:\n      sizeLimit: [1]\n",
		minimal + "  overhead:\n    cpu: x\n",
		withMeta("  creationTimestamp: yesterday"),
		withMeta("  creationTimestamp: 2024-13-45T99:00:00Z"),
		withMeta("  deletionTimestamp: 5"),
		withMeta("  managedFields: [{time: never}]"),
		minimal + "    livenessProbe:\n      tcpSocket:\n        port: [80]\n",
		minimal + "    lifecycle:\n      preStop:\n        httpGet:\n          port: true\n",
		minimal + "  securityContext:\n    runAsUser: -99999999999999999999\n",
		minimal + "    ports:\n    - containerPort: 80\n    - containerPort: 70000000000\n",
		minimal + "    command: [1, 2]\n",
		minimal + "    env: {a: b}\n",
		`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web","name":5},"spec":{"containers":[{"name":"a","image":"i","resources":{"limits":{"cpu":"1x"}}}]}}`,
		`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web"},"spec":{"containers":[{"name":"a","image":"i","ports":[{"containerPort":"80"}]}]}}`,
		`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web"},"spec":{"containers":[{"name":"a","image":"i"}],"volumes":[{"name":"v","emptyDir":{"sizeLimit":"1x"}}]}}` + "\n",
		"{\n  \"apiVersion\": \"v1\",\n  \"kind\": Pod\n}\n",
		// documents
		"---\n---\n" + minimal, "---\n# nothing\n---\n" + minimal, minimal + "...\nspec: {}\n",
		"apiVersion: v1\nkind: Pod\n...\nmetadata:\n  name: web\n", "%YAML 1.1\n---\n" + minimal, "%YAML 1.1\n",
		minimal + "--- {}\n", "--- |\n  text\n", minimal + "... # end\n",
	}
}

// listSeeds are PodList documents for FuzzDecodeList.
func listSeeds() []string {
	item := func(name string) string {
		return `{"metadata": {"name": "` + name + `"}, "spec": {"containers": [{"name": "a", "image": "i"}]}}`
	}
	list := func(items ...string) string {
		return `{"apiVersion": "v1", "kind": "PodList", "items": [` + strings.Join(items, ", ") + `]}`
	}
	yamlList := "apiVersion: v1\nkind: PodList\nmetadata:\n  resourceVersion: \"7\"\nitems:\n- " +
		strings.ReplaceAll(strings.TrimSuffix(minimal, "\n"), "\n", "\n  ") + "\n- metadata:\n    name: api\n  spec:\n    containers:\n    - {name: a, image: i}\n"
	return []string{
		yamlList, list(), list(item("a"), item("b")), list(item("a"), item("a")),
		list(item("a"), `null`, `"web"`, `5`, `[]`, `{}`),
		list(item("a"), `{"kind": "Service", "metadata": {"name": "b"}}`, `{"apiVersion": "v2"}`),
		list(`{"metadata": {"name": "q"}, "spec": {"containers": [{"name": "a", "image": "i", "resources": {"limits": {"cpu": "1x"}}}]}}`),
		list(`{"metadata": {"name": "t", "creationTimestamp": "yesterday"}}`),
		list(`{"metadata": {"name": 7}}`, `{"metadata": {"name": "x"}, "spec": {"containerz": []}}`),
		list(item("Bad_Name"), `{"metadata": {"name": "e"}, "spec": {"containers": [{"name": "a", "image": ""}], "nodeSelector": {"a": "b"}}}`),
		`{"apiVersion": "v1", "kind": "PodList", "items": {}}`, `{"apiVersion": "v1", "kind": "PodList", "items": 5}`,
		`{"apiVersion": "v1", "kind": "PodList", "itemz": []}`, `{"apiVersion": "v1", "kind": "PodList", "metadata": {"resourceVersion": 7}}`,
		`{"apiVersion": "v1", "kind": "PodList", "items": [` + item("a"),
		"apiVersion: v1\nkind: PodList\nitems:\n- kind: Pod\n  kind: Pod\n",
		"apiVersion: v1\nkind: List\nitems: []\n",
	}
}

// hugeSize is the size huge seeds fill: just under MaxManifestBytes, or
// a sixteenth of it under -race or -short, to keep `make test` quick (the
// package within a few seconds under -race on two cores). At full size,
// in a plain `go test`, budget catches a quadratic blow-up: the one in
// formatting tens of thousands of errors took 4 s for half a MiB.
func hugeSize() int {
	if raceEnabled() || testing.Short() {
		return manifest.MaxManifestBytes / 16
	}
	return manifest.MaxManifestBytes - 1024
}

// fill returns head + unit(0) + unit(1) + ... + tail, with as many units
// as keep it within size bytes.
func fill(size int, head string, unit func(i int) string, tail string) string {
	var b strings.Builder
	b.WriteString(head)
	for i := 0; ; i++ {
		u := unit(i)
		if b.Len()+len(u)+len(tail) > size {
			break
		}
		b.WriteString(u)
	}
	b.WriteString(tail)
	return b.String()
}

// hugeSeeds are generated: up to hugeSize bytes each, and one just over
// MaxManifestBytes.
func hugeSeeds() []string {
	size := hugeSize()
	const podHead = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\nspec:\n  containers:\n"
	rep := func(s string) func(int) string { return func(int) string { return s } }
	half := (size - 200) / 2
	var seeds []string
	// Nested flow YAML and JSON, far deeper than the parsers' limits.
	seeds = append(seeds,
		"apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n  annotations:\n    x: "+strings.Repeat("[", half)+strings.Repeat("]", half)+"\n",
		`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web","annotations":{"x":`+strings.Repeat("[", half)+strings.Repeat("]", half)+`}}}`)
	// Nested block mappings: depth d takes about d² bytes of indentation.
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n")
	for i := 0; b.Len()+2*i+8 < size; i++ {
		b.WriteString(strings.Repeat("  ", i+1) + "a:\n")
	}
	seeds = append(seeds, b.String())
	// Valid pods with very many containers (YAML and JSON), labels, env
	// vars, volumes and mounts, and hostPorts.
	seeds = append(seeds,
		fill(size, podHead, func(i int) string { return fmt.Sprintf("  - name: c%d\n    image: img:1\n", i) }, ""),
		fill(size, `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web"},"spec":{"containers":[`,
			func(i int) string { return fmt.Sprintf(`{"name":"c%d","image":"img:1"},`, i) }, `{"name":"last","image":"img:1"}]}}`),
		fill(size, "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n  labels:\n", func(i int) string { return fmt.Sprintf("    k%d: v\n", i) },
			"spec:\n  containers:\n  - name: a\n    image: i\n"),
		fill(size, podHead+"  - name: a\n    image: i\n    env:\n", func(i int) string {
			return fmt.Sprintf("    - {name: E%d, valueFrom: {fieldRef: {fieldPath: \"metadata.labels['k%d']\"}}}\n", i, i)
		}, ""),
		fill(size/2, podHead+"  - name: a\n    image: i\n    volumeMounts:\n", func(i int) string {
			return fmt.Sprintf("    - {name: v%d, mountPath: /v/%d}\n", i, i)
		}, "")+fill(size/2, "  volumes:\n", func(i int) string { return fmt.Sprintf("  - {name: v%d, emptyDir: {}}\n", i) }, ""),
		fill(size, minimal+"    ports:\n", func(i int) string {
			return fmt.Sprintf("    - {containerPort: %d, hostPort: %d}\n", i%65535+1, i%65535+1)
		}, ""))
	// A huge string.
	seeds = append(seeds, minimal+"  - name: long\n    image: "+strings.Repeat("a", size-len(minimal)-40)+"\n")
	// Many documents.
	seeds = append(seeds, fill(size, "", rep("---\n"+minimal), ""))
	// Tens of thousands of errors: invalid ports, duplicated hostPorts,
	// bad label keys. The error must be formatted in linear time and
	// shown in bounded size.
	seeds = append(seeds,
		fill(size, minimal+"    ports: [", rep("{containerPort: 0},"), "{containerPort: 0}]\n"),
		fill(size, minimal+"    ports: [", rep("{containerPort: 80, hostPort: 80},"), "{containerPort: 1}]\n"),
		fill(size, "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n  labels:\n", func(i int) string { return fmt.Sprintf("    -k%d: v\n", i) },
			"spec:\n  containers:\n  - name: a\n    image: i\n"))
	// A bad quantity at the end of a huge pod: the field must be found in
	// linear time too.
	seeds = append(seeds, fill(size, podHead, func(i int) string { return fmt.Sprintf("  - name: c%d\n    image: img:1\n", i) },
		"  - name: bad\n    image: i\n    resources: {limits: {cpu: 1x}}\n"))
	// Duplicated keys, many times (JSON: one error per duplicate).
	seeds = append(seeds, fill(size, `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web",`,
		func(i int) string { return fmt.Sprintf(`"labels":{"k%d":"v"},`, i) }, `"labels":{}},"spec":{"containers":[{"name":"a","image":"i"}]}}`))
	// One byte over the limit: rejected before it is parsed.
	seeds = append(seeds, minimal+"#"+strings.Repeat("x", manifest.MaxManifestBytes-len(minimal))+"\n")
	return seeds
}

// hugeListSeeds are PodLists of very many pods, for FuzzDecodeList.
func hugeListSeeds() []string {
	size := hugeSize()
	return []string{
		fill(size, `{"apiVersion":"v1","kind":"PodList","items":[`, func(i int) string {
			return fmt.Sprintf(`{"metadata":{"name":"p%d"},"spec":{"containers":[{"name":"a","image":"i"}]}},`, i)
		}, `{"metadata":{"name":"Bad_Name"},"spec":{"containers":[{"name":"a","image":"i","resources":{"limits":{"cpu":"1x"}}}]}}]}`),
		fill(size, "apiVersion: v1\nkind: PodList\nitems:\n", func(i int) string {
			return fmt.Sprintf("- metadata: {name: p%d, creationTimestamp: %d}\n", i, i)
		}, ""),
	}
}

func FuzzLoadManifest(f *testing.F) {
	for _, s := range append(smallSeeds(), moreSeeds()...) {
		f.Add([]byte(s))
	}
	if !fuzzing() {
		for _, s := range hugeSeeds() {
			f.Add([]byte(s))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, ok := timed(budget(len(data)), func() loadResult { return load(data) })
		if !ok {
			t.Fatalf("LoadFile of %d bytes did not return (error formatted) within %s; input starts %q", len(data), budget(len(data)), head(data))
		}
		for _, p := range checkLoad(data, r) {
			t.Errorf("%s\n  input: %q", p, head(data))
		}
	})
}

func FuzzDecodeList(f *testing.F) {
	for _, s := range append(append(smallSeeds(), moreSeeds()...), listSeeds()...) {
		f.Add([]byte(s))
	}
	if !fuzzing() {
		for _, s := range hugeListSeeds() {
			f.Add([]byte(s))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, ok := timed(budget(len(data)), func() listResult { return decodeList(data) })
		if !ok {
			t.Fatalf("DecodeList and ValidateAt of %d bytes did not return within %s; input starts %q", len(data), budget(len(data)), head(data))
		}
		for _, p := range checkList(data, r) {
			t.Errorf("%s\n  input: %q", p, head(data))
		}
	})
}

// fuzzing reports whether this run is `go test -fuzz`.
func fuzzing() bool {
	fl := flag.Lookup("test.fuzz")
	return fl != nil && fl.Value.String() != ""
}

// raceEnabled reports whether the test binary was built with -race.
func raceEnabled() bool {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range bi.Settings {
		if s.Key == "-race" {
			return s.Value == "true"
		}
	}
	return false
}

// budget is how long loading n bytes (and formatting the error) may take:
// linear in the input, generous enough for a loaded machine, far below
// what a quadratic blow-up or a hang takes.
func budget(n int) time.Duration {
	d := 2*time.Second + time.Duration(n)*4*time.Second/(1<<20)
	if raceEnabled() {
		d *= 10
	}
	return d
}

// timed runs fn in a goroutine; ok is false if it has not returned within
// limit. (A panic in fn crashes the test binary, which the fuzzer reports
// with its input, as it does a panic in the fuzz function.)
func timed[T any](limit time.Duration, fn func() T) (r T, ok bool) {
	done := make(chan T, 1)
	go func() { done <- fn() }()
	timer := time.NewTimer(limit)
	defer timer.Stop()
	select {
	case r = <-done:
		return r, true
	case <-timer.C:
		return r, false
	}
}

// maxMessage bounds an error message: a manifest's problems are shown in
// part when there are very many or they are very long.
const maxMessage = 64 << 10

type loadResult struct {
	pod      *v1.Pod
	warnings []string
	err      error
	msg      string // err's message, formatted under the time limit
}

func load(data []byte) loadResult {
	pod, warnings, err := manifest.LoadFile(fuzzNode, fuzzPath, data)
	r := loadResult{pod: pod, warnings: warnings, err: err}
	if err != nil {
		r.msg = err.Error() // logged by every caller: part of the cost
	}
	return r
}

// checkLoad returns what is wrong with LoadFile's result r for data.
func checkLoad(data []byte, r loadResult) []string {
	var probs problems
	if r.err != nil {
		if r.pod != nil {
			probs.add("LoadFile returned a pod and an error: %v", r.msg)
		}
		cause, ok := probs.fileError(r.err, r.msg, fuzzPath)
		if !ok {
			return probs
		}
		// Decode's errors are about the manifest as written; the others
		// (validation: *field.Errors, with warnings) about the decoded,
		// defaulted pod. Only a *field.Error can be either.
		ctx := fieldContext{data: data}
		if hasFieldError(cause) || len(r.warnings) > 0 {
			pod, decodeErr := manifest.Decode(fuzzPath, data)
			if decodeErr != nil {
				if decodeErr.Error() != r.msg {
					probs.add("LoadFile's error %q is not Decode's %q", clipped(r.msg), clipped(decodeErr.Error()))
				}
				if len(r.warnings) > 0 {
					probs.add("warnings %q with a decoding error", r.warnings)
				}
			} else {
				manifest.SetDefaults(pod)
				ctx.validated = tree(pod)
			}
		}
		probs.cause(cause, ctx)
		for _, w := range r.warnings {
			probs.warning(w, ctx)
		}
		return probs
	}

	pod := r.pod
	if pod == nil {
		probs.add("LoadFile returned neither a pod nor an error")
		return probs
	}
	if n := documents(data); n != 1 {
		probs.add("LoadFile accepted %d YAML documents with content, want one (the others would be dropped)", n)
	}
	if pod.UID == "" {
		probs.add("pod without a UID")
	}
	if pod.Annotations[manifest.AnnotationSourceFile] != fuzzPath ||
		pod.Annotations[manifest.AnnotationConfigSource] != manifest.ConfigSourceFile ||
		pod.Annotations[manifest.AnnotationConfigHash] != string(pod.UID) {
		probs.add("annotations %v: want source file, config source and hash", pod.Annotations)
	}
	ctx := fieldContext{data: data, validated: tree(pod)}
	for _, w := range r.warnings {
		probs.warning(w, ctx)
	}
	if _, err := manifest.Validate(pod.DeepCopy()); err != nil {
		probs.add("a loaded pod does not validate again: %v", err)
	}
	if len(data) <= 16<<10 { // about canonical form, not size: small inputs will do
		probs.reencoded(data, pod)
	}
	return probs
}

// reencoded: the defaulted pod, written back as a JSON manifest, loads to
// the same UID (StaticPodUID survives YAML vs JSON and spelled-out
// defaults).
func (probs *problems) reencoded(data []byte, pod *v1.Pod) {
	orig, err := manifest.Decode(fuzzPath, data)
	if err != nil {
		probs.add("LoadFile succeeded but Decode fails: %v", err)
		return
	}
	cp := pod.DeepCopy()
	if orig.UID == "" {
		cp.UID = ""
	}
	maps.DeleteFunc(cp.Annotations, func(k, _ string) bool {
		_, had := orig.Annotations[k]
		return !had && (k == manifest.AnnotationSourceFile || k == manifest.AnnotationConfigSource || k == manifest.AnnotationConfigHash)
	})
	if len(cp.Annotations) == 0 && orig.Annotations == nil {
		cp.Annotations = nil
	}
	cp.APIVersion, cp.Kind = "v1", "Pod"
	out, err := json.Marshal(cp)
	if err != nil {
		probs.add("marshal loaded pod: %v", err)
		return
	}
	again, _, err := manifest.LoadFile(fuzzNode, fuzzPath, out)
	if err != nil {
		probs.add("the loaded pod, re-encoded as JSON, does not load: %v\n  json: %s", err, clipped(string(out)))
		return
	}
	if again.UID != pod.UID {
		probs.add("UID %s changed to %s when the defaulted pod was re-encoded as JSON\n  json: %s", pod.UID, again.UID, clipped(string(out)))
	}
}

// listURL is where FuzzDecodeList's documents come from.
const listURL = "https://example.com/pods?node=fuzz"

type listResult struct {
	items []manifest.ListItem
	err   error
	msg   string
	// For each item without Err: its defaulted pod and what ValidateAt
	// says of it (the URL source's steps).
	validated []itemValidation
}

type itemValidation struct {
	pod      *v1.Pod
	warnings []string
	err      error
	msg      string
}

func decodeList(data []byte) listResult {
	items, err := manifest.DecodeList(listURL, data)
	r := listResult{items: items, err: err}
	if err != nil {
		r.msg = err.Error()
	}
	r.validated = make([]itemValidation, len(items))
	for i, it := range items {
		if it.Err != nil {
			_ = it.Err.Error()
			continue
		}
		if it.Pod == nil {
			continue
		}
		pod := it.Pod.DeepCopy()
		manifest.SetDefaults(pod)
		w, err := manifest.ValidateAt(pod, it.Field)
		v := itemValidation{pod: pod, warnings: w, err: err}
		if err != nil {
			v.msg = err.Error()
		}
		r.validated[i] = v
	}
	return r
}

// checkList returns what is wrong with DecodeList's result r for data.
func checkList(data []byte, r listResult) []string {
	var probs problems
	if r.err != nil {
		if r.items != nil {
			probs.add("DecodeList returned items and an error: %v", r.msg)
		}
		if cause, ok := probs.fileError(r.err, r.msg, listURL); ok {
			probs.cause(cause, fieldContext{data: data})
		}
		return probs
	}
	if n := documents(data); n != 1 {
		probs.add("DecodeList accepted %d YAML documents with content, want one (the others would be dropped)", n)
	}
	// A document Decode accepts is one item, the same pod.
	if pod, err := manifest.Decode(listURL, data); err == nil {
		if len(r.items) != 1 || r.items[0].Field != nil || r.items[0].Err != nil ||
			!apiequality.Semantic.DeepEqual(r.items[0].Pod, pod) {
			probs.add("Decode accepts the document but DecodeList returns %d items (first: %+v), not the same pod", len(r.items), first(r.items))
		}
	}
	in := &input{}
	for i, it := range r.items {
		prefix := ""
		if it.Field != nil {
			prefix = it.Field.String()
			if want := fmt.Sprintf("items[%d]", i); prefix != want {
				probs.add("item %d has Field %s, want %s", i, prefix, want)
			}
		} else if len(r.items) != 1 {
			probs.add("item %d of %d has no Field", i, len(r.items))
		}
		ctx := fieldContext{data: data, input: in, item: prefix}
		switch {
		case it.Err != nil:
			if it.Pod != nil {
				probs.add("item %d has a pod and an error", i)
			}
			if cause, ok := probs.fileError(it.Err, it.Err.Error(), listURL); ok {
				probs.cause(cause, ctx)
			}
		case it.Pod == nil:
			probs.add("item %d has neither a pod nor an error", i)
		default:
			if it.Namespace != it.Pod.Namespace || it.Name != it.Pod.Name {
				probs.add("item %d is named %q/%q, its pod %q/%q", i, it.Namespace, it.Name, it.Pod.Namespace, it.Pod.Name)
			}
			v := r.validated[i]
			ctx.validated = tree(v.pod)
			if v.err != nil {
				if len(v.msg) > maxMessage {
					probs.add("item %d: error message of %d bytes", i, len(v.msg))
				}
				probs.cause(v.err, ctx)
			}
			for _, w := range v.warnings {
				probs.warning(w, ctx)
			}
		}
	}
	return probs
}

func first(items []manifest.ListItem) any {
	if len(items) == 0 {
		return nil
	}
	return items[0]
}

// problems collects what is wrong with one result. The checks return
// problems rather than fail a test, so that TestFuzzCheckerFails can show
// each of them failing.
type problems []string

func (p *problems) add(format string, args ...any) { *p = append(*p, fmt.Sprintf(format, args...)) }

// fileError checks that err is a *manifest.FileError for path whose
// message msg starts with "manifest <path>: " and is bounded, and returns
// its cause.
func (p *problems) fileError(err error, msg, path string) (error, bool) {
	var fe *manifest.FileError
	if !errors.As(err, &fe) {
		p.add("error is not a *manifest.FileError: %T %s", err, clipped(msg))
		return nil, false
	}
	if fe.Path != path {
		p.add("FileError.Path = %q, want %q", fe.Path, path)
	}
	if want := "manifest " + path + ": "; !strings.HasPrefix(msg, want) {
		p.add("error %q does not start with %q", clipped(msg), want)
	}
	if len(msg) > maxMessage {
		p.add("error message of %d bytes, over %d: %s", len(msg), maxMessage, clipped(msg))
	}
	return fe.Err, true
}

// fieldContext is where the paths an error names must be found.
type fieldContext struct {
	data  []byte // the manifest as written
	input *input // data as JSON values, parsed once
	// item is the path of the pod in the document ("items[2]"), "" when
	// the document is the pod.
	item string
	// validated is the decoded, defaulted pod as JSON values when the
	// errors are validation errors (nil for decoding errors); their paths
	// (less item) are looked up in it.
	validated any
}

// cause checks a FileError's cause (see the file comment, a and b).
func (p *problems) cause(err error, ctx fieldContext) {
	msg := err.Error()
	var se *manifest.SyntaxError
	switch {
	case errors.Is(err, manifest.ErrEmpty):
		if ctx.item != "" || !looksEmpty(ctx.data) {
			p.add("ErrEmpty for a manifest with content: %s", clipped(msg))
		}
	case errors.Is(err, manifest.ErrTooLarge):
		if ctx.item == "" && len(ctx.data) <= manifest.MaxManifestBytes || 2*len(ctx.data) <= manifest.MaxManifestBytes {
			p.add("ErrTooLarge for %d bytes: %s", len(ctx.data), clipped(msg))
		}
	case errors.As(err, &se):
		p.syntax(se, msg, ctx)
	case errors.Is(err, manifest.ErrNotOneObject):
		p.notOneObject(msg, ctx)
	default:
		p.fields(err, ctx)
	}
}

// looksEmpty: every line is blank, a comment, a document marker or a
// directive, or the document is null.
func looksEmpty(data []byte) bool {
	if j, err := sigsyaml.YAMLToJSON(data); err == nil && string(bytes.TrimSpace(j)) == "null" {
		return true
	}
	for line := range bytes.Lines(data) {
		t := bytes.TrimSpace(line)
		if len(t) > 0 && t[0] != '#' && line[0] != '%' && !isMarker(line) {
			return false
		}
	}
	return true
}

// documents counts the YAML documents of data with content (a line that is
// not blank, a comment or a directive); JSON is one.
func documents(data []byte) int {
	if isJSONInput(data) {
		return 1
	}
	n, has := 0, false
	for line := range bytes.Lines(append(bytes.Clone(data), "\n---\n"...)) {
		t := bytes.TrimSpace(line)
		switch {
		case isMarker(line):
			if has {
				n++
			}
			has = false
		case len(t) > 0 && t[0] != '#' && line[0] != '%':
			has = true
		}
	}
	return n
}

// isMarker: a line that separates YAML documents, as kubectl splits them
// ("---" at the start of a line) or a document end ("..." then a blank or
// the line's end).
func isMarker(line []byte) bool {
	return bytes.HasPrefix(line, []byte("---")) || documentEndRE.Match(line)
}

var documentEndRE = regexp.MustCompile(`^\.\.\.(\s|$)`)

// isJSONInput: Kubernetes' rule (utilyaml.IsJSONBuffer), which Decode
// follows: the first byte that is not Unicode white space is '{'.
func isJSONInput(data []byte) bool {
	t := bytes.TrimLeftFunc(data, unicode.IsSpace)
	return len(t) > 0 && t[0] == '{'
}

func (p *problems) syntax(se *manifest.SyntaxError, msg string, ctx fieldContext) {
	if ctx.item != "" {
		p.add("syntax error for an item of a document that parsed: %s", clipped(msg))
		return
	}
	lines := bytes.Split(ctx.data, []byte{'\n'})
	switch se.Format {
	case "JSON":
		if !isJSONInput(ctx.data) || json.Valid(ctx.data) {
			p.add("JSON syntax error for input that is not JSON or is valid JSON: %s", clipped(msg))
		}
		if se.Line < 1 || se.Line > len(lines) || se.Column < 1 || se.Column > len(lines[se.Line-1])+1 {
			p.add("JSON syntax error at line %d, column %d: not in the input (%d lines)", se.Line, se.Column, len(lines))
		}
	case "YAML":
		if isJSONInput(ctx.data) {
			p.add("YAML syntax error for JSON input: %s", clipped(msg))
		}
		// The parser may name the line after the last, at the end.
		n := yamlLines(ctx.data)
		if se.Line < 0 || se.Line > n+1 {
			p.add("YAML syntax error at line %d: not in the input (%d lines)", se.Line, n)
		} else if se.Line > 0 && !strings.Contains(msg, "line "+strconv.Itoa(se.Line)) {
			p.add("YAML syntax error %q does not say line %d", clipped(msg), se.Line)
		}
	default:
		p.add("syntax error of format %q: %s", se.Format, clipped(msg))
	}
}

// yamlLines counts lines as YAML 1.1 does: broken at "\n", "\r\n", a
// lone "\r", NEL, LS and PS, in UTF-8 or (after a byte order mark)
// UTF-16.
func yamlLines(data []byte) int {
	var text []rune
	switch {
	case bytes.HasPrefix(data, []byte{0xff, 0xfe}), bytes.HasPrefix(data, []byte{0xfe, 0xff}):
		u := make([]uint16, 0, len(data)/2)
		for i := 2; i+1 < len(data); i += 2 {
			if data[0] == 0xff {
				u = append(u, uint16(data[i])|uint16(data[i+1])<<8)
			} else {
				u = append(u, uint16(data[i])<<8|uint16(data[i+1]))
			}
		}
		text = utf16.Decode(u)
	default:
		text = []rune(string(data))
	}
	n := 1
	for i, r := range text {
		switch r {
		case '\r':
			if i+1 < len(text) && text[i+1] == '\n' {
				continue
			}
			n++
		case '\n', '\u0085', '\u2028', '\u2029':
			n++
		}
	}
	return n
}

var documentsRE = regexp.MustCompile(`found (\d+) YAML documents`)

func (p *problems) notOneObject(msg string, ctx fieldContext) {
	if m := documentsRE.FindStringSubmatch(msg); m != nil {
		n, _ := strconv.Atoi(m[1])
		markers := 0
		for line := range bytes.Lines(ctx.data) {
			if isMarker(line) {
				markers++
			}
		}
		if ctx.item != "" || n < 2 || markers < n-1 {
			p.add("%q, but the input has %d document markers", clipped(msg), markers)
		}
		return
	}
	root, ok := ctx.inputTree()
	if !ok {
		p.add("not-one-object error, and the input does not parse: %s", clipped(msg))
		return
	}
	if v, found := lookup(root, ctx.item); !found {
		p.add("not-one-object error for %q, not in the input: %s", ctx.item, clipped(msg))
	} else if _, isObject := v.(object); isObject {
		p.add("not-one-object error for an object: %s", clipped(msg))
	}
}

// fieldPathRE matches a path as field.Path renders it:
// metadata.labels[app], spec.containers[0].ports[1].hostPort. A key in
// brackets may hold anything, brackets too.
var fieldPathRE = regexp.MustCompile(`(?s)^[a-zA-Z][a-zA-Z0-9]*(\.[a-zA-Z][a-zA-Z0-9]*|\[.*?\])*$`)

// leaves are the errors of err, an aggregate (flattened) or not.
func leaves(err error) []error {
	var agg utilerrors.Aggregate
	if errors.As(err, &agg) {
		return utilerrors.Flatten(agg).Errors()
	}
	return []error{err}
}

func hasFieldError(err error) bool {
	for _, leaf := range leaves(err) {
		var fe *field.Error
		if errors.As(leaf, &fe) {
			return true
		}
	}
	return false
}

// fields checks that every error of err names a field that is there.
func (p *problems) fields(err error, ctx fieldContext) {
	for _, leaf := range leaves(err) {
		msg := leaf.Error()
		var (
			ve       *manifest.ValueError
			fe       *field.Error
			se       sigsjson.FieldError
			path     string
			required bool
			strict   bool
		)
		switch {
		case errors.As(leaf, &ve):
			path = ve.Field
		case errors.As(leaf, &fe):
			path, required = fe.Field, fe.Type == field.ErrorTypeRequired
		case errors.As(leaf, &se):
			// An unknown field's name is whatever the input says, "" or
			// `a"b` too: only its lookup below checks it.
			path, strict = se.FieldPath(), true
		default:
			p.add("an error that names no field: %q", clipped(msg))
			continue
		}
		if !strict && !fieldPathRE.MatchString(path) {
			p.add("error %q names %q, not a field path", clipped(msg), clipped(path))
			continue
		}
		if !strings.Contains(msg, path[:min(len(path), 200)]) && !(strict && strings.Contains(msg, strconv.Quote(path))) {
			p.add("error %q does not say its field %q", clipped(msg), clipped(path))
		}
		if ctx.item != "" && !strings.HasPrefix(path, ctx.item+".") && path != ctx.item {
			p.add("error %q of %s names a field outside it", clipped(msg), ctx.item)
			continue
		}
		if required {
			path = parentPath(path) // the field is missing; its parent is not
		}
		var root any
		if ctx.validated != nil {
			root = ctx.validated
			path = strings.TrimPrefix(strings.TrimPrefix(path, ctx.item), ".")
		} else {
			var ok bool
			if root, ok = ctx.inputTree(); !ok {
				p.add("error %q names a field of an input that does not parse", clipped(msg))
				continue
			}
		}
		if _, found := lookup(root, path); !found || strict && path == "" && !hasEmptyKey(root) {
			where := "the input"
			if ctx.validated != nil {
				where = "the defaulted pod"
			}
			p.add("error %q names %q, which is not in %s", clipped(msg), clipped(path), where)
		}
	}
}

// warning checks that w starts with the path of a field that is set.
func (p *problems) warning(w string, ctx fieldContext) {
	if ctx.validated == nil {
		p.add("warning %q without a validated pod", clipped(w))
		return
	}
	for i := 0; ; {
		j := strings.Index(w[i:], ": ")
		if j < 0 {
			break
		}
		i += j
		path := w[:i]
		i += 2
		if ctx.item != "" && !strings.HasPrefix(path, ctx.item+".") {
			continue
		}
		path = strings.TrimPrefix(strings.TrimPrefix(path, ctx.item), ".")
		if !fieldPathRE.MatchString(path) {
			continue
		}
		if _, found := lookup(ctx.validated, path); found {
			return
		}
	}
	p.add("warning %q does not start with the path of a field that is set", clipped(w))
}

// hasEmptyKey: an unknown field "" is named by the empty path.
func hasEmptyKey(root any) bool {
	m, ok := root.(object)
	_, has := m[""]
	return ok && has
}

// parentPath drops the last element of a field path: "a.b[0]" → "a.b",
// "a.b" → "a", "a" → "".
func parentPath(path string) string {
	if strings.HasSuffix(path, "]") {
		if i := strings.LastIndexByte(path, '['); i >= 0 {
			return path[:i]
		}
	}
	if i := strings.LastIndexByte(path, '.'); i >= 0 {
		return path[:i]
	}
	return ""
}

// input caches inputTree(data).
type input struct {
	once sync.Once
	tree any
	ok   bool
}

func (c fieldContext) inputTree() (any, bool) {
	if c.input == nil {
		return inputTree(c.data)
	}
	c.input.once.Do(func() { c.input.tree, c.input.ok = inputTree(c.data) })
	return c.input.tree, c.input.ok
}

// inputTree is the manifest as written, as JSON values: for YAML, its
// first document that is not empty, documents split at lines starting
// with "---" or "..." as kubectl splits them (so "---#" is a separator,
// though a YAML parser reads a scalar), else the first document the
// parser reads (which decodes UTF-16 too).
func inputTree(data []byte) (any, bool) {
	j := data
	if !isJSONInput(data) {
		j = nil
		var doc []byte
		for line := range bytes.Lines(append(bytes.Clone(data), "\n---\n"...)) {
			if !isMarker(line) {
				doc = append(doc, line...)
				continue
			}
			if out, err := sigsyaml.YAMLToJSON(doc); err == nil && string(bytes.TrimSpace(out)) != "null" {
				j = out
				break
			}
			doc = nil
		}
		if j == nil {
			out, err := sigsyaml.YAMLToJSON(data)
			if err != nil {
				return nil, false
			}
			j = out
		}
	}
	return parseTree(j)
}

// tree is v as JSON values.
func tree(v any) any {
	data, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	out, _ := parseTree(data)
	return out
}

// object is a JSON object with every value of a duplicated key (an error
// may be about any of them).
type object map[string][]any

// parseTree parses JSON into object, []any and scalars.
func parseTree(data []byte) (any, bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var value func() (any, error)
	value = func() (any, error) {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		switch tok {
		case json.Delim('{'):
			obj := object{}
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return nil, err
				}
				v, err := value()
				if err != nil {
					return nil, err
				}
				key, _ := k.(string)
				obj[key] = append(obj[key], v)
			}
			_, err := dec.Token()
			return obj, err
		case json.Delim('['):
			list := []any{}
			for dec.More() {
				v, err := value()
				if err != nil {
					return nil, err
				}
				list = append(list, v)
			}
			_, err := dec.Token()
			return list, err
		}
		return tok, nil
	}
	v, err := value()
	return v, err == nil
}

// lookup finds path in root, JSON values. A path is ambiguous when a key
// holds '.', '[' or ']', so every split that names existing keys is tried.
func lookup(root any, path string) (any, bool) {
	return lookupFrom(root, path, true)
}

func lookupFrom(node any, rest string, top bool) (any, bool) {
	if rest == "" {
		return node, true
	}
	switch n := node.(type) {
	case object:
		// .name (or name at the top) ends at the next '.' or '[', or one
		// after it when a key holds them.
		if name, ok := strings.CutPrefix(rest, "."); ok || top {
			if top {
				name = rest
			}
			for i := 0; i <= len(name); i++ {
				if i < len(name) && name[i] != '.' && name[i] != '[' {
					continue
				}
				for _, v := range n[name[:i]] {
					if found, ok := lookupFrom(v, name[i:], false); ok {
						return found, true
					}
				}
			}
		}
		// [key] ends at one of the ']' that follow.
		if key, ok := strings.CutPrefix(rest, "["); ok && !top {
			for i := 0; i < len(key); i++ {
				if key[i] != ']' {
					continue
				}
				for _, v := range n[key[:i]] {
					if found, ok := lookupFrom(v, key[i+1:], false); ok {
						return found, true
					}
				}
			}
		}
	case []any:
		if idx, ok := strings.CutPrefix(rest, "["); ok {
			end := strings.IndexByte(idx, ']')
			if end < 0 {
				return nil, false
			}
			i, err := strconv.Atoi(idx[:end])
			if err != nil || i < 0 || i >= len(n) {
				return nil, false
			}
			return lookupFrom(n[i], idx[end+1:], false)
		}
	}
	return nil, false
}

func head(data []byte) []byte {
	if len(data) > 200 {
		return append(bytes.Clone(data[:200]), "..."...)
	}
	return data
}

func clipped(s string) string {
	if len(s) > 500 {
		return s[:500] + fmt.Sprintf("... (%d bytes)", len(s))
	}
	return s
}
