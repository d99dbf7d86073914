package cri

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"go.uber.org/zap"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/actorlet/actorlet/runtimeadapter"
)

// The kubelet's defaults of container log rotation
// (containerLogMaxSize, containerLogMaxFiles, and how often it looks).
const (
	DefaultLogMaxSize        = 10 << 20
	DefaultLogMaxFiles       = 5
	DefaultLogRotateInterval = 10 * time.Second
)

// rotatedSuffix is the time format of a rotated log's suffix, as the
// kubelet's: <log>.<YYYYMMDD-hhmmss>.
const rotatedSuffix = "20060102-150405"

// RotateLogs rotates the log files of node's running containers, as the
// kubelet does for CRI runtimes (which do not): a log past maxSize bytes
// is renamed <log>.<time>, the runtime is told to reopen it
// (ReopenContainerLog), and of the rotated files only the newest
// maxFiles-1 are kept. Errors name the container; one container's error
// does not stop the others'.
func (r *Runtime) RotateLogs(ctx context.Context, node string, maxSize int64, maxFiles int) error {
	if maxFiles < 2 {
		maxFiles = 2
	}
	cs, err := r.rs.ListContainers(ctx, &runtimeapi.ListContainersRequest{Filter: &runtimeapi.ContainerFilter{
		State:         &runtimeapi.ContainerStateValue{State: runtimeapi.ContainerState_CONTAINER_RUNNING},
		LabelSelector: map[string]string{runtimeadapter.LabelNode: node},
	}})
	if err != nil {
		return wrap(ctx, err, "rotate logs of node %s: list containers", node)
	}
	var errs []error
	for _, c := range cs.GetContainers() {
		st, err := r.rs.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: c.GetId()})
		if err != nil {
			if !isNotFound(err) {
				errs = append(errs, wrap(ctx, err, "rotate log of container %s", c.GetId()))
			}
			continue
		}
		if err := r.rotate(ctx, c.GetId(), st.GetStatus().GetLogPath(), maxSize, maxFiles, time.Now()); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// rotate rotates one container's log when it is past maxSize.
func (r *Runtime) rotate(ctx context.Context, id, path string, maxSize int64, maxFiles int, now time.Time) error {
	if path == "" {
		return nil
	}
	// Old rotated files first: a failed rotation must not keep them.
	if err := pruneRotated(path, maxFiles-1); err != nil {
		return fmt.Errorf("rotate log of container %s: %w", id, err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Size() <= maxSize {
		return nil // not there (yet), or small enough
	}
	rotated := path + "." + now.UTC().Format(rotatedSuffix)
	if fileExists(rotated) {
		return nil // rotated this second already
	}
	if err := os.Rename(path, rotated); err != nil {
		return fmt.Errorf("rotate log of container %s: %w", id, err)
	}
	if _, err := r.rs.ReopenContainerLog(ctx, &runtimeapi.ReopenContainerLogRequest{ContainerId: id}); err != nil {
		// The runtime still writes the renamed file: name it back.
		if rerr := os.Rename(rotated, path); rerr != nil {
			r.log.Warn("log rotation: could not name the log back", zap.String("container", id), zap.String("file", rotated), zap.Error(rerr))
		}
		return wrap(ctx, err, "rotate log of container %s: reopen %s", id, path)
	}
	return pruneRotated(path, maxFiles-1)
}

// pruneRotated removes all but the newest keep rotated files of log path.
func pruneRotated(path string, keep int) error {
	matches, err := filepath.Glob(path + ".*")
	if err != nil {
		return err
	}
	for _, old := range toPrune(path, matches, keep) {
		if err := os.Remove(old); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}

// toPrune is what of the files beside log path to remove so that only the
// newest keep rotated ones (<path>.<YYYYMMDD-hhmmss>, possibly with a
// further suffix such as .gz) are left; other files are not touched.
func toPrune(path string, files []string, keep int) []string {
	var rotated []string
	for _, f := range files {
		suffix, ok := strings.CutPrefix(f, path+".")
		if !ok || len(suffix) < len(rotatedSuffix) {
			continue
		}
		if _, err := time.Parse(rotatedSuffix, suffix[:len(rotatedSuffix)]); err == nil {
			rotated = append(rotated, f)
		}
	}
	sort.Strings(rotated) // the time format sorts by time
	if len(rotated) <= keep {
		return nil
	}
	return rotated[:len(rotated)-keep]
}

// RotateLogsEvery runs RotateLogs for node every interval until ctx ends,
// logging its errors.
func (r *Runtime) RotateLogsEvery(ctx context.Context, node string, interval time.Duration, maxSize int64, maxFiles int) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		cctx, cancel := context.WithTimeout(ctx, interval)
		if err := r.RotateLogs(cctx, node, maxSize, maxFiles); err != nil && ctx.Err() == nil {
			r.log.Warn("container log rotation failed", zap.String("node", node), zap.Error(err))
		}
		cancel()
	}
}
