package dir

import "testing"

func TestIsManifestName(t *testing.T) {
	tests := map[string]bool{
		"web.yaml":      true,
		"web.yml":       true,
		"web.json":      true,
		"WEB.YAML":      true,
		"a.b.yaml":      true,
		".web.yaml":     false, // dotfile
		".web.yaml.swp": false, // vim swap
		"web.yaml.swp":  false,
		"web.yaml~":     false, // backup
		"#web.yaml#":    false, // emacs autosave
		"4913":          false, // vim's write probe
		"web.yaml.tmp":  false,
		"web.tmp":       false,
		"README.md":     false,
		"web":           false,
		"yaml":          false,
		"":              false,
	}
	for name, want := range tests {
		if got := isManifestName(name); got != want {
			t.Errorf("isManifestName(%q) = %v, want %v", name, got, want)
		}
	}
}
