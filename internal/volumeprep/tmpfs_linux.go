package volumeprep

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// mountTmpfs mounts a tmpfs of size bytes on dir (made before, see
// podsync.PodDirs) unless one is there, as the kubelet keeps secret
// volumes in memory: nosuid, nodev, noexec, mode 0755. Mounting needs
// root (CAP_SYS_ADMIN); without it the directory stays on the disk of
// --root-dir, under its 0700 parent (see the README).
func mountTmpfs(dir string, size int64) error {
	if os.Geteuid() != 0 {
		return nil
	}
	mounted, err := isMountPoint(dir)
	if err != nil || mounted {
		return err
	}
	data := "mode=0755"
	if size > 0 { // size=0 would be no limit at all
		data += fmt.Sprintf(",size=%d", size)
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", syscall.MS_NOSUID|syscall.MS_NODEV|syscall.MS_NOEXEC, data); err != nil {
		return fmt.Errorf("mount a tmpfs on %s: %w", dir, err)
	}
	return nil
}

// nodeMemory is the node's memory in bytes (0 when it cannot be read).
func nodeMemory() int64 {
	var si syscall.Sysinfo_t
	if err := syscall.Sysinfo(&si); err != nil {
		return 0
	}
	return int64(si.Totalram) * int64(si.Unit)
}

// isMountPoint reports whether dir is on another device than its parent.
func isMountPoint(dir string) (bool, error) {
	var st, parent syscall.Stat_t
	if err := syscall.Lstat(dir, &st); err != nil {
		return false, fmt.Errorf("secret volume %s: %w", dir, err)
	}
	if err := syscall.Lstat(filepath.Dir(dir), &parent); err != nil {
		return false, fmt.Errorf("secret volume %s: %w", dir, err)
	}
	return st.Dev != parent.Dev, nil
}

// unmountSecrets unmounts the tmpfs of each secret volume under dir (a
// pod's volumes/secret), lazily (a container that still has it open
// keeps it until it ends). A missing dir is fine.
func unmountSecrets(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("secret volumes %s: %w", dir, err)
	}
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		if mounted, err := isMountPoint(p); err != nil || !mounted {
			continue
		}
		if err := syscall.Unmount(p, syscall.MNT_DETACH); err != nil {
			return fmt.Errorf("unmount secret volume %s: %w", p, err)
		}
	}
	return nil
}
