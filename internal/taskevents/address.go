package taskevents

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
)

// DockerSockets are where Docker's containerd listens, in the order
// Address tries them: the system containerd Docker uses when one runs
// (Debian's and Docker's own packages), then the one dockerd starts itself.
var DockerSockets = []string{
	"/run/containerd/containerd.sock",
	"/var/run/docker/containerd/containerd.sock",
}

// Address picks the containerd socket to follow. flag, when set (a path,
// or unix://path), is used as given; otherwise the first of candidates
// that is a socket. stat is os.Stat in production. The second result is
// why none was picked, for the log line that says which path is used.
func Address(flag string, candidates []string, stat func(string) (fs.FileInfo, error)) (string, error) {
	if flag != "" {
		p := strings.TrimPrefix(flag, "unix://")
		if p == "" || !strings.HasPrefix(p, "/") {
			return "", fmt.Errorf("containerd address %q: want an absolute socket path", flag)
		}
		return p, nil
	}
	var why []string
	for _, c := range candidates {
		fi, err := stat(c)
		switch {
		case err != nil && errors.Is(err, fs.ErrNotExist):
			why = append(why, c+": absent")
		case err != nil:
			why = append(why, fmt.Sprintf("%s: %v", c, err))
		case fi.Mode().Type() != fs.ModeSocket:
			why = append(why, c+": not a socket")
		default:
			return c, nil
		}
	}
	return "", fmt.Errorf("no containerd socket (%s)", strings.Join(why, "; "))
}

// FindDocker is Address over DockerSockets with os.Stat.
func FindDocker(flag string) (string, error) { return Address(flag, DockerSockets, os.Stat) }
