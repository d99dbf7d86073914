//go:build !linux

package volumeprep

// mountTmpfs does nothing off Linux: secret volumes stay on disk under
// their 0700 parent.
func mountTmpfs(string) error { return nil }

func unmountSecrets(string) error { return nil }
