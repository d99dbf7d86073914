package dir

import (
	"path/filepath"
	"strings"
)

// manifestExts are the file extensions read as manifests (compared
// without regard to case).
var manifestExts = []string{".yaml", ".yml", ".json"}

// isManifestName reports whether a directory entry called name is read as a
// manifest: it has a manifest extension and is not a dotfile or an editor's
// temporary file (name~, *.swp, #name#, vim's 4913 probe, *.tmp).
func isManifestName(name string) bool {
	switch {
	case name == "",
		strings.HasPrefix(name, "."),
		strings.HasSuffix(name, "~"),
		strings.HasSuffix(name, ".swp"),
		strings.HasSuffix(name, ".tmp"),
		strings.HasPrefix(name, "#") && strings.HasSuffix(name, "#"),
		name == "4913":
		return false
	}
	ext := strings.ToLower(filepath.Ext(name))
	for _, e := range manifestExts {
		if ext == e {
			return true
		}
	}
	return false
}
