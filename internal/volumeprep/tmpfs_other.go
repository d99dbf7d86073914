//go:build !linux

package volumeprep

// mountTmpfs does nothing off Linux: secret volumes stay on disk under
// their 0700 parent.
func mountTmpfs(string, int64) error { return nil }

func nodeMemory() int64 { return 0 }

func unmountSecrets(string) error { return nil }
