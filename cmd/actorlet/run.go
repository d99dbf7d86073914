package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/cobra"
	"go.uber.org/zap"

	"github.com/actorlet/actorlet/internal/api"
	"github.com/actorlet/actorlet/internal/fleet"
	"github.com/actorlet/actorlet/internal/kubeapi"
	"github.com/actorlet/actorlet/internal/logging"
	"github.com/actorlet/actorlet/internal/nodeapi"
	"github.com/actorlet/actorlet/internal/nodeinfo"
	"github.com/actorlet/actorlet/internal/nodelock"
	"github.com/actorlet/actorlet/internal/pauseimage"
	"github.com/actorlet/actorlet/internal/stats"
	"github.com/actorlet/actorlet/internal/version"
	"github.com/actorlet/actorlet/node"
	"github.com/actorlet/actorlet/runtimeadapter"
	"github.com/actorlet/actorlet/sources/apipods"
	urlsource "github.com/actorlet/actorlet/sources/url"
	"github.com/actorlet/actorlet/supervision"
)

// exitTimeout bounds stopping the actor tree on SIGTERM or SIGINT, so the
// whole exit stays within 10 s.
const exitTimeout = 8 * time.Second

// startPingTimeout bounds the ping at start that only logs whether Docker
// answers (the node runs either way).
const startPingTimeout = 5 * time.Second

// stopPodsTimeout bounds --stop-pods-on-exit: the default grace period
// (30 s) plus the runtime's slow-call deadline (2 min).
const stopPodsTimeout = 30*time.Second + node.DefaultRuntimeTimeout

type runFlags struct {
	manifests      string
	manifestURL    string
	urlPeriod      time.Duration
	urlHeaders     []string
	nodeName       string
	nodeIP         string
	rootDir        string
	podInfraImage  string
	relistPeriod   time.Duration
	backoffInitial time.Duration
	standby        bool
	backoffMax     time.Duration
	logFormat      string
	logLevel       string
	api            api.Options
	allowPriv      bool
	events         bool
	containerd     string
	stopPods       bool
	eventRelist    time.Duration
	allowHostPath  bool
	systemReserved string
	kubeReserved   string
	strict         bool
	etcd           etcdFlags
	nodeLease      time.Duration
	maxRestarts    int
	restartWindow  time.Duration
	requestTimeout time.Duration
	statsInterval  time.Duration
	listTimeout    time.Duration
	parallelStarts int
	runtime        string
	endpoint       string
	podLogsDir     string
}

func newRunCmd() *cobra.Command {
	f := runFlags{}
	host, _ := os.Hostname()
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run the node agent on the static pods in --manifests",
		Long: `Run the node agent. It reads Kubernetes v1.Pod manifests (YAML or JSON) from
every file directly in --manifests whose name does not start with a dot (editor,
backup and package-manager artefacts such as *.bak and *.swp skipped), as the
kubelet's static pods, and runs them as Docker containers. On SIGTERM or SIGINT it
exits within 10 s and leaves the pods running; started again, it adopts them.

With --etcd-endpoints the node is one of a fleet: it also runs the pods under
<prefix>/nodes/<node-name>/pods/ in etcd, and writes its heartbeat (under a
lease of --node-lease-duration), its pods' statuses and recent events there.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return run(cmd.Context(), f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.manifests, "manifests", "", "directory of static pod manifests")
	fl.StringVar(&f.manifestURL, "manifest-url", "", "URL serving a v1.Pod or v1.PodList (YAML or JSON), polled as the kubelet's HTTP source")
	fl.DurationVar(&f.urlPeriod, "manifest-url-period", urlsource.DefaultPeriod, "how often --manifest-url is polled")
	fl.StringArrayVar(&f.urlHeaders, "manifest-url-header", nil, "HTTP header for --manifest-url requests, as 'Key: Value' (repeatable)")
	fl.StringVar(&f.nodeName, "node-name", host, "this node's name, recorded on every container")
	fl.StringVar(&f.nodeIP, "node-ip", "", "the node's address (or an IPv4 and an IPv6 one, comma-separated) for pods' status.hostIP and hostNetwork pods' podIP; default: the first global address of the default route's interface, as a standalone kubelet")
	fl.StringVar(&f.rootDir, "root-dir", "/var/lib/actorlet", "directory for actorlet's state and node lock")
	fl.StringVar(&f.podInfraImage, "pod-infra-image", pauseimage.DefaultTag, "sandbox (pause) image; the default is built locally when missing")
	fl.DurationVar(&f.relistPeriod, "relist-period", node.DefaultRelistPeriod, "PLEG relist period (while the runtime's event stream is not healthy: down, silent or unconfirmed; or with --runtime-events=false)")
	fl.BoolVar(&f.events, "runtime-events", true, "follow Docker's event stream so a container's death is seen in milliseconds (a broken or silent stream is resubscribed)")
	fl.StringVar(&f.containerd, "containerd-address", "", "socket of the containerd whose task events show a container's exit at once: Docker's (namespace moby; default: found at /run/containerd/containerd.sock or /var/run/docker/containerd/containerd.sock), or with --container-runtime cri the CRI's (namespace k8s.io; default: the endpoint's socket when the runtime is containerd); \"none\": do not follow it")
	fl.DurationVar(&f.eventRelist, "event-relist-period", node.DefaultEventRelistPeriod, "safety-net relist period while the event stream flows")
	fl.DurationVar(&f.backoffInitial, "backoff-initial", supervision.DefaultBackoffInitial, "CrashLoopBackOff: the first non-zero delay (a container's first exit restarts at once, the next waits this long, doubling per exit up to --backoff-max, as the kubelet; both 0: always restart at once)")
	fl.DurationVar(&f.backoffMax, "backoff-max", supervision.DefaultBackoffMax, "CrashLoopBackOff: the longest delay; the back-off resets when an exit comes more than twice this after the last restart")
	fl.BoolVar(&f.standby, "standby-containers", false, "keep the next instance of each restartable app container created (never started) ahead of its restart, so a restart is one start call: one created container more per such container (see the README)")
	fl.IntVar(&f.maxRestarts, "max-pod-restarts", supervision.DefaultMaxRestarts, "a pod actor that panics is restarted at most this many times within --pod-restart-window; past that its pod is Failed (reason PodActorFailed) until its spec changes")
	fl.DurationVar(&f.restartWindow, "pod-restart-window", supervision.DefaultRestartWindow, "the window of --max-pod-restarts")
	fl.DurationVar(&f.requestTimeout, "runtime-request-timeout", node.DefaultRuntimeTimeout, "deadline of one create, start, stop (plus the grace period) or remove call, as the kubelet's")
	fl.IntVar(&f.parallelStarts, "parallel-pod-starts", node.DefaultParallelPodStarts, "how many new pods (sandbox and first container) are started at once at the beginning of a burst, in the order they came; each start that ends raises the bound by one until nothing starts (0: no bound); kills, removals and restarts are never held back, and a pod waiting for an image pull holds no place")
	fl.DurationVar(&f.listTimeout, "list-timeout", node.DefaultListTimeout, "deadline of one list of the node's containers, its inspections included")
	fl.StringVar(&f.runtime, "container-runtime", runtimeDocker, "the container runtime: docker, or cri (a CRI v1 runtime such as containerd at --container-runtime-endpoint)")
	fl.StringVar(&f.endpoint, "container-runtime-endpoint", defaultCRIEndpoint, "with --container-runtime cri: the runtime's CRI socket, as the kubelet's (unix:///path)")
	fl.StringVar(&f.podLogsDir, "pod-logs-dir", defaultPodLogsDir, "with --container-runtime cri: where the runtime writes container logs, in the kubelet's layout (<namespace>_<pod>_<uid>/<container>/<restartCount>.log)")
	fl.StringVar(&f.logFormat, "log-format", "console", "log format: console or json")
	fl.StringVar(&f.logLevel, "log-level", "info", "log level: debug, info, warn, error")
	fl.StringVar(&f.api.Address, "address", api.DefaultAddress, "address of the read-only HTTP API")
	fl.IntVar(&f.api.Port, "port", api.DefaultPort, "port of the read-only HTTP API (0: any free port; -1: no API)")
	fl.StringVar(&f.api.TokenFile, "api-token-file", "", "file holding a bearer token the API then requires")
	fl.StringVar(&f.api.ClientCAFile, "client-ca-file", "", "PEM CA bundle: a client certificate it signs authenticates API requests (needs --tls-cert-file)")
	fl.StringVar(&f.api.TLSCertFile, "tls-cert-file", "", "PEM certificate: serve the API over HTTPS (with --tls-private-key-file)")
	fl.StringVar(&f.api.TLSKeyFile, "tls-private-key-file", "", "PEM private key of --tls-cert-file")
	fl.BoolVar(&f.api.EnablePprof, "enable-pprof", false, "serve /debug/pprof on the API")
	fl.DurationVar(&f.statsInterval, "stats-interval", stats.DefaultInterval, "how often the stats sampler records each container's CPU time (usageNanoCores of /stats/summary is the mean since the newest sample at least 1 s old); 0: serve no stats")
	fl.BoolVar(&f.allowPriv, "allow-privileged", false, "allow privileged containers (securityContext.privileged)")
	fl.BoolVar(&f.allowHostPath, "allow-host-path", false, "allow hostPath volumes")
	fl.StringVar(&f.systemReserved, "system-reserved", "", "cpu and memory kept from pods for the system, as the kubelet's (cpu=200m,memory=500Mi): pods are admitted against the node's CPUs and memory less this and --kube-reserved")
	fl.StringVar(&f.kubeReserved, "kube-reserved", "", "cpu and memory kept from pods for actorlet and the runtime, as the kubelet's (cpu=100m,memory=200Mi)")
	fl.BoolVar(&f.strict, "strict-manifests", false, "refuse a manifest document with an unknown field (by default, as the kubelet, the field is ignored with a warning naming it)")
	fl.BoolVar(&f.stopPods, "stop-pods-on-exit", false, "on SIGTERM/SIGINT, stop and remove every pod (each within its grace period) before exiting")
	f.etcd.addFlags(fl, nil)
	fl.DurationVar(&f.nodeLease, "node-lease-duration", fleet.DefaultLeaseDuration, "with --etcd-endpoints: TTL of the node's heartbeat lease (renewed every third of it; whole seconds, etcd's minimum is 2 s by default)")
	return cmd
}

func run(ctx context.Context, f runFlags) error {
	if ctx == nil {
		ctx = context.Background()
	}
	log, err := logging.New(f.logFormat, f.logLevel)
	if err != nil {
		return err
	}
	defer func() { _ = log.Sync() }()
	if f.nodeName == "" {
		return fmt.Errorf("--node-name: empty, and the hostname is unknown")
	}
	var hostIPs []string
	if f.nodeIP != "" {
		if hostIPs, err = nodeinfo.ParseNodeIPs(f.nodeIP); err != nil {
			return err
		}
	} else if hostIPs, err = nodeinfo.HostIPs(); err != nil {
		log.Warn("the node's address is unknown: pods naming status.hostIP fail to start", zap.Error(err))
	}
	if f.relistPeriod <= 0 {
		return fmt.Errorf("--relist-period %s: must be more than 0", f.relistPeriod)
	}
	if f.maxRestarts <= 0 || f.restartWindow <= 0 {
		return fmt.Errorf("--max-pod-restarts %d, --pod-restart-window %s: must be more than 0", f.maxRestarts, f.restartWindow)
	}
	if f.requestTimeout <= 0 || f.listTimeout <= 0 {
		return fmt.Errorf("--runtime-request-timeout %s, --list-timeout %s: must be more than 0", f.requestTimeout, f.listTimeout)
	}
	if f.backoffInitial < 0 || f.backoffMax < 0 {
		return fmt.Errorf("--backoff-initial %s, --backoff-max %s: must not be negative", f.backoffInitial, f.backoffMax)
	}
	rootDir, err := filepath.Abs(f.rootDir)
	if err != nil {
		return fmt.Errorf("--root-dir %s: %w", f.rootDir, err)
	}
	f.rootDir = rootDir
	sysRes, err := nodeinfo.ParseReserved("--system-reserved", f.systemReserved)
	if err != nil {
		return err
	}
	kubeRes, err := nodeinfo.ParseReserved("--kube-reserved", f.kubeReserved)
	if err != nil {
		return err
	}
	allocatable := nodeinfo.Reserve(nodeinfo.Allocatable(rootDir), sysRes, kubeRes)
	if f.etcd.enabled() && f.nodeLease <= 0 {
		return fmt.Errorf("--node-lease-duration %s: must be more than 0", f.nodeLease)
	}
	ec, keys, err := openEtcd(f, log)
	if err != nil {
		return err
	}
	if ec != nil {
		defer ec.Close()
	}
	srcs, err := buildSources(f, log, ec, keys)
	if err != nil {
		return err
	}
	// Pods pushed through the Kubernetes API (kubectl create/apply) are a
	// source of their own, kept under the root dir.
	var pushed *apipods.Source
	if f.api.Port >= 0 {
		pushed = apipods.New(filepath.Join(rootDir, "nodes", f.nodeName+".api-pods"), f.nodeName,
			apipods.WithValidation(f.validation()), apipods.WithLogger(log.Named("source")))
		srcs = append(srcs, pushed)
	}
	lock, err := nodelock.Acquire(f.rootDir, f.nodeName)
	if err != nil {
		return err
	}
	defer lock.Release()

	// A node agent often starts before its runtime: a runtime that does
	// not answer yet is logged and shown in /healthz, and the PLEG lists
	// again with backoff until it answers.
	rt, closeRuntime, err := openRuntime(ctx, f, log)
	if err != nil {
		return err
	}
	defer closeRuntime()

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))

	// Each container's last exit and CrashLoopBackOff survive a restart of
	// the agent in a small state file next to the node lock (restart
	// counts are also in labels); the back-off file of older versions is
	// read once and replaced.
	nodes := filepath.Join(rootDir, "nodes")
	history, err := supervision.NewHistory(filepath.Join(nodes, f.nodeName+".containers.json"),
		supervision.WithLegacyBackoffFile(filepath.Join(nodes, f.nodeName+".backoff.json")))
	if err != nil {
		log.Warn("container history unreadable; starting with none", zap.Error(err))
	}
	// The binary is an embedder like any other: everything it asks of the
	// node is in node.Options.
	n, err := node.New(node.Options{
		NodeName:      f.nodeName,
		Runtime:       rt,
		Sources:       srcs,
		PodInfraImage: f.podInfraImage,
		RelistPeriod:  f.relistPeriod,
		EventRelistPeriod: func() time.Duration {
			if !f.events {
				return -1
			}
			return f.eventRelist
		}(),
		Backoff:           &supervision.BackoffPolicy{Initial: f.backoffInitial, Max: f.backoffMax},
		StandbyContainers: f.standby,
		History:           history,
		MaxPodRestarts:    f.maxRestarts, PodRestartWindow: f.restartWindow,
		Logger:            log,
		Metrics:           reg,
		InstrumentRuntime: true,
		RootDir:           rootDir, AllowPrivileged: f.allowPriv, AllowHostPath: f.allowHostPath,
		HostIPs: hostIPs, Allocatable: allocatable,
		RuntimeTimeout: f.requestTimeout, ListTimeout: f.listTimeout,
		ParallelPodStarts: parallelPodStarts(f.parallelStarts),
	})
	if err != nil {
		return err
	}
	instrumented := n.Runtime()
	sys := actor.NewActorSystem(logging.ActorSystemOption(log))
	pid, err := n.Spawn(sys.Root)
	if err != nil {
		return err
	}
	stopFleet, err := startFleet(f, log, ec, keys, sys.Root, pid)
	if err != nil {
		_ = node.Stop(sys.Root, pid, exitTimeout)
		return err
	}
	defer stopFleet() // on the error paths; the normal exit stops it before the node
	var apiAddr string
	if f.api.Port >= 0 {
		opts := f.api
		opts.Metrics = promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
		opts.Logger = log.Named("api")
		sc, stopStats := startStats(ctx, f, log, rt) // stats.go; nil when off
		defer stopStats()
		nb := &nodeapi.Backend{Root: sys.Root, Node: pid, Runtime: instrumented, Stats: sc}
		tracker, unsubscribe := nodeapi.Track(sys.Root, pid)
		defer unsubscribe()
		kctx, stopKube := context.WithCancel(ctx)
		defer stopKube()
		execer, _ := rt.(runtimeadapter.StreamExecer) // nil: kubectl exec is not served
		kube := kubeapi.New(&nodeapi.KubeBackend{Backend: nb, Execer: execer, Tracker: tracker, Info: nodeapi.NodeInfo{
			Name: f.nodeName, HostIPs: hostIPs, RootDir: rootDir, Started: time.Now(), RuntimeVersion: runtimeVersion(rt),
		}}, kubeapi.Options{NodeName: f.nodeName, Nudges: tracker.Nudges(), Pushed: pushed, Logger: log.Named("kubeapi"), Context: kctx})
		go kube.Run(kctx)
		opts.Kube = kube
		srv := api.NewServer(nb, opts)
		if apiAddr, err = srv.Start(ctx); err != nil {
			stopFleet()
			_ = node.Stop(sys.Root, pid, exitTimeout)
			return fmt.Errorf("API: %w", err)
		}
		defer func() {
			stopKube() // ends watches and log follows
			sctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			_ = srv.Shutdown(sctx)
		}()
	}
	log.Info("actorlet running", zap.String("version", version.Version), zap.String("node", f.nodeName),
		zap.Strings("sources", sourceNames(srcs)), zap.Duration("relistPeriod", f.relistPeriod), zap.String("api", apiAddr))

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	defer signal.Stop(sig)
	select {
	case s := <-sig:
		log.Info("signal received; stopping actors and leaving pods running", zap.String("signal", s.String()))
	case <-ctx.Done():
	}
	if f.stopPods {
		log.Info("stopping every pod before exiting (--stop-pods-on-exit)")
		sctx, cancel := context.WithTimeout(context.Background(), stopPodsTimeout)
		err := node.StopAllPods(sctx, sys.Root, pid)
		cancel()
		if err != nil {
			log.Warn("pods not all stopped in time; exiting anyway", zap.Error(err), zap.Duration("waited", stopPodsTimeout))
		}
	}
	stopFleet()
	if err := node.Stop(sys.Root, pid, exitTimeout); err != nil {
		log.Warn("actor tree did not stop in time; exiting anyway", zap.Error(err))
	}
	sys.Shutdown()
	return nil
}

// parallelPodStarts turns --parallel-pod-starts into
// node.Options.ParallelPodStarts: 0 (or less) is no bound.
func parallelPodStarts(flag int) int {
	if flag <= 0 {
		return -1
	}
	return flag
}
