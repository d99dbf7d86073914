package dir

import (
	"regexp"
	"strings"
)

// skipReason says why a directory entry called name is not read as a
// manifest, or returns "" when it is. As the kubelet's file source, every
// file whose name does not start with a dot is read, whatever its
// extension (GCE ships its static pods as *.manifest), except the
// artefacts that editors, backups, package managers and atomic writers
// leave next to a manifest: read, they would run a stale copy as a second
// pod (a kube-apiserver.yaml.bak is a known kubeadm footgun).
//
// Names are compared without regard to case.
func skipReason(name string) string {
	lower := strings.ToLower(name)
	switch {
	case name == "":
		return "empty name"
	case strings.HasPrefix(name, "."):
		return "a hidden file (its name starts with a dot), as the kubelet"
	case strings.HasSuffix(name, "~"):
		return "an editor's backup (name~)"
	case strings.HasPrefix(name, "#") && strings.HasSuffix(name, "#"):
		return "an editor's autosave (#name#)"
	case name == "4913":
		return "vim's write probe (4913)"
	case sedTemp.MatchString(name):
		return "a temporary file of sed -i (sedXXXXXX)"
	case tempFile.MatchString(name):
		return "a temporary file (*.tmp, *.tmp.XXXX, *.tmp123)"
	}
	for _, s := range skippedSuffixes {
		if strings.HasSuffix(lower, s.suffix) {
			return s.why + " (*" + s.suffix + ")"
		}
	}
	// Extensions that start a longer one: .dpkg-old, .ucf-dist.
	for _, s := range skippedExtPrefixes {
		if i := strings.LastIndex(lower, s.prefix); i > 0 && !strings.Contains(lower[i+1:], ".") {
			return s.why + " (*" + s.prefix + "*)"
		}
	}
	return ""
}

// sedTemp matches the temporary file of GNU sed -i: "sed" and six random
// letters or digits.
var sedTemp = regexp.MustCompile(`^sed[A-Za-z0-9]{6}$`)

// tempFile matches the temporary files atomic writers rename into place:
// name.tmp, name.temp, and either followed by a random or numbered
// suffix (name.tmp.Ab12Cd, name.tmp-42, name.tmp123), but not name.tmpl.
var tempFile = regexp.MustCompile(`(?i)\.te?mp([-_.][0-9a-z]+|[0-9]+)?$`)

// skippedSuffixes are the name endings (lower case) never read.
var skippedSuffixes = []struct{ suffix, why string }{
	{".swp", "a vim swap file"},
	{".swo", "a vim swap file"},
	{".swx", "a vim swap file"},
	{".bak", "a backup"},
	{".orig", "a backup"},
	{".old", "a backup"},
	{".rej", "a rejected patch"},
	{".save", "an editor's backup"},
	{".part", "a partial download"},
	{".rpmnew", "a package manager's copy"},
	{".rpmsave", "a package manager's copy"},
	{".rpmorig", "a package manager's copy"},
}

// skippedExtPrefixes are the beginnings (lower case) of a last extension
// never read: package managers' copies and atomic writers' temporary files.
var skippedExtPrefixes = []struct{ prefix, why string }{
	{".dpkg-", "a package manager's copy"},
	{".ucf-", "a package manager's copy"},
}
