package dir

import (
	"strings"
	"testing"
)

// TestSkipReason: every file is read but dotfiles and the artefacts of
// editors, backups, package managers and atomic writers, each skipped with
// a reason naming what it is.
func TestSkipReason(t *testing.T) {
	tests := map[string]string{ // name → substring of the reason; "" = read
		"web.yaml":                    "",
		"web.yml":                     "",
		"web.json":                    "",
		"WEB.YAML":                    "",
		"a.b.yaml":                    "",
		"kube-apiserver.manifest":     "", // GCE's static pods
		"web":                         "",
		"yaml":                        "",
		"README.md":                   "", // read, as the kubelet does (and reported if it is no pod)
		"web.yaml.d":                  "",
		"sedentary.yaml":              "",
		"web.temperature":             "",
		"web.rpmx.yaml":               "",
		"":                            "empty name",
		".web.yaml":                   "hidden",
		"..data":                      "hidden",
		".web.yaml.swp":               "hidden",
		"web.yaml.swp":                "vim swap file (*.swp)",
		"web.yaml.swx":                "vim swap file (*.swx)",
		"web.yaml.SWO":                "vim swap file (*.swo)",
		"web.yaml~":                   "backup (name~)",
		"#web.yaml#":                  "autosave (#name#)",
		"4913":                        "vim's write probe",
		"sedAb12Cd":                   "sed -i",
		"kube-apiserver.yaml.bak":     "a backup (*.bak)",
		"kube-apiserver.yaml.BAK":     "a backup (*.bak)",
		"web.yaml.orig":               "a backup (*.orig)",
		"web.yaml.old":                "a backup (*.old)",
		"web.yaml.rej":                "rejected patch",
		"web.yaml.save":               "backup (*.save)",
		"web.yaml.part":               "partial download",
		"web.yaml.dpkg-old":           "package manager's copy (*.dpkg-*)",
		"web.yaml.dpkg-dist":          "package manager's copy (*.dpkg-*)",
		"web.yaml.dpkg-new":           "package manager's copy (*.dpkg-*)",
		"web.yaml.ucf-dist":           "package manager's copy (*.ucf-*)",
		"web.yaml.rpmnew":             "package manager's copy (*.rpm",
		"web.yaml.rpmsave":            "package manager's copy (*.rpm",
		"web.yaml.rpmorig":            "package manager's copy (*.rpm",
		"web.yaml.tmp":                "temporary file",
		"web.tmp":                     "temporary file",
		"web.yaml.tmp123456":          "temporary file",
		"web.yaml.temp":               "temporary file",
		"kube-apiserver.manifest.bak": "a backup",
	}
	for name, want := range tests {
		got := skipReason(name)
		if want == "" && got != "" || want != "" && !strings.Contains(got, want) {
			t.Errorf("skipReason(%q) = %q, want %q", name, got, want)
		}
	}
}
