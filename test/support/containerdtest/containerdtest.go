// Package containerdtest runs a private containerd with its CRI plugin for
// tests: Debian's `containerd` binary on its own root, state, socket and
// config under a temporary directory, never touching the containerd Docker
// runs (which has CRI disabled anyway). One daemon serves a whole test
// package: Require starts it on its first call, and Main, called from the
// package's TestMain, tears it down after the tests (pods first, then the
// daemon, its mounts and its directory).
//
// Images come from the local Docker engine: `docker save` of the images
// testimages builds, piped into `ctr -n k8s.io images import`. No registry
// is involved. The daemon's sandbox image is testimages.PauseTag.
//
// Without a containerd binary (or Docker for the images) a test is
// skipped, and fails when CI=true.
package containerdtest

import (
	"bufio"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/actorlet/actorlet/test/support/testimages"
)

// Containerd is one private containerd.
type Containerd struct {
	// Dir holds its root, state, config, socket and log.
	Dir string
	// Socket is the path of its gRPC socket; Endpoint the same as
	// "unix://" + Socket.
	Socket, Endpoint string
	// SandboxImage is the image its CRI plugin runs as sandboxes.
	SandboxImage string
	cmd          *exec.Cmd
	exited       chan struct{}
}

// Timeouts.
const (
	startTimeout  = 30 * time.Second
	importTimeout = 2 * time.Minute
	stopTimeout   = time.Minute
)

// config is the daemon's configuration: only the paths, the sandbox image
// and restrict_oom_score_adj (root on CI may lack CAP_SYS_RESOURCE, and the
// sandbox's default oom_score_adj of -998 then fails its start) differ from
// containerd's defaults. The CNI directories are empty: no pod network.
// The template is a file of its own so that the shell harnesses under
// bench/kubelet make their containerd from the same lines (with sed).
//
//go:embed config.toml.tmpl
var config string

// Start starts a private containerd under a new temporary directory and
// waits until its CRI service answers. Stop it with Stop.
func Start(ctx context.Context, sandboxImage string) (*Containerd, error) {
	bin, err := exec.LookPath("containerd")
	if err != nil {
		return nil, fmt.Errorf("containerd binary: %w (apt-get install containerd)", err)
	}
	if _, err := exec.LookPath("ctr"); err != nil {
		return nil, fmt.Errorf("ctr binary: %w (it comes with containerd)", err)
	}
	dir, err := os.MkdirTemp("", "actorlet-containerd-")
	if err != nil {
		return nil, fmt.Errorf("containerd: %w", err)
	}
	for _, d := range []string{"root", "state", "cni/bin", "cni/net.d", "opt"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return nil, fmt.Errorf("containerd: %w", err)
		}
	}
	cfg := strings.NewReplacer("{{DIR}}", dir, "{{SANDBOX}}", sandboxImage).Replace(config)
	cfgPath := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		return nil, fmt.Errorf("containerd: %w", err)
	}
	logf, err := os.Create(filepath.Join(dir, "containerd.log"))
	if err != nil {
		return nil, fmt.Errorf("containerd: %w", err)
	}
	defer logf.Close()
	c := &Containerd{
		Dir: dir, Socket: filepath.Join(dir, "containerd.sock"), SandboxImage: sandboxImage,
		exited: make(chan struct{}),
	}
	c.Endpoint = "unix://" + c.Socket
	c.cmd = exec.Command(bin, "--config", cfgPath)
	c.cmd.Stdout, c.cmd.Stderr = logf, logf
	// Its own process group: a Ctrl-C of `go test` reaches the test,
	// which tears the daemon down in order.
	c.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := c.cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("containerd: start %s: %w", bin, err)
	}
	go func() { _ = c.cmd.Wait(); close(c.exited) }()
	if err := c.waitReady(ctx); err != nil {
		c.Stop()
		return nil, err
	}
	return c, nil
}

// waitReady polls the CRI Version until it answers.
func (c *Containerd) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	conn, err := grpc.NewClient(c.Endpoint, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return fmt.Errorf("containerd: %w", err)
	}
	defer conn.Close()
	rs := runtimeapi.NewRuntimeServiceClient(conn)
	var last error
	for delay := 10 * time.Millisecond; ; delay = min(2*delay, 200*time.Millisecond) {
		cctx, ccancel := context.WithTimeout(ctx, time.Second)
		_, last = rs.Version(cctx, &runtimeapi.VersionRequest{})
		ccancel()
		if last == nil {
			return nil
		}
		select {
		case <-c.exited:
			return fmt.Errorf("containerd exited at start: %s", c.logTail())
		case <-ctx.Done():
			return fmt.Errorf("containerd did not answer within %v: %v; %s", startTimeout, last, c.logTail())
		case <-time.After(delay):
		}
	}
}

// logTail is the end of the daemon's log, for errors.
func (c *Containerd) logTail() string {
	b, _ := os.ReadFile(filepath.Join(c.Dir, "containerd.log"))
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return "log: " + string(b)
}

// Import copies images from the local Docker engine into the daemon's
// k8s.io namespace (docker save | ctr images import), where CRI finds
// them.
func (c *Containerd) Import(ctx context.Context, images ...string) error {
	ctx, cancel := context.WithTimeout(ctx, importTimeout)
	defer cancel()
	save := exec.CommandContext(ctx, "docker", append([]string{"save"}, images...)...)
	imp := exec.CommandContext(ctx, "ctr", "-a", c.Socket, "-n", "k8s.io", "images", "import", "-")
	pipe, err := save.StdoutPipe()
	if err != nil {
		return err
	}
	imp.Stdin = pipe
	var saveErr, impOut strings.Builder
	save.Stderr = &saveErr
	imp.Stdout, imp.Stderr = &impOut, &impOut
	if err := save.Start(); err != nil {
		return fmt.Errorf("docker save %v: %w", images, err)
	}
	if err := imp.Run(); err != nil {
		_ = save.Wait()
		return fmt.Errorf("ctr images import of %v: %w: %s", images, err, impOut.String())
	}
	if err := save.Wait(); err != nil {
		return fmt.Errorf("docker save %v: %w: %s", images, err, saveErr.String())
	}
	return nil
}

// Stop removes every pod sandbox (and so every container) through CRI,
// so that no shim outlives the daemon, then stops the daemon, unmounts
// what it left mounted under Dir and removes Dir.
func (c *Containerd) Stop() error {
	var errs []error
	ctx, cancel := context.WithTimeout(context.Background(), stopTimeout)
	defer cancel()
	select {
	case <-c.exited:
	default:
		errs = append(errs, c.removePods(ctx))
		_ = c.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-c.exited:
		case <-time.After(10 * time.Second):
			_ = c.cmd.Process.Kill()
			<-c.exited
		}
	}
	errs = append(errs, unmountUnder(c.Dir))
	if err := os.RemoveAll(c.Dir); err != nil {
		errs = append(errs, fmt.Errorf("containerd: remove %s: %w", c.Dir, err))
	}
	return errors.Join(errs...)
}

// removePods stops and removes every sandbox the daemon has.
func (c *Containerd) removePods(ctx context.Context) error {
	conn, err := grpc.NewClient(c.Endpoint, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer conn.Close()
	rs := runtimeapi.NewRuntimeServiceClient(conn)
	sbs, err := rs.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{})
	if err != nil {
		return fmt.Errorf("containerd teardown: list sandboxes: %w", err)
	}
	var errs []error
	for _, sb := range sbs.GetItems() {
		if _, err := rs.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: sb.GetId()}); err != nil {
			errs = append(errs, fmt.Errorf("containerd teardown: stop sandbox %s: %w", sb.GetId(), err))
			continue
		}
		if _, err := rs.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: sb.GetId()}); err != nil {
			errs = append(errs, fmt.Errorf("containerd teardown: remove sandbox %s: %w", sb.GetId(), err))
		}
	}
	return errors.Join(errs...)
}

// unmountUnder lazily unmounts every mount point under dir, deepest first
// (the shims' rootfs and the sandboxes' shm mounts).
func unmountUnder(dir string) error {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return err
	}
	defer f.Close()
	var points []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) > 4 && (fields[4] == dir || strings.HasPrefix(fields[4], dir+"/")) {
			points = append(points, fields[4])
		}
	}
	slices.SortFunc(points, func(a, b string) int { return len(b) - len(a) })
	var errs []error
	for _, p := range points {
		if err := syscall.Unmount(p, syscall.MNT_DETACH); err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.ENOENT) {
			errs = append(errs, fmt.Errorf("containerd teardown: unmount %s: %w", p, err))
		}
	}
	return errors.Join(errs...)
}

var (
	sharedMu  sync.Mutex
	shared    *Containerd
	sharedErr error
)

// Require returns the test package's private containerd, started (with
// the test images imported: testimages.PauseTag as its sandbox image and
// testimages.TestWorkloadTag) on the first call. It skips the test when
// containerd or Docker is missing, and fails it when CI=true. The package's
// TestMain must call Main, which stops the daemon after the tests.
func Require(t testing.TB) *Containerd {
	t.Helper()
	testimages.EnsureTestImages(t) // Docker, and the images built
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if shared == nil && sharedErr == nil {
		ctx := context.Background()
		c, err := Start(ctx, "docker.io/"+testimages.PauseTag)
		if err == nil {
			if err = c.Import(ctx, testimages.PauseTag, testimages.TestWorkloadTag); err != nil {
				_ = c.Stop()
			}
		}
		shared, sharedErr = c, err
		if err != nil {
			shared = nil
		}
	}
	if sharedErr != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("a private containerd is required (CI=true): %v", sharedErr)
		}
		t.Skipf("private containerd not available, skipping: %v", sharedErr)
	}
	return shared
}

// Main runs the package's tests and then stops the containerd Require
// started, if any. Call it from TestMain: os.Exit(containerdtest.Main(m)).
func Main(m interface{ Run() int }) int {
	code := m.Run()
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if shared != nil {
		if err := shared.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "containerdtest: teardown: %v\n", err)
			if code == 0 {
				code = 1
			}
		}
		shared = nil
	}
	return code
}

// CleanupNode registers a t.Cleanup that removes every sandbox and
// container labelled for node (io.actorlet.node), through CRI: what a test
// of that node created, the adapter's own sandboxes included.
func (c *Containerd) CleanupNode(t testing.TB, node string) {
	t.Helper()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), stopTimeout)
		defer cancel()
		if err := c.RemoveNode(ctx, node); err != nil {
			t.Errorf("cleanup of node %s: %v", node, err)
		}
	})
}

// RemoveNode removes every sandbox and container labelled for node.
func (c *Containerd) RemoveNode(ctx context.Context, node string) error {
	conn, err := grpc.NewClient(c.Endpoint, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer conn.Close()
	rs := runtimeapi.NewRuntimeServiceClient(conn)
	sel := map[string]string{"io.actorlet.node": node}
	var errs []error
	sbs, err := rs.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{Filter: &runtimeapi.PodSandboxFilter{LabelSelector: sel}})
	if err != nil {
		return fmt.Errorf("list sandboxes: %w", err)
	}
	for _, sb := range sbs.GetItems() {
		if _, err := rs.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: sb.GetId()}); err != nil {
			errs = append(errs, fmt.Errorf("stop sandbox %s: %w", sb.GetId(), err))
			continue
		}
		if _, err := rs.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: sb.GetId()}); err != nil {
			errs = append(errs, fmt.Errorf("remove sandbox %s: %w", sb.GetId(), err))
		}
	}
	cs, err := rs.ListContainers(ctx, &runtimeapi.ListContainersRequest{Filter: &runtimeapi.ContainerFilter{LabelSelector: sel}})
	if err != nil {
		return errors.Join(append(errs, fmt.Errorf("list containers: %w", err))...)
	}
	for _, ct := range cs.GetContainers() {
		_, _ = rs.StopContainer(ctx, &runtimeapi.StopContainerRequest{ContainerId: ct.GetId()})
		if _, err := rs.RemoveContainer(ctx, &runtimeapi.RemoveContainerRequest{ContainerId: ct.GetId()}); err != nil {
			errs = append(errs, fmt.Errorf("remove container %s: %w", ct.GetId(), err))
		}
	}
	return errors.Join(errs...)
}

// Wrap returns m with Main's teardown: its Run runs the tests, then stops
// the private containerd. For a TestMain that hands m to another Main
// (testbin.Main(containerdtest.Wrap(m))).
func Wrap(m interface{ Run() int }) interface{ Run() int } { return wrapped{m} }

type wrapped struct{ m interface{ Run() int } }

func (w wrapped) Run() int { return Main(w.m) }
