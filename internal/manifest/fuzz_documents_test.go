package manifest_test

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/actorlet/actorlet/internal/manifest"
)

// FuzzLoadDocuments drives LoadFileDocuments, the directory source's
// path since a file may hold several documents. For any bytes:
//
//   - strict, a file LoadFile reads as one document gives the same result
//     (the same pod and UID, or the same error), so every check of
//     FuzzLoadManifest holds for it too (checkLoad runs on it);
//   - every document has a pod or an error, not both; every error is a
//     *manifest.FileError naming the file, and, in a file of several, a
//     *manifest.DocumentError naming a document of the file; no message
//     shows a Go type; every pod has a UID;
//   - lenient, a document is refused only where strict refuses it too,
//     and each unknown field strict names is a warning lenient gives.
//
// Fuzz with
//
//	go test -run '^$' -fuzz '^FuzzLoadDocuments$' -fuzztime 10m ./internal/manifest/
func FuzzLoadDocuments(f *testing.F) {
	for _, s := range append(smallSeeds(), moreSeeds()...) {
		f.Add([]byte(s))
		f.Add([]byte(s + "\n---\n" + minimal))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, p := range checkDocuments(data, loadDocuments(data, true), loadDocuments(data, false), load(data)) {
			t.Errorf("%s\n  input: %q", p, head(data))
		}
	})
}

type documentsResult struct {
	docs []manifest.Document
	err  error
}

func loadDocuments(data []byte, strict bool) documentsResult {
	docs, err := manifest.LoadFileDocuments(manifest.LoadOptions{Strict: strict}, fuzzNode, fuzzPath, data)
	return documentsResult{docs: docs, err: err}
}

// checkDocuments returns what is wrong with LoadFileDocuments' strict and
// lenient results for data, given LoadFile's, one.
func checkDocuments(data []byte, strict, lenient documentsResult, one loadResult) []string {
	var probs problems
	for _, r := range []documentsResult{strict, lenient} {
		if r.err != nil {
			if len(r.docs) > 0 {
				probs.add("an error and %d documents: %v", len(r.docs), r.err)
			}
			checkDocumentError(&probs, r.err, 0)
			continue
		}
		if len(r.docs) == 0 {
			probs.add("no document and no error")
		}
		for i, d := range r.docs {
			objects := 0
			for _, set := range []bool{d.Pod != nil, d.ConfigMap != nil, d.Secret != nil} {
				if set {
					objects++
				}
			}
			switch {
			case d.Err != nil && objects > 0:
				probs.add("document %d: a pod (or ConfigMap or Secret) and an error: %v", d.Index, d.Err)
			case d.Err == nil && objects != 1:
				probs.add("document %d: %d objects and no error, want one", d.Index, objects)
			case d.Pod != nil && d.Pod.UID == "":
				probs.add("document %d: a pod without a UID", d.Index)
			}
			if i > 0 && d.Index <= r.docs[i-1].Index {
				probs.add("document %d after document %d", d.Index, r.docs[i-1].Index)
			}
			if d.Err != nil {
				want := 0
				if len(r.docs) > 1 {
					want = d.Index
				}
				checkDocumentError(&probs, d.Err, want)
			}
		}
	}

	// Strict, one document: LoadFile's result. (LoadFile refuses a file of
	// several documents, and a separator followed by content, which
	// spoils only its own document here.)
	separator := one.err != nil && strings.Contains(one.msg, "only a comment may follow a document separator") && len(strict.docs) > 1
	if (one.err == nil || !errors.Is(one.err, manifest.ErrNotOneObject)) && !separator {
		var pod, msg = "", ""
		switch {
		case strict.err != nil:
			msg = strict.err.Error()
		case len(strict.docs) != 1:
			probs.add("%d documents where LoadFile reads one (%v)", len(strict.docs), one.err)
		case strict.docs[0].Err != nil:
			msg = strict.docs[0].Err.Error()
		default:
			pod = string(strict.docs[0].Pod.UID)
		}
		// What DecodeDocuments reads besides pods, named in its messages.
		msg = kindsRE.Replace(msg)
		switch {
		case len(strict.docs) == 1 && strict.docs[0].Kind != manifest.PodKind && strict.docs[0].Err == nil:
			// A ConfigMap or Secret, which LoadFile refuses.
		case one.err != nil && msg != one.msg:
			probs.add("strict error %q, LoadFile's %q", msg, one.msg)
		case one.err == nil && pod != string(one.pod.UID):
			probs.add("strict pod %q (error %q), LoadFile's %q", pod, msg, one.pod.UID)
		}
	}

	// Lenient refuses no more than strict, and warns of what strict refuses.
	if strict.err == nil && lenient.err == nil && len(strict.docs) == len(lenient.docs) {
		for i, s := range strict.docs {
			l := lenient.docs[i]
			if l.Err != nil && s.Err == nil {
				probs.add("document %d: lenient refuses (%v) what strict accepts", s.Index, l.Err)
			}
			if s.Err == nil || l.Err != nil {
				continue
			}
			for _, m := range unknownFieldRE.FindAllString(s.Err.Error(), -1) {
				if !strings.Contains(strings.Join(l.Warnings, "\n"), m) {
					probs.add("document %d: strict refuses %s, lenient does not warn of it (warnings %q)", s.Index, m, l.Warnings)
				}
			}
		}
	} else if (strict.err == nil) != (lenient.err == nil) || len(strict.docs) != len(lenient.docs) {
		probs.add("strict and lenient split the file differently: %d documents (%v), %d (%v)", len(strict.docs), strict.err, len(lenient.docs), lenient.err)
	}
	return probs
}

// checkDocumentError checks an error about the file (doc 0) or its
// document doc (in a file of several).
func checkDocumentError(probs *problems, err error, doc int) {
	var fe *manifest.FileError
	if !errors.As(err, &fe) || fe.Path != fuzzPath || !strings.HasPrefix(err.Error(), "manifest "+fuzzPath+": ") {
		probs.add("error %q is not a *manifest.FileError for %s", err, fuzzPath)
	}
	var de *manifest.DocumentError
	switch isDoc := errors.As(err, &de); {
	case doc == 0 && isDoc:
		probs.add("error %q names a document in a file of one", err)
	case doc > 0 && (!isDoc || de.Index != doc || !strings.Contains(err.Error(), fmt.Sprintf(": document %d (line %d): ", doc, de.Line))):
		probs.add("error %q does not name document %d", err, doc)
	}
	for _, goType := range []string{"interface {}", "map[string]", "[]interface"} {
		if strings.Contains(err.Error(), goType) {
			probs.add("error %q shows a Go type", err)
		}
	}
}

// TestFuzzDocumentsCheckerFails: each check of checkDocuments fails on a
// result that breaks it.
func TestFuzzDocumentsCheckerFails(t *testing.T) {
	two := []byte(minimal + "---\n" + minimal)
	good := func(data []byte) (documentsResult, documentsResult, loadResult) {
		return loadDocuments(data, true), loadDocuments(data, false), load(data)
	}
	if s, l, o := good(two); len(checkDocuments(two, s, l, o)) != 0 {
		t.Fatalf("a good result has problems: %q", checkDocuments(two, s, l, o))
	}
	one := []byte(minimal)
	typo := []byte(strings.Replace(minimal, "kind: Pod\n", "kind: Pod\nspecc: {}\n", 1))
	for _, c := range []struct {
		name string
		data []byte
		bend func(s, l *documentsResult, o *loadResult)
		want string
	}{
		{"pod and error", two, func(s, _ *documentsResult, _ *loadResult) { s.docs[0].Err = errors.New("x") }, "and an error"},
		{"neither", two, func(s, _ *documentsResult, _ *loadResult) { s.docs[0].Pod = nil }, "0 objects and no error"},
		{"no UID", two, func(s, _ *documentsResult, _ *loadResult) {
			s.docs[1].Pod = s.docs[1].Pod.DeepCopy()
			s.docs[1].Pod.UID = ""
		}, "without a UID"},
		{"not a FileError", two, func(s, _ *documentsResult, _ *loadResult) { s.docs[1].Pod, s.docs[1].Err = nil, errors.New("x") }, "not a *manifest.FileError"},
		{"no document named", two, func(s, _ *documentsResult, _ *loadResult) {
			s.docs[1].Pod, s.docs[1].Err = nil, &manifest.FileError{Path: fuzzPath, Err: errors.New("x")}
		}, "does not name document 2"},
		{"Go type", one, func(s, _ *documentsResult, _ *loadResult) {
			s.docs[0].Pod, s.docs[0].Err = nil, &manifest.FileError{Path: fuzzPath, Err: errors.New("map[interface {}]interface {}{}")}
		}, "shows a Go type"},
		{"not LoadFile's", one, func(_, _ *documentsResult, o *loadResult) { o.pod = o.pod.DeepCopy(); o.pod.UID = "other" }, "LoadFile's"},
		{"lenient refuses more", two, func(_, l *documentsResult, _ *loadResult) {
			l.docs[0].Pod, l.docs[0].Err = nil, &manifest.FileError{Path: fuzzPath, Err: &manifest.DocumentError{Index: 1, Line: 1, Err: errors.New("x")}}
		}, "lenient refuses"},
		{"no warning", typo, func(_, l *documentsResult, _ *loadResult) { l.docs[0].Warnings = nil }, "lenient does not warn"},
	} {
		s, l, o := good(c.data)
		c.bend(&s, &l, &o)
		if probs := checkDocuments(c.data, s, l, o); !strings.Contains(strings.Join(probs, "\n"), c.want) {
			t.Errorf("%s: problems %q, want one saying %q", c.name, probs, c.want)
		}
	}
}

// kindsRE matches the kinds DecodeDocuments reads, as its messages list
// them where Decode's say "Pod".
var kindsRE = strings.NewReplacer(`Pod, ConfigMap or Secret`, `Pod`, `want Pod, ConfigMap, Secret`, `want Pod`,
	`supported values: "Pod", "ConfigMap", "Secret"`, `supported values: "Pod"`)

// unknownFieldRE matches a strict decoder's unknown-field error.
var unknownFieldRE = regexp.MustCompile(`unknown field "[^"]*"`)
